//! Percentiles of a set of durations.

use std::time::Duration;

/// Sorted samples.
pub struct Samples(Vec<Duration>);

impl Samples {
    pub fn new(mut samples: Vec<Duration>) -> Self {
        samples.sort();
        Samples(samples)
    }

    /// The `p`-th percentile (0–100), nearest rank.
    pub fn percentile(&self, p: f64) -> Duration {
        if self.0.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        self.0[rank.clamp(1, self.0.len()) - 1]
    }

    pub fn median(&self) -> Duration {
        self.percentile(50.0)
    }

    pub fn min(&self) -> Duration {
        self.0.first().copied().unwrap_or_default()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// A duration in the unit that reads best.
pub fn show(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.1} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// One figure line: `<what> (<n> runs): p50 … p90 … min …`, then `(target p50 <target>)` unless the
/// target is empty.
pub fn print_line(what: &str, s: &Samples, target: &str) {
    let target = if target.is_empty() {
        String::new()
    } else {
        format!("   (target p50 {target})")
    };
    println!(
        "{what} ({} runs): p50 {}  p90 {}  min {}{target}",
        s.len(),
        show(s.median()),
        show(s.percentile(90.0)),
        show(s.min())
    );
}

//! How many runs the explorer lets run at once; the rest wait their turn (`queued`).

use std::sync::{Condvar, Mutex};

/// A counting semaphore for run threads.
#[derive(Debug)]
pub struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A taken slot; dropping it frees the slot.
pub struct Slot<'a>(&'a Slots);

impl Slots {
    pub fn new(n: usize) -> Slots {
        Slots {
            free: Mutex::new(n.max(1)),
            freed: Condvar::new(),
        }
    }

    /// Whether a slot is free now.
    pub fn any_free(&self) -> bool {
        self.free.lock().map(|f| *f > 0).unwrap_or(false)
    }

    /// Waits for a free slot; `None` when `give_up` says to stop waiting (checked each time a slot
    /// frees, and every 200 ms).
    pub fn take(&self, give_up: impl Fn() -> bool) -> Option<Slot<'_>> {
        let mut free = self.free.lock().ok()?;
        loop {
            if give_up() {
                return None;
            }
            if *free > 0 {
                *free -= 1;
                return Some(Slot(self));
            }
            free = self
                .freed
                .wait_timeout(free, std::time::Duration::from_millis(200))
                .ok()?
                .0;
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Ok(mut free) = self.0.free.lock() {
            *free += 1;
        }
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_frees_when_dropped_and_waiting_can_give_up() {
        let slots = Slots::new(1);
        let first = slots.take(|| false).unwrap();
        assert!(slots.take(|| true).is_none());
        assert!(!slots.any_free());
        drop(first);
        assert!(slots.take(|| false).is_some());
    }
}

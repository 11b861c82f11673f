//! What a plugin under verification wrote on its stdout that is no protocol message, in two kinds:
//! lines not meant as messages (a log line, a stray print), which belong on stderr, and lines meant
//! as messages that are none (an id null, no `"jsonrpc"`, a batch...), each with its defect
//! ([`agent_env_protocol::peer::classify`]), which no move to stderr mends. `stdout-clean` says each
//! kind in its own words.

use agent_env_protocol::peer::Defect;

use super::plural::count;

/// How many samples of each kind are kept.
const SAMPLES: usize = 3;

/// The lines on stdout that were no protocol message, over one run or several.
#[derive(Debug, Default, Clone)]
pub(crate) struct StdoutLines {
    /// Lines not meant as messages.
    stray: usize,
    /// The first few of them.
    stray_samples: Vec<String>,
    /// Lines meant as messages that are none.
    malformed: usize,
    /// The first few of them, each with its defect.
    malformed_samples: Vec<(String, Defect)>,
}

impl StdoutLines {
    /// A line not meant as a message (its first bytes).
    pub(crate) fn stray(&mut self, sample: String) {
        self.stray += 1;
        if self.stray_samples.len() < SAMPLES {
            self.stray_samples.push(sample);
        }
    }

    /// A line meant as a message (its first bytes) that is none, for `defect`.
    pub(crate) fn malformed(&mut self, sample: String, defect: Defect) {
        self.malformed += 1;
        if self.malformed_samples.len() < SAMPLES {
            self.malformed_samples.push((sample, defect));
        }
    }

    /// Adds another run's lines to these.
    pub(crate) fn add(&mut self, other: &StdoutLines) {
        self.stray += other.stray;
        for sample in &other.stray_samples {
            if self.stray_samples.len() < SAMPLES {
                self.stray_samples.push(sample.clone());
            }
        }
        self.malformed += other.malformed;
        for sample in &other.malformed_samples {
            if self.malformed_samples.len() < SAMPLES {
                self.malformed_samples.push(sample.clone());
            }
        }
    }

    /// Whether every line was a protocol message.
    pub(crate) fn is_clean(&self) -> bool {
        self.stray == 0 && self.malformed == 0
    }

    /// What was wrong, as `stdout-clean`'s finding says it: the malformed lines with the defect of
    /// the first, and the stray lines with where they belong.
    pub(crate) fn problems(&self) -> String {
        let mut said = Vec::new();
        if let Some((first, defect)) = self.malformed_samples.first() {
            said.push(format!(
                "wrote {} on stdout meant as {} but malformed{}: '{first}': {defect}",
                count(self.malformed, "line"),
                if self.malformed == 1 {
                    "a protocol message"
                } else {
                    "protocol messages"
                },
                if self.malformed == 1 {
                    ""
                } else {
                    ", the first"
                },
            ));
        }
        if self.stray > 0 {
            said.push(format!(
                "wrote {} on stdout that {}: '{}'; stdout \
                 carries protocol messages only (point fd 1 at stderr, as the SDKs' serve does; with an SDK, look for \
                 output written before serve is called, at import or in an init function)",
                count(self.stray, "line"),
                if self.stray == 1 {
                    "is not a protocol message"
                } else {
                    "are not protocol messages, the first"
                },
                self.stray_samples.first().map(String::as_str).unwrap_or("")
            ));
        }
        said.join("; it also ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_line_is_told_its_defect_and_only_stray_lines_where_they_belong() {
        let mut lines = StdoutLines::default();
        assert!(lines.is_clean());
        lines.malformed(
            r#"{"jsonrpc":"2.0","id":null,"result":null}"#.into(),
            Defect::NullId,
        );
        let said = lines.problems();
        assert_eq!(
            said,
            "wrote 1 line on stdout meant as a protocol message but malformed: \
             '{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":null}': its id is null: an answer must carry the id of the request it answers"
        );
        assert!(!said.contains("point fd 1 at stderr"), "{said}");
        let mut more = StdoutLines::default();
        more.stray("loading".into());
        more.stray("loaded".into());
        lines.add(&more);
        let said = lines.problems();
        assert!(
            said.contains("; it also wrote 2 lines on stdout that are not protocol messages, the first: 'loading'; stdout carries"),
            "{said}"
        );
    }
}

//! What a command that stops in two steps says on a signal: the first lets the piece of work under way
//! end (so that it leaves nothing half-made), the next stops at once, exiting as the signal says.

use super::terminal::eprint_notice;
use crate::run::cancel::Signalled;
use crate::stores::hosted;
use agent_env_store_s3::Aborted;

/// Says `stopping` on the first signal; on the next, aborts the uploads to a hosted store under way,
/// says `stopped at once: <what>` and exits with 128 + the signal's number.
pub(crate) fn two_step(
    signalled: Signalled,
    stopping: &str,
    what_is_left: impl FnOnce() -> String,
) {
    match signalled {
        Signalled::First(signal) => {
            // On a line of its own: `artifact put` may have its file's line drawn on the cursor's.
            eprint_notice(&format!("{stopping}; {} stops at once", another(signal)));
        }
        Signalled::Again(signal) => {
            // The plugin stores' processes end with agent-env; the children they started would not.
            agent_env_host::kill_plugin_groups();
            let mut said = format!("Stopped at once: {}", what_is_left());
            // An upload cut short would leave its parts in the bucket until a lifecycle rule.
            said.push_str(&uploads_said(&hosted::abort_uploads_under_way()));
            eprint_notice(&said);
            std::process::exit(128 + signal);
        }
    }
}

/// How a person sends another of `signal`.
pub(crate) fn another(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "another Ctrl-C",
        libc::SIGQUIT => "another Ctrl-\\",
        _ => "another signal",
    }
}

/// What follows `Stopped at once: …` about the uploads aborted on the way out: those called off, and
/// each the server did not confirm, with what the user needs to abort it themselves.
fn uploads_said(aborted: &Aborted) -> String {
    let mut said = match aborted.confirmed {
        0 => String::new(),
        1 => "; the upload under way was called off".to_string(),
        n => format!("; the {n} uploads under way were called off"),
    };
    let within = hosted::ABORT_WITHIN_SECONDS;
    match aborted.left.as_slice() {
        [] => {}
        [one] => said.push_str(&format!(
            "; the upload under way could not be called off (the server did not confirm it within \
             {within} s): its parts stay in bucket '{}' until its lifecycle rules remove them, or abort \
             upload '{}' of key '{}' yourself (for example `aws s3api abort-multipart-upload`)",
            one.bucket, one.upload_id, one.key
        )),
        many => {
            said.push_str(&format!(
                "; {} uploads under way could not be called off (the server did not confirm them \
                 within {within} s): their parts stay in the bucket until its lifecycle rules remove \
                 them, or abort each yourself (for example `aws s3api abort-multipart-upload`):",
                many.len()
            ));
            for upload in many {
                said.push_str(&format!(
                    "\n  - bucket '{}', key '{}', upload '{}'",
                    upload.bucket, upload.key, upload.upload_id
                ));
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_store_s3::LeftUpload;

    fn left(key: &str) -> LeftUpload {
        LeftUpload {
            bucket: "b".into(),
            key: key.into(),
            upload_id: format!("u-{key}"),
        }
    }

    #[test]
    fn nothing_under_way_says_nothing() {
        assert_eq!(uploads_said(&Aborted::default()), "");
    }

    #[test]
    fn confirmed_aborts_are_counted() {
        let one = Aborted {
            confirmed: 1,
            left: vec![],
        };
        assert_eq!(uploads_said(&one), "; the upload under way was called off");
        let two = Aborted {
            confirmed: 2,
            left: vec![],
        };
        assert_eq!(
            uploads_said(&two),
            "; the 2 uploads under way were called off"
        );
    }

    #[test]
    fn an_unconfirmed_abort_names_what_to_abort_by_hand() {
        let said = uploads_said(&Aborted {
            confirmed: 0,
            left: vec![left("k1")],
        });
        assert!(said.contains("could not be called off"), "{said}");
        assert!(
            said.contains("bucket 'b'") && said.contains("upload 'u-k1' of key 'k1'"),
            "{said}"
        );
        let said = uploads_said(&Aborted {
            confirmed: 1,
            left: vec![left("k1"), left("k2")],
        });
        assert!(
            said.starts_with("; the upload under way was called off; 2 uploads"),
            "{said}"
        );
        assert!(
            said.contains("\n  - bucket 'b', key 'k2', upload 'u-k2'"),
            "{said}"
        );
    }
}

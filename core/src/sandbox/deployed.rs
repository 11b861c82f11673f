//! The sandboxes one task run deployed, by name. A task deploys each name once: a deploy claims its
//! name before the provider brings anything up, under the same lock that finds the names in use, so
//! two steps that deploy one name at the same time cannot both succeed (the second is told the
//! first has it). A deploy that fails lets its claim go, and the name is free again.
//!
//! Tearing a sandbox down (at the task's end, or for a retry that deploys it again) first stops
//! the processes task commands started in it and left running: what a command started in its own
//! session (`setsid server &`) outlives the command, so a later step of the task may use it, and
//! not the sandbox.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::marked_processes::{stop_in, PidMark};
use super::{Sandbox, SandboxError, SandboxProvider};

/// The sandboxes one task run deployed, with the provider that deployed them.
pub struct Deployed {
    provider: Box<dyn SandboxProvider>,
    names: Mutex<Names>,
    /// What tearing down the sandboxes a retry replaced did, reported with the rest.
    retired: Mutex<Teardown>,
    log: Option<Arc<dyn DeployLog>>,
}

/// The names in use: the sandboxes that are up, and the names deploys under way have claimed.
#[derive(Default)]
struct Names {
    /// In the order they came up.
    up: Vec<Up>,
    /// Name → the step deploying it.
    underway: Vec<(String, String)>,
}

/// A sandbox that is up.
struct Up {
    sandbox: Sandbox,
    /// The step that deployed it.
    by: String,
    /// Taken before it was deployed: the processes started in it came after.
    since: PidMark,
}

/// Told of each sandbox as it is deployed, so that what a killed run left can be found later.
pub trait DeployLog: Send + Sync {
    fn deployed(&self, work_dir: &Path);
}

/// What tearing a run's sandboxes down did.
#[derive(Debug, Default)]
pub struct Teardown {
    pub torn_down: Vec<Sandbox>,
    /// How many of `torn_down` a retry replaced while the task ran (they were down before the end).
    pub replaced: usize,
    /// Sandboxes still up, with why.
    pub still_up: Vec<(Sandbox, String)>,
}

/// A lock's contents, also after a thread panicked holding it: every change under these locks is
/// one push or one removal, so what a panic left is whole.
fn held<T>(lock: &Mutex<T>) -> MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Deployed {
    pub fn new(provider: Box<dyn SandboxProvider>) -> Self {
        Deployed {
            provider,
            names: Mutex::new(Names::default()),
            retired: Mutex::new(Teardown::default()),
            log: None,
        }
    }

    /// The same, telling `log` of each sandbox deployed.
    pub fn logged(mut self, log: Option<Arc<dyn DeployLog>>) -> Self {
        self.log = log;
        self
    }

    pub fn provider(&self) -> &dyn SandboxProvider {
        self.provider.as_ref()
    }

    /// Deploys the sandbox `name` for the step `by` and remembers it for teardown. Fails with
    /// [`SandboxError::AlreadyDeployed`] when a sandbox of that name is up, or another step is
    /// deploying one.
    pub fn deploy(&self, name: &str, mode: &str, by: &str) -> Result<Sandbox, SandboxError> {
        let claim = self.claim(name, by)?;
        let since = PidMark::now();
        // Dropped unfilled when the provider fails: the name is free again.
        let sandbox = self.provider.deploy(name, mode)?;
        if let Some(log) = &self.log {
            log.deployed(&sandbox.work_dir);
        }
        claim.fill(sandbox.clone(), since);
        Ok(sandbox)
    }

    /// Claims `name` for the step `by`, unless it is in use.
    fn claim(&self, name: &str, by: &str) -> Result<Claim<'_>, SandboxError> {
        let mut names = held(&self.names);
        let taken = |underway: bool, owner: &str| SandboxError::AlreadyDeployed {
            name: name.to_string(),
            by: owner.to_string(),
            underway,
        };
        if let Some(up) = names.up.iter().find(|up| up.sandbox.name == name) {
            return Err(taken(false, &up.by));
        }
        if let Some((_, owner)) = names.underway.iter().find(|(n, _)| n == name) {
            return Err(taken(true, owner));
        }
        names.underway.push((name.to_string(), by.to_string()));
        Ok(Claim {
            deployed: self,
            name: name.to_string(),
            filled: false,
        })
    }

    /// The sandbox of this name.
    pub fn get(&self, name: &str) -> Option<Sandbox> {
        held(&self.names)
            .up
            .iter()
            .find(|up| up.sandbox.name == name)
            .map(|up| up.sandbox.clone())
    }

    /// Every sandbox that is up.
    pub fn all(&self) -> Vec<Sandbox> {
        held(&self.names)
            .up
            .iter()
            .map(|up| up.sandbox.clone())
            .collect()
    }

    /// Tears down the sandbox of this name, for a retry that deploys it again: it is no longer up
    /// under that name, and [`Deployed::teardown_all`] reports it (as torn down, or as still up
    /// with why). Returns it, or `None` when none of that name is up.
    pub fn retire(&self, name: &str) -> Option<Sandbox> {
        let up = {
            let mut names = held(&self.names);
            let at = names.up.iter().position(|up| up.sandbox.name == name)?;
            names.up.remove(at)
        };
        let outcome = self.take_down(&up);
        let sandbox = up.sandbox;
        let mut retired = held(&self.retired);
        match outcome {
            Ok(()) => {
                retired.torn_down.push(sandbox.clone());
                retired.replaced += 1;
            }
            Err(e) => retired.still_up.push((sandbox.clone(), e.to_string())),
        }
        Some(sandbox)
    }

    /// Tears every sandbox down.
    pub fn teardown_all(&self) -> Teardown {
        let up = std::mem::take(&mut held(&self.names).up);
        let mut report = std::mem::take(&mut *held(&self.retired));
        for one in up {
            match self.take_down(&one) {
                Ok(()) => report.torn_down.push(one.sandbox),
                Err(e) => report.still_up.push((one.sandbox, e.to_string())),
            }
        }
        report
    }

    /// Stops what task commands left running in the sandbox, then has the provider take it down.
    fn take_down(&self, up: &Up) -> Result<(), SandboxError> {
        stop_in(&up.sandbox.work_dir, &up.since);
        self.provider.teardown(&up.sandbox)
    }
}

/// A name claimed by a deploy under way: filled with the sandbox once it is up, or let go when
/// dropped unfilled (the deploy failed).
struct Claim<'d> {
    deployed: &'d Deployed,
    name: String,
    filled: bool,
}

impl Claim<'_> {
    /// The sandbox is up: it takes the claim's place, in one step, so the name is never free between.
    fn fill(mut self, sandbox: Sandbox, since: PidMark) {
        let mut names = held(&self.deployed.names);
        if let Some(at) = names.underway.iter().position(|(n, _)| *n == self.name) {
            let (_, by) = names.underway.remove(at);
            names.up.push(Up { sandbox, by, since });
        }
        self.filled = true;
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if self.filled {
            return;
        }
        let mut names = held(&self.deployed.names);
        names.underway.retain(|(n, _)| *n != self.name);
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    use super::*;

    /// A provider whose first deploy tells `entered` it has begun and waits for `release`; later
    /// deploys (none, when claiming works) go straight through. Counts its deploys.
    struct Gated {
        entered: Mutex<Option<mpsc::Sender<()>>>,
        release: Mutex<Option<mpsc::Receiver<()>>>,
        deploys: Arc<AtomicUsize>,
        /// Whether deploys fail (after the gate).
        fail: bool,
    }

    impl SandboxProvider for Gated {
        fn name(&self) -> &str {
            "gated"
        }

        fn deploy(&self, name: &str, mode: &str) -> Result<Sandbox, SandboxError> {
            let n = self.deploys.fetch_add(1, Ordering::SeqCst);
            let gate = self.entered.lock().unwrap().take();
            if let Some(entered) = gate {
                entered.send(()).unwrap();
                let release = self.release.lock().unwrap().take();
                release.unwrap().recv().unwrap();
            }
            if self.fail {
                return Err(SandboxError::Mode(mode.to_string()));
            }
            Ok(Sandbox {
                id: format!("gated-{n}"),
                name: name.to_string(),
                mode: mode.to_string(),
                provider: "gated".into(),
                work_dir: PathBuf::from(format!("/nowhere/{n}")),
            })
        }

        fn teardown(&self, _sandbox: &Sandbox) -> Result<(), SandboxError> {
            Ok(())
        }

        fn host_path(&self, sandbox: &Sandbox, path: &str) -> Result<PathBuf, SandboxError> {
            super::super::map_app_path(&sandbox.work_dir, path)
        }

        fn describe(&self, sandbox: &Sandbox) -> String {
            sandbox.id.clone()
        }
    }

    /// A gated provider, the sender that opens its gate, the receiver told when its first deploy
    /// began, and its deploy count.
    fn gated(
        fail: bool,
    ) -> (
        Deployed,
        mpsc::Sender<()>,
        mpsc::Receiver<()>,
        Arc<AtomicUsize>,
    ) {
        let (entered_tx, entered_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel();
        let deploys = Arc::new(AtomicUsize::new(0));
        let provider = Gated {
            entered: Mutex::new(Some(entered_tx)),
            release: Mutex::new(Some(release_rx)),
            deploys: deploys.clone(),
            fail,
        };
        (
            Deployed::new(Box::new(provider)),
            release_tx,
            entered_rx,
            deploys,
        )
    }

    #[test]
    fn a_second_deploy_of_a_name_while_the_first_is_under_way_is_refused() {
        let (deployed, release, entered, deploys) = gated(false);
        std::thread::scope(|scope| {
            let first = scope.spawn(|| deployed.deploy("box", "vm", "a"));
            // The first is inside the provider's deploy, its sandbox not up yet.
            entered.recv().unwrap();
            let second = deployed.deploy("box", "vm", "b");
            release.send(()).unwrap();
            let first = first.join().unwrap();
            assert_eq!(first.unwrap().id, "gated-0");
            let e = second.unwrap_err();
            assert!(
                matches!(&e, SandboxError::AlreadyDeployed { by, underway: true, .. } if by == "a"),
                "{e:?}"
            );
            assert_eq!(
                e.to_string(),
                "Sandbox 'box' is already deployed (step 'a' is deploying it, and this step does not wait for it): a task deploys each sandbox once, so give this step another sandbox_name, or remove it and make the steps that use 'box' wait for step 'a'"
            );
        });
        assert_eq!(
            deploys.load(Ordering::SeqCst),
            1,
            "the provider deployed twice"
        );
        let up: Vec<String> = deployed.all().into_iter().map(|s| s.id).collect();
        assert_eq!(up, ["gated-0"]);
        // Once it is up, a deploy of the name is refused as deployed.
        let e = deployed.deploy("box", "vm", "c").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("Sandbox 'box' is already deployed (by step 'a'): "),
            "{e}"
        );
        // Another name is free.
        assert!(deployed.deploy("other", "vm", "d").is_ok());
        assert_eq!(deployed.teardown_all().torn_down.len(), 2);
    }

    #[test]
    fn a_deploy_that_fails_lets_its_name_go() {
        let (deployed, release, entered, _) = gated(true);
        std::thread::scope(|scope| {
            let first = scope.spawn(|| deployed.deploy("box", "vm", "a"));
            entered.recv().unwrap();
            // Claimed while the first is under way.
            assert!(deployed.deploy("box", "vm", "b").is_err());
            release.send(()).unwrap();
            let e = first.join().unwrap().unwrap_err();
            assert!(matches!(e, SandboxError::Mode(_)), "{e:?}");
        });
        assert!(deployed.all().is_empty());
        // Free again: this deploy reaches the provider (and fails there, as it is made to).
        let e = deployed.deploy("box", "vm", "b").unwrap_err();
        assert!(matches!(e, SandboxError::Mode(_)), "{e:?}");
    }

    #[test]
    fn a_retired_sandbox_frees_its_name_for_the_retry() {
        let root = tempfile::tempdir().unwrap();
        let deployed = Deployed::new(Box::new(super::super::LocalProvider::with_root(
            root.path().to_path_buf(),
        )));
        let first = deployed.deploy("box", "vm", "a").unwrap();
        assert!(deployed.deploy("box", "vm", "a").is_err());
        assert_eq!(deployed.retire("box"), Some(first.clone()));
        let second = deployed.deploy("box", "vm", "a").unwrap();
        assert_ne!(first.id, second.id);
        assert_eq!(deployed.get("box"), Some(second));
        let report = deployed.teardown_all();
        assert_eq!((report.torn_down.len(), report.replaced), (2, 1));
    }
}

//! A plugin written with `plugin-sdk-rs` whose object store class `FsObjectStore` is the core's own
//! `LocalFilesystemObjectStore`, so the `plugin_stores` bench compares the same store with and
//! without the pipe. Started by the bench through a plugins dir holding its manifest.
//!
//! Core and SDK share one store API, so the core's store is served as it is, with no adapter.

use agent_env::environment::Environment;
use agent_env::stores::LocalFilesystemObjectStore;
use agent_env_plugin_sdk::{Plugin, StoreClass, StoreError};

/// The package name, as the bench's manifest names it.
const PACKAGE: &str = "agentenv-bench-fs-store";

fn main() {
    // `root` is required, so the environment (for `~` and the default root) is this process's own.
    let env = Environment::from_process();
    let class = StoreClass::object("FsObjectStore", &["root"], move |config| {
        // A bad setting's problems, all of them, as the one error the SDK answers with.
        LocalFilesystemObjectStore::from_config(&format!("{PACKAGE}:FsObjectStore"), config, &env)
            .map_err(StoreError::from)
    })
    .required(&["root"]);
    Plugin::new(PACKAGE, env!("CARGO_PKG_VERSION"))
        .store(class)
        .serve()
}

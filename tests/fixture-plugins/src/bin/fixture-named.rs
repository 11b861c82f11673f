//! A working plugin whose package name is its first argument (`fixture-named agentenv-bench-7`), so one
//! binary can stand for many packages: it provides the env `<suffix>_env` and the task step `<suffix>_step`,
//! where `<suffix>` is the name after its last `-`, with `_` for other separators.
//! Used by the report bench (`plugin list` with 20 plugins) and the report tests.

use agent_env_plugin_sdk::{Contribution, Plugin};

fn main() {
    let package = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "agentenv-fixture-named".into());
    let suffix: String = package
        .rsplit('-')
        .next()
        .unwrap_or("named")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Plugin::new(&package, "0.1.0")
        .contribution(
            Contribution::new("envs", &format!("{suffix}_env"), "NamedEnv").methods(&["from_dict"]),
        )
        .contribution(
            Contribution::new("task_steps", &format!("{suffix}_step"), "NamedStep")
                .methods(&["execute", "from_dict"]),
        )
        .serve()
}

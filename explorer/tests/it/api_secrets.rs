//! The explorer's answers never carry a secret its process holds: the plugin report shows a plugin's
//! stderr, and a plugin that prints its settings there has each secret value masked, as the CLI
//! masks it.

use crate::support::{Explorer, World};

const TOKEN: &str = "sk-explorer-secret-3131";

#[test]
fn the_plugin_report_masks_a_secret_a_plugin_printed_on_stderr() {
    let world = World::new();
    let script = world.root.join("leaky.sh");
    std::fs::write(
        &script,
        r#"#!/bin/sh
IFS= read -r init
printf 'init: %s\n' "$init" >&2
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-leaky","version":"1"},"contributions":[{"group":"task_steps","name":"leak_step","type":"leak_step","class":"LeakStep","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do :; done
"#,
    )
    .expect("script written");
    world.install_manifest(
        "leaky",
        &format!(
            "[plugin]\nname = \"agentenv-leaky\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\nleak_step = \"LeakStep\"\n",
            script.display()
        ),
    );
    world.config(&format!(
        "[plugins.agentenv-leaky]\napi_token = \"{TOKEN}\"\nnote = \"shown as it is\"\n"
    ));
    let server = Explorer::start(&world);
    let answer = server
        .get("/api/v1/plugin-report/agentenv-leaky")
        .expect(200)
        .text();
    assert!(!answer.contains(TOKEN), "{answer}");
    assert!(answer.contains(r#"\"api_token\":\"***\""#), "{answer}");
    assert!(answer.contains("shown as it is"), "{answer}");
}

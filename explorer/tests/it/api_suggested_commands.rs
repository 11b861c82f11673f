//! The commands the API's messages suggest paste into a shell as they are: an id or a folder with
//! spaces, quotes or accents in it is quoted as a shell needs it.

use crate::support::{seg, Explorer, World};

const PASS: &str = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
    {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
     "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}]"#;

#[test]
fn suggested_commands_quote_ids_and_folders() {
    let world = World::new();
    // A stored task whose id has spaces and accents.
    let file = world.root.join("stored.json");
    std::fs::write(&file, PASS).unwrap();
    let id = "équipe/tâche 中文 (1)";
    let put = world.agent_env(&["task", "put", "--id", id, file.to_str().unwrap()]);
    assert_eq!(put.code, 0, "{}", put.both());
    // A folder bundle whose name has a space, one of whose tasks is then removed.
    let folder = world.dirs.home.join("my pair");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    for name in ["one", "two"] {
        std::fs::write(folder.join(format!("tasks/{name}.json")), PASS).unwrap();
    }
    let ran = world.agent_env(&["run", "./my pair"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    std::fs::remove_file(folder.join("tasks/two.json")).unwrap();
    let server = Explorer::start(&world);

    let detail = server
        .post(&format!("/api/v1/tasks/{}/run", seg(id)), "{}")
        .expect(409)
        .detail();
    let detail = detail.as_str().unwrap();
    assert!(
        detail.contains("run it with agent-env task run 'équipe/tâche 中文 (1)'"),
        "{detail}"
    );

    let detail = server
        .post(&format!("/api/v1/bundles/{}/run", seg("./my proj")), "{}")
        .expect(404)
        .detail();
    let detail = detail.as_str().unwrap();
    assert!(
        detail.contains("run it once with agent-env run './my proj', then"),
        "{detail}"
    );

    let detail = server
        .post(
            &format!("/api/v1/tasks/{}/run", seg("@local/~/my pair/two")),
            "{}",
        )
        .expect(409)
        .detail();
    let detail = detail.as_str().unwrap();
    let home = &world.dirs.home;
    assert!(
        detail.contains(&format!(
            "run the folder as it is now with agent-env run '{}/my pair'",
            home.display()
        )),
        "{detail}"
    );
}

//! `GET /api/v1/config`: what `config show` prints, and what `config check` finds in it, so the Config
//! page shows a problem the CLI would report.

use crate::support::{Explorer, World};

#[test]
fn the_config_answer_carries_what_config_check_finds() {
    let world = World::new();
    world.config("[stores.document]\nimpl = \"NoSuchStore\"\n\n[sandbox]\ndefault = \"nosuch\"\n");
    let server = Explorer::start(&world);
    let answer = server.get("/api/v1/config").expect(200).json();
    let problems: Vec<&str> = answer["check"]["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer:#}"))
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert!(
        problems.iter().any(|p| p.contains("NoSuchStore")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("nosuch")),
        "{problems:?}"
    );
    assert!(
        answer["text"].as_str().unwrap().contains("NoSuchStore"),
        "{answer:#}"
    );
}

#[test]
fn a_clean_config_has_no_problems() {
    let world = World::new();
    let server = Explorer::start(&world);
    let answer = server.get("/api/v1/config").expect(200).json();
    assert_eq!(
        answer["check"]["problems"],
        serde_json::json!([]),
        "{answer:#}"
    );
}

#[test]
fn a_plugin_that_provides_only_a_store_is_labelled_a_plugin() {
    let world = World::new();
    world.config("[plugins.acme-stores]\nx = 1\n");
    world.install_manifest(
        "stores",
        "[plugin]\nname = \"acme-stores\"\nversion = \"0.2.0\"\nexec = [\"./bin/none\"]\nprotocol = [1, 1]\n[provides.stores]\nCas = \"object\"\n",
    );
    let server = Explorer::start(&world);
    let answer = server.get("/api/v1/config").expect(200).json();
    let table = &answer["plugins"]["tables"][0];
    assert_eq!(table["name"], "acme-stores", "{answer:#}");
    assert_eq!(table["plugin"], true, "{answer:#}");
    assert!(
        !answer["text"]
            .as_str()
            .unwrap()
            .contains("provides nothing"),
        "{answer:#}"
    );
}

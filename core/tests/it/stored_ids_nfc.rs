//! A stored task's or artifact's id typed or named with a combining accent (NFD) is the same id as
//! the composed one (NFC): ids are kept in NFC.

use crate::support::run::Sandboxed;

const STEPS: &str = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#;

#[test]
fn task_put_of_an_nfd_named_file_stores_it_under_its_nfc_id() {
    let s = Sandboxed::new();
    let nfd = "ta\u{302}che2 e\u{301}";
    let nfc = "t\u{e2}che2 \u{e9}";
    s.write(&format!("{nfd}.json"), STEPS);
    let put = s.run(&["task", "put", &format!("./{nfd}.json")]);
    assert_eq!(put.code, 0, "{}", put.both());
    assert!(put.stdout.contains(nfc), "{}", put.stdout);
    let got = s.run(&["task", "get", nfc, "--json"]);
    assert_eq!(got.code, 0, "{}", got.both());
}

#[test]
fn an_nfd_and_an_nfc_id_name_one_task_and_one_artifact() {
    let s = Sandboxed::new();
    s.write("steps.json", STEPS);
    let nfd = s.run(&["task", "put", "./steps.json", "--id", "team/cafe\u{301}"]);
    assert_eq!(nfd.code, 0, "{}", nfd.both());
    let nfc = s.run(&[
        "task",
        "put",
        "./steps.json",
        "--id",
        "team/caf\u{e9}",
        "--json",
    ]);
    assert_eq!(nfc.code, 0, "{}", nfc.both());
    assert!(nfc.stdout.contains("\"unchanged\": true"), "{}", nfc.stdout);

    s.write("art/a.txt", "hello\n");
    let nfd = s.run(&[
        "artifact",
        "put",
        "art",
        "--id",
        "team/cafe\u{301}",
        "--json",
    ]);
    assert_eq!(nfd.code, 0, "{}", nfd.both());
    assert!(
        nfd.stdout.contains("\"id\": \"team/caf\u{e9}\""),
        "{}",
        nfd.stdout
    );
    let nfc = s.run(&["artifact", "put", "art", "--id", "team/caf\u{e9}", "--json"]);
    assert_eq!(nfc.code, 0, "{}", nfc.both());
    assert!(nfc.stdout.contains("\"unchanged\": true"), "{}", nfc.stdout);
}

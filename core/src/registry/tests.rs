//! The registry's precedence and config merge, with a prober that answers from a table instead of
//! starting processes (the black-box tests in `core/tests/it/plugin_*.rs` start real ones).

use std::collections::HashMap;
use std::path::PathBuf;

use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::methods::{ContributionInfo, InitializeResult, PluginInfo};

use super::outcome::{codes, Status};
use super::*;
use crate::discovery::{DiscoveredPlugin, Source};

struct FakeProber(HashMap<String, Result<InitializeResult, LoadFailure>>);

impl Prober for FakeProber {
    fn probe_all(&self, launches: &[Launch]) -> Vec<Probe> {
        launches
            .iter()
            .map(|l| Probe {
                handshake: self.0.get(&l.package).cloned().unwrap_or(Err(LoadFailure {
                    code: "spawn-failed".into(),
                    message: "no such fake".into(),
                })),
                diagnosis: ProcessDiagnosis::default(),
                root_option_failures: Default::default(),
            })
            .collect()
    }
}

fn plugin(name: &str, body: &str) -> DiscoveredPlugin {
    let text = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"1.0\"\nexec = [\"x\"]\nprotocol = [1, 1]\n{body}"
    );
    DiscoveredPlugin {
        manifest: Manifest::parse(&PathBuf::from(format!("/p/{name}/m.toml")), &text).unwrap(),
        source: Source::PluginsDir,
        shadowed: Vec::new(),
    }
}

fn answer(name: &str, contributions: &[(&str, &str, &str, &str, &[&str])]) -> InitializeResult {
    InitializeResult {
        protocol: 1,
        plugin: PluginInfo {
            name: name.into(),
            version: "1.0".into(),
        },
        contributions: contributions
            .iter()
            .map(|(group, name, ty, class, methods)| ContributionInfo {
                group: group.to_string(),
                name: name.to_string(),
                type_name: ty.to_string(),
                class: class.to_string(),
                methods: methods.iter().map(|m| m.to_string()).collect(),
                description: None,
            })
            .collect(),
        stores: vec![],
    }
}

const STEP: &[&str] = &["execute", "from_dict"];

fn config(text: &str) -> ConfigState {
    ConfigState::from_text(text, "/c/.agentenv/config.toml")
}

fn outcome<'a>(reg: &'a Registry, group: &str, name: &str, package: &str) -> &'a ClaimOutcome {
    &reg.claims
        .iter()
        .find(|c| {
            c.group == group
                && c.name == name
                && reg.discovery.plugins[c.plugin].manifest.name == package
        })
        .unwrap()
        .outcome
}

fn demo() -> (Discovery, FakeProber) {
    let discovery = Discovery {
        plugins: vec![
            plugin(
                "agentenv-demo",
                "[provides.task_steps]\ngrade_essay = \"GradeEssay\"\nhalf_step = \"Half\"\nwrong = \"WrongName\"\n[provides.sandbox_providers]\nbox = \"BoxProvider\"\n",
            ),
            plugin("agentenv-alt", ""),
        ],
        broken: vec![],
    };
    let prober = FakeProber(HashMap::from([
        (
            "agentenv-demo".to_string(),
            Ok(answer(
                "agentenv-demo",
                &[
                    (
                        "task_steps",
                        "grade_essay",
                        "grade_essay",
                        "GradeEssay",
                        STEP,
                    ),
                    ("task_steps", "half_step", "half_step", "Half", &[]),
                    ("task_steps", "wrong", "something_else", "WrongName", STEP),
                    (
                        "sandbox_providers",
                        "box",
                        "box",
                        "BoxProvider",
                        &["create_vm"],
                    ),
                ],
            )),
        ),
        (
            "agentenv-alt".to_string(),
            Ok(answer(
                "agentenv-alt",
                &[
                    ("task_steps", "grade_essay", "grade_essay", "Grade2", STEP),
                    (
                        "sandbox_providers",
                        "box",
                        "box",
                        "Box2",
                        &["create_sandbox"],
                    ),
                ],
            )),
        ),
    ]));
    (discovery, prober)
}

#[test]
fn validation_messages_and_resolution() {
    let (discovery, prober) = demo();
    let reg = Registry::build(
        discovery,
        ConfigState::default(),
        Loading::All(&prober),
        None,
    );
    assert_eq!(
        outcome(&reg, "task_steps", "grade_essay", "agentenv-demo").status,
        Status::Active
    );
    let half = outcome(&reg, "task_steps", "half_step", "agentenv-demo");
    assert_eq!(half.code.as_deref(), Some(codes::INVALID_PLUGIN));
    assert_eq!(
        half.reason.as_deref(),
        Some("failed to load: TypeError('Half must implement execute and from_dict')")
    );
    let wrong = outcome(&reg, "task_steps", "wrong", "agentenv-demo");
    assert_eq!(
        wrong.reason.as_deref(),
        Some("failed to load: TypeError(\"WrongName has type 'something_else'; its entry point must be named 'something_else'\")")
    );
    match reg.resolve("task_steps", "grade_essay").unwrap() {
        Resolved::Plugin { package, class, .. } => {
            assert_eq!(
                (package.as_str(), class.as_str()),
                ("agentenv-demo", "GradeEssay")
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        reg.resolve("task_steps", "deploy_env").unwrap(),
        Resolved::BuiltIn { config: None }
    );
    let err = reg
        .resolve("task_steps", "half_step")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Unknown task step type: half_step (registered by 'half_step' from agentenv-demo 1.0 (Half) but failed to load: TypeError('Half must implement execute and from_dict'))"
    );
}

#[test]
fn a_load_failure_keeps_the_hosts_code() {
    let (discovery, mut prober) = demo();
    prober.0.insert(
        "agentenv-demo".into(),
        Err(LoadFailure {
            code: "handshake-timeout".into(),
            message: "agentenv-demo did not answer initialize within 10 s".into(),
        }),
    );
    let reg = Registry::build(
        discovery,
        ConfigState::default(),
        Loading::All(&prober),
        None,
    );
    let o = outcome(&reg, "task_steps", "grade_essay", "agentenv-demo");
    assert_eq!(o.status, Status::Failed);
    assert_eq!(o.code.as_deref(), Some("handshake-timeout"));
}

#[test]
fn config_impls_replace_a_plugin_name_and_the_same_class_stays_active() {
    let (discovery, prober) = demo();
    let reg = Registry::build(
        discovery.clone(),
        config("[task_steps]\nimpls = [\"agentenv-alt:Grade2\"]\n"),
        Loading::All(&prober),
        None,
    );
    let o = outcome(&reg, "task_steps", "grade_essay", "agentenv-demo");
    assert_eq!(o.status, Status::Replaced);
    assert_eq!(o.code.as_deref(), Some(codes::REPLACED_BY_CONFIG));
    assert_eq!(
        o.reason.as_deref(),
        Some("config names 'agentenv-alt:Grade2' in [task_steps] of /c/.agentenv/config.toml")
    );
    let by = o.replaced_by.clone().unwrap();
    assert_eq!(
        (by.table.as_str(), by.impl_.as_str()),
        ("task_steps", "agentenv-alt:Grade2")
    );
    match reg.resolve("task_steps", "grade_essay").unwrap() {
        Resolved::Plugin { package, class, .. } => {
            assert_eq!(
                (package.as_str(), class.as_str()),
                ("agentenv-alt", "Grade2")
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(reg.warnings.iter().any(|w| w.contains(
        "replaces the class registered by plugin 'grade_essay' from agentenv-demo 1.0 (GradeEssay)"
    )));

    let same = Registry::build(
        discovery,
        config("[task_steps]\nimpls = [\"agentenv_demo:GradeEssay\"]\n"),
        Loading::All(&prober),
        None,
    );
    let o = outcome(&same, "task_steps", "grade_essay", "agentenv-demo");
    assert_eq!(o.status, Status::Active);
    assert_eq!(o.code, None);
}

#[test]
fn an_impl_in_the_originals_module_form_is_spelled_for_its_package() {
    let (discovery, prober) = demo();
    let reg = Registry::build(
        discovery,
        config("[task_steps]\nimpls = [\"agentenv_demo.steps:GradeEssay\"]\n"),
        Loading::All(&prober),
        None,
    );
    assert_eq!(
        reg.group_errors["task_steps"].reason,
        "ConfigError: [task_steps] Cannot import impl 'agentenv_demo.steps:GradeEssay': no installed plugin package named 'agentenv_demo.steps'; agentenv-demo provides GradeEssay: write \"agentenv-demo:GradeEssay\""
    );
}

#[test]
fn a_bad_impls_table_blocks_the_group() {
    let (discovery, prober) = demo();
    let reg = Registry::build(
        discovery,
        config("[task_steps]\nimpls = \"x\"\n"),
        Loading::All(&prober),
        None,
    );
    let e = &reg.group_errors["task_steps"];
    assert_eq!(e.code, codes::CONFIG_INVALID);
    assert_eq!(
        e.reason,
        "ConfigError: [task_steps] impls must be a list of 'module:Class' strings, got str"
    );
    let o = outcome(&reg, "task_steps", "grade_essay", "agentenv-demo");
    assert_eq!(o.status, Status::Blocked);
    assert_eq!(o.code.as_deref(), Some(codes::CONFIG_INVALID));
    // A failed claim keeps its status.
    assert_eq!(
        outcome(&reg, "task_steps", "half_step", "agentenv-demo").status,
        Status::Failed
    );
    assert!(matches!(
        reg.resolve("task_steps", "grade_essay"),
        Err(RegistryError::GroupFailed { .. })
    ));
}

#[test]
fn provider_tables_replace_configure_and_refuse() {
    let (discovery, prober) = demo();
    let reg = Registry::build(
        discovery.clone(),
        config("[sandbox.providers.box]\nimpl = \"agentenv-alt:Box2\"\nconfig = { region = \"x\" }\n[sandbox.providers.local.config]\nroot = \"/tmp\"\n"),
        Loading::All(&prober),
        None,
    );
    let o = outcome(&reg, "sandbox_providers", "box", "agentenv-demo");
    assert_eq!(o.status, Status::Replaced);
    assert_eq!(
        o.replaced_by.as_ref().unwrap().table,
        "sandbox.providers.box"
    );
    match reg.resolve("sandbox_providers", "local").unwrap() {
        Resolved::BuiltIn { config } => assert_eq!(config.unwrap()["root"].as_str(), Some("/tmp")),
        other => panic!("{other:?}"),
    }
    let reg = Registry::build(
        discovery.clone(),
        config("[sandbox.providers.local]\nimpl = \"agentenv-alt:Box2\"\n"),
        Loading::All(&prober),
        None,
    );
    assert_eq!(
        reg.group_errors["sandbox_providers"].reason,
        "ConfigError: config.toml sandbox provider 'local' collides with a built-in backend: a built-in's impl cannot be replaced; supply a config-only table instead"
    );
    let reg = Registry::build(
        discovery,
        config("[sandbox.providers.box]\nconfig = { a = 1 }\nextra = 2\n"),
        Loading::All(&prober),
        None,
    );
    assert_eq!(
        reg.group_errors["sandbox_providers"].reason,
        "ConfigError: [sandbox.providers.box] configures plugin 'box' from agentenv-demo 1.0 (BoxProvider) and accepts only a 'config' table; got ['extra', 'config']"
    );
}

#[test]
fn config_cannot_settle_a_conflict() {
    let discovery = Discovery {
        plugins: vec![
            plugin("agentenv-a", "[provides.envs]\nbrowser = \"A\"\n"),
            plugin("agentenv-b", "[provides.envs]\nbrowser = \"B\"\n"),
        ],
        broken: vec![],
    };
    let prober = FakeProber(HashMap::from([(
        "agentenv-a".to_string(),
        Ok(answer(
            "agentenv-a",
            &[("envs", "browser", "browser", "A", &["from_dict"])],
        )),
    )]));
    let reg = Registry::build(
        discovery,
        config("[envs]\nimpls = [\"agentenv-a:A\"]\n"),
        Loading::All(&prober),
        None,
    );
    assert_eq!(
        outcome(&reg, "envs", "browser", "agentenv-a").status,
        Status::Conflict
    );
    assert!(reg.warnings.iter().any(|w| w.starts_with("[envs] impl 'agentenv-a:A' names 'browser' and was skipped: 2 installed plugins register 'browser' in agent_env.envs:")));
    let err = reg.resolve("envs", "browser").unwrap_err().to_string();
    assert!(err.starts_with("Unknown env type: browser (2 installed plugins register 'browser' in agent_env.envs: 'browser' from agentenv-a 1.0 (A); 'browser' from agentenv-b 1.0 (B)."), "{err}");
    assert!(
        err.ends_with("Remove all but one with `agent-env plugin remove <package>`.)"),
        "{err}"
    );
}

#[test]
fn a_run_build_starts_only_what_config_names() {
    struct Counting(FakeProber, std::sync::Mutex<Vec<String>>);
    impl Prober for Counting {
        fn probe_all(&self, launches: &[Launch]) -> Vec<Probe> {
            let mut started = self.1.lock().unwrap();
            started.extend(launches.iter().map(|l| l.package.clone()));
            self.0.probe_all(launches)
        }
    }
    let (discovery, prober) = demo();
    let counting = Counting(prober, Default::default());
    let reg = Registry::build(
        discovery.clone(),
        ConfigState::default(),
        Loading::ConfigNamed(&counting),
        None,
    );
    assert!(counting.1.lock().unwrap().is_empty());
    // Taken on trust from the manifest: checked when its process starts.
    assert!(matches!(
        reg.resolve("task_steps", "half_step"),
        Ok(Resolved::Plugin { .. })
    ));
    let reg = Registry::build(
        discovery,
        config("[task_steps]\nimpls = [\"agentenv-alt:Grade2\"]\n"),
        Loading::ConfigNamed(&counting),
        None,
    );
    assert_eq!(
        *counting.1.lock().unwrap(),
        vec!["agentenv-alt".to_string()]
    );
    match reg.resolve("task_steps", "grade_essay").unwrap() {
        Resolved::Plugin { package, .. } => assert_eq!(package, "agentenv-alt"),
        other => panic!("{other:?}"),
    }
}

fn web_artifacts() -> (Discovery, FakeProber) {
    let discovery = Discovery {
        plugins: vec![plugin(
            "agentenv-web",
            "[provides.artifacts]\nweb_page = \"WebPage\"\n",
        )],
        broken: vec![],
    };
    let prober = FakeProber(HashMap::from([(
        "agentenv-web".to_string(),
        Ok(answer(
            "agentenv-web",
            &[("artifacts", "web_page", "web_page", "WebPage", &[])],
        )),
    )]));
    (discovery, prober)
}

#[test]
fn a_type_alias_resolves_to_the_type_it_names() {
    let (discovery, prober) = web_artifacts();
    let reg = Registry::build(
        discovery,
        config("[artifacts]\ntype_aliases = { webpage = \"web_page\" }\n"),
        Loading::All(&prober),
        None,
    );
    assert!(reg.group_errors.is_empty(), "{:?}", reg.group_errors);
    match reg.resolve("artifacts", "webpage") {
        Ok(Resolved::Plugin { class, package, .. }) => {
            assert_eq!(
                (class.as_str(), package.as_str()),
                ("WebPage", "agentenv-web")
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn type_aliases_that_point_nowhere_at_themselves_or_at_an_alias_fail_the_artifacts_group() {
    for (table, message) in [
        (
            "{ old = \"nothing_here\" }",
            "ConfigError: [artifacts] type_aliases maps 'old' to 'nothing_here', which no artifact registers; declare it under [artifacts].impls or correct the alias",
        ),
        (
            "{ web_page = \"web_page\" }",
            "ConfigError: [artifacts] type_aliases maps 'web_page' to itself; remove it",
        ),
        (
            "{ a = \"b\", b = \"web_page\" }",
            "ConfigError: [artifacts] type_aliases maps 'a' to 'b', which is an alias itself; map 'a' to 'web_page'",
        ),
        (
            "{ a = 5 }",
            "ConfigError: [artifacts] type_aliases.a must be a string (the artifact type it stands for), not an integer",
        ),
    ] {
        let (discovery, prober) = web_artifacts();
        let reg = Registry::build(
            discovery,
            config(&format!("[artifacts]\ntype_aliases = {table}\n")),
            Loading::All(&prober),
            None,
        );
        let e = &reg.group_errors["artifacts"];
        assert_eq!(e.code, codes::CONFIG_INVALID);
        assert_eq!(e.reason, message);
        assert_eq!(
            outcome(&reg, "artifacts", "web_page", "agentenv-web").status,
            Status::Blocked
        );
    }
}

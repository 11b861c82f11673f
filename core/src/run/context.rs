//! `TaskStepContext`: what the steps of one task run share (a plugin's step gets it as `execute`'s
//! `context`, `docs/protocol.md` §4.3), and its secret-free form.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Keys that hold secrets; [`TaskStepContext::to_safe_dict`] strips them at any depth.
pub const SECRET_KEYS: [&str; 6] = [
    "litellm_api_key",
    "judge_litellm_api_key",
    "usersim_api_key",
    "remote_tokens",
    "cf_access_client_secret",
    "_heartbeat_fn",
];

/// The context of one task run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskStepContext {
    #[serde(default)]
    pub deployed_envs: Vec<Value>,
    #[serde(default)]
    pub deployed_agents: Vec<Value>,
    #[serde(default)]
    pub deployed_sandboxes: Vec<Value>,
    #[serde(default)]
    pub prompt_responses: Vec<Value>,
    #[serde(default)]
    pub metadata: Map<String, Value>,
    #[serde(default)]
    pub agent_model: Option<String>,
    #[serde(default)]
    pub default_agent_model: Option<String>,
    #[serde(default)]
    pub agent_artifact_id: Option<String>,
    #[serde(default)]
    pub agent_harness: Option<String>,
    #[serde(default)]
    pub instance_id: Option<String>,
}

impl TaskStepContext {
    /// The whole context as JSON.
    pub fn to_dict(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The context as JSON with every secret key removed, at any depth, unless its value is a bare
    /// `env:`/`secret:` reference (which names a secret without holding it).
    pub fn to_safe_dict(&self) -> Value {
        let mut v = self.to_dict();
        strip_secrets(&mut v);
        v
    }

    /// Reads a context back from JSON.
    pub fn from_dict(value: Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(value)
    }

    /// Merges `update` into `metadata` key by key: objects recursively, other values replace.
    pub fn merge_metadata(&mut self, update: Map<String, Value>) {
        merge_maps(&mut self.metadata, update);
    }

    /// `metadata.models[role][step_id] = model`.
    pub fn record_model(&mut self, role: &str, step_id: &str, model: &str) {
        let mut inner = Map::new();
        inner.insert(step_id.to_string(), Value::String(model.to_string()));
        let mut by_role = Map::new();
        by_role.insert(role.to_string(), Value::Object(inner));
        let mut update = Map::new();
        update.insert("models".to_string(), Value::Object(by_role));
        self.merge_metadata(update);
    }

    /// The deployed sandbox of this name.
    pub fn sandbox(&self, name: &str) -> Option<&Value> {
        self.deployed_sandboxes
            .iter()
            .find(|s| s.get("sandbox_name").and_then(Value::as_str) == Some(name))
    }
}

/// Merges `update` into `target`: objects recursively, other values replace.
pub fn merge_maps(target: &mut Map<String, Value>, update: Map<String, Value>) {
    for (key, value) in update {
        match (target.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(incoming)) => {
                merge_maps(existing, incoming)
            }
            (_, value) => {
                target.insert(key, value);
            }
        }
    }
}

fn is_reference(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.starts_with("env:") || s.starts_with("secret:"))
}

fn strip_secrets(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, v| !SECRET_KEYS.contains(&k.as_str()) || is_reference(v));
            for v in map.values_mut() {
                strip_secrets(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_secrets),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn safe_dict_strips_secrets_at_any_depth_but_keeps_references() {
        let c = TaskStepContext {
            metadata: json!({
                "litellm_api_key": "sk-1",
                "usersim_api_key": "env:USERSIM_KEY",
                "nested": {"remote_tokens": ["t"], "keep": 1},
                "list": [{"cf_access_client_secret": "x", "ok": true}]
            })
            .as_object()
            .cloned()
            .unwrap(),
            ..TaskStepContext::default()
        };
        let safe = c.to_safe_dict();
        let m = &safe["metadata"];
        assert!(m.get("litellm_api_key").is_none());
        assert_eq!(m["usersim_api_key"], "env:USERSIM_KEY");
        assert_eq!(m["nested"], json!({"keep": 1}));
        assert_eq!(m["list"], json!([{"ok": true}]));
        assert_eq!(TaskStepContext::from_dict(c.to_dict()).unwrap(), c);
    }

    #[test]
    fn metadata_merges_objects_recursively() {
        let mut c = TaskStepContext::default();
        c.merge_metadata(json!({"v": {"a": 1}, "x": 1}).as_object().cloned().unwrap());
        c.merge_metadata(
            json!({"v": {"b": 2}, "x": [2]})
                .as_object()
                .cloned()
                .unwrap(),
        );
        assert_eq!(
            Value::Object(c.metadata.clone()),
            json!({"v": {"a": 1, "b": 2}, "x": [2]})
        );
        c.record_model("solver", "s1", "m");
        assert_eq!(c.metadata["models"]["solver"]["s1"], "m");
    }
}

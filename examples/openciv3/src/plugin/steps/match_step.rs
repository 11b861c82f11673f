//! `openciv3_match`: seats the run's agents (then humans) at a new OpenCiv3 game.

use std::collections::{BTreeMap, HashSet};

use agent_env_plugin_sdk::{ExecuteResult, StepContext, StepError, TaskStep};
use serde_json::{Map, Value};

use super::env::{cannot_call_env, deployed_env, require_extension};
use super::fields::Fields;

pub const TYPE: &str = "openciv3_match";
pub const NEW_GAME_URI: &str = "urn:openciv3:new-game/v1";
/// Civs handed out, in order, to seats that name none.
pub const CIVS: [&str; 16] = [
    "Romans",
    "Greeks",
    "Egyptians",
    "Babylonians",
    "Germans",
    "Russians",
    "Chinese",
    "Americans",
    "Japanese",
    "French",
    "Indians",
    "Persians",
    "Aztecs",
    "Zulus",
    "Iroquois",
    "English",
];

/// A seat at the game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub player: String,
    pub civ: String,
    pub human: bool,
}

/// The step document, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchSpec {
    pub env_id: String,
    pub turns: i64,
    pub civs: BTreeMap<String, String>,
    pub agents: Vec<String>,
    pub humans: Vec<(String, Option<String>)>,
    pub seed: i64,
    pub size: String,
    pub difficulty: String,
    pub barbarians: String,
    pub ai_opponents: i64,
    pub landform: Option<String>,
    pub ocean: Option<String>,
    pub timeout_seconds: f64,
    pub human_turn_seconds: f64,
    pub min_turn_seconds: i64,
}

impl MatchSpec {
    /// Checks every field, including that no agent is also named as a human and no civ is given twice.
    pub fn parse(step: &Map<String, Value>) -> Result<MatchSpec, StepError> {
        let f = Fields::new(step, TYPE);
        let spec = MatchSpec {
            env_id: f.required_str("env_id")?.to_string(),
            turns: f.required_int("turns", 1)?,
            civs: f
                .str_map("civs")?
                .into_iter()
                .map(|(a, c)| (a.to_string(), c.to_string()))
                .collect(),
            agents: f
                .str_list("agents")?
                .into_iter()
                .map(str::to_string)
                .collect(),
            humans: f
                .names_with_optional_civ("humans")?
                .into_iter()
                .map(|(n, c)| (n.to_string(), c.map(str::to_string)))
                .collect(),
            seed: f.int_or("seed", 1, i64::MIN)?,
            size: f.str_or("size", "Small")?.to_string(),
            difficulty: f.str_or("difficulty", "Regent")?.to_string(),
            barbarians: f.str_or("barbarians", "Roaming")?.to_string(),
            ai_opponents: f.int_or("ai_opponents", 0, 0)?,
            landform: f.optional_str("landform")?.map(str::to_string),
            ocean: f.optional_str("ocean")?.map(str::to_string),
            timeout_seconds: f.seconds_or("timeout_seconds", 120.0)?,
            human_turn_seconds: f.seconds_or("human_turn_seconds", 900.0)?,
            min_turn_seconds: f.int_or("min_turn_seconds", 0, 0)?,
        };
        for (human, _) in &spec.humans {
            if spec.civs.contains_key(human) || spec.agents.contains(human) {
                return Err(f.error(format!(
                    "'{human}' is listed both as an agent and in humans; a seat is an agent's or a human's, not both"
                )));
            }
        }
        let mut given: BTreeMap<&str, &str> = BTreeMap::new();
        let named = spec
            .civs
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .chain(
                spec.humans
                    .iter()
                    .filter_map(|(p, c)| c.as_deref().map(|c| (p.as_str(), c))),
            );
        for (player, civ) in named {
            if let Some(first) = given.insert(civ, player) {
                return Err(f.error(format!(
                    "civ '{civ}' is given to both '{first}' and '{player}'"
                )));
            }
        }
        Ok(spec)
    }

    /// One seat per deployed agent (those named in `agents`, or every one), then one per human; civs
    /// from `civs`/`humans`, the rest from [`CIVS`] in order.
    pub fn seats(&self, deployed_agents: &[String]) -> Result<Vec<Seat>, StepError> {
        let f = |message: String| StepError::value(format!("{TYPE}: {message}"));
        for agent in self.agents.iter().chain(self.civs.keys()) {
            if !deployed_agents.contains(agent) {
                return Err(f(format!("agent '{agent}' is not deployed in this run")));
            }
        }
        let players: Vec<&String> = if self.agents.is_empty() {
            deployed_agents.iter().collect()
        } else {
            self.agents.iter().collect()
        };
        let taken: HashSet<&str> = self
            .civs
            .values()
            .map(String::as_str)
            .chain(self.humans.iter().filter_map(|(_, c)| c.as_deref()))
            .collect();
        let mut free = CIVS.iter().filter(|civ| !taken.contains(*civ));
        let mut seats = Vec::new();
        let wanted = players
            .into_iter()
            .map(|p| (p.clone(), self.civs.get(p).cloned(), false))
            .chain(
                self.humans
                    .iter()
                    .map(|(p, c)| (p.clone(), c.clone(), true)),
            );
        for (player, civ, human) in wanted {
            let civ = match civ {
                Some(civ) => civ,
                None => free.next().map(|c| c.to_string()).ok_or_else(|| {
                    f(format!(
                        "no civ is left for '{player}'; name civs for fewer players"
                    ))
                })?,
            };
            seats.push(Seat { player, civ, human });
        }
        if seats.is_empty() {
            return Err(f(
                "the match has no seats: deploy an agent or name a human".to_string()
            ));
        }
        Ok(seats)
    }
}

fn deployed_agent_names(context: &Value) -> Vec<String> {
    context
        .get("deployed_agents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| a.get("agent_name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

pub struct MatchStep;

impl TaskStep for MatchStep {
    fn type_name(&self) -> &str {
        TYPE
    }

    fn class(&self) -> &str {
        "MatchStep"
    }

    fn description(&self) -> Option<&str> {
        Some("Start an OpenCiv3 game with the run's agents (and humans) seated")
    }

    fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
        MatchSpec::parse(step).map(|_| ())
    }

    fn execute(
        &self,
        _ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let spec = MatchSpec::parse(step)?;
        let env = deployed_env(context, &spec.env_id)?;
        require_extension(env, &spec.env_id, NEW_GAME_URI)?;
        let seats = spec.seats(&deployed_agent_names(context))?;
        Err(cannot_call_env(
            TYPE,
            &spec.env_id,
            &format!(
                "starting a game of {} seats through {NEW_GAME_URI}",
                seats.len()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(step: Value) -> Result<MatchSpec, StepError> {
        MatchSpec::parse(step.as_object().unwrap())
    }

    #[test]
    fn defaults_follow_the_original() {
        let s = spec(json!({"id": "m", "env_id": "openciv3", "turns": 30})).unwrap();
        assert_eq!(
            (
                s.seed,
                s.size.as_str(),
                s.difficulty.as_str(),
                s.barbarians.as_str()
            ),
            (1, "Small", "Regent", "Roaming")
        );
        assert_eq!(
            (
                s.ai_opponents,
                s.timeout_seconds,
                s.human_turn_seconds,
                s.min_turn_seconds
            ),
            (0, 120.0, 900.0, 0)
        );
    }

    #[test]
    fn seats_take_given_civs_then_free_ones_in_order_agents_before_humans() {
        let s = spec(json!({"id": "m", "env_id": "e", "turns": 3, "civs": {"codex": "Romans"}, "humans": {"ana": "Zulus"}})).unwrap();
        let seats = s
            .seats(&["claude".to_string(), "codex".to_string()])
            .unwrap();
        let got: Vec<(&str, &str, bool)> = seats
            .iter()
            .map(|s| (s.player.as_str(), s.civ.as_str(), s.human))
            .collect();
        assert_eq!(
            got,
            [
                ("claude", "Greeks", false),
                ("codex", "Romans", false),
                ("ana", "Zulus", true)
            ]
        );
    }

    #[test]
    fn a_match_without_seats_or_with_bad_fields_is_refused() {
        let s = spec(json!({"id": "m", "env_id": "e", "turns": 3})).unwrap();
        assert_eq!(
            s.seats(&[]).unwrap_err().message,
            "openciv3_match: the match has no seats: deploy an agent or name a human"
        );
        assert_eq!(
            spec(json!({"id": "m", "env_id": "e"})).unwrap_err().message,
            "openciv3_match step 'm': turns is required"
        );
        assert_eq!(
            spec(json!({"id": "m", "env_id": "e", "turns": 0}))
                .unwrap_err()
                .message,
            "openciv3_match step 'm': turns must be at least 1, got 0"
        );
        assert!(spec(json!({"id": "m", "env_id": "e", "turns": 2, "humans": 3})).is_err());
        assert!(spec(
            json!({"id": "m", "env_id": "e", "turns": 2, "agents": ["a"], "humans": ["a"]})
        )
        .is_err());
    }
}

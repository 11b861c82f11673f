//! The three task steps: `openciv3_match`, `openciv3_await_game`, `save_env_recording`.

pub mod await_game;
pub mod env;
pub mod fields;
pub mod match_step;
pub mod save_recording;

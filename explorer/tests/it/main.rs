//! The explorer's integration tests, one test binary: each module starts the built
//! `agent-env-explorer` (or `agent-env up`) on an ephemeral port in a temp world and talks HTTP to it.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod api_cancel_elsewhere;
mod api_config;
mod api_entities;
mod api_guards;
mod api_kept_runs;
mod api_now;
mod api_objects;
mod api_paging;
mod api_runs;
mod api_secrets;
mod api_stored;
mod api_suggested_commands;
mod connection_limits;
mod connections;
mod explorer_plugins;
mod openapi;
mod ui_pages;
mod up_cli;

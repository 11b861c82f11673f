//! The integration tests of `agent-env`, one test binary (modules named by area: `cli_*`, `config_*`,
//! `plugin_*`, `run_*`, `store_*`). Most run the built binary black-box in a temp world (see
//! [`support`]); some drive the library directly. The child-process host's own tests live in the
//! `agent-env-host` crate.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod artifact_get_local;
mod artifact_hashes;
mod artifact_put_unrecorded;
mod build_static;
mod bundle_init_json;
mod cli_broken;
mod cli_command_mode;
mod cli_completions;
mod cli_help;
mod cli_output;
mod cli_plugins;
mod cli_quoted_words;
mod cli_root_options;
mod config_api;
mod config_check;
mod config_show;
mod contract_compat;
mod contract_settings;
mod contract_tasks;
mod hosted_postgres;
mod hosted_s3;
mod hosted_team;
mod plugin_add_folder;
mod plugin_add_registries;
mod plugin_add_sources;
mod plugin_discovery;
mod plugin_env;
mod plugin_exec_arguments;
mod plugin_load;
mod plugin_new;
mod plugin_pins;
mod plugin_remove_blockers;
mod plugin_safety;
mod plugin_verify;
mod run_command_leftovers;
mod run_dry_run;
mod run_dry_versions;
mod run_events;
mod run_folder_names;
mod run_folders;
mod run_full_disk;
mod run_heartbeat;
mod run_hello;
mod run_home;
mod run_liveness;
mod run_long_steps;
mod run_no_bash;
mod run_output;
mod run_plugin_ends;
mod run_plugin_stores;
mod run_plugin_timeout_notes;
mod run_plugins;
mod run_private_state;
mod run_signals;
mod run_step_deadline;
mod run_store_plugin_trouble;
mod run_store_refusals;
mod run_task_file_problems;
mod run_timeouts;
mod secret_masking;
mod state_moved;
mod state_path_too_long;
mod store_cli;
mod store_command_notes;
mod store_dispatch;
mod store_documents;
mod store_faults_documents;
mod store_faults_images_secrets;
mod store_grants;
mod store_kits;
mod store_object;
mod store_plugin;
mod store_plugin_documents;
mod store_plugin_faults;
mod stored_artifacts;
mod task_instances;
mod task_prune;
mod task_store_left_out;

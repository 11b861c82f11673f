#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agent_env_fuzz_targets::line(data));

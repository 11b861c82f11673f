//! The local object store's grant settings, checked with the original's messages (each naming its key).

use std::net::IpAddr;

use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::SettingsProblems;

use crate::stores::config_table::{self, ConfigTable};

/// Most lifetime a local grant may have: 7 days.
pub const MAX_LOCAL_GRANT_LIFETIME_SECONDS: u64 = 7 * 24 * 3600;

/// `grants` must be `auto` or `off`.
pub fn check_grants(value: &str) -> StoreResult<()> {
    match value {
        "auto" | "off" => Ok(()),
        other => Err(StoreError::Config(format!(
            "grants must be one of ('auto', 'off'), got '{other}'"
        ))),
    }
}

/// `grant_bind_host` must be an IP literal.
pub fn check_bind_host(value: &str) -> StoreResult<IpAddr> {
    value.parse::<IpAddr>().map_err(|_| {
        StoreError::Config(format!(
            "grant_bind_host must be an IP address, got '{value}'"
        ))
    })
}

/// `grant_advertise_host` must be a local name or a loopback/private address.
pub fn check_advertise_host(value: &str) -> StoreResult<()> {
    let host = value.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host.parse::<IpAddr>() {
        return if is_loopback_or_private(ip) {
            Ok(())
        } else {
            Err(StoreError::Config(format!(
                "grant_advertise_host '{value}' is not a loopback or private address, which the local transfer CA vouches for"
            )))
        };
    }
    let lower = host.to_ascii_lowercase();
    let local = ["localhost", "host.docker.internal"]
        .iter()
        .any(|name| lower == *name || lower.ends_with(&format!(".{name}")));
    if local {
        Ok(())
    } else {
        Err(StoreError::Config(format!(
            "grant_advertise_host '{value}' is not a local name; the local transfer CA vouches only for localhost, host.docker.internal and loopback or private addresses"
        )))
    }
}

fn is_loopback_or_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
        IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
    }
}

/// A string setting `check` accepts, as `check` reads it; `None` when it is absent or its problem (of
/// type, or of value, naming this store) is kept in `problems`.
pub fn read_checked<T>(
    problems: &mut SettingsProblems,
    impl_name: &str,
    table: &ConfigTable,
    key: &str,
    check: impl Fn(&str) -> StoreResult<T>,
) -> Option<T> {
    let value = problems.keep(config_table::opt_string(impl_name, table, key))??;
    problems.keep(check(&value).map_err(of_this_store))
}

/// A setting's error as a config problem names the store it is about, as the hosted stores' do (the
/// original's sentence follows the name unchanged).
pub fn of_this_store(err: StoreError) -> StoreError {
    match err {
        StoreError::Config(message) => StoreError::Config(format!("{}: {message}", super::CLASS)),
        other => other,
    }
}

/// `grant_lifetime_seconds` must be a whole number between 900 and 604 800 (the rule every store
/// shares, with this store's maximum).
pub fn check_lifetime(value: &serde_json::Value) -> StoreResult<u64> {
    agent_env_store::grant::check_grant_lifetime_setting(value, MAX_LOCAL_GRANT_LIFETIME_SECONDS)
        .map_err(|e| of_this_store(StoreError::Config(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn grant_settings_are_checked() {
        assert!(check_grants("auto").is_ok());
        assert_eq!(
            check_grants("x").unwrap_err().to_string(),
            "grants must be one of ('auto', 'off'), got 'x'"
        );
        assert!(check_bind_host("127.0.0.1").is_ok() && check_bind_host("localhost").is_err());
        assert!(check_advertise_host("host.docker.internal").is_ok());
        assert!(check_advertise_host("10.1.2.3").is_ok());
        assert!(check_advertise_host("8.8.8.8")
            .unwrap_err()
            .to_string()
            .contains("not a loopback"));
        assert!(check_advertise_host("example.com")
            .unwrap_err()
            .to_string()
            .contains("not a local name"));
        assert!(check_lifetime(&json!(900)).is_ok());
        assert!(check_lifetime(&json!(true)).is_err());
        assert!(check_lifetime(&json!(899))
            .unwrap_err()
            .to_string()
            .contains("at least 900"));
        assert!(check_lifetime(&json!(604_801)).is_err());
    }
}

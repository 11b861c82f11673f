//! `LocalRegistryImageStore`: images in an anonymous OCI registry, by default `localhost:5000`.
//!
//! `ensure_repository` needs no docker: OCI registries create a repository on its first push, so it only
//! checks whether a loopback registry answers `GET /v2/`. When none does, it carries on with a warning (with
//! the command that starts one), once per store, which its holder takes with `take_warnings` and shows:
//! this build never starts containers itself.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::stores::config_table::{self, ConfigTable};
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::image::{ImageStore, RegistryAuth};
use agent_env_store::SettingsProblems;

/// The class name, as `[stores.image] impl` names it.
pub const CLASS: &str = "LocalRegistryImageStore";
/// The original's full impl path, which the `local` alias expands to.
pub const IMPL: &str = "agent_env.store.image_store:LocalRegistryImageStore";
/// The keys its config table takes.
pub const CONFIG_KEYS: [&str; 1] = ["registry_host"];
/// The default registry.
pub const DEFAULT_REGISTRY_HOST: &str = "localhost:5000";

const DOCKER_HUB: &str = "docker.io";

/// An anonymous registry on this machine.
#[derive(Debug)]
pub struct LocalRegistryImageStore {
    registry_host: String,
    warned: AtomicBool,
    warnings: Mutex<Vec<String>>,
}

impl LocalRegistryImageStore {
    /// A store for `registry_host` (an authority: `host[:port]`, no scheme or path).
    pub fn new(registry_host: &str) -> StoreResult<Self> {
        Ok(LocalRegistryImageStore {
            registry_host: normalize_registry_host(registry_host)?,
            warned: AtomicBool::new(false),
            warnings: Mutex::new(Vec::new()),
        })
    }

    /// Builds the store from its config table (`registry_host`); the error names every problem, each
    /// naming the store.
    pub fn from_config(impl_name: &str, table: &ConfigTable) -> Result<Self, SettingsProblems> {
        let mut problems = config_table::key_problems(impl_name, table, &CONFIG_KEYS, &[]);
        let host = problems
            .keep(config_table::opt_string(impl_name, table, "registry_host"))
            .flatten();
        let store = problems.keep(
            Self::new(host.as_deref().unwrap_or(DEFAULT_REGISTRY_HOST))
                .map_err(|e| StoreError::Config(format!("{CLASS}: {e}"))),
        );
        match store {
            Some(store) => problems.into_result(store),
            None => Err(problems),
        }
    }

    pub fn registry_host(&self) -> &str {
        &self.registry_host
    }

    /// The loopback address of the registry, when it is on this machine.
    fn loopback_addr(&self) -> Option<SocketAddr> {
        let (host, port) = match self.registry_host.rsplit_once(':') {
            Some((h, p)) => (h, p.parse::<u16>().ok()?),
            None => (self.registry_host.as_str(), 80),
        };
        if !matches!(host, "localhost" | "127.0.0.1" | "[::1]") {
            return None;
        }
        (host.trim_matches(['[', ']']), port)
            .to_socket_addrs()
            .ok()?
            .find(|a| a.ip().is_loopback())
    }
}

/// Whether something at `addr` answers `GET /v2/` with 200 or 401, as a registry does.
pub fn registry_answers(addr: SocketAddr, host: &str) -> bool {
    let timeout = Duration::from_millis(500);
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, timeout) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let request = format!("GET /v2/ HTTP/1.0\r\nHost: {host}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    let Ok(n) = stream.read(&mut head) else {
        return false;
    };
    let status = String::from_utf8_lossy(&head[..n]);
    status.starts_with("HTTP/1.")
        && (status.get(9..12) == Some("200") || status.get(9..12) == Some("401"))
}

/// Trimmed, lowercased, Docker Hub's aliases folded to `docker.io`; refuses a scheme, a path or nothing.
pub fn normalize_registry_host(written: &str) -> StoreResult<String> {
    let host = written.trim().to_ascii_lowercase();
    if host.is_empty() {
        return Err(StoreError::Config(
            "registry_host must name a registry (host[:port]), got an empty string".into(),
        ));
    }
    if host.contains("://") || host.contains('/') {
        return Err(StoreError::Config(format!(
            "registry_host must be an authority without a scheme or path (host[:port], such as localhost:5000), got '{}'",
            written.trim()
        )));
    }
    Ok(fold_docker_hub(&host))
}

fn fold_docker_hub(host: &str) -> String {
    match host {
        "docker.io" | "index.docker.io" | "registry-1.docker.io" => DOCKER_HUB.to_string(),
        other => other.to_string(),
    }
}

/// The registry a reference names: its first component when that is `localhost` or holds `.` or `:`,
/// else Docker Hub.
pub fn registry_of(image_ref: &str) -> String {
    match image_ref.split_once('/') {
        Some((first, _)) if first == "localhost" || first.contains(['.', ':']) => {
            fold_docker_hub(&first.to_ascii_lowercase())
        }
        _ => DOCKER_HUB.to_string(),
    }
}

impl ImageStore for LocalRegistryImageStore {
    fn image_ref(&self, repository: &str, tag: &str) -> StoreResult<String> {
        if repository.is_empty() || tag.is_empty() {
            return Err(StoreError::InvalidValue(format!(
                "an image reference needs a repository and a tag, got '{repository}:{tag}'"
            )));
        }
        Ok(format!("{}/{repository}:{tag}", self.registry_host))
    }

    fn ensure_repository(&self, _repository: &str) -> StoreResult<()> {
        let reachable = self
            .loopback_addr()
            .is_none_or(|addr| registry_answers(addr, &self.registry_host));
        if !reachable && !self.warned.swap(true, Ordering::Relaxed) {
            let port = self.loopback_addr().map_or(5000, |a| a.port());
            let warning = format!(
                "no registry answers at {host}; pushes will fail until one runs there \
                 (start one with: docker run -d --restart unless-stopped -p 127.0.0.1:{port}:5000 \
                 --name agentenv-registry registry:2)",
                host = self.registry_host
            );
            self.warnings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(warning);
        }
        Ok(())
    }

    /// The warning that no registry answers, once, after the first `ensure_repository` that found none.
    fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn owns(&self, image_ref: &str) -> StoreResult<bool> {
        Ok(registry_of(image_ref) == self.registry_host)
    }

    fn auth(&self, _image_ref: &str) -> StoreResult<Option<RegistryAuth>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_and_hosts_normalize() {
        let store = LocalRegistryImageStore::new(DEFAULT_REGISTRY_HOST).unwrap();
        assert_eq!(
            store.image_ref("repo", "v1").unwrap(),
            "localhost:5000/repo:v1"
        );
        assert!(store.owns("localhost:5000/repo:v1").unwrap());
        assert!(!store
            .owns("foreign-registry.example/library/alpine:latest")
            .unwrap());
        assert!(!store.owns("alpine:latest").unwrap());
        assert_eq!(store.auth("localhost:5000/repo:v1").unwrap(), None);
        let hub = LocalRegistryImageStore::new(" Index.Docker.IO ").unwrap();
        assert_eq!(hub.registry_host(), "docker.io");
        assert!(hub.owns("library/alpine:3").unwrap());
        assert!(hub.owns("registry-1.docker.io/library/alpine:3").unwrap());
        assert_eq!(
            normalize_registry_host("https://x")
                .unwrap_err()
                .to_string(),
            "registry_host must be an authority without a scheme or path (host[:port], such as localhost:5000), got 'https://x'"
        );
        assert_eq!(
            normalize_registry_host("  ").unwrap_err().to_string(),
            "registry_host must name a registry (host[:port]), got an empty string"
        );
    }

    #[test]
    fn a_registry_that_does_not_answer_is_one_warning_for_the_caller() {
        // A loopback port nothing listens on: bind one, then let it go.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let store = LocalRegistryImageStore::new(&format!("127.0.0.1:{port}")).unwrap();
        assert!(store.take_warnings().is_empty());
        store.ensure_repository("repo").unwrap();
        store.ensure_repository("repo").unwrap();
        assert_eq!(
            store.take_warnings(),
            vec![format!(
                "no registry answers at 127.0.0.1:{port}; pushes will fail until one runs there \
                 (start one with: docker run -d --restart unless-stopped -p 127.0.0.1:{port}:5000 \
                 --name agentenv-registry registry:2)"
            )]
        );
        assert!(store.take_warnings().is_empty(), "taken once, gone");
    }
}

//! The per-user transfer CA: an ECDSA P-256 authority kept under `<state root>/tls/`, valid five years and
//! renewed 30 days before it ends, name-constrained to the local names and the loopback and private
//! networks so that it can vouch for nothing on the internet. It is never installed in a trust store;
//! clients of the grant server (and the containers agent-env starts) are handed its certificate.
//!
//! Files: `ca.key.pem` (private, 0600), `ca.json` (when it ends), `trust/agent-env/ca.pem` (public), and
//! `trust/agent-env/ca-bundle.pem`: this machine's public roots followed by the CA, for a client that must
//! reach both the grant server and public HTTPS with one bundle.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CidrSubnet, DistinguishedName, DnType, GeneralSubtree,
    IsCa, Issuer, KeyPair, KeyUsagePurpose, NameConstraints, SanType,
};
use time::{Duration, OffsetDateTime};

use agent_env_store::error::{StoreError, StoreResult};

/// How long the CA lives.
const CA_LIFETIME: Duration = Duration::days(5 * 365);
/// How long before its end it is replaced.
const RENEW_BEFORE: Duration = Duration::days(30);
/// How long a server certificate lives (a grant server lives as long as its process).
const LEAF_LIFETIME: Duration = Duration::days(30);

/// The CA, loaded or made.
pub struct LocalCa {
    key: KeyPair,
    not_after: OffsetDateTime,
    /// Its certificate, PEM: what a client trusts.
    pub cert_pem: String,
}

/// A server certificate and its key (PKCS#8), DER.
pub struct ServerIdentity {
    pub cert_der: Vec<u8>,
    pub key_der: Vec<u8>,
}

fn io_error(context: impl std::fmt::Display, err: &dyn std::fmt::Display) -> StoreError {
    StoreError::Io {
        message: format!("the local transfer CA: {context}: {err}"),
        raw_os_error: None,
    }
}

/// The CA's parameters: the same every time for the same end date, so a loaded key signs as the stored
/// certificate's subject.
fn ca_params(not_after: OffsetDateTime) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "agent-env local transfer CA");
    name.push(DnType::OrganizationName, "agent-env");
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.not_before = not_after - CA_LIFETIME;
    params.not_after = not_after;
    params.name_constraints = Some(NameConstraints {
        permitted_subtrees: vec![
            GeneralSubtree::DnsName("localhost".into()),
            GeneralSubtree::DnsName("host.docker.internal".into()),
            GeneralSubtree::IpAddress(CidrSubnet::from_v4_prefix([127, 0, 0, 0], 8)),
            GeneralSubtree::IpAddress(CidrSubnet::from_v4_prefix([10, 0, 0, 0], 8)),
            GeneralSubtree::IpAddress(CidrSubnet::from_v4_prefix([172, 16, 0, 0], 12)),
            GeneralSubtree::IpAddress(CidrSubnet::from_v4_prefix([192, 168, 0, 0], 16)),
            GeneralSubtree::IpAddress(CidrSubnet::from_addr_prefix(
                std::net::IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
                128,
            )),
            GeneralSubtree::IpAddress(CidrSubnet::from_addr_prefix(
                std::net::IpAddr::V6(std::net::Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0)),
                7,
            )),
        ],
        excluded_subtrees: Vec::new(),
    });
    params
}

/// `<tls dir>/trust/agent-env/ca.pem`: the public certificate.
pub fn public_cert_path(tls_dir: &Path) -> PathBuf {
    tls_dir.join("trust").join("agent-env").join("ca.pem")
}

/// `<tls dir>/trust/agent-env/ca-bundle.pem`: the public roots and the CA.
pub fn bundle_path(tls_dir: &Path) -> PathBuf {
    tls_dir
        .join("trust")
        .join("agent-env")
        .join("ca-bundle.pem")
}

/// Where Linux distributions and macOS keep the public roots, first found wins.
const SYSTEM_BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/etc/ssl/ca-bundle.pem",
];

/// Writes the bundle: the system's public roots (none when it has no bundle file), then the CA.
fn write_bundle(tls_dir: &Path, cert_pem: &str) -> StoreResult<()> {
    let mut text = SYSTEM_BUNDLES
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(cert_pem);
    let path = bundle_path(tls_dir);
    write_private(&path, &text)
}

impl LocalCa {
    /// The CA under `tls_dir`, made (or remade, when it ends within 30 days) as needed.
    pub fn load_or_create(tls_dir: &Path) -> StoreResult<LocalCa> {
        let key_path = tls_dir.join("ca.key.pem");
        let meta_path = tls_dir.join("ca.json");
        let cert_path = public_cert_path(tls_dir);
        let now = OffsetDateTime::now_utc();
        if let (Ok(key_pem), Ok(meta), Ok(cert_pem)) = (
            std::fs::read_to_string(&key_path),
            std::fs::read_to_string(&meta_path),
            std::fs::read_to_string(&cert_path),
        ) {
            let not_after = serde_json::from_str::<serde_json::Value>(&meta)
                .ok()
                .and_then(|m| m.get("not_after").and_then(serde_json::Value::as_i64))
                .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok());
            if let (Some(not_after), Ok(key)) = (not_after, KeyPair::from_pem(&key_pem)) {
                if not_after - RENEW_BEFORE > now {
                    if !bundle_path(tls_dir).is_file() {
                        write_bundle(tls_dir, &cert_pem)?;
                    }
                    return Ok(LocalCa {
                        key,
                        not_after,
                        cert_pem,
                    });
                }
            }
        }
        Self::create(tls_dir, now)
    }

    fn create(tls_dir: &Path, now: OffsetDateTime) -> StoreResult<LocalCa> {
        let key = KeyPair::generate().map_err(|e| io_error("making a key", &e))?;
        // Whole seconds, so that the end date read back from ca.json is exactly the certificate's.
        let not_after = OffsetDateTime::from_unix_timestamp((now + CA_LIFETIME).unix_timestamp())
            .map_err(|e| io_error("computing its end", &e))?;
        let cert = ca_params(not_after)
            .self_signed(&key)
            .map_err(|e| io_error("signing its certificate", &e))?;
        let cert_pem = cert.pem();
        super::super::super::private_dir::ensure_private_dir(tls_dir)?;
        write_private(&tls_dir.join("ca.key.pem"), &key.serialize_pem())?;
        let cert_path = public_cert_path(tls_dir);
        if let Some(parent) = cert_path.parent() {
            super::super::super::private_dir::create_private_dir_all(parent)
                .map_err(|e| io_error(format!("creating {}", parent.display()), &e))?;
        }
        write_private(&cert_path, &cert_pem)?;
        write_bundle(tls_dir, &cert_pem)?;
        let meta = serde_json::json!({"not_after": not_after.unix_timestamp()}).to_string();
        write_private(&tls_dir.join("ca.json"), &meta)?;
        Ok(LocalCa {
            key,
            not_after,
            cert_pem,
        })
    }

    /// A server certificate for these names and addresses, signed by the CA.
    pub fn server_identity(&self, names: &[String]) -> StoreResult<ServerIdentity> {
        let key = KeyPair::generate().map_err(|e| io_error("making a server key", &e))?;
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "agent-env grant server");
        params.distinguished_name = dn;
        let now = OffsetDateTime::now_utc();
        params.not_before = now - Duration::hours(1);
        params.not_after = (now + LEAF_LIFETIME).min(self.not_after);
        params.subject_alt_names = names
            .iter()
            .map(|n| match n.parse::<std::net::IpAddr>() {
                Ok(ip) => Ok(SanType::IpAddress(ip)),
                Err(_) => n
                    .clone()
                    .try_into()
                    .map(SanType::DnsName)
                    .map_err(|e| io_error(format!("the name '{n}'"), &e)),
            })
            .collect::<StoreResult<_>>()?;
        let issuer = Issuer::new(ca_params(self.not_after), &self.key);
        let cert = params
            .signed_by(&key, &issuer)
            .map_err(|e| io_error("signing the server certificate", &e))?;
        Ok(ServerIdentity {
            cert_der: cert.der().to_vec(),
            key_der: key.serialize_der(),
        })
    }
}

/// Writes `text` to `path`, a file of the user's alone (0600) whatever the umask.
fn write_private(path: &Path, text: &str) -> StoreResult<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| io_error(format!("writing {}", path.display()), &e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| io_error(format!("writing {}", path.display()), &e))
}

//! Grant tokens: `v1.<base64url(claims JSON)>.<base64url(HMAC-SHA256)>`, the MAC over `v1.<claims>` with a
//! key that lives only in this process's memory, so a token outlives neither its expiry nor the process.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What a grant allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// `get`, `put` or `post`.
    pub op: String,
    /// The store: the first 16 hex digits of the sha256 of its resolved root.
    pub s: String,
    /// Expiry, in seconds since the epoch.
    pub exp: i64,
    /// The grant's own id (16 hex digits).
    pub id: String,
    /// The object key (get, put).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<String>,
    /// The key prefix, ending `/` or empty (post).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
    /// The most bytes one upload may carry (put, post).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    /// The content type the upload must declare (put).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ct: Option<String>,
}

/// The process's signing key.
pub struct TokenKey([u8; 32]);

impl TokenKey {
    /// A fresh random key; `None` when the system has no randomness to give.
    pub fn random() -> Option<TokenKey> {
        let mut key = [0u8; 32];
        getrandom::getrandom(&mut key).ok()?;
        Some(TokenKey(key))
    }

    fn mac(&self, message: &[u8]) -> [u8; 32] {
        // HMAC-SHA256 by its definition (RFC 2104), with a 32-byte key (shorter than the block).
        let mut inner_pad = [0x36u8; 64];
        let mut outer_pad = [0x5cu8; 64];
        for (i, byte) in self.0.iter().enumerate() {
            inner_pad[i] ^= byte;
            outer_pad[i] ^= byte;
        }
        let inner = Sha256::new()
            .chain_update(inner_pad)
            .chain_update(message)
            .finalize();
        Sha256::new()
            .chain_update(outer_pad)
            .chain_update(inner)
            .finalize()
            .into()
    }

    /// The token for `claims`.
    pub fn sign(&self, claims: &Claims) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap_or_default());
        let signed = format!("v1.{payload}");
        let mac = URL_SAFE_NO_PAD.encode(self.mac(signed.as_bytes()));
        format!("{signed}.{mac}")
    }

    /// The claims of a token this key signed and that has not expired at `now`; `None` for anything
    /// else (forged, altered, expired, malformed).
    pub fn verify(&self, token: &str, now: i64) -> Option<Claims> {
        let (signed, mac) = token.rsplit_once('.')?;
        let payload = signed.strip_prefix("v1.")?;
        let given = URL_SAFE_NO_PAD.decode(mac).ok()?;
        let expected = self.mac(signed.as_bytes());
        // Compared in constant time: every byte is looked at whatever the first difference.
        if given.len() != expected.len()
            || given
                .iter()
                .zip(expected.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                != 0
        {
            return None;
        }
        let claims: Claims = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (claims.exp > now).then_some(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims {
            op: "get".into(),
            s: "0123456789abcdef".into(),
            exp,
            id: "fedcba9876543210".into(),
            k: Some("a/b.txt".into()),
            p: None,
            max: None,
            ct: None,
        }
    }

    #[test]
    fn tokens_verify_until_they_expire_and_never_once_altered() {
        let key = TokenKey::random().unwrap();
        let token = key.sign(&claims(2_000));
        assert!(token.starts_with("v1."));
        assert_eq!(key.verify(&token, 1_999), Some(claims(2_000)));
        assert_eq!(key.verify(&token, 2_000), None, "expired");
        let other = TokenKey::random().unwrap();
        assert_eq!(other.verify(&token, 1_000), None, "another process's key");
        // The same MAC over claims changed from get to put is refused.
        let mac = token.rsplit_once('.').unwrap().1;
        let mut altered = claims(2_000);
        altered.op = "put".into();
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&altered).unwrap());
        assert_eq!(key.verify(&format!("v1.{payload}.{mac}"), 1_000), None);
        assert_eq!(key.verify("v1.x", 1_000), None);
    }

    #[test]
    fn the_mac_is_hmac_sha256() {
        // HMAC-SHA256 of "Hi There" under a 32-byte key of 0x0b, as Python's hmac module computes it.
        let key = TokenKey([0x0b; 32]);
        assert_eq!(
            hex::encode(key.mac(b"Hi There")),
            "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7"
        );
    }
}

//! DPoP (RFC 9449, MCP SEP-1932): proof of possession of a key the client holds, so that a
//! stolen access token is useless without it. With [`OAuthConfig::with_dpop`]
//! (feature `oauth-dpop`) the authorizer generates one P-256 key for its lifetime and
//!
//! | where | what is sent |
//! |---|---|
//! | every token request (RFC 9449 §5) | a `DPoP` proof for `POST` and the token endpoint; the token is then bound to the key (`cnf.jkt`, its [thumbprint](DpopKey::thumbprint)) |
//! | every MCP request (§7) | `Authorization: DPoP <token>` and a fresh proof for that method and URL with `ath`, the token's hash |
//! | a `use_dpop_nonce` answer (400 at the token endpoint, 401 at the MCP server; §8, §9) | the same request once more, its proof carrying the `DPoP-Nonce` the server sent; later proofs to that server carry it too |
//!
//! A nonce longer than [`MAX_NONCE_LEN`] bytes or not visible ASCII is ignored. The private
//! key never leaves this module: `Debug` shows the thumbprint only.
//!
//! [`OAuthConfig::with_dpop`]: super::OAuthConfig::with_dpop

use std::sync::Mutex;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

use super::OAuthError;

/// The longest `DPoP-Nonce` kept (bytes).
pub const MAX_NONCE_LEN: usize = 512;

/// The `typ` of a proof.
pub const PROOF_TYPE: &str = "dpop+jwt";

/// A DPoP key pair (ES256) and the nonces servers asked its proofs to carry.
pub struct DpopKey {
    #[cfg(feature = "oauth-dpop")]
    key: p256::ecdsa::SigningKey,
    /// The public key's coordinates, base64url.
    x: String,
    y: String,
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

/// Where a nonce is for: the authorization server (token requests) or the MCP server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonceFor {
    /// The authorization server's token endpoint (RFC 9449 §8).
    AuthorizationServer,
    /// The MCP server, the protected resource (RFC 9449 §9).
    Resource,
}

impl DpopKey {
    /// A fresh P-256 key from the operating system's random source.
    #[cfg(feature = "oauth-dpop")]
    pub fn generate() -> Result<DpopKey, OAuthError> {
        // A uniformly random 32-byte string is a valid scalar but with probability ~2^-32;
        // the bound keeps a broken random source from looping forever.
        for _ in 0..16 {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| OAuthError::Unsupported(format!("no random source: {e}")))?;
            if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&bytes) {
                let point = key.verifying_key().to_encoded_point(false);
                let (Some(x), Some(y)) = (point.x(), point.y()) else {
                    continue;
                };
                return Ok(DpopKey {
                    x: URL_SAFE_NO_PAD.encode(x),
                    y: URL_SAFE_NO_PAD.encode(y),
                    key,
                    as_nonce: Mutex::new(None),
                    rs_nonce: Mutex::new(None),
                });
            }
        }
        Err(OAuthError::Unsupported("cannot generate a DPoP key".into()))
    }

    /// Without the `oauth-dpop` feature: refused.
    #[cfg(not(feature = "oauth-dpop"))]
    pub fn generate() -> Result<DpopKey, OAuthError> {
        Err(OAuthError::Unsupported(
            "DPoP needs the `oauth-dpop` feature".into(),
        ))
    }

    /// The public key as a JWK (RFC 7517: `kty`, `crv`, `x`, `y`; no private part).
    pub fn jwk(&self) -> serde_json::Value {
        serde_json::json!({"kty": "EC", "crv": "P-256", "x": self.x, "y": self.y})
    }

    /// The JWK SHA-256 thumbprint (RFC 7638), base64url: what a bound token's `cnf.jkt`
    /// holds.
    pub fn thumbprint(&self) -> String {
        // RFC 7638 §3.2: the required members only, in lexicographic order, no spaces.
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            self.x, self.y
        );
        URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
    }

    /// The nonce the server `to` asked for last, if any.
    pub fn nonce(&self, to: NonceFor) -> Option<String> {
        self.slot(to).lock().ok().and_then(|n| n.clone())
    }

    /// Keeps the `DPoP-Nonce` the server `to` sent; `false` (and nothing kept) when it is
    /// too long or not visible ASCII, or when it is the one already kept (a retry with it
    /// would be refused again).
    pub fn set_nonce(&self, to: NonceFor, nonce: &str) -> bool {
        let valid = !nonce.is_empty()
            && nonce.len() <= MAX_NONCE_LEN
            && nonce.bytes().all(|b| b.is_ascii_graphic());
        if !valid {
            return false;
        }
        let Ok(mut slot) = self.slot(to).lock() else {
            return false;
        };
        if slot.as_deref() == Some(nonce) {
            return false;
        }
        *slot = Some(nonce.to_owned());
        true
    }

    fn slot(&self, to: NonceFor) -> &Mutex<Option<String>> {
        match to {
            NonceFor::AuthorizationServer => &self.as_nonce,
            NonceFor::Resource => &self.rs_nonce,
        }
    }

    /// A fresh proof (RFC 9449 §4.2) for a `method` request to `url` (its query and
    /// fragment are left out of `htu`), with `ath` when it presents `access_token`, and the
    /// nonce kept for `to`.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        to: NonceFor,
    ) -> Result<String, OAuthError> {
        let header = serde_json::json!({"typ": PROOF_TYPE, "alg": "ES256", "jwk": self.jwk()});
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut claims = serde_json::json!({
            "jti": super::pkce::random_token()?,
            "htm": method,
            "htu": htu(url),
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(Sha256::digest(token.as_bytes()))
                .into();
        }
        if let Some(nonce) = self.nonce(to) {
            claims["nonce"] = nonce.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self.sign(signing_input.as_bytes())?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature)
        ))
    }

    /// ES256: the raw `r || s` signature (RFC 7518 §3.4).
    #[cfg(feature = "oauth-dpop")]
    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, OAuthError> {
        use p256::ecdsa::signature::Signer;
        let signature: p256::ecdsa::Signature = self
            .key
            .try_sign(input)
            .map_err(|e| OAuthError::Unsupported(format!("cannot sign the DPoP proof: {e}")))?;
        Ok(signature.to_bytes().to_vec())
    }

    #[cfg(not(feature = "oauth-dpop"))]
    fn sign(&self, _: &[u8]) -> Result<Vec<u8>, OAuthError> {
        Err(OAuthError::Unsupported(
            "DPoP needs the `oauth-dpop` feature".into(),
        ))
    }
}

/// The `htu` of a request to `url`: the URL without its query and fragment (RFC 9449 §4.2).
pub fn htu(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

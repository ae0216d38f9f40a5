//! PKCE (RFC 7636) with S256, the one method MCP clients use, and the `state` value.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

use super::{OAuthError, Secret};

/// The code challenge method sent: S256.
pub const METHOD: &str = "S256";

/// A code verifier and its S256 challenge.
#[derive(Debug)]
pub struct Pkce {
    verifier: Secret,
    challenge: String,
}

impl Pkce {
    /// A fresh verifier: 32 random bytes, base64url (43 characters, RFC 7636 §4.1).
    pub fn generate() -> Result<Pkce, OAuthError> {
        Ok(Pkce::from_verifier(random_token()?))
    }

    /// The pair for a given verifier.
    pub fn from_verifier(verifier: String) -> Pkce {
        let challenge = s256(&verifier);
        Pkce {
            verifier: Secret(verifier),
            challenge,
        }
    }

    /// The verifier (sent to the token endpoint).
    pub fn verifier(&self) -> &Secret {
        &self.verifier
    }

    /// The challenge (sent to the authorization endpoint).
    pub fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// `BASE64URL(SHA256(verifier))`, unpadded (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 32 random bytes, base64url: a PKCE verifier or a `state` value.
pub fn random_token() -> Result<String, OAuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| OAuthError::Random(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

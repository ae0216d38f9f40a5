//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): a
//! short-lived JWT naming the client (`iss`, `sub`) and the authorization server (`aud`),
//! signed with the client's key.

use super::registration::AssertionKey;
use super::OAuthError;

/// The `client_assertion_type` of a JWT assertion.
pub(crate) const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid.
#[cfg(feature = "oauth-jwt")]
const LIFETIME_SECS: u64 = 300;

/// A signed assertion for `client_id` at the authorization server `audience` (its issuer).
#[cfg(feature = "oauth-jwt")]
pub(crate) fn sign(
    key: &AssertionKey,
    client_id: &str,
    audience: &str,
) -> Result<String, OAuthError> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};

    let unsupported = || {
        OAuthError::Unsupported(format!(
            "private_key_jwt with {:?} (ES256, ES384 and EdDSA are)",
            key.algorithm
        ))
    };
    let algorithm: Algorithm = key.algorithm.parse().map_err(|_| unsupported())?;
    let pem = key.pem.expose().as_bytes();
    let encoding = match algorithm {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
        _ => return Err(unsupported()),
    }
    .map_err(|e| OAuthError::Unsupported(format!("the private key cannot be read: {e}")))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + LIFETIME_SECS,
        "jti": super::pkce::random_token()?,
    });
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &encoding)
        .map_err(|e| OAuthError::Unsupported(format!("cannot sign the client assertion: {e}")))
}

/// Without the `oauth-jwt` feature: refused.
#[cfg(not(feature = "oauth-jwt"))]
pub(crate) fn sign(_: &AssertionKey, _: &str, _: &str) -> Result<String, OAuthError> {
    Err(OAuthError::Unsupported(
        "private_key_jwt needs the `oauth-jwt` feature".into(),
    ))
}

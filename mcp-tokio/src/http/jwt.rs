//! JWT access tokens validated locally (feature `jwt`, with the `jsonwebtoken` crate's pure
//! Rust crypto): an [`Authorizer`] for tokens an authorization server signs.
//!
//! A token is accepted when all of this holds:
//!
//! | check | rule | else (401 `invalid_token`) |
//! |---|---|---|
//! | size | at most [`Auth::max_token`](super::auth::Auth::max_token) bytes | "exceeds" |
//! | form | three base64url parts, a JSON header naming a known `alg` (`none` is not one) | "malformed" |
//! | algorithm | in [`JwtConfig::algorithms`] (default: the asymmetric ones) and of the key's family (an HMAC secret never verifies an RS256/ES256 token, an RSA key never an HS256 one) | "not accepted" |
//! | key | the key named by `kid`; without `kid`, the only key there is | "unknown key" |
//! | signature | verifies with that key | "signature" |
//! | `typ` | when [`JwtConfig::token_type`] is set (e.g. `at+jwt`, RFC 9068), equal to it | "type" |
//! | `iss` | equal to [`JwtConfig::issuer`] | "issuer" |
//! | `aud` | one of its values names [`JwtConfig::audiences`] (default: the resource, RFC 8707), scheme and host compared case-insensitively, a trailing `/` ignored | "audience" |
//! | `exp` | present, not past (minus the leeway) | "expired" |
//! | `nbf` | when present, not in the future (plus the leeway) | "not yet valid" |
//! | `sub` | present | "missing claim" |
//!
//! The leeway ([`JwtConfig::leeway`], default 60 s) is bounded by [`MAX_LEEWAY`] (5 minutes).
//! Scopes come from `scope` (space-separated, RFC 8693/9068) and `scp` (an array, or a
//! space-separated string); the [`Principal`]'s `client_id` from `client_id` or `azp`.
//!
//! Keys: PEM public keys (RSA, EC P-256/P-384, Ed25519), HMAC secrets (at least 32 bytes), or
//! a JWK set (`{"keys": [...]}`, the IdP's `jwks_uri` document saved to a file), several at
//! once, told apart by `kid` so that an IdP can rotate keys: publish the new key next to the
//! old one, then retire the old one. [`JwtValidator::set_keys`] swaps the set at run time;
//! [`JwtValidator::reload_from`] re-reads a JWK set file when a token names a key not yet
//! known (at most once per interval).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::Value;

use super::auth::{canonical_uri, AuthFuture, Authorizer, ConfigError, Principal, Rejection};

pub use jsonwebtoken::Algorithm;

/// The largest leeway allowed for `exp` and `nbf`.
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// The default leeway for `exp` and `nbf`.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// The shortest HMAC secret accepted (bytes): as long as the SHA-256 output (RFC 7518 §3.2).
pub const MIN_SECRET: usize = 32;

/// The default interval between re-reads of a JWK set file ([`JwtValidator::reload_from`]).
pub const DEFAULT_RELOAD: Duration = Duration::from_secs(30);

const RSA: [Algorithm; 6] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];
const HMAC: [Algorithm; 3] = [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512];

/// What a validator checks besides the signature.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct JwtConfig {
    /// The expected `iss`: the authorization server's issuer identifier.
    pub issuer: String,
    /// Accepted `aud` values: the resource's canonical URI (what clients send as RFC 8707
    /// `resource`), and any other name the authorization server uses for this server.
    pub audiences: Vec<String>,
    /// Clock skew allowed for `exp` and `nbf` (at most [`MAX_LEEWAY`]).
    pub leeway: Duration,
    /// Algorithms accepted. Default: RS256/384/512, PS256/384/512, ES256/384, EdDSA. HMAC
    /// algorithms (HS256/384/512) must be listed here to be used.
    pub algorithms: Vec<Algorithm>,
    /// The `typ` header a token must carry (compared case-insensitively, an
    /// `application/` prefix ignored), e.g. `at+jwt` (RFC 9068) so that ID tokens are not
    /// taken for access tokens; `None` (default) accepts any.
    pub token_type: Option<String>,
}

impl JwtConfig {
    /// Tokens from `issuer` for `audience` (the resource's canonical URI), the default
    /// leeway and algorithms.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtConfig {
            issuer: issuer.into(),
            audiences: vec![audience.into()],
            leeway: DEFAULT_LEEWAY,
            algorithms: [
                &RSA[..],
                &[Algorithm::ES256, Algorithm::ES384, Algorithm::EdDSA],
            ]
            .concat(),
            token_type: None,
        }
    }
}

/// The algorithms a key of this kind verifies.
fn family(alg: Algorithm) -> &'static [Algorithm] {
    match alg {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => &HMAC,
        Algorithm::ES256 => &[Algorithm::ES256],
        Algorithm::ES384 => &[Algorithm::ES384],
        Algorithm::EdDSA => &[Algorithm::EdDSA],
        _ => &RSA,
    }
}

struct Key {
    kid: Option<String>,
    key: DecodingKey,
    algorithms: &'static [Algorithm],
}

/// Verification keys, by `kid`.
#[derive(Default)]
pub struct KeySet {
    keys: Vec<Key>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.keys.iter().map(|k| (&k.kid, k.algorithms)))
            .finish()
    }
}

fn err(what: impl std::fmt::Display) -> ConfigError {
    ConfigError(what.to_string())
}

impl KeySet {
    /// No keys.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key ids.
    pub fn kids(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().filter_map(|k| k.kid.as_deref())
    }

    fn push(
        &mut self,
        kid: Option<&str>,
        key: DecodingKey,
        algorithms: &'static [Algorithm],
    ) -> Result<(), ConfigError> {
        if self.keys.iter().any(|k| k.kid.as_deref() == kid) {
            return Err(match kid {
                Some(kid) => err(format!("two keys have the kid {kid:?}")),
                None => err("two keys have no kid: name them"),
            });
        }
        self.keys.push(Key {
            kid: kid.map(Into::into),
            key,
            algorithms,
        });
        Ok(())
    }

    /// Adds a PEM public key (`-----BEGIN PUBLIC KEY-----`: RSA, EC P-256 or P-384,
    /// Ed25519; or `-----BEGIN RSA PUBLIC KEY-----`) that verifies the tokens naming `kid`
    /// (or those naming none, when it is the only key). The algorithms follow from the key:
    /// RS*/PS* for RSA, ES256 or ES384 by curve, EdDSA.
    pub fn add_pem(&mut self, kid: Option<&str>, pem: &[u8]) -> Result<(), ConfigError> {
        if pem.windows(11).any(|w| w == b"PRIVATE KEY") {
            return Err(err("a private key: the server needs the public key only"));
        }
        if let Ok(key) = DecodingKey::from_rsa_pem(pem) {
            return self.push(kid, key, &RSA);
        }
        if let Ok(key) = DecodingKey::from_ec_pem(pem) {
            // The uncompressed point: 65 bytes on P-256, 97 on P-384.
            let alg = match key.as_bytes().len() {
                65 => Algorithm::ES256,
                97 => Algorithm::ES384,
                n => {
                    return Err(err(format!(
                        "an EC key of {n} bytes: only P-256 and P-384 are supported"
                    )))
                }
            };
            return self.push(kid, key, family(alg));
        }
        if let Ok(key) = DecodingKey::from_ed_pem(pem) {
            return self.push(kid, key, &[Algorithm::EdDSA]);
        }
        Err(err(
            "not a PEM public key (RSA, EC P-256/P-384 or Ed25519; private keys are not accepted)",
        ))
    }

    /// Adds an HMAC secret (at least [`MIN_SECRET`] bytes) for HS256/384/512 tokens. Those
    /// algorithms must also be listed in [`JwtConfig::algorithms`].
    pub fn add_secret(&mut self, kid: Option<&str>, secret: &[u8]) -> Result<(), ConfigError> {
        if secret.len() < MIN_SECRET {
            return Err(err(format!(
                "an HMAC secret needs at least {MIN_SECRET} bytes, this one has {}",
                secret.len()
            )));
        }
        self.push(kid, DecodingKey::from_secret(secret), &HMAC)
    }

    /// Adds the signature keys of a JWK set (`{"keys": [...]}`); returns how many. Keys for
    /// encryption (`"use": "enc"`) and of unsupported types or curves are skipped (and
    /// logged); every key taken needs a `kid` when the set has more than one. A key's `alg`,
    /// when given, restricts it to that algorithm.
    pub fn add_jwks(&mut self, json: &str) -> Result<usize, ConfigError> {
        let doc: Value = serde_json::from_str(json).map_err(|e| err(format!("JWK set: {e}")))?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| err("JWK set: no \"keys\" array"))?;
        let mut added = 0;
        for raw in keys {
            let jwk: Jwk = match serde_json::from_value(raw.clone()) {
                Ok(j) => j,
                Err(e) => {
                    tracing::warn!(error = %e, "JWK set: a key of an unsupported type is skipped");
                    continue;
                }
            };
            let kid = jwk.common.key_id.as_deref();
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let by_type: &'static [Algorithm] = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => &RSA,
                AlgorithmParameters::EllipticCurve(p) => match p.curve {
                    EllipticCurve::P256 => family(Algorithm::ES256),
                    EllipticCurve::P384 => family(Algorithm::ES384),
                    _ => {
                        tracing::warn!(
                            ?kid,
                            "JWK set: an EC key on an unsupported curve is skipped"
                        );
                        continue;
                    }
                },
                AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
                    &[Algorithm::EdDSA]
                }
                AlgorithmParameters::OctetKeyPair(_) => {
                    tracing::warn!(?kid, "JWK set: an OKP key that is not Ed25519 is skipped");
                    continue;
                }
                AlgorithmParameters::OctetKey(_) => &HMAC,
            };
            let algorithms = match jwk.common.key_algorithm {
                None => by_type,
                Some(alg) => match key_algorithm(alg).filter(|a| by_type.contains(a)) {
                    Some(a) => family_one(a),
                    None => {
                        tracing::warn!(?kid, ?alg, "JWK set: a key whose alg does not fit it (or is not a signature algorithm) is skipped");
                        continue;
                    }
                },
            };
            let key = DecodingKey::from_jwk(&jwk).map_err(|e| err(format!("JWK {kid:?}: {e}")))?;
            if algorithms == HMAC && key.as_bytes().len() < MIN_SECRET {
                return Err(err(format!(
                    "JWK {kid:?}: an HMAC secret needs at least {MIN_SECRET} bytes"
                )));
            }
            if kid.is_none() && keys.len() > 1 {
                return Err(err("JWK set: a set of several keys needs a kid on each"));
            }
            self.push(kid, key, algorithms)?;
            added += 1;
        }
        if added == 0 {
            return Err(err("JWK set: no usable signature key"));
        }
        Ok(added)
    }

    /// A set from a file: a JWK set (JSON) or one PEM public key (used for tokens naming no
    /// `kid`, or naming `pem_kid`).
    pub fn from_file(
        path: impl AsRef<std::path::Path>,
        pem_kid: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| err(format!("{}: {e}", path.display())))?;
        Self::from_bytes(&bytes, pem_kid).map_err(|e| err(format!("{}: {}", path.display(), e.0)))
    }

    fn from_bytes(bytes: &[u8], pem_kid: Option<&str>) -> Result<Self, ConfigError> {
        let mut set = KeySet::new();
        let text = std::str::from_utf8(bytes).map_err(|_| err("not UTF-8 text"))?;
        if text.trim_start().starts_with('{') {
            set.add_jwks(text)?;
        } else {
            set.add_pem(pem_kid, bytes)?;
        }
        Ok(set)
    }

    /// The key for a token's `kid` (or the only key, for a token naming none).
    fn find(&self, kid: Option<&str>) -> Option<&Key> {
        match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
            None if self.keys.len() == 1 => self.keys.first(),
            None => None,
        }
    }
}

/// `alg` as the one-element list of its key's algorithms.
fn family_one(alg: Algorithm) -> &'static [Algorithm] {
    const ALL: [Algorithm; 12] = [
        Algorithm::HS256,
        Algorithm::HS384,
        Algorithm::HS512,
        Algorithm::ES256,
        Algorithm::ES384,
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
        Algorithm::PS384,
        Algorithm::PS512,
        Algorithm::EdDSA,
    ];
    let i = ALL.iter().position(|a| *a == alg).unwrap_or(0);
    &ALL[i..=i]
}

fn key_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::HS256 => Algorithm::HS256,
        KeyAlgorithm::HS384 => Algorithm::HS384,
        KeyAlgorithm::HS512 => Algorithm::HS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

struct Reload {
    path: PathBuf,
    every: Duration,
    last: Mutex<Option<Instant>>,
}

/// Validates JWT access tokens: an [`Authorizer`] (see the [module docs](self) for the
/// checks).
pub struct JwtValidator {
    config: JwtConfig,
    /// `config.audiences` in canonical form.
    audiences: Vec<String>,
    keys: RwLock<Arc<KeySet>>,
    reload: Option<Reload>,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("config", &self.config)
            .field("keys", &self.keys())
            .finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// A validator of tokens meeting `config`, signed by one of `keys`. Fails when the
    /// leeway exceeds [`MAX_LEEWAY`], no algorithm or audience is allowed, the issuer is
    /// empty, or `keys` is empty.
    pub fn new(config: JwtConfig, keys: KeySet) -> Result<Self, ConfigError> {
        // The process-wide crypto provider: ours, unless the application installed one.
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        if config.leeway > MAX_LEEWAY {
            return Err(err(format!(
                "a leeway of {:?} exceeds the limit of {MAX_LEEWAY:?}",
                config.leeway
            )));
        }
        if config.issuer.is_empty() {
            return Err(err("the issuer is empty"));
        }
        if config.audiences.iter().all(String::is_empty) {
            return Err(err("no audience: tokens must be issued for this resource"));
        }
        if config.algorithms.is_empty() {
            return Err(err("no algorithm is allowed"));
        }
        if keys.is_empty() {
            return Err(err("no verification key"));
        }
        let audiences = config
            .audiences
            .iter()
            .filter(|a| !a.is_empty())
            .map(|a| canonical_uri(a))
            .collect();
        Ok(JwtValidator {
            config,
            audiences,
            keys: RwLock::new(Arc::new(keys)),
            reload: None,
        })
    }

    /// Re-reads `path` (a JWK set, or a PEM key) when a token names a `kid` not in the set,
    /// at most once per `every` (e.g. [`DEFAULT_RELOAD`]): keys the IdP rotated in are
    /// picked up without a restart. A file that fails to load leaves the set as it was.
    pub fn reload_from(mut self, path: impl Into<PathBuf>, every: Duration) -> Self {
        self.reload = Some(Reload {
            path: path.into(),
            every,
            last: Mutex::new(Some(Instant::now())),
        });
        self
    }

    /// The configuration.
    pub fn config(&self) -> &JwtConfig {
        &self.config
    }

    /// The keys in use.
    pub fn keys(&self) -> Arc<KeySet> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Replaces the keys (tokens being validated finish with the old set). An empty set is
    /// refused.
    pub fn set_keys(&self, keys: KeySet) -> Result<(), ConfigError> {
        if keys.is_empty() {
            return Err(err("no verification key"));
        }
        *self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
        Ok(())
    }

    /// Validates `token`: its principal, or why not. Synchronous (no key reload).
    pub fn validate(&self, token: &str) -> Result<Principal, Rejection> {
        self.validate_with(&self.keys(), token)
    }

    fn validate_with(&self, keys: &KeySet, token: &str) -> Result<Principal, Rejection> {
        let invalid = |why: &str| Rejection::InvalidToken(why.to_owned());
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid("the token is not a well-formed JWT with a supported alg"))?;
        if !self.config.algorithms.contains(&header.alg) {
            return Err(Rejection::InvalidToken(format!(
                "the algorithm {:?} is not accepted",
                header.alg
            )));
        }
        if let Some(want) = &self.config.token_type {
            let bare = |t: &str| {
                let t = t.to_ascii_lowercase();
                t.strip_prefix("application/")
                    .map(str::to_owned)
                    .unwrap_or(t)
            };
            if header.typ.as_deref().map(bare) != Some(bare(want)) {
                return Err(invalid("the token is not of the expected type (typ)"));
            }
        }
        let key = keys
            .find(header.kid.as_deref())
            .ok_or_else(|| match &header.kid {
                Some(_) => invalid("the token names an unknown key (kid)"),
                None => invalid("the token names no key (kid) and several keys are configured"),
            })?;
        if !key.algorithms.contains(&header.alg) {
            return Err(Rejection::InvalidToken(format!(
                "the algorithm {:?} does not fit the token's key",
                header.alg
            )));
        }
        let mut v = Validation::new(header.alg);
        v.leeway = self.config.leeway.as_secs();
        v.validate_exp = true;
        v.validate_nbf = true;
        v.validate_aud = false; // below, with canonical comparison
        v.set_issuer(&[&self.config.issuer]);
        v.set_required_spec_claims(&["exp", "iss", "sub"]);
        let data = jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key.key, &v)
            .map_err(|e| {
                use jsonwebtoken::errors::ErrorKind as K;
                Rejection::InvalidToken(
                    match e.kind() {
                        K::ExpiredSignature => "the token has expired",
                        K::ImmatureSignature => "the token is not valid yet (nbf)",
                        K::InvalidIssuer => "the token was issued by another issuer",
                        K::InvalidSignature => "the token's signature does not verify",
                        K::InvalidAlgorithm => "the token's algorithm does not fit its key",
                        K::MissingRequiredClaim(c) => {
                            return Rejection::InvalidToken(format!("the token has no {c} claim"))
                        }
                        K::InvalidClaimFormat(c) => {
                            return Rejection::InvalidToken(format!(
                                "the token's {c} claim is malformed"
                            ))
                        }
                        _ => "the token is malformed",
                    }
                    .to_owned(),
                )
            })?;
        let claims = data.claims;
        let audience_ok = match claims.get("aud") {
            Some(Value::String(a)) => self.audiences.contains(&canonical_uri(a)),
            Some(Value::Array(all)) => all
                .iter()
                .filter_map(Value::as_str)
                .any(|a| self.audiences.contains(&canonical_uri(a))),
            _ => return Err(invalid("the token has no aud claim")),
        };
        if !audience_ok {
            return Err(invalid("the token was not issued for this resource (aud)"));
        }
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let subject = text("sub").ok_or_else(|| invalid("the token's sub claim is malformed"))?;
        let mut scopes: Vec<String> = Vec::new();
        let mut add = |s: &str| {
            if !s.is_empty() && !scopes.iter().any(|x| x == s) {
                scopes.push(s.to_owned());
            }
        };
        if let Some(s) = claims.get("scope").and_then(Value::as_str) {
            s.split(' ').for_each(&mut add);
        }
        match claims.get("scp") {
            Some(Value::String(s)) => s.split(' ').for_each(&mut add),
            Some(Value::Array(all)) => all.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
        let mut principal = Principal::new(subject).with_issuer(self.config.issuer.clone());
        principal.scopes = scopes;
        principal.client_id = text("client_id").or_else(|| text("azp"));
        principal.expires_at = claims.get("exp").and_then(Value::as_u64);
        principal.claims = claims;
        Ok(principal)
    }

    /// Re-reads the key file when due; whether the set changed.
    async fn reload(&self) -> bool {
        let Some(r) = &self.reload else {
            return false;
        };
        {
            let mut last = r
                .last
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.is_some_and(|t| t.elapsed() < r.every) {
                return false;
            }
            *last = Some(Instant::now());
        }
        let loaded = match tokio::fs::read(&r.path).await {
            Ok(bytes) => KeySet::from_bytes(&bytes, None),
            Err(e) => Err(err(e)),
        };
        match loaded.and_then(|keys| self.set_keys(keys)) {
            Ok(()) => {
                tracing::info!(path = %r.path.display(), "verification keys reloaded");
                true
            }
            Err(e) => {
                tracing::warn!(path = %r.path.display(), error = %e.0, "verification keys not reloaded");
                false
            }
        }
    }
}

impl Authorizer for JwtValidator {
    fn authorize<'a>(&'a self, token: &'a str) -> AuthFuture<'a> {
        Box::pin(async move {
            let keys = self.keys();
            let unknown_kid = jsonwebtoken::decode_header(token)
                .ok()
                .and_then(|h| h.kid)
                .is_some_and(|kid| keys.find(Some(&kid)).is_none());
            if unknown_kid && self.reload().await {
                return self.validate(token);
            }
            self.validate_with(&keys, token)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_bounds() {
        let mut keys = KeySet::new();
        keys.add_secret(Some("k"), &[7; 32]).unwrap();
        let mut c = JwtConfig::new("https://as.example", "https://rs.example/mcp");
        c.leeway = MAX_LEEWAY + Duration::from_secs(1);
        assert!(JwtValidator::new(c, KeySet::new()).is_err());
        assert!(JwtValidator::new(
            JwtConfig::new("https://as.example", "https://rs.example/mcp"),
            KeySet::new()
        )
        .is_err());
        let c = JwtConfig::new("", "https://rs.example/mcp");
        assert!(JwtValidator::new(c, keys).is_err());
        let mut short = KeySet::new();
        assert!(short.add_secret(None, &[1; 31]).is_err());
        assert!(short.add_secret(Some("a"), &[1; 32]).is_ok());
        assert!(
            short.add_secret(Some("a"), &[2; 32]).is_err(),
            "duplicate kid"
        );
        assert!(short
            .add_pem(
                None,
                b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
            )
            .is_err());
        assert!(KeySet::new().add_jwks(r#"{"keys":[]}"#).is_err());
        assert!(KeySet::new().add_jwks(r#"{"nokeys":1}"#).is_err());
        assert!(KeySet::new().add_jwks("not json").is_err());
        // An encryption key alone is no signature key.
        let enc = r#"{"keys":[{"kty":"RSA","use":"enc","kid":"e","n":"AQAB","e":"AQAB"}]}"#;
        assert!(KeySet::new().add_jwks(enc).is_err());
    }

    #[test]
    fn algorithm_families() {
        assert_eq!(family(Algorithm::HS384), &HMAC);
        assert_eq!(family(Algorithm::PS256), &RSA);
        assert_eq!(family_one(Algorithm::ES384), &[Algorithm::ES384]);
        assert_eq!(family_one(Algorithm::EdDSA), &[Algorithm::EdDSA]);
        assert_eq!(key_algorithm(KeyAlgorithm::RSA_OAEP), None);
    }
}

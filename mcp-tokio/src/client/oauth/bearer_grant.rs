//! The JWT-bearer authorization grant (RFC 7523 §2.1): a JWT the application obtained
//! elsewhere is exchanged for an access token, with no user and no redirect. Workload
//! identity federation (SEP-1933, extension `io.modelcontextprotocol/auth/wif`) presents a
//! workload's platform token (a Kubernetes projected service-account token, a cloud
//! instance's identity token, a CI job's OIDC token) this way; enterprise-managed
//! authorization ([`enterprise`](super::enterprise)) presents an ID-JAG.
//!
//! Where the JWT comes from is an [`AssertionSource`]: a fixed [`Secret`], a file read at
//! every token request ([`FileAssertion`]: platform tokens rotate on disk), or any async
//! function ([`assertion_fn`]). The source is asked each time a token is needed (on a 401,
//! and again when the access token is about to expire), never cached by the authorizer.
//!
//! A refusal of the token endpoint (`invalid_grant`, `invalid_scope`,
//! `unauthorized_client`, …) is the caller's answer: [`OAuthError::Server`], with no retry
//! and no fallback to another grant.
//!
//! ```no_run
//! use mcp_rs_tokio::client::oauth::{ClientCredentials, FileAssertion, OAuthAuthorizer, OAuthConfig};
//! use mcp_rs_tokio::client::{Client, ClientOptions, Era};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let token = FileAssertion::new("/var/run/secrets/tokens/mcp-token");
//! let config = OAuthConfig::jwt_bearer(ClientCredentials::new("my-workload", None), token);
//! let options = ClientOptions::with_era(Era::Modern).with_authorizer(OAuthAuthorizer::new(config)?);
//! let client = Client::connect_http_with("https://example.com/mcp", options).await?;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::io::Read;
use std::path::PathBuf;

use super::{OAuthError, Secret};
use crate::client::auth::BoxFuture;

/// The `grant_type` of the JWT-bearer grant (RFC 7523 §2.1).
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Default of [`FileAssertion::with_max_bytes`]: a JWT larger than this is refused.
pub const DEFAULT_MAX_ASSERTION_FILE: usize = 64 * 1024;

/// What an assertion is for: the authorization server that will receive it (its issuer,
/// the `aud` a workload token is minted for) and the MCP server (the RFC 8707 resource).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssertionTarget {
    /// The authorization server's issuer identifier (from its metadata).
    pub issuer: String,
    /// The protected resource, as its metadata publishes it.
    pub resource: String,
    /// The scopes about to be asked for, if any.
    pub scope: Option<String>,
}

/// Supplies a JWT when a token is needed: the workload's token for the JWT-bearer grant, or
/// the user's ID token for enterprise-managed authorization.
pub trait AssertionSource: Send + Sync + std::fmt::Debug + 'static {
    /// The JWT for `target`. An error stops the flow and reaches the caller as it is.
    fn assertion<'a>(
        &'a self,
        target: &'a AssertionTarget,
    ) -> BoxFuture<'a, Result<Secret, OAuthError>>;
}

/// A fixed JWT (one that outlives the client, or a test's).
impl AssertionSource for Secret {
    fn assertion<'a>(
        &'a self,
        _: &'a AssertionTarget,
    ) -> BoxFuture<'a, Result<Secret, OAuthError>> {
        Box::pin(async move { Ok(self.clone()) })
    }
}

/// A JWT read from a file at every token request (surrounding whitespace trimmed), such
/// as a Kubernetes projected service-account token, which the kubelet rotates in place.
#[derive(Clone, Debug)]
pub struct FileAssertion {
    path: PathBuf,
    max_bytes: usize,
}

impl FileAssertion {
    /// Reads `path`, at most [`DEFAULT_MAX_ASSERTION_FILE`] bytes.
    pub fn new(path: impl Into<PathBuf>) -> FileAssertion {
        FileAssertion {
            path: path.into(),
            max_bytes: DEFAULT_MAX_ASSERTION_FILE,
        }
    }

    /// The largest file accepted; a larger one is [`OAuthError::Assertion`].
    pub fn with_max_bytes(mut self, max: usize) -> FileAssertion {
        self.max_bytes = max;
        self
    }
}

impl AssertionSource for FileAssertion {
    fn assertion<'a>(
        &'a self,
        _: &'a AssertionTarget,
    ) -> BoxFuture<'a, Result<Secret, OAuthError>> {
        let path = self.path.clone();
        let max = self.max_bytes;
        Box::pin(async move {
            let shown = path.display().to_string();
            let read = tokio::task::spawn_blocking(move || read_bounded(&path, max))
                .await
                .map_err(|e| OAuthError::Assertion(format!("{shown}: {e}")))?;
            read.map_err(|reason| OAuthError::Assertion(format!("{shown}: {reason}")))
        })
    }
}

/// The trimmed text of `path`, refused when it exceeds `max` bytes, is not UTF-8 or is
/// empty.
fn read_bounded(path: &std::path::Path, max: usize) -> Result<Secret, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > max {
        return Err(format!("the token exceeds {max} bytes"));
    }
    let text = String::from_utf8(bytes).map_err(|_| "the token is not UTF-8".to_owned())?;
    let token = text.trim();
    if token.is_empty() {
        return Err("the file is empty".into());
    }
    Ok(Secret::new(token))
}

/// An [`AssertionSource`] from an async function of the [`AssertionTarget`]: see
/// [`assertion_fn`].
pub struct AssertionFn<F>(F);

impl<F> std::fmt::Debug for AssertionFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AssertionFn(…)")
    }
}

/// An [`AssertionSource`] calling `f` each time a JWT is needed (to fetch a workload
/// token from a metadata service, or an ID token from the application's login).
pub fn assertion_fn<F, Fut>(f: F) -> AssertionFn<F>
where
    F: Fn(AssertionTarget) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Secret, OAuthError>> + Send + 'static,
{
    AssertionFn(f)
}

impl<F, Fut> AssertionSource for AssertionFn<F>
where
    F: Fn(AssertionTarget) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Secret, OAuthError>> + Send + 'static,
{
    fn assertion<'a>(
        &'a self,
        target: &'a AssertionTarget,
    ) -> BoxFuture<'a, Result<Secret, OAuthError>> {
        Box::pin((self.0)(target.clone()))
    }
}

/// The source's JWT, refused when empty (a token request without an assertion only earns
/// an `invalid_request`).
pub(crate) async fn obtain(
    source: &dyn AssertionSource,
    target: &AssertionTarget,
) -> Result<Secret, OAuthError> {
    let jwt = source.assertion(target).await?;
    if jwt.expose().trim().is_empty() {
        return Err(OAuthError::Assertion(
            "the assertion source gave an empty token".into(),
        ));
    }
    Ok(jwt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_trimmed_and_bounded() {
        let dir = std::env::temp_dir().join(format!("mcp-rs-assertion-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        std::fs::write(&path, "  eyJ.a.b\n").unwrap();
        assert_eq!(read_bounded(&path, 64).unwrap().expose(), "eyJ.a.b");
        assert_eq!(read_bounded(&path, 10).unwrap().expose(), "eyJ.a.b");
        assert!(read_bounded(&path, 9)
            .unwrap_err()
            .contains("exceeds 9 bytes"));
        std::fs::write(&path, " \n").unwrap();
        assert!(read_bounded(&path, 64).unwrap_err().contains("empty"));
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(read_bounded(&path, 64).unwrap_err().contains("UTF-8"));
        assert!(read_bounded(&dir.join("absent"), 64).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! What the Streamable HTTP transport asks of an authorizer: the `Authorization` header of
//! every request, and what to do when the server refuses one (401, or 403 with
//! `insufficient_scope`). OAuth 2.1 (`oauth`) is one implementation; a static bearer token
//! ([`BearerToken`]) is another.
//!
//! | the transport | the authorizer |
//! |---|---|
//! | before every POST, GET and DELETE | [`request_headers`](Authorizer::request_headers) for that method and URL: by default the [`authorization`](Authorizer::authorization) header, if any; a DPoP authorizer adds its `DPoP` proof |
//! | a 401, or a 403 with a `WWW-Authenticate` challenge | [`challenge`](Authorizer::challenge): obtain new credentials; `Ok(true)` retries the request once with the new header, `Ok(false)` fails it with the status |

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as trait objects return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why an authorizer could not authorize.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AuthError(pub String);

/// A refusal the server sent.
#[derive(Clone, Copy, Debug)]
pub struct Challenge<'a> {
    /// The HTTP status (401 or 403).
    pub status: u16,
    /// The `WWW-Authenticate` header, if any (the text of the first one).
    pub www_authenticate: Option<&'a str>,
    /// The MCP endpoint the request went to (the protected resource).
    pub resource: &'a str,
    /// The `DPoP-Nonce` header of the refusal, if any (RFC 9449 §9: with
    /// `error="use_dpop_nonce"`, the next proof must carry it).
    pub dpop_nonce: Option<&'a str>,
}

/// Supplies credentials to the HTTP transport.
pub trait Authorizer: Send + Sync + std::fmt::Debug + 'static {
    /// The `Authorization` header value for the next request (`Bearer …`), if any.
    fn authorization(&self) -> BoxFuture<'_, Result<Option<String>, AuthError>>;

    /// The server refused a request: obtain new credentials. `Ok(true)`: the transport
    /// retries the request with the new [`authorization`](Self::authorization);
    /// `Ok(false)`: it gives up and the request fails with the status.
    fn challenge<'a>(&'a self, challenge: Challenge<'a>) -> BoxFuture<'a, Result<bool, AuthError>>;

    /// The authorization headers (name, value) of a `method` request to `url`: by default
    /// `Authorization` with [`authorization`](Self::authorization), if any. An authorizer
    /// whose headers depend on the request (a DPoP proof binds the method and the URL)
    /// overrides this.
    fn request_headers<'a>(
        &'a self,
        method: &'a str,
        url: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, AuthError>> {
        let _ = (method, url);
        Box::pin(async move {
            Ok(self
                .authorization()
                .await?
                .map(|value| ("authorization".to_owned(), value))
                .into_iter()
                .collect())
        })
    }
}

/// A fixed bearer token (obtained elsewhere): sent on every request, never renewed.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    /// The token (without the `Bearer ` prefix).
    pub fn new(token: impl Into<String>) -> Self {
        BearerToken(token.into())
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(…)")
    }
}

impl Authorizer for BearerToken {
    fn authorization(&self) -> BoxFuture<'_, Result<Option<String>, AuthError>> {
        Box::pin(async move { Ok(Some(format!("Bearer {}", self.0))) })
    }

    fn challenge<'a>(&'a self, _: Challenge<'a>) -> BoxFuture<'a, Result<bool, AuthError>> {
        Box::pin(async { Ok(false) })
    }
}

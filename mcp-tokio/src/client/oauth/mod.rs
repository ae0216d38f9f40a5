//! OAuth 2.1 for the client's Streamable HTTP transport (MCP authorization, protocol
//! 2025-06-18 onwards): an [`Authorizer`](super::auth::Authorizer) that answers a server's
//! 401 by discovering its authorization server and running the authorization-code flow
//! with PKCE, and a 403 `insufficient_scope` by asking again for the wider scope.
//!
//! | step | module | standard |
//! |---|---|---|
//! | read the server's `WWW-Authenticate` | [`challenge`] | RFC 6750 §3, RFC 9728 §5.1 |
//! | protected-resource metadata, then the authorization server's | [`discovery`] | RFC 9728, RFC 8414, OpenID Connect Discovery |
//! | a client id: pre-registered, a metadata document URL, or registered on the spot | [`registration`] | Client ID Metadata Documents, RFC 7591 |
//! | which scopes to ask for | [`scope`] | MCP scope selection, SEP-2207 `offline_access` |
//! | the authorization request and its answer | [`redirect`], [`pkce`] | OAuth 2.1 §4.1, RFC 7636, RFC 9207 `iss`, RFC 8707 `resource` |
//! | code and refresh token for tokens | [`token`] | OAuth 2.1 §3.2, §4.3 |
//! | a workload's JWT for tokens (no user; [`OAuthConfig::jwt_bearer`]) | [`bearer_grant`] | RFC 7523 §2.1, SEP-1933 |
//! | the user's ID token for an ID-JAG at the enterprise IdP, then for tokens ([`OAuthConfig::enterprise`]) | [`enterprise`] | RFC 8693, RFC 7523 §2.1, SEP-990 |
//! | sender-constrained tokens (opt-in, [`OAuthConfig::with_dpop`], feature `oauth-dpop`) | [`dpop`] | RFC 9449, SEP-1932 |
//! | where tokens and client ids are kept | [`store`] | |
//! | all of it behind the transport's seam | [`OAuthAuthorizer`] | |
//!
//! The user's part (opening the authorization URL in a browser, receiving the redirect) is
//! the application's: a [`RedirectHandler`]. [`HeadlessRedirect`] is one for authorization
//! servers that redirect at once (test servers, consent given beforehand).
//!
//! Every request to an authorization server or for metadata is bounded: a timeout
//! ([`OAuthConfig::with_request_timeout`], 10 s), a response size
//! ([`OAuthConfig::with_max_response_bytes`], 256 KiB), and no redirect is followed. Secrets
//! (tokens, client secrets, codes, PKCE verifiers) are [`Secret`]s: never in `Debug` output
//! or logs.
//!
//! ```no_run
//! use mcp_rs_tokio::client::oauth::{HeadlessRedirect, OAuthAuthorizer, OAuthConfig};
//! use mcp_rs_tokio::client::{Client, ClientOptions, Era};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let redirect = HeadlessRedirect::new("http://localhost:8976/callback")?;
//! let config = OAuthConfig::new(redirect).with_client_name("my agent");
//! let authorizer = OAuthAuthorizer::new(config)?;
//! let options = ClientOptions::with_era(Era::Modern).with_authorizer(authorizer);
//! let client = Client::connect_http_with("https://example.com/mcp", options).await?;
//! println!("{} tools", client.list_tools().await?.len());
//! client.close().await?;
//! # Ok(())
//! # }
//! ```

mod assertion;
mod authorizer;
pub mod bearer_grant;
pub mod challenge;
pub mod discovery;
pub mod dpop;
pub mod enterprise;
mod error;
mod fetch;
pub mod pkce;
pub mod redirect;
pub mod registration;
pub mod scope;
pub mod store;
pub mod token;

pub use authorizer::{OAuthAuthorizer, OAuthConfig, DEFAULT_MAX_STEP_UPS};
pub use bearer_grant::{assertion_fn, AssertionSource, AssertionTarget, FileAssertion};
pub use enterprise::EnterpriseIdp;
pub use error::OAuthError;
pub use redirect::{AuthorizationResponse, HeadlessRedirect, RedirectHandler};
pub use registration::{AssertionKey, ClientCredentials, TokenEndpointAuth};
pub use store::{MemoryStore, StoredToken, TokenStore};

/// A secret string (an access or refresh token, a client secret, an authorization code, a
/// PKCE verifier): `Debug` prints `Secret(…)`, never the value.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for sending it where it belongs.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// Whether `url` may carry OAuth traffic: `https`, or `http` to a loopback host (local
/// development and test servers).
pub(crate) fn secure_enough(url: &url::Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

//! Why an OAuth step failed.

/// Why an OAuth step failed. The messages name URLs and OAuth error codes, never a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL could not be parsed or is not acceptable (scheme, host).
    #[error("bad URL {url:?}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A request could not be sent or its answer not read (connection, timeout, size).
    #[error("{url}: {reason}")]
    Http {
        /// Where the request went.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// An unexpected HTTP status.
    #[error("{url}: HTTP {status}")]
    Status {
        /// Where the request went.
        url: String,
        /// The status.
        status: u16,
    },
    /// No protected-resource or authorization-server metadata was found, or it is unusable.
    #[error("metadata: {0}")]
    Metadata(String),
    /// The protected-resource metadata is for another resource than the server's URL
    /// (RFC 9728 §3.3).
    #[error(
        "the protected-resource metadata is for {found:?}, not for the server at {expected:?}"
    )]
    ResourceMismatch {
        /// The MCP server's URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// The authorization-server metadata names another issuer than the one it was fetched
    /// for (RFC 8414 §3.3).
    #[error("the authorization-server metadata names issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
    },
    /// The authorization server does not support PKCE with S256.
    #[error(
        "the authorization server does not advertise PKCE S256 (code_challenge_methods_supported)"
    )]
    PkceUnsupported,
    /// No way to obtain a client id: no pre-registered credentials, no metadata-document
    /// support, no registration endpoint.
    #[error("no client registration is possible with {issuer}")]
    NoRegistration {
        /// The authorization server.
        issuer: String,
    },
    /// The authorization server answered with an OAuth error (RFC 6749 §5.2, RFC 7591 §3.2.2).
    #[error("{endpoint}: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Server {
        /// Which endpoint answered.
        endpoint: &'static str,
        /// The OAuth error code.
        error: String,
        /// Its description, if any.
        description: Option<String>,
    },
    /// The authorization response is not acceptable (state, `iss`, missing code).
    #[error("authorization response rejected: {0}")]
    AuthorizationResponse(String),
    /// The redirect handler could not obtain the authorization response.
    #[error("redirect: {0}")]
    Redirect(String),
    /// The token endpoint's answer is not usable.
    #[error("token response: {0}")]
    TokenResponse(String),
    /// The [`AssertionSource`](super::AssertionSource) gave no usable JWT (unreadable,
    /// too large, empty).
    #[error("assertion: {0}")]
    Assertion(String),
    /// The token store failed.
    #[error("token store: {0}")]
    Store(String),
    /// What the configuration asks for is not supported by this build or this client
    /// (a key type, a feature left out).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Randomness for PKCE or state was not available.
    #[error("no randomness: {0}")]
    Random(String),
}

//! Authorization: the HTTP server as an OAuth 2.1 resource server (MCP authorization,
//! revisions 2025-06-18 and 2025-11-25).
//!
//! With [`HttpConfig::auth`](super::HttpConfig::auth) set, every request to the MCP endpoint
//! must carry `Authorization: Bearer <token>`; an [`Authorizer`] maps the token to a
//! [`Principal`] or a [`Rejection`]. The JWT validator (`http::jwt`, feature `jwt`) is one
//! authorizer; token introspection, API keys or anything else implement the trait.
//!
//! | situation | status | `WWW-Authenticate` |
//! |---|---|---|
//! | no `Authorization` header, or another scheme | 401 | `Bearer resource_metadata="…"` (+ `scope` when scopes are required); no `error` (RFC 6750 §3.1) |
//! | malformed header (repeated, empty token, not token68 syntax) | 400 | `Bearer error="invalid_request", …` |
//! | token invalid, expired, not yet valid, wrong issuer, audience, signature, algorithm or key | 401 | `Bearer error="invalid_token", error_description="…", …` |
//! | token valid, lacking a scope the endpoint or the called tool requires | 403 | `Bearer error="insufficient_scope", scope="…", …` |
//! | the authorizer could not decide ([`Rejection::Unavailable`]) | 503 | none |
//! | a legacy session id created by another principal | 404 | none: to that principal the session does not exist |
//!
//! `GET /.well-known/oauth-protected-resource` and the path-suffixed form
//! (`/.well-known/oauth-protected-resource/mcp` for a resource `https://host/mcp`, RFC 9728
//! §3.1) serve the Protected Resource Metadata document without authentication.
//!
//! Tools may require scopes of their own ([`Auth::tool_scopes`]): a `tools/call` of such a
//! tool (in a batch too) with a token lacking them gets 403 `insufficient_scope` naming the
//! scopes needed, so that the client can step up (2025-11-25, "Scope Challenge Handling").
//! `tools/list` still lists every tool: hiding tools would leave the client no way to learn
//! that a step-up would unlock them.
//!
//! Handlers see who called: an inline handler (a sync tool, a resource, prompt or completion
//! provider) through its request view, `request.adapter_data::<Principal>()`; the task of an
//! async tool or prompt through [`Context::principal`](crate::Context::principal).

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{HeaderMap, Method, Response, StatusCode};
use mcp_rs_core::wire::peek::{peek_value, Peek};
use serde_json::Value;

use super::{rpc_error, Body};

/// Largest bearer token accepted by default (bytes); see [`Auth::max_token`].
pub const MAX_TOKEN: usize = 8 << 10;

/// The path prefix of Protected Resource Metadata documents (RFC 9728 §3).
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The longest `error_description` sent in a challenge (longer ones are cut).
const MAX_DESCRIPTION: usize = 200;

pub use crate::principal::Principal;

/// Why an [`Authorizer`] refused a token; each maps to the status and challenge RFC 6750
/// prescribes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// The token is not valid here (malformed, expired, revoked, wrong issuer or audience,
    /// bad signature): 401 with `error="invalid_token"` and this description.
    #[error("invalid token: {0}")]
    InvalidToken(String),
    /// The token is valid but lacks scopes: 403 with `error="insufficient_scope"` and
    /// `scope` naming `required`.
    #[error("insufficient scope: {description}")]
    InsufficientScope {
        /// The scopes the request needs.
        required: Vec<String>,
        /// A human-readable reason.
        description: String,
    },
    /// The request is malformed: 400 with `error="invalid_request"`.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The authorizer could not decide (an introspection endpoint is unreachable): 503,
    /// the client may retry.
    #[error("authorization unavailable: {0}")]
    Unavailable(String),
}

/// The future an [`Authorizer`] returns.
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<Principal, Rejection>> + Send + 'a>>;

/// Maps a bearer token to a [`Principal`] or a [`Rejection`]. Called once per HTTP request
/// to the MCP endpoint, with the token exactly as sent (at most [`Auth::max_token`] bytes of
/// token68 characters). Implement it for token introspection (RFC 7662), opaque API keys, or
/// anything else; `http::jwt::JwtValidator` (feature `jwt`) validates JWT access tokens
/// locally. Audience checks are the authorizer's job: the spec requires that the token was
/// issued for this resource (RFC 8707), [`Auth::resource`] names it.
pub trait Authorizer: Send + Sync + 'static {
    /// Validates `token`.
    fn authorize<'a>(&'a self, token: &'a str) -> AuthFuture<'a>;
}

/// An [`Authorizer`] from an async closure (see [`authorizer_fn`]).
pub struct FnAuthorizer<F>(F);

impl<F> std::fmt::Debug for FnAuthorizer<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnAuthorizer")
    }
}

impl<F, Fut> Authorizer for FnAuthorizer<F>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Principal, Rejection>> + Send + 'static,
{
    fn authorize<'a>(&'a self, token: &'a str) -> AuthFuture<'a> {
        Box::pin((self.0)(token.to_owned()))
    }
}

/// An [`Authorizer`] that calls `f` with the token.
pub fn authorizer_fn<F, Fut>(f: F) -> FnAuthorizer<F>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Principal, Rejection>> + Send + 'static,
{
    FnAuthorizer(f)
}

/// A configuration mistake, found when it is built (never at request time).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("authorization configuration: {0}")]
pub struct ConfigError(pub String);

/// The Protected Resource Metadata (RFC 9728) this server publishes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The resource identifier: the MCP endpoint's canonical URI (RFC 8707 §2), e.g.
    /// `https://mcp.example.com/mcp`: an absolute `https` URI (plain `http` only for
    /// loopback hosts) without query or fragment. Tokens must be issued for it.
    pub resource: String,
    /// Issuer identifiers of the authorization servers that issue tokens for it (at least
    /// one, as MCP requires).
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`: the scopes a client should request for basic use. `None`: the
    /// scopes [`Auth::require_scopes`] requires (left out of the document when there are
    /// none).
    pub scopes_supported: Option<Vec<String>>,
    /// `resource_name`: a name for people.
    pub resource_name: Option<String>,
    /// `resource_documentation`: a URL of documentation for developers.
    pub resource_documentation: Option<String>,
}

impl ResourceMetadata {
    /// Metadata naming the resource and its authorization servers.
    pub fn new<I, S>(resource: impl Into<String>, authorization_servers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ResourceMetadata {
            resource: resource.into(),
            authorization_servers: authorization_servers.into_iter().map(Into::into).collect(),
            scopes_supported: None,
            resource_name: None,
            resource_documentation: None,
        }
    }
}

/// Authorization of the HTTP server: who validates tokens, what the metadata says, which
/// scopes the endpoint and each tool require. Set it as
/// [`HttpConfig::auth`](super::HttpConfig::auth).
///
/// ```no_run
/// # fn demo(validator: impl mcp_rs_tokio::http::auth::Authorizer) -> Result<(), mcp_rs_tokio::http::auth::ConfigError> {
/// use mcp_rs_tokio::http::auth::{Auth, ResourceMetadata};
/// let metadata = ResourceMetadata::new("https://mcp.example.com/mcp", ["https://auth.example.com"]);
/// let auth = Auth::new(metadata, validator)?
///     .require_scopes(["mcp"])?
///     .tool_scopes("delete_files", ["files:write"])?;
/// let mut config = mcp_rs_tokio::http::HttpConfig::default();
/// config.auth = Some(auth);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Auth {
    authorizer: Arc<dyn Authorizer>,
    metadata: ResourceMetadata,
    /// The resource's path, without a trailing `/`.
    resource_path: String,
    metadata_url: String,
    required: Vec<String>,
    tools: HashMap<String, Vec<String>>,
    max_token: usize,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("resource", &self.metadata.resource)
            .field("metadata_url", &self.metadata_url)
            .field("required", &self.required)
            .field("tools", &self.tools)
            .field("max_token", &self.max_token)
            .finish_non_exhaustive()
    }
}

/// A URI's scheme (lowercase), authority and path, for the URIs this module accepts:
/// `http(s)://authority[/path]`, no query, no fragment, no userinfo.
fn split_uri(uri: &str, what: &str) -> Result<(String, String, String), ConfigError> {
    let bad = |why: &str| ConfigError(format!("{what} {uri:?} {why}"));
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| bad("is not an absolute URI"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return Err(bad("must use https"));
    }
    if rest.contains(['#', '?']) {
        return Err(bad("must have no query or fragment"));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains(['@', ' ', '\\']) {
        return Err(bad("has no plain host"));
    }
    if path.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err(bad("has a path that is not visible ASCII"));
    }
    if scheme == "http" {
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(""),
            None => authority.split(':').next().unwrap_or(""),
        };
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host == "::1"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(bad("must use https (plain http only for loopback hosts)"));
        }
    }
    Ok((scheme, authority.to_ascii_lowercase(), path.to_owned()))
}

/// A resource URI in the form audiences are compared in: scheme and host lowercase (the
/// spec asks servers to accept uppercase ones), no trailing `/`.
pub fn canonical_uri(uri: &str) -> String {
    match uri.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            format!(
                "{}://{}{}",
                scheme.to_ascii_lowercase(),
                authority.to_ascii_lowercase(),
                path.trim_end_matches('/')
            )
        }
        None => uri.to_owned(),
    }
}

/// Whether `scope` is a valid scope token (RFC 6749 §3.3: `%x21 / %x23-5B / %x5D-7E`).
fn valid_scope(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

fn scopes_of<I, S>(scopes: I) -> Result<Vec<String>, ConfigError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut out: Vec<String> = Vec::new();
    for s in scopes {
        let s = s.into();
        if !valid_scope(&s) {
            return Err(ConfigError(format!(
                "scope {s:?} is not a scope token (visible ASCII other than space, '\"' and '\\')"
            )));
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

impl Auth {
    /// Authorization with `authorizer`, publishing `metadata`. Fails when the resource is not
    /// an absolute `https` URI (plain `http` only for loopback hosts) without query and
    /// fragment, when no authorization server is named, or one is not such a URI.
    pub fn new(
        metadata: ResourceMetadata,
        authorizer: impl Authorizer,
    ) -> Result<Self, ConfigError> {
        Self::with_shared(metadata, Arc::new(authorizer))
    }

    /// [`Auth::new`] with an authorizer that is shared (with another server, or kept to
    /// rotate its keys).
    pub fn with_shared(
        metadata: ResourceMetadata,
        authorizer: Arc<dyn Authorizer>,
    ) -> Result<Self, ConfigError> {
        let (scheme, authority, path) = split_uri(&metadata.resource, "resource")?;
        if metadata.authorization_servers.is_empty() {
            return Err(ConfigError(
                "at least one authorization server is needed (MCP requires authorization_servers)"
                    .into(),
            ));
        }
        for server in &metadata.authorization_servers {
            split_uri(server, "authorization server")?;
        }
        if let Some(scopes) = &metadata.scopes_supported {
            scopes_of(scopes.iter().cloned())?;
        }
        let resource_path = path.trim_end_matches('/').to_owned();
        let metadata_url = format!("{scheme}://{authority}{WELL_KNOWN}{resource_path}");
        Ok(Auth {
            authorizer,
            metadata,
            resource_path,
            metadata_url,
            required: Vec::new(),
            tools: HashMap::new(),
            max_token: MAX_TOKEN,
        })
    }

    /// Scopes every request needs (beyond a valid token); a token lacking one gets 403
    /// `insufficient_scope`. They are also the `scope` hint of 401 challenges and, unless
    /// [`ResourceMetadata::scopes_supported`] is set, the published `scopes_supported`.
    pub fn require_scopes<I, S>(mut self, scopes: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required = scopes_of(scopes)?;
        Ok(self)
    }

    /// Scopes a `tools/call` of `tool` needs beyond those of every request.
    pub fn tool_scopes<I, S>(
        mut self,
        tool: impl Into<String>,
        scopes: I,
    ) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.insert(tool.into(), scopes_of(scopes)?);
        Ok(self)
    }

    /// The largest token accepted (default [`MAX_TOKEN`], 8 KiB); larger ones get 401
    /// `invalid_token` without reaching the authorizer.
    pub fn max_token(mut self, bytes: usize) -> Self {
        self.max_token = bytes;
        self
    }

    /// The resource identifier (the canonical URI tokens must be issued for).
    pub fn resource(&self) -> &str {
        &self.metadata.resource
    }

    /// The resource URI's path, without a trailing `/` (empty for the host's root).
    pub(crate) fn resource_path(&self) -> &str {
        &self.resource_path
    }

    /// The metadata URL announced in challenges: the resource's well-known URI, with the
    /// resource's path appended (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The scopes every request needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.required
    }

    /// The scopes a call of `tool` needs (those of every request included).
    pub fn scopes_for_tool(&self, tool: &str) -> Vec<String> {
        let mut all = self.required.clone();
        for s in self.tools.get(tool).into_iter().flatten() {
            if !all.contains(s) {
                all.push(s.clone());
            }
        }
        all
    }

    /// The Protected Resource Metadata document (RFC 9728 §2).
    pub fn document(&self) -> Value {
        let m = &self.metadata;
        let scopes = m.scopes_supported.as_ref().unwrap_or(&self.required);
        let mut doc = serde_json::json!({
            "resource": m.resource,
            "authorization_servers": m.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        // Left out rather than empty: a client then requests no particular scope.
        if !scopes.is_empty() {
            doc["scopes_supported"] = Value::from(scopes.clone());
        }
        if let Some(name) = &m.resource_name {
            doc["resource_name"] = Value::from(name.as_str());
        }
        if let Some(url) = &m.resource_documentation {
            doc["resource_documentation"] = Value::from(url.as_str());
        }
        doc
    }

    /// The scope challenge for a request that needs `needed`: those, plus the scopes the
    /// principal already holds that this server knows (so that a client re-authorizing with
    /// the challenged set keeps what it had: the spec's recommended approach).
    fn challenged(&self, needed: &[String], principal: Option<&Principal>) -> Vec<String> {
        let mut out: Vec<String> = needed.to_vec();
        let known = |s: &String| {
            self.required.contains(s)
                || self.tools.values().any(|v| v.contains(s))
                || self
                    .metadata
                    .scopes_supported
                    .as_ref()
                    .is_some_and(|v| v.contains(s))
        };
        for s in principal.into_iter().flat_map(|p| &p.scopes) {
            if known(s) && !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    }

    /// The `WWW-Authenticate` value: `Bearer` with `error`, `scope`, `resource_metadata`
    /// and `error_description` as given.
    pub fn challenge(
        &self,
        error: Option<&str>,
        scope: &[String],
        description: Option<&str>,
    ) -> String {
        let mut params = Vec::new();
        if let Some(e) = error {
            params.push(format!("error=\"{e}\""));
        }
        if !scope.is_empty() {
            params.push(format!("scope=\"{}\"", scope.join(" ")));
        }
        params.push(format!("resource_metadata=\"{}\"", self.metadata_url));
        if let Some(d) = description {
            params.push(format!("error_description=\"{}\"", description_text(d)));
        }
        format!("Bearer {}", params.join(", "))
    }

    /// A refusal: status, challenge and a JSON-RPC error body.
    fn refuse(
        &self,
        status: StatusCode,
        error: Option<&str>,
        scope: &[String],
        description: &str,
        id: Option<&Value>,
    ) -> Response<Body> {
        let mut r = rpc_error(status, id, -32600, description);
        let challenge = self.challenge(error, scope, error.map(|_| description));
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            r.headers_mut().insert(WWW_AUTHENTICATE, v);
        }
        r
    }

    /// The response to a [`Rejection`].
    fn rejected(&self, why: Rejection, principal: Option<&Principal>) -> Response<Body> {
        match why {
            Rejection::InvalidToken(d) => self.refuse(
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                &self.required,
                &d,
                None,
            ),
            Rejection::InvalidRequest(d) => self.refuse(
                StatusCode::BAD_REQUEST,
                Some("invalid_request"),
                &[],
                &d,
                None,
            ),
            Rejection::InsufficientScope {
                required,
                description,
            } => {
                let scope = self.challenged(&required, principal);
                self.refuse(
                    StatusCode::FORBIDDEN,
                    Some("insufficient_scope"),
                    &scope,
                    &description,
                    None,
                )
            }
            Rejection::Unavailable(d) => {
                tracing::warn!(reason = %d, "the authorizer could not decide");
                rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    None,
                    -32603,
                    "Authorization is unavailable; retry later",
                )
            }
        }
    }

    /// Authenticates a request to the MCP endpoint: its principal, or the response that
    /// refuses it.
    pub(crate) async fn authenticate(
        &self,
        headers: &HeaderMap,
    ) -> Result<Arc<Principal>, Response<Body>> {
        let token = match bearer(headers) {
            Ok(Some(t)) => t,
            Ok(None) => {
                return Err(self.refuse(
                    StatusCode::UNAUTHORIZED,
                    None,
                    &self.required,
                    "Unauthorized: a bearer token is required",
                    None,
                ))
            }
            Err(why) => return Err(self.rejected(Rejection::InvalidRequest(why), None)),
        };
        if token.len() > self.max_token {
            let why = format!("the token exceeds {} bytes", self.max_token);
            return Err(self.rejected(Rejection::InvalidToken(why), None));
        }
        let principal = match self.authorizer.authorize(token).await {
            Ok(p) => p,
            Err(why) => return Err(self.rejected(why, None)),
        };
        if let Some(missing) = self.required.iter().find(|s| !principal.has_scope(s)) {
            let why = Rejection::InsufficientScope {
                required: self.required.clone(),
                description: format!("the token lacks the scope {missing:?}"),
            };
            return Err(self.rejected(why, Some(&principal)));
        }
        Ok(Arc::new(principal))
    }

    /// Whether any tool has scopes of its own (only then is a body read for
    /// [`check_calls`](Self::check_calls)).
    pub(crate) fn has_tool_scopes(&self) -> bool {
        !self.tools.is_empty()
    }

    /// Per-tool scopes: the 403 response when `body` (one message, or each element of a
    /// batch), as the session reads it, calls a tool whose scopes `principal` lacks. A body
    /// or element the session refuses calls nothing and is left to it.
    pub(crate) fn check_calls(
        &self,
        principal: &Principal,
        body: &Peek<'_>,
    ) -> Option<Response<Body>> {
        if self.tools.is_empty() {
            return None;
        }
        let one = |message: &Peek<'_>| {
            let called = mcp_rs_core::wire::headers::called_tool(message)?;
            let tool: Cow<'_, str> = match called.as_borrowed() {
                Some(name) => Cow::Borrowed(name),
                None => Cow::Owned(called.to_string()),
            };
            let needed = self.tools.get(tool.as_ref())?;
            let missing = needed.iter().find(|s| !principal.has_scope(s))?;
            let scope = self.challenged(&self.scopes_for_tool(&tool), Some(principal));
            Some(self.refuse(
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                &scope,
                &format!("the tool {tool:?} needs the scope {missing:?}"),
                super::request_id(message).as_ref(),
            ))
        };
        match body {
            Peek::Batch(batch) => batch
                .elements()?
                .find_map(|element| one(&peek_value(element))),
            single => one(single),
        }
    }

    /// The metadata document's response when `path` is one of its URLs (the resource's
    /// well-known URI, the root one, or the one of `endpoint`, the path served locally).
    pub(crate) fn well_known(
        &self,
        method: &Method,
        path: &str,
        endpoint: &str,
    ) -> Option<Response<Body>> {
        let suffix = path.strip_prefix(WELL_KNOWN)?;
        let endpoint = endpoint.trim_end_matches('/');
        if !(suffix.is_empty() || suffix == self.resource_path || suffix == endpoint) {
            return None;
        }
        if method != Method::GET && method != Method::HEAD {
            return Some(super::method_not_allowed("GET, HEAD"));
        }
        let mut r =
            Response::new(Full::new(Bytes::from(self.document().to_string())).boxed_unsync());
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
        Some(r)
    }
}

/// The bearer token of a request: `Ok(None)` when there is no `Authorization` header or it
/// uses another scheme; `Err` when it is malformed (sent twice, no token, characters
/// outside token68).
pub fn bearer(headers: &HeaderMap) -> Result<Option<&str>, String> {
    let mut all = headers.get_all(hyper::header::AUTHORIZATION).iter();
    let Some(value) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err("the Authorization header was sent more than once".into());
    }
    let value = value
        .to_str()
        .map_err(|_| "the Authorization header is not visible ASCII".to_string())?;
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = rest.trim_start_matches(' ');
    if token.is_empty() {
        return Err("the Bearer credentials carry no token".into());
    }
    // token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    let body = token.trim_end_matches('=');
    let token68 = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !token68 {
        return Err("the bearer token is not token68 syntax (RFC 6750 §2.1)".into());
    }
    Ok(Some(token))
}

/// `error_description` text: RFC 6750 allows `%x20-21 / %x23-5B / %x5D-7E`; others
/// become `'` (quotes) or `?`, and long text is cut.
fn description_text(d: &str) -> String {
    d.chars()
        .take(MAX_DESCRIPTION)
        .map(|c| match c {
            '"' => '\'',
            '\\' => '/',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nobody;
    impl Authorizer for Nobody {
        fn authorize<'a>(&'a self, _: &'a str) -> AuthFuture<'a> {
            Box::pin(async { Err(Rejection::InvalidToken("no".into())) })
        }
    }

    fn auth(resource: &str) -> Result<Auth, ConfigError> {
        Auth::new(
            ResourceMetadata::new(resource, ["https://as.example"]),
            Nobody,
        )
    }

    #[test]
    fn resource_uris() {
        let a = auth("https://MCP.example.com/mcp").unwrap();
        assert_eq!(
            a.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let root = auth("https://mcp.example.com").unwrap();
        assert_eq!(
            root.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        let slash = auth("https://mcp.example.com/").unwrap();
        assert_eq!(slash.metadata_url(), root.metadata_url());
        assert!(auth("http://127.0.0.1:8080/mcp").is_ok());
        assert!(auth("http://localhost/mcp").is_ok());
        assert!(auth("http://[::1]:9/mcp").is_ok());
        for bad in [
            "mcp.example.com",
            "http://mcp.example.com/mcp",
            "https://mcp.example.com/mcp#frag",
            "https://mcp.example.com/mcp?x=1",
            "ftp://mcp.example.com",
            "https://user@mcp.example.com",
            "https:///mcp",
        ] {
            assert!(auth(bad).is_err(), "{bad}");
        }
        let none: [&str; 0] = [];
        assert!(Auth::new(ResourceMetadata::new("https://a.example", none), Nobody).is_err());
        assert!(Auth::new(
            ResourceMetadata::new("https://a.example", ["not a url"]),
            Nobody
        )
        .is_err());
    }

    #[test]
    fn documents() {
        let a = auth("https://a.example/mcp").unwrap();
        let doc = a.document();
        assert_eq!(doc["resource"], "https://a.example/mcp");
        assert_eq!(
            doc["authorization_servers"],
            serde_json::json!(["https://as.example"])
        );
        assert_eq!(
            doc["bearer_methods_supported"],
            serde_json::json!(["header"])
        );
        assert!(doc.get("scopes_supported").is_none());
        let scoped = a.require_scopes(["mcp"]).unwrap();
        assert_eq!(
            scoped.document()["scopes_supported"],
            serde_json::json!(["mcp"])
        );
        let mut m = ResourceMetadata::new("https://a.example/mcp", ["https://as.example"]);
        m.scopes_supported = Some(vec!["mcp".into(), "files:read".into()]);
        m.resource_name = Some("Files".into());
        let named = Auth::new(m, Nobody).unwrap();
        assert_eq!(
            named.document()["scopes_supported"],
            serde_json::json!(["mcp", "files:read"])
        );
        assert_eq!(named.document()["resource_name"], "Files");
    }

    #[test]
    fn canonical() {
        assert_eq!(
            canonical_uri("HTTPS://Mcp.Example.com/mcp/"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical_uri("https://mcp.example.com/"),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical_uri("https://mcp.example.com/MCP"),
            "https://mcp.example.com/MCP"
        );
    }

    #[test]
    fn scopes_are_tokens() {
        let a = auth("https://a.example").unwrap();
        assert!(a
            .clone()
            .require_scopes(["mcp:read", "files.write"])
            .is_ok());
        for bad in ["", "a b", "a\"b", "a\\b", "é"] {
            assert!(a.clone().require_scopes([bad]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bearer_syntax() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(
                hyper::header::AUTHORIZATION,
                HeaderValue::from_str(v).unwrap(),
            );
            m
        };
        assert_eq!(bearer(&HeaderMap::new()), Ok(None));
        assert_eq!(
            bearer(&h("Bearer abc.DEF-_~+/==")),
            Ok(Some("abc.DEF-_~+/=="))
        );
        assert_eq!(bearer(&h("bearer   abc")), Ok(Some("abc")));
        assert_eq!(bearer(&h("Basic dXNlcjpwdw==")), Ok(None));
        for bad in [
            "Bearer",
            "Bearer ",
            "Bearer a b",
            "Bearer a,b",
            "Bearer ===",
            "Bearer a=b",
        ] {
            assert!(bearer(&h(bad)).is_err(), "{bad:?}");
        }
        let mut twice = h("Bearer a");
        twice.append(
            hyper::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer b"),
        );
        assert!(bearer(&twice).is_err());
    }

    #[test]
    fn challenges() {
        let a = auth("https://a.example/mcp")
            .unwrap()
            .require_scopes(["mcp"])
            .unwrap();
        assert_eq!(
            a.challenge(None, a.required_scopes(), None),
            r#"Bearer scope="mcp", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp""#
        );
        assert_eq!(
            a.challenge(Some("invalid_token"), &[], Some("bad \"quote\" \\ é")),
            r#"Bearer error="invalid_token", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp", error_description="bad 'quote' / ?""#
        );
    }

    /// The refusal `check_calls` makes of `body` (read as the session reads it): its status
    /// and JSON-RPC body.
    async fn refusal(a: &Auth, p: &Principal, body: &str) -> Option<(StatusCode, Value)> {
        let limits = mcp_rs_core::wire::json::Limits::default();
        let r = a.check_calls(p, &mcp_rs_core::wire::peek::peek(body.as_bytes(), limits))?;
        let status = r.status();
        let bytes = r.into_body().collect().await.ok()?.to_bytes();
        Some((status, serde_json::from_slice(&bytes).ok()?))
    }

    #[tokio::test]
    async fn calls_are_checked_one_by_one() {
        let a = auth("https://a.example/mcp")
            .unwrap()
            .require_scopes(["mcp"])
            .unwrap()
            .tool_scopes("admin", ["admin"])
            .unwrap();
        let user = Principal::new("u").with_scopes(["mcp"]);
        let admin = Principal::new("a").with_scopes(["mcp", "admin"]);
        let call = |id: u32, tool: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"}}}}"#
            )
        };
        let note = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"admin"}}"#;
        let id_of = |refused: Option<(StatusCode, Value)>| {
            let (status, body) = refused.expect("refused");
            assert_eq!(status, StatusCode::FORBIDDEN);
            body.get("id").cloned()
        };
        // One message; the name decoded as the session decodes it.
        assert_eq!(
            id_of(refusal(&a, &user, &call(1, "admin")).await),
            Some(1.into())
        );
        let escaped = call(2, "\\u0061dmin");
        assert_eq!(id_of(refusal(&a, &user, &escaped).await), Some(2.into()));
        assert!(refusal(&a, &user, &call(1, "whoami")).await.is_none());
        assert!(refusal(&a, &admin, &call(1, "admin")).await.is_none());
        // A batch: each element, the first refused one answering.
        let batch = format!(
            "[{},{},{}]",
            call(1, "whoami"),
            call(2, "admin"),
            call(3, "admin")
        );
        assert_eq!(id_of(refusal(&a, &user, &batch).await), Some(2.into()));
        let batch = format!("[{},{}]", call(1, "admin"), call(2, "whoami"));
        assert_eq!(id_of(refusal(&a, &user, &batch).await), Some(1.into()));
        let batch = format!("[{},{note}]", call(1, "whoami"));
        assert_eq!(id_of(refusal(&a, &user, &batch).await), None);
        let batch = format!("[{},{}]", call(1, "whoami"), call(2, "whoami"));
        assert!(refusal(&a, &user, &batch).await.is_none());
        let batch = format!("[{},{}]", call(1, "whoami"), call(2, "admin"));
        assert!(refusal(&a, &admin, &batch).await.is_none());
        // Elements the session refuses (-32600) call nothing.
        let unversioned = r#"{"id":2,"method":"tools/call","params":{"name":"admin"}}"#;
        let batch = format!(
            "[{},{unversioned},[{}]]",
            call(1, "whoami"),
            call(3, "admin")
        );
        assert!(refusal(&a, &user, &batch).await.is_none());
        // So does a body deeper than the session's bound.
        let limits = mcp_rs_core::wire::json::Limits { max_depth: 3 };
        let deep = format!("[{}]", call(1, "admin"));
        let peeked = mcp_rs_core::wire::peek::peek(deep.as_bytes(), limits);
        assert!(a.check_calls(&user, &peeked).is_some());
        let limits = mcp_rs_core::wire::json::Limits { max_depth: 2 };
        let peeked = mcp_rs_core::wire::peek::peek(deep.as_bytes(), limits);
        assert!(a.check_calls(&user, &peeked).is_none());
    }
}

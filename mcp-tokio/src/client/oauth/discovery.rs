//! Where the server's authorization server is and what it supports: protected-resource
//! metadata (RFC 9728), then authorization-server metadata (RFC 8414) or an OpenID Connect
//! discovery document, tried in the order the MCP specification gives.

use serde::Deserialize;
use url::Url;

use super::fetch::Fetcher;
use super::{secure_enough, OAuthError};

/// Protected-resource metadata (RFC 9728 §2), the fields the flow reads.
#[derive(Clone, Debug, Deserialize)]
pub struct ResourceMetadata {
    /// The resource identifier, exactly as published (sent as RFC 8707 `resource`).
    pub resource: String,
    /// The authorization servers' issuer identifiers; the flow uses the first.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes the resource understands.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization-server metadata (RFC 8414 §2, or an OpenID Connect discovery document),
/// the fields the flow reads.
#[derive(Clone, Debug, Deserialize)]
pub struct ServerMetadata {
    /// The issuer identifier; must equal the one the document was fetched for.
    pub issuer: String,
    /// Where the user authorizes.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591), if offered.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The scopes the server knows (`offline_access` among them means refresh tokens).
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// The grant types the server supports.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods; MCP clients need `S256` listed.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client authentication at the token endpoint (absent: `client_secret_basic`).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether a URL client id naming a Client ID Metadata Document is accepted.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// Whether the authorization response carries `iss` (RFC 9207); if so it is required.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

impl ServerMetadata {
    /// Whether PKCE with S256 is advertised. An absent list means the server does not
    /// support PKCE, and MCP clients must not proceed.
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == super::pkce::METHOD))
    }
}

const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
const OAUTH_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
const OIDC_WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// Parses a URL the flow will contact: `https`, or `http` to a loopback host.
pub fn parse_endpoint(url: &str) -> Result<Url, OAuthError> {
    let parsed = Url::parse(url).map_err(|e| OAuthError::Url {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    if !secure_enough(&parsed) {
        return Err(OAuthError::Url {
            url: url.to_owned(),
            reason: "OAuth endpoints must be https (or http to a loopback host)".into(),
        });
    }
    Ok(parsed)
}

/// The path of `url` without a trailing `/` (`""` for the root).
fn trimmed_path(url: &Url) -> &str {
    url.path().trim_end_matches('/')
}

fn with_path(base: &Url, path: &str) -> Url {
    let mut u = base.clone();
    u.set_path(path);
    u.set_query(None);
    u.set_fragment(None);
    u
}

/// Where to look for the protected-resource metadata of the MCP server at `server`, when
/// the challenge names no `resource_metadata`: the path-aware well-known URL first
/// (`/.well-known/oauth-protected-resource/mcp` for `/mcp`), then the root one.
pub fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    let path = trimmed_path(server);
    let mut urls = Vec::with_capacity(2);
    if !path.is_empty() {
        urls.push(with_path(server, &format!("{PRM_WELL_KNOWN}{path}")));
    }
    urls.push(with_path(server, PRM_WELL_KNOWN));
    urls
}

/// Where to look for the metadata of the authorization server `issuer`, in order. With a
/// path (`https://as/tenant1`): OAuth with the path inserted, OpenID Connect with the path
/// inserted, OpenID Connect with the path appended. Without: OAuth, then OpenID Connect.
pub fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = trimmed_path(issuer);
    if path.is_empty() {
        vec![
            with_path(issuer, OAUTH_WELL_KNOWN),
            with_path(issuer, OIDC_WELL_KNOWN),
        ]
    } else {
        vec![
            with_path(issuer, &format!("{OAUTH_WELL_KNOWN}{path}")),
            with_path(issuer, &format!("{OIDC_WELL_KNOWN}{path}")),
            with_path(issuer, &format!("{path}{OIDC_WELL_KNOWN}")),
        ]
    }
}

/// Whether the protected-resource metadata's `resource` is the server at `server`: the same
/// origin, and the same path or a parent of it (a resource published for `https://h` covers
/// `https://h/mcp`). The comparison is of parsed URLs; the `resource` string itself is what
/// goes to the authorization server.
pub fn check_resource(server: &Url, resource: &str) -> Result<(), OAuthError> {
    let mismatch = || OAuthError::ResourceMismatch {
        expected: server.to_string(),
        found: resource.to_owned(),
    };
    let parsed = Url::parse(resource).map_err(|_| mismatch())?;
    if parsed.fragment().is_some() || parsed.origin() != server.origin() {
        return Err(mismatch());
    }
    let want = trimmed_path(server);
    let have = trimmed_path(&parsed);
    let covered =
        want == have || (want.starts_with(have) && want.as_bytes().get(have.len()) == Some(&b'/'));
    if covered {
        Ok(())
    } else {
        Err(mismatch())
    }
}

/// Fetches the protected-resource metadata: from the challenge's `resource_metadata` if it
/// gave one, else (or if that has no document) from the well-known URLs in order. Checks its `resource` against `server`.
pub(crate) async fn fetch_resource_metadata(
    fetcher: &Fetcher,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<ResourceMetadata, OAuthError> {
    let mut candidates = Vec::with_capacity(3);
    if let Some(u) = from_challenge {
        candidates.push(Url::parse(u).map_err(|e| OAuthError::Url {
            url: u.to_owned(),
            reason: e.to_string(),
        })?);
    }
    // The well-known URLs also when the challenge's URL has no document (lenient).
    candidates.extend(resource_metadata_urls(server));
    let mut last = None;
    for url in candidates {
        if url.origin() != server.origin() && !secure_enough(&url) {
            return Err(OAuthError::Url {
                url: url.to_string(),
                reason: "protected-resource metadata must be https".into(),
            });
        }
        let reply = fetcher.get(&url).await?;
        if !reply.ok() {
            tracing::debug!(url = %url, status = reply.status, "no protected-resource metadata here");
            last = Some(OAuthError::Status {
                url: url.to_string(),
                status: reply.status,
            });
            continue;
        }
        let prm: ResourceMetadata = reply.json(&url)?;
        check_resource(server, &prm.resource)?;
        return Ok(prm);
    }
    Err(last.unwrap_or_else(|| OAuthError::Metadata("no protected-resource metadata".into())))
}

/// Fetches the authorization server's metadata from its well-known URLs in order; the
/// first document found must name `issuer` exactly (RFC 8414 §3.3: no normalization), else
/// it is refused and discovery stops.
pub(crate) async fn fetch_server_metadata(
    fetcher: &Fetcher,
    issuer: &str,
) -> Result<ServerMetadata, OAuthError> {
    let issuer_url = parse_endpoint(issuer)?;
    if issuer_url.query().is_some() || issuer_url.fragment().is_some() {
        return Err(OAuthError::Url {
            url: issuer.to_owned(),
            reason: "an issuer has no query or fragment".into(),
        });
    }
    let mut last = None;
    for url in server_metadata_urls(&issuer_url) {
        let reply = fetcher.get(&url).await?;
        if !reply.ok() {
            tracing::debug!(url = %url, status = reply.status, "no authorization-server metadata here");
            last = Some(OAuthError::Status {
                url: url.to_string(),
                status: reply.status,
            });
            continue;
        }
        let meta: ServerMetadata = reply.json(&url)?;
        if meta.issuer != issuer {
            return Err(OAuthError::IssuerMismatch {
                expected: issuer.to_owned(),
                found: meta.issuer,
            });
        }
        parse_endpoint(&meta.authorization_endpoint)?;
        parse_endpoint(&meta.token_endpoint)?;
        if let Some(r) = &meta.registration_endpoint {
            parse_endpoint(r)?;
        }
        return Ok(meta);
    }
    Err(last.unwrap_or_else(|| OAuthError::Metadata(format!("no metadata for {issuer}"))))
}

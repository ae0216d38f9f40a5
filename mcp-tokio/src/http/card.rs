//! The server card (SEP-2127) and the catalogs that point at it, generated from the
//! server's own [`ServerInfo`] and the revisions the core serves:
//!
//! - `GET <endpoint>/server-card`: the card (`application/mcp-server-card+json`, the v2
//!   card schema: `$schema`, `name`, `version`, `description`, optional `title` and
//!   `websiteUrl`, and one `streamable-http` remote at the endpoint's URL with its
//!   `supportedProtocolVersions`);
//! - `GET /.well-known/ai-catalog.json` and `GET /.well-known/mcp/catalog.json`: a catalog
//!   (`specVersion` `draft`) with one entry whose `url` is the card's.
//!
//! The card lists no tools, resources or prompts: the card schema forbids them (cards carry
//! identity and connection details; primitives are listed at run time). Absolute URLs are
//! built from the request's `Host` and scheme (`X-Forwarded-Proto: https` behind a
//! TLS-terminating proxy). Every document is public: served without authorization, with
//! `Access-Control-Allow-Origin: *` and `Cache-Control: public, max-age=3600`; any other
//! method than GET (or HEAD) gets 405.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE, HOST};
use hyper::{Method, Response, StatusCode};
use serde_json::{json, Value};

use super::Body;
use crate::config::ServerInfo;

/// The suffix of the card's path after the endpoint.
pub(crate) const CARD_SUFFIX: &str = "/server-card";
/// The AI Catalog's well-known path.
pub(crate) const AI_CATALOG: &str = "/.well-known/ai-catalog.json";
/// The MCP Catalog's well-known path.
pub(crate) const MCP_CATALOG: &str = "/.well-known/mcp/catalog.json";
/// The card's media type.
pub const CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";
/// The card schema's URI.
pub const CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json";
/// Longest `description` and `title` the card schema allows (characters).
const MAX_TEXT: usize = 100;

/// Which document a path names, if any (`endpoint`: the MCP endpoint's path, `""` when
/// mounted).
/// Asked for every request: compares in place, without building the card's path.
fn document(path: &str, endpoint: &str) -> Option<bool> {
    let is_card = path
        .strip_prefix(endpoint.trim_end_matches('/'))
        .is_some_and(|rest| rest == CARD_SUFFIX);
    if is_card {
        Some(true)
    } else if path == AI_CATALOG || path == MCP_CATALOG {
        Some(false)
    } else {
        None
    }
}

/// `s`, cut to `MAX_TEXT` characters.
fn clip(s: &str) -> String {
    s.chars().take(MAX_TEXT).collect()
}

/// The endpoint's absolute URL as the client reached it.
fn endpoint_url(parts: &hyper::http::request::Parts, endpoint: &str) -> String {
    let forwarded_https = parts
        .headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    let scheme = match parts.uri.scheme_str() {
        Some(s) => s,
        None if forwarded_https => "https",
        None => "http",
    };
    let host = parts
        .uri
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            parts
                .headers
                .get(HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "localhost".into());
    format!("{scheme}://{host}{endpoint}")
}

/// The server card of `info` for a server reached at `url`.
pub fn server_card(info: &ServerInfo, url: &str) -> Value {
    let versions: Vec<&str> = mcp_rs_core::ProtocolVersion::ALL
        .iter()
        .map(|v| v.as_str())
        .collect();
    let description = info
        .description
        .as_deref()
        .or(info.title.as_deref())
        .filter(|d| !d.is_empty())
        .unwrap_or(&info.name);
    let mut card = json!({
        "$schema": CARD_SCHEMA,
        "name": info.name,
        "version": info.version,
        "description": clip(description),
        "remotes": [{
            "type": "streamable-http",
            "url": url,
            "supportedProtocolVersions": versions,
        }],
    });
    if let Some(t) = info.title.as_deref().filter(|t| !t.is_empty()) {
        card["title"] = json!(clip(t));
    }
    if let Some(w) = info.website_url.as_deref() {
        card["websiteUrl"] = json!(w);
    }
    card
}

/// The catalog pointing at the card at `card_url` (its entry's `identifier` is
/// `urn:air:<host>:<name after the last '/'>`).
pub fn catalog(info: &ServerInfo, host: &str, card_url: &str) -> Value {
    let host = host.split(':').next().unwrap_or(host);
    let short = info.name.rsplit('/').next().unwrap_or(&info.name);
    json!({
        "specVersion": "draft",
        "entries": [{
            "identifier": format!("urn:air:{host}:{short}"),
            "displayName": info.title.as_deref().unwrap_or(&info.name),
            "type": CARD_MEDIA_TYPE,
            "url": card_url,
        }],
    })
}

/// The response to a request for the card or a catalog, or `None` for any other path.
pub(crate) fn respond(
    info: &ServerInfo,
    parts: &hyper::http::request::Parts,
    endpoint: &str,
) -> Option<Response<Body>> {
    let is_card = document(parts.uri.path(), endpoint)?;
    if parts.method != Method::GET && parts.method != Method::HEAD {
        let mut r = Response::new(Full::new(Bytes::new()).boxed_unsync());
        *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(r);
    }
    let url = endpoint_url(parts, endpoint);
    let card_url = format!("{}{CARD_SUFFIX}", url.trim_end_matches('/'));
    let (doc, media) = if is_card {
        (server_card(info, &url), CARD_MEDIA_TYPE)
    } else {
        let host = url.split("://").nth(1).and_then(|r| r.split('/').next());
        (
            catalog(info, host.unwrap_or("localhost"), &card_url),
            "application/json",
        )
    };
    let body = if parts.method == Method::HEAD {
        Bytes::new()
    } else {
        Bytes::from(doc.to_string())
    };
    let mut r = Response::new(Full::new(body).boxed_unsync());
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(media));
    h.insert("access-control-allow-origin", HeaderValue::from_static("*"));
    h.insert(
        "access-control-allow-methods",
        HeaderValue::from_static("GET"),
    );
    h.insert(
        "access-control-allow-headers",
        HeaderValue::from_static("Content-Type"),
    );
    h.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_named_by_exact_paths() {
        for endpoint in ["/mcp", "/mcp/", "/mcp//"] {
            assert_eq!(document("/mcp/server-card", endpoint), Some(true));
            assert_eq!(document("/mcp", endpoint), None);
            assert_eq!(document("/mcp/server-card/", endpoint), None);
            assert_eq!(document("/mcpx/server-card", endpoint), None);
            assert_eq!(document("/mcp/server-cards", endpoint), None);
            assert_eq!(document("/server-card", endpoint), None);
            assert_eq!(document(AI_CATALOG, endpoint), Some(false));
            assert_eq!(document(MCP_CATALOG, endpoint), Some(false));
        }
        // Mounted (no endpoint path): the card is at the root.
        assert_eq!(document("/server-card", ""), Some(true));
        assert_eq!(document("/mcp/server-card", ""), None);
        assert_eq!(document("", ""), None);
    }
}

//! Optional authorization of `everything --http`: the server as an OAuth 2.1 resource
//! server validating JWT access tokens (mcp-tokio's `http::auth` and `http::jwt`).
//!
//! ```text
//! everything --http 127.0.0.1:3000 --auth-issuer https://idp.example \
//!     --auth-keys jwks.json --auth-scope mcp --auth-tool-scope test_sampling=mcp:sampling
//! ```
//!
//! Off unless `--auth-issuer` is given; then every request to `/mcp` needs
//! `Authorization: Bearer <JWT>` signed by one of the keys, and the Protected Resource
//! Metadata is served at `/.well-known/oauth-protected-resource[/mcp]`. With it comes one
//! more tool, `auth_whoami`, which answers with the caller's principal (subject, scopes,
//! client) as its handler sees it.

use std::net::SocketAddr;

use mcp_rs_tokio::http::auth::{Auth, Principal, ResourceMetadata};
use mcp_rs_tokio::http::jwt::{JwtConfig, JwtValidator, KeySet, DEFAULT_RELOAD};
use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Handler, ToolDef, Tools};

/// The flags' help text.
pub(crate) const USAGE: &str = "\
Authorization (HTTP only; off unless --auth-issuer is given):
  --auth-issuer URL        require JWT access tokens from this issuer (`iss`)
  --auth-keys FILE         its verification keys: a JWK set (JSON, re-read when a token
                           names a new kid) or one PEM public key (required)
  --auth-audience URI      the resource URI tokens must be issued for (`aud`; default
                           http://ADDR/mcp of the bound address)
  --auth-server URL        the authorization server the metadata names (default: the issuer)
  --auth-scope SCOPE       a scope every request needs (repeatable)
  --auth-tool-scope T=S    a scope calls of tool T need (repeatable)";

/// The authorization flags given.
#[derive(Debug, Default)]
pub(crate) struct Flags {
    issuer: Option<String>,
    keys: Option<String>,
    audience: Option<String>,
    server: Option<String>,
    scopes: Vec<String>,
    tool_scopes: Vec<(String, String)>,
}

impl Flags {
    /// Whether `flag` is one of these.
    pub(crate) fn takes(flag: &str) -> bool {
        matches!(
            flag,
            "--auth-issuer"
                | "--auth-keys"
                | "--auth-audience"
                | "--auth-server"
                | "--auth-scope"
                | "--auth-tool-scope"
        )
    }

    /// Records `flag` with its `value`.
    pub(crate) fn set(&mut self, flag: &str, value: Option<String>) -> Result<(), String> {
        let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
        match flag {
            "--auth-issuer" => self.issuer = Some(value),
            "--auth-keys" => self.keys = Some(value),
            "--auth-audience" => self.audience = Some(value),
            "--auth-server" => self.server = Some(value),
            "--auth-scope" => self.scopes.push(value),
            "--auth-tool-scope" => {
                let (tool, scope) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--auth-tool-scope needs TOOL=SCOPE, not {value:?}"))?;
                self.tool_scopes.push((tool.into(), scope.into()));
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
        Ok(())
    }

    /// Whether authorization is on.
    pub(crate) fn enabled(&self) -> bool {
        self.issuer.is_some()
    }

    /// Adds `auth_whoami` when authorization is on.
    pub(crate) fn register(&self, tools: &Tools) {
        if !self.enabled() {
            return;
        }
        tools.add(
            ToolDef::new("auth_whoami", r#"{"type":"object"}"#)
                .description("The caller's principal: subject, issuer, scopes and client"),
            Handler::sync(|request, r| {
                let who = request.adapter_data::<Principal>().map(|p| {
                    serde_json::json!({
                        "subject": p.subject,
                        "issuer": p.issuer,
                        "scopes": p.scopes,
                        "clientId": p.client_id,
                    })
                });
                r.text(&who.unwrap_or_default().to_string());
            }),
        );
    }

    /// Whether the flags make sense together: `--auth-issuer` with the others, and only
    /// over HTTP (`http`).
    pub(crate) fn check(&self, http: bool) -> Result<(), String> {
        let others = self.keys.is_some()
            || self.audience.is_some()
            || self.server.is_some()
            || !self.scopes.is_empty()
            || !self.tool_scopes.is_empty();
        match (self.enabled(), others, http) {
            (false, true, _) => Err("the --auth-* flags need --auth-issuer".into()),
            (true, _, false) => Err("authorization needs --http".into()),
            (true, _, true) if self.keys.is_none() => Err("--auth-issuer needs --auth-keys".into()),
            _ => Ok(()),
        }
    }

    /// The HTTP settings: the defaults, plus authorization when asked for. `addr` is the
    /// bound address (for the default audience).
    pub(crate) fn http_config(&self, addr: Option<SocketAddr>) -> Result<HttpConfig, String> {
        let mut config = HttpConfig::default();
        let Some(issuer) = &self.issuer else {
            return Ok(config);
        };
        let keys = self
            .keys
            .as_ref()
            .ok_or("--auth-issuer needs --auth-keys")?;
        let resource = match (&self.audience, addr) {
            (Some(a), _) => a.clone(),
            (None, Some(addr)) => format!("http://{addr}{}", config.path),
            (None, None) => return Err("no address to derive the audience from".into()),
        };
        let key_set = KeySet::from_file(keys, None).map_err(|e| e.to_string())?;
        let validator = JwtValidator::new(JwtConfig::new(issuer, &resource), key_set)
            .map_err(|e| e.to_string())?
            .reload_from(keys, DEFAULT_RELOAD);
        let server = self.server.clone().unwrap_or_else(|| issuer.clone());
        let metadata = ResourceMetadata::new(&resource, [server]);
        let mut auth = Auth::new(metadata, validator)
            .and_then(|a| a.require_scopes(self.scopes.iter().cloned()))
            .map_err(|e| e.to_string())?;
        let mut per_tool: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (tool, scope) in &self.tool_scopes {
            per_tool.entry(tool).or_default().push(scope.clone());
        }
        for (tool, scopes) in per_tool {
            auth = auth.tool_scopes(tool, scopes).map_err(|e| e.to_string())?;
        }
        tracing::info!(resource, metadata = auth.metadata_url(), "authorization on");
        config.auth = Some(auth);
        Ok(config)
    }
}

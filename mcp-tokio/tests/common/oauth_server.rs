//! The in-process authorization server (and enterprise IdP) the OAuth client tests run
//! against (`client_oauth.rs`, `client_oauth_assertion.rs`; included with `#[path]`): one
//! HTTP/1.1 request per connection, each recorded.
#![allow(dead_code)] // each test file uses a part

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

/// How the mock authorization server misbehaves.
#[derive(Clone, Copy, Default)]
pub(crate) struct Quirks {
    pub(crate) wrong_metadata_issuer: bool,
    pub(crate) wrong_iss: bool,
    pub(crate) no_s256: bool,
    /// The token endpoint answers a DPoP proof without the nonce `as-nonce` with
    /// `use_dpop_nonce`, and issues DPoP tokens.
    pub(crate) dpop_nonce: bool,
    /// The metadata lists only `client_secret_basic` (else only `client_secret_post`).
    pub(crate) basic_only: bool,
    /// Tokens expire at once and come without a refresh token.
    pub(crate) short_lived: bool,
    /// The metadata's `grant_types_supported` lacks the JWT-bearer grant (else it is
    /// absent).
    pub(crate) no_jwt_bearer: bool,
}

/// The ID-JAG the mock IdP (`POST /idp/token`) issues.
pub(crate) const ID_JAG: &str = "eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.id-jag.sig";

/// One HTTP/1.1 request per connection: `METHOD path` and the body, recorded; answers from
/// `route`.
pub(crate) async fn mock(quirks: Quirks) -> (String, Arc<Mutex<Vec<(String, String)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let log = Arc::new(Mutex::new(Vec::new()));
    let (base2, log2) = (base.clone(), log.clone());
    tokio::spawn(async move {
        let mut tokens = 0;
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            let (head, body) = loop {
                let n = sock.read(&mut chunk).await.unwrap();
                if n == 0 {
                    break (String::new(), String::new());
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        break (
                            text[..end].to_owned(),
                            text[end + 4..end + 4 + len].to_owned(),
                        );
                    }
                }
            };
            let line = head.lines().next().unwrap_or("").to_owned();
            let mut parts = line.split(' ');
            let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let url = Url::parse(&format!("{base2}{target}")).unwrap();
            let auth_header = head
                .lines()
                .find(|l| l.to_ascii_lowercase().starts_with("authorization:"))
                .map(|l| l[14..].trim().to_owned());
            let dpop_header = head
                .lines()
                .find(|l| l.to_ascii_lowercase().starts_with("dpop:"))
                .map(|l| l[5..].trim().to_owned());
            if let Some(proof) = &dpop_header {
                log2.lock()
                    .unwrap()
                    .push((format!("DPOP {target}"), proof.clone()));
            }
            log2.lock().unwrap().push((
                format!("{method} {target}"),
                format!(
                    "{body}{}",
                    auth_header.map(|h| format!(" [{h}]")).unwrap_or_default()
                ),
            ));
            let issuer = if quirks.wrong_metadata_issuer {
                "https://attacker.example".to_owned()
            } else {
                base2.clone()
            };
            let (status, extra, body) = match (method, url.path()) {
                ("GET", "/.well-known/oauth-protected-resource/mcp") => (
                    200,
                    String::new(),
                    json!({"resource": format!("{base2}/mcp"), "authorization_servers": [base2], "scopes_supported": ["a", "b"]}).to_string(),
                ),
                ("GET", "/.well-known/oauth-authorization-server") => (
                    200,
                    String::new(),
                    json!({
                        "issuer": issuer,
                        "authorization_endpoint": format!("{base2}/authorize"),
                        "token_endpoint": format!("{base2}/token"),
                        "registration_endpoint": format!("{base2}/register"),
                        "code_challenge_methods_supported": if quirks.no_s256 { json!(["plain"]) } else { json!(["S256"]) },
                        "authorization_response_iss_parameter_supported": true,
                        "token_endpoint_auth_methods_supported": [if quirks.basic_only { "client_secret_basic" } else { "client_secret_post" }],
                        "scopes_supported": ["a", "b", "c", "offline_access"],
                        "grant_types_supported": if quirks.no_jwt_bearer { json!(["authorization_code"]) } else { json!(null) },
                    })
                    .to_string(),
                ),
                ("POST", "/register") => (
                    201,
                    String::new(),
                    json!({"client_id": "cid", "client_secret": "csecret", "token_endpoint_auth_method": "client_secret_post"}).to_string(),
                ),
                ("GET", "/authorize") => {
                    let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
                    let mut to = Url::parse(&q["redirect_uri"]).unwrap();
                    let iss = if quirks.wrong_iss { "https://evil.example".to_owned() } else { base2.clone() };
                    to.query_pairs_mut()
                        .append_pair("code", "the-code")
                        .append_pair("state", &q["state"])
                        .append_pair("iss", &iss);
                    (302, format!("Location: {to}\r\n"), String::new())
                }
                ("POST", "/token")
                    if quirks.dpop_nonce
                        && dpop_header
                            .as_deref()
                            .is_none_or(|p| claims_of(p)["nonce"] != "as-nonce") =>
                {
                    (
                        400,
                        "DPoP-Nonce: as-nonce\r\n".to_owned(),
                        json!({"error": "use_dpop_nonce"}).to_string(),
                    )
                }
                ("POST", "/idp/token") => {
                    let form: std::collections::HashMap<_, _> =
                        url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
                    if form.get("subject_token").map(String::as_str) == Some("revoked") {
                        (400, String::new(), json!({"error": "invalid_grant", "error_description": "the session ended"}).to_string())
                    } else {
                        (200, String::new(), json!({
                            "access_token": ID_JAG,
                            "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                            "token_type": "N_A",
                            "expires_in": 300,
                        }).to_string())
                    }
                }
                ("POST", "/token") => {
                    let form: std::collections::HashMap<_, _> =
                        url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
                    if form.get("assertion").map(String::as_str) == Some("rejected") {
                        (400, String::new(), json!({"error": "invalid_grant", "error_description": "assertion audience is invalid"}).to_string())
                    } else {
                        tokens += 1;
                        let mut answer = json!({
                            "access_token": format!("tok{tokens}"),
                            "token_type": if dpop_header.is_some() { "DPoP" } else { "bearer" },
                            "expires_in": if quirks.short_lived { 0 } else { 3600 },
                            "refresh_token": "refresh-1",
                            "scope": form.get("scope"),
                        });
                        if quirks.short_lived {
                            answer.as_object_mut().unwrap().remove("refresh_token");
                        }
                        (200, String::new(), answer.to_string())
                    }
                }
                _ => (404, String::new(), String::new()),
            };
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (base, log)
}

/// The claims of a compact JWS.
pub(crate) fn claims_of(jwt: &str) -> serde_json::Value {
    use base64::Engine;
    let part = jwt.split('.').nth(1).unwrap_or("");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or_default()
}

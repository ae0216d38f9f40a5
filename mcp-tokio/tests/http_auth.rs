//! Authorization end to end over loopback HTTP (hyper's client, real signed tokens): the
//! Protected Resource Metadata document, the 401/403/400 challenges of RFC 6750 for missing,
//! malformed, expired, not-yet-valid, foreign, forged and under-scoped tokens, per-tool
//! scopes, the principal as handlers see it, sessions bound to the principal that created
//! them, in both protocol eras.
//!
//! Keys are fixed test-only pairs in `tests/fixtures/auth` (RSA, EC P-256, Ed25519, and an
//! "attacker" RSA key); tokens are signed here with `jsonwebtoken`.
#[cfg(not(feature = "jwt"))]
compile_error!("needs feature `jwt`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{HeaderMap, Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_rs_core::Config;
use mcp_rs_tokio::http::auth::{
    authorizer_fn, Auth, Authorizer, Principal, Rejection, ResourceMetadata,
};
use mcp_rs_tokio::http::jwt::{JwtConfig, JwtValidator, KeySet};
use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{random_key, Handler, Limits, Server, ServerInfo, ToolDef, ToolReply, Tools};
use serde_json::{json, Value};

const ISSUER: &str = "https://auth.example.test";
const OBJECT: &str = r#"{"type":"object"}"#;
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/auth/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn rsa() -> EncodingKey {
    EncodingKey::from_rsa_pem(&fixture("rsa.key.pem")).unwrap()
}
fn other_rsa() -> EncodingKey {
    EncodingKey::from_rsa_pem(&fixture("other-rsa.key.pem")).unwrap()
}
fn ec() -> EncodingKey {
    EncodingKey::from_ec_pem(&fixture("ec.key.pem")).unwrap()
}
fn ed() -> EncodingKey {
    EncodingKey::from_ed_pem(&fixture("ed.key.pem")).unwrap()
}

/// The IdP's JWK set: the public halves of the RSA, EC and Ed25519 keys, by kid.
fn jwks() -> String {
    use base64::Engine as _;
    let mut keys = Vec::new();
    for (kid, key, alg) in [
        ("rsa-1", rsa(), Algorithm::RS256),
        ("ec-1", ec(), Algorithm::ES256),
    ] {
        let mut jwk = Jwk::from_encoding_key(&key, alg).unwrap();
        jwk.common.key_id = Some(kid.into());
        if kid == "rsa-1" {
            // Without `alg`, an RSA key verifies RS* and PS* tokens.
            jwk.common.key_algorithm = None;
        }
        keys.push(serde_json::to_value(jwk).unwrap());
    }
    // (jsonwebtoken cannot write Ed25519 JWKs: the key is the last 32 bytes of the SPKI.)
    let pem = String::from_utf8(fixture("ed.pub.pem")).unwrap();
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&der[der.len() - 32..]);
    keys.push(json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "ed-1", "use": "sig"}));
    json!({ "keys": keys }).to_string()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims of a good token for `resource`: alice, scope `mcp`, valid for 5 minutes.
fn claims(resource: &str) -> Value {
    json!({
        "iss": ISSUER,
        "aud": resource,
        "sub": "alice",
        "client_id": "test-client",
        "scope": "mcp",
        "iat": now(),
        "nbf": now() - 10,
        "exp": now() + 300,
    })
}

fn sign(alg: Algorithm, kid: Option<&str>, key: &EncodingKey, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(Into::into);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn rs256(claims: &Value) -> String {
    sign(Algorithm::RS256, Some("rsa-1"), &rsa(), claims)
}

/// A token with a hand-made header (`alg` values `jsonwebtoken` refuses to write).
fn forged(header: &Value, claims: &Value, signature: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!(
        "{}.{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string()),
        b64.encode(signature)
    )
}

/// The tools: who called (sync and async), and an `admin` tool needing the scope `admin`.
fn tools() -> Tools {
    fn who(principal: Option<&Principal>) -> String {
        match principal {
            Some(p) => format!("{}|{}", p.subject, p.scopes.join(" ")),
            None => "anonymous".into(),
        }
    }
    let tools = Tools::new();
    tools.add(
        ToolDef::new("whoami", OBJECT),
        Handler::sync(|request, r| {
            r.text(&who(request.adapter_data::<Principal>()));
        }),
    );
    tools.add(
        ToolDef::new("whoami_async", OBJECT),
        Handler::async_fn(|_, ctx| async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            ToolReply::text(who(ctx.principal().map(|p| &**p)))
        }),
    );
    tools.add(
        ToolDef::new("admin", OBJECT),
        Handler::sync(|_, r| {
            r.text("admin done");
        }),
    );
    tools
}

struct Running {
    server: Server,
    base: String,
    resource: String,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    fn url(&self) -> String {
        self.resource.clone()
    }
    async fn stop(self) {
        self.server.shutdown();
        self.task.await.unwrap();
    }
}

/// A server whose authorization `auth` builds from the resource URI.
async fn serve_with(auth: impl FnOnce(&str) -> Auth) -> Running {
    serve_configured(Config::new(random_key()), auth).await
}

/// [`serve_with`] with a session policy of its own (`config`).
async fn serve_configured(config: Config, auth: impl FnOnce(&str) -> Auth) -> Running {
    let info = ServerInfo {
        name: "auth-test".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::with(info, config, Limits::default(), tools());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let resource = format!("{base}/mcp");
    let mut config = HttpConfig::default();
    config.auth = Some(auth(&resource));
    let s = server.clone();
    let task = tokio::spawn(async move { s.serve_http_with(listener, config).await.unwrap() });
    Running {
        server,
        base,
        resource,
        task,
    }
}

fn validator(resource: &str) -> JwtValidator {
    let mut keys = KeySet::new();
    keys.add_jwks(&jwks()).unwrap();
    JwtValidator::new(JwtConfig::new(ISSUER, resource), keys).unwrap()
}

/// JWT authorization requiring `mcp` for everything and `admin` for the tool `admin`.
async fn serve() -> Running {
    serve_configured(Config::new(random_key()), jwt_auth).await
}

/// The authorization of [`serve`].
fn jwt_auth(resource: &str) -> Auth {
    Auth::new(
        ResourceMetadata::new(resource, [ISSUER]),
        validator(resource),
    )
    .unwrap()
    .require_scopes(["mcp"])
    .unwrap()
    .tool_scopes("admin", ["admin"])
    .unwrap()
}

#[derive(Debug)]
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
    fn challenge(&self) -> Challenge {
        let values: Vec<_> = self.headers.get_all("www-authenticate").iter().collect();
        assert_eq!(values.len(), 1, "one WWW-Authenticate header: {self:?}");
        parse_challenge(values[0].to_str().unwrap())
    }
    fn text(&self) -> &str {
        self.body["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a text result: {self:?}"))
    }
}

async fn send(method: Method, url: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Reply {
    send_text(method, url, headers, body.map(Value::to_string)).await
}

/// [`send`] of a body as text (not always JSON).
async fn send_text(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Reply {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut req = Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let payload = match body {
        Some(b) => {
            req = req
                .header("content-type", "application/json")
                .header("accept", "application/json");
            Bytes::from(b)
        }
        None => Bytes::new(),
    };
    let resp = tokio::time::timeout(
        Duration::from_secs(10),
        client.request(req.body(Full::new(payload)).unwrap()),
    )
    .await
    .expect("an answer within 10 s")
    .expect("an HTTP response");
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("JSON body ({e}): {bytes:?}"))
    };
    Reply {
        status,
        headers,
        body,
    }
}

/// A POST of `body` with `token` (if any) and extra headers.
async fn post(url: &str, token: Option<&str>, extra: &[(&str, &str)], body: &Value) -> Reply {
    post_text(url, token, extra, &body.to_string()).await
}

/// [`post`] of a body as text (not always JSON).
async fn post_text(url: &str, token: Option<&str>, extra: &[(&str, &str)], body: &str) -> Reply {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers: Vec<(&str, &str)> = extra.to_vec();
    if let Some(a) = &auth {
        headers.push(("authorization", a));
    }
    send_text(Method::POST, url, &headers, Some(body.to_owned())).await
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

/// A stateless 2026-07-28 request with its `_meta` and routing headers.
async fn modern(url: &str, token: Option<&str>, method: &str, name: Option<&str>) -> Reply {
    let mut params = match name {
        Some(name) => json!({"name": name, "arguments": {}}),
        None => json!({}),
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    post(url, token, &headers, &body).await
}

/// A stateless 2026-07-28 `tools/call`.
async fn modern_call(url: &str, token: Option<&str>, tool: &str) -> Reply {
    modern(url, token, "tools/call", Some(tool)).await
}

/// A legacy session opened with `token`: its id.
async fn initialize(url: &str, token: &str, version: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = post(url, Some(token), &[], &init).await;
    assert_eq!(r.status, StatusCode::OK, "{r:?}");
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(url, Some(token), &[("mcp-session-id", &id)], &note).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{r:?}");
    id
}

async fn session_call(
    url: &str,
    token: Option<&str>,
    session: &str,
    version: &str,
    tool: &str,
) -> Reply {
    let headers = [
        ("mcp-session-id", session),
        ("mcp-protocol-version", version),
    ];
    post(url, token, &headers, &call(3, tool)).await
}

// ---- WWW-Authenticate, parsed strictly (RFC 7235 §2.1, RFC 6750 §3) ----------------------------

#[derive(Debug, Default)]
struct Challenge {
    params: Vec<(String, String)>,
}

impl Challenge {
    fn get(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// `Bearer 1*SP auth-param *( OWS "," OWS auth-param )`, each `token "=" quoted-string`
/// with RFC 6750's value characters; each parameter at most once.
fn parse_challenge(text: &str) -> Challenge {
    let rest = text
        .strip_prefix("Bearer ")
        .unwrap_or_else(|| panic!("the Bearer scheme: {text:?}"));
    let mut c = Challenge::default();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&ch) = chars.peek() {
            if !is_tchar(ch) {
                break;
            }
            name.push(ch);
            chars.next();
        }
        assert!(!name.is_empty(), "a parameter name in {text:?}");
        assert_eq!(chars.next(), Some('='), "'=' after {name} in {text:?}");
        assert_eq!(
            chars.next(),
            Some('"'),
            "a quoted value for {name} in {text:?}"
        );
        let mut value = String::new();
        loop {
            match chars.next() {
                Some('"') => break,
                Some(ch)
                    if ch == ' '
                        || ch == '!'
                        || ('#'..='[').contains(&ch)
                        || (']'..='~').contains(&ch) =>
                {
                    value.push(ch)
                }
                other => panic!("{other:?} in the value of {name} in {text:?}"),
            }
        }
        assert!(c.get(&name).is_none(), "{name} twice in {text:?}");
        c.params.push((name, value));
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        match chars.next() {
            None => break,
            Some(',') => continue,
            Some(other) => panic!("{other:?} after a parameter in {text:?}"),
        }
    }
    c
}

/// The challenge of a 401: the metadata URL, the `scope` hint, and `error` as given.
fn assert_401(r: &Reply, run: &Running, error: Option<&str>) -> Challenge {
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{r:?}");
    let c = r.challenge();
    assert_eq!(
        c.get("resource_metadata"),
        Some(format!("{}/.well-known/oauth-protected-resource/mcp", run.base).as_str())
    );
    assert_eq!(c.get("scope"), Some("mcp"), "{c:?}");
    assert_eq!(c.get("error"), error, "{c:?}");
    assert_eq!(
        c.get("error_description").is_some(),
        error.is_some(),
        "{c:?}"
    );
    assert!(
        r.body["error"]["message"].is_string(),
        "a JSON-RPC error body: {r:?}"
    );
    c
}

async fn invalid_token(run: &Running, token: &str, why: &str) {
    let r = post(&run.url(), Some(token), &[], &call(1, "whoami")).await;
    let c = assert_401(&r, run, Some("invalid_token"));
    let d = c.get("error_description").unwrap();
    assert!(d.contains(why), "{why:?} in {d:?}");
}

// ---- the tests ---------------------------------------------------------------------------------

/// RFC 9728: the document is served without a token at the path-suffixed well-known URI
/// (the one the 401 names) and at the root one, with the required `resource` equal to the
/// resource identifier and every member of its registered JSON type.
#[tokio::test]
async fn metadata_document() {
    let run = serve().await;
    let missing = post(&run.url(), None, &[], &call(1, "whoami")).await;
    let announced = missing
        .challenge()
        .get("resource_metadata")
        .unwrap()
        .to_owned();
    let root = format!("{}/.well-known/oauth-protected-resource", run.base);
    for url in [announced.as_str(), root.as_str()] {
        let r = send(Method::GET, url, &[], None).await;
        assert_eq!(r.status, StatusCode::OK, "{url}: {r:?}");
        assert_eq!(r.header("content-type"), Some("application/json"));
        let doc = r.body.as_object().expect("a JSON object");
        assert_eq!(doc["resource"], json!(run.resource));
        let strings = |name: &str| -> Vec<String> {
            doc[name]
                .as_array()
                .unwrap_or_else(|| panic!("{name} is an array"))
                .iter()
                .map(|v| {
                    v.as_str()
                        .unwrap_or_else(|| panic!("{name}: strings"))
                        .to_owned()
                })
                .collect()
        };
        assert_eq!(strings("authorization_servers"), [ISSUER]);
        assert_eq!(strings("scopes_supported"), ["mcp"]);
        assert_eq!(strings("bearer_methods_supported"), ["header"]);
        for (k, v) in doc {
            assert!(!v.is_null(), "{k} is null");
        }
    }
    // Not a document: another suffix, or another method.
    let other = format!(
        "{}/.well-known/oauth-protected-resource/elsewhere",
        run.base
    );
    assert_eq!(
        send(Method::GET, &other, &[], None).await.status,
        StatusCode::NOT_FOUND
    );
    let r = send(Method::POST, &announced, &[], Some(&json!({}))).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    run.stop().await;
}

/// No credentials: 401 with the metadata URL and the scope hint, no `error` (RFC 6750
/// §3.1); the same for another scheme. A malformed header is a 400 `invalid_request`.
#[tokio::test]
async fn missing_and_malformed_credentials() {
    let run = serve().await;
    let r = post(&run.url(), None, &[], &call(1, "whoami")).await;
    assert_401(&r, &run, None);
    // Exact text, as clients parse it.
    assert_eq!(
        r.header("www-authenticate").unwrap(),
        format!(
            "Bearer scope=\"mcp\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            run.base
        )
    );
    let basic = post(
        &run.url(),
        None,
        &[("authorization", "Basic YWxpY2U6cHc=")],
        &call(1, "whoami"),
    )
    .await;
    assert_401(&basic, &run, None);
    // GET and DELETE need a token as well.
    let get = send(
        Method::GET,
        &run.url(),
        &[("mcp-session-id", "x"), ("accept", "text/event-stream")],
        None,
    )
    .await;
    assert_401(&get, &run, None);
    let delete = send(Method::DELETE, &run.url(), &[("mcp-session-id", "x")], None).await;
    assert_401(&delete, &run, None);
    for bad in ["Bearer", "Bearer a b", "Bearer a,b"] {
        let r = post(
            &run.url(),
            None,
            &[("authorization", bad)],
            &call(1, "whoami"),
        )
        .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad:?}: {r:?}");
        assert_eq!(r.challenge().get("error"), Some("invalid_request"));
    }
    let good = rs256(&claims(&run.resource));
    let twice = [
        ("authorization", format!("Bearer {good}")),
        ("authorization", format!("Bearer {good}")),
    ];
    let twice: Vec<(&str, &str)> = twice.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = post(&run.url(), None, &twice, &call(1, "whoami")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{r:?}");
    run.stop().await;
}

/// Every way a token can be wrong is a 401 `invalid_token` naming the reason.
#[tokio::test]
async fn invalid_tokens() {
    let run = serve().await;
    let res = run.resource.clone();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = claims(&res);
        f(&mut c);
        c
    };
    invalid_token(&run, "abc.def", "well-formed").await;
    invalid_token(&run, "not-a-jwt", "well-formed").await;
    let expired = with(&|c| c["exp"] = json!(now() - 600));
    invalid_token(&run, &rs256(&expired), "expired").await;
    let early = with(&|c| c["nbf"] = json!(now() + 600));
    invalid_token(&run, &rs256(&early), "not valid yet").await;
    let foreign = with(&|c| c["iss"] = json!("https://evil.example"));
    invalid_token(&run, &rs256(&foreign), "issuer").await;
    let elsewhere = with(&|c| c["aud"] = json!("https://other.example/mcp"));
    invalid_token(&run, &rs256(&elsewhere), "not issued for this resource").await;
    let no_aud = with(&|c| {
        c.as_object_mut().unwrap().remove("aud");
    });
    invalid_token(&run, &rs256(&no_aud), "aud").await;
    let no_exp = with(&|c| {
        c.as_object_mut().unwrap().remove("exp");
    });
    invalid_token(&run, &rs256(&no_exp), "exp").await;
    let no_sub = with(&|c| {
        c.as_object_mut().unwrap().remove("sub");
    });
    invalid_token(&run, &rs256(&no_sub), "sub").await;
    // Signed by another key under the real key's kid.
    let forged_sig = sign(Algorithm::RS256, Some("rsa-1"), &other_rsa(), &claims(&res));
    invalid_token(&run, &forged_sig, "signature").await;
    // A key id the server does not know.
    let unknown = sign(Algorithm::RS256, Some("rsa-9"), &rsa(), &claims(&res));
    invalid_token(&run, &unknown, "unknown key").await;
    // No kid among several keys.
    let anonymous = sign(Algorithm::RS256, None, &rsa(), &claims(&res));
    invalid_token(&run, &anonymous, "no key").await;
    // HS/RS confusion: HS256 keyed with the RSA public key's PEM, under the RSA kid.
    let confused = sign(
        Algorithm::HS256,
        Some("rsa-1"),
        &EncodingKey::from_secret(&fixture("rsa.pub.pem")),
        &claims(&res),
    );
    invalid_token(&run, &confused, "not accepted").await;
    // ES256 claimed for the RSA key.
    let crossed = sign(Algorithm::ES256, Some("rsa-1"), &ec(), &claims(&res));
    invalid_token(&run, &crossed, "does not fit").await;
    // alg "none", unsigned.
    let none = forged(&json!({"alg": "none", "typ": "JWT"}), &claims(&res), b"");
    invalid_token(&run, &none, "well-formed").await;
    // Larger than the 8 KiB cap: refused before any parsing.
    let huge = with(&|c| c["pad"] = json!("x".repeat(9000)));
    invalid_token(&run, &rs256(&huge), "exceeds 8192 bytes").await;
    run.stop().await;
}

/// The leeway: a token expired 30 s ago (within the default 60 s) still passes, and the
/// audience is compared with case-insensitive scheme and host, in a list too.
#[tokio::test]
async fn leeway_and_audience_forms() {
    let run = serve().await;
    let mut c = claims(&run.resource);
    c["exp"] = json!(now() - 30);
    let r = modern_call(&run.url(), Some(&rs256(&c)), "whoami").await;
    assert_eq!(r.status, StatusCode::OK, "{r:?}");
    let mut c = claims(&run.resource);
    c["aud"] = json!([
        "https://other.example",
        run.resource.replace("http://", "HTTP://")
    ]);
    let r = modern_call(&run.url(), Some(&rs256(&c)), "whoami").await;
    assert_eq!(r.status, StatusCode::OK, "{r:?}");
    run.stop().await;
}

/// A valid token lacking the endpoint's scope: 403 `insufficient_scope` naming it.
#[tokio::test]
async fn insufficient_scope() {
    let run = serve().await;
    let mut c = claims(&run.resource);
    c["scope"] = json!("files:read");
    let r = post(&run.url(), Some(&rs256(&c)), &[], &call(1, "whoami")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    let ch = r.challenge();
    assert_eq!(ch.get("error"), Some("insufficient_scope"));
    assert_eq!(ch.get("scope"), Some("mcp"));
    assert!(ch.get("resource_metadata").is_some());
    run.stop().await;
}

/// A valid token: 200, and sync and async tools see its principal, in both eras, with keys
/// of every supported type.
#[tokio::test]
async fn valid_tokens_reach_the_tools() {
    let run = serve().await;
    let c = claims(&run.resource);
    for token in [
        rs256(&c),
        sign(Algorithm::PS256, Some("rsa-1"), &rsa(), &c),
        sign(Algorithm::ES256, Some("ec-1"), &ec(), &c),
        sign(Algorithm::EdDSA, Some("ed-1"), &ed(), &c),
    ] {
        let r = modern_call(&run.url(), Some(&token), "whoami").await;
        assert_eq!(r.status, StatusCode::OK, "{r:?}");
        assert_eq!(r.text(), "alice|mcp");
    }
    let token = rs256(&c);
    let r = modern_call(&run.url(), Some(&token), "whoami").await;
    assert_eq!(r.status, StatusCode::OK, "{r:?}");
    assert_eq!(r.text(), "alice|mcp");
    let r = modern_call(&run.url(), Some(&token), "whoami_async").await;
    assert_eq!(r.text(), "alice|mcp");
    // Without a token the 2026-07-28 request is refused the same way.
    let r = modern_call(&run.url(), None, "whoami").await;
    assert_401(&r, &run, None);
    // `scp` arrays count as scopes too.
    let mut scp = claims(&run.resource);
    scp.as_object_mut().unwrap().remove("scope");
    scp["scp"] = json!(["mcp", "extra"]);
    let r = modern_call(&run.url(), Some(&rs256(&scp)), "whoami").await;
    assert_eq!(r.text(), "alice|mcp extra");
    let session = initialize(&run.url(), &token, LEGACY).await;
    let r = session_call(&run.url(), Some(&token), &session, LEGACY, "whoami").await;
    assert_eq!(r.text(), "alice|mcp");
    let r = session_call(&run.url(), Some(&token), &session, LEGACY, "whoami_async").await;
    assert_eq!(r.text(), "alice|mcp");
    run.stop().await;
}

/// Per-tool scopes: `tools/list` lists every tool; calling `admin` without its scope is a
/// 403 whose `scope` names what the call needs (and what the token has that still matters),
/// with the JSON-RPC id in the body; with the scope it runs. Both eras, batches too.
#[tokio::test]
async fn per_tool_scopes() {
    let run = serve().await;
    let user = rs256(&claims(&run.resource));
    let mut c = claims(&run.resource);
    c["scope"] = json!("mcp admin");
    let admin = rs256(&c);

    let r = modern(&run.url(), Some(&user), "tools/list", None).await;
    let names: Vec<&str> = r.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["whoami", "whoami_async", "admin"]);

    let r = post(&run.url(), Some(&user), &[], &call(5, "admin")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    let ch = r.challenge();
    assert_eq!(ch.get("error"), Some("insufficient_scope"));
    assert_eq!(ch.get("scope"), Some("mcp admin"));
    assert!(ch.get("error_description").unwrap().contains("admin"));
    assert_eq!(r.body["id"], json!(5));

    let r = modern_call(&run.url(), Some(&user), "admin").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    assert_eq!(r.body["id"], json!(7));
    let r = modern_call(&run.url(), Some(&admin), "admin").await;
    assert_eq!(r.text(), "admin done");

    let session = initialize(&run.url(), &user, LEGACY).await;
    let r = session_call(&run.url(), Some(&user), &session, LEGACY, "admin").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    // The same person with a stepped-up token goes on in the same session.
    let r = session_call(&run.url(), Some(&admin), &session, LEGACY, "admin").await;
    assert_eq!(r.text(), "admin done");

    // A 2025-03-26 batch hiding the call among others is refused whole.
    let old = initialize(&run.url(), &user, "2025-03-26").await;
    let batch = json!([call(1, "whoami"), call(2, "admin")]);
    let headers = [
        ("mcp-session-id", old.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    let r = post(&run.url(), Some(&user), &headers, &batch).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    assert_eq!(r.body["id"], json!(2));
    run.stop().await;
}

/// A `tools/call` of `tool` nesting `depth` levels in all (the message object, `params`,
/// `arguments`, then arrays), with the 2026-07-28 `_meta` when `modern`.
fn nested_call(id: u64, tool: &str, depth: usize, modern: bool) -> String {
    let arrays = depth.saturating_sub(3);
    let meta = if modern {
        format!(r#","_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}"}}"#)
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"deep":{}1{}}}{meta}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    )
}

/// The 2026-07-28 headers of a `tools/call` of `name`.
fn modern_headers(name: &str) -> [(&str, &str); 3] {
    [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ]
}

/// Bodies the session cannot read get the session's reply, with today's statuses: the
/// transport checks no header and no scope against them (it reads bodies as the session
/// does, and these name nothing).
#[tokio::test]
async fn unreadable_bodies_get_the_sessions_parse_error() {
    let run = serve().await;
    let user = rs256(&claims(&run.resource));
    let parse_error = |r: &Reply, status: StatusCode| {
        assert_eq!(r.status, status, "{r:?}");
        assert_eq!(r.body["error"]["code"], json!(-32700), "{r:?}");
        assert!(r.body.get("id").is_none(), "{r:?}");
        assert!(r.header("www-authenticate").is_none(), "{r:?}");
    };
    // Not JSON, with headers naming another tool and a tool the token may not call.
    let h = modern_headers("whoami");
    let r = post_text(&run.url(), Some(&user), &h, r#"{"jsonrpc":"2.0","id":1,"#).await;
    parse_error(&r, StatusCode::BAD_REQUEST);
    // Deeper than the default bound (32 levels).
    let deep = nested_call(1, "admin", 33, true);
    let r = post_text(&run.url(), Some(&user), &h, &deep).await;
    parse_error(&r, StatusCode::BAD_REQUEST);
    // Within it, the same call is checked: scope first, then headers.
    let fits = nested_call(1, "admin", 32, true);
    let r = post_text(&run.url(), Some(&user), &h, &fits).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    // Legacy: a first request without a session gets 400, a session's request 200.
    let r = post_text(&run.url(), Some(&user), &[], "{").await;
    parse_error(&r, StatusCode::BAD_REQUEST);
    let session = initialize(&run.url(), &user, LEGACY).await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", LEGACY),
    ];
    let deep = nested_call(3, "admin", 33, false);
    let r = post_text(&run.url(), Some(&user), &headers, &deep).await;
    parse_error(&r, StatusCode::OK);
    run.stop().await;
}

/// The depth bound is the session's (`Config::max_depth`), not the scanner's default: a body
/// deeper than a server's smaller bound gets the session's -32700, never a header-mismatch
/// 400 or a scope 403 computed from a reading the session would not make.
#[tokio::test]
async fn bodies_deeper_than_the_sessions_bound_get_its_parse_error() {
    let mut config = Config::new(random_key());
    config.max_depth = 8;
    let run = serve_configured(config, jwt_auth).await;
    let user = rs256(&claims(&run.resource));
    let mut c = claims(&run.resource);
    c["scope"] = json!("mcp admin");
    let admin = rs256(&c);
    let wrong_name = modern_headers("whoami");

    // Within the bound: the scope check, then the headers' check.
    let fits = nested_call(1, "admin", 8, true);
    let r = post_text(&run.url(), Some(&user), &wrong_name, &fits).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    assert_eq!(r.challenge().get("error"), Some("insufficient_scope"));
    let r = post_text(&run.url(), Some(&admin), &wrong_name, &fits).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{r:?}");
    assert_eq!(r.body["error"]["code"], json!(-32020), "{r:?}");
    assert_eq!(r.body["id"], json!(1));

    // One level deeper: what the session answers, whatever the headers and the token.
    let deep = nested_call(1, "admin", 9, true);
    let honest = post_text(&run.url(), Some(&admin), &modern_headers("admin"), &deep).await;
    assert_eq!(honest.status, StatusCode::BAD_REQUEST, "{honest:?}");
    assert_eq!(honest.body["error"]["code"], json!(-32700), "{honest:?}");
    for token in [&user, &admin] {
        let r = post_text(&run.url(), Some(token), &wrong_name, &deep).await;
        assert_eq!(r.status, honest.status, "{r:?}");
        assert_eq!(r.body, honest.body, "{r:?}");
        assert!(r.header("www-authenticate").is_none(), "{r:?}");
    }

    // A 2025-03-26 batch: one level of nesting more than its elements.
    let old = initialize(&run.url(), &user, "2025-03-26").await;
    let headers = [
        ("mcp-session-id", old.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    let fits = format!(
        "[{},{}]",
        call(1, "whoami"),
        nested_call(2, "admin", 7, false)
    );
    let r = post_text(&run.url(), Some(&user), &headers, &fits).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    assert_eq!(r.body["id"], json!(2));
    let deep = format!(
        "[{},{}]",
        call(1, "whoami"),
        nested_call(2, "admin", 8, false)
    );
    let r = post_text(&run.url(), Some(&user), &headers, &deep).await;
    assert_eq!(r.status, StatusCode::OK, "{r:?}");
    assert_eq!(r.body["error"]["code"], json!(-32700), "{r:?}");
    run.stop().await;
}

/// Every element of a 2025-03-26 batch is scope-checked, wherever the restricted call is
/// (a notification calling it too); a batch of allowed calls, or with a token holding the
/// scope, is answered in full.
#[tokio::test]
async fn batch_elements_are_each_scope_checked() {
    let run = serve().await;
    let user = rs256(&claims(&run.resource));
    let mut c = claims(&run.resource);
    c["scope"] = json!("mcp admin");
    let admin = rs256(&c);
    let session = initialize(&run.url(), &user, "2025-03-26").await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "admin"}});
    let refused = [
        (json!([call(1, "admin"), call(2, "whoami")]), json!(1)),
        (
            json!([call(1, "whoami"), call(2, "whoami_async"), call(3, "admin")]),
            json!(3),
        ),
        (json!([call(1, "whoami"), note]), Value::Null),
    ];
    for (batch, id) in refused {
        let r = post(&run.url(), Some(&user), &headers, &batch).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{batch}: {r:?}");
        assert_eq!(r.challenge().get("error"), Some("insufficient_scope"));
        assert_eq!(
            r.body.get("id").cloned().unwrap_or(Value::Null),
            id,
            "{batch}"
        );
    }
    // Synchronous tools only: the batch is answered at once, in one array.
    let allowed = json!([call(1, "whoami"), call(2, "whoami")]);
    let r = post(&run.url(), Some(&user), &headers, &allowed).await;
    assert_eq!(r.status, StatusCode::OK, "{r:?}");
    assert_eq!(
        r.body[1]["result"]["content"][0]["text"], "alice|mcp",
        "{r:?}"
    );

    // The owner's stepped-up token may call it, in the same session.
    let batch = json!([call(1, "whoami"), call(2, "admin")]);
    let r = post(&run.url(), Some(&admin), &headers, &batch).await;
    assert_eq!(r.status, StatusCode::OK, "{r:?}");
    assert_eq!(
        r.body[1]["result"]["content"][0]["text"], "admin done",
        "{r:?}"
    );
    run.stop().await;
}

/// A legacy session is bound to the principal that created it: another principal's valid
/// token on its id gets 404 for POST, GET and DELETE (to it the session does not exist),
/// while the owner goes on, with a refreshed token too.
#[tokio::test]
async fn sessions_are_bound_to_their_principal() {
    let run = serve().await;
    let alice = rs256(&claims(&run.resource));
    let mut c = claims(&run.resource);
    c["sub"] = json!("bob");
    let bob = rs256(&c);
    let session = initialize(&run.url(), &alice, LEGACY).await;

    let r = session_call(&run.url(), Some(&bob), &session, LEGACY, "whoami").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{r:?}");
    let bob_auth = format!("Bearer {bob}");
    let get = send(
        Method::GET,
        &run.url(),
        &[
            ("mcp-session-id", &session),
            ("accept", "text/event-stream"),
            ("authorization", &bob_auth),
        ],
        None,
    )
    .await;
    assert_eq!(get.status, StatusCode::NOT_FOUND, "{get:?}");
    let del = send(
        Method::DELETE,
        &run.url(),
        &[("mcp-session-id", &session), ("authorization", &bob_auth)],
        None,
    )
    .await;
    assert_eq!(del.status, StatusCode::NOT_FOUND, "{del:?}");
    // Without a token at all: 401 before the session is looked at.
    let r = session_call(&run.url(), None, &session, LEGACY, "whoami").await;
    assert_401(&r, &run, None);

    // Alice is unaffected, and a new token of hers (other scopes, later expiry) is hers.
    let r = session_call(&run.url(), Some(&alice), &session, LEGACY, "whoami").await;
    assert_eq!(r.text(), "alice|mcp");
    let mut c = claims(&run.resource);
    c["scope"] = json!("mcp files:read");
    c["exp"] = json!(now() + 3600);
    let refreshed = rs256(&c);
    let r = session_call(&run.url(), Some(&refreshed), &session, LEGACY, "whoami").await;
    assert_eq!(r.text(), "alice|mcp files:read");
    let alice_auth = format!("Bearer {alice}");
    let del = send(
        Method::DELETE,
        &run.url(),
        &[("mcp-session-id", &session), ("authorization", &alice_auth)],
        None,
    )
    .await;
    assert_eq!(del.status, StatusCode::OK, "{del:?}");
    run.stop().await;
}

/// Any authorizer works: a closure standing in for token introspection, whose principal
/// (with an issuer of its own) the tools see; its `Unavailable` is a 503 without a
/// challenge, its `InsufficientScope` a 403.
#[tokio::test]
async fn custom_authorizer() {
    let introspect = authorizer_fn(|token: String| async move {
        match token.as_str() {
            "opaque-alice" => Ok(Principal::new("alice")
                .with_issuer("https://idp.example")
                .with_scopes(["mcp", "admin"])),
            // The same subject vouched for by another issuer: another identity.
            "other-alice" => Ok(Principal::new("alice")
                .with_issuer("https://other-idp.example")
                .with_scopes(["mcp"])),
            "opaque-down" => Err(Rejection::Unavailable("introspection endpoint down".into())),
            "opaque-low" => Err(Rejection::InsufficientScope {
                required: vec!["mcp".into()],
                description: "read-only token".into(),
            }),
            _ => Err(Rejection::InvalidToken("inactive".into())),
        }
    });
    let run = serve_with(move |resource| {
        Auth::new(
            ResourceMetadata::new(resource, ["https://idp.example"]),
            introspect,
        )
        .unwrap()
        .require_scopes(["mcp"])
        .unwrap()
    })
    .await;
    let r = modern_call(&run.url(), Some("opaque-alice"), "whoami_async").await;
    assert_eq!(r.text(), "alice|mcp admin");
    let session = initialize(&run.url(), "opaque-alice", LEGACY).await;
    let r = session_call(&run.url(), Some("other-alice"), &session, LEGACY, "whoami").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{r:?}");
    let r = session_call(&run.url(), Some("opaque-alice"), &session, LEGACY, "whoami").await;
    assert_eq!(r.text(), "alice|mcp admin");
    let r = post(&run.url(), Some("opaque-down"), &[], &call(1, "whoami")).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{r:?}");
    assert!(r.header("www-authenticate").is_none());
    let r = post(&run.url(), Some("opaque-low"), &[], &call(1, "whoami")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{r:?}");
    assert_eq!(r.challenge().get("scope"), Some("mcp"));
    let r = post(&run.url(), Some("opaque-bob"), &[], &call(1, "whoami")).await;
    assert_401(&r, &run, Some("invalid_token"));
    run.stop().await;
}

/// Key handling without HTTP: PEM keys, HMAC secrets only when HS* is allowed (and never
/// for an RSA key even then), key rotation by kid, and reloading a JWK set file when a
/// token names a new key.
#[tokio::test]
async fn keys_and_rotation() {
    let aud = "https://mcp.example/mcp";
    let c = claims(aud);
    // A PEM key, the only one: tokens without kid are checked against it.
    let mut keys = KeySet::new();
    keys.add_pem(None, &fixture("rsa.pub.pem")).unwrap();
    let v = JwtValidator::new(JwtConfig::new(ISSUER, aud), keys).unwrap();
    assert_eq!(
        v.validate(&sign(Algorithm::RS256, None, &rsa(), &c))
            .unwrap()
            .subject,
        "alice"
    );
    let mut keys = KeySet::new();
    keys.add_pem(Some("ec"), &fixture("ec.pub.pem")).unwrap();
    keys.add_pem(Some("ed"), &fixture("ed.pub.pem")).unwrap();
    assert!(
        keys.add_pem(Some("priv"), &fixture("rsa.key.pem")).is_err(),
        "a private key"
    );
    let v = JwtValidator::new(JwtConfig::new(ISSUER, aud), keys).unwrap();
    assert!(v
        .validate(&sign(Algorithm::ES256, Some("ec"), &ec(), &c))
        .is_ok());
    assert!(v
        .validate(&sign(Algorithm::EdDSA, Some("ed"), &ed(), &c))
        .is_ok());

    // HMAC: refused unless listed; even then an RSA key cannot be used as the secret.
    let secret = [42u8; 32];
    let mut keys = KeySet::new();
    keys.add_secret(Some("hs"), &secret).unwrap();
    keys.add_pem(Some("rsa-1"), &fixture("rsa.pub.pem"))
        .unwrap();
    let hs = sign(
        Algorithm::HS256,
        Some("hs"),
        &EncodingKey::from_secret(&secret),
        &c,
    );
    let v = JwtValidator::new(JwtConfig::new(ISSUER, aud), keys).unwrap();
    assert!(
        matches!(v.validate(&hs), Err(Rejection::InvalidToken(w)) if w.contains("not accepted"))
    );
    let mut keys = KeySet::new();
    keys.add_secret(Some("hs"), &secret).unwrap();
    keys.add_pem(Some("rsa-1"), &fixture("rsa.pub.pem"))
        .unwrap();
    let mut config = JwtConfig::new(ISSUER, aud);
    config.algorithms.push(Algorithm::HS256);
    let v = JwtValidator::new(config, keys).unwrap();
    assert_eq!(v.validate(&hs).unwrap().subject, "alice");
    let confused = sign(
        Algorithm::HS256,
        Some("rsa-1"),
        &EncodingKey::from_secret(&fixture("rsa.pub.pem")),
        &c,
    );
    assert!(
        matches!(v.validate(&confused), Err(Rejection::InvalidToken(w)) if w.contains("does not fit"))
    );

    // `typ` pinned to at+jwt (RFC 9068): a plain JWT is refused.
    let mut keys = KeySet::new();
    keys.add_jwks(&jwks()).unwrap();
    let mut config = JwtConfig::new(ISSUER, aud);
    config.token_type = Some("at+jwt".into());
    let v = JwtValidator::new(config, keys).unwrap();
    assert!(v.validate(&rs256(&c)).is_err());
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("rsa-1".into());
    header.typ = Some("at+jwt".into());
    let at = jsonwebtoken::encode(&header, &c, &rsa()).unwrap();
    assert!(v.validate(&at).is_ok());

    // Rotation: the IdP adds "ec-1" to its JWK set file; the validator re-reads it when a
    // token first names that kid (here with no wait between reloads).
    let dir = std::env::temp_dir().join(format!("mcp-auth-{}-{}", std::process::id(), now()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("jwks.json");
    let only_rsa = {
        let mut jwk = Jwk::from_encoding_key(&rsa(), Algorithm::RS256).unwrap();
        jwk.common.key_id = Some("rsa-1".into());
        json!({"keys": [jwk]}).to_string()
    };
    std::fs::write(&file, &only_rsa).unwrap();
    let keys = KeySet::from_file(&file, None).unwrap();
    let v: Arc<JwtValidator> = Arc::new(
        JwtValidator::new(JwtConfig::new(ISSUER, aud), keys)
            .unwrap()
            .reload_from(&file, Duration::ZERO),
    );
    // That key was published with `alg: RS256`: PS256 with it is refused.
    let ps = sign(Algorithm::PS256, Some("rsa-1"), &rsa(), &c);
    assert!(
        matches!(v.validate(&ps), Err(Rejection::InvalidToken(w)) if w.contains("does not fit"))
    );
    let es = sign(Algorithm::ES256, Some("ec-1"), &ec(), &c);
    assert!(v.authorize(&es).await.is_err(), "not yet published");
    std::fs::write(&file, jwks()).unwrap();
    assert_eq!(v.authorize(&es).await.unwrap().subject, "alice");
    assert!(
        v.authorize(&rs256(&c)).await.is_ok(),
        "the old key still works"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

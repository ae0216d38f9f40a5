//! `McpHttpService` mounted in an axum router under a prefix (`nest_service("/api/mcp")`),
//! beside routes of the host's own: both protocol eras through mcp-tokio's client, the
//! per-request protections kept (Host check, body limit, media type), the per-peer quota by
//! the `PeerAddr` extension, and shutdown (503 and sessions ended).
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request};
use mcp_rs_tokio::client::{Client, ClientOptions, Era};
use mcp_rs_tokio::http::auth::{authorizer_fn, Auth, Principal, Rejection, ResourceMetadata};
use mcp_rs_tokio::http::{HttpConfig, PeerAddr};
use mcp_rs_tokio::{Handler, Server, ServerInfo, ToolDef, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const OBJECT: &str = r#"{"type":"object"}"#;

struct App {
    server: Server,
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl App {
    fn mcp(&self) -> String {
        format!("http://{}/api/mcp", self.addr)
    }
}

/// An axum app with `/health` and the MCP server nested at `/api/mcp`; the client's
/// address is copied from axum's `ConnectInfo` into a `PeerAddr` when `peers` is set.
async fn app(config: HttpConfig, peers: bool) -> App {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    app_on(listener, config, peers)
}

/// [`app`] on `listener`; the protected-resource metadata paths (with authorization) are
/// routed to the service too.
fn app_on(listener: tokio::net::TcpListener, config: HttpConfig, peers: bool) -> App {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("echo", OBJECT),
        Handler::sync(|call, r| {
            r.text(call.args().as_str());
        }),
    );
    let info = ServerInfo {
        name: "mounted".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools);
    let service = server.http_service(config);
    let mut router = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .nest_service("/api/mcp", service.clone());
    for path in service.metadata_paths() {
        router = router.route_service(&path, service.clone());
    }
    if peers {
        router = router.layer(axum::middleware::map_request(
            |mut req: Request| async move {
                let addr = req
                    .extensions()
                    .get::<ConnectInfo<SocketAddr>>()
                    .map(|c| c.0);
                if let Some(addr) = addr {
                    req.extensions_mut().insert(PeerAddr(addr));
                }
                req
            },
        ));
    }
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    App { server, addr, task }
}

/// A raw HTTP/1.1 exchange (`Connection: close`): status, headers (lowercase names) and
/// body.
async fn raw(addr: SocketAddr, head: &str, body: &[u8]) -> (u16, String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {text:?}"));
    (status, head.to_ascii_lowercase(), body.to_owned())
}

async fn post(
    addr: SocketAddr,
    host: &str,
    path: &str,
    extra: &str,
    body: &str,
) -> (u16, String, String) {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        body.len()
    );
    raw(addr, &head, body.as_bytes()).await
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
    .to_string()
}

/// The handshake era through the nested service: a session id, tools/list and tools/call
/// on it, DELETE; the host's own route is untouched.
#[tokio::test]
async fn legacy_session_under_a_prefix() {
    let app = app(HttpConfig::default(), true).await;
    let client = Client::connect_http(&app.mcp()).await.expect("initialize");
    assert_eq!(client.protocol_version(), "2025-11-25");
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["echo"]);
    let r = client.call_tool("echo", json!({"a": 1})).await.unwrap();
    assert_eq!(r.text(), r#"{"a":1}"#);
    let _ = client.close().await;

    // The session id by hand: the call goes to the session the initialize created.
    let (status, head, _) = post(app.addr, "127.0.0.1", "/api/mcp", "", &initialize()).await;
    assert_eq!(status, 200, "{head}");
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .to_owned();
    let session = format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-11-25\r\n");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, _, _) = post(app.addr, "127.0.0.1", "/api/mcp", &session, &note).await;
    assert_eq!(status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"b": 2}}})
    .to_string();
    let (status, _, body) = post(app.addr, "127.0.0.1", "/api/mcp", &session, &call).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"]["content"][0]["text"], r#"{"b":2}"#);
    // An unknown session is 404 (the table is the service's).
    let (status, _, _) = post(
        app.addr,
        "127.0.0.1",
        "/api/mcp",
        "Mcp-Session-Id: 00\r\n",
        &call,
    )
    .await;
    assert_eq!(status, 404);

    let head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let (status, _, body) = raw(app.addr, head, b"").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    // Paths outside the mount are the router's (404 from axum, not the service).
    let (status, _, body) = post(app.addr, "127.0.0.1", "/mcp", "", &initialize()).await;
    assert_eq!((status, body.as_str()), (404, ""));
    app.task.abort();
}

/// 2026-07-28: stateless POSTs through the nested service (our client in the modern era,
/// then one by hand without a session).
#[tokio::test]
async fn modern_stateless_under_a_prefix() {
    let app = app(HttpConfig::default(), false).await;
    let client = Client::connect_http_with(&app.mcp(), ClientOptions::with_era(Era::Modern))
        .await
        .expect("discover");
    assert_eq!(client.protocol_version(), "2026-07-28");
    let r = client.call_tool("echo", json!({"m": true})).await.unwrap();
    assert_eq!(r.text(), r#"{"m":true}"#);
    let _ = client.close().await;

    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let headers =
        "Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n";
    let (status, head, reply) = post(app.addr, "127.0.0.1", "/api/mcp", headers, &body).await;
    assert_eq!(status, 200, "{reply}");
    assert!(!head.contains("mcp-session-id"), "{head}");
    // The 2026-07-28 header checks: a mismatched Mcp-Name is refused.
    let wrong = "Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: other\r\n";
    let (status, _, reply) = post(app.addr, "127.0.0.1", "/api/mcp", wrong, &body).await;
    assert_eq!(status, 400, "{reply}");
    app.task.abort();
}

/// The per-request protections hold when mounted: Host and Origin, body limit, media type.
#[tokio::test]
async fn protections_hold_when_mounted() {
    let mut config = HttpConfig::default();
    config.max_body = 1024;
    let app = app(config, true).await;
    let (status, _, body) = post(app.addr, "evil.example", "/api/mcp", "", &initialize()).await;
    assert_eq!(status, 403, "{body}");
    let origin = "Origin: http://evil.example\r\n";
    let (status, _, body) = post(app.addr, "127.0.0.1", "/api/mcp", origin, &initialize()).await;
    assert_eq!(status, 403, "{body}");
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2048)
    );
    let (status, _, body) = post(app.addr, "127.0.0.1", "/api/mcp", "", &big).await;
    assert_eq!(status, 413, "{body}");
    let head = format!(
        "POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        initialize().len()
    );
    let (status, _, _) = raw(app.addr, &head, initialize().as_bytes()).await;
    assert_eq!(status, 415);
    // A chunked body over the limit (no Content-Length to refuse it early).
    let chunk = "y".repeat(2048);
    let head = "POST /api/mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    let body = format!("{:x}\r\n{chunk}\r\n0\r\n\r\n", chunk.len());
    let (status, _, _) = raw(app.addr, head, body.as_bytes()).await;
    assert_eq!(status, 413);
    app.task.abort();
}

/// The per-peer quota counts by `PeerAddr`; without one every client is one shared peer.
#[tokio::test]
async fn session_quota_by_peer_addr_or_shared() {
    let mut config = HttpConfig::default();
    config.max_sessions_per_peer = 1;
    for peers in [true, false] {
        let app = app(config.clone(), peers).await;
        let (status, _, _) = post(app.addr, "127.0.0.1", "/api/mcp", "", &initialize()).await;
        assert_eq!(status, 200);
        // The same loopback address (or the shared peer): over the quota.
        let (status, _, body) = post(app.addr, "127.0.0.1", "/api/mcp", "", &initialize()).await;
        assert_eq!(status, 503, "{body}");
        // Another loopback source address is another peer only when PeerAddr is set.
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        let mut s = sock.connect(app.addr).await.unwrap();
        let init = initialize();
        let head = format!(
            "POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{init}",
            init.len()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        let line = String::from_utf8_lossy(&out);
        let want = if peers { " 200 " } else { " 503 " };
        assert!(
            line.starts_with("HTTP/1.1") && line[8..].starts_with(want),
            "peers={peers}: {line}"
        );
        app.task.abort();
    }
}

/// After the server shuts down, the mounted service refuses requests (503) and its sessions
/// are gone, while the host's routes go on.
#[tokio::test]
async fn shutdown_ends_the_mounted_sessions() {
    let app = app(HttpConfig::default(), true).await;
    let client = Client::connect_http(&app.mcp()).await.expect("initialize");
    client.call_tool("echo", json!({})).await.unwrap();
    app.server.shutdown();
    let failed = tokio::time::timeout(Duration::from_secs(5), client.call_tool("echo", json!({})))
        .await
        .expect("an answer within 5 s");
    assert!(failed.is_err(), "{failed:?}");
    let (status, _, body) = post(app.addr, "127.0.0.1", "/api/mcp", "", &initialize()).await;
    assert_eq!(status, 503, "{body}");
    let head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let (status, _, _) = raw(app.addr, head, b"").await;
    assert_eq!(status, 200);
    app.task.abort();
}

/// With authorization, mounted: the resource is the URL clients use (`.../api/mcp`), the 401
/// challenge names its metadata URL, which the router hands to the service (its
/// `metadata_paths`); a valid token gets through.
#[tokio::test]
async fn authorization_when_mounted() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/api/mcp", listener.local_addr().unwrap());
    let authorizer = authorizer_fn(|token: String| async move {
        match token.as_str() {
            "good" => Ok(Principal::new("alice").with_issuer("https://idp.example")),
            _ => Err(Rejection::InvalidToken("unknown token".into())),
        }
    });
    let auth = Auth::new(
        ResourceMetadata::new(resource.clone(), ["https://idp.example"]),
        authorizer,
    )
    .unwrap();
    let mut config = HttpConfig::default();
    config.auth = Some(auth);
    let app = app_on(listener, config, true);
    let (status, head, _) = post(app.addr, "127.0.0.1", "/api/mcp", "", &initialize()).await;
    assert_eq!(status, 401, "{head}");
    let metadata = format!(
        "http://{}/.well-known/oauth-protected-resource/api/mcp",
        app.addr
    );
    assert!(
        head.contains(&format!("resource_metadata=\"{metadata}\"")),
        "{head}"
    );
    for path in [
        "/.well-known/oauth-protected-resource/api/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let get = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        let (status, _, body) = raw(app.addr, &get, b"").await;
        assert_eq!(status, 200, "{path}: {body}");
        let doc: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["resource"], resource.as_str());
    }
    let (status, _, body) = post(
        app.addr,
        "127.0.0.1",
        "/api/mcp",
        "Authorization: Bearer good\r\n",
        &initialize(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    app.task.abort();
}

/// The service's idle-session sweep runs when mounted (started by its first request): a
/// session left idle is forgotten and its id then gets 404.
#[tokio::test]
async fn idle_sessions_expire_when_mounted() {
    let mut config = HttpConfig::default();
    config.session_idle = Duration::from_millis(100);
    let app = app(config, true).await;
    let (status, head, _) = post(app.addr, "127.0.0.1", "/api/mcp", "", &initialize()).await;
    assert_eq!(status, 200, "{head}");
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .to_owned();
    let session = format!("Mcp-Session-Id: {id}\r\n");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let (status, _, body) = post(app.addr, "127.0.0.1", "/api/mcp", &session, &ping).await;
    assert_eq!(status, 200, "{body}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, _, body) = post(app.addr, "127.0.0.1", "/api/mcp", &session, &ping).await;
    assert_eq!(status, 404, "{body}");
    app.task.abort();
}

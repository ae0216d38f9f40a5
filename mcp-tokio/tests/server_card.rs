//! The server card (SEP-2127) at `<endpoint>/server-card` and the catalogs at
//! `/.well-known/ai-catalog.json` and `/.well-known/mcp/catalog.json`: generated from the
//! server's own info, public, with CORS and caching headers; off with
//! `HttpConfig::server_card = false`.
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

use std::net::SocketAddr;

use mcp_rs_tokio::http::card::{CARD_MEDIA_TYPE, CARD_SCHEMA};
use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Server, ServerInfo, Tools};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server with `info` on loopback.
async fn serve(info: ServerInfo, config: HttpConfig) -> SocketAddr {
    let server = Server::new(info, Tools::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        server.serve_http_with(listener, config).await.unwrap();
    });
    addr
}

fn info() -> ServerInfo {
    ServerInfo {
        name: "io.example/weather".into(),
        version: "1.4.0".into(),
        title: Some("Weather".into()),
        description: Some("Forecasts for any city".into()),
        website_url: Some("https://example.com/weather".into()),
        ..Default::default()
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One request on its own connection (`Connection: close`), the whole response read.
async fn get(addr: SocketAddr, method: &str, path: &str, extra: &str) -> Reply {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}Content-Length: 0\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(10), s.read_to_end(&mut raw))
        .await
        .expect("response in time")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_string(),
    }
}

fn public_headers(r: &Reply) {
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.header("access-control-allow-methods"), Some("GET"));
    assert_eq!(r.header("cache-control"), Some("public, max-age=3600"));
}

#[tokio::test]
async fn the_card_describes_the_server_and_its_endpoint() {
    let addr = serve(info(), HttpConfig::default()).await;
    let r = get(addr, "GET", "/mcp/server-card", "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some(CARD_MEDIA_TYPE));
    public_headers(&r);
    let card = r.json();
    assert_eq!(card["$schema"], CARD_SCHEMA);
    assert_eq!(card["name"], "io.example/weather");
    assert_eq!(card["version"], "1.4.0");
    assert_eq!(card["title"], "Weather");
    assert_eq!(card["description"], "Forecasts for any city");
    assert_eq!(card["websiteUrl"], "https://example.com/weather");
    let remote = &card["remotes"][0];
    assert_eq!(remote["type"], "streamable-http");
    assert_eq!(remote["url"], format!("http://{addr}/mcp"));
    let versions: Vec<&str> = remote["supportedProtocolVersions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(versions.contains(&"2025-11-25") && versions.contains(&"2026-07-28"));
    // The v2 card schema allows these members only (no primitives).
    let allowed = [
        "$schema",
        "_meta",
        "description",
        "icons",
        "name",
        "remotes",
        "repository",
        "title",
        "version",
        "websiteUrl",
    ];
    for key in card.as_object().unwrap().keys() {
        assert!(allowed.contains(&key.as_str()), "unexpected member {key}");
    }
}

#[tokio::test]
async fn both_catalogs_point_at_the_card() {
    let addr = serve(info(), HttpConfig::default()).await;
    for path in [
        "/.well-known/ai-catalog.json",
        "/.well-known/mcp/catalog.json",
    ] {
        let r = get(addr, "GET", path, "").await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(r.header("content-type"), Some("application/json"));
        public_headers(&r);
        let c = r.json();
        assert_eq!(c["specVersion"], "draft");
        let e = &c["entries"][0];
        assert_eq!(e["identifier"], "urn:air:127.0.0.1:weather");
        assert_eq!(e["displayName"], "Weather");
        assert_eq!(e["type"], CARD_MEDIA_TYPE);
        assert_eq!(e["url"], format!("http://{addr}/mcp/server-card"));
    }
}

#[tokio::test]
async fn behind_a_tls_proxy_the_urls_are_https() {
    let addr = serve(info(), HttpConfig::default()).await;
    let r = get(
        addr,
        "GET",
        "/mcp/server-card",
        "X-Forwarded-Proto: https\r\n",
    )
    .await;
    assert_eq!(r.json()["remotes"][0]["url"], format!("https://{addr}/mcp"));
}

#[tokio::test]
async fn other_methods_are_refused_and_head_has_no_body() {
    let addr = serve(info(), HttpConfig::default()).await;
    let r = get(addr, "POST", "/mcp/server-card", "").await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    let r = get(addr, "HEAD", "/mcp/server-card", "").await;
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
}

#[tokio::test]
async fn text_is_clipped_to_the_schema_limits_and_a_missing_description_falls_back() {
    let long = "x".repeat(150);
    let addr = serve(
        ServerInfo {
            name: "plain".into(),
            version: "0".into(),
            title: Some(long.clone()),
            ..Default::default()
        },
        HttpConfig::default(),
    )
    .await;
    let card = get(addr, "GET", "/mcp/server-card", "").await.json();
    assert_eq!(card["title"].as_str().map(str::len), Some(100));
    assert_eq!(card["description"].as_str().map(str::len), Some(100));
    assert!(card.get("websiteUrl").is_none());
}

#[tokio::test]
async fn off_it_is_not_found() {
    let mut config = HttpConfig::default();
    config.server_card = false;
    let addr = serve(info(), config).await;
    for path in ["/mcp/server-card", "/.well-known/ai-catalog.json"] {
        assert_eq!(get(addr, "GET", path, "").await.status, 404, "{path}");
    }
}

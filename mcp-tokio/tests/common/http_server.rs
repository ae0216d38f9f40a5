//! Shared by the HTTP server tests (`http.rs`, `legacy_sse.rs`, `http_bounds.rs`; included
//! with `#[path]`, so the other tests do not compile it): the tools they all serve, a server
//! on loopback, and one raw HTTP/1.1 request on a connection of its own.
#![allow(dead_code)] // each test file uses a part

use std::net::SocketAddr;
use std::time::Duration;

use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Handler, Server, ServerInfo, ToolDef, ToolReply, Tools};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub(crate) const OBJECT: &str = r#"{"type":"object"}"#;

/// How long a raw request waits for its response.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// `echo` (its arguments as text) and `slow` (three progress notifications `pause` apart,
/// then "slow done").
pub(crate) fn tools(pause: Duration) -> Tools {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("echo", OBJECT),
        Handler::sync(|call, r| {
            r.text(call.args().as_str());
        }),
    );
    tools.add(
        ToolDef::new("slow", OBJECT),
        Handler::async_fn(move |_, ctx| async move {
            for i in 1..=3 {
                ctx.progress(f64::from(i), Some(3.0), None).await;
                tokio::time::sleep(pause).await;
            }
            ToolReply::text("slow done")
        }),
    );
    tools
}

/// `tools` served over Streamable HTTP on a loopback port as `name`, with `config`.
pub(crate) async fn serve(
    name: &str,
    tools: Tools,
    config: HttpConfig,
) -> (Server, SocketAddr, tokio::task::JoinHandle<()>) {
    let info = ServerInfo {
        name: name.into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let s = server.clone();
    let task = tokio::spawn(async move {
        s.serve_http_with(listener, config).await.unwrap();
    });
    (server, addr, task)
}

/// One request on a connection of its own: status and body.
pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    host: &str,
    body: &str,
) -> (u16, String) {
    request_with(addr, method, path, host, "", body).await
}

/// With `extra` headers (each ending in `\r\n`).
pub(crate) async fn request_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    host: &str,
    extra: &str,
    body: &str,
) -> (u16, String) {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
    socket.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(WAIT, socket.read_to_end(&mut out))
        .await
        .expect("no response")
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head[9..12].parse().unwrap(), body.to_owned())
}

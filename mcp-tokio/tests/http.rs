//! Streamable HTTP end to end: mcp-tokio's client against mcp-tokio's server on loopback, in
//! both eras: the handshake and session id, JSON and SSE responses, progress, cancellation,
//! list changes on the session stream, a stream the server closes mid-call and the client
//! resumes, DELETE, and stateless 2026-07-28 requests.
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

#[path = "common/http_server.rs"]
mod http_server;

use std::time::Duration;

use http_server::OBJECT;
use mcp_rs_tokio::client::{CallOptions, Client, ClientOptions, Era, ListKind, Notification};
use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Handler, Server, ServerInfo, ToolDef, ToolReply, Tools};
use serde_json::json;

/// A tool whose `region` argument travels in an `Mcp-Param-Region` header too (SEP-2243).
const REGIONAL: &str = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}"#;

async fn server() -> (Server, String, tokio::task::JoinHandle<()>) {
    let tools = http_server::tools(Duration::from_millis(30));
    tools.add(
        ToolDef::new("forever", OBJECT),
        Handler::async_fn(|_, ctx| async move {
            ctx.progress(1.0, None, None).await;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            ToolReply::text("unreachable")
        }),
    );
    tools.add(
        ToolDef::new("regional", REGIONAL),
        Handler::sync(|call, r| {
            r.text(call.args().as_str());
        }),
    );
    tools.add(
        ToolDef::new("poll", OBJECT),
        Handler::async_fn(|_, ctx| async move {
            ctx.close_stream().await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            ToolReply::text("after the stream closed")
        }),
    );
    let (server, addr, task) = http_server::serve("http-test", tools, HttpConfig::default()).await;
    let url = format!("http://{addr}/mcp");
    (server, url, task)
}

#[tokio::test]
async fn legacy_session_over_http() {
    let (server, url, task) = server().await;
    let client = Client::connect_http(&url)
        .await
        .expect("initialize over HTTP");
    assert_eq!(client.protocol_version(), "2025-11-25");
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["echo", "slow", "forever", "regional", "poll"]);
    let r = client.call_tool("echo", json!({"a": 1})).await.unwrap();
    assert_eq!(r.text(), r#"{"a": 1}"#.replace(' ', ""));

    // SSE: progress arrives before the result.
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let r = client
        .call_tool_with("slow", json!({}), CallOptions::new().with_progress(tx))
        .await
        .unwrap();
    assert_eq!(r.text(), "slow done");
    let mut seen = Vec::new();
    while let Ok(p) = progress.try_recv() {
        seen.push(p.progress);
    }
    assert_eq!(seen, [1.0, 2.0, 3.0]);

    // The server ends the stream mid-call; the client resumes it with Last-Event-ID.
    let r = client.call_tool("poll", json!({})).await.unwrap();
    assert_eq!(r.text(), "after the stream closed");

    // A tool change reaches the session's GET stream.
    let mut notes = client.notifications();
    server.tools().remove("poll");
    let note = tokio::time::timeout(Duration::from_secs(5), notes.recv())
        .await
        .expect("list_changed within 5 s")
        .expect("a notification");
    assert_eq!(note, Notification::ListChanged(ListKind::Tools));

    // Cancellation: the call fails at once and the session keeps serving.
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let call = client.call_tool_with("forever", json!({}), CallOptions::new().with_progress(tx));
    let id = call.id();
    progress.recv().await.expect("first progress");
    assert!(client.cancel(id, Some("enough")));
    assert!(call.await.is_err());
    assert_eq!(
        client.call_tool("echo", json!({})).await.unwrap().text(),
        "{}"
    );

    client.close().await.unwrap();
    server.shutdown();
    task.await.unwrap();
}

#[tokio::test]
async fn stateless_requests_over_http() {
    let (server, url, task) = server().await;
    let options = ClientOptions::with_era(Era::Modern);
    let client = Client::connect_http_with(&url, options).await.unwrap();
    assert!(client.is_modern());
    let details = client.discover().await.unwrap();
    assert!(details.supported_versions.iter().any(|v| v == "2026-07-28"));
    assert_eq!(client.list_tools().await.unwrap().len(), 5);
    let r = client.call_tool("echo", json!({"b": true})).await.unwrap();
    assert_eq!(r.text(), r#"{"b":true}"#);
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let r = client
        .call_tool_with("slow", json!({}), CallOptions::new().with_progress(tx))
        .await
        .unwrap();
    assert_eq!(r.text(), "slow done");
    assert_eq!(progress.recv().await.map(|p| p.progress), Some(1.0));
    // An unknown tool is a JSON-RPC error (HTTP 400 underneath), not a transport failure.
    let err = client.call_tool("nope", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("-32602"), "{err}");
    client.close().await.unwrap();
    server.shutdown();
    task.await.unwrap();
}

#[tokio::test]
async fn idle_sessions_expire() {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("echo", OBJECT),
        Handler::sync(|_, r| {
            r.text("hi");
        }),
    );
    let info = ServerInfo {
        name: "expiry".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let mut config = mcp_rs_tokio::http::HttpConfig::default();
    config.session_idle = Duration::from_millis(200);
    let s = server.clone();
    let task = tokio::spawn(async move { s.serve_http_with(listener, config).await.unwrap() });
    let client = Client::connect_http(&url).await.unwrap();
    assert_eq!(
        client.call_tool("echo", json!({})).await.unwrap().text(),
        "hi"
    );
    // Used within the idle time, the session lives on.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(client.call_tool("echo", json!({})).await.is_ok());
    }
    // Idle for longer, it is gone: its id gets 404, which the client reports as a failure.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let err = client.call_tool("echo", json!({})).await.unwrap_err();
    assert!(
        err.to_string().contains("404") || err.to_string().contains("Session not found"),
        "{err}"
    );
    server.shutdown();
    task.await.unwrap();
}

#[tokio::test]
async fn x_mcp_header_arguments_are_mirrored_from_listed_or_known_tools() {
    let (server, url, task) = server().await;
    let arguments = json!({"region": "eu west\n1"});
    // Not listed, not known: the header is missing and the server refuses the call.
    let client = Client::connect_http_with(&url, ClientOptions::with_era(Era::Modern))
        .await
        .unwrap();
    let err = client
        .call_tool("regional", arguments.clone())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Mcp-Param-Region"), "{err}");
    // Listed: the client learned the mark.
    client.list_tools().await.unwrap();
    let r = client
        .call_tool("regional", arguments.clone())
        .await
        .unwrap();
    assert_eq!(r.text(), arguments.to_string());
    client.close().await.unwrap();
    // Known up front: no tools/list needed.
    let regional = serde_json::from_value(json!({
        "name": "regional", "inputSchema": serde_json::from_str::<serde_json::Value>(REGIONAL).unwrap()
    }))
    .unwrap();
    let options = ClientOptions::with_era(Era::Modern).with_known_tool(regional);
    let client = Client::connect_http_with(&url, options).await.unwrap();
    let r = client
        .call_tool("regional", arguments.clone())
        .await
        .unwrap();
    assert_eq!(r.text(), arguments.to_string());
    client.close().await.unwrap();
    server.shutdown();
    task.await.unwrap();
}

#[tokio::test]
async fn listen_stream_over_http_and_shutdown() {
    let (server, url, task) = server().await;
    let client = Client::connect_http_with(&url, ClientOptions::with_era(Era::Modern))
        .await
        .unwrap();
    let mut notes = client.notifications();
    let listen = client.listen(json!({"toolsListChanged": true}));
    let listen = tokio::spawn(listen);
    // The subscription is acknowledged on its stream (not reported); give it a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.tools().remove("poll");
    let changed = tokio::time::timeout(Duration::from_secs(5), notes.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed, Notification::ListChanged(ListKind::Tools));
    // Shutdown ends the stream with its closing response.
    server.shutdown();
    let closed = tokio::time::timeout(Duration::from_secs(5), listen)
        .await
        .expect("the listen request ends")
        .unwrap()
        .expect("a closing result");
    assert_eq!(closed["resultType"], "complete");
    task.await.unwrap();
}

//! The client's session GET stream (legacy Streamable HTTP) is open before the session's
//! first request after the handshake. A server may answer a request on that stream (the
//! conformance suite's `sse-retry` scenario does, and measures the client's reconnection
//! from its GETs): a GET that is still on its way when a request is sent is a GET the
//! server mistakes for a reconnection. The server here holds back the GET's answer, so a
//! client that opened the stream in the background would send `tools/list` first.

#![cfg(feature = "http")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use mcp_rs_tokio::client::{Client, ClientOptions, Era};
use serde_json::{json, Value};

/// How long the server takes to answer the GET.
const GET_DELAY: Duration = Duration::from_millis(400);

type Log = Arc<Mutex<Vec<String>>>;

async fn handle(log: Log, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    let json = |status: StatusCode, body: Value| {
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "application/json")
            .header("mcp-session-id", "s-1")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    if method == Method::GET {
        let version = headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_owned();
        tokio::time::sleep(GET_DELAY).await;
        log.lock()
            .unwrap()
            .push(format!("GET answered (version {version})"));
        // The priming event, then a stream that stays open.
        let events = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(
            "id: e1\nretry: 500\ndata: \n\n",
        ))])
        .chain(futures::stream::pending());
        return Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(events))
            .unwrap();
    }
    if method != Method::POST {
        return json(StatusCode::METHOD_NOT_ALLOWED, json!({}));
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let name = request["method"].as_str().unwrap_or("?").to_owned();
    log.lock().unwrap().push(format!("POST {name}"));
    let id = request["id"].clone();
    match name.as_str() {
        "initialize" => json(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stream-order", "version": "1"}
            }}),
        ),
        "tools/list" => json(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}}),
        ),
        _ if id.is_null() => Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Body::empty())
            .unwrap(),
        _ => json(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        ),
    }
}

#[tokio::test]
async fn the_session_stream_is_open_before_the_first_request_after_the_handshake() {
    let log: Log = Arc::default();
    let state = log.clone();
    let router = axum::Router::new().route(
        "/mcp",
        axum::routing::any(move |method: Method, headers: HeaderMap, body: Bytes| {
            handle(state.clone(), method, headers, body)
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let run = async {
        let client = Client::connect_http_with(&url, ClientOptions::with_era(Era::legacy()))
            .await
            .unwrap();
        client.list_tools().await.unwrap();
        client
    };
    let client = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("bounded");
    let seen = log.lock().unwrap().clone();
    let at = |entry: &str| seen.iter().position(|e| e.starts_with(entry));
    let (Some(get), Some(list)) = (at("GET answered"), at("POST tools/list")) else {
        panic!("{seen:?}");
    };
    assert!(
        get < list,
        "tools/list was sent before the GET was answered: {seen:?}"
    );
    assert_eq!(at("POST initialize"), Some(0), "{seen:?}");
    // The GET carries the negotiated version.
    assert_eq!(seen[get], "GET answered (version 2025-11-25)", "{seen:?}");
    drop(client);
}

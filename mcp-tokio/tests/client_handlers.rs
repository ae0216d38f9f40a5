//! The application's handlers (sampling, elicitation, roots): declared capabilities,
//! legacy server requests, and 2026-07-28 `input_required` rounds answered from them.

#![cfg(feature = "client")]

use std::future::Future;
use std::time::Duration;

use mcp_rs_tokio::client::{Client, ClientError, ClientOptions, Era, Root};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The server side of one scripted connection.
struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Conn {
    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).await.unwrap();
        assert!(n > 0, "the client closed the connection");
        serde_json::from_str(&line).unwrap()
    }

    async fn send(&mut self, msg: Value) {
        let line = format!("{msg}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }
}

async fn scripted<F, Fut, T>(script: F) -> (std::net::SocketAddr, JoinHandle<T>)
where
    F: FnOnce(Conn) -> Fut + Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (r, w) = stream.into_split();
        script(Conn {
            reader: BufReader::new(r),
            writer: w,
        })
        .await
    });
    (addr, task)
}

fn handlers(era: Era) -> ClientOptions {
    ClientOptions::with_era(era)
        .on_elicitation(|params| async move {
            assert!(params.get("requestedSchema").is_some(), "{params}");
            // The user fills in one field; the others get the schema's defaults.
            Ok(json!({"action": "accept", "content": {"name": "Ann"}}))
        })
        .on_sampling(|_| async {
            Ok(json!({"role": "assistant", "model": "m",
                "content": {"type": "text", "text": "sampled"}}))
        })
        .with_roots(vec![Root::new("file:///work", "work")])
}

fn elicitation() -> Value {
    json!({"message": "who?", "requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string", "default": "John"},
        "age": {"type": "integer", "default": 30}}}})
}

#[tokio::test]
async fn legacy_server_requests_are_answered_by_the_handlers() {
    let (addr, server) = scripted(|mut conn| async move {
        let init = conn.recv().await;
        assert_eq!(
            init["params"]["capabilities"],
            json!({"roots": {}, "sampling": {}, "elicitation": {}})
        );
        conn.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "0"}}}))
            .await;
        assert_eq!(conn.recv().await["method"], "notifications/initialized");
        let call = conn.recv().await;
        assert_eq!(call["method"], "tools/call");
        let asks = [
            ("roots/list", json!({})),
            ("elicitation/create", elicitation()),
            (
                "sampling/createMessage",
                json!({"messages": [], "maxTokens": 5}),
            ),
        ];
        let mut answers = Vec::new();
        for (n, (method, params)) in asks.into_iter().enumerate() {
            conn.send(
                json!({"jsonrpc": "2.0", "id": format!("s{n}"), "method": method,
                "params": params}),
            )
            .await;
            answers.push(conn.recv().await);
        }
        conn.send(json!({"jsonrpc": "2.0", "id": call["id"], "result": {
            "content": [{"type": "text", "text": "done"}]}}))
            .await;
        let changed = conn.recv().await;
        assert_eq!(
            changed,
            json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {}})
        );
        answers
    })
    .await;
    let client = Client::connect_tcp_with(addr, handlers(Era::legacy()))
        .await
        .unwrap();
    let result = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(result.text(), "done");
    client.roots_changed().await.unwrap();
    let answers = server.await.unwrap();
    assert_eq!(
        answers[0],
        json!({"jsonrpc": "2.0", "id": "s0", "result": {"roots": [
            {"uri": "file:///work", "name": "work"}]}})
    );
    assert_eq!(
        answers[1]["result"],
        json!({"action": "accept", "content": {"name": "Ann", "age": 30}})
    );
    assert_eq!(answers[2]["result"]["content"]["text"], "sampled");
}

fn discovered(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}}, "resultType": "complete", "cacheScope": "public"}})
}

fn input_required(id: &Value, state: Option<&str>) -> Value {
    let mut result = json!({"resultType": "input_required", "inputRequests": {
        "who": {"method": "elicitation/create", "params": elicitation()},
        "where": {"method": "roots/list"}}});
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

#[tokio::test]
async fn modern_input_required_rounds_are_answered_and_state_echoed() {
    let (addr, server) = scripted(|mut conn| async move {
        let discover = conn.recv().await;
        conn.send(discovered(&discover["id"])).await;
        let first = conn.recv().await;
        assert_eq!(
            first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"roots": {}, "sampling": {}, "elicitation": {}})
        );
        conn.send(input_required(&first["id"], Some("opaque \"state\"")))
            .await;
        let second = conn.recv().await;
        // Without a requestState, none is echoed.
        conn.send(input_required(&second["id"], None)).await;
        let third = conn.recv().await;
        conn.send(json!({"jsonrpc": "2.0", "id": third["id"], "result": {
            "resultType": "complete", "content": [{"type": "text", "text": "done"}]}}))
            .await;
        (first, second, third)
    })
    .await;
    let client = Client::connect_tcp_with(addr, handlers(Era::Modern))
        .await
        .unwrap();
    let result = client.call_tool("ask", json!({"q": 1})).await.unwrap();
    assert_eq!(result.text(), "done");
    let (first, second, third) = server.await.unwrap();
    assert_ne!(first["id"], second["id"]);
    for retry in [&second, &third] {
        assert_eq!(retry["params"]["name"], "ask");
        assert_eq!(retry["params"]["arguments"], json!({"q": 1}));
        let responses = &retry["params"]["inputResponses"];
        assert_eq!(
            responses["who"],
            json!({"action": "accept", "content": {"name": "Ann", "age": 30}})
        );
        assert_eq!(responses["where"]["roots"][0]["uri"], "file:///work");
    }
    assert_eq!(second["params"]["requestState"], "opaque \"state\"");
    assert!(third["params"].get("requestState").is_none(), "{third}");
}

#[tokio::test]
async fn endless_input_rounds_are_bounded() {
    let (addr, _server) = scripted(|mut conn| async move {
        let discover = conn.recv().await;
        conn.send(discovered(&discover["id"])).await;
        loop {
            let request = conn.recv().await;
            conn.send(input_required(&request["id"], Some("again")))
                .await;
        }
    })
    .await;
    let options = ClientOptions {
        max_input_rounds: 3,
        ..handlers(Era::Modern)
    };
    let client = Client::connect_tcp_with(addr, options).await.unwrap();
    let err = tokio::time::timeout(Duration::from_secs(10), client.call_tool("ask", json!({})))
        .await
        .expect("bounded")
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Malformed(m) if m.contains("3 times")),
        "{err:?}"
    );
}

#[tokio::test]
async fn without_handlers_nothing_is_declared() {
    let (addr, server) = scripted(|mut conn| async move {
        let discover = conn.recv().await;
        conn.send(discovered(&discover["id"])).await;
        let list = conn.recv().await;
        conn.send(json!({"jsonrpc": "2.0", "id": list["id"], "result": {
            "resultType": "complete", "tools": []}}))
            .await;
        list
    })
    .await;
    let client = Client::connect_tcp_with(addr, ClientOptions::with_era(Era::Modern))
        .await
        .unwrap();
    // No roots handler, and 2026-07-28 has no such notification.
    let err = client.roots_changed().await.unwrap_err();
    assert!(matches!(err, ClientError::Refused(_)), "{err:?}");
    assert!(client.list_tools().await.unwrap().is_empty());
    let list = server.await.unwrap();
    assert_eq!(
        list["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
}

#[tokio::test]
async fn a_round_whose_handlers_never_answer_times_out() {
    let (addr, _server) = scripted(|mut conn| async move {
        let discover = conn.recv().await;
        conn.send(discovered(&discover["id"])).await;
        let request = conn.recv().await;
        conn.send(input_required(&request["id"], None)).await;
        // Keep the connection open.
        let _ = conn.reader.read_line(&mut String::new()).await;
    })
    .await;
    let options = ClientOptions {
        request_timeout: Duration::from_millis(300),
        ..ClientOptions::with_era(Era::Modern)
            .with_roots(Vec::new())
            .on_elicitation(|_| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(json!({"action": "cancel"}))
            })
    };
    let client = Client::connect_tcp_with(addr, options).await.unwrap();
    let err = tokio::time::timeout(Duration::from_secs(5), client.call_tool("ask", json!({})))
        .await
        .expect("bounded")
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout), "{err:?}");
}

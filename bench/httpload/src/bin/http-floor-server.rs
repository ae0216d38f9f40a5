//! The floor of `bench/http.sh`: the least an HTTP JSON-RPC server on the same stack (tokio,
//! hyper's HTTP/1.1 connection, `serde_json`) must do to answer the load generator's calls,
//! with no MCP implementation at all: each body is parsed into a `serde_json::Value` and
//! answered with `json!`. No header, session or `_meta` checks, no schemas; `initialize`
//! returns a fresh session id that is never stored, any other POST without an id gets 202,
//! DELETE gets 200. It shows how much of a call's cost is HTTP and TCP on this machine,
//! which no MCP server can go below.
//!
//! ```text
//! http-floor-server [--addr 127.0.0.1:0]
//! ```

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

static SESSIONS: AtomicU64 = AtomicU64::new(1);

fn reply(status: StatusCode, body: Option<Value>) -> Response<Full<Bytes>> {
    let json = body.is_some();
    let bytes = body.map_or_else(Bytes::new, |v| Bytes::from(v.to_string()));
    let mut r = Response::new(Full::new(bytes));
    *r.status_mut() = status;
    if json {
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    r
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() == Method::DELETE {
        return Ok(reply(StatusCode::OK, None));
    }
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, None)),
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        let e = json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}});
        return Ok(reply(StatusCode::BAD_REQUEST, Some(e)));
    };
    let Some(id) = msg.get("id").cloned() else {
        return Ok(reply(StatusCode::ACCEPTED, None));
    };
    let params = &msg["params"];
    let answer = match msg["method"].as_str() {
        Some("initialize") => {
            let version = params["protocolVersion"].clone();
            let result = json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-floor", "version": "0"},
            });
            let mut r = reply(
                StatusCode::OK,
                Some(json!({"jsonrpc": "2.0", "id": id, "result": result})),
            );
            let session = format!("{:032x}", SESSIONS.fetch_add(1, Ordering::Relaxed));
            if let Ok(v) = HeaderValue::from_str(&session) {
                r.headers_mut().insert("mcp-session-id", v);
            }
            return Ok(r);
        }
        Some("tools/call") => {
            let args = &params["arguments"];
            match (args["a"].as_f64(), args["b"].as_f64()) {
                (Some(a), Some(b)) => {
                    let sum = a + b;
                    json!({"jsonrpc": "2.0", "id": id, "result": {
                        "content": [{"type": "text", "text": json!({"result": sum}).to_string()}],
                        "structuredContent": {"result": sum},
                    }})
                }
                _ => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "a and b must be numbers"}})
                }
            }
        }
        _ => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
        }
    };
    Ok(reply(StatusCode::OK, Some(answer)))
}

/// `listening on <addr>` on stderr in one write (`eprintln!` may write the line in pieces,
/// and the bench scripts read it while it is being written).
fn announce(addr: std::net::SocketAddr) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(format!("listening on {addr}\n").as_bytes());
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mut addr = "127.0.0.1:0".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--addr", Some(v)) => addr = v,
            _ => {
                eprintln!("usage: http-floor-server [--addr 127.0.0.1:0]");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let listener = match mcp_rs_tokio::bind_tcp(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("http-floor-server: cannot bind {addr}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(a) => announce(a),
        Err(e) => {
            eprintln!("http-floor-server: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("http-floor-server: accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), hyper::service::service_fn(handle))
                .await;
        });
    }
}

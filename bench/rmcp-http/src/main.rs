//! The rmcp baseline of `bench/http.sh`: rmcp's `StreamableHttpService` (with
//! `LocalSessionManager`) served by hyper's HTTP/1.1 connection builder, one tool `add`
//! written the rmcp way (`#[tool_router]`, `Parameters<AddArgs>`, `Json<AddResult>`): the
//! same shape as the mcp-rs bench server (`mcp-http-bench-server`).
//!
//! ```text
//! bench-rmcp-http [--addr 127.0.0.1:0] [--stateless]
//! ```
//!
//! Default: `legacy_session_mode = true` (sessions for legacy clients; 2026-07-28 requests
//! are always stateless in rmcp). `--stateless`: `legacy_session_mode = false` and
//! `json_response = true` (rmcp's stateless configuration: plain JSON answers). Prints
//! `listening on <addr>` to stderr once bound; runs until killed.
use std::sync::{Arc, OnceLock};

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::{tool, tool_handler, tool_router, Json, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    /// first operand
    pub a: f64,
    /// second operand
    pub b: f64,
}

#[derive(Serialize, JsonSchema)]
pub struct AddResult {
    /// a + b
    pub result: f64,
}

/// The handler. rmcp builds one per session (and per stateless request) through the service
/// factory; the tool router is built once and shared, so that cost is not rmcp's per
/// request.
#[derive(Clone)]
pub struct Bench {
    tool_router: Arc<ToolRouter<Self>>,
}

#[tool_router]
impl Bench {
    fn new() -> Self {
        static ROUTER: OnceLock<Arc<ToolRouter<Bench>>> = OnceLock::new();
        Self {
            tool_router: ROUTER.get_or_init(|| Arc::new(Self::tool_router())).clone(),
        }
    }

    #[tool(description = "Add two numbers")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<AddResult> {
        Json(AddResult { result: a + b })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {}

/// `listening on <addr>` on stderr in one write (`eprintln!` may write the line in pieces,
/// and the bench scripts read it while it is being written).
fn announce(addr: std::net::SocketAddr) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(format!("listening on {addr}\n").as_bytes());
}

/// A listener with a backlog of 1,024, as the mcp-rs bench server binds.
fn bind(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut addr = "127.0.0.1:0".to_owned();
    let mut stateless = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--addr" => addr = args.next().ok_or("--addr needs a value")?,
            "--stateless" => stateless = true,
            other => {
                return Err(format!(
                    "unknown argument {other:?}; usage: bench-rmcp-http [--addr A] [--stateless]"
                )
                .into())
            }
        }
    }
    let listener = bind(addr.parse()?)?;
    announce(listener.local_addr()?);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless);
    let service = StreamableHttpService::new(
        || Ok(Bench::new()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

//! The interop reference server (`interop/REFERENCE.md`) on rmcp, the official Rust SDK: no
//! mcp-rs code. Handshake era only (`initialize`, up to 2025-11-25).
//!
//! ```text
//! rmcp-reference stdio|http
//! ```
//!
//! `stdio`: JSON-RPC on stdin/stdout until stdin closes. `http`: rmcp's Streamable HTTP
//! service (stateful sessions, `LocalSessionManager`) under hyper on `127.0.0.1:<any port>`;
//! the only stdout line is `listening on http://127.0.0.1:PORT/mcp`.
//!
//! The handler is written against rmcp's `ServerHandler` trait directly (no tool macros), with
//! results built from JSON through rmcp's own model types, so that the wire shapes are exactly
//! the ones REFERENCE.md names.
#![allow(deprecated)] // sampling, roots, logging and resources/subscribe are deprecated in rmcp

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// Builds an rmcp model value from its JSON form (panics only on a bug here).
fn model<T: DeserializeOwned>(v: Value) -> T {
    match serde_json::from_value(v.clone()) {
        Ok(t) => t,
        Err(e) => panic!("rmcp model from {v}: {e}"),
    }
}

fn to_json<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    model(json!({"content": [{"type": "text", "text": text.into()}]}))
}

fn error_result(text: impl Into<String>) -> CallToolResult {
    model(json!({"content": [{"type": "text", "text": text.into()}], "isError": true}))
}

/// RFC 5424 severities in the order `logging/setLevel` uses.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn level_rank(level: &str) -> usize {
    LEVELS.iter().position(|l| *l == level).unwrap_or(0)
}

/// Per connection (stdio process, or HTTP session: rmcp builds one handler per session).
#[derive(Default)]
struct State {
    /// `add_tool` was called.
    extra: bool,
    /// `logging/setLevel`, if any.
    level: Option<String>,
    /// `resources/subscribe`d uris.
    subscriptions: HashSet<String>,
}

#[derive(Clone, Default)]
struct Reference {
    state: Arc<Mutex<State>>,
}

fn tool_list(extra: bool) -> Value {
    let mut tools = vec![
        json!({"name": "echo", "description": "Echo the text",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}),
        json!({"name": "add", "description": "Add two numbers",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}}),
        json!({"name": "slow", "description": "Report progress steps times",
            "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}}, "required": ["steps"]}}),
        json!({"name": "log", "description": "Send a log message",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}),
        json!({"name": "ask_llm", "description": "Ask the client's LLM (sampling)",
            "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}}),
        json!({"name": "ask_user", "description": "Ask the user (form elicitation)",
            "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}}),
        json!({"name": "roots", "description": "List the client's roots",
            "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "fail", "description": "Fail on purpose",
            "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "add_tool", "description": "Add the tool extra and announce it",
            "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "touch", "description": "Announce resources/updated for a uri",
            "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]}}),
    ];
    if extra {
        tools.push(json!({"name": "extra", "description": "Added by add_tool",
            "inputSchema": {"type": "object", "properties": {}}}));
    }
    json!({ "tools": tools })
}

/// Compact JSON of a number sum: integral sums as integers (`{"sum":3}`), like the others.
fn sum_value(a: &Value, b: &Value) -> Value {
    if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
        if let Some(s) = a.checked_add(b) {
            return json!(s);
        }
    }
    let s = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
    if s.fract() == 0.0 && s.abs() < 9.0e15 {
        json!(s as i64)
    } else {
        json!(s)
    }
}

impl Reference {
    async fn tool(
        &self,
        name: &str,
        args: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let str_arg = |key: &str| args[key].as_str().unwrap_or_default().to_owned();
        // rmcp sends a server-to-client request whatever the client declared; like TS 1.x,
        // answer an `isError` result when the capability is missing.
        let caps = context
            .client_capabilities()
            .map(|c| to_json(&c))
            .unwrap_or(Value::Null);
        let missing = |what: &str| Ok(error_result(format!("client did not declare {what}")));
        match name {
            "ask_llm" if caps["sampling"].is_null() => missing("sampling"),
            "roots" if caps["roots"].is_null() => missing("roots"),
            "ask_user" if !form_elicitation(&caps) => missing("form elicitation"),
            "echo" => Ok(text_result(format!("echo: {}", str_arg("text")))),
            "add" => {
                let sum = json!({"sum": sum_value(&args["a"], &args["b"])});
                Ok(model(json!({
                    "content": [{"type": "text", "text": sum.to_string()}],
                    "structuredContent": sum,
                })))
            }
            "slow" => {
                let steps = args["steps"].as_u64().unwrap_or(0);
                let token = context.meta.get_progress_token();
                for step in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    if let Some(token) = &token {
                        let param: ProgressNotificationParam = model(json!({
                            "progressToken": to_json(token),
                            "progress": step,
                            "total": steps,
                        }));
                        let _ = context.peer.notify_progress(param).await;
                    }
                }
                Ok(text_result(format!("done {steps}")))
            }
            "log" => {
                let threshold = self.state.lock().unwrap().level.clone();
                let send = threshold.is_none_or(|l| level_rank(&l) <= level_rank("info"));
                if send {
                    let param: LoggingMessageNotificationParam =
                        model(json!({"level": "info", "data": str_arg("message")}));
                    let _ = context.peer.notify_logging_message(param).await;
                }
                Ok(text_result("logged"))
            }
            "ask_llm" => {
                let params: CreateMessageRequestParams = model(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": str_arg("prompt")}}],
                    "maxTokens": 50,
                }));
                match context.peer.create_message(params).await {
                    Ok(answer) => {
                        let answer = to_json(&answer);
                        let content = &answer["content"];
                        let text = content["text"]
                            .as_str()
                            .or_else(|| content[0]["text"].as_str())
                            .unwrap_or_default();
                        Ok(text_result(format!("sampled: {text}")))
                    }
                    Err(e) => Ok(error_result(e.to_string())),
                }
            }
            "ask_user" => {
                let params: ElicitRequestParams = model(json!({
                    "mode": "form",
                    "message": str_arg("question"),
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "age": {"type": "integer", "default": 42},
                        },
                        "required": ["name"],
                    },
                }));
                match context.peer.create_elicitation(params).await {
                    Ok(answer) => {
                        let answer = to_json(&answer);
                        let action = answer["action"].as_str().unwrap_or_default();
                        let content = answer.get("content").cloned().unwrap_or(Value::Null);
                        Ok(text_result(format!("{action} {content}")))
                    }
                    Err(e) => Ok(error_result(e.to_string())),
                }
            }
            "roots" => match context.peer.list_roots().await {
                Ok(list) => {
                    let uris: Vec<String> = list
                        .roots
                        .iter()
                        .map(|r| r.uri.to_string())
                        .collect();
                    Ok(text_result(format!("roots: {}", uris.join(","))))
                }
                Err(e) => Ok(error_result(e.to_string())),
            },
            "fail" => Ok(error_result("failed on purpose")),
            "add_tool" => {
                self.state.lock().unwrap().extra = true;
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text_result("added"))
            }
            "touch" => {
                let uri = str_arg("uri");
                let subscribed = self.state.lock().unwrap().subscriptions.contains(&uri);
                if subscribed {
                    let param: ResourceUpdatedNotificationParam = model(json!({"uri": uri}));
                    let _ = context.peer.notify_resource_updated(param).await;
                }
                Ok(text_result("touched"))
            }
            "extra" if self.state.lock().unwrap().extra => Ok(text_result("extra")),
            other => Err(McpError::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }
}

/// `elicitation: {}` means form (2025-06-18); otherwise `form` must be present.
fn form_elicitation(caps: &Value) -> bool {
    match caps.get("elicitation") {
        Some(Value::Object(e)) => e.contains_key("form") || !e.contains_key("url"),
        _ => false,
    }
}

fn prefix_matches(all: &[&str], value: &str) -> Vec<String> {
    all.iter()
        .filter(|v| v.starts_with(value))
        .map(|v| (*v).to_owned())
        .collect()
}

impl ServerHandler for Reference {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities = model(json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "logging": {},
            "completions": {},
        }));
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("rmcp-reference", "1.0.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    /// Handshake era only: 2026-07-28 is not offered (no `server/discover` era).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let extra = self.state.lock().unwrap().extra;
        Ok(model(tool_list(extra)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let request = to_json(&request);
        let name = request["name"].as_str().unwrap_or_default().to_owned();
        let args = request.get("arguments").cloned().unwrap_or(json!({}));
        self.tool(&name, &args, &context).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(model(json!({"resources": [
            {"uri": "ref://static/text", "name": "static_text", "mimeType": "text/plain"},
            {"uri": "ref://static/blob", "name": "static_blob", "mimeType": "application/octet-stream"},
        ]})))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(model(json!({"resourceTemplates": [
            {"uriTemplate": "ref://items/{id}", "name": "item", "mimeType": "text/plain"},
        ]})))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = to_json(&request)["uri"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let contents = match uri.as_str() {
            "ref://static/text" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "static text"})
            }
            "ref://static/blob" => {
                json!({"uri": uri, "mimeType": "application/octet-stream", "blob": "AAECAw=="})
            }
            _ => match uri.strip_prefix("ref://items/") {
                Some(id) if !id.is_empty() && !id.contains('/') => {
                    json!({"uri": uri, "mimeType": "text/plain", "text": format!("item {id}")})
                }
                _ => {
                    return Err(McpError::resource_not_found(
                        format!("no resource {uri}"),
                        Some(json!({"uri": uri})),
                    ))
                }
            },
        };
        let result: ReadResourceResult = model(json!({ "contents": [contents] }));
        Ok(result.into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = to_json(&request)["uri"].as_str().unwrap_or_default().to_owned();
        self.state.lock().unwrap().subscriptions.insert(uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = to_json(&request)["uri"].as_str().unwrap_or_default().to_owned();
        self.state.lock().unwrap().subscriptions.remove(&uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(model(json!({"prompts": [
            {"name": "greet", "description": "Greet someone",
             "arguments": [{"name": "name", "description": "who", "required": true}]},
            {"name": "plain", "description": "A prompt without arguments"},
        ]})))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let request = to_json(&request);
        let text = match request["name"].as_str().unwrap_or_default() {
            "greet" => match request["arguments"]["name"].as_str() {
                Some(name) => format!("Hello, {name}!"),
                None => return Err(McpError::invalid_params("greet needs name", None)),
            },
            "plain" => "plain prompt".to_owned(),
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown prompt {other}"),
                    None,
                ))
            }
        };
        let result: GetPromptResult = model(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }));
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let request = to_json(&request);
        let reference = &request["ref"];
        let argument = request["argument"]["name"].as_str().unwrap_or_default();
        let value = request["argument"]["value"].as_str().unwrap_or_default();
        let values = match (
            reference["type"].as_str().unwrap_or_default(),
            argument,
        ) {
            ("ref/prompt", "name") if reference["name"] == "greet" => {
                prefix_matches(&["alice", "albert", "bob"], value)
            }
            ("ref/resource", "id") if reference["uri"] == "ref://items/{id}" => {
                prefix_matches(&["1", "2", "3"], value)
            }
            _ => Vec::new(),
        };
        let total = values.len();
        Ok(model(json!({
            "completion": {"values": values, "total": total, "hasMore": false},
        })))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let level = to_json(&request)["level"]
            .as_str()
            .unwrap_or("debug")
            .to_owned();
        self.state.lock().unwrap().level = Some(level);
        Ok(())
    }
}

async fn serve_stdio() -> Result<(), Box<dyn std::error::Error>> {
    let running = Reference::default().serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

async fn serve_http() -> Result<(), Box<dyn std::error::Error>> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    };

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // Stateful sessions: one handler (and one `State`) per `Mcp-Session-Id`, with server-to-
    // client requests on the calling POST's SSE stream and the rest on the GET stream.
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(true);
    let service = StreamableHttpService::new(
        || Ok(Reference::default()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        out.write_all(format!("listening on http://{addr}/mcp\n").as_bytes())?;
        out.flush()?;
    }
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                eprintln!("rmcp-reference: connection: {e}");
            }
        });
    }
}

#[tokio::main]
async fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let result = match mode.as_str() {
        "stdio" => serve_stdio().await,
        "http" => serve_http().await,
        _ => {
            eprintln!("usage: rmcp-reference stdio|http");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("rmcp-reference: {e}");
        std::process::exit(1);
    }
}

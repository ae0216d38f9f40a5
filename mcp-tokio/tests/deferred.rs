//! One handler model for prompts, resource reads and completions: a provider answers what
//! it can inline and defers the rest (`Dispatch::Defer`) to the server's async handlers,
//! which run as tasks and complete out of order. Checked over a pipe in both eras, every
//! response validated against the JSON Schema of its revision: results, the revision's
//! not-found error for a read answered with no contents, a handler's `ErrorReply`, a
//! handler that panics, and a deferred request with no async handler for its kind.

mod schema;

use std::time::Duration;

use mcp_rs_core::model::completion::{CompleteRequest, CompletionResult, Completions};
use mcp_rs_core::model::prompts::{Prompt, PromptArgument, PromptSet};
use mcp_rs_core::model::resources::{ReadRequest, ReadResult, Resource, ResourceSet};
use mcp_rs_core::{Dispatch, ServerHandler};
use mcp_rs_tokio::output::Role;
use mcp_rs_tokio::{
    CompletionOutput, CompletionTarget, ErrorReply, PromptOutput, ResourceOutput, Server,
    ServerInfo, Tools,
};
use serde_json::{json, Value};
use tokio::io::DuplexStream;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines, ReadHalf, WriteHalf};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

static RESOURCES: [Resource<'static>; 5] = [
    Resource::new("mem:///inline", "inline"),
    Resource::new("mem:///slow", "slow"),
    Resource::new("mem:///missing", "missing"),
    Resource::new("mem:///broken", "broken"),
    Resource::new("mem:///panic", "panic"),
];
static NAME: [PromptArgument<'static>; 1] = [PromptArgument {
    name: "name",
    title: None,
    description: None,
    required: true,
}];

/// Lists everything; reads `mem:///inline` itself and defers every other read, every
/// prompt and every completion.
struct Provider;

impl ResourceSet for Provider {
    fn len(&self) -> usize {
        RESOURCES.len()
    }
    fn get(&self, i: usize) -> Option<Resource<'_>> {
        RESOURCES.get(i).copied()
    }
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        if request.uri().eq_str("mem:///inline") {
            result.text("mem:///inline", Some("text/plain"), "answered inline");
            return Dispatch::Done;
        }
        Dispatch::Defer
    }
}

impl PromptSet for Provider {
    fn len(&self) -> usize {
        1
    }
    fn get(&self, i: usize) -> Option<Prompt<'_>> {
        (i == 0).then(|| Prompt {
            arguments: &NAME,
            ..Prompt::new("greet", "Greets someone")
        })
    }
}

impl Completions for Provider {
    fn complete(&mut self, _: &CompleteRequest<'_>, _: &mut CompletionResult<'_, '_>) -> Dispatch {
        Dispatch::Defer
    }
}

impl ServerHandler for Provider {
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        Some(self)
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(self)
    }
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        Some(self)
    }
}

fn info() -> ServerInfo {
    ServerInfo {
        name: "deferred".into(),
        version: "0".into(),
        ..Default::default()
    }
}

fn server() -> Server {
    Server::new(info(), Tools::new())
        .provide(Provider)
        .async_resources(|request, ctx| async move {
            assert!(ctx.principal().is_none(), "no principal over a pipe");
            match request.uri.as_str() {
                "mem:///slow" => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let text = format!("slow, listed as #{:?}", request.resource);
                    Ok(ResourceOutput::new().text(request.uri, Some("text/plain"), text))
                }
                "mem:///missing" => Ok(ResourceOutput::new()),
                "mem:///broken" => Err(ErrorReply::new(-32603, "disk on fire")),
                "mem:///panic" => panic!("resource handler exploded"),
                other => Ok(ResourceOutput::new().blob(other, None, "AAEC")),
            }
        })
        .async_prompts(|request, _| async move {
            let name = request.argument("name").unwrap_or("nobody").to_owned();
            Ok(PromptOutput::new().message(Role::User, format!("Hello, {name}!")))
        })
        .async_completion(|request, _| async move {
            assert_eq!(request.target, CompletionTarget::Prompt("greet".into()));
            let prefix = request.value.clone();
            let values = (0..150).map(|i| format!("{prefix}{i}"));
            Ok(CompletionOutput::new(values).total(150))
        })
}

/// A client over a pipe to one server connection.
struct Peer {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
    revision: &'static str,
}

impl Peer {
    async fn connect(server: Server, revision: &'static str) -> Peer {
        let (client, server_side) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_side);
        tokio::spawn(async move { server.serve_connection(sr, sw).await });
        let (cr, writer) = tokio::io::split(client);
        let mut peer = Peer {
            lines: BufReader::new(cr).lines(),
            writer,
            revision,
        };
        if revision != MODERN {
            peer.send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": revision, "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}}),
            )
            .await;
            let init = peer.next().await;
            assert_eq!(init["result"]["protocolVersion"], revision, "{init}");
            peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
        }
        peer
    }

    /// Sends a request (with the 2026-07-28 `_meta` when the peer speaks that era).
    async fn request(&mut self, id: u64, method: &str, mut params: Value) {
        if self.revision == MODERN {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message, validated as a JSON-RPC response of the peer's revision.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        let v: Value = serde_json::from_str(&line).unwrap();
        schema::validate(self.revision, "JSONRPCResponse", &v);
        v
    }
}

/// Asks `method` and returns its response.
async fn ask(peer: &mut Peer, method: &str, params: Value) -> Value {
    peer.request(7, method, params).await;
    let v = peer.next().await;
    assert_eq!(v["id"], 7, "{v}");
    v
}

async fn reads_prompts_and_completions(revision: &'static str) {
    let mut peer = Peer::connect(server(), revision).await;

    let inline = ask(&mut peer, "resources/read", json!({"uri": "mem:///inline"})).await;
    schema::validate(revision, "ReadResourceResult", &inline["result"]);
    assert_eq!(inline["result"]["contents"][0]["text"], "answered inline");

    let slow = ask(&mut peer, "resources/read", json!({"uri": "mem:///slow"})).await;
    schema::validate(revision, "ReadResourceResult", &slow["result"]);
    assert_eq!(
        slow["result"]["contents"][0],
        json!({"uri": "mem:///slow", "mimeType": "text/plain", "text": "slow, listed as #Some(1)"})
    );

    let unlisted = ask(&mut peer, "resources/read", json!({"uri": "mem:///else"})).await;
    assert_eq!(
        unlisted["result"]["contents"][0]["blob"], "AAEC",
        "{unlisted}"
    );

    // no contents: the revision's not-found error, naming the URI
    let missing = ask(
        &mut peer,
        "resources/read",
        json!({"uri": "mem:///missing"}),
    )
    .await;
    let code = if revision == MODERN { -32602 } else { -32002 };
    assert_eq!(missing["error"]["code"], code, "{missing}");
    assert_eq!(
        missing["error"]["data"]["uri"], "mem:///missing",
        "{missing}"
    );

    let broken = ask(&mut peer, "resources/read", json!({"uri": "mem:///broken"})).await;
    assert_eq!(
        broken["error"],
        json!({"code": -32603, "message": "disk on fire"})
    );

    let panicked = ask(&mut peer, "resources/read", json!({"uri": "mem:///panic"})).await;
    assert_eq!(panicked["error"]["code"], -32603, "{panicked}");
    let message = panicked["error"]["message"].as_str().unwrap();
    assert!(message.contains("panicked"), "{message}");

    let prompt = ask(
        &mut peer,
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    )
    .await;
    schema::validate(revision, "GetPromptResult", &prompt["result"]);
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "Hello, Ada!"
    );

    let completion = ask(
        &mut peer,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"},
               "argument": {"name": "name", "value": "A"}}),
    )
    .await;
    schema::validate(revision, "CompleteResult", &completion["result"]);
    let values = &completion["result"]["completion"];
    assert_eq!(
        values["values"].as_array().unwrap().len(),
        100,
        "the spec's cap"
    );
    assert_eq!(values["values"][0], "A0");
    assert_eq!(values["total"], 150);
    assert_eq!(values["hasMore"], true);
}

#[tokio::test]
async fn legacy_era() {
    reads_prompts_and_completions(LEGACY).await;
}

#[tokio::test]
async fn modern_era() {
    reads_prompts_and_completions(MODERN).await;
}

#[tokio::test]
async fn deferred_reads_complete_out_of_order() {
    let mut peer = Peer::connect(server(), LEGACY).await;
    peer.request(1, "resources/read", json!({"uri": "mem:///slow"}))
        .await;
    peer.request(2, "resources/read", json!({"uri": "mem:///else"}))
        .await;
    peer.request(3, "resources/read", json!({"uri": "mem:///inline"}))
        .await;
    let mut order = Vec::new();
    for _ in 0..3 {
        order.push(peer.next().await["id"].as_u64().unwrap());
    }
    // the inline answer at once, the quick task next, the slow one last
    assert_eq!(order, [3, 2, 1]);
}

#[tokio::test]
async fn a_deferred_request_without_an_async_handler_gets_an_error() {
    let server = Server::new(info(), Tools::new()).provide(Provider);
    let mut peer = Peer::connect(server, LEGACY).await;
    for (method, params, kind) in [
        ("resources/read", json!({"uri": "mem:///slow"}), "resource"),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
            "prompt",
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": ""}}),
            "completion",
        ),
    ] {
        let v = ask(&mut peer, method, params).await;
        assert_eq!(v["error"]["code"], -32603, "{v}");
        assert_eq!(
            v["error"]["message"],
            format!("{kind} has no async handler"),
            "{v}"
        );
    }
}

//! Every kind of owned content (text, image, audio, resource link, embedded text and blob
//! resources, with annotations) in a tool reply and in a prompt's messages, written through
//! the core and checked against the 2025-11-25 JSON Schema (the copy vendored in
//! `mcp-core/tests/spec`) and against the exact JSON expected.

mod schema;

use mcp_rs_core::model::prompts::{Prompt, PromptSet};
use mcp_rs_core::ServerHandler;
use mcp_rs_tokio::output::Role;
use mcp_rs_tokio::{
    Annotations, Content, Handler, PromptOutput, ResourceLink, Server, ServerInfo, ToolDef,
    ToolReply, Tools,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const REVISION: &str = "2025-11-25";

/// Validates `value` against the definition `def` of the 2025-11-25 schema.
fn validate(def: &str, value: &Value) {
    schema::validate(REVISION, def, value);
}

/// Every kind of content block, with what the core must write for each.
fn every_kind() -> Vec<(Content, Option<Annotations>, Value)> {
    let for_both = Annotations::new()
        .audience([Role::User, Role::Assistant])
        .priority(0.5)
        .last_modified("2025-01-12T15:00:58Z");
    vec![
        (
            Content::text("plain"),
            None,
            json!({"type": "text", "text": "plain"}),
        ),
        (
            Content::text("annotated"),
            Some(for_both),
            json!({"type": "text", "text": "annotated", "annotations": {
                "audience": ["user", "assistant"], "priority": 0.5,
                "lastModified": "2025-01-12T15:00:58Z"}}),
        ),
        (
            Content::image("iVBORw0KGgo=", "image/png"),
            Some(Annotations::new().audience([Role::User])),
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png",
                "annotations": {"audience": ["user"]}}),
        ),
        (
            Content::audio("UklGRg==", "audio/wav"),
            None,
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}),
        ),
        (
            ResourceLink::new("file:///notes.md", "notes")
                .title("Notes")
                .description("My notes")
                .mime_type("text/markdown")
                .size(42)
                .into(),
            None,
            json!({"type": "resource_link", "uri": "file:///notes.md", "name": "notes",
                "title": "Notes", "description": "My notes", "mimeType": "text/markdown",
                "size": 42}),
        ),
        (
            Content::ResourceLink(ResourceLink::new("file:///bare", "bare")),
            Some(Annotations::new().priority(0.25)),
            json!({"type": "resource_link", "uri": "file:///bare", "name": "bare",
                "annotations": {"priority": 0.25}}),
        ),
        (
            Content::embedded_text("file:///a.txt", Some("text/plain".into()), "hello"),
            None,
            json!({"type": "resource", "resource": {
                "uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}}),
        ),
        (
            Content::embedded_text("file:///untyped", None, "no MIME type"),
            None,
            json!({"type": "resource", "resource": {
                "uri": "file:///untyped", "text": "no MIME type"}}),
        ),
        (
            Content::embedded_blob(
                "file:///b.bin",
                Some("application/octet-stream".into()),
                "AAEC",
            ),
            Some(Annotations::new().priority(0.25)),
            json!({"type": "resource", "resource": {
                "uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAEC"},
                "annotations": {"priority": 0.25}}),
        ),
    ]
}

/// One prompt whose `prompts/get` is deferred to the async prompt handler.
struct OnePrompt;

impl PromptSet for OnePrompt {
    fn len(&self) -> usize {
        1
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        (index == 0).then(|| Prompt::new("every_kind", "Every kind of content"))
    }
}

struct Provider(OnePrompt);

impl ServerHandler for Provider {
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(&mut self.0)
    }
}

fn server() -> Server {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("every_kind", r#"{"type":"object"}"#),
        Handler::async_fn(|_, _| async {
            let mut reply = ToolReply::default();
            for (content, annotations, _) in every_kind() {
                match annotations {
                    Some(a) => reply.push_annotated(content, a),
                    None => reply.push(content),
                };
            }
            reply
        }),
    );
    let info = ServerInfo {
        name: "content".into(),
        version: "0".into(),
        ..Default::default()
    };
    Server::new(info, tools)
        .provide(Provider(OnePrompt))
        .async_prompts(|_, _| async {
            let mut output = PromptOutput::new().description("every kind");
            for (i, (content, annotations, _)) in every_kind().into_iter().enumerate() {
                let role = if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                output = match annotations {
                    Some(a) => output.message_with(role, content, a),
                    None => output.message(role, content),
                };
            }
            Ok(output)
        })
}

/// Initializes a 2025-11-25 session over a pipe, sends `request` (id 2) and returns its
/// response.
async fn ask(request: Value) -> Value {
    let server = server();
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_side);
    let task = tokio::spawn(async move { server.serve_connection(sr, sw).await });
    let (cr, mut cw) = tokio::io::split(client);
    let mut lines = BufReader::new(cr).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": REVISION, "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request,
    ] {
        cw.write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let response = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 1 {
            assert_eq!(v["result"]["protocolVersion"], REVISION, "{v}");
        }
        if v["id"] == 2 {
            break v;
        }
    };
    // EOF once both halves of the client's pipe are gone.
    drop((lines, cw));
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), task).await;
    validate("JSONRPCResponse", &response);
    response
}

#[tokio::test]
async fn tool_reply_writes_every_kind_of_content() {
    let response = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "every_kind", "arguments": {}}}))
    .await;
    let result = &response["result"];
    validate("CallToolResult", result);
    let content = result["content"].as_array().expect("content");
    let expected = every_kind();
    assert_eq!(content.len(), expected.len(), "{result:#}");
    for (block, (_, _, want)) in content.iter().zip(&expected) {
        validate("ContentBlock", block);
        assert_eq!(block, want);
    }
    assert!(result.get("isError").is_none_or(|e| e == false), "{result}");
}

#[tokio::test]
async fn prompt_output_writes_every_kind_of_content() {
    let response = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
        "params": {"name": "every_kind"}}))
    .await;
    let result = &response["result"];
    validate("GetPromptResult", result);
    assert_eq!(result["description"], "every kind");
    let messages = result["messages"].as_array().expect("messages");
    let expected = every_kind();
    assert_eq!(messages.len(), expected.len(), "{result:#}");
    for (i, (message, (_, _, want))) in messages.iter().zip(&expected).enumerate() {
        validate("PromptMessage", message);
        validate("ContentBlock", &message["content"]);
        assert_eq!(&message["content"], want);
        assert_eq!(
            message["role"],
            if i % 2 == 0 { "user" } else { "assistant" }
        );
    }
}

/// The kinds a revision lacks are downgraded by the core (audio before 2025-03-26, resource
/// links before 2025-06-18), whatever builds them.
#[tokio::test]
async fn older_revisions_get_downgraded_blocks() {
    let server = server();
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_side);
    let task = tokio::spawn(async move { server.serve_connection(sr, sw).await });
    let (cr, mut cw) = tokio::io::split(client);
    let mut lines = BufReader::new(cr).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "every_kind", "arguments": {}}}),
    ] {
        cw.write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let response = loop {
        let line = lines.next_line().await.unwrap().expect("a line");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    // EOF once both halves of the client's pipe are gone.
    drop((lines, cw));
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), task).await;
    let kinds: Vec<&str> = response["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .map(|b| b["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        ["text", "text", "image", "text", "text", "text", "resource", "resource", "resource"],
        "{response:#}"
    );
}

/// The validator refuses what the schema refuses (so the checks above are not vacuous).
#[test]
fn the_validator_refuses_invalid_blocks() {
    for bad in [
        json!({"type": "text"}),
        json!({"type": "image", "data": "AA=="}),
        json!({"type": "resource", "resource": {"uri": "file:///x"}}),
        json!({"type": "text", "text": "x", "annotations": {"audience": ["robot"]}}),
    ] {
        let refused = std::panic::catch_unwind(|| validate("ContentBlock", &bad)).is_err();
        assert!(refused, "accepted {bad}");
    }
}

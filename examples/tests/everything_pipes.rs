//! Drives the built `everything` binary as a newcomer runs it (stdio) and with `--listen`
//! (TCP), in both protocol eras, validating every message it sends against the official
//! JSON Schema of the revision in use. The official SDK clients judge the fixtures in
//! `interop/`; this checks the binary's transports, its command line and a few wire facts
//! SDK clients hide (request ids, the server-to-client request itself, error data).

#[path = "../../mcp-core/tests/harness/mod.rs"]
mod harness;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(10);
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

fn everything(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_everything"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn everything")
}

/// Lines of a reader, on a thread, as a channel.
fn lines(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A scripted client on one connection; every frame it receives is schema-checked.
struct Peer {
    write: Box<dyn Write>,
    read: Receiver<String>,
    rev: &'static str,
    caps: Value,
    next_id: u64,
}

impl Peer {
    fn send(&mut self, msg: &Value) {
        writeln!(self.write, "{msg}").expect("write");
        self.write.flush().expect("flush");
    }

    /// The next frame, validated as an answer to `method` (or as a request/notification).
    fn recv(&self, method: Option<&str>) -> Value {
        let line = self.read.recv_timeout(TIMEOUT).expect("a frame in time");
        let msg: Value = serde_json::from_str(&line).expect("one JSON value per line");
        let is_answer = msg.get("result").is_some() || msg.get("error").is_some();
        let method = if is_answer { method } else { None };
        if let Err(e) = harness::validate_server_message(self.rev, method, &msg) {
            panic!("[{}] {line}\ndoes not match the schema:\n{e}", self.rev);
        }
        msg
    }

    fn request(&mut self, method: &str, mut params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        if self.rev == MODERN {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": self.caps,
            });
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.recv(Some(method));
        assert_eq!(reply["id"], json!(id), "{reply}");
        reply
    }

    fn initialize(&mut self) {
        let caps = self.caps.clone();
        let r = self.request(
            "initialize",
            json!({"protocolVersion": LEGACY, "capabilities": caps,
                   "clientInfo": {"name": "everything-pipes", "version": "0"}}),
        );
        assert_eq!(r["result"]["serverInfo"]["name"], "mcp-rs-everything");
        assert_eq!(r["result"]["protocolVersion"], LEGACY);
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
}

fn pipes(rev: &'static str, caps: Value) -> (Child, Peer) {
    let mut child = everything(&[]);
    let write = Box::new(child.stdin.take().expect("stdin"));
    let read = lines(child.stdout.take().expect("stdout"));
    let peer = Peer {
        write,
        read,
        rev,
        caps,
        next_id: 1,
    };
    (child, peer)
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {reply}"))
}

/// The newcomer's command: stdio, legacy handshake, a sampling round trip through the
/// server-to-client request, and the legacy resource-not-found error.
#[test]
fn stdio_legacy_session() {
    let (mut child, mut p) = pipes(LEGACY, json!({"sampling": {}}));
    p.initialize();
    let tools = p.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    // The conformance fixtures, then the tasks extension's seven.
    assert_eq!(names.len(), 35, "{names:?}");
    assert_eq!(names[0], "test_simple_text");
    assert!(tools["result"].get("nextCursor").is_none(), "one page");

    // test_sampling: the server asks the client's model, then answers the call.
    p.send(&json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
                   "params": {"name": "test_sampling", "arguments": {"prompt": "hi"}}}));
    let ask = p.recv(None);
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    harness::validate_def(LEGACY, "CreateMessageRequest", &ask).expect("a valid sampling request");
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], "hi");
    assert_eq!(ask["params"]["maxTokens"], 100);
    p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "hello"},
        "model": "m", "stopReason": "endTurn"}}));
    let done = p.recv(Some("tools/call"));
    assert_eq!(done["id"], 50);
    assert_eq!(text(&done), "LLM response: hello");

    // Elicitation was not declared: an error result naming it, and no request.
    let r = p.request(
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "m"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text(&r).contains("elicitation"), "{r}");

    let r = p.request("resources/read", json!({"uri": "test://nope"}));
    assert_eq!(r["error"]["code"], -32002, "{r}");
    assert_eq!(r["error"]["data"]["uri"], "test://nope");

    drop(p);
    let status = child.wait().expect("exit");
    assert!(status.success(), "exit status {status}");
}

/// `--listen`: TCP, the 2026-07-28 era, a three-round input_required flow, tampered state
/// and the 2026 not-found error.
#[test]
fn tcp_modern_requests() {
    let mut child = everything(&["--listen", "127.0.0.1:0"]);
    let stderr = lines(child.stderr.take().expect("stderr"));
    let addr = loop {
        let line = stderr.recv_timeout(TIMEOUT).expect("the bound address");
        if let Some(addr) = line.strip_prefix("listening on ") {
            break addr.to_owned();
        }
    };
    let stream = TcpStream::connect(&addr).expect("connect");
    let mut p = Peer {
        write: Box::new(stream.try_clone().expect("clone")),
        read: lines(stream),
        rev: MODERN,
        caps: json!({"elicitation": {}}),
        next_id: 1,
    };
    let d = p.request("server/discover", json!({}));
    let versions = d["result"]["supportedVersions"]
        .as_array()
        .expect("versions");
    assert!(versions.contains(&json!(MODERN)), "{d}");

    let name = "test_input_required_result_multi_round";
    let r1 = p.request("tools/call", json!({"name": name}));
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert!(r1["result"]["inputRequests"]["step1"].is_object(), "{r1}");
    let s1 = r1["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let step1 = json!({"step1": {"action": "accept", "content": {"name": "Ada"}}});
    let r2 = p.request(
        "tools/call",
        json!({"name": name, "inputResponses": step1, "requestState": s1}),
    );
    let s2 = r2["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    assert_ne!(s1, s2);
    let tampered = format!("{s2}x");
    let step2 = json!({"step2": {"action": "accept", "content": {"color": "teal"}}});
    let bad = p.request(
        "tools/call",
        json!({"name": name, "inputResponses": step2, "requestState": tampered}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // Another tool's state is not accepted either (the seal names the target).
    let other = p.request(
        "tools/call",
        json!({"name": "test_input_required_result_tampered_state",
               "inputResponses": step2, "requestState": s2}),
    );
    assert_eq!(other["error"]["code"], -32602, "{other}");
    let r3 = p.request(
        "tools/call",
        json!({"name": name, "inputResponses": step2, "requestState": s2}),
    );
    assert_eq!(text(&r3), "Multi-round complete for Ada who likes teal");

    let r = p.request("resources/read", json!({"uri": "test://nope"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["uri"], "test://nope");
    let r = p.request(
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "x"}}),
    );
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );

    child.kill().expect("kill");
    let _ = child.wait();
}

#[test]
fn command_line() {
    let help = everything(&["--help"]).wait_with_output().expect("run");
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stderr).contains("--listen"));
    let bad = everything(&["--bogus"]).wait_with_output().expect("run");
    assert_eq!(bad.status.code(), Some(2));
    let missing = everything(&["--listen"]).wait_with_output().expect("run");
    assert_eq!(missing.status.code(), Some(2));
}

/// The skills extension over stdio: declared in `initialize`, and every file of the
/// `skills/list` manifest reads back with the listed size and `sha256:` digest (what a host
/// verifies before it loads a skill); its directory lists SKILL.md and `references`.
#[test]
fn stdio_skills_manifest_matches_the_files() {
    use sha2::{Digest, Sha256};
    let (mut child, mut p) = pipes(LEGACY, json!({}));
    let init = p.request(
        "initialize",
        json!({"protocolVersion": LEGACY, "capabilities": {},
               "clientInfo": {"name": "everything-pipes", "version": "0"}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = p.request("skills/list", json!({}));
    let skills = list["result"]["skills"].as_array().expect("skills").clone();
    assert_eq!(skills.len(), 1, "{list}");
    let entry = &skills[0];
    assert_eq!(entry["uri"], "skill://everything/greeting/SKILL.md");
    assert_eq!(entry["frontmatter"]["name"], "greeting");
    let files = entry["resources"].as_array().expect("a manifest");
    assert_eq!(files.len(), 2);
    for f in files {
        let uri = f["uri"].as_str().expect("uri");
        let read = p.request("resources/read", json!({ "uri": uri }));
        let text = read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("text of {uri}: {read}"));
        assert_eq!(f["size"], json!(text.len()), "{uri}");
        let hex: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(f["digest"], format!("sha256:{hex}"), "{uri}");
    }
    let got = p.request("skills/get", json!({"uri": entry["uri"]}));
    assert_eq!(&got["result"]["skill"], entry);
    let dir = p.request(
        "resources/directory/read",
        json!({"uri": "skill://everything/greeting"}),
    );
    let children: Vec<(&str, Option<&str>)> = dir["result"]["resources"]
        .as_array()
        .expect("children")
        .iter()
        .map(|c| (c["name"].as_str().unwrap_or(""), c["mimeType"].as_str()))
        .collect();
    assert_eq!(
        children,
        [("SKILL.md", None), ("references", Some("inode/directory"))]
    );
    drop(p);
    let status = child.wait().expect("exit");
    assert!(status.success(), "exit status {status}");
}

/// The tasks extension over stdio (2026-07-28): a deferred tool becomes a task that
/// completes in the background, a task waits for input through `tasks/update`, and a
/// running one is cancelled. Every frame is schema-checked (the tasks shapes by the
/// harness's SEP-2663 checks).
#[test]
fn stdio_tasks() {
    let caps = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (mut child, mut p) = pipes(MODERN, caps);
    let d = p.request("server/discover", json!({}));
    assert_eq!(
        d["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "{d}"
    );
    let poll = |p: &mut Peer, id: &str, until: &str| -> Value {
        for _ in 0..100 {
            let g = p.request("tasks/get", json!({"taskId": id}));
            if g["result"]["status"] == until {
                return g;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("task {id} never became {until}");
    };

    let created = p.request(
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 1, "label": "bg"}}),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(created["result"]["status"], "working");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let done = poll(&mut p, &id, "completed");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "bg: computed after 1 s"
    );

    let created = p.request(
        "tools/call",
        json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}}),
    );
    let id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let asking = poll(&mut p, &id, "input_required");
    let key = asking["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    let ack = p.request(
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
    );
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = poll(&mut p, &id, "completed");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "Deleted a.txt"
    );

    let created = p.request(
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 60}}),
    );
    let id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let ack = p.request("tasks/cancel", json!({"taskId": id}));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    poll(&mut p, &id, "cancelled");
    let unknown = p.request("tasks/get", json!({"taskId": "0123"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    drop(p);
    let status = child.wait().expect("exit");
    assert!(status.success(), "exit status {status}");
}

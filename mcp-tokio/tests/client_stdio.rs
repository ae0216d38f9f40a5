//! The client against the real `calculator` example server over child-process stdio, in
//! both protocol eras.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_rs_tokio::client::{
    CallOptions, Client, ClientError, ClientOptions, Era, Notification, Progress,
};
use serde_json::{json, Value};
use tokio::process::Command;
use tokio::sync::mpsc;

mod common;
use common::example_bin;

fn calculator(args: &[&str]) -> Command {
    let mut cmd = Command::new(example_bin("calculator"));
    cmd.args(args).stderr(Stdio::null());
    cmd
}

fn legacy() -> ClientOptions {
    ClientOptions::with_era(Era::legacy())
}

fn modern() -> ClientOptions {
    ClientOptions::with_era(Era::Modern)
}

async fn spawn(args: &[&str], options: ClientOptions) -> Client {
    Client::spawn_with(calculator(args), options)
        .await
        .expect("spawn calculator")
}

const SEED_TOOLS: [&str; 5] = [
    "add_numbers",
    "calculate",
    "roll_dice",
    "tell_fortune",
    "slow_count",
];

// ---- handshake ---------------------------------------------------------------------------

#[tokio::test]
async fn legacy_handshake_stores_server_details() {
    let client = spawn(&[], legacy()).await;
    assert!(!client.is_modern());
    assert_eq!(client.protocol_version(), "2025-11-25");
    let details = client.server_details().expect("details after initialize");
    assert_eq!(details.protocol_version, "2025-11-25");
    let info = details.server_info.expect("serverInfo");
    assert_eq!(info.name, "mcp-rs-calculator");
    assert_eq!(info.extra.get("title"), Some(&json!("Calculator")));
    assert!(details.capabilities.get("tools").is_some());
    assert!(details.instructions.unwrap().contains("add_numbers"));
    client.ping().await.unwrap();
    client
        .set_log_level(mcp_rs_tokio::client::LogLevel::Debug)
        .await
        .unwrap();
    let status = client.close().await.unwrap().expect("a child");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn legacy_older_version_is_negotiated() {
    let client = spawn(
        &[],
        ClientOptions::with_era(Era::legacy_version("2024-11-05")),
    )
    .await;
    assert_eq!(client.protocol_version(), "2024-11-05");
    let sum = client
        .call_tool("add_numbers", json!({"number1": 1, "number2": 2}))
        .await
        .unwrap();
    assert_eq!(sum.text(), "1 + 2 = 3");
}

#[tokio::test]
async fn legacy_unknown_version_gets_a_counter_proposal() {
    // Asking for 2026-07-28 through `initialize`: the server counter-proposes a legacy version,
    // which the client accepts; it never accepts a version outside the legacy ones.
    match Client::spawn_with(
        calculator(&[]),
        ClientOptions::with_era(Era::legacy_version("1999-01-01")),
    )
    .await
    {
        Ok(client) => {
            assert!(!client.is_modern(), "{}", client.protocol_version());
        }
        Err(e) => assert!(matches!(e, ClientError::Version(_)), "{e:?}"),
    }
}

#[tokio::test]
async fn modern_discover() {
    let client = spawn(&[], modern()).await;
    assert!(client.is_modern());
    assert_eq!(client.protocol_version(), "2026-07-28");
    let details = client.discover().await.unwrap();
    assert!(details.supported_versions.iter().any(|v| v == "2026-07-28"));
    assert_eq!(details.server_info.unwrap().name, "mcp-rs-calculator");
    assert_eq!(details.raw.get("resultType"), Some(&json!("complete")));
    assert!(client.server_details().is_some());
    // Legacy-only methods are refused in 2026-07-28.
    let err = client.ping().await.unwrap_err();
    assert!(matches!(err, ClientError::Refused(_)), "{err:?}");
}

#[tokio::test]
async fn auto_era_picks_modern_with_a_dual_era_server() {
    let client = spawn(&[], ClientOptions::with_era(Era::Auto)).await;
    assert!(client.is_modern());
    let details = client.server_details().unwrap();
    assert_eq!(details.protocol_version, "2026-07-28");
    let r = client
        .call_tool(
            "calculate",
            json!({"operation": "subtract", "a": 50, "b": 8}),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 42.0})));
}

#[tokio::test]
async fn spawn_failures_are_errors() {
    let missing = Client::spawn(Command::new("/nonexistent/mcp-server")).await;
    assert!(matches!(missing, Err(ClientError::Io(_))), "{missing:?}");
    // A server that exits at once (bad flag): the handshake sees the stream end.
    let exits = Client::spawn(calculator(&["--bogus"])).await;
    // (Or the write of `initialize` fails first, if the child is already gone.)
    assert!(
        matches!(exits, Err(ClientError::Closed | ClientError::Io(_))),
        "{exits:?}"
    );
}

// ---- tools/list --------------------------------------------------------------------------

async fn check_all_tools(client: &Client) {
    let first = client.list_tools_page(None).await.unwrap();
    assert_eq!(first.tools.len(), 50);
    assert!(first.next_cursor.is_some());
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), SEED_TOOLS.len() + 120);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(&names[..5], &SEED_TOOLS);
    let unique: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "duplicate tools across pages");
    for i in 1..=120 {
        assert!(unique.contains(format!("extra_tool_{i:03}").as_str()));
    }
    let add = &tools[0];
    assert_eq!(add.title.as_deref(), Some("Add numbers"));
    assert_eq!(add.input_schema["required"], json!(["number1", "number2"]));
    assert!(add.output_schema.is_some());
    assert_eq!(
        add.annotations.as_ref().unwrap()["readOnlyHint"],
        json!(true)
    );
    // The last page has no cursor; a generated tool echoes.
    let echo = client
        .call_tool("extra_tool_120", json!({"value": "hello"}))
        .await
        .unwrap();
    assert_eq!(echo.text(), "hello");
}

#[tokio::test]
async fn legacy_lists_all_tools_across_pages() {
    let client = spawn(&["--extra-tools", "120"], legacy()).await;
    check_all_tools(&client).await;
}

#[tokio::test]
async fn modern_lists_all_tools_across_pages() {
    let client = spawn(&["--extra-tools", "120"], modern()).await;
    check_all_tools(&client).await;
    let page = client.list_tools_page(None).await.unwrap();
    assert_eq!(page.extra.get("cacheScope"), Some(&json!("public")));
}

#[tokio::test]
async fn small_pages() {
    let client = spawn(&["--extra-tools", "30", "--page-size", "1"], modern()).await;
    assert_eq!(client.list_tools().await.unwrap().len(), 35);
}

// ---- tools/call --------------------------------------------------------------------------

async fn check_seed_tools(client: &Client) {
    let sum = client
        .call_tool("add_numbers", json!({"number1": 2, "number2": 40}))
        .await
        .unwrap();
    assert!(!sum.is_error);
    assert_eq!(sum.text(), "2 + 40 = 42");
    assert_eq!(sum.structured_content, Some(json!({"sum": 42.0})));

    for (op, a, b, want) in [
        ("add", 1.5, 2.0, 3.5),
        ("subtract", 10.0, 4.0, 6.0),
        ("multiply", 6.0, 7.0, 42.0),
        ("divide", 1.0, 4.0, 0.25),
    ] {
        let r = client
            .call_tool("calculate", json!({"operation": op, "a": a, "b": b}))
            .await
            .unwrap();
        assert!(!r.is_error, "{op}: {r:?}");
        assert_eq!(
            r.structured_content,
            Some(json!({ "result": want })),
            "{op}"
        );
    }

    let dice = client
        .call_tool("roll_dice", json!({"notation": "2d6+3"}))
        .await
        .unwrap();
    let s = dice.structured_content.clone().expect("structured dice");
    let rolls: Vec<i64> = serde_json::from_value(s["rolls"].clone()).unwrap();
    assert_eq!(rolls.len(), 2);
    assert!(rolls.iter().all(|r| (1..=6).contains(r)));
    assert_eq!(s["modifier"], json!(3));
    assert_eq!(s["total"], json!(rolls.iter().sum::<i64>() + 3));
    assert!(dice.text().starts_with("Rolled 2d6+3"), "{}", dice.text());

    let fortune = client
        .call_tool(
            "tell_fortune",
            json!({"category": "career", "mood": "optimistic"}),
        )
        .await
        .unwrap();
    let s = fortune
        .structured_content
        .clone()
        .expect("structured fortune");
    assert_eq!(s["category"], json!("career"));
    assert_eq!(s["mood"], json!("optimistic"));
    assert!(!s["fortune"].as_str().unwrap().is_empty());
    assert!(fortune
        .text()
        .starts_with("Your career fortune (optimistic)"));

    let counted = client
        .call_tool("slow_count", json!({"n": 2, "delay_ms": 1}))
        .await
        .unwrap();
    assert_eq!(counted.text(), "Counted to 2");
    assert_eq!(counted.structured_content, Some(json!({"count": 2})));
}

async fn check_errors(client: &Client) {
    let unknown = client
        .call_tool("no_such_tool", json!({}))
        .await
        .unwrap_err();
    match unknown {
        ClientError::Protocol { code, message, .. } => {
            assert_eq!(code, -32602);
            assert!(!message.is_empty());
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    let div = client
        .call_tool("calculate", json!({"operation": "divide", "a": 1, "b": 0}))
        .await
        .unwrap();
    assert!(div.is_error);
    assert_eq!(div.text(), "Division by zero");
    let bad_args = client
        .call_tool("add_numbers", json!({"number1": "two"}))
        .await
        .unwrap();
    assert!(bad_args.is_error, "{bad_args:?}");
    let bad_dice = client
        .call_tool("roll_dice", json!({"notation": "2d1"}))
        .await
        .unwrap();
    assert!(bad_dice.is_error);
    assert!(bad_dice.text().contains("Invalid dice notation"));
    // The calculator has no prompts.
    let method = client
        .get_prompt("no-such-prompt", Value::Null)
        .await
        .unwrap_err();
    assert!(matches!(method.code(), Some(-32601 | -32602)), "{method:?}");
    // The connection is still fine.
    client
        .call_tool("add_numbers", json!({"number1": 0, "number2": 0}))
        .await
        .unwrap();
}

#[tokio::test]
async fn legacy_calls_seed_tools() {
    let client = spawn(&[], legacy()).await;
    check_seed_tools(&client).await;
}

#[tokio::test]
async fn modern_calls_seed_tools() {
    let client = spawn(&[], modern()).await;
    check_seed_tools(&client).await;
}

#[tokio::test]
async fn legacy_errors() {
    let client = spawn(&[], legacy()).await;
    check_errors(&client).await;
}

#[tokio::test]
async fn modern_errors() {
    let client = spawn(&[], modern()).await;
    check_errors(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_are_routed_by_id() {
    let client = spawn(&[], modern()).await;
    let mut tasks = Vec::new();
    for i in 0..64 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let r = client
                .call_tool("add_numbers", json!({"number1": i, "number2": 1000}))
                .await
                .unwrap();
            assert_eq!(
                r.structured_content,
                Some(json!({"sum": f64::from(i + 1000)}))
            );
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test]
async fn call_then_ping() {
    let client = spawn(&[], legacy()).await;
    let result = client
        .call_tool("add_numbers", json!({"number1": 1, "number2": 1}))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"sum": 2.0})));
    client.ping().await.unwrap();
}

// ---- limits ------------------------------------------------------------------------------

#[tokio::test]
async fn oversized_line_fails_pending_requests_but_not_the_connection() {
    let options = ClientOptions {
        max_line: 1024,
        ..modern()
    };
    let client = spawn(&["--extra-tools", "20"], options).await;
    // A tools/list page is several KiB: longer than the limit.
    let err = client.list_tools().await.unwrap_err();
    assert!(
        matches!(err, ClientError::Oversized { limit: 1024 }),
        "{err:?}"
    );
    let r = client
        .call_tool("add_numbers", json!({"number1": 20, "number2": 22}))
        .await
        .unwrap();
    assert_eq!(r.text(), "20 + 22 = 42");
}

// ---- timeouts, progress, cancellation (slow_count) ----------------------------------------

async fn check_timeout(client: &Client) {
    let options = CallOptions::new().with_timeout(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let err = client
        .call_tool_with("slow_count", json!({"n": 100, "delay_ms": 100}), options)
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server keeps serving.
    let r = client
        .call_tool("add_numbers", json!({"number1": 1, "number2": 2}))
        .await
        .unwrap();
    assert_eq!(r.text(), "1 + 2 = 3");
}

#[tokio::test]
async fn legacy_timeout_then_server_keeps_serving() {
    let client = spawn(&[], legacy()).await;
    check_timeout(&client).await;
}

#[tokio::test]
async fn modern_timeout_then_server_keeps_serving() {
    let client = spawn(&[], modern()).await;
    check_timeout(&client).await;
}

#[tokio::test]
async fn default_timeout_applies_to_every_request() {
    let options = ClientOptions {
        request_timeout: Duration::from_millis(150),
        ..modern()
    };
    let client = spawn(&[], options).await;
    let err = client
        .call_tool("slow_count", json!({"n": 10, "delay_ms": 100}))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout), "{err:?}");
    let quick = client
        .call_tool_with(
            "slow_count",
            json!({"n": 3, "delay_ms": 100}),
            CallOptions::new().with_timeout(Duration::from_secs(10)),
        )
        .await
        .unwrap();
    assert_eq!(quick.text(), "Counted to 3");
}

async fn check_progress(client: &Client) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let r = client
        .call_tool_with(
            "slow_count",
            json!({"n": 5, "delay_ms": 10}),
            CallOptions::new().with_progress(tx),
        )
        .await
        .unwrap();
    assert_eq!(r.text(), "Counted to 5");
    let mut seen = Vec::new();
    while let Ok(p) = rx.try_recv() {
        seen.push(p);
    }
    assert_eq!(seen.len(), 5, "{seen:?}");
    for (i, p) in seen.iter().enumerate() {
        let step = (i + 1) as f64;
        assert_eq!(p.progress, step);
        assert_eq!(p.total, Some(5.0));
        assert_eq!(p.message.as_deref(), Some(format!("{}/5", i + 1).as_str()));
    }

    // A callback sink; a second concurrent call gets its own token.
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    let (tx2, mut rx2) = mpsc::channel::<Progress>(16);
    let a = client.call_tool_with(
        "slow_count",
        json!({"n": 3, "delay_ms": 20}),
        CallOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress)),
    );
    let b = client.call_tool_with(
        "slow_count",
        json!({"n": 4, "delay_ms": 15}),
        CallOptions::new().with_progress(tx2),
    );
    let (a, b) = tokio::join!(a, b);
    assert_eq!(a.unwrap().text(), "Counted to 3");
    assert_eq!(b.unwrap().text(), "Counted to 4");
    assert_eq!(*log.lock().unwrap(), vec![1.0, 2.0, 3.0]);
    let mut totals = Vec::new();
    while let Ok(p) = rx2.try_recv() {
        totals.push((p.progress, p.total));
    }
    assert_eq!(
        totals,
        (1..=4)
            .map(|i| (f64::from(i), Some(4.0)))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn legacy_progress() {
    let client = spawn(&[], legacy()).await;
    check_progress(&client).await;
}

#[tokio::test]
async fn modern_progress() {
    let client = spawn(&[], modern()).await;
    check_progress(&client).await;
}

/// After a cancelled `slow_count` (30 ms a step): progress for a request that ended never
/// reaches the general callbacks (the core drops progress for tokens no request holds).
async fn assert_progress_stops(notes: &mut mpsc::Receiver<Notification>) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    while let Ok(note) = notes.try_recv() {
        assert!(
            !matches!(note, Notification::ListChanged(_)),
            "unexpected {note:?}"
        );
    }
}

async fn check_cancel(client: &Client) {
    let mut notes = client.notifications();
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let call = client.call_tool_with(
        "slow_count",
        json!({"n": 100, "delay_ms": 30}),
        CallOptions::new().with_progress(tx),
    );
    let id = call.id();
    let waiter = tokio::spawn(call);
    // Wait for the work to be under way, then cancel it explicitly.
    let first = rx.recv().await.expect("progress");
    assert_eq!(first.progress, 1.0);
    assert!(client.cancel(id, Some("user asked")));
    assert!(!client.cancel(id, None), "no longer pending");
    let err = waiter.await.unwrap().unwrap_err();
    assert!(matches!(err, ClientError::Cancelled), "{err:?}");
    // The server stopped counting.
    assert_progress_stops(&mut notes).await;
    // And it keeps serving.
    let r = client
        .call_tool("calculate", json!({"operation": "add", "a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(r.text(), "1 + 1 = 2");
}

#[tokio::test]
async fn legacy_explicit_cancel() {
    let client = spawn(&[], legacy()).await;
    check_cancel(&client).await;
}

#[tokio::test]
async fn modern_explicit_cancel() {
    let client = spawn(&[], modern()).await;
    check_cancel(&client).await;
}

#[tokio::test]
async fn handle_cancel_and_drop_cancel() {
    let client = spawn(&[], legacy()).await;
    let mut notes = client.notifications();

    // CallHandle::cancel before awaiting.
    let call = client.call_tool_with(
        "slow_count",
        json!({"n": 50, "delay_ms": 20}),
        CallOptions::new(),
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(call.cancel(None));
    assert!(matches!(call.await, Err(ClientError::Cancelled)));

    // Dropping the future of a call with progress cancels it: the server stops sending.
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    {
        let call = client.call_tool_with(
            "slow_count",
            json!({"n": 100, "delay_ms": 30}),
            CallOptions::new().with_progress(tx),
        );
        let raced = tokio::time::timeout(Duration::from_millis(100), call).await;
        assert!(raced.is_err(), "still running after 100 ms");
    } // dropped here (tokio::time::timeout dropped it already)
    assert!(rx.recv().await.is_some(), "got some progress");
    assert_progress_stops(&mut notes).await;
    client.ping().await.unwrap();
}

// ---- closing -----------------------------------------------------------------------------

#[tokio::test]
async fn close_ends_pending_requests_and_kills_a_lingering_child() {
    let options = ClientOptions {
        close_timeout: Duration::from_millis(500),
        ..modern()
    };
    let client = spawn(&[], options).await;
    let other = client.clone();
    let pending = client.call_tool_with(
        "slow_count",
        json!({"n": 1000, "delay_ms": 1000}),
        CallOptions::new(),
    );
    assert!(client.child_id().is_some());
    let started = std::time::Instant::now();
    // The server may finish (or abandon) the call in flight when its stdin closes; if it
    // does not exit within close_timeout it is killed.
    let status = client.close().await.unwrap().expect("child status");
    assert!(started.elapsed() < Duration::from_secs(3), "{status:?}");
    assert!(other.is_closed());
    assert!(matches!(pending.await, Err(ClientError::Closed)));
    let after = other
        .call_tool("add_numbers", json!({"number1": 1, "number2": 1}))
        .await;
    assert!(matches!(after, Err(ClientError::Closed)), "{after:?}");
}

#[tokio::test]
async fn close_of_an_idle_server_exits_cleanly() {
    let client = spawn(&[], modern()).await;
    client
        .call_tool("add_numbers", json!({"number1": 1, "number2": 1}))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let status = client.close().await.unwrap().expect("child status");
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn dropping_the_client_kills_the_child() {
    let client = spawn(&[], legacy()).await;
    let pid = client.child_id().expect("pid");
    drop(client);
    // kill_on_drop: the process disappears shortly (checked through /proc where it exists).
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    if PathBuf::from("/proc/self").exists() {
        for _ in 0..100 {
            let gone = std::fs::read_to_string(proc_dir.join("stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true);
            if gone {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("process {pid} still running after the client was dropped");
    }
}

#[tokio::test]
async fn captured_stderr() {
    use tokio::io::AsyncReadExt;
    let mut cmd = Command::new(example_bin("calculator"));
    cmd.stderr(Stdio::piped()).env("RUST_LOG", "info");
    let client = Client::spawn_with(cmd, legacy()).await.unwrap();
    let mut stderr = client.take_stderr().expect("piped stderr");
    assert!(client.take_stderr().is_none());
    client.close().await.unwrap();
    let mut text = String::new();
    stderr.read_to_string(&mut text).await.unwrap();
    assert!(text.contains("calculator"), "{text}");
}

#[cfg(feature = "validate")]
#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let client = spawn(&[], modern()).await;
    let tools = client.list_tools().await.unwrap();
    let add = tools.iter().find(|t| t.name == "add_numbers").unwrap();
    assert!(add.output_schema.is_some(), "{add:?}");
    let sum = client
        .call_tool_validated(add, json!({"number1": 1, "number2": 2}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 3.0})));
    // A schema the result does not match.
    let mut strict = add.clone();
    strict.output_schema = Some(json!({"type": "object", "required": ["difference"]}));
    let err = client
        .call_tool_validated(&strict, json!({"number1": 1, "number2": 2}))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Malformed(_)), "{err:?}");
}

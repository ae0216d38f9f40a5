//! Task status notifications (tasks extension, SEP-2663) on `subscriptions/listen`: the
//! acknowledgement keeps the known task ids (bounded), each subscribed task's current state
//! is sent once and then every change, as `notifications/tasks` equal to `tasks/get`, routed
//! to the subscribed streams only; -32021 without the extension. Every frame is checked by
//! the pair against the 2026-07-28 schema and the ext-tasks schema.

mod pair;

use mcp_rs_core::model::tasks::{TaskStore, TaskSupport, TaskTable};
use mcp_rs_core::{CallToken, Route, SecretKey, MAX_TASK_SUBSCRIPTIONS};
use pair::{error_code, modern, with_tasks, Frame, Pair};
use serde_json::{json, Value};

use pair::TASKS_EXT as EXT;
const SUB: &str = "io.modelcontextprotocol/subscriptionId";
const TTL: u32 = 60_000;

/// A full server with a table of 8 tasks and `slow` (deferred) an optional task tool.
fn pair() -> Pair {
    let mut p = Pair::full();
    p.now = 1_785_242_096_789;
    p.ext.tasks = Some(Box::new(
        TaskTable::<8, 512>::new(SecretKey([0x44; 16])).with_timing(TTL, 250),
    ));
    p.tools.task_tools = vec![("slow", TaskSupport::Optional)];
    p
}

/// Starts a `slow` task (working until the test reports for it); its id.
fn start(p: &mut Pair, id: i64) -> String {
    let r = p.ask(&with_tasks(
        json!(id),
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    ));
    r["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {r}"))
        .to_string()
}

/// `tasks/get`'s result without `resultType` (what `notifications/tasks` carries).
fn get(p: &mut Pair, task: &str) -> Value {
    let mut r = p.ask(&with_tasks(
        json!(9000),
        "tasks/get",
        json!({"taskId": task}),
    ));
    let o = r["result"].as_object_mut().expect("a result");
    o.remove("resultType");
    o.remove("_meta");
    r["result"].take()
}

/// Opens a stream subscribed to `ids`; its acknowledgement and token.
fn listen(p: &mut Pair, sub: &str, ids: Value) -> (Value, CallToken) {
    let mut frames = p.send_bytes(
        with_tasks(
            json!(sub),
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ids}}),
        )
        .as_bytes(),
    );
    assert_eq!(frames.len(), 1, "{frames:?}");
    let ack = frames.remove(0).value;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    (ack, *p.subscriptions.last().expect("a stream"))
}

/// A frame's task (params without `_meta`) and its subscription id.
fn task_of(f: &Frame) -> (Value, Value) {
    assert_eq!(f.value["method"], "notifications/tasks", "{:?}", f.value);
    assert!(f.value.get("id").is_none());
    let mut params = f.value["params"].clone();
    let sub = params["_meta"][SUB].clone();
    params.as_object_mut().expect("params").remove("_meta");
    (params, sub)
}

fn table(p: &mut Pair) -> &mut dyn TaskStore {
    p.ext.tasks.as_deref_mut().expect("table")
}

#[test]
fn the_acknowledgement_keeps_known_ids_then_the_current_state_is_sent_once() {
    let mut p = pair();
    let (a, b) = (start(&mut p, 1), start(&mut p, 2));
    let (ack, token) = listen(
        &mut p,
        "s1",
        json!([a, "00000000000000000000000000000000", a, 7, "short", b]),
    );
    assert_eq!(ack["params"]["notifications"], json!({"taskIds": [a, b]}));
    assert_eq!(ack["params"]["_meta"][SUB], "s1");
    // The current state, once per task, equal to tasks/get, routed to the stream.
    let frames = p.tasks_changed();
    assert_eq!(frames.len(), 2, "{frames:?}");
    for (f, id) in frames.iter().zip([&a, &b]) {
        assert_eq!(f.route, Route::Call(token));
        let (task, sub) = task_of(f);
        assert_eq!(sub, "s1");
        assert_eq!(task["status"], "working");
        assert_eq!(task, get(&mut p, id));
    }
    // Nothing changed: nothing more.
    assert!(p.tasks_changed().is_empty());
}

#[test]
fn each_change_is_sent_as_tasks_get_shows_it_until_the_task_ends() {
    let mut p = pair();
    let id = start(&mut p, 1);
    let (_, token) = listen(&mut p, "s", json!([id]));
    assert_eq!(p.tasks_changed().len(), 1);
    // input_required, with its requests.
    let now = p.now + 10;
    let asks = r#"{"confirm":{"method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{}}}}}"#;
    table(&mut p).ask(&id, asks, now).expect("ask");
    p.now = now;
    let frames = p.tasks_changed();
    assert_eq!(frames.len(), 1, "{frames:?}");
    let (task, _) = task_of(&frames[0]);
    assert_eq!(task["status"], "input_required");
    assert!(task["inputRequests"]["confirm"].is_object(), "{task}");
    assert_eq!(task, get(&mut p, &id));
    // Answered through tasks/update on the session: working again.
    p.now += 5;
    p.ask(&with_tasks(
        json!(2),
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept"}}}),
    ));
    let frames = p.tasks_changed();
    assert_eq!(frames.len(), 1);
    let (task, _) = task_of(&frames[0]);
    assert_eq!(task["status"], "working");
    assert_eq!(task, get(&mut p, &id));
    // Two changes between passes: the latest state only.
    let now = p.now + 5;
    table(&mut p).ask(&id, asks, now).expect("ask");
    table(&mut p)
        .complete(&id, r#"{"content":[{"type":"text","text":"done"}]}"#, now)
        .expect("complete");
    p.now = now;
    let frames = p.tasks_changed();
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].route, Route::Call(token));
    let (task, _) = task_of(&frames[0]);
    assert_eq!(task["status"], "completed");
    assert_eq!(task["result"]["content"][0]["text"], "done");
    assert_eq!(task, get(&mut p, &id));
    // Terminal: the subscription is over.
    assert!(p.tasks_changed().is_empty());
}

#[test]
fn streams_get_only_the_tasks_they_subscribed_to() {
    let mut p = pair();
    let (a, b) = (start(&mut p, 1), start(&mut p, 2));
    let (_, ta) = listen(&mut p, "sa", json!([a]));
    let (_, tb) = listen(&mut p, "sb", json!([a, b]));
    assert_eq!(p.tasks_changed().len(), 3);
    // A cancel from another request: both streams of `a`, each tagged with its id.
    p.ask(&with_tasks(json!(3), "tasks/cancel", json!({"taskId": a})));
    let frames = p.tasks_changed();
    let got: Vec<(Route, Value, Value)> = frames
        .iter()
        .map(|f| {
            let (task, sub) = task_of(f);
            (f.route, sub, task["status"].clone())
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (Route::Call(ta), json!("sa"), json!("cancelled")),
            (Route::Call(tb), json!("sb"), json!("cancelled")),
        ]
    );
    // `b` fails: only the stream that asked for it.
    let now = p.now;
    table(&mut p)
        .fail(&b, -32603, "worker crashed", now)
        .expect("fail");
    let frames = p.tasks_changed();
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].route, Route::Call(tb));
    assert_eq!(task_of(&frames[0]).0, get(&mut p, &b));
}

#[test]
fn task_ids_need_the_extension() {
    let mut p = pair();
    let id = start(&mut p, 1);
    for ids in [json!([id]), json!([])] {
        let r = p.ask(&modern(
            json!(2),
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ids}}),
        ));
        assert_eq!(error_code(&r), -32021, "{r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
            json!({}),
            "{r}"
        );
    }
    assert!(p.subscriptions.is_empty());
    // Without `taskIds`, a stream opens as before.
    let frames = p.send_bytes(
        modern(
            json!(3),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .as_bytes(),
    );
    assert_eq!(
        frames[0].value["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert!(p.tasks_changed().is_empty());
}

#[test]
fn task_subscriptions_are_bounded_per_stream() {
    let mut p = pair();
    let ids: Vec<String> = (0..MAX_TASK_SUBSCRIPTIONS as i64 + 2)
        .map(|n| start(&mut p, n))
        .collect();
    let (ack, _) = listen(&mut p, "s", json!(ids));
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!(ids[..MAX_TASK_SUBSCRIPTIONS])
    );
    assert_eq!(p.tasks_changed().len(), MAX_TASK_SUBSCRIPTIONS);
    // A task beyond the bound changes: nothing for this stream.
    let now = p.now;
    let last = ids.last().expect("ids");
    table(&mut p).cancel(last, now).expect("cancel");
    assert!(p.tasks_changed().is_empty());
}

#[test]
fn expiry_ends_a_subscription_silently_and_ended_streams_get_nothing() {
    let mut p = pair();
    let id = start(&mut p, 1);
    listen(&mut p, "s", json!([id]));
    // The acknowledgement leaves out a task that is gone by then.
    p.now += u64::from(TTL);
    let (ack, _) = listen(&mut p, "late", json!([id]));
    assert_eq!(ack["params"]["notifications"], json!({}));
    // Expired: no frame for the first stream either.
    assert!(p.tasks_changed().is_empty());
    // A stream cancelled by its client hears nothing more.
    let id = start(&mut p, 2);
    listen(&mut p, "c", json!([id]));
    p.send(
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}})
            .to_string(),
    );
    assert!(p.tasks_changed().is_empty());
}

#[test]
fn a_buffer_too_small_keeps_the_frame_for_the_next_call() {
    let mut p = pair();
    let id = start(&mut p, 1);
    listen(&mut p, "s", json!([id]));
    let mut out = vec![0u8; 64];
    let mut cursor = 0;
    let mut tasks = p.ext.tasks.take().expect("table");
    struct Only<'a>(&'a mut dyn TaskStore, &'a mut pair::TestTools);
    impl mcp_rs_core::ServerHandler for Only<'_> {
        fn tools(&mut self) -> Option<&mut dyn mcp_rs_core::ToolSet> {
            Some(self.1)
        }
        fn tasks(&mut self) -> Option<&mut dyn TaskStore> {
            Some(self.0)
        }
    }
    let mut server = Only(tasks.as_mut(), &mut p.tools);
    let e = p
        .session
        .tasks_changed_next(&mut server, &mut cursor, p.now, &mut out)
        .expect_err("too small");
    assert!(e.required > 64, "{e:?}");
    assert_eq!(cursor, 0, "the cursor stays");
    out.resize(e.required, 0);
    let tx = p
        .session
        .tasks_changed_next(&mut server, &mut cursor, p.now, &mut out)
        .expect("fits")
        .expect("the frame");
    assert_eq!(tx.len, e.required);
    let v: Value = serde_json::from_slice(&out[..tx.len]).expect("JSON");
    assert_eq!(v["params"]["taskId"], id.as_str());
}

//! The tasks extension (SEP-2663) through a scripted client: declaration, negotiation per
//! request, task-augmented `tools/call` (at once, deferred, MRTR first), `tasks/get`,
//! `tasks/update`, `tasks/cancel`, expiry and every limit, each frame schema-checked by
//! the pair (the base protocol against the official schema, the tasks shapes against the
//! harness's SEP-2663 checks).

mod pair;

use mcp_rs_core::model::tasks::{TaskStatus, TaskStore, TaskSupport, TaskTable};
use mcp_rs_core::SecretKey;
use pair::{error_code, initialize, modern, with_tasks, Pair};
use serde_json::{json, Value};

use pair::TASKS_EXT as EXT;
const TTL: u32 = 60_000;

/// A full server with a table of `N` tasks, `echo` / `fail` / `slow` optional task tools
/// and `confirm` (MRTR) a required one. Starts at a realistic wall-clock time.
fn pair<const N: usize, const R: usize>() -> Pair {
    let mut p = Pair::full();
    p.now = 1_785_242_096_789;
    p.ext.tasks = Some(Box::new(
        TaskTable::<N, R>::new(SecretKey([0x33; 16])).with_timing(TTL, 250),
    ));
    p.tools.task_tools = vec![
        ("echo", TaskSupport::Optional),
        ("fail", TaskSupport::Optional),
        ("slow", TaskSupport::Optional),
        ("all_content", TaskSupport::Optional),
        ("confirm", TaskSupport::Required),
    ];
    p
}

fn call(p: &mut Pair, id: i64, tool: &str) -> Value {
    p.ask(&with_tasks(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {"x": 1}}),
    ))
}

fn get(p: &mut Pair, id: i64, task: &str) -> Value {
    p.ask(&with_tasks(id, "tasks/get", json!({"taskId": task})))
}

fn task_id(r: &Value) -> String {
    r["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no taskId: {r}"))
        .to_string()
}

#[test]
fn declared_in_discover_only_with_a_table_and_never_to_legacy_sessions() {
    let mut p = pair::<2, 256>();
    let d = p.ask(&modern(json!(1), "server/discover", json!({})));
    let caps = &d["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXT], json!({}), "{d}");
    assert!(caps.get("tasks").is_none(), "no v1 capabilities.tasks");
    let i = pair::<2, 256>().ask(&initialize(0, "2025-11-25"));
    assert!(
        i["result"]["capabilities"].get("extensions").is_none(),
        "{i}"
    );
    let d = Pair::full().ask(&modern(json!(1), "server/discover", json!({})));
    assert!(d["result"]["capabilities"].get("extensions").is_none());
}

#[test]
fn without_the_extension_tasks_methods_are_refused_and_tools_run_synchronously() {
    let mut p = pair::<2, 256>();
    for (n, m) in ["tasks/get", "tasks/update", "tasks/cancel"]
        .iter()
        .enumerate()
    {
        let r = p.ask(&modern(
            json!(n),
            m,
            json!({"taskId": "gate-test", "inputResponses": {}}),
        ));
        assert_eq!(error_code(&r), -32021, "{m}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
            json!({}),
            "{r}"
        );
    }
    // An optional task tool: a plain result.
    let r = p.ask(&modern(
        json!(5),
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
    ));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(r["result"].get("taskId").is_none());
    // A required one: -32021 naming the extension.
    let r = p.ask(&modern(
        json!(6),
        "tools/call",
        json!({"name": "confirm", "arguments": {}}),
    ));
    assert_eq!(error_code(&r), -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
        json!({})
    );
    // A legacy `task` param never promotes a call.
    let r = p.ask(&modern(
        json!(7),
        "tools/call",
        json!({"name": "echo", "arguments": {}, "task": {"ttl": 60000}}),
    ));
    assert_eq!(r["result"]["resultType"], "complete");
}

#[test]
fn removed_v1_methods_are_unknown() {
    let mut p = pair::<2, 256>();
    for m in ["tasks/result", "tasks/list"] {
        let r = p.ask(&with_tasks(1, m, json!({"taskId": "x"})));
        assert_eq!(error_code(&r), -32601, "{m}: {r}");
    }
}

#[test]
fn a_tool_that_answers_at_once_becomes_a_completed_task() {
    let mut p = pair::<2, 256>();
    let r = call(&mut p, 1, "echo");
    let created = &r["result"];
    assert_eq!(created["resultType"], "task", "{r}");
    assert_eq!(created["status"], "completed");
    assert_eq!(created["createdAt"], "2026-07-28T12:34:56.789Z");
    assert_eq!(created["ttlMs"], TTL);
    assert_eq!(created["pollIntervalMs"], 250);
    let id = task_id(&r);
    assert_eq!(id.len(), 32);
    let g = get(&mut p, 2, &id);
    assert_eq!(g["result"]["taskId"], id.as_str());
    assert_eq!(g["result"]["status"], "completed");
    assert_eq!(g["result"]["resultType"], "complete");
    assert_eq!(g["result"]["result"]["content"][0]["text"], r#"{"x":1}"#);
    // Read again: results are kept until the TTL.
    assert_eq!(get(&mut p, 3, &id)["result"]["status"], "completed");
    // A tool execution error is `completed` + `isError`, not `failed`.
    let id = task_id(&call(&mut p, 4, "fail"));
    let g = get(&mut p, 5, &id);
    assert_eq!(g["result"]["status"], "completed");
    assert_eq!(g["result"]["result"]["isError"], true);
}

#[test]
fn a_deferred_task_is_working_until_the_tool_reports() {
    let mut p = pair::<2, 256>();
    let r = call(&mut p, 1, "slow");
    assert_eq!(r["result"]["status"], "working", "{r}");
    let id = task_id(&r);
    // The tool was handed the task id; no call is left for the adapter to answer.
    assert_eq!(p.tools.deferred_tasks, vec![id.clone()]);
    assert!(p.calls.is_empty());
    let g = get(&mut p, 2, &id);
    assert_eq!(g["result"]["status"], "working");
    assert!(g["result"].get("result").is_none());

    // Time passes without a report: still working, unchanged.
    let now = p.now + 10;
    let table = p.ext.tasks.as_deref_mut().expect("table");
    table
        .view(&id, now)
        .map(|v| assert_eq!(v.status, TaskStatus::Working))
        .expect("live");
    p.now = now;
    let g = get(&mut p, 3, &id);
    assert_eq!(g["result"]["lastUpdatedAt"], "2026-07-28T12:34:56.789Z");

    let table = p.ext.tasks.as_deref_mut().expect("table");
    table
        .complete(
            &id,
            r#"{"content":[{"type":"text","text":"done"}]}"#,
            now + 5,
        )
        .expect("complete");
    p.now = now + 6;
    let g = get(&mut p, 4, &id);
    assert_eq!(g["result"]["status"], "completed");
    assert_eq!(g["result"]["result"]["content"][0]["text"], "done");
    assert_eq!(g["result"]["lastUpdatedAt"], "2026-07-28T12:34:56.804Z");
}

#[test]
fn failed_tasks_inline_the_error() {
    let mut p = pair::<2, 256>();
    let id = task_id(&call(&mut p, 1, "slow"));
    let now = p.now;
    p.ext
        .tasks
        .as_deref_mut()
        .expect("table")
        .fail(&id, -32603, "worker crashed", now)
        .expect("fail");
    let g = get(&mut p, 2, &id);
    assert_eq!(g["result"]["status"], "failed", "{g}");
    assert_eq!(
        g["result"]["error"],
        json!({"code": -32603, "message": "worker crashed"})
    );
}

#[test]
fn cancel_acks_empty_and_is_idempotent() {
    let mut p = pair::<2, 256>();
    let id = task_id(&call(&mut p, 1, "slow"));
    let ack = p.ask(&with_tasks(2, "tasks/cancel", json!({"taskId": id})));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(get(&mut p, 3, &id)["result"]["status"], "cancelled");
    // Again, on the terminal task: the same ack.
    let ack = p.ask(&with_tasks(4, "tasks/cancel", json!({"taskId": id})));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    // A late report from the tool does not resurrect it.
    let now = p.now;
    let table = p.ext.tasks.as_deref_mut().expect("table");
    assert!(table.complete(&id, r#"{"content":[]}"#, now).is_err());
    assert_eq!(get(&mut p, 5, &id)["result"]["status"], "cancelled");
}

#[test]
fn input_rounds_through_tasks_update() {
    // The test plays the tool and parks a task on two input requests before the client
    // polls.
    let mut p2 = Pair::full();
    let now = 1_785_242_096_789;
    p2.now = now;
    let mut concrete = TaskTable::<2, 512>::new(SecretKey([0x33; 16])).with_timing(TTL, 250);
    let tid = concrete.create(now).expect("create");
    concrete
        .ask(
            tid.as_str(),
            r#"{"a":{"method":"elicitation/create","params":{"message":"A?","requestedSchema":{"type":"object","properties":{}}}},"b":{"method":"elicitation/create","params":{"message":"B?","requestedSchema":{"type":"object","properties":{}}}}}"#,
            now,
        )
        .expect("ask");
    p2.ext.tasks = Some(Box::new(concrete));
    let tid = tid.as_str().to_string();
    let g = get(&mut p2, 1, &tid);
    assert_eq!(g["result"]["status"], "input_required", "{g}");
    assert_eq!(
        g["result"]["inputRequests"].as_object().map(|m| m.len()),
        Some(2)
    );
    // Partial: `a` answered (and an unknown key ignored), `b` still pending.
    let ack = p2.ask(&with_tasks(
        2,
        "tasks/update",
        json!({"taskId": tid, "inputResponses": {"a": {"action": "accept", "content": {}}, "zz": {}}}),
    ));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let g = get(&mut p2, 3, &tid);
    assert_eq!(g["result"]["status"], "input_required");
    let pending: Vec<&String> = g["result"]["inputRequests"]
        .as_object()
        .expect("map")
        .keys()
        .collect();
    assert_eq!(pending, vec!["b"]);
    // The rest: working again.
    p2.ask(&with_tasks(
        4,
        "tasks/update",
        json!({"taskId": tid, "inputResponses": {"b": {"action": "decline"}}}),
    ));
    assert_eq!(get(&mut p2, 5, &tid)["result"]["status"], "working");
    // `inputResponses` must be an object.
    let r = p2.ask(&with_tasks(
        6,
        "tasks/update",
        json!({"taskId": tid, "inputResponses": [1]}),
    ));
    assert_eq!(error_code(&r), -32602);
}

#[test]
fn mrtr_rounds_come_before_the_task() {
    let mut p = pair::<2, 256>();
    // Round 1 of a required task tool: `input_required`, no task left behind.
    let r = call(&mut p, 1, "confirm");
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(r["result"].get("taskId").is_none());
    let state = r["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string();
    // Round 2 (responses + state): the call completes, as a task.
    let r = p.ask(&with_tasks(
        2,
        "tools/call",
        json!({"name": "confirm", "arguments": {}, "requestState": state,
               "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}}),
    ));
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    assert!(r["result"].get("requestState").is_none());
    let id = task_id(&r);
    let g = get(&mut p, 3, &id);
    let text = g["result"]["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("confirm="), "{g}");
    // Only the round-2 task occupies the table: one more fits in two slots.
    call(&mut p, 4, "slow");
    let full = call(&mut p, 5, "slow");
    assert_eq!(error_code(&full), -32603, "{full}");
}

#[test]
fn limits_unknown_ids_expiry_and_oversized_results() {
    let mut p = pair::<1, 128>();
    // Unknown (and malformed) ids: -32602.
    let r = get(&mut p, 1, "tasks-conformance-nonexistent-12345");
    assert_eq!(error_code(&r), -32602, "{r}");
    let r = p.ask(&with_tasks(2, "tasks/get", json!({"taskId": 5})));
    assert_eq!(error_code(&r), -32602);
    // A result larger than the slot: the task fails with the size it needed.
    let id = task_id(&call(&mut p, 3, "all_content"));
    let g = get(&mut p, 4, &id);
    assert_eq!(g["result"]["status"], "failed", "{g}");
    assert_eq!(g["result"]["error"]["code"], -32603);
    assert!(
        g["result"]["error"]["data"]["required"].as_u64() > Some(128),
        "{g}"
    );
    // The one slot is taken: a new task is refused with the table's size.
    let r = call(&mut p, 5, "slow");
    assert_eq!(error_code(&r), -32603, "{r}");
    assert_eq!(r["error"]["data"]["limit"], 1);
    // Not before the TTL...
    p.now += u64::from(TTL) - 1;
    assert_eq!(get(&mut p, 6, &id)["result"]["status"], "failed");
    // ...then gone, and its slot reusable.
    p.now += 1;
    assert_eq!(error_code(&get(&mut p, 7, &id)), -32602);
    let r = call(&mut p, 8, "slow");
    assert_eq!(r["result"]["status"], "working", "{r}");
}

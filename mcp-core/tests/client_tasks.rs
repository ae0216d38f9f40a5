//! The client side of the tasks extension (SEP-2663 v2) against our own server `Session`
//! with a task table: a call that declares the extension becomes a task, `tasks/get`
//! polls it to its result or error, `tasks/update` answers its input requests,
//! `tasks/cancel` ends it, refusals are classified, and nothing is sent to a server that
//! does not offer the extension. Every client frame is validated by the link (the tasks
//! requests by the harness's SEP-2663 checks, the `_meta` against the schema), every
//! server frame by the pair.
#![cfg(feature = "tasks")]

mod client_link;
mod pair;

use client_link::{info, Ev, Link};
use mcp_rs_core::client::{
    CallOutcome, ClientConfig, ClientError, InvalidFrame, Mode, Options, Request, RequestHandle,
    Response, ServerCaps, Task, TaskRefusal, TaskRequest,
};
use mcp_rs_core::model::tasks::{TaskStatus, TaskSupport, TaskTable};
use mcp_rs_core::wire::json::{parse, Limits};
use mcp_rs_core::wire::method::{Method, ServerMethod};
use mcp_rs_core::{ClientCaps, SecretKey};
use pair::Pair;
use serde_json::{json, Value};

const EXT: &str = "io.modelcontextprotocol/tasks";

fn tasks_pair() -> Pair {
    let mut p = Pair::full();
    p.ext.tasks = Some(Box::new(
        TaskTable::<4, 1024>::new(SecretKey([0x5a; 16])).with_timing(60_000, 250),
    ));
    p.tools.task_tools = vec![
        ("echo", TaskSupport::Optional),
        ("slow", TaskSupport::Optional),
        ("confirm", TaskSupport::Required),
    ];
    p
}

fn link(pair: Pair, mode: Mode) -> Link {
    let config = ClientConfig {
        mode,
        ..ClientConfig::new(info())
    };
    Link::connected(config, pair)
}

/// Sends what `f` writes with the link's clock and buffer, and runs the loop.
fn send_with(
    link: &mut Link,
    f: impl FnOnce(
        &mut mcp_rs_core::client::Client<'static>,
        u64,
        &mut [u8],
    ) -> Result<mcp_rs_core::client::Sent, ClientError>,
) -> RequestHandle {
    let sent = f(&mut link.client, link.now, &mut link.out).expect("sent");
    link.transmit(sent.len);
    link.run();
    sent.handle
}

/// The typed view of the only event, a result of `handle`: runs `read` on it.
fn with_response<T>(
    link: &mut Link,
    handle: RequestHandle,
    read: impl FnOnce(&Response<'_>) -> T,
) -> T {
    let (method, result) = match link.take().as_slice() {
        [Ev::Result {
            handle: h,
            method,
            result,
            ..
        }] if *h == handle => (*method, result.to_string()),
        other => panic!("expected one result for {handle:?}, got {other:?}"),
    };
    let response = Response {
        handle,
        method,
        result: parse(result.as_bytes(), Limits::default()).expect("result parses"),
    };
    read(&response)
}

/// `tasks/get` of `id`: (status, the task as JSON).
fn poll(link: &mut Link, id: &str) -> (TaskStatus, Value) {
    let h = send_with(link, |c, now, out| c.request_tasks_get(id, now, out));
    with_response(link, h, |r| {
        let task = r.task().expect("a task");
        assert_eq!(task.id, id);
        (
            task.status,
            serde_json::from_str(r.result.as_str()).unwrap(),
        )
    })
}

/// Calls `tool` declaring the extension; returns the created task's id and status.
fn create(link: &mut Link, tool: &str) -> (String, TaskStatus, Option<u64>) {
    let h = send_with(link, |c, now, out| {
        c.request_tools_call_as_task(tool, Some(r#"{"x":1}"#), Options::default(), now, out)
    });
    with_response(link, h, |r| match r.call_outcome().expect("an outcome") {
        CallOutcome::Task(t) => (t.id.to_string(), t.status, t.poll_interval_ms),
        CallOutcome::Done(d) => panic!("not a task: {:?}", d.text()),
    })
}

#[test]
fn a_task_is_created_polled_and_read_when_complete() {
    let mut link = link(tasks_pair(), Mode::Auto);
    assert!(link
        .client
        .server_capabilities()
        .contains(ServerCaps::TASKS));
    let (id, status, interval) = create(&mut link, "slow");
    assert_eq!((status, interval), (TaskStatus::Working, Some(250)));
    let call = link.sent_with("tools/call")[0].clone();
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"][EXT],
        json!({}),
        "the call declares the extension: {call}"
    );
    assert!(call["params"].get("task").is_none(), "no v1 task param");
    assert_eq!(poll(&mut link, &id).0, TaskStatus::Working);

    let now = link.now;
    let table = link.pair.ext.tasks.as_deref_mut().unwrap();
    table
        .complete(&id, r#"{"content":[{"type":"text","text":"done"}]}"#, now)
        .unwrap();
    let h = send_with(&mut link, |c, now, out| c.request_tasks_get(&id, now, out));
    with_response(&mut link, h, |r| {
        let task = r.task().unwrap();
        assert_eq!(task.status, TaskStatus::Completed);
        assert!(task.is_terminal());
        assert_eq!(task.ttl_ms, Some(60_000));
        assert!(task.created_at.is_some() && task.last_updated_at.is_some());
        let result = task.call_result().unwrap().unwrap();
        assert_eq!(result.text().unwrap(), "done");
        assert!(!result.is_error);
    });
    // Every tasks/get declared the extension by itself (the harness checks it too).
    assert_eq!(link.sent_with("tasks/get").len(), 2);

    // A tool that answers at once: a task already completed.
    let (_, status, _) = create(&mut link, "echo");
    assert_eq!(status, TaskStatus::Completed);
}

#[test]
fn plain_calls_stay_plain_and_a_task_they_did_not_ask_for_is_malformed() {
    let mut link = link(tasks_pair(), Mode::Auto);
    let echo = Request::CallTool {
        name: "echo",
        arguments: Some("{}"),
    };
    let h = link.send(&echo, Options::default());
    let sent = link.sent_with("tools/call")[0].clone();
    assert!(
        sent["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            .get("extensions")
            .is_none(),
        "{sent}"
    );
    let r = link.result_of(h);
    assert_eq!(r["resultType"], "complete", "{r}");
    // Through call_outcome, the same result is `Done`.
    let h = link.send(&echo, Options::default());
    with_response(&mut link, h, |r| {
        assert!(matches!(r.call_outcome().unwrap(), CallOutcome::Done(_)));
    });

    // A `slow` call without the extension is deferred; a task answer is not accepted.
    let slow = Request::CallTool {
        name: "slow",
        arguments: Some("{}"),
    };
    let h = link.send(&slow, Options::default());
    let id = link.sent.last().unwrap()["id"].clone();
    link.inject(
        &json!({"jsonrpc":"2.0","id":id,"result":{"taskId":"t","status":"working","createdAt":"2026-07-28T00:00:00Z","lastUpdatedAt":"2026-07-28T00:00:00Z","ttlMs":1000,"resultType":"task"}}).to_string(),
    );
    link.run();
    match link.take().as_slice() {
        [Ev::Invalid(InvalidFrame::MalformedResult { handle, reason, .. })] => {
            assert_eq!(*handle, h);
            assert_eq!(*reason, "unknown resultType");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_failed_task_carries_its_error() {
    let mut link = link(tasks_pair(), Mode::Auto);
    let (id, _, _) = create(&mut link, "slow");
    let now = link.now;
    let table = link.pair.ext.tasks.as_deref_mut().unwrap();
    table.fail(&id, -32603, "it broke", now).unwrap();
    let h = send_with(&mut link, |c, now, out| c.request_tasks_get(&id, now, out));
    with_response(&mut link, h, |r| {
        let task = r.task().unwrap();
        assert_eq!(task.status, TaskStatus::Failed);
        let error = task.error.expect("the error");
        assert_eq!(
            (error.code, error.message.to_string()),
            (-32603, "it broke".into())
        );
        assert!(task.call_result().is_none());
    });
}

#[test]
fn cancel_ends_a_running_task_and_unknown_ids_are_refused() {
    let mut link = link(tasks_pair(), Mode::Auto);
    let (id, _, _) = create(&mut link, "slow");
    let h = send_with(&mut link, |c, now, out| {
        c.request_tasks_cancel(&id, now, out)
    });
    let ack = link.result_of(h);
    assert_eq!(ack["resultType"], "complete");
    assert_eq!(poll(&mut link, &id).0, TaskStatus::Cancelled);
    assert!(link
        .pair
        .ext
        .tasks
        .as_deref_mut()
        .unwrap()
        .is_cancelled(&id, link.now));

    let h = send_with(&mut link, |c, now, out| {
        c.request_tasks_get("0123456789abcdef0123456789abcdef", now, out)
    });
    match link.take().as_slice() {
        [Ev::Error {
            handle,
            method,
            code,
            ..
        }] => {
            assert_eq!((*handle, *method, *code), (h, Method::TasksGet, -32602));
            let error = mcp_rs_core::client::RpcError {
                code: *code,
                message: parse(br#""x""#, Limits::default())
                    .unwrap()
                    .as_string()
                    .unwrap(),
                data: None,
            };
            assert_eq!(TaskRefusal::of(&error), TaskRefusal::UnknownTask);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_input_required_task_is_answered_with_tasks_update() {
    let mut link = link(tasks_pair(), Mode::Auto);
    let (id, _, _) = create(&mut link, "slow");
    let now = link.now;
    let table = link.pair.ext.tasks.as_deref_mut().unwrap();
    let ask = r#"{"confirm":{"method":"elicitation/create","params":{"message":"Delete?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}},"name":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}}"#;
    table.ask(&id, ask, now).unwrap();
    let h = send_with(&mut link, |c, now, out| c.request_tasks_get(&id, now, out));
    let keys = with_response(&mut link, h, |r| {
        let task: Task<'_> = r.task().unwrap();
        assert_eq!(task.status, TaskStatus::InputRequired);
        task.input_requests()
            .map(|q| {
                assert_eq!(q.method, Some(ServerMethod::Elicit));
                assert!(q.params.is_some());
                q.key.to_string()
            })
            .collect::<Vec<_>>()
    });
    assert_eq!(keys, ["confirm", "name"]);

    let answers = r#"{"confirm":{"action":"accept","content":{"ok":true}},"name":{"action":"accept","content":{"n":"Ada"}}}"#;
    let h = send_with(&mut link, |c, now, out| {
        c.request_tasks_update(&id, answers, now, out)
    });
    assert_eq!(link.result_of(h)["resultType"], "complete");
    let update = link.sent_with("tasks/update")[0].clone();
    assert_eq!(update["params"]["taskId"], id.as_str());
    assert_eq!(
        update["params"]["inputResponses"]["name"]["content"]["n"],
        "Ada"
    );
    // The tool gets the answers; the task works again.
    let now = link.now;
    let table = link.pair.ext.tasks.as_deref_mut().unwrap();
    let mut buf = [0u8; 512];
    let taken = table.take_responses(&id, &mut buf, now).unwrap().unwrap();
    assert!(taken.contains(r#""ok":true"#), "{taken}");
    assert_eq!(poll(&mut link, &id).0, TaskStatus::Working);

    // Raw JSON that is not one object on one line is refused before anything is written.
    let before = link.sent.len();
    let e = link
        .client
        .request_tasks_update(&id, "{\"a\":\n1}", link.now, &mut link.out)
        .unwrap_err();
    assert_eq!(e, ClientError::InvalidJson);
    assert_eq!(link.sent.len(), before);
}

#[test]
fn nothing_is_sent_to_a_server_without_the_extension() {
    // A modern server with no task table, and a legacy session with one.
    for (pair, mode) in [(Pair::full(), Mode::Auto), (tasks_pair(), Mode::Legacy)] {
        let mut link = link(pair, mode);
        assert!(!link
            .client
            .server_capabilities()
            .contains(ServerCaps::TASKS));
        let before = link.sent.len();
        let (client, now, out) = (&mut link.client, link.now, &mut link.out);
        let call = client.request_tools_call_as_task("slow", None, Options::default(), now, out);
        assert_eq!(call.unwrap_err(), ClientError::NotOffered, "{mode:?}");
        for request in [
            TaskRequest::Get { task_id: "t" },
            TaskRequest::Update {
                task_id: "t",
                input_responses: "{}",
            },
            TaskRequest::Cancel { task_id: "t" },
        ] {
            let e = client.send(&Request::Task(request), Options::default(), now, out);
            assert!(
                matches!(
                    e,
                    Err(ClientError::NotOffered | ClientError::NotInRevision { .. })
                ),
                "{mode:?} {request:?}: {e:?}"
            );
        }
        assert_eq!(link.sent.len(), before, "nothing was written");
        assert_eq!(link.client.requests_in_flight(), 0);
    }
}

#[test]
fn a_session_wide_declaration_makes_every_call_task_capable() {
    let config = ClientConfig {
        capabilities: ClientCaps::TASKS,
        ..ClientConfig::new(info())
    };
    let mut link = Link::connected(config, tasks_pair());
    let slow = Request::CallTool {
        name: "slow",
        arguments: None,
    };
    let h = link.send(&slow, Options::default());
    with_response(&mut link, h, |r| match r.call_outcome().unwrap() {
        CallOutcome::Task(t) => assert_eq!(t.status, TaskStatus::Working),
        CallOutcome::Done(_) => panic!("a task was expected"),
    });
}

//! The client's tasks extension (SEP-2663 v2) against the real `everything` binary, over
//! stdio and Streamable HTTP: create → poll → result (`slow_compute`), a tool error and a
//! protocol-level failure, cancellation, a caller's time bound, input requests answered
//! by the elicitation handler or by hand through `tasks/update`, unknown ids, and servers
//! or sessions without the extension (nothing sent, a clear error).

#![cfg(feature = "client")]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_rs_tokio::client::{
    Client, ClientError, ClientOptions, Era, HandlerError, TaskHandle, TaskStart, TaskStatus,
};
use serde_json::{json, Map, Value};
use tokio::process::Command;

use common::example_bin;

const BOUND: Duration = Duration::from_secs(20);

/// Answers every elicitation with `accept` and `{"confirm": true, "name": "Ada"}`,
/// counting the calls.
fn accepting(count: Arc<AtomicUsize>) -> ClientOptions {
    ClientOptions::with_era(Era::Modern).on_elicitation(move |params: Value| {
        count.fetch_add(1, Ordering::SeqCst);
        async move {
            assert!(params["message"].is_string(), "{params}");
            Ok(json!({"action": "accept", "content": {"confirm": true, "name": "Ada"}}))
        }
    })
}

async fn stdio(options: ClientOptions) -> Client {
    let mut command = Command::new(example_bin("everything"));
    command.stderr(std::process::Stdio::null());
    Client::spawn_with(command, options).await.unwrap()
}

/// `everything --http 127.0.0.1:0`, the client connected to it, and the child (killed
/// on drop).
#[cfg(feature = "http")]
async fn http(options: ClientOptions) -> (Client, tokio::process::Child) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = Command::new(example_bin("everything"))
        .args(["--http", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = tokio::time::timeout(BOUND, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("listening line");
            if let Some(addr) = line.split("listening on ").nth(1) {
                return addr.trim().to_owned();
            }
        }
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let url = format!("http://{addr}/mcp");
    (
        Client::connect_http_with(&url, options).await.unwrap(),
        child,
    )
}

async fn start(client: &Client, tool: &str, arguments: Value) -> TaskHandle {
    match client.call_tool_as_task(tool, arguments).await.unwrap() {
        TaskStart::Task(task) => task,
        TaskStart::Done(r) => panic!("{tool}: not a task: {r:?}"),
    }
}

async fn until(task: &TaskHandle, status: TaskStatus) {
    for _ in 0..400 {
        if task.status().await.unwrap().status == status {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {} never became {status:?}", task.id());
}

/// Every scenario on one connection (`answered` counts the elicitation handler's calls).
async fn scenarios(client: &Client, answered: &AtomicUsize) {
    assert!(client.offers_tasks());

    // Create → poll → completed result.
    let task = start(
        client,
        "slow_compute",
        json!({"seconds": 1, "label": "sum"}),
    )
    .await;
    let created = task.created().unwrap();
    assert_eq!(created.status, TaskStatus::Working);
    assert_eq!(created.task_id.len(), 32);
    assert!(created.poll_interval_ms.is_some() && created.ttl_ms.is_some());
    assert_eq!(task.status().await.unwrap().status, TaskStatus::Working);
    let result = task.wait(BOUND).await.unwrap();
    assert_eq!(
        result.texts().collect::<Vec<_>>(),
        ["sum: computed after 1 s"]
    );
    let done = task.status().await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(
        done.result.as_ref(),
        Some(&result),
        "tasks/get may be repeated"
    );

    // No wait: `slow_compute` is `#[tool(task)]`, whose async part runs detached from the
    // moment the task is created, so `CreateTaskResult` shows it `working` or, when the
    // run wins the race with the reply's rendering, already `completed`.
    let task = start(client, "slow_compute", json!({"seconds": 0})).await;
    assert!(
        matches!(
            task.created().unwrap().status,
            TaskStatus::Working | TaskStatus::Completed
        ),
        "{:?}",
        task.created()
    );
    assert!(!task.wait(BOUND).await.unwrap().is_error);
    assert_eq!(task.status().await.unwrap().status, TaskStatus::Completed);

    // A plain call_tool of the same tool does not declare the extension: no task.
    let plain = client
        .call_tool("slow_compute", json!({"seconds": 0}))
        .await
        .unwrap();
    assert_eq!(plain.texts().next(), Some("compute: computed after 0 s"));
    // A tool that is never a task answers call_tool_as_task at once.
    match client
        .call_tool_as_task("greet", json!({"name": "Bo"}))
        .await
        .unwrap()
    {
        TaskStart::Done(r) => assert_eq!(r.texts().next(), Some("Hello, Bo!")),
        TaskStart::Task(t) => panic!("greet became task {}", t.id()),
    }

    // A tool error: completed with isError; a protocol-level failure: failed, its error.
    let task = start(client, "failing_job", Value::Null).await;
    let result = task.wait(BOUND).await.unwrap();
    assert!(result.is_error);
    assert_eq!(result.texts().next(), Some("failing_job: the job failed"));
    let task = start(client, "protocol_error_job", Value::Null).await;
    match task.wait(BOUND).await {
        Err(ClientError::Protocol { code, message, .. }) => {
            assert_eq!(code, -32603);
            assert_eq!(message, "protocol_error_job: internal failure");
        }
        other => panic!("{other:?}"),
    }
    let failed = task.status().await.unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.error.unwrap().code, -32603);

    // A caller's bound: the wait times out, the task runs on until cancelled.
    let task = start(client, "slow_compute", json!({"seconds": 60})).await;
    let started = tokio::time::Instant::now();
    let waited = task.wait(Duration::from_millis(300)).await;
    assert!(matches!(waited, Err(ClientError::Timeout)), "{waited:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(task.status().await.unwrap().status, TaskStatus::Working);
    task.cancel().await.unwrap();
    assert_eq!(task.status().await.unwrap().status, TaskStatus::Cancelled);
    assert!(matches!(
        task.wait(BOUND).await,
        Err(ClientError::Cancelled)
    ));
    task.cancel().await.expect("cancel is idempotent");

    // Input requests answered by the elicitation handler.
    let before = answered.load(Ordering::SeqCst);
    let task = start(client, "confirm_delete", json!({"filename": "a.txt"})).await;
    let result = task.wait(BOUND).await.unwrap();
    assert_eq!(result.texts().next(), Some("Deleted a.txt"));
    let task = start(client, "multi_input", Value::Null).await;
    let result = task.wait(BOUND).await.unwrap();
    assert_eq!(result.texts().next(), Some("Got 2 answers"));
    assert_eq!(
        answered.load(Ordering::SeqCst) - before,
        3,
        "each request once"
    );

    // By hand: the input requests as tasks/get shows them, answered with tasks/update.
    let task = start(client, "confirm_delete", json!({"filename": "b.txt"})).await;
    until(&task, TaskStatus::InputRequired).await;
    let asking = task.status().await.unwrap();
    assert_eq!(
        asking.input_requests.keys().collect::<Vec<_>>(),
        ["confirm"]
    );
    assert_eq!(
        asking.input_requests["confirm"]["method"],
        "elicitation/create"
    );
    let mut answers = Map::new();
    answers.insert(
        "confirm".into(),
        json!({"action": "accept", "content": {"confirm": false}}),
    );
    task.update(answers).await.unwrap();
    let result = task.wait(BOUND).await.unwrap();
    assert_eq!(result.texts().next(), Some("Kept b.txt"));

    // Unknown ids: -32602.
    let unknown = client.task("0123456789abcdef0123456789abcdef");
    match unknown.status().await {
        Err(ClientError::Protocol { code, .. }) => assert_eq!(code, -32602),
        other => panic!("{other:?}"),
    }
    assert_eq!(unknown.cancel().await.unwrap_err().code(), Some(-32602));
}

#[tokio::test]
async fn tasks_over_stdio() {
    let answered = Arc::new(AtomicUsize::new(0));
    let client = stdio(accepting(answered.clone())).await;
    tokio::time::timeout(Duration::from_secs(120), scenarios(&client, &answered))
        .await
        .unwrap();
    client.close().await.unwrap();
}

#[cfg(feature = "http")]
#[tokio::test]
async fn tasks_over_http() {
    let answered = Arc::new(AtomicUsize::new(0));
    let (client, _child) = http(accepting(answered.clone())).await;
    tokio::time::timeout(Duration::from_secs(120), scenarios(&client, &answered))
        .await
        .unwrap();
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_declined_input_request_cancels_the_task() {
    let options = ClientOptions::with_era(Era::Modern)
        .on_elicitation(|_| async { Err(HandlerError::new(-1, "the user declined")) });
    let client = stdio(options).await;
    let task = start(&client, "confirm_delete", json!({"filename": "c.txt"})).await;
    match task.wait(BOUND).await {
        Err(ClientError::Protocol { code, message, .. }) => {
            assert_eq!((code, message.as_str()), (-1, "the user declined"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(task.status().await.unwrap().status, TaskStatus::Cancelled);
    // Without any handler the request is refused the same way (-32601).
    let client = stdio(ClientOptions::with_era(Era::Modern)).await;
    let task = start(&client, "multi_input", Value::Null).await;
    assert_eq!(task.wait(BOUND).await.unwrap_err().code(), Some(-32601));
}

#[tokio::test]
async fn without_the_extension_nothing_is_sent() {
    // A legacy session with a server that has tasks: the v2 wire does not exist there.
    let legacy = stdio(ClientOptions::with_era(Era::legacy())).await;
    assert!(!legacy.offers_tasks());
    let refused = legacy
        .call_tool_as_task("slow_compute", json!({"seconds": 0}))
        .await
        .unwrap_err();
    match &refused {
        ClientError::Refused(m) => assert!(m.contains("io.modelcontextprotocol/tasks"), "{m}"),
        other => panic!("{other:?}"),
    }
    match legacy.task("x").status().await {
        Err(ClientError::Refused(_)) => {}
        other => panic!("{other:?}"),
    }
    // A modern server without a task table.
    let mut command = Command::new(example_bin("calculator"));
    command.stderr(std::process::Stdio::null());
    let calculator = Client::spawn_with(command, ClientOptions::with_era(Era::Modern))
        .await
        .unwrap();
    assert!(calculator.is_modern());
    assert!(!calculator.offers_tasks());
    let refused = calculator
        .call_tool_as_task("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert!(matches!(refused, ClientError::Refused(_)), "{refused:?}");
    match calculator.task("x").cancel().await {
        Err(ClientError::Refused(m)) => assert!(m.contains("does not offer"), "{m}"),
        other => panic!("{other:?}"),
    }
}

//! Providers (resources, prompts, completion) and connections: with
//! `Server::provider_factory` each connection calls its own instance, so two connections are
//! inside their providers at the same time; `Server::provide` shares one instance, locked
//! for each message, so they take turns.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mcp_rs_core::model::prompts::{GetPromptRequest, Prompt, PromptResult, PromptSet};
use mcp_rs_core::{Dispatch, ServerHandler};
use mcp_rs_tokio::output::Role;
use mcp_rs_tokio::{Server, ServerInfo, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Where two renderings meet: each arrival waits (blocking its thread, as a synchronous
/// provider does) until both are in, or until `patience` has passed.
#[derive(Default)]
struct Meeting {
    arrived: Mutex<usize>,
    both_in: Condvar,
}

impl Meeting {
    /// Whether the other one arrived while this one waited.
    fn meet(&self, patience: Duration) -> bool {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        self.both_in.notify_all();
        let (arrived, _) = self
            .both_in
            .wait_timeout_while(arrived, patience, |n| *n < 2)
            .unwrap();
        *arrived >= 2
    }
}

/// One prompt, rendered inside the drive loop after meeting the other connection.
struct Rendezvous {
    meeting: Arc<Meeting>,
    patience: Duration,
}

impl PromptSet for Rendezvous {
    fn len(&self) -> usize {
        1
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        (index == 0).then(|| Prompt::new("meet", "Waits for the other connection"))
    }
    fn get_prompt(
        &mut self,
        _: &GetPromptRequest<'_>,
        result: &mut PromptResult<'_, '_>,
    ) -> Dispatch {
        let met = self.meeting.meet(self.patience);
        let text = if met { "met" } else { "alone" };
        result.message(
            Role::User,
            &mcp_rs_core::model::content::Content::Text(text),
        );
        Dispatch::Done
    }
}

impl ServerHandler for Rendezvous {
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(self)
    }
}

fn info() -> ServerInfo {
    ServerInfo {
        name: "providers".into(),
        version: "0".into(),
        ..Default::default()
    }
}

/// Opens a connection, initializes it and asks for the prompt; returns its text.
async fn render(server: Server) -> String {
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_side);
    let task = tokio::spawn(async move { server.serve_connection(sr, sw).await });
    let (cr, mut cw) = tokio::io::split(client);
    let mut lines = BufReader::new(cr).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "meet"}}),
    ] {
        cw.write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let answer = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    drop((lines, cw));
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    answer["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no prompt text in {answer}"))
        .to_owned()
}

/// Both connections' answers, asked at the same time.
async fn both(server: &Server) -> Vec<String> {
    let (a, b) = tokio::join!(
        tokio::spawn(render(server.clone())),
        tokio::spawn(render(server.clone()))
    );
    let mut answers = vec![a.unwrap(), b.unwrap()];
    answers.sort();
    answers
}

// Two worker threads: each connection's drive loop blocks one inside its provider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_connection_providers_run_concurrently() {
    let meeting = Arc::new(Meeting::default());
    let made = Arc::new(Mutex::new(0usize));
    let server = Server::new(info(), Tools::new()).provider_factory({
        let meeting = Arc::clone(&meeting);
        let made = Arc::clone(&made);
        move || {
            *made.lock().unwrap() += 1;
            Rendezvous {
                meeting: Arc::clone(&meeting),
                patience: Duration::from_secs(20),
            }
        }
    });
    // Both renderings are inside a provider at once: each met the other.
    assert_eq!(both(&server).await, ["met", "met"]);
    assert_eq!(*made.lock().unwrap(), 2, "one provider per connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_provider_is_serialised() {
    let server = Server::new(info(), Tools::new()).provide(Rendezvous {
        meeting: Arc::new(Meeting::default()),
        patience: Duration::from_millis(500),
    });
    // The first holds the lock while it waits, so the second only arrives after it gave up.
    assert_eq!(both(&server).await, ["alone", "met"]);
}

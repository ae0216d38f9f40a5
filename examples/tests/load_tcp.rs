//! Load on the built `tcp` server: many concurrent raw TCP clients (newline-delimited JSON,
//! no SDK) pipelining `tools/call`s, with every response matched to its request by id; and
//! slow, progress-reporting calls mixed with pings that must not wait behind them.
//!
//! Prints calls/s and the server's peak and final RSS (`cargo test -p mcp-examples --test
//! load_tcp -- --nocapture`).

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::TcpStream;

/// Longest wait for any single line from the server.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

const MODERN_META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);

/// A running `tcp` server, killed on drop.
struct TcpServer {
    child: Child,
    addr: SocketAddr,
}

impl TcpServer {
    fn spawn() -> TcpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tcp"))
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tcp server");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        // Finds the address, then keeps draining stderr so the server never blocks on it.
        thread::spawn(move || {
            let mut stderr = BufReader::new(stderr);
            let mut line = String::new();
            let mut tx = Some(tx);
            loop {
                line.clear();
                match stderr.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if let Some(addr) = line.trim().strip_prefix("listening on ") {
                    if let (Some(tx), Ok(addr)) = (tx.take(), addr.parse::<SocketAddr>()) {
                        let _ = tx.send(addr);
                    }
                } else if tx.is_some() {
                    eprint!("tcp server: {line}");
                }
            }
            let mut rest = Vec::new();
            let _ = stderr.read_to_end(&mut rest);
        });
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => addr,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the tcp server did not print its address: {e}");
            }
        };
        TcpServer { child, addr }
    }

    /// `VmHWM` (peak) and `VmRSS` (current) of the server process, in KiB.
    fn memory_kib(&self) -> (u64, u64) {
        let m = common::memory(self.child.id());
        (m.hwm_kib, m.rss_kib)
    }

    fn assert_alive(&mut self) {
        if let Some(status) = self.child.try_wait().expect("try_wait") {
            panic!("the tcp server exited: {status}");
        }
    }
}

impl Drop for TcpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one line (without its newline) within [`READ_TIMEOUT`]; EOF is an error.
async fn read_line(
    reader: &mut AsyncBufReader<OwnedReadHalf>,
    line: &mut String,
) -> Result<(), String> {
    line.clear();
    match tokio::time::timeout(READ_TIMEOUT, reader.read_line(line)).await {
        Err(_) => Err(format!("no line from the server within {READ_TIMEOUT:?}")),
        Ok(Err(e)) => Err(format!("read: {e}")),
        Ok(Ok(0)) => Err("the server closed the connection".into()),
        Ok(Ok(_)) => Ok(()),
    }
}

// ---- many clients, many calls -------------------------------------------------------------

const CLIENTS: usize = 200;
const CALLS_PER_CLIENT: usize = 500;
const WINDOW: usize = 32;
const PEAK_RSS_LIMIT_MIB: u64 = 200;

/// The addends of call `seq` of client `client`: distinct over all calls, exact in f64.
fn addends(client: usize, seq: usize) -> (i64, f64) {
    let a = (client as i64) * 1_000_003 + seq as i64;
    let b = (seq as f64) * 0.25 - client as f64;
    (a, b)
}

fn push_call(out: &mut String, client: usize, seq: usize) {
    use std::fmt::Write as _;
    let (a, b) = addends(client, seq);
    let _ = writeln!(
        out,
        r#"{{"jsonrpc":"2.0","id":{seq},"method":"tools/call","params":{{"name":"add_numbers","arguments":{{"number1":{a},"number2":{b:?}}},{MODERN_META}}}}}"#
    );
}

/// One client: `CALLS_PER_CLIENT` calls, at most `WINDOW` in flight, every reply checked.
async fn add_client(addr: SocketAddr, client: usize) -> Result<(), String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (reader, mut writer) = stream.into_split();
    let mut reader = AsyncBufReader::with_capacity(16 << 10, reader);
    let mut answered = vec![false; CALLS_PER_CLIENT];
    let mut out = String::with_capacity(WINDOW * 256);
    let mut sent = 0;
    while sent < WINDOW.min(CALLS_PER_CLIENT) {
        push_call(&mut out, client, sent);
        sent += 1;
    }
    let mut done = 0;
    let mut line = String::new();
    while done < CALLS_PER_CLIENT {
        if !out.is_empty() && reader.buffer().is_empty() {
            // Everything received so far is handled: send its replacements in one write.
            writer
                .write_all(out.as_bytes())
                .await
                .map_err(|e| format!("write: {e}"))?;
            out.clear();
        }
        read_line(&mut reader, &mut line).await?;
        let reply: Value = serde_json::from_str(&line)
            .map_err(|e| format!("invalid JSON from the server ({e}): {line}"))?;
        let seq = reply["id"]
            .as_u64()
            .map(|id| id as usize)
            .filter(|&id| id < sent)
            .ok_or_else(|| format!("reply with an unknown id: {line}"))?;
        if std::mem::replace(&mut answered[seq], true) {
            return Err(format!("duplicate reply for id {seq}: {line}"));
        }
        let result = &reply["result"];
        if reply.get("error").is_some() || result["isError"] == json!(true) {
            return Err(format!("call {seq} failed: {line}"));
        }
        let (a, b) = addends(client, seq);
        let expected = a as f64 + b;
        if result["structuredContent"]["sum"].as_f64() != Some(expected) {
            return Err(format!("call {seq}: expected sum {expected}, got {line}"));
        }
        done += 1;
        if sent < CALLS_PER_CLIENT {
            push_call(&mut out, client, sent);
            sent += 1;
        }
    }
    // Nothing more may arrive: close our side and expect a clean EOF.
    writer.shutdown().await.map_err(|e| e.to_string())?;
    line.clear();
    match tokio::time::timeout(READ_TIMEOUT, reader.read_line(&mut line)).await {
        Ok(Ok(0)) => Ok(()),
        Ok(Ok(_)) => Err(format!("unexpected extra line: {line}")),
        Ok(Err(e)) => Err(format!("read after shutdown: {e}")),
        Err(_) => Err("the server kept the connection open after EOF".into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_clients_pipelining_add_numbers() {
    let mut server = TcpServer::spawn();
    let (_, rss_idle) = server.memory_kib();
    let addr = server.addr;
    let start = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| tokio::spawn(add_client(addr, c)))
        .collect();
    let mut failures = Vec::new();
    for (c, task) in tasks.into_iter().enumerate() {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("client {c}: {e}")),
            Err(e) => failures.push(format!("client {c} panicked: {e}")),
        }
    }
    let elapsed = start.elapsed();
    server.assert_alive();
    let (peak_kib, rss_kib) = server.memory_kib();
    let calls = CLIENTS * CALLS_PER_CLIENT;
    println!(
        "load_tcp: {CLIENTS} clients x {CALLS_PER_CLIENT} calls (window {WINDOW}) = {calls} calls \
         in {:.3} s = {:.0} calls/s; server RSS idle {:.1} MiB, peak (VmHWM) {:.1} MiB, \
         end (VmRSS) {:.1} MiB",
        elapsed.as_secs_f64(),
        calls as f64 / elapsed.as_secs_f64(),
        rss_idle as f64 / 1024.0,
        peak_kib as f64 / 1024.0,
        rss_kib as f64 / 1024.0,
    );
    assert!(
        failures.is_empty(),
        "{} of {CLIENTS} clients failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        peak_kib < PEAK_RSS_LIMIT_MIB * 1024,
        "server peak RSS {peak_kib} KiB exceeds {PEAK_RSS_LIMIT_MIB} MiB"
    );
}

// ---- slow calls with progress, mixed with pings -------------------------------------------

const SLOW_CLIENTS: usize = 20;
const ROUNDS: u64 = 5;
const SLOW_PER_ROUND: u64 = 3;
const PING_LIMIT: Duration = Duration::from_millis(500);

/// What the writer side of one slow client sent.
enum Sent {
    Slow,
    /// A ping, sent at this instant; `first` if it was written with the round's slow calls.
    Ping {
        at: Instant,
        first: bool,
    },
}

/// One client: initializes (legacy handshake, so `ping` is available), then per round sends
/// `SLOW_PER_ROUND` `slow_count` calls (n=3, 10 ms per step, with a progress token) and a
/// ping in one write, and a second ping 15 ms later while the calls still run.
/// Returns the worst ping latency.
async fn slow_client(addr: SocketAddr, client: usize) -> Result<Duration, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (reader, mut writer) = stream.into_split();
    let mut reader = AsyncBufReader::new(reader);
    let mut line = String::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": format!("load-{client}"), "version": "0"}}});
    writer
        .write_all(format!("{init}\n").as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    read_line(&mut reader, &mut line).await?;
    let reply: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
    if reply["id"] != json!(0) || reply.get("result").is_none() {
        return Err(format!("initialize failed: {line}"));
    }
    writer
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .map_err(|e| e.to_string())?;

    // The reader collects every message with its arrival time until all ids are answered.
    let expected = ROUNDS * (SLOW_PER_ROUND + 2);
    let collector = tokio::spawn(async move {
        let mut received = Vec::new();
        let mut replies = 0;
        let mut line = String::new();
        while replies < expected {
            read_line(&mut reader, &mut line).await?;
            let at = Instant::now();
            let msg: Value =
                serde_json::from_str(&line).map_err(|e| format!("invalid JSON ({e}): {line}"))?;
            if msg.get("id").is_some() {
                replies += 1;
            }
            received.push((at, msg));
        }
        Ok::<_, String>(received)
    });

    let mut sent: HashMap<u64, Sent> = HashMap::new();
    let mut id = 1u64;
    for _ in 0..ROUNDS {
        let mut batch = String::new();
        for _ in 0..SLOW_PER_ROUND {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "slow_count", "arguments": {"n": 3, "delay_ms": 10},
                "_meta": {"progressToken": format!("c{client}-{id}")}}});
            batch.push_str(&format!("{call}\n"));
            sent.insert(id, Sent::Slow);
            id += 1;
        }
        batch.push_str(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        batch.push('\n');
        let at = Instant::now();
        writer
            .write_all(batch.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        sent.insert(id, Sent::Ping { at, first: true });
        id += 1;
        tokio::time::sleep(Duration::from_millis(15)).await;
        let ping = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
        let at = Instant::now();
        writer
            .write_all(ping.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        sent.insert(id, Sent::Ping { at, first: false });
        id += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let received = collector
        .await
        .map_err(|e| format!("reader panicked: {e}"))??;

    // Check the order: each call's three progress notifications, increasing, then its
    // result; each ping answered promptly, the first of a round before that round's results.
    let mut progress: HashMap<u64, Vec<f64>> = HashMap::new();
    let mut answered: HashMap<u64, usize> = HashMap::new();
    let mut worst_ping = Duration::ZERO;
    for (index, (at, msg)) in received.iter().enumerate() {
        if msg["method"] == "notifications/progress" {
            let token = msg["params"]["progressToken"].as_str().unwrap_or_default();
            let call = token
                .strip_prefix(&format!("c{client}-"))
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|n| matches!(sent.get(n), Some(Sent::Slow)))
                .ok_or_else(|| format!("progress with a foreign token: {msg}"))?;
            if answered.contains_key(&call) {
                return Err(format!("progress after the result of call {call}: {msg}"));
            }
            let steps = progress.entry(call).or_default();
            let value = msg["params"]["progress"].as_f64().unwrap_or(f64::NAN);
            if steps.last().is_some_and(|&last| value <= last) || msg["params"]["total"] != 3.0 {
                return Err(format!("progress not increasing toward 3: {msg}"));
            }
            steps.push(value);
            continue;
        }
        let id = msg["id"]
            .as_u64()
            .ok_or_else(|| format!("unexpected message: {msg}"))?;
        if answered.insert(id, index).is_some() {
            return Err(format!("duplicate reply for id {id}: {msg}"));
        }
        match sent.get(&id) {
            Some(Sent::Slow) => {
                let steps = progress.get(&id).map_or(0, Vec::len);
                if steps != 3 {
                    return Err(format!(
                        "call {id} answered after {steps} of 3 progress steps"
                    ));
                }
                if msg["result"]["structuredContent"]["count"] != 3 {
                    return Err(format!("call {id}: unexpected result {msg}"));
                }
            }
            Some(Sent::Ping { at: sent_at, .. }) => {
                if msg["result"] != json!({}) {
                    return Err(format!("ping {id} failed: {msg}"));
                }
                worst_ping = worst_ping.max(at.saturating_duration_since(*sent_at));
            }
            None => return Err(format!("reply with an unknown id: {msg}")),
        }
    }
    for (&id, kind) in &sent {
        let Some(&at) = answered.get(&id) else {
            return Err(format!("no reply for id {id}"));
        };
        if let Sent::Ping { first: true, .. } = kind {
            // The round's slow calls have ids id-3 .. id-1.
            for call in id - SLOW_PER_ROUND..id {
                if answered[&call] < at {
                    return Err(format!("ping {id} was answered after slow call {call}"));
                }
            }
        }
    }
    if worst_ping >= PING_LIMIT {
        return Err(format!(
            "a ping took {worst_ping:?} while slow calls ran (limit {PING_LIMIT:?})"
        ));
    }
    Ok(worst_ping)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_calls_report_progress_and_never_delay_pings() {
    let mut server = TcpServer::spawn();
    let addr = server.addr;
    let start = Instant::now();
    let tasks: Vec<_> = (0..SLOW_CLIENTS)
        .map(|c| tokio::spawn(slow_client(addr, c)))
        .collect();
    let mut failures = Vec::new();
    let mut worst = Duration::ZERO;
    for (c, task) in tasks.into_iter().enumerate() {
        match task.await {
            Ok(Ok(ping)) => worst = worst.max(ping),
            Ok(Err(e)) => failures.push(format!("client {c}: {e}")),
            Err(e) => failures.push(format!("client {c} panicked: {e}")),
        }
    }
    server.assert_alive();
    println!(
        "load_tcp slow: {SLOW_CLIENTS} clients x {ROUNDS} rounds x ({SLOW_PER_ROUND} slow_count \
         + 2 pings) in {:.3} s; worst ping latency {:.2} ms",
        start.elapsed().as_secs_f64(),
        worst.as_secs_f64() * 1e3
    );
    assert!(
        failures.is_empty(),
        "{} of {SLOW_CLIENTS} clients failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

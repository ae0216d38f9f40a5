//! Slow and hostile peers against the real `tcp` and `calculator` binaries (issue #10: mcp-tokio
//! under hostile and slow peers), over loopback only:
//!
//! * a client that never reads its socket (the server closes it after `--write-timeout`; pings
//!   of another client stay fast; RSS stays bounded; SIGTERM stops the server);
//! * 500 slowloris connections trickling a line (closed after `--line-timeout`; a fresh client
//!   is served meanwhile);
//! * idle connections filling `--max-connections` (a fresh client must still be served);
//! * 1,000 pipelined calls then a half-close, over TCP and over stdio (every reply before EOF);
//! * 200 clients disconnecting in the middle of a long `slow_count` call (every connection
//!   closed, RSS back near its baseline);
//! * a 20,000-request burst;
//! * SIGINT under load (only complete lines, then a clean EOF; exit status 0 within 5 s);
//! * the memory of 10,000 idle connections.
//!
//! Every wait is bounded (socket timeouts, `recv_timeout`, polled exits), so a wedged server
//! fails a test instead of hanging it. The tests take turns (one lock): each measures latency
//! or memory, which tests running beside it on 2 cores would distort.
//!
//! `cargo test -p mcp-examples --test slow_peers -- --nocapture` prints the figures.

mod common;
#[path = "../../mcp-core/tests/harness/mod.rs"]
mod harness;

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use common::{mib, Mem};
use serde_json::{json, Value};

/// Longest wait for any single line (or write) on a socket.
const TIMEOUT: Duration = Duration::from_secs(15);
/// How long a stopped server may take to exit.
const EXIT_LIMIT: Duration = Duration::from_secs(5);
/// Bound on the server's peak RSS in the flood tests.
const PEAK_RSS_LIMIT_MIB: u64 = 64;
/// The revision of the `initialize` handshake in these tests.
const LEGACY: &str = "2025-06-18";
/// Before `initialize` the server answers as its latest legacy revision.
const PRE_INIT: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
const MODERN_META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);
const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// The tests run one at a time (see the module docs).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

// ---- the server process -------------------------------------------------------------------

/// A spawned server, killed on drop; stderr is collected (and always drained, so the server
/// never blocks on it).
struct Server {
    child: Child,
    name: &'static str,
    addr: Option<SocketAddr>,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn spawn(bin: &str, name: &'static str, args: &[&str], rust_log: &str, pipes: bool) -> Server {
        let pipe = || if pipes { Stdio::piped() } else { Stdio::null() };
        let mut child = Command::new(bin)
            .args(args)
            .env("RUST_LOG", rust_log)
            .stdin(pipe())
            .stdout(pipe())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {bin}: {e}"));
        let stderr = common::collect_stderr(&mut child);
        Server {
            child,
            name,
            addr: None,
            stderr,
        }
    }

    /// `tcp --listen 127.0.0.1:0 <args>`, once it has printed `listening on <addr>`.
    fn tcp(args: &[&str], rust_log: &str) -> Server {
        let mut all = vec!["--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut server = Server::spawn(env!("CARGO_BIN_EXE_tcp"), "tcp", &all, rust_log, false);
        let deadline = Instant::now() + TIMEOUT;
        while server.addr.is_none() {
            server.addr = server.stderr().lines().find_map(|l| {
                l.trim()
                    .strip_prefix("listening on ")
                    .and_then(|a| a.parse::<SocketAddr>().ok())
            });
            assert!(
                Instant::now() < deadline,
                "the tcp server did not print its address; stderr:\n{}",
                server.stderr()
            );
            thread::sleep(Duration::from_millis(10));
        }
        server
    }

    /// `calculator <args>` on pipes (take its stdin and stdout).
    fn calculator(args: &[&str]) -> Server {
        Server::spawn(
            env!("CARGO_BIN_EXE_calculator"),
            "calculator",
            args,
            "warn",
            true,
        )
    }

    fn addr(&self) -> SocketAddr {
        self.addr.expect("a tcp server")
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The last lines of stderr, for failure messages.
    fn stderr_tail(&self) -> String {
        let all = self.stderr();
        let lines: Vec<&str> = all.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    fn memory(&self) -> Mem {
        common::memory(self.child.id())
    }

    /// Open file descriptors of the server process (its sockets among them).
    fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(Iterator::count)
            .unwrap_or(0)
    }

    /// Waits (at most [`TIMEOUT`]) until the server has at least `n` open file descriptors:
    /// the connections made so far are accepted.
    fn wait_fds(&self, n: usize) {
        let deadline = Instant::now() + TIMEOUT;
        while self.open_fds() < n {
            assert!(
                Instant::now() < deadline,
                "the server has {} open fds, expected {n}",
                self.open_fds()
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends `SIG<name>` with `kill`.
    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed: {status}");
    }

    /// Waits for the process to exit, at most `limit`.
    fn wait_exit(&mut self, limit: Duration) -> Result<(ExitStatus, Duration), String> {
        self.wait_exit_noting(limit, None).0
    }

    /// Waits for the process to exit, at most `limit`; also notes when `marker` first
    /// appears on stderr (e.g. the log line of a signal handler).
    fn wait_exit_noting(
        &mut self,
        limit: Duration,
        marker: Option<&str>,
    ) -> (Result<(ExitStatus, Duration), String>, Option<Duration>) {
        let start = Instant::now();
        let mut seen = None;
        loop {
            if let (None, Some(m)) = (seen, marker) {
                if self.stderr().contains(m) {
                    seen = Some(start.elapsed());
                }
            }
            match self.child.try_wait() {
                Ok(Some(status)) => return (Ok((status, start.elapsed())), seen),
                Ok(None) if start.elapsed() > limit => {
                    let marked = match (marker, seen) {
                        (Some(m), Some(t)) => format!("; it logged {m:?} after {t:?}"),
                        (Some(m), None) => format!("; it never logged {m:?}"),
                        (None, _) => String::new(),
                    };
                    let error = format!(
                        "{} did not exit within {limit:?}{marked}; stderr:\n{}",
                        self.name,
                        self.stderr_tail()
                    );
                    return (Err(error), seen);
                }
                Ok(None) => thread::sleep(Duration::from_millis(5)),
                Err(e) => return (Err(e.to_string()), seen),
            }
        }
    }

    fn assert_alive(&mut self) {
        if let Some(status) = self.child.try_wait().expect("try_wait") {
            panic!(
                "{} exited: {status}; stderr:\n{}",
                self.name,
                self.stderr_tail()
            );
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- messages -----------------------------------------------------------------------------

/// A 2026-07-28 `add_numbers` call (no handshake needed) adding `id` and `2 id + 1`.
fn add_call(id: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"add_numbers\",\"arguments\":{{\"number1\":{id},\"number2\":{}}},{MODERN_META}}}}}\n",
        2 * id + 1
    )
}

/// The sum [`add_call`] asks for (exact in f64).
fn expected_sum(id: u64) -> f64 {
    (3 * id + 1) as f64
}

fn initialize(id: &str) -> String {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "slow-peers-test", "version": "0"}}});
    format!("{msg}\n")
}

fn ping(id: u64) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
}

fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.chars().count() > 160 {
        format!(
            "{}... ({} bytes)",
            s.chars().take(160).collect::<String>(),
            bytes.len()
        )
    } else {
        s.into_owned()
    }
}

fn parse(line: &str) -> Result<Value, String> {
    serde_json::from_str(line).map_err(|e| format!("invalid JSON ({e}): {}", show(line.as_bytes())))
}

fn validate(rev: &str, method: Option<&str>, msg: &Value) -> Result<(), String> {
    harness::validate_server_message(rev, method, msg)
        .map_err(|e| format!("server message does not match the {rev} schema:\n{e}"))
}

/// Checks a successful `add_numbers` reply.
fn check_add(msg: &Value, expected: f64) -> Result<(), String> {
    if msg["jsonrpc"] != "2.0" || msg.get("error").is_some() || msg["result"]["isError"] == true {
        return Err(format!("call failed: {msg}"));
    }
    if msg["result"]["structuredContent"]["sum"].as_f64() != Some(expected) {
        return Err(format!("expected sum {expected}, got {msg}"));
    }
    Ok(())
}

/// Reads one line: `None` at a clean EOF; a last line without its newline (a truncated
/// frame) and every read error (a reset, a timeout) are errors.
fn read_line(reader: &mut impl BufRead) -> Result<Option<String>, String> {
    let mut buf = Vec::new();
    match reader.read_until(b'\n', &mut buf) {
        Ok(0) => Ok(None),
        Ok(_) if buf.last() == Some(&b'\n') => {
            buf.pop();
            String::from_utf8(buf)
                .map(Some)
                .map_err(|e| format!("invalid UTF-8 from the server: {e}"))
        }
        Ok(_) => Err(format!("truncated line at EOF: {}", show(&buf))),
        Err(e) if buf.is_empty() => Err(format!("read failed ({:?}): {e}", e.kind())),
        Err(e) => Err(format!(
            "read failed ({:?}) inside a line: {e}; partial line: {}",
            e.kind(),
            show(&buf)
        )),
    }
}

/// Reads replies to `add_call(1..=n)` until EOF: every one must arrive exactly once, with
/// the right sum, before a clean EOF. Every `validate_every`-th reply is also checked against
/// the 2026-07-28 schema.
fn read_all_replies(reader: &mut impl BufRead, n: u64, validate_every: u64) -> Result<(), String> {
    let mut seen = vec![false; n as usize + 1];
    let mut count = 0u64;
    while let Some(line) = read_line(reader).map_err(|e| format!("after {count} replies: {e}"))? {
        let msg = parse(&line)?;
        let id = msg["id"]
            .as_u64()
            .filter(|id| (1..=n).contains(id))
            .ok_or_else(|| format!("reply with an unknown id: {msg}"))?;
        if std::mem::replace(&mut seen[id as usize], true) {
            return Err(format!("duplicate reply for id {id}: {msg}"));
        }
        check_add(&msg, expected_sum(id)).map_err(|e| format!("call {id}: {e}"))?;
        if count % validate_every == 0 {
            validate(MODERN, Some("tools/call"), &msg)?;
        }
        count += 1;
    }
    if count != n {
        let missing: Vec<usize> = (1..=n as usize).filter(|&i| !seen[i]).take(10).collect();
        return Err(format!(
            "EOF after {count} of {n} replies; missing ids (first 10): {missing:?}"
        ));
    }
    Ok(())
}

/// p-th percentile (0-100) of sorted durations.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

// ---- a line-oriented client ---------------------------------------------------------------

/// One TCP client: writes on the stream, reads lines through a buffer; every read and write
/// is bounded by [`TIMEOUT`].
struct Peer {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Peer {
    fn connect(addr: SocketAddr) -> Result<Peer, String> {
        let stream = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
        let setup = || -> io::Result<Peer> {
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(TIMEOUT))?;
            stream.set_write_timeout(Some(TIMEOUT))?;
            let reader = BufReader::new(stream.try_clone()?);
            Ok(Peer {
                stream: stream.try_clone()?,
                reader,
            })
        };
        setup().map_err(|e| format!("socket setup: {e}"))
    }

    fn send(&mut self, text: &str) -> Result<(), String> {
        self.stream
            .write_all(text.as_bytes())
            .map_err(|e| format!("write: {e}"))
    }

    /// The next line; `None` at a clean EOF.
    fn next_line(&mut self) -> Result<Option<String>, String> {
        read_line(&mut self.reader)
    }

    /// The next message; EOF is an error.
    fn next(&mut self) -> Result<Value, String> {
        match self.next_line()? {
            Some(line) => parse(&line),
            None => Err("the server closed the connection".into()),
        }
    }

    /// A legacy handshake: `initialize` answered, then `notifications/initialized`.
    fn handshake(&mut self, id: &str) -> Result<(), String> {
        self.send(&initialize(id))?;
        let reply = self.next()?;
        if reply["id"] != id || reply["result"]["protocolVersion"] != LEGACY {
            return Err(format!(
                "expected the reply to initialize {id:?}, got {reply}"
            ));
        }
        validate(LEGACY, Some("initialize"), &reply)?;
        self.send(INITIALIZED)
    }
}

/// A new client completes the handshake and one `tools/call`; returns how long it took.
fn fresh_client(addr: SocketAddr) -> Result<Duration, String> {
    let start = Instant::now();
    let mut peer = Peer::connect(addr)?;
    peer.handshake("fresh")?;
    peer.send(concat!(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_numbers","#,
        r#""arguments":{"number1":2,"number2":3}}}"#,
        "\n"
    ))?;
    let reply = peer.next()?;
    if reply["id"] != 2 {
        return Err(format!("expected the reply to call 2, got {reply}"));
    }
    check_add(&reply, 5.0)?;
    validate(LEGACY, Some("tools/call"), &reply)?;
    Ok(start.elapsed())
}

/// Runs `f` on a thread and waits at most `limit` for its result (the thread is left behind
/// on timeout; the server's drop then unblocks it).
fn bounded<T: Send + 'static>(
    what: &str,
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => Ok(v),
        Err(RecvTimeoutError::Timeout) => Err(format!("{what}: no result within {limit:?}")),
        Err(RecvTimeoutError::Disconnected) => Err(format!("{what}: panicked")),
    }
}

// ---- a. a client that never reads ---------------------------------------------------------

/// What the non-reading client saw.
struct NonReader {
    started: Instant,
    requests: u64,
    bytes: u64,
    /// The first write that made no progress for 100 ms (the buffers are full).
    stalled: Option<Instant>,
    /// When a write failed (the server closed the connection), and how.
    closed: Option<(Instant, ErrorKind)>,
}

/// Pipelines `tools/list` requests (large replies) and never reads, until a write fails or
/// `limit` passes.
fn never_read(addr: SocketAddr, limit: Duration) -> Result<NonReader, String> {
    let stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_write_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| e.to_string())?;
    let mut state = NonReader {
        started: Instant::now(),
        requests: 0,
        bytes: 0,
        stalled: None,
        closed: None,
    };
    let mut id = 0u64;
    loop {
        let mut batch = String::new();
        for _ in 0..32 {
            id += 1;
            batch.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\",\"params\":{{{MODERN_META}}}}}\n"
            ));
        }
        let bytes = batch.as_bytes();
        let mut pos = 0;
        while pos < bytes.len() {
            if state.started.elapsed() > limit {
                return Ok(state);
            }
            match (&stream).write(&bytes[pos..]) {
                Ok(0) => {
                    state.closed = Some((Instant::now(), ErrorKind::WriteZero));
                    return Ok(state);
                }
                Ok(n) => {
                    pos += n;
                    state.bytes += n as u64;
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    state.stalled.get_or_insert_with(Instant::now);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    state.closed = Some((Instant::now(), e.kind()));
                    return Ok(state);
                }
            }
        }
        state.requests = id;
    }
}

/// Pings (one at a time, every 5 ms) until `stop`; returns each send instant and round trip,
/// and the connection (still open).
fn keep_pinging(
    addr: SocketAddr,
    stop: &AtomicBool,
) -> Result<(Vec<(Instant, Duration)>, Peer), String> {
    let mut peer = Peer::connect(addr)?;
    let mut samples = Vec::new();
    let mut id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        id += 1;
        let sent = Instant::now();
        peer.send(&ping(id))?;
        let reply = peer.next()?;
        let rtt = sent.elapsed();
        if reply != json!({"jsonrpc": "2.0", "id": id, "result": {}}) {
            return Err(format!("ping {id}: unexpected reply {reply}"));
        }
        if id == 1 {
            validate(PRE_INIT, Some("ping"), &reply)?;
        }
        samples.push((sent, rtt));
        thread::sleep(Duration::from_millis(5));
    }
    Ok((samples, peer))
}

#[test]
fn a_client_that_never_reads_is_closed_and_others_stay_fast() {
    let _serial = serial();
    // 40 extra tools make each tools/list reply ~22 KB: the buffers fill quickly.
    let mut server = Server::tcp(
        &["--write-timeout", "1", "--extra-tools", "40"],
        "warn,tcp=info,mcp_rs_tokio::server=debug",
    );
    let addr = server.addr();
    let before = server.memory();
    let stop = Arc::new(AtomicBool::new(false));
    let pinger = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || keep_pinging(addr, &stop))
    };
    thread::sleep(Duration::from_millis(100));
    let outcome = bounded(
        "the non-reading client",
        Duration::from_secs(30),
        move || never_read(addr, Duration::from_secs(20)),
    )
    .and_then(|r| r)
    .unwrap_or_else(|e| panic!("{e}"));
    // A few more pings once the non-reader is gone.
    thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let (samples, mut ping_peer) = pinger
        .join()
        .expect("the pinging client panicked")
        .unwrap_or_else(|e| panic!("the pinging client failed: {e}"));
    let after = server.memory();
    server.assert_alive();

    // The server says why it closed the connection (debug log of mcp_rs_tokio::server).
    let deadline = Instant::now() + Duration::from_secs(5);
    let logged = loop {
        let found = server.stderr().contains("the peer stopped reading");
        if found || Instant::now() > deadline {
            break found;
        }
        thread::sleep(Duration::from_millis(20));
    };

    let mut rtts: Vec<Duration> = samples.iter().map(|s| s.1).collect();
    rtts.sort();
    let p50 = percentile(&rtts, 50.0);
    let p99 = percentile(&rtts, 99.0);
    let max = rtts.last().copied().unwrap_or_default();
    let stall_window = outcome
        .stalled
        .map(|s| (s, outcome.closed.map_or_else(Instant::now, |c| c.0)));
    let during_stall = stall_window.map_or(0, |(from, to)| {
        samples
            .iter()
            .filter(|(at, _)| *at >= from && *at <= to)
            .count()
    });
    let since = |t: Instant| t.saturating_duration_since(outcome.started).as_secs_f64();
    println!(
        "never-reader: wrote {} requests ({:.1} MiB) without reading; writes stalled at {} s, \
         closed by the server at {} s ({}); server log names the write timeout: {logged}",
        outcome.requests,
        outcome.bytes as f64 / (1024.0 * 1024.0),
        outcome
            .stalled
            .map_or("never".into(), |t| format!("{:.2}", since(t))),
        outcome
            .closed
            .map_or("never".into(), |(t, _)| format!("{:.2}", since(t))),
        outcome
            .closed
            .map_or("-".into(), |(_, kind)| format!("{kind:?}")),
    );
    println!(
        "never-reader: {} pings from another client ({during_stall} while the non-reader's \
         writes were stalled): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        rtts.len(),
        ms(p50),
        ms(p99),
        ms(max)
    );
    println!("never-reader: server memory before {before}, after {after}");

    let (closed_at, _) = outcome.closed.unwrap_or_else(|| {
        panic!(
            "the server never closed the client that does not read ({} requests written in \
             20 s); stderr:\n{}",
            outcome.requests,
            server.stderr_tail()
        )
    });
    let stalled_at = outcome
        .stalled
        .expect("the non-reader's writes never stalled, yet it was closed");
    assert!(
        closed_at.duration_since(stalled_at) < Duration::from_secs(6),
        "the non-reader was closed {:?} after its writes stalled (write timeout 1 s)",
        closed_at.duration_since(stalled_at)
    );
    assert!(
        logged,
        "the server did not log closing the connection for the write timeout; stderr:\n{}",
        server.stderr_tail()
    );
    assert!(
        during_stall >= 10,
        "only {during_stall} pings while the non-reader was stalled"
    );
    assert!(
        p99 < Duration::from_millis(200),
        "ping p99 {:.2} ms while a client did not read (limit 200 ms)",
        ms(p99)
    );
    assert!(
        after.hwm_kib < PEAK_RSS_LIMIT_MIB * 1024,
        "server peak RSS {} KiB exceeds {PEAK_RSS_LIMIT_MIB} MiB",
        after.hwm_kib
    );

    // SIGTERM with a client still connected: a graceful exit, and that client sees EOF.
    server.signal("TERM");
    let (exit, acted) = server.wait_exit_noting(EXIT_LIMIT, Some("SIGTERM: shutting down"));
    let (status, took) = exit.unwrap_or_else(|e| panic!("{e}"));
    println!(
        "never-reader: SIGTERM acted on (logged) after {}, {status} after {:.1} ms",
        acted.map_or("-".into(), |t| format!("{:.1} ms", ms(t))),
        ms(took)
    );
    assert!(status.success(), "exit status after SIGTERM: {status}");
    assert_eq!(
        ping_peer.next_line(),
        Ok(None),
        "a connected client should see a clean EOF"
    );
}

// ---- b. slowloris -------------------------------------------------------------------------

const SLOWLORIS: usize = 500;
const TRICKLE_EVERY: Duration = Duration::from_millis(200);

/// One trickling connection.
struct Trickle {
    stream: TcpStream,
    sent: usize,
    first_byte: Option<Instant>,
    /// When the server closed it, and how it showed.
    closed: Option<(Instant, String)>,
}

#[test]
fn slowloris_connections_are_closed_by_the_line_timeout() {
    let _serial = serial();
    let mut server = Server::tcp(&["--line-timeout", "2"], "warn");
    let addr = server.addr();
    // A line that would take ~60 s to complete at one byte per 200 ms: it never does.
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(250)
    );
    let line = line.as_bytes();
    let connecting = Instant::now();
    let fds = server.open_fds();
    let mut conns: Vec<Trickle> = Vec::with_capacity(SLOWLORIS);
    while conns.len() < SLOWLORIS {
        // In batches the server has accepted before the next (its listen backlog is 128: a
        // dropped SYN would be retried only a second later).
        for _ in 0..100 {
            let stream = TcpStream::connect(addr)
                .unwrap_or_else(|e| panic!("connect slowloris {}: {e}", conns.len()));
            stream.set_nonblocking(true).expect("nonblocking");
            conns.push(Trickle {
                stream,
                sent: 0,
                first_byte: None,
                closed: None,
            });
        }
        server.wait_fds(fds + conns.len());
    }
    let connected = connecting.elapsed();
    let start = Instant::now();
    let deadline = start + Duration::from_secs(15);
    let mut next_byte = start;
    let mut fresh = None;
    let mut unexpected = Vec::new();
    let mut buf = [0u8; 256];
    while conns.iter().any(|c| c.closed.is_none()) && Instant::now() < deadline {
        let now = Instant::now();
        if now >= next_byte {
            next_byte += TRICKLE_EVERY;
            for c in conns.iter_mut().filter(|c| c.closed.is_none()) {
                let Some(&byte) = line.get(c.sent) else {
                    continue;
                };
                match (&c.stream).write(&[byte]) {
                    Ok(n) => {
                        c.sent += n;
                        c.first_byte.get_or_insert(now);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => c.closed = Some((Instant::now(), format!("write: {:?}", e.kind()))),
                }
            }
        }
        for (i, c) in conns.iter_mut().enumerate() {
            if c.closed.is_some() {
                continue;
            }
            match (&c.stream).read(&mut buf) {
                Ok(0) => c.closed = Some((Instant::now(), "EOF".into())),
                Ok(n) => {
                    unexpected.push(format!("connection {i} got: {}", show(&buf[..n])));
                    c.closed = Some((Instant::now(), "data".into()));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => c.closed = Some((Instant::now(), format!("read: {:?}", e.kind()))),
            }
        }
        // A fresh client arrives while every slowloris connection is still held.
        if fresh.is_none() && start.elapsed() >= Duration::from_secs(1) {
            fresh = Some(thread::spawn(move || fresh_client(addr)));
        }
        thread::sleep(Duration::from_millis(20));
    }
    server.assert_alive();
    let fresh = fresh
        .expect("the fresh client was started")
        .join()
        .expect("the fresh client panicked");

    let open = conns.iter().filter(|c| c.closed.is_none()).count();
    let mut lifetimes: Vec<Duration> = conns
        .iter()
        .filter_map(|c| {
            let (at, _) = c.closed.as_ref()?;
            Some(at.saturating_duration_since(c.first_byte?))
        })
        .collect();
    lifetimes.sort();
    let mut how: Vec<&str> = conns
        .iter()
        .filter_map(|c| c.closed.as_ref().map(|(_, how)| how.as_str()))
        .collect();
    how.sort_unstable();
    how.dedup();
    let sent: usize = conns.iter().map(|c| c.sent).sum();
    println!(
        "slowloris: {SLOWLORIS} connections (connected in {:.2} s) trickling a byte every \
         {TRICKLE_EVERY:?} ({sent} bytes in all); closed by the server {} of {SLOWLORIS} (seen as {how:?}), \
         {:.2}-{:.2} s after their first byte (line timeout 2 s); a fresh client meanwhile: \
         {}; server {}",
        connected.as_secs_f64(),
        SLOWLORIS - open,
        lifetimes.first().map_or(0.0, Duration::as_secs_f64),
        lifetimes.last().map_or(0.0, Duration::as_secs_f64),
        match &fresh {
            Ok(d) => format!("served in {:.1} ms", ms(*d)),
            Err(e) => format!("FAILED: {e}"),
        },
        server.memory()
    );
    assert!(
        unexpected.is_empty(),
        "slowloris connections got data:\n{}",
        unexpected.join("\n")
    );
    assert_eq!(
        open,
        0,
        "{open} of {SLOWLORIS} slowloris connections still open after 15 s; stderr:\n{}",
        server.stderr_tail()
    );
    let first = lifetimes[0];
    let last = lifetimes[lifetimes.len() - 1];
    assert!(
        first >= Duration::from_millis(1900),
        "a slowloris connection was closed {first:?} after its first byte, before the 2 s \
         line timeout"
    );
    assert!(
        last <= Duration::from_secs(6),
        "a slowloris connection was held {last:?} (line timeout 2 s)"
    );
    let served = fresh.unwrap_or_else(|e| panic!("the fresh client was not served: {e}"));
    assert!(
        served < Duration::from_secs(1),
        "the fresh client took {served:?} while the slowloris connections were held"
    );
}

// ---- c. idle connections filling max_connections ------------------------------------------

const MAX_CONNECTIONS: usize = 50;

#[test]
fn idle_flood_past_max_connections_still_serves_a_fresh_client() {
    let _serial = serial();
    let max = MAX_CONNECTIONS.to_string();
    let mut server = Server::tcp(&["--max-connections", &max], "warn");
    let addr = server.addr();
    let mut idle: Vec<Peer> = (0..MAX_CONNECTIONS)
        .map(|i| {
            let mut peer = Peer::connect(addr).unwrap_or_else(|e| panic!("idle {i}: {e}"));
            peer.handshake(&format!("idle-{i}"))
                .unwrap_or_else(|e| panic!("idle {i}: {e}"));
            peer
        })
        .collect();
    // Every slot is taken by a connection that says nothing more (for a second).
    thread::sleep(Duration::from_secs(1));
    let fresh = fresh_client(addr);
    // A server that makes room sheds an idle connection: count those closed.
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut shed = HashSet::new();
    while shed.is_empty() && Instant::now() < deadline {
        for (i, peer) in idle.iter_mut().enumerate() {
            if shed.contains(&i) {
                continue;
            }
            peer.stream.set_nonblocking(true).expect("nonblocking");
            match peer.reader.fill_buf() {
                Ok([]) => {
                    shed.insert(i);
                }
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => {
                    shed.insert(i);
                }
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
    server.assert_alive();
    println!(
        "idle flood: {MAX_CONNECTIONS} idle connections (--max-connections {MAX_CONNECTIONS}); \
         the fresh client: {}; idle connections closed by the server: {}",
        match &fresh {
            Ok(d) => format!("served in {:.1} ms", ms(*d)),
            Err(e) => format!("NOT served: {e}"),
        },
        shed.len()
    );
    let served =
        fresh.unwrap_or_else(|e| panic!("connection {} was not served: {e}", MAX_CONNECTIONS + 1));
    assert!(
        served < Duration::from_secs(2),
        "the fresh client took {served:?}"
    );
    assert!(
        !shed.is_empty(),
        "the fresh client was served but no idle connection was closed"
    );
}

// ---- d. half-close after 1,000 pipelined calls ---------------------------------------------

const PIPELINED: u64 = 1000;

fn pipelined_calls(n: u64) -> String {
    (1..=n).map(add_call).collect()
}

#[test]
fn half_close_after_a_thousand_pipelined_calls_over_tcp() {
    let _serial = serial();
    let mut server = Server::tcp(&[], "warn");
    let mut peer = Peer::connect(server.addr()).unwrap_or_else(|e| panic!("{e}"));
    let start = Instant::now();
    let mut reader = peer.reader;
    let replies = thread::spawn(move || read_all_replies(&mut reader, PIPELINED, 1));
    peer.stream
        .write_all(pipelined_calls(PIPELINED).as_bytes())
        .expect("write the calls");
    peer.stream.shutdown(Shutdown::Write).expect("half-close");
    let result = replies.join().expect("the reader panicked");
    println!(
        "half-close tcp: {PIPELINED} pipelined calls then shutdown(Write): {} in {:.1} ms",
        if result.is_ok() {
            "every reply, then EOF,"
        } else {
            "FAILED"
        },
        ms(start.elapsed())
    );
    server.assert_alive();
    result.unwrap_or_else(|e| panic!("{e}; stderr:\n{}", server.stderr_tail()));
}

#[test]
fn stdin_closed_after_a_thousand_pipelined_calls_over_stdio() {
    let _serial = serial();
    let mut server = Server::calculator(&[]);
    let mut stdin = server.child.stdin.take().expect("stdin");
    let stdout = server.child.stdout.take().expect("stdout");
    let start = Instant::now();
    let writer = thread::spawn(move || {
        let written = stdin.write_all(pipelined_calls(PIPELINED).as_bytes());
        drop(stdin); // EOF
        written
    });
    let result = bounded("reading the calculator's stdout", TIMEOUT, move || {
        read_all_replies(&mut BufReader::new(stdout), PIPELINED, 1)
    })
    .and_then(|r| r);
    let exit = server.wait_exit(EXIT_LIMIT);
    println!(
        "half-close stdio: {PIPELINED} pipelined calls then stdin closed: {} in {:.1} ms, {}",
        if result.is_ok() {
            "every reply, then EOF,"
        } else {
            "FAILED"
        },
        ms(start.elapsed()),
        match &exit {
            Ok((status, _)) => status.to_string(),
            Err(e) => e.clone(),
        }
    );
    writer
        .join()
        .expect("the writer panicked")
        .expect("write the calls to stdin");
    result.unwrap_or_else(|e| panic!("{e}; stderr:\n{}", server.stderr_tail()));
    let (status, _) = exit.unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "calculator exit status: {status}");
}

// ---- e. clients disconnecting in the middle of a call --------------------------------------

const DISCONNECTING: usize = 200;

/// The peers whose connection the server logged as closed or ended (`mcp_rs_tokio::server` debug
/// lines `connection closed peer=tcp <addr>` / `connection ended peer=tcp <addr> ...`).
fn closed_peers(stderr: &str) -> HashSet<SocketAddr> {
    stderr
        .lines()
        .filter(|l| l.contains("connection closed") || l.contains("connection ended"))
        .filter_map(|l| {
            let rest = l.split_once("peer=tcp ")?.1;
            rest.split_whitespace().next()?.parse().ok()
        })
        .collect()
}

/// One round: `DISCONNECTING` clients each start a 30 s `slow_count`, prove it was dispatched
/// (the `add_numbers` call pipelined behind it is answered first) and stay connected until
/// all have started; then all of them drop their connections at once.
struct Round {
    /// Memory with every call running.
    running: Mem,
    /// How many of the dropped connections the server logged as closed within 8 s.
    closed: usize,
    /// From the drop to the last of them logged (or the 8 s limit).
    cleanup: Duration,
}

fn disconnect_mid_call(server: &Server) -> Round {
    let addr = server.addr();
    let mut clients = Vec::with_capacity(DISCONNECTING);
    for i in 0..DISCONNECTING {
        let mut peer = Peer::connect(addr).unwrap_or_else(|e| panic!("client {i}: {e}"));
        let slow = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"slow_count\",\"arguments\":{{\"n\":300,\"delay_ms\":100}},{MODERN_META}}}}}\n"
        );
        peer.send(&format!("{slow}{}", add_call(2)))
            .unwrap_or_else(|e| panic!("client {i}: {e}"));
        let reply = peer.next().unwrap_or_else(|e| panic!("client {i}: {e}"));
        if reply["id"] != 2 {
            panic!("client {i}: expected the reply to call 2 first, got {reply}");
        }
        check_add(&reply, expected_sum(2)).unwrap_or_else(|e| panic!("client {i}: {e}"));
        let local = peer.stream.local_addr().expect("local_addr");
        clients.push((local, peer));
    }
    let running = server.memory();
    let peers: HashSet<SocketAddr> = clients.iter().map(|(a, _)| *a).collect();
    let dropped = Instant::now();
    drop(clients);
    let deadline = dropped + Duration::from_secs(8);
    let closed = loop {
        let closed = closed_peers(&server.stderr());
        let done = peers.iter().filter(|p| closed.contains(p)).count();
        if done == DISCONNECTING || Instant::now() > deadline {
            break done;
        }
        thread::sleep(Duration::from_millis(50));
    };
    Round {
        running,
        closed,
        cleanup: dropped.elapsed(),
    }
}

#[test]
fn clients_disconnecting_mid_call_are_cleaned_up() {
    let _serial = serial();
    let mut server = Server::tcp(&[], "debug");
    let addr = server.addr();
    let warm = fresh_client(addr).unwrap_or_else(|e| panic!("warm-up client: {e}"));
    thread::sleep(Duration::from_millis(300));
    let baseline = server.memory();
    let round = disconnect_mid_call(&server);
    thread::sleep(Duration::from_millis(500));
    let after = server.memory();
    let fresh = fresh_client(addr);
    server.assert_alive();
    println!(
        "disconnect mid-call: {DISCONNECTING} clients started a 30 s slow_count, then dropped \
         their connections; the server logged {} of them closed within {:.2} s; warm-up \
         client {:.1} ms; a fresh client afterwards: {}",
        round.closed,
        round.cleanup.as_secs_f64(),
        ms(warm),
        match &fresh {
            Ok(d) => format!("served in {:.1} ms", ms(*d)),
            Err(e) => format!("NOT served: {e}"),
        }
    );
    println!(
        "disconnect mid-call: server baseline {baseline}; with the calls running {}; after \
         the disconnects {after} ({:+.1} MiB against the baseline)",
        round.running,
        mib(after.rss_kib) - mib(baseline.rss_kib)
    );
    assert_eq!(
        round.closed,
        DISCONNECTING,
        "the server did not close every dropped connection within 8 s (their calls run 30 s); \
         stderr:\n{}",
        server.stderr_tail()
    );
    let served = fresh.unwrap_or_else(|e| panic!("the fresh client was not served: {e}"));
    assert!(
        served < Duration::from_secs(1),
        "the fresh client took {served:?}"
    );
    // Freed memory is not always given back to the OS: a generous margin.
    assert!(
        after.rss_kib <= baseline.rss_kib + 16 * 1024,
        "server RSS {} KiB after the disconnects, baseline {} KiB (margin 16 MiB)",
        after.rss_kib,
        baseline.rss_kib
    );
}

// ---- f. a 20,000-request burst ------------------------------------------------------------

const BURST: u64 = 20_000;
const BURST_CONNECTIONS: u64 = 4;

#[test]
fn twenty_thousand_request_burst() {
    let _serial = serial();
    let mut server = Server::tcp(&[], "warn");
    let addr = server.addr();
    let before = server.memory();
    let per_conn = BURST / BURST_CONNECTIONS;
    let start = Instant::now();
    let mut readers = Vec::new();
    let mut writers = Vec::new();
    for _ in 0..BURST_CONNECTIONS {
        let peer = Peer::connect(addr).unwrap_or_else(|e| panic!("{e}"));
        let mut reader = peer.reader;
        readers.push(thread::spawn(move || {
            read_all_replies(&mut reader, per_conn, 100)
        }));
        let mut stream = peer.stream;
        writers.push(thread::spawn(move || -> io::Result<()> {
            stream.write_all(pipelined_calls(per_conn).as_bytes())?;
            stream.shutdown(Shutdown::Write)
        }));
    }
    let written: Vec<io::Result<()>> = writers
        .into_iter()
        .map(|w| w.join().expect("a writer panicked"))
        .collect();
    let results: Vec<Result<(), String>> = readers
        .into_iter()
        .map(|r| r.join().expect("a reader panicked"))
        .collect();
    let elapsed = start.elapsed();
    let peak = server.memory();
    server.assert_alive();
    println!(
        "burst: {BURST} requests over {BURST_CONNECTIONS} connections, written as fast as \
         possible and read concurrently: {} answered in {:.2} s = {:.0} requests/s; server \
         before {before}, after {peak} (peak VmHWM {:.1} MiB)",
        if results.iter().all(Result::is_ok) {
            "all"
        } else {
            "NOT all"
        },
        elapsed.as_secs_f64(),
        BURST as f64 / elapsed.as_secs_f64(),
        mib(peak.hwm_kib)
    );
    for (i, w) in written.into_iter().enumerate() {
        w.unwrap_or_else(|e| panic!("connection {i}: write: {e}"));
    }
    for (i, r) in results.into_iter().enumerate() {
        r.unwrap_or_else(|e| panic!("connection {i}: {e}"));
    }
    assert!(
        peak.hwm_kib < PEAK_RSS_LIMIT_MIB * 1024,
        "server peak RSS {} KiB exceeds {PEAK_RSS_LIMIT_MIB} MiB",
        peak.hwm_kib
    );
}

// ---- g. shutdown under load ---------------------------------------------------------------

const LOAD_CLIENTS: usize = 20;

/// Pipelines `add_call`s in batches of 16 until `stop` or a failed write; `assigned` is the
/// highest id handed to the socket so far.
fn pipeline_until_stopped(stream: TcpStream, assigned: &AtomicU64, stop: &AtomicBool) {
    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
    let mut id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let batch: String = (id + 1..=id + 16).map(add_call).collect();
        id += 16;
        assigned.store(id, Ordering::Release);
        let bytes = batch.as_bytes();
        let mut pos = 0;
        while pos < bytes.len() {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            match (&stream).write(&bytes[pos..]) {
                Ok(0) => return,
                Ok(n) => pos += n,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                // The server is gone: a reset or a broken pipe.
                Err(_) => return,
            }
        }
    }
}

/// Reads until EOF: every line complete JSON-RPC with a known id, answered once, with the
/// right sum; then a clean EOF. Returns the number of replies.
fn read_until_eof(
    reader: &mut impl BufRead,
    assigned: &AtomicU64,
    received: &AtomicU64,
) -> Result<u64, String> {
    let mut seen = HashSet::new();
    let mut count = 0u64;
    loop {
        let line = match read_line(reader) {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(count),
            Err(e) => return Err(format!("after {count} complete replies: {e}")),
        };
        let msg = parse(&line)?;
        let id = msg["id"]
            .as_u64()
            .filter(|&id| id >= 1 && id <= assigned.load(Ordering::Acquire))
            .ok_or_else(|| format!("reply with an unknown id: {msg}"))?;
        if !seen.insert(id) {
            return Err(format!("duplicate reply for id {id}"));
        }
        check_add(&msg, expected_sum(id)).map_err(|e| format!("call {id}: {e}"))?;
        if count % 200 == 0 {
            validate(MODERN, Some("tools/call"), &msg)?;
        }
        count += 1;
        received.store(count, Ordering::Release);
    }
}

#[test]
fn sigint_under_load_ends_every_connection_cleanly() {
    let _serial = serial();
    let mut server = Server::tcp(&[], "warn,tcp=info,mcp_rs_tokio::server=debug");
    let addr = server.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for i in 0..LOAD_CLIENTS {
        let peer = Peer::connect(addr).unwrap_or_else(|e| panic!("client {i}: {e}"));
        let assigned = Arc::new(AtomicU64::new(0));
        let received = Arc::new(AtomicU64::new(0));
        let writer = {
            let (assigned, stop) = (Arc::clone(&assigned), Arc::clone(&stop));
            let stream = peer.stream;
            thread::spawn(move || pipeline_until_stopped(stream, &assigned, &stop))
        };
        let reader = {
            let (assigned, received) = (Arc::clone(&assigned), Arc::clone(&received));
            let mut reader = peer.reader;
            thread::spawn(move || read_until_eof(&mut reader, &assigned, &received))
        };
        clients.push((writer, reader, received));
    }
    // Every client is in full flow before the signal.
    let deadline = Instant::now() + TIMEOUT;
    while clients.iter().any(|c| c.2.load(Ordering::Acquire) < 200) {
        assert!(
            Instant::now() < deadline,
            "the clients did not get going; stderr:\n{}",
            server.stderr_tail()
        );
        thread::sleep(Duration::from_millis(10));
    }
    server.signal("INT");
    let (exit, acted) = server.wait_exit_noting(EXIT_LIMIT, Some("SIGINT: shutting down"));
    stop.store(true, Ordering::Relaxed);
    let mut counts = Vec::new();
    let mut failures = Vec::new();
    for (i, (writer, reader, _)) in clients.into_iter().enumerate() {
        writer.join().expect("a writer panicked");
        match reader.join().expect("a reader panicked") {
            Ok(n) => counts.push(n),
            Err(e) => failures.push(format!("client {i}: {e}")),
        }
    }
    println!(
        "shutdown under load: {LOAD_CLIENTS} clients pipelining, SIGINT: acted on (logged) \
         after {}, {}; {} clients saw only complete replies ({} in all, {}-{} each) then \
         a clean EOF; {} did not",
        acted.map_or("-".into(), |t| format!("{:.1} ms", ms(t))),
        match &exit {
            Ok((status, took)) => format!("{status} after {:.1} ms", ms(*took)),
            Err(e) => e.clone(),
        },
        counts.len(),
        counts.iter().sum::<u64>(),
        counts.iter().min().unwrap_or(&0),
        counts.iter().max().unwrap_or(&0),
        failures.len()
    );
    for failure in &failures {
        println!("shutdown under load: {failure}");
    }
    let (status, _) = exit.unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "exit status after SIGINT: {status}");
    assert!(
        failures.is_empty(),
        "{} of {LOAD_CLIENTS} clients did not end cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---- h. memory per idle connection --------------------------------------------------------

const IDLE_CONNECTIONS: usize = 10_000;
/// Connections opened before their replies are read: below the listen backlog (128 here),
/// so no SYN is dropped and retried a second later.
const CONNECT_BATCH: usize = 100;
const PER_CONNECTION_LIMIT: u64 = 16 * 1024;

/// Reads the one line the server sends after the handshake (nothing else is sent, so
/// unbuffered reads cannot take more than that line).
fn read_reply(stream: &mut TcpStream) -> Result<Value, String> {
    let mut line = Vec::new();
    let mut buf = [0u8; 4096];
    while line.last() != Some(&b'\n') {
        match stream.read(&mut buf) {
            Ok(0) => return Err(format!("EOF after {}", show(&line))),
            Ok(n) => line.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    parse(
        std::str::from_utf8(&line)
            .map_err(|e| e.to_string())?
            .trim_end(),
    )
}

/// Connects and completes a handshake; the connection stays open and idle.
fn idle_session(addr: SocketAddr) -> Result<TcpStream, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(format!("{}{INITIALIZED}", initialize("i")).as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let reply = read_reply(&mut stream)?;
    if reply["id"] != "i" || reply["result"]["protocolVersion"] != LEGACY {
        return Err(format!("unexpected reply to initialize: {reply}"));
    }
    Ok(stream)
}

#[test]
fn memory_per_idle_connection() {
    let _serial = serial();
    let mut server = Server::tcp(&["--max-connections", "12000"], "warn");
    let addr = server.addr();
    let warm = idle_session(addr).unwrap_or_else(|e| panic!("warm-up connection: {e}"));
    thread::sleep(Duration::from_millis(300));
    let before = server.memory();
    let start = Instant::now();
    let mut conns = Vec::with_capacity(IDLE_CONNECTIONS);
    while conns.len() < IDLE_CONNECTIONS {
        // Connect and send a batch, then read its replies: the server works on a whole batch
        // while this thread connects.
        let batch: Vec<TcpStream> = (0..CONNECT_BATCH)
            .map(|_| {
                let stream = TcpStream::connect(addr)
                    .unwrap_or_else(|e| panic!("connection {}: connect: {e}", conns.len()));
                stream
                    .set_read_timeout(Some(TIMEOUT))
                    .expect("read timeout");
                (&stream)
                    .write_all(format!("{}{INITIALIZED}", initialize("i")).as_bytes())
                    .unwrap_or_else(|e| panic!("connection {}: write: {e}", conns.len()));
                stream
            })
            .collect();
        for mut stream in batch {
            let reply = read_reply(&mut stream)
                .unwrap_or_else(|e| panic!("connection {}: {e}", conns.len()));
            assert_eq!(reply["result"]["protocolVersion"], LEGACY, "{reply}");
            conns.push(stream);
        }
    }
    let connected = start.elapsed();
    thread::sleep(Duration::from_millis(500));
    let after = server.memory();
    server.assert_alive();
    // Every 1,000th connection (and the warm-up one) is still served: the figure is about
    // live sessions.
    let mut warm = warm;
    let sample = conns.iter_mut().enumerate().step_by(1000);
    for (i, stream) in sample.chain([(usize::MAX, &mut warm)]) {
        stream
            .write_all(ping(7).as_bytes())
            .unwrap_or_else(|e| panic!("connection {i}: write: {e}"));
        let reply = read_reply(stream).unwrap_or_else(|e| panic!("connection {i}: {e}"));
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
    }
    let per_conn = (after.rss_kib.saturating_sub(before.rss_kib) * 1024) / IDLE_CONNECTIONS as u64;
    println!(
        "idle connections: {IDLE_CONNECTIONS} handshaken idle connections opened in {:.2} s; \
         server before {before}, after {after}: {per_conn} bytes ({:.1} KiB) per idle \
         connection (target < 16 KiB)",
        connected.as_secs_f64(),
        per_conn as f64 / 1024.0
    );
    assert!(
        per_conn < PER_CONNECTION_LIMIT,
        "{per_conn} bytes of server RSS per idle connection (target < {PER_CONNECTION_LIMIT})"
    );
}

//! The two measurements: closed-loop load at a number of concurrent clients, and the memory
//! of idle legacy sessions.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::conn::{CallSpec, Conn, Failure, Session, Target};
use crate::procfs;

/// How clients talk to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// 2026-07-28 requests: no handshake, no session.
    Stateless,
    /// A legacy session per client (`initialize`, `Mcp-Session-Id`), deleted at the end.
    Session,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Stateless => "stateless",
            Mode::Session => "session",
        }
    }
}

/// The settings of a run.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub target: Target,
    pub mode: Mode,
    pub spec: CallSpec,
    /// The revision a legacy session asks for.
    pub legacy_version: String,
    pub warmup: Duration,
    pub duration: Duration,
    /// The server's process id, for CPU and memory (none: not measured).
    pub pid: Option<u32>,
    pub label: String,
    pub rep: u32,
}

/// Errors by kind, with the first few messages.
#[derive(Default, Debug)]
pub(crate) struct Errors {
    pub total: u64,
    pub kinds: BTreeMap<String, u64>,
    pub examples: Vec<String>,
}

impl Errors {
    pub(crate) fn add(&mut self, what: &str, f: &Failure) {
        self.total += 1;
        *self.kinds.entry(f.kind()).or_default() += 1;
        if self.examples.len() < 5 {
            self.examples.push(format!("{what}: {f}"));
        }
    }
    pub(crate) fn merge(&mut self, other: Errors) {
        self.total += other.total;
        for (k, n) in other.kinds {
            *self.kinds.entry(k).or_default() += n;
        }
        for e in other.examples {
            if self.examples.len() < 5 {
                self.examples.push(e);
            }
        }
    }
    pub(crate) fn json(&self) -> Value {
        json!(self.kinds)
    }
}

const SETUP: u8 = 0;
const WARMUP: u8 = 1;
const MEASURE: u8 = 2;
const STOP: u8 = 3;

/// What one client did.
#[derive(Default)]
struct ClientResult {
    /// Latencies (ns) of the calls that completed during the measured window.
    latencies: Vec<u64>,
    /// Calls answered (and checked) in any phase.
    answered: u64,
    errors: Errors,
}

/// The numbers a process's `/proc` gives at one moment.
#[derive(Clone, Copy)]
struct Sample {
    at: Instant,
    server_ticks: Option<u64>,
    own_ticks: Option<u64>,
}

fn sample(pid: Option<u32>) -> Sample {
    Sample {
        at: Instant::now(),
        server_ticks: pid.and_then(|p| procfs::cpu_ticks(p).ok()),
        own_ticks: procfs::cpu_ticks(0).ok(),
    }
}

/// Runs `clients` concurrent clients, each on its own connection, calling in a closed loop:
/// set-up (connections, sessions), `warmup`, then the measured `duration`. Returns one JSON
/// object of results.
pub(crate) async fn run_level(s: &Arc<Settings>, clients: usize, hz: u64) -> Value {
    let phase = Arc::new(AtomicU8::new(SETUP));
    let (go_tx, go_rx) = tokio::sync::watch::channel(SETUP);
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut tasks = tokio::task::JoinSet::new();
    let setup_began = Instant::now();
    for index in 0..clients {
        let s = s.clone();
        let phase = phase.clone();
        let go = go_rx.clone();
        let ready = ready_tx.clone();
        tasks.spawn(client(s, index as i64, phase, go, ready));
    }
    drop(ready_tx);
    // Every client connected (and, for sessions, initialized) or failed trying.
    let mut ready = 0;
    while ready < clients && ready_rx.recv().await.is_some() {
        ready += 1;
    }
    let setup = setup_began.elapsed();
    phase.store(WARMUP, Ordering::SeqCst);
    let _ = go_tx.send(WARMUP);
    tokio::time::sleep(s.warmup).await;
    let before = sample(s.pid);
    phase.store(MEASURE, Ordering::SeqCst);
    tokio::time::sleep(s.duration).await;
    phase.store(STOP, Ordering::SeqCst);
    let after = sample(s.pid);
    // Memory while every client is still connected.
    let rss = s.pid.and_then(|p| procfs::status_kib(p, "VmRSS").ok());
    let hwm = s.pid.and_then(|p| procfs::status_kib(p, "VmHWM").ok());
    let _ = go_tx.send(STOP);
    let mut latencies = Vec::new();
    let mut answered = 0;
    let mut errors = Errors::default();
    // Clients finish their call in flight (bounded by the call timeout) and end sessions.
    let deadline = s.spec.timeout * 2 + Duration::from_secs(5);
    let joined = tokio::time::timeout(deadline, async {
        while let Some(r) = tasks.join_next().await {
            match r {
                Ok(r) => {
                    latencies.extend(r.latencies);
                    answered += r.answered;
                    errors.merge(r.errors);
                }
                Err(e) => errors.add(
                    "client task",
                    &Failure::Answer(format!("client panicked: {e}")),
                ),
            }
        }
    })
    .await;
    if joined.is_err() {
        let n = tasks.len();
        for _ in 0..n {
            errors.add(
                "end",
                &Failure::Connection("client did not finish in time".into()),
            );
        }
        tasks.abort_all();
    }
    let window = after.at - before.at;
    let calls = latencies.len() as u64;
    latencies.sort_unstable();
    let pct = |p: f64| -> f64 {
        if latencies.is_empty() {
            return 0.0;
        }
        let rank = ((p * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
        latencies[rank - 1] as f64 / 1000.0
    };
    let per_call = |b: Option<u64>, a: Option<u64>| -> Option<f64> {
        let ticks = a?.checked_sub(b?)?;
        (calls > 0).then(|| ticks as f64 * 1e6 / hz as f64 / calls as f64)
    };
    let round = |x: f64| (x * 100.0).round() / 100.0;
    json!({
        "kind": "load",
        "label": s.label,
        "rep": s.rep,
        "mode": s.mode.name(),
        "clients": clients,
        "calls": calls,
        "answered": answered,
        "seconds": round(window.as_secs_f64()),
        "calls_per_s": round(calls as f64 / window.as_secs_f64()),
        "p50_us": round(pct(0.50)),
        "p90_us": round(pct(0.90)),
        "p99_us": round(pct(0.99)),
        "max_us": round(pct(1.0)),
        "server_cpu_us_per_call": per_call(before.server_ticks, after.server_ticks).map(round),
        "client_cpu_us_per_call": per_call(before.own_ticks, after.own_ticks).map(round),
        "server_rss_kib": rss,
        "server_peak_rss_kib": hwm,
        "setup_ms": round(setup.as_secs_f64() * 1000.0),
        "errors": errors.total,
        "error_kinds": errors.json(),
        "error_examples": errors.examples,
    })
}

/// One simulated client.
async fn client(
    s: Arc<Settings>,
    index: i64,
    phase: Arc<AtomicU8>,
    mut go: tokio::sync::watch::Receiver<u8>,
    ready: tokio::sync::mpsc::UnboundedSender<()>,
) -> ClientResult {
    let mut r = ClientResult::default();
    let mut conn = match Conn::open(&s.target, s.spec.timeout).await {
        Ok(c) => Some(c),
        Err(f) => {
            r.errors.add("connect", &f);
            None
        }
    };
    let mut session = None;
    if let (Mode::Session, Some(c)) = (s.mode, conn.as_mut()) {
        match c.initialize(&s.target, &s.spec, &s.legacy_version).await {
            Ok(sess) => session = Some(sess),
            Err(f) => {
                r.errors.add("initialize", &f);
                conn = None;
            }
        }
    }
    let _ = ready.send(());
    if go.wait_for(|p| *p != SETUP).await.is_err() || conn.is_none() {
        return r;
    }
    // Distinct operands per client and call: a reply meant for another call cannot pass.
    let base = index * 10_000_000;
    let mut id = 0u64;
    loop {
        if phase.load(Ordering::Relaxed) == STOP {
            break;
        }
        id += 1;
        let (a, b) = (base + id as i64, id as i64);
        let began = Instant::now();
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match Conn::open(&s.target, s.spec.timeout).await {
                Ok(c) => conn.insert(c),
                Err(f) => {
                    r.errors.add("reconnect", &f);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        match c.call(&s.target, &s.spec, session.as_ref(), id, a, b).await {
            Ok(()) => {
                r.answered += 1;
                if phase.load(Ordering::Relaxed) == MEASURE {
                    r.latencies.push(began.elapsed().as_nanos() as u64);
                }
            }
            Err(f) => {
                r.errors.add("tools/call", &f);
                if f.breaks_connection() {
                    conn = None;
                }
            }
        }
    }
    if let Some(sess) = &session {
        let done = match conn.as_mut() {
            Some(c) => c.delete(&s.target, &s.spec, sess).await,
            None => match Conn::open(&s.target, s.spec.timeout).await {
                Ok(mut c) => c.delete(&s.target, &s.spec, sess).await,
                Err(f) => Err(f),
            },
        };
        if let Err(f) = done {
            r.errors.add("delete", &f);
        }
    }
    r
}

/// Memory per idle legacy session: `sessions` sessions are opened (`initialize` +
/// `notifications/initialized`) over `conns` connections, which are then closed; after
/// `settle` the server's RSS is read again. The growth over the RSS before (taken after a
/// warm-up of the same steps on `warm` sessions, deleted again) divided by `sessions` is the
/// figure. Afterwards every session must still answer a call (checked), and is deleted.
pub(crate) async fn run_idle(
    s: &Arc<Settings>,
    sessions: usize,
    conns: usize,
    warm: usize,
    settle: Duration,
) -> Value {
    let mut errors = Errors::default();
    let Some(pid) = s.pid else {
        errors.add(
            "idle",
            &Failure::Answer("--pid is required for idle".into()),
        );
        return json!({"kind": "idle", "label": s.label, "errors": errors.total});
    };
    let conns = conns.max(1);
    // Warm-up: the allocator and runtime reach a steady state first.
    let warmed = open_sessions(s, warm, conns, &mut errors).await;
    for_each_session(s, warmed, conns, true, &mut errors).await;
    tokio::time::sleep(settle).await;
    let before = procfs::status_kib(pid, "VmRSS").ok();
    let began = Instant::now();
    let opened = open_sessions(s, sessions, conns, &mut errors).await;
    let open_ms = began.elapsed().as_secs_f64() * 1000.0;
    tokio::time::sleep(settle).await;
    let after = procfs::status_kib(pid, "VmRSS").ok();
    let count = opened.len();
    // Every session still serves, then goes.
    let checked = for_each_session(s, opened, conns, true, &mut errors).await;
    let per_session = match (before, after) {
        (Some(b), Some(a)) if count > 0 => Some((a as f64 - b as f64) * 1024.0 / count as f64),
        _ => None,
    };
    json!({
        "kind": "idle",
        "label": s.label,
        "rep": s.rep,
        "sessions": count,
        "checked": checked,
        "open_ms": (open_ms * 10.0).round() / 10.0,
        "rss_before_kib": before,
        "rss_after_kib": after,
        "bytes_per_session": per_session.map(f64::round),
        "errors": errors.total,
        "error_kinds": errors.json(),
        "error_examples": errors.examples,
    })
}

/// Opens `n` sessions over `conns` connections (closed afterwards).
async fn open_sessions(
    s: &Arc<Settings>,
    n: usize,
    conns: usize,
    errors: &mut Errors,
) -> Vec<Session> {
    let mut tasks = tokio::task::JoinSet::new();
    for k in 0..conns {
        let share = n / conns + usize::from(k < n % conns);
        let s = s.clone();
        tasks.spawn(async move {
            let mut errors = Errors::default();
            let mut out = Vec::with_capacity(share);
            let mut conn = None;
            for _ in 0..share {
                let c = match conn.as_mut() {
                    Some(c) => c,
                    None => match Conn::open(&s.target, s.spec.timeout).await {
                        Ok(c) => conn.insert(c),
                        Err(f) => {
                            errors.add("connect", &f);
                            continue;
                        }
                    },
                };
                match c.initialize(&s.target, &s.spec, &s.legacy_version).await {
                    Ok(sess) => out.push(sess),
                    Err(f) => {
                        if f.breaks_connection() {
                            conn = None;
                        }
                        errors.add("initialize", &f);
                    }
                }
            }
            (out, errors)
        });
    }
    let mut all = Vec::with_capacity(n);
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok((out, e)) => {
                all.extend(out);
                errors.merge(e);
            }
            Err(e) => errors.add("open", &Failure::Answer(format!("task panicked: {e}"))),
        }
    }
    all
}

/// One checked call on each session, then (if `delete`) its DELETE; returns the calls that
/// passed.
async fn for_each_session(
    s: &Arc<Settings>,
    sessions: Vec<Session>,
    conns: usize,
    delete: bool,
    errors: &mut Errors,
) -> u64 {
    let mut chunks: Vec<Vec<Session>> = (0..conns).map(|_| Vec::new()).collect();
    for (i, sess) in sessions.into_iter().enumerate() {
        chunks[i % conns].push(sess);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for chunk in chunks.into_iter().filter(|c| !c.is_empty()) {
        let s = s.clone();
        tasks.spawn(async move {
            let mut errors = Errors::default();
            let mut passed = 0u64;
            let mut conn = None;
            for (i, sess) in chunk.iter().enumerate() {
                let c = match conn.as_mut() {
                    Some(c) => c,
                    None => match Conn::open(&s.target, s.spec.timeout).await {
                        Ok(c) => conn.insert(c),
                        Err(f) => {
                            errors.add("connect", &f);
                            continue;
                        }
                    },
                };
                let n = i as i64 + 1;
                match c.call(&s.target, &s.spec, Some(sess), 1, n, n).await {
                    Ok(()) => passed += 1,
                    Err(f) => {
                        errors.add("tools/call", &f);
                        if f.breaks_connection() {
                            conn = None;
                            continue;
                        }
                    }
                }
                if delete {
                    if let Err(f) = c.delete(&s.target, &s.spec, sess).await {
                        if f.breaks_connection() {
                            conn = None;
                        }
                        errors.add("delete", &f);
                    }
                }
            }
            (passed, errors)
        });
    }
    let mut passed = 0;
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok((p, e)) => {
                passed += p;
                errors.merge(e);
            }
            Err(e) => errors.add("check", &Failure::Answer(format!("task panicked: {e}"))),
        }
    }
    passed
}

//! The `calculator` binary over stdio pipes against a *floor*: a minimal serde_json line loop
//! (this same executable, started with `MCP_FLOOR_SERVER=1`) answering `add_numbers` with a
//! reply of the same shape. For each server, in the same run:
//!
//! 1. pipelined throughput: a writer thread sends N `tools/call` lines (2026-07-28 `_meta`, no
//!    handshake) while the reader counts N replies;
//! 2. server CPU per call over that run: the sum of `/proc/<pid>/task/*/schedstat` (ns on
//!    CPU, precise; threads that exit meanwhile are missed) and, as a cross-check,
//!    `utime + stime` from `/proc/<pid>/stat` (clock ticks, whole process);
//! 3. round-trip latency: sequential request → reply after a warm-up, p50/p99/max.
//!
//! ```text
//! cargo bench -p mcp-examples --bench stdio
//! ```
//!
//! Environment: `MCP_BENCH_CALLS` (default 100000), `MCP_BENCH_RTT` (5000), `MCP_BENCH_REPS`
//! (3; the servers alternate and the median is reported), `MCP_BENCH_ONLY=calculator|floor`.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const FLOOR_ENV: &str = "MCP_FLOOR_SERVER";

fn main() {
    if std::env::var_os(FLOOR_ENV).is_some() {
        if let Err(e) = floor_server() {
            if e.kind() != io::ErrorKind::BrokenPipe {
                eprintln!("floor server: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let calls = env_usize("MCP_BENCH_CALLS", 100_000);
    let rtts = env_usize("MCP_BENCH_RTT", 5_000);
    let reps = env_usize("MCP_BENCH_REPS", 3).max(1);
    let only = std::env::var("MCP_BENCH_ONLY").ok();
    let hz = clock_ticks_per_second();
    let servers: Vec<Kind> = [Kind::Calculator, Kind::Floor]
        .into_iter()
        .filter(|k| only.as_deref().is_none_or(|o| o == k.name()))
        .collect();
    println!(
        "stdio bench: {calls} pipelined calls, {rtts} round trips, {reps} repetitions \
         (median reported), CLK_TCK {hz}, {} CPUs",
        thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("       {}", Measured::HEADER);
    let mut results: Vec<Vec<Measured>> = vec![Vec::new(); servers.len()];
    for rep in 0..reps {
        for (i, kind) in servers.iter().enumerate() {
            let m = run(*kind, calls, rtts, hz);
            println!("  rep {rep} {}", m.row(kind.name()));
            results[i].push(m);
        }
    }
    let medians: Vec<Measured> = results.iter().map(|r| Measured::median(r)).collect();
    println!();
    println!("       {}", Measured::HEADER);
    for (kind, m) in servers.iter().zip(&medians) {
        println!("median {}", m.row(kind.name()));
    }
    println!(
        "(pipelined: calls/s, server CPU µs per call from schedstat and from stat ticks, \
         context switches per call; sequential: server CPU µs and context switches per \
         round trip, latency percentiles)"
    );
    if let [calc, floor] = medians.as_slice() {
        println!();
        println!(
            "calculator/floor: throughput {:.2}x (higher is better, target >= 1), \
             CPU per call {:.2}x (lower is better, target < 1), p50 latency {:.2}x, \
             p99 latency {:.2}x, CPU per round trip {:.2}x",
            calc.calls_per_sec / floor.calls_per_sec,
            calc.cpu_us_per_call / floor.cpu_us_per_call,
            calc.p50_us / floor.p50_us,
            calc.p99_us / floor.p99_us,
            calc.rtt_cpu_us / floor.rtt_cpu_us,
        );
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `getconf CLK_TCK` (std has no `sysconf`), else the usual 100.
fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|&hz| hz > 0.0)
        .unwrap_or(100.0)
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Calculator,
    Floor,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Calculator => "calculator",
            Kind::Floor => "floor",
        }
    }

    fn command(self) -> Command {
        match self {
            Kind::Calculator => {
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_calculator"));
                cmd.env("RUST_LOG", "warn");
                cmd
            }
            Kind::Floor => {
                let exe = std::env::current_exe().expect("current_exe");
                let mut cmd = Command::new(exe);
                cmd.env(FLOOR_ENV, "1");
                cmd
            }
        }
    }
}

/// Resource use of a server process so far.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    ns: u64,
    ticks: u64,
    switches: u64,
}

impl Usage {
    /// (CPU µs from schedstat, CPU µs from ticks, context switches), each per call.
    fn per_call(self, since: Usage, calls: usize, hz: f64) -> (f64, f64, f64) {
        let n = calls.max(1) as f64;
        (
            self.ns.saturating_sub(since.ns) as f64 / 1e3 / n,
            self.ticks.saturating_sub(since.ticks) as f64 / hz * 1e6 / n,
            self.switches.saturating_sub(since.switches) as f64 / n,
        )
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Measured {
    calls_per_sec: f64,
    cpu_us_per_call: f64,
    stat_us_per_call: f64,
    switches_per_call: f64,
    rtt_cpu_us: f64,
    rtt_switches: f64,
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
}

impl Measured {
    const HEADER: &'static str = "server        calls/s  cpu µs  (ticks)  cs/call | \
         rtt cpu µs  rtt cs   p50 µs   p99 µs    max µs";

    fn row(&self, name: &str) -> String {
        format!(
            "{name:<10} {:>10.0} {:>7.2} {:>8.2} {:>8.3} | {:>10.2} {:>7.2} {:>8.1} {:>8.1} {:>9.1}",
            self.calls_per_sec,
            self.cpu_us_per_call,
            self.stat_us_per_call,
            self.switches_per_call,
            self.rtt_cpu_us,
            self.rtt_switches,
            self.p50_us,
            self.p99_us,
            self.max_us
        )
    }

    /// The per-field median over repetitions.
    fn median(runs: &[Measured]) -> Measured {
        let pick = |f: fn(&Measured) -> f64| {
            let mut v: Vec<f64> = runs.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
        };
        Measured {
            calls_per_sec: pick(|m| m.calls_per_sec),
            cpu_us_per_call: pick(|m| m.cpu_us_per_call),
            stat_us_per_call: pick(|m| m.stat_us_per_call),
            switches_per_call: pick(|m| m.switches_per_call),
            rtt_cpu_us: pick(|m| m.rtt_cpu_us),
            rtt_switches: pick(|m| m.rtt_switches),
            p50_us: pick(|m| m.p50_us),
            p99_us: pick(|m| m.p99_us),
            max_us: pick(|m| m.max_us),
        }
    }
}

// ---- requests and replies -----------------------------------------------------------------

/// The addends of call `id`: distinct per call, exact in f64.
fn addends(id: u64) -> (u64, f64) {
    (id * 3 + 1, (id % 1000) as f64 * 0.25)
}

fn push_call(out: &mut String, id: u64) {
    let (a, b) = addends(id);
    let _ = writeln!(
        out,
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"add_numbers","#,
            r#""arguments":{{"number1":{},"number2":{:?}}},"_meta":{{"#,
            r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
            r#""io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        ),
        id, a, b
    );
}

/// Panics unless `line` is the successful reply to call `id`.
fn check_reply(kind: Kind, line: &str, id: u64) {
    let reply: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{}: invalid reply ({e}): {line}", kind.name()));
    let (a, b) = addends(id);
    let sum = a as f64 + b;
    let result = &reply["result"];
    assert!(
        reply["id"] == json!(id)
            && result["structuredContent"]["sum"].as_f64() == Some(sum)
            && result["resultType"] == "complete",
        "{}: unexpected reply to call {id} (sum {sum}): {line}",
        kind.name()
    );
}

// ---- one measured server ------------------------------------------------------------------

struct Server {
    kind: Kind,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn spawn(kind: Kind) -> Server {
        let mut child = kind
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", kind.name()));
        let stdin = child.stdin.take();
        let stdout = BufReader::with_capacity(64 << 10, child.stdout.take().expect("stdout"));
        Server {
            kind,
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    /// Sequential round trips; returns each one's duration.
    fn round_trips(&mut self, n: usize) -> Vec<Duration> {
        let mut times = Vec::with_capacity(n);
        let mut request = String::new();
        let mut line = String::new();
        for _ in 0..n {
            let id = self.next_id;
            self.next_id += 1;
            request.clear();
            push_call(&mut request, id);
            line.clear();
            let stdin = self.stdin.as_mut().expect("stdin");
            let start = Instant::now();
            stdin.write_all(request.as_bytes()).expect("write request");
            self.stdout.read_line(&mut line).expect("read reply");
            times.push(start.elapsed());
            check_reply(self.kind, line.trim_end(), id);
        }
        times
    }

    /// `n` calls written by a separate thread while this one counts the replies.
    fn pipelined(&mut self, n: usize) -> Duration {
        let first = self.next_id;
        self.next_id += n as u64;
        let mut requests = String::with_capacity(n * 240);
        for id in first..first + n as u64 {
            push_call(&mut requests, id);
        }
        let mut stdin = self.stdin.take().expect("stdin");
        let start = Instant::now();
        let writer = thread::spawn(move || {
            for chunk in requests.as_bytes().chunks(64 << 10) {
                stdin.write_all(chunk).expect("write requests");
            }
            stdin
        });
        // Count newlines; keep the last reply to check it.
        let mut seen = 0usize;
        let mut collecting = n == 1;
        let mut last = Vec::new();
        while seen < n {
            let buf = self.stdout.fill_buf().expect("read replies");
            assert!(!buf.is_empty(), "{}: stdout closed early", self.kind.name());
            let (mut from, mut used) = (0, buf.len());
            for (i, _) in buf.iter().enumerate().filter(|(_, &b)| b == b'\n') {
                seen += 1;
                if seen == n {
                    used = i + 1;
                    break;
                }
                if seen + 1 == n {
                    collecting = true;
                    from = i + 1;
                }
            }
            if collecting {
                last.extend_from_slice(&buf[from..used]);
            }
            self.stdout.consume(used);
        }
        let elapsed = start.elapsed();
        self.stdin = Some(writer.join().expect("writer thread"));
        check_reply(
            self.kind,
            String::from_utf8_lossy(&last).trim_end(),
            first + n as u64 - 1,
        );
        elapsed
    }

    /// CPU time of all the server's threads in ns (schedstat), context switches (voluntary
    /// and not) of all its threads, and utime+stime of the process in ticks.
    fn cpu(&self) -> Usage {
        let pid = self.child.id();
        let mut usage = Usage::default();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                if let Ok(s) = std::fs::read_to_string(task.path().join("schedstat")) {
                    usage.ns += s
                        .split_whitespace()
                        .next()
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(0);
                }
                if let Ok(s) = std::fs::read_to_string(task.path().join("status")) {
                    usage.switches += s
                        .lines()
                        .filter(|l| l.contains("ctxt_switches:"))
                        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                        .sum::<u64>();
                }
            }
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or("", |(_, rest)| rest)
            .split_whitespace()
            .collect();
        // Fields 14 and 15 of the line; `fields` starts at field 3.
        let tick = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        usage.ticks = tick(11) + tick(12);
        usage
    }

    fn close(mut self) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        let _ = self.stdout.read_to_end(&mut rest);
        let status = self.child.wait().expect("wait");
        assert!(
            rest.is_empty() && status.success(),
            "{}: exit {status}, {} stray bytes",
            self.kind.name(),
            rest.len()
        );
    }
}

fn run(kind: Kind, calls: usize, rtts: usize, hz: f64) -> Measured {
    let mut server = Server::spawn(kind);
    // Warm-up: page in the code, grow the buffers, start the runtime's threads.
    server.round_trips(500);
    server.pipelined(calls.min(10_000));
    let before = server.cpu();
    let elapsed = server.pipelined(calls);
    let after = server.cpu();
    let (cpu_us, stat_us, switches) = after.per_call(before, calls, hz);
    server.round_trips(200);
    let before = server.cpu();
    let mut times = server.round_trips(rtts);
    let (rtt_cpu_us, _, rtt_switches) = server.cpu().per_call(before, rtts, hz);
    server.close();
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let pct = |p: f64| {
        let i = ((times.len() as f64 * p).ceil() as usize).clamp(1, times.len().max(1)) - 1;
        times.get(i).copied().map_or(f64::NAN, us)
    };
    Measured {
        calls_per_sec: calls as f64 / elapsed.as_secs_f64(),
        cpu_us_per_call: cpu_us,
        stat_us_per_call: stat_us,
        switches_per_call: switches,
        rtt_cpu_us,
        rtt_switches,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
        max_us: times.last().copied().map_or(f64::NAN, us),
    }
}

// ---- the floor server ---------------------------------------------------------------------

/// A minimal serde_json line loop: parse each line into a `Value`, answer `add_numbers`
/// with the calculator's reply shape, flush whenever the input buffer runs dry.
fn floor_server() -> io::Result<()> {
    let mut input = BufReader::with_capacity(64 << 10, io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 << 10, io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        if let Some(reply) = floor_reply(line.trim_end()) {
            output.write_all(reply.as_bytes())?;
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

fn floor_reply(line: &str) -> Option<String> {
    let msg: Value = match serde_json::from_str(line) {
        Ok(msg) => msg,
        Err(_) => {
            return Some(
                json!({"jsonrpc": "2.0", "id": null,
                       "error": {"code": -32700, "message": "Parse error"}})
                .to_string(),
            )
        }
    };
    let id = msg.get("id")?.clone();
    let params = &msg["params"];
    let reply = if msg["method"] == "tools/call" && params["name"] == "add_numbers" {
        let args = &params["arguments"];
        match (args["number1"].as_f64(), args["number2"].as_f64()) {
            (Some(a), Some(b)) => {
                let sum = a + b;
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [
                        {"type": "text", "text": format!("{a} + {b} = {sum}")},
                        {"type": "text", "text": json!({"sum": sum}).to_string()},
                    ],
                    "structuredContent": {"sum": sum},
                    "resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {
                        "name": "mcp-rs-calculator", "version": "0.1.0", "title": "Calculator",
                        "description": "Arithmetic, dice rolls and fortunes: an example server of mcp-rs"
                    }},
                }})
            }
            _ => json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": "Invalid arguments for tool add_numbers"}],
                "isError": true, "resultType": "complete"}}),
        }
    } else {
        json!({"jsonrpc": "2.0", "id": id,
               "error": {"code": -32601, "message": "Method not found"}})
    };
    Some(reply.to_string())
}

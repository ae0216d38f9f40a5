//! The load generator against the mcp-rs bench server (and the floor server), briefly: both
//! modes and the idle-session measurement produce their figures with every call checked and
//! no error; a call the server cannot answer is counted as an error, never dropped; the
//! report turns the lines into tables. The rmcp comparison itself is `bench/http.sh`, not
//! run here.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

const LOAD: &str = env!("CARGO_BIN_EXE_mcp-httpload");
const OURS: &str = env!("CARGO_BIN_EXE_mcp-http-bench-server");
const FLOOR: &str = env!("CARGO_BIN_EXE_http-floor-server");

/// A server process, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(bin: &str) -> Server {
        let mut child = Command::new(bin)
            .args(["--addr", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let stderr = child.stderr.take().expect("stderr");
        let mut line = String::new();
        BufReader::new(stderr)
            .read_line(&mut line)
            .expect("read the server's first line");
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Server {
            child,
            url: format!("http://{addr}/mcp"),
        }
    }
    fn pid(&self) -> String {
        self.child.id().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs mcp-httpload; returns its exit code and JSON lines.
fn load(args: &[&str]) -> (i32, Vec<Value>) {
    let out = Command::new(LOAD)
        .args(args)
        .output()
        .expect("run mcp-httpload");
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

fn run_load(server: &Server, mode: &str, label: &str) -> Vec<Value> {
    let pid = server.pid();
    let (code, lines) = load(&[
        "load",
        "--url",
        &server.url,
        "--mode",
        mode,
        "--clients",
        "1,8",
        "--warmup",
        "0.2",
        "--duration",
        "0.5",
        "--pid",
        &pid,
        "--label",
        label,
    ]);
    assert_eq!(code, 0, "{mode}: {lines:?}");
    assert_eq!(lines.len(), 2);
    for (v, clients) in lines.iter().zip([1, 8]) {
        assert_eq!(v["kind"], "load");
        assert_eq!(v["mode"], mode);
        assert_eq!(v["clients"], clients);
        assert_eq!(v["errors"], 0, "{v}");
        assert!(v["calls"].as_u64().unwrap() > 0, "{v}");
        assert!(v["answered"].as_u64() >= v["calls"].as_u64(), "{v}");
        assert!(v["calls_per_s"].as_f64().unwrap() > 0.0, "{v}");
        let (p50, p99) = (v["p50_us"].as_f64().unwrap(), v["p99_us"].as_f64().unwrap());
        assert!(p50 > 0.0 && p99 >= p50, "{v}");
        assert!(v["server_cpu_us_per_call"].as_f64().is_some(), "{v}");
        assert!(v["server_peak_rss_kib"].as_u64().unwrap() > 0, "{v}");
    }
    lines
}

#[test]
fn both_modes_idle_sessions_and_report() {
    let ours = Server::start(OURS);
    let mut all = run_load(&ours, "stateless", "mcp-rs");
    all.extend(run_load(&ours, "session", "mcp-rs"));
    let (code, idle) = load(&[
        "idle",
        "--url",
        &ours.url,
        "--pid",
        &ours.pid(),
        "--sessions",
        "50",
        "--warm",
        "10",
        "--settle",
        "0.2",
        "--label",
        "mcp-rs",
    ]);
    assert_eq!(code, 0, "{idle:?}");
    let v = &idle[0];
    assert_eq!(v["kind"], "idle");
    assert_eq!(v["sessions"], 50, "{v}");
    assert_eq!(v["checked"], 50, "every idle session still answers: {v}");
    assert_eq!(v["errors"], 0, "{v}");
    assert!(v["bytes_per_session"].as_f64().is_some(), "{v}");
    all.extend(idle);

    let floor = Server::start(FLOOR);
    all.extend(run_load(&floor, "stateless", "floor"));
    all.extend(run_load(&floor, "session", "floor"));

    // The report reads the lines back: one row per mode and client count.
    let dir = std::env::temp_dir().join(format!("mcp-httpload-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lines.jsonl");
    let text: String = all.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = Command::new(LOAD)
        .args(["report", "--subject", "mcp-rs", "--baseline", "floor"])
        .arg(&file)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(table.contains("| stateless | 8 |"), "{table}");
    assert!(table.contains("| session | 1 |"), "{table}");
    assert!(
        table.contains("KiB per idle legacy session (50 sessions)"),
        "{table}"
    );
    assert!(table.contains("errors: floor 0, mcp-rs 0"), "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failed_calls_are_counted() {
    let ours = Server::start(OURS);
    // An unknown tool: every answer is a JSON-RPC error (HTTP 400 in 2026-07-28).
    let (code, lines) = load(&[
        "load",
        "--url",
        &ours.url,
        "--mode",
        "stateless",
        "--clients",
        "2",
        "--warmup",
        "0.1",
        "--duration",
        "0.3",
        "--tool",
        "nope",
    ]);
    assert_eq!(code, 1, "{lines:?}");
    let v = &lines[0];
    assert_eq!(v["calls"], 0, "{v}");
    let errors = v["errors"].as_u64().unwrap();
    assert!(errors > 0, "{v}");
    assert_eq!(v["error_kinds"]["HTTP 400"].as_u64(), Some(errors), "{v}");
    // In a session the same call is answered 200 with a JSON-RPC error: a wrong answer.
    let (code, lines) = load(&[
        "load",
        "--url",
        &ours.url,
        "--mode",
        "session",
        "--clients",
        "2",
        "--warmup",
        "0.1",
        "--duration",
        "0.3",
        "--tool",
        "nope",
    ]);
    assert_eq!(code, 1, "{lines:?}");
    let v = &lines[0];
    assert!(
        v["error_kinds"]["wrong answer"].as_u64().unwrap() > 0,
        "{v}"
    );
    // Nobody listening: every client's connection fails, and each is counted.
    drop(ours);
    let dead = Server::start(OURS);
    let url = dead.url.clone();
    drop(dead);
    let (code, lines) = load(&[
        "load",
        "--url",
        &url,
        "--mode",
        "stateless",
        "--clients",
        "3",
        "--warmup",
        "0.1",
        "--duration",
        "0.2",
        "--timeout",
        "2",
    ]);
    assert_eq!(code, 1, "{lines:?}");
    assert_eq!(lines[0]["errors"], 3, "{}", lines[0]);
    assert_eq!(lines[0]["calls"], 0);
}

//! `mcp-httpload`: a load generator for MCP Streamable HTTP servers (see `bench/README.md`).
//!
//! ```text
//! mcp-httpload load --url http://127.0.0.1:3000/mcp --mode stateless|session
//!                   [--clients 1,64,1000] [--warmup 1] [--duration 3] [--pid PID]
//!                   [--label NAME] [--rep N] [--threads 1] [--timeout 10]
//!                   [--tool add] [--legacy-version 2025-11-25]
//! mcp-httpload idle --url URL --pid PID [--sessions 1000] [--conns 8] [--warm 10]
//!                   [--settle 1] [--label NAME] [--rep N]
//! mcp-httpload report [--subject mcp-rs] [--baseline rmcp] [--floor floor] FILE.jsonl...
//! ```
//!
//! `load` prints one JSON line per client count; `idle` one JSON line; both exit 1 when any
//! call failed (every failure is counted, by kind, in `errors`/`error_kinds`). `report`
//! turns the lines of several runs into the comparison tables.

mod conn;
mod load;
mod mcp;
mod procfs;
mod report;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use conn::{CallSpec, Target};
use load::{Mode, Settings};

const USAGE: &str = "\
usage:
  mcp-httpload load --url http://IP:PORT/mcp --mode stateless|session
                    [--clients 1,64,1000] [--warmup SECS] [--duration SECS] [--pid PID]
                    [--label NAME] [--rep N] [--threads N] [--timeout SECS]
                    [--tool NAME] [--legacy-version REV]
  mcp-httpload idle --url URL --pid PID [--sessions N] [--conns N] [--warm N]
                    [--settle SECS] [--label NAME] [--rep N] [--timeout SECS]
  mcp-httpload report [--subject NAME] [--baseline NAME] [--floor NAME] FILE.jsonl...

load: closed-loop clients (each on its own keep-alive connection) call the tool with
      {\"a\": A, \"b\": B} and check every answer; one JSON line per client count.
      stateless = 2026-07-28 requests; session = a legacy session per client
      (initialize + notifications/initialized, Mcp-Session-Id, DELETE at the end).
idle: memory per idle legacy session (needs --pid); one JSON line.
report: the comparison tables from the JSON lines of load and idle runs.
Exit status: 0 ok, 1 when any call failed, 2 for a usage error.";

struct Args {
    command: String,
    url: Option<String>,
    mode: Mode,
    clients: Vec<usize>,
    warmup: f64,
    duration: f64,
    pid: Option<u32>,
    label: String,
    rep: u32,
    threads: usize,
    timeout: f64,
    tool: String,
    legacy_version: String,
    sessions: usize,
    conns: usize,
    warm: usize,
    settle: f64,
    subject: String,
    baseline: String,
    floor: String,
    files: Vec<String>,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let command = it.next().ok_or("missing command")?;
    if !matches!(command.as_str(), "load" | "idle" | "report") {
        return Err(format!("unknown command {command:?}"));
    }
    let mut a = Args {
        command,
        url: None,
        mode: Mode::Stateless,
        clients: vec![1, 64, 1000],
        warmup: 1.0,
        duration: 3.0,
        pid: None,
        label: "server".into(),
        rep: 0,
        threads: 1,
        timeout: 10.0,
        tool: "add".into(),
        legacy_version: "2025-11-25".into(),
        sessions: 1000,
        conns: 8,
        warm: 10,
        settle: 1.0,
        subject: "mcp-rs".into(),
        baseline: "rmcp".into(),
        floor: "floor".into(),
        files: Vec::new(),
    };
    fn num<T: std::str::FromStr>(name: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{name} needs a value"))?;
        v.parse()
            .map_err(|_| format!("{name}: {v:?} is not a valid number"))
    }
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--url" => a.url = Some(it.next().ok_or("--url needs a value")?),
            "--mode" => {
                a.mode = match it.next().as_deref() {
                    Some("stateless") => Mode::Stateless,
                    Some("session") => Mode::Session,
                    other => return Err(format!("--mode: stateless or session, not {other:?}")),
                }
            }
            "--clients" => {
                let v = it.next().ok_or("--clients needs a value")?;
                a.clients = v
                    .split(',')
                    .map(|n| n.trim().parse::<usize>().ok().filter(|&n| n > 0))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("--clients: {v:?} is not a list of counts > 0"))?;
            }
            "--warmup" => a.warmup = num(&flag, it.next())?,
            "--duration" => a.duration = num(&flag, it.next())?,
            "--pid" => a.pid = Some(num(&flag, it.next())?),
            "--label" => a.label = it.next().ok_or("--label needs a value")?,
            "--rep" => a.rep = num(&flag, it.next())?,
            "--threads" => a.threads = num(&flag, it.next())?,
            "--timeout" => a.timeout = num(&flag, it.next())?,
            "--tool" => a.tool = it.next().ok_or("--tool needs a value")?,
            "--legacy-version" => {
                a.legacy_version = it.next().ok_or("--legacy-version needs a value")?;
            }
            "--sessions" => a.sessions = num(&flag, it.next())?,
            "--conns" => a.conns = num(&flag, it.next())?,
            "--warm" => a.warm = num(&flag, it.next())?,
            "--settle" => a.settle = num(&flag, it.next())?,
            "--subject" => a.subject = it.next().ok_or("--subject needs a value")?,
            "--baseline" => a.baseline = it.next().ok_or("--baseline needs a value")?,
            "--floor" => a.floor = it.next().ok_or("--floor needs a value")?,
            f if a.command == "report" && !f.starts_with("--") => a.files.push(f.to_owned()),
            f => return Err(format!("unknown argument {f:?}")),
        }
    }
    let positive = |name: &str, v: f64| {
        if (0.0..1e6).contains(&v) {
            Ok(())
        } else {
            Err(format!("{name} must be a number of seconds >= 0"))
        }
    };
    positive("--warmup", a.warmup)?;
    positive("--duration", a.duration)?;
    positive("--settle", a.settle)?;
    positive("--timeout", a.timeout)?;
    if a.duration <= 0.0 || a.timeout <= 0.0 {
        return Err("--duration and --timeout must be > 0".into());
    }
    if a.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mcp-httpload: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.command == "report" {
        return report::main(&args.files, &args.subject, &args.baseline, &args.floor);
    }
    let Some(url) = &args.url else {
        eprintln!("mcp-httpload: --url is required\n\n{USAGE}");
        return ExitCode::from(2);
    };
    let target = match Target::parse(url) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mcp-httpload: {e}");
            return ExitCode::from(2);
        }
    };
    if args.command == "idle" && args.pid.is_none() {
        eprintln!("mcp-httpload: idle needs --pid (the server's process id)");
        return ExitCode::from(2);
    }
    let hz = match procfs::clock_ticks() {
        Ok(hz) => hz,
        Err(e) => {
            eprintln!("mcp-httpload: cannot read the clock tick rate: {e}");
            return ExitCode::FAILURE;
        }
    };
    let settings = Arc::new(Settings {
        target,
        mode: if args.command == "idle" {
            Mode::Session
        } else {
            args.mode
        },
        spec: CallSpec {
            tool_json: serde_json::Value::from(args.tool.as_str()).to_string(),
            tool: args.tool.clone(),
            timeout: Duration::from_secs_f64(args.timeout),
        },
        legacy_version: args.legacy_version.clone(),
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.duration),
        pid: args.pid,
        label: args.label.clone(),
        rep: args.rep,
    });
    // One worker thread by default: the client takes at most one core from the server.
    let runtime = if args.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads)
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-httpload: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut failed = false;
    runtime.block_on(async {
        let mut lines = Vec::new();
        if args.command == "idle" {
            let settle = Duration::from_secs_f64(args.settle);
            lines.push(
                load::run_idle(&settings, args.sessions, args.conns, args.warm, settle).await,
            );
        } else {
            for &clients in &args.clients {
                let line = load::run_level(&settings, clients, hz).await;
                println!("{line}");
                lines.push(line);
            }
        }
        for line in &lines {
            if args.command == "idle" {
                println!("{line}");
            }
            summarize(line);
            failed |= line["errors"].as_u64() != Some(0);
        }
    });
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// A human-readable line on stderr (and the first error messages, if any).
fn summarize(v: &serde_json::Value) {
    let label = v["label"].as_str().unwrap_or("?");
    if v["kind"] == "idle" {
        eprintln!(
            "{label} idle: {} sessions, RSS {} -> {} KiB, {} bytes/session, {} errors",
            v["sessions"],
            v["rss_before_kib"],
            v["rss_after_kib"],
            v["bytes_per_session"],
            v["errors"]
        );
    } else {
        eprintln!(
            "{label} {} c={}: {} calls/s, p50 {} us, p99 {} us, server CPU {} us/call, client CPU {} us/call, peak RSS {} KiB, {} errors",
            v["mode"].as_str().unwrap_or("?"),
            v["clients"],
            v["calls_per_s"],
            v["p50_us"],
            v["p99_us"],
            v["server_cpu_us_per_call"],
            v["client_cpu_us_per_call"],
            v["server_peak_rss_kib"],
            v["errors"]
        );
    }
    if let Some(examples) = v["error_examples"].as_array() {
        for e in examples {
            eprintln!("  error: {}", e.as_str().unwrap_or("?"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, String> {
        parse(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn command_lines() {
        let a = args("load --url http://127.0.0.1:1/mcp --mode session --clients 1,8").unwrap();
        assert_eq!(a.mode, Mode::Session);
        assert_eq!(a.clients, [1, 8]);
        assert!(args("load --clients 0").is_err());
        assert!(args("load --mode both").is_err());
        assert!(args("load --duration 0").is_err());
        assert!(args("load --warmup -1").is_err());
        assert!(args("nope").is_err());
        assert!(args("load stray").is_err());
        assert_eq!(
            args("report a.jsonl b.jsonl").unwrap().files,
            ["a.jsonl", "b.jsonl"]
        );
    }
}

//! `everything`: the official conformance suite's fixtures (every `test_*` tool, resource,
//! template and prompt of `@modelcontextprotocol/conformance`, both protocol eras) served
//! with mcp-tokio: over stdio by default, over TCP with `--listen ADDR`, over Streamable HTTP
//! (both eras on one URL, `/mcp`) with `--http [ADDR]`.
//!
//! ```text
//! cargo run -p mcp-examples --bin everything                          # stdio
//! cargo run -p mcp-examples --bin everything -- --listen 127.0.0.1:0  # TCP, prints the address
//! cargo run -p mcp-examples --bin everything -- --http 127.0.0.1:3000  # Streamable HTTP at /mcp
//! cargo run -p mcp-examples --bin everything -- --http 127.0.0.1:3001 --instance b --key-file keys
//! ```
//!
//! Several instances that share a keys file (`--key-file`, or the `MCP_KEYS` variable)
//! accept each other's cursors and `requestState`, so a load balancer may send each
//! 2026-07-28 request anywhere (`examples/cluster/`); `--instance` names the instance in an
//! `Mcp-Instance` header on every HTTP response.
//!
//! * [`fixtures`]: payloads, schemas and the fixed texts the suite checks;
//! * [`tools`]: the tool table (content, logging, progress, list-change triggers);
//! * [`input`]: the fixtures that need client input, written once for both eras
//!   (`input_required` in 2026-07-28, server-to-client requests before);
//! * [`catalog`]: resources, templates, prompts and completion.

use std::process::ExitCode;

use mcp_rs_core::{Config, LogLevel};
use mcp_rs_tokio::http::{HttpConfig, LegacySse};
use mcp_rs_tokio::{KeySource, Keys, Limits, Server, ServerInfo, Tools};

mod auth;
mod catalog;
use mcp_examples::fixtures;
mod input;
mod skills;
mod tasks;
mod tools;

const USAGE: &str = "\
usage: everything [--listen ADDR | --http [ADDR]] [--page-size N] [--key-file PATH]
                  [--instance NAME]

Serves the MCP conformance suite's fixtures over stdio (default), TCP or HTTP.

  --listen ADDR     serve newline-delimited JSON-RPC over TCP on ADDR instead of stdio
  --http [ADDR]     serve Streamable HTTP at http://ADDR/mcp (default 127.0.0.1:3000)
  --legacy-sse      HTTP: also serve the legacy HTTP+SSE transport (2024-11-05): the
                    stream at http://ADDR/sse, messages POSTed to /messages?sessionId=ID
  --page-size N     items per list page (default 50: every list fits one page, which the
                    conformance suite expects; smaller values exercise pagination)
  --key-file PATH   the secret keys for cursors and requestState (`current = <32 hex
                    digits>`, optionally `previous = ...` and `previous_not_after = <RFC
                    3339 or UNIX seconds>`); reloaded on SIGHUP and when the file changes.
                    Without it, the MCP_KEYS variable (the same entries, `;`-separated),
                    else a random key: instances that share keys accept each other's
                    cursors and requestState
  --instance NAME   names this instance: an `Mcp-Instance: NAME` header on every HTTP
                    response, and in the log
  --http-write-timeout-ms N
                    HTTP: close a connection whose write made no progress for N ms
                    (default 30000)
  --sse-keep-alive-ms N
                    HTTP: a `: keep-alive` comment on SSE streams quiet for N ms
                    (default 15000; 0: none)
  --max-sessions N  HTTP: legacy sessions kept at once (default 1024)
  --max-sessions-per-peer N
                    HTTP: legacy sessions one client (IP address, or principal with
                    authorization) may hold (default 256)
  --http-memory-budget BYTES
                    HTTP: bytes buffered at once for request bodies, queued frames and
                    backlogs, over every client (default 268435456); beyond it, 503

Port 0 picks a free port; `listening on <addr>` goes to stderr once bound.
  -h, --help        this text

Logs go to stderr (RUST_LOG=debug for more).";

/// The environment variable read for keys when `--key-file` is not given.
const KEYS_VAR: &str = "MCP_KEYS";

/// How often the keys file is looked at for changes.
const KEY_FILE_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// The fixture server.
fn server(page_size: u16, keys: Keys) -> Server {
    let info = ServerInfo {
        name: "mcp-rs-everything".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        title: Some("mcp-rs everything".into()),
        description: Some("The MCP conformance suite's fixtures".into()),
        ..ServerInfo::default()
    };
    let task_key = keys.current;
    let mut config = Config::new(keys.current);
    keys.apply(&mut config);
    // Until a legacy client sets a level, every log message is sent.
    config.log_level = LogLevel::Debug;
    // 2026-07-28 caching hints of lists, reads and discovery.
    config.list_ttl_ms = 300_000;
    config.page_size = page_size;
    let tools = Tools::new();
    let cell = tools::ServerCell::default();
    tools::register(&tools, &cell);
    let tasks = tasks::register(&tools, task_key);
    let server = Server::with(info, config, Limits::default(), tools)
        .provide(catalog::Catalog)
        .tasks(tasks)
        .async_prompts(catalog::render);
    let _ = cell.set(server.clone());
    server
}

/// HTTP limits set on the command line (the tests shorten them).
#[derive(Default)]
struct Tuning {
    write_timeout_ms: Option<u64>,
    sse_keep_alive_ms: Option<u64>,
    max_sessions: Option<usize>,
    max_sessions_per_peer: Option<usize>,
    memory_budget: Option<usize>,
}

impl Tuning {
    const FLAGS: [&'static str; 5] = [
        "--http-write-timeout-ms",
        "--sse-keep-alive-ms",
        "--max-sessions",
        "--max-sessions-per-peer",
        "--http-memory-budget",
    ];

    fn takes(flag: &str) -> bool {
        Self::FLAGS.contains(&flag)
    }

    fn set(&mut self, flag: &str, value: Option<String>) -> Result<(), String> {
        let n = value
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("{flag} needs a number"))?;
        match flag {
            "--http-write-timeout-ms" if n > 0 => self.write_timeout_ms = Some(n),
            "--http-write-timeout-ms" => return Err(format!("{flag} needs a positive number")),
            "--sse-keep-alive-ms" => self.sse_keep_alive_ms = Some(n),
            _ => {
                let n = usize::try_from(n).map_err(|_| format!("{flag}: too large"))?;
                if flag == "--max-sessions" {
                    self.max_sessions = Some(n);
                } else if flag == "--http-memory-budget" {
                    self.memory_budget = Some(n);
                } else {
                    self.max_sessions_per_peer = Some(n);
                }
            }
        }
        Ok(())
    }

    fn apply(&self, config: &mut HttpConfig) {
        use std::time::Duration;
        if let Some(ms) = self.write_timeout_ms {
            config.write_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.sse_keep_alive_ms {
            config.sse_keep_alive = (ms > 0).then(|| Duration::from_millis(ms));
        }
        if let Some(n) = self.max_sessions {
            config.max_sessions = n;
        }
        if let Some(n) = self.max_sessions_per_peer {
            config.max_sessions_per_peer = n;
        }
        if let Some(n) = self.memory_budget {
            config.memory_budget = n;
        }
    }
}

/// Where to serve besides stdio.
enum Transport {
    Tcp(String),
    Http(String),
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut listen: Option<Transport> = None;
    let mut page_size = 50u16;
    let mut auth = auth::Flags::default();
    let mut key_file: Option<std::path::PathBuf> = None;
    let mut instance: Option<String> = None;
    let mut tuning = Tuning::default();
    let mut legacy_sse = false;
    let mut args = std::env::args().skip(1).peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => match args.next() {
                Some(addr) => listen = Some(Transport::Tcp(addr)),
                None => {
                    eprintln!("everything: --listen needs an address\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--http" => {
                let addr = args.next_if(|a| !a.starts_with('-'));
                listen = Some(Transport::Http(
                    addr.unwrap_or_else(|| "127.0.0.1:3000".into()),
                ));
            }
            "--page-size" => match args.next().and_then(|n| n.parse().ok()).filter(|n| *n > 0) {
                Some(n) => page_size = n,
                None => {
                    eprintln!("everything: --page-size needs a number from 1 to 65535\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            flag if auth::Flags::takes(flag) => {
                if let Err(e) = auth.set(flag, args.next()) {
                    eprintln!("everything: {e}\n\n{USAGE}\n\n{}", auth::USAGE);
                    return ExitCode::from(2);
                }
            }
            "--key-file" => match args.next() {
                Some(path) => key_file = Some(path.into()),
                None => {
                    eprintln!("everything: --key-file needs a path\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--instance" => match args.next() {
                Some(name)
                    if !name.is_empty()
                        && name.len() <= 64
                        && name.bytes().all(|b| b.is_ascii_graphic()) =>
                {
                    instance = Some(name)
                }
                _ => {
                    eprintln!(
                        "everything: --instance needs a name of 1 to 64 visible ASCII characters\n\n{USAGE}"
                    );
                    return ExitCode::from(2);
                }
            },
            flag if Tuning::takes(flag) => {
                if let Err(e) = tuning.set(flag, args.next()) {
                    eprintln!("everything: {e}\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            }
            "--legacy-sse" => legacy_sse = true,
            "-h" | "--help" => {
                eprintln!("{USAGE}\n\n{}", auth::USAGE);
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("everything: unknown argument {other:?}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if let Err(e) = auth.check(matches!(listen, Some(Transport::Http(_)))) {
        eprintln!("everything: {e}\n\n{}", auth::USAGE);
        return ExitCode::from(2);
    }
    mcp_examples::init_logging();
    let source = match key_file {
        Some(path) => Some(KeySource::File(path)),
        None => std::env::var_os(KEYS_VAR).map(|_| KeySource::Env(KEYS_VAR.into())),
    };
    // Bad keys stop the server here, with the source and line at fault.
    let keys = match &source {
        Some(source) => match source.load() {
            Ok(keys) => keys,
            Err(e) => {
                eprintln!("everything: {e}");
                return ExitCode::from(2);
            }
        },
        None => Keys::random(),
    };
    let server = server(page_size, keys);
    auth.register(server.tools());
    if let Some(source @ KeySource::File(_)) = source {
        server.reload_keys(source, Some(KEY_FILE_POLL));
    }
    let mut response_headers = HttpConfig::default().response_headers;
    if let Some(name) = &instance {
        // (Checked above: visible ASCII is a valid header value.)
        if let Ok(value) = name.parse() {
            response_headers.insert("mcp-instance", value);
        }
    }
    // SIGTERM and SIGINT stop every transport gracefully (exit status 0): no new
    // connections, open streams get their closing results, every connection is closed
    // within the bounds of `Limits::close_timeout` and `Limits::drain_timeout`. Installed
    // before the address is printed, so a signal sent as soon as the server announces itself
    // stops it gracefully instead of killing it.
    let signal = match mcp_examples::stop_signal() {
        Ok(signal) => signal,
        Err(e) => {
            eprintln!("everything: cannot handle SIGINT/SIGTERM: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stopper = server.shutdown_handle();
    tokio::spawn(async move {
        signal.await;
        stopper.shutdown();
    });
    let served = match listen {
        None => server.serve_stdio().await,
        Some(transport) => {
            let addr = match &transport {
                Transport::Tcp(a) | Transport::Http(a) => a.clone(),
            };
            let listener = match mcp_rs_tokio::bind_tcp(&addr).await {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("everything: cannot bind {addr}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match listener.local_addr() {
                Ok(bound) => {
                    eprintln!("listening on {bound}");
                    if let Some(name) = &instance {
                        tracing::info!(instance = %name, addr = %bound, "serving as instance {name}");
                    }
                }
                Err(e) => eprintln!("everything: {e}"),
            }
            let config = match auth.http_config(listener.local_addr().ok()) {
                Ok(mut c) => {
                    c.response_headers = response_headers;
                    tuning.apply(&mut c);
                    if legacy_sse {
                        c.legacy_sse = Some(LegacySse::default());
                    }
                    c
                }
                Err(e) => {
                    eprintln!("everything: {e}");
                    return ExitCode::from(2);
                }
            };
            match transport {
                Transport::Tcp(_) => server.serve_tcp(listener).await,
                Transport::Http(_) => server.serve_http_with(listener, config).await,
            }
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("everything: {e}");
            ExitCode::FAILURE
        }
    }
}

//! `tcp`: the calculator's tools served over TCP (and optionally a Unix socket), one MCP
//! session per connection, newline-delimited JSON-RPC.
//!
//! ```text
//! cargo run -p mcp-examples --bin tcp -- [--listen 127.0.0.1:7878] [--unix PATH] [--extra-tools N] [--page-size N]
//! ```
//!
//! Prints `listening on <addr>` (and `listening on unix:<path>`) to stderr once bound;
//! `--listen 127.0.0.1:0` picks a free port. Stops on Ctrl-C.

use std::process::ExitCode;

use mcp_examples::{calculator_server, init_logging, parse_args, Command, USAGE};

const TCP_USAGE: &str = "\
usage: tcp [--listen ADDR] [--unix PATH] [calculator options]

  --listen ADDR   TCP address to bind (default 127.0.0.1:7878; port 0 picks one)
  --unix PATH     also serve on a Unix socket at PATH (removed first if it exists)
";

#[tokio::main]
async fn main() -> ExitCode {
    let mut listen = "127.0.0.1:7878".to_string();
    let mut unix: Option<String> = None;
    let mut rest = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next().unwrap_or_default(),
            "--unix" => unix = args.next(),
            _ => rest.push(a),
        }
    }
    let options = match parse_args(rest) {
        Ok(Command::Serve(options)) => options,
        Ok(Command::Help) => {
            eprintln!("{TCP_USAGE}\n{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tcp: {e}\n\n{TCP_USAGE}");
            return ExitCode::from(2);
        }
    };
    init_logging();
    let server = calculator_server(&options);
    let listener = match tokio::net::TcpListener::bind(&listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("tcp: cannot bind {listen}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => eprintln!("listening on {addr}"),
        Err(e) => eprintln!("tcp: {e}"),
    }
    let mut tasks = tokio::task::JoinSet::new();
    #[cfg(unix)]
    if let Some(path) = unix {
        let _ = std::fs::remove_file(&path);
        match tokio::net::UnixListener::bind(&path) {
            Ok(l) => {
                eprintln!("listening on unix:{path}");
                let server = server.clone();
                tasks.spawn(async move { server.serve_unix(l).await });
            }
            Err(e) => {
                eprintln!("tcp: cannot bind unix:{path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let stopper = server.shutdown_handle();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stopper.shutdown();
        }
    });
    let tcp = server.serve_tcp(listener).await;
    while tasks.join_next().await.is_some() {}
    match tcp {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcp: {e}");
            ExitCode::FAILURE
        }
    }
}

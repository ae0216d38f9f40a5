//! `calculator`: an MCP server over stdio offering arithmetic, dice, fortune and a slow,
//! cancellable counting tool.
//!
//! ```text
//! cargo run -p mcp-examples --bin calculator -- [--extra-tools N] [--page-size N]
//! ```
//!
//! Reads newline-delimited JSON-RPC from stdin, writes replies to stdout, logs to stderr
//! (`RUST_LOG`), and exits with status 0 when stdin closes or on Ctrl-C.

use std::process::ExitCode;

use mcp_examples::{calculator_server, init_logging, parse_args, Command, USAGE};

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Serve(options)) => options,
        Ok(Command::Help) => {
            eprintln!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("calculator: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    init_logging();
    let server = calculator_server(&options);
    tracing::info!(
        tools = server.tools().len(),
        page_size = options.page_size,
        blocking = options.blocking,
        "calculator serving over stdio"
    );
    let served = if options.blocking {
        server.serve_stdio_blocking()
    } else {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt.block_on(server.serve_stdio()),
            Err(e) => Err(mcp_rs_tokio::Error::Io(e)),
        }
    };
    match served {
        Ok(()) => {
            tracing::info!("end of input, exiting");
            ExitCode::SUCCESS
        }
        Err(mcp_rs_tokio::Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            tracing::info!("the client closed stdout, exiting");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!(error = %e, "stopped");
            ExitCode::FAILURE
        }
    }
}

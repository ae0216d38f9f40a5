//! `calculator`: an MCP server over stdio offering arithmetic, dice and fortune tools.
//!
//! ```text
//! cargo run -p mcp-examples --bin calculator -- [--extra-tools N] [--page-size N]
//! ```
//!
//! Reads newline-delimited JSON-RPC from stdin, writes replies to stdout, logs to stderr,
//! and exits with status 0 when stdin is closed.

use std::io::{self, ErrorKind};
use std::process::ExitCode;

use mcp_core::ToolSet;
use mcp_examples::{
    config, parse_args, serve, server_info, time_seed, CalculatorTools, Command, USAGE,
};

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
    let mut tools = CalculatorTools::new(options.extra_tools, time_seed());
    let info = server_info();
    eprintln!(
        "calculator: {} {} serving {} tools over stdio (page size {})",
        info.name,
        info.version,
        tools.len(),
        options.page_size
    );
    match serve(
        &mut tools,
        &info,
        config(options.page_size),
        io::stdin().lock(),
        io::stdout().lock(),
    ) {
        Ok(()) => {
            eprintln!("calculator: end of input, exiting");
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            eprintln!("calculator: the client closed stdout, exiting");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("calculator: I/O error: {e}");
            ExitCode::FAILURE
        }
    }
}

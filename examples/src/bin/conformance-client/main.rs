//! `conformance-client`: the client under test of the official conformance suite's client
//! leg. The suite runs `conformance-client <server-url>` with the scenario in
//! `MCP_CONFORMANCE_SCENARIO`, the revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`
//! (`2025-11-25`: the `initialize` handshake; `2026-07-28`: stateless requests) and, for
//! some scenarios, JSON in `MCP_CONFORMANCE_CONTEXT`. The URL is the last argument.
//!
//! Every scenario ends within [`DEADLINE`] (the suite waits 30 s); the exit status is 0
//! when the scenario's flow ran to its end.

// `auth.rs` (the OAuth scenarios) is written by the OAuth work; its signature is fixed.
#[allow(unused_variables, unreachable_pub, missing_docs)]
mod auth;
mod scenarios;

use std::process::ExitCode;
use std::time::Duration;

/// How long one scenario may take.
const DEADLINE: Duration = Duration::from_secs(20);

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .init();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server-url>");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                eprintln!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}");
                return ExitCode::FAILURE;
            }
        },
        Err(_) => None,
    };
    let run = async {
        if scenario.starts_with("auth/") {
            auth::run(&url, &scenario, context.as_ref()).await
        } else {
            scenarios::run(&url, &scenario, &version, context.as_ref()).await
        }
    };
    match tokio::time::timeout(DEADLINE, run).await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("scenario {scenario}: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("scenario {scenario}: did not finish within {DEADLINE:?}");
            ExitCode::FAILURE
        }
    }
}

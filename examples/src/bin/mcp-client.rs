//! `mcp-client`: list and call the tools of any MCP server.
//!
//! ```text
//! mcp-client [--http URL | --tcp ADDR | -- COMMAND ARGS...] [tools | call NAME JSON_ARGS]
//! ```
//!
//! `tools` (the default) prints every tool with its description; `call` prints the text of
//! the result (its structured content as JSON if it has no text) and exits with 1 if the
//! tool reported an error. `--modern` speaks 2026-07-28 (`server/discover`); the default is
//! the `initialize` handshake.

use std::process::ExitCode;

use mcp_rs_tokio::client::{Client, ClientOptions, Era};
use serde_json::Value;

/// Where the server is.
enum Target {
    Http(String),
    Tcp(String),
    Spawn(Vec<String>),
}

/// What to do there.
enum Action {
    Tools,
    Call(String, Value),
}

const USAGE: &str = "usage: mcp-client [--modern] [--http URL | --tcp ADDR | -- COMMAND ARGS...] [tools | call NAME JSON_ARGS]";

fn parse(mut args: Vec<String>) -> Result<(Target, Action, Era), String> {
    let mut era = Era::legacy();
    let mut target = None;
    let mut rest = Vec::new();
    let mut it = std::mem::take(&mut args).into_iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--modern" => era = Era::Modern,
            "--http" => target = Some(Target::Http(it.next().ok_or(USAGE)?)),
            "--tcp" => target = Some(Target::Tcp(it.next().ok_or(USAGE)?)),
            "--" => {
                let command: Vec<String> = it.by_ref().collect();
                if command.is_empty() {
                    return Err(USAGE.into());
                }
                target = Some(Target::Spawn(command));
            }
            _ => rest.push(arg),
        }
    }
    let target = target.ok_or(USAGE)?;
    let action = match rest
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["tools"] => Action::Tools,
        ["call", name] => Action::Call((*name).to_owned(), Value::Null),
        ["call", name, json] => {
            let args = serde_json::from_str(json).map_err(|e| format!("JSON_ARGS: {e}"))?;
            Action::Call((*name).to_owned(), args)
        }
        _ => return Err(USAGE.into()),
    };
    Ok((target, action, era))
}

async fn connect(target: Target, options: ClientOptions) -> Result<Client, String> {
    let client = match target {
        Target::Http(url) => Client::connect_http_with(&url, options).await,
        Target::Tcp(addr) => Client::connect_tcp_with(addr, options).await,
        Target::Spawn(command) => {
            let mut cmd = tokio::process::Command::new(&command[0]);
            cmd.args(&command[1..]);
            Client::spawn_with(cmd, options).await
        }
    };
    client.map_err(|e| format!("connecting: {e}"))
}

async fn run(args: Vec<String>) -> Result<bool, String> {
    let (target, action, era) = parse(args)?;
    let client = connect(target, ClientOptions::with_era(era)).await?;
    let ok = match action {
        Action::Tools => {
            for tool in client.list_tools().await.map_err(|e| e.to_string())? {
                let description = tool.description.unwrap_or_default();
                println!(
                    "{}\t{}",
                    tool.name,
                    description.lines().next().unwrap_or("")
                );
            }
            true
        }
        Action::Call(name, arguments) => {
            let result = client
                .call_tool(&name, arguments)
                .await
                .map_err(|e| e.to_string())?;
            let texts: Vec<&str> = result.texts().collect();
            if texts.is_empty() {
                if let Some(structured) = &result.structured_content {
                    println!("{structured}");
                }
            }
            for text in texts {
                println!("{text}");
            }
            !result.is_error
        }
    };
    let _ = client.close().await;
    Ok(ok)
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("mcp-client: {e}");
            ExitCode::from(2)
        }
    }
}

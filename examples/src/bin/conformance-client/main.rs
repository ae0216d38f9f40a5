//! A minimal conformance client: `MCP_CONFORMANCE_SCENARIO` picks the scenario, the server
//! URL is the last argument; `auth/*` scenarios run in [`auth`].

mod auth;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::stderr)
        .init();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Option<serde_json::Value> = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok());
    let Some(url) = std::env::args().skip(1).next_back() else {
        eprintln!("usage: conformance-client <server-url>");
        std::process::exit(2);
    };
    let result = if scenario.starts_with("auth/") {
        auth::run(&url, &scenario, context.as_ref()).await
    } else {
        Err(format!("scenario {scenario:?} is not handled here"))
    };
    if let Err(e) = result {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

//! The non-OAuth scenarios. Most share one flow ([`exercise`]): connect in the scenario's
//! era with handlers for sampling, elicitation and roots, list the tools and call each
//! with arguments made from its input schema; a few add to it.
//!
//! | scenario | what it adds |
//! |---|---|
//! | `initialize` | nothing is called: the handshake is the test |
//! | `http-custom-headers` | calls exactly the `toolCalls` of the context |
//! | `http-standard-headers` | also lists and reads resources, lists and gets prompts |
//! | `json-schema-2020-12-preservation` | echoes a tool's `inputSchema` through `json_schema_echo` |
//! | `json-schema-ref-no-deref` | lists the tools only (a `$ref` is never fetched) |
//! | `sep-2640-client-no-prefetch` | lists the skills only (no file is read before a skill is loaded) |
//! | `sep-2640-client-verify-{digest,size,frontmatter}` | lists the skills and loads each: SKILL.md is read and verified, and a skill that fails is not loaded (none of its other files is read) |

use mcp_rs_tokio::client::{Client, ClientError, ClientOptions, Era, Root, Tool};
use serde_json::{json, Map, Value};

/// Runs `scenario` against `url` in revision `version`.
pub(crate) async fn run(
    url: &str,
    scenario: &str,
    version: &str,
    context: Option<&Value>,
) -> Result<(), String> {
    let era = match version {
        "2026-07-28" => Era::Modern,
        _ => Era::legacy(),
    };
    let options = ClientOptions::with_era(era)
        .on_elicitation(|_params| async {
            // The user accepts without filling anything in: the client fills in the
            // requested schema's defaults (SEP-1034).
            Ok(json!({"action": "accept", "content": {}}))
        })
        .on_sampling(|_params| async {
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": "ok"},
                "model": "conformance-client"}),
            )
        })
        .with_roots(vec![Root::new("file:///tmp", "tmp")]);
    let client = Client::connect_http_with(url, options)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let outcome = exercise(&client, scenario, context).await;
    let _ = client.close().await;
    outcome
}

async fn exercise(client: &Client, scenario: &str, context: Option<&Value>) -> Result<(), String> {
    if scenario == "initialize" {
        return Ok(());
    }
    if let Some(mode) = scenario.strip_prefix("sep-2640-client-") {
        return skills(client, mode).await;
    }
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    match scenario {
        "json-schema-ref-no-deref" => return Ok(()),
        "json-schema-2020-12-preservation" => return echo_schema(client, &tools).await,
        "http-custom-headers" => return context_calls(client, context).await,
        _ => {}
    }
    for tool in &tools {
        let arguments = sample_arguments(&tool.input_schema);
        if let Err(e) = client.call_tool(&tool.name, arguments).await {
            eprintln!("tools/call {}: {e}", tool.name);
        }
    }
    if scenario == "http-standard-headers" {
        for resource in client.list_resources().await.unwrap_or_default() {
            let _ = client.read_resource(&resource.uri).await;
        }
        for prompt in client.list_prompts().await.unwrap_or_default() {
            let _ = client.get_prompt(&prompt.name, Value::Null).await;
        }
    }
    Ok(())
}

/// The skills scenarios: list the skills; unless `mode` is `no-prefetch`, load each one
/// as a host would when it needs it, and use (read) its other files only once SKILL.md
/// verified.
async fn skills(client: &Client, mode: &str) -> Result<(), String> {
    let skills = client
        .list_skills()
        .await
        .map_err(|e| format!("skills/list: {e}"))?;
    if mode == "no-prefetch" {
        return Ok(());
    }
    for entry in &skills {
        let loaded = match client.load_skill_entry(entry).await {
            Ok(loaded) => loaded,
            Err(e @ ClientError::Unverified { .. }) => {
                // The expected outcome for a tampered skill: it is not loaded.
                eprintln!("skill {} not loaded: {e}", entry.uri);
                continue;
            }
            Err(e) => return Err(format!("loading {}: {e}", entry.uri)),
        };
        for file in loaded.entry.files().iter().filter(|f| f.uri != entry.uri) {
            client
                .read_skill_file(&loaded, &file.uri)
                .await
                .map_err(|e| format!("{}: {e}", file.uri))?;
        }
    }
    Ok(())
}

/// Calls `json_schema_echo` with the `inputSchema` of every other tool, verbatim.
async fn echo_schema(client: &Client, tools: &[Tool]) -> Result<(), String> {
    for tool in tools.iter().filter(|t| t.name != "json_schema_echo") {
        let arguments = json!({"schema": tool.input_schema});
        client
            .call_tool("json_schema_echo", arguments)
            .await
            .map_err(|e| format!("json_schema_echo: {e}"))?;
    }
    Ok(())
}

/// The `toolCalls` of the context, in order.
async fn context_calls(client: &Client, context: Option<&Value>) -> Result<(), String> {
    let calls = context
        .and_then(|c| c.get("toolCalls"))
        .and_then(Value::as_array)
        .ok_or("the context has no toolCalls")?;
    for call in calls {
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
        client
            .call_tool(name, arguments)
            .await
            .map_err(|e| format!("tools/call {name}: {e}"))?;
    }
    Ok(())
}

/// Arguments for a tool: a value of the right type for every required property.
fn sample_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = properties.and_then(|p| p.get(name));
        let sample = match property.and_then(|p| p.get("type")).and_then(Value::as_str) {
            Some("integer") => json!(1),
            Some("number") => json!(2.5),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            Some("null") => Value::Null,
            _ => json!("test"),
        };
        arguments.insert(name.to_owned(), sample);
    }
    Value::Object(arguments)
}

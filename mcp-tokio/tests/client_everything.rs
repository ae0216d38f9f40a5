//! The typed API beyond tools, against the `everything` example server over stdio:
//! resources, templates, prompts, completion, subscriptions and the log level.

#![cfg(feature = "client")]

mod common;

use mcp_rs_tokio::client::{Client, ClientOptions, CompletionRef, Era, LogLevel};
use serde_json::{json, Value};
use tokio::process::Command;

use common::example_bin;

async fn everything(era: Era) -> Client {
    let mut command = Command::new(example_bin("everything"));
    command.stderr(std::process::Stdio::null());
    Client::spawn_with(command, ClientOptions::with_era(era))
        .await
        .unwrap()
}

async fn check_catalog(client: &Client) {
    let resources = client.list_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"test://static-text"), "{uris:?}");
    let text = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(text.contents[0]["uri"], "test://static-text");
    assert!(text.contents[0]["text"].is_string());
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "test://template/{id}/data");
    let prompts = client.list_prompts().await.unwrap();
    let with_args = prompts
        .iter()
        .find(|p| p.name == "test_prompt_with_arguments")
        .expect("the prompt with arguments");
    assert!(!with_args.arguments.is_empty());
    let got = client
        .get_prompt(
            "test_prompt_with_arguments",
            json!({"arg1": "a", "arg2": "b"}),
        )
        .await
        .unwrap();
    assert!(!got.messages.is_empty());
    let reference = CompletionRef::Prompt("test_prompt_with_arguments".into());
    let completion = client
        .complete(reference, "arg1", "par", Value::Null)
        .await
        .unwrap();
    assert!(completion.values.iter().all(|v| v.starts_with("par")));
    assert!(!completion.values.is_empty());
    let ids = client
        .complete(
            CompletionRef::Resource("test://template/{id}/data".into()),
            "id",
            "",
            Value::Null,
        )
        .await
        .unwrap();
    assert!(ids.values.contains(&"123".to_owned()), "{ids:?}");
}

#[tokio::test]
async fn legacy_catalog_subscriptions_and_log_level() {
    let client = everything(Era::legacy()).await;
    check_catalog(&client).await;
    client.subscribe("test://watched-resource").await.unwrap();
    client.unsubscribe("test://watched-resource").await.unwrap();
    client.set_log_level(LogLevel::Warning).await.unwrap();
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

#[tokio::test]
async fn modern_catalog() {
    let client = everything(Era::Modern).await;
    assert!(client.is_modern());
    check_catalog(&client).await;
    // Legacy-only requests are refused before anything is sent.
    let err = client
        .subscribe("test://watched-resource")
        .await
        .unwrap_err();
    assert!(
        matches!(err, mcp_rs_tokio::client::ClientError::Refused(_)),
        "{err:?}"
    );
    client.close().await.unwrap();
}

/// Handlers that answer every kind of input request.
fn with_handlers(era: Era) -> ClientOptions {
    ClientOptions::with_era(era)
        .on_elicitation(|params| async move {
            let fields = params["requestedSchema"]["properties"].clone();
            let mut content = serde_json::Map::new();
            for (name, schema) in fields.as_object().into_iter().flatten() {
                let value = match schema["type"].as_str() {
                    Some("boolean") => json!(true),
                    _ => json!("Ann"),
                };
                content.insert(name.clone(), value);
            }
            Ok(json!({"action": "accept", "content": content}))
        })
        .on_sampling(|_| async {
            Ok(json!({"role": "assistant", "model": "m",
                "content": {"type": "text", "text": "Paris"}}))
        })
        .with_roots(vec![mcp_rs_tokio::client::Root::new(
            "file:///work",
            "work",
        )])
}

#[tokio::test]
async fn input_required_tools_are_answered_from_the_handlers() {
    let mut command = Command::new(example_bin("everything"));
    command.stderr(std::process::Stdio::null());
    let client = Client::spawn_with(command, with_handlers(Era::Modern))
        .await
        .unwrap();
    let expectations = [
        ("test_input_required_result_elicitation", "Hello, Ann!"),
        (
            "test_input_required_result_sampling",
            "Sampling result: Paris",
        ),
        (
            "test_input_required_result_list_roots",
            "Found 1 root(s): file:///work",
        ),
        (
            "test_input_required_result_request_state",
            "state-ok: requestState validated",
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Name: Ann; Greeting: Paris; Roots: 1",
        ),
    ];
    for (tool, expected) in expectations {
        let result = client.call_tool(tool, json!({})).await.unwrap();
        assert_eq!(result.text(), expected, "{tool}");
    }
    let multi = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await
        .unwrap();
    assert!(multi.text().contains("Ann"), "{multi:?}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn legacy_server_requests_are_answered_from_the_handlers() {
    let mut command = Command::new(example_bin("everything"));
    command.stderr(std::process::Stdio::null());
    let client = Client::spawn_with(command, with_handlers(Era::legacy()))
        .await
        .unwrap();
    let result = client
        .call_tool("test_input_required_result_elicitation", json!({}))
        .await
        .unwrap();
    assert_eq!(result.text(), "Hello, Ann!");
    let result = client
        .call_tool("test_sampling", json!({"prompt": "capital?"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "LLM response: Paris");
    client.close().await.unwrap();
}

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

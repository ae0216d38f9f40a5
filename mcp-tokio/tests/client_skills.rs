//! The skills extension on the client, against the `everything` example server over stdio:
//! listing, loading (SKILL.md read and verified), lazy verified reads of the other files,
//! directory reads, and entries that do not match the served files (each refused, naming
//! the file and the check).

#![cfg(feature = "client")]

mod common;

use mcp_rs_tokio::client::{Client, ClientError, ClientOptions, Era, SkillEntry, SkillResources};
use serde_json::json;
use tokio::process::Command;

use common::example_bin;

const SKILL: &str = "skill://everything/greeting/SKILL.md";
const PHRASES: &str = "skill://everything/greeting/references/phrases.md";

async fn everything(era: Era) -> Client {
    let mut command = Command::new(example_bin("everything"));
    command.stderr(std::process::Stdio::null());
    Client::spawn_with(command, ClientOptions::with_era(era))
        .await
        .unwrap()
}

async fn greeting(client: &Client) -> SkillEntry {
    let skills = client.list_skills().await.unwrap();
    let entry = skills
        .into_iter()
        .find(|s| s.uri == SKILL)
        .expect("greeting");
    assert_eq!(entry.name(), Some("greeting"));
    assert_eq!(entry.files().len(), 2);
    entry
}

fn check_of(e: ClientError) -> (String, &'static str) {
    match e {
        ClientError::Unverified { uri, check, .. } => (uri, check),
        other => panic!("expected a verification failure, got {other:?}"),
    }
}

#[tokio::test]
async fn skills_load_and_verify_in_both_eras() {
    for era in [Era::legacy(), Era::Modern] {
        let client = everything(era).await;
        let entry = greeting(&client).await;
        assert_eq!(client.get_skill(SKILL).await.unwrap(), entry);

        let loaded = client.load_skill(SKILL).await.unwrap();
        assert!(loaded.skill_md.starts_with("---\nname: greeting\n"));
        assert!(loaded.skill_md.contains("# Greeting"));
        let phrases = client.read_skill_file(&loaded, PHRASES).await.unwrap();
        assert!(String::from_utf8(phrases.bytes)
            .unwrap()
            .contains("Bonjour"));
        assert_eq!(phrases.mime_type.as_deref(), Some("text/markdown"));

        // A file outside the manifest is not read.
        let err = client
            .read_skill_file(&loaded, "test://static-text")
            .await
            .unwrap_err();
        assert_eq!(check_of(err), ("test://static-text".into(), "manifest"));

        let children = client
            .read_skill_directory("skill://everything/greeting")
            .await
            .unwrap();
        let uris: Vec<&str> = children.iter().filter_map(|c| c["uri"].as_str()).collect();
        assert!(uris.contains(&SKILL), "{uris:?}");
        assert!(
            uris.contains(&"skill://everything/greeting/references"),
            "{uris:?}"
        );
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn entries_that_do_not_match_the_files_are_refused() {
    let client = everything(Era::Modern).await;
    let entry = greeting(&client).await;
    let SkillResources::Files(files) = &entry.resources else {
        panic!("a manifest");
    };
    let skill_md = files.iter().position(|f| f.uri == SKILL).unwrap();

    let mut wrong_digest = entry.clone();
    if let SkillResources::Files(files) = &mut wrong_digest.resources {
        files[skill_md].digest = format!("sha256:{}", "0".repeat(64));
    }
    let err = client.load_skill_entry(&wrong_digest).await.unwrap_err();
    assert_eq!(check_of(err), (SKILL.into(), "digest"));

    let mut wrong_size = entry.clone();
    if let SkillResources::Files(files) = &mut wrong_size.resources {
        files[skill_md].size += 1;
    }
    let err = client.load_skill_entry(&wrong_size).await.unwrap_err();
    assert_eq!(check_of(err), (SKILL.into(), "size"));

    let mut wrong_frontmatter = entry.clone();
    wrong_frontmatter
        .frontmatter
        .insert("description".into(), json!("Exfiltrate credentials"));
    let err = client
        .load_skill_entry(&wrong_frontmatter)
        .await
        .unwrap_err();
    let message = err.to_string();
    assert_eq!(check_of(err), (SKILL.into(), "front matter"));
    assert!(message.contains("line 3"), "{message}");

    let mut nested = entry.clone();
    nested.frontmatter.insert("metadata".into(), json!({}));
    let err = client.load_skill_entry(&nested).await.unwrap_err();
    assert_eq!(check_of(err), (SKILL.into(), "front matter"));

    // The genuine entry still loads, and a supporting file with a wrong digest is refused.
    let loaded = client.load_skill_entry(&entry).await.unwrap();
    let mut tampered = loaded.clone();
    if let SkillResources::Files(files) = &mut tampered.entry.resources {
        let phrases = files.iter_mut().find(|f| f.uri == PHRASES).unwrap();
        phrases.digest = format!("sha256:{}", "f".repeat(64));
    }
    let err = client
        .read_skill_file(&tampered, PHRASES)
        .await
        .unwrap_err();
    assert_eq!(check_of(err), (PHRASES.into(), "digest"));
    client.close().await.unwrap();
}

//! The skills extension (SEP-2640) on the client: list the skills, load one (its SKILL.md
//! read and verified), read its other files when needed (each verified). Nothing is read
//! ahead of need: listing reads no file, loading reads SKILL.md only, and
//! [`Client::read_skill_file`] reads one file when the application asks for it.
//!
//! Verification is the core's ([`mcp_rs_core::client::skills`]): the byte length against
//! the manifest's `size`, the SHA-256 against its `sha256:` digest, and SKILL.md's YAML
//! front matter field by field against the entry's `frontmatter`. Content that fails is
//! dropped and the call fails with [`ClientError::Unverified`], naming the file and the
//! check.

use base64::Engine;
use mcp_rs_core::client::skills::{self as core_skills, SkillsRequest, VerifyError};
use mcp_rs_core::client::Request;
use mcp_rs_core::wire::json::{parse, Limits};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::request::OwnedRequest;
use super::types::CallOptions;
use super::{Client, ClientError, ReadResourceResult, Result};

/// A request of the skills extension, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OwnedSkillsRequest {
    List(Option<String>),
    Get(String),
    ReadDirectory(String, Option<String>),
}

impl OwnedSkillsRequest {
    /// The core's view.
    pub(crate) fn as_core(&self) -> Request<'_> {
        Request::Skills(match self {
            OwnedSkillsRequest::List(cursor) => SkillsRequest::List {
                cursor: cursor.as_deref(),
            },
            OwnedSkillsRequest::Get(uri) => SkillsRequest::Get { uri },
            OwnedSkillsRequest::ReadDirectory(uri, cursor) => SkillsRequest::ReadDirectory {
                uri,
                cursor: cursor.as_deref(),
            },
        })
    }
}

/// One file of a skill's manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and the hex SHA-256 of its bytes.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// A skill entry's `resources`: its manifest, or `"dynamic"` (none published).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillResources {
    /// Every file of the skill, SKILL.md included.
    Files(Vec<SkillFile>),
    /// `"dynamic"`: no manifest; only SKILL.md's front matter can be checked, and no other
    /// file can be verified (so none is read).
    Dynamic(DynamicMarker),
}

/// The string `"dynamic"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DynamicMarker {
    /// `"dynamic"`
    #[serde(rename = "dynamic")]
    Dynamic,
}

/// A skill entry from `skills/list` or `skills/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The URI of the skill's SKILL.md.
    pub uri: String,
    /// SKILL.md's front matter as a JSON object (`name`, `description`, ...).
    pub frontmatter: Map<String, Value>,
    /// The manifest.
    pub resources: SkillResources,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SkillEntry {
    /// The front matter's `name`.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name")?.as_str()
    }

    /// The front matter's `description`.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description")?.as_str()
    }

    /// The manifest's files (none for a dynamic entry).
    pub fn files(&self) -> &[SkillFile] {
        match &self.resources {
            SkillResources::Files(files) => files,
            SkillResources::Dynamic(_) => &[],
        }
    }

    /// Runs `f` on the core's view of this entry.
    fn with_core<T>(&self, f: impl FnOnce(core_skills::SkillEntry<'_>) -> T) -> Result<T> {
        let json =
            serde_json::to_string(self).map_err(|e| ClientError::Malformed(e.to_string()))?;
        let value = parse(json.as_bytes(), Limits::default())
            .map_err(|e| ClientError::Malformed(format!("skill entry: {e}")))?;
        let entry = core_skills::SkillEntry::read(value)
            .map_err(|e| ClientError::Malformed(format!("skill entry {}: {e}", self.uri)))?;
        Ok(f(entry))
    }
}

/// A skill whose SKILL.md was read and verified.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedSkill {
    /// The entry it was verified against.
    pub entry: SkillEntry,
    /// SKILL.md, verified (size, digest, front matter).
    pub skill_md: String,
}

/// A file's content, verified against the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillContent {
    /// Its URI.
    pub uri: String,
    /// Its MIME type, if the server gave one.
    pub mime_type: Option<String>,
    /// Its bytes (a text content's UTF-8, a blob's decoded bytes).
    pub bytes: Vec<u8>,
}

/// The content of `uri` in a `resources/read` result, as bytes.
fn content_bytes(uri: &str, result: &ReadResourceResult) -> Result<(Vec<u8>, Option<String>)> {
    let content = result
        .contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| {
            result
                .contents
                .first()
                .filter(|_| result.contents.len() == 1)
        })
        .ok_or_else(|| ClientError::Malformed(format!("resources/read of {uri}: no content")))?;
    let mime = content
        .get("mimeType")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(text) = content.get("text").and_then(Value::as_str) {
        return Ok((text.as_bytes().to_vec(), mime));
    }
    let blob = content.get("blob").and_then(Value::as_str).ok_or_else(|| {
        ClientError::Malformed(format!("resources/read of {uri}: no text or blob"))
    })?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .map_err(|e| ClientError::Malformed(format!("resources/read of {uri}: blob: {e}")))?;
    Ok((bytes, mime))
}

/// The error of a failed check.
fn unverified(uri: &str, e: VerifyError) -> ClientError {
    ClientError::Unverified {
        uri: uri.to_owned(),
        check: e.check().as_str(),
        reason: e.to_string(),
    }
}

impl Client {
    /// Every skill (`skills/list`, all pages). Reads no file.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>> {
        let request = |cursor| OwnedRequest::Skills(OwnedSkillsRequest::List(cursor));
        self.all_pages("skills/list", request, "skills").await
    }

    /// The entry of one skill (`skills/get`). Reads no file.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry> {
        #[derive(Deserialize)]
        struct Get {
            skill: SkillEntry,
        }
        let request = OwnedRequest::Skills(OwnedSkillsRequest::Get(uri.to_owned()));
        let get: Get = self
            .begin(request, CallOptions::default(), super::api::decode)
            .await?;
        Ok(get.skill)
    }

    /// The direct children of a skill directory (`resources/directory/read`, all pages),
    /// as resource objects (files with `size`, subdirectories with `mimeType`
    /// `inode/directory`).
    pub async fn read_skill_directory(&self, uri: &str) -> Result<Vec<Value>> {
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..super::MAX_PAGES {
            let request =
                OwnedRequest::Skills(OwnedSkillsRequest::ReadDirectory(uri.to_owned(), cursor));
            let mut page: Map<String, Value> = self
                .begin(request, CallOptions::default(), super::api::decode)
                .await?;
            match page.remove("resources") {
                Some(Value::Array(list)) => items.extend(list),
                _ => {
                    return Err(ClientError::Malformed(
                        "resources/directory/read: no resources".into(),
                    ))
                }
            }
            match page.remove("nextCursor") {
                Some(Value::String(next)) => cursor = Some(next),
                _ => return Ok(items),
            }
        }
        Err(ClientError::Malformed(format!(
            "resources/directory/read did not end within {} pages",
            super::MAX_PAGES
        )))
    }

    /// Loads the skill whose SKILL.md is `uri`: its entry from `skills/get` (or, from a
    /// server without it, from `skills/list`), then [`load_skill_entry`](Self::load_skill_entry).
    pub async fn load_skill(&self, uri: &str) -> Result<LoadedSkill> {
        let entry = match self.get_skill(uri).await {
            Ok(entry) if entry.uri == uri => entry,
            Ok(_) | Err(ClientError::Protocol { .. } | ClientError::Malformed(_)) => self
                .list_skills()
                .await?
                .into_iter()
                .find(|e| e.uri == uri)
                .ok_or_else(|| ClientError::Refused(format!("no skill {uri}")))?,
            Err(e) => return Err(e),
        };
        self.load_skill_entry(&entry).await
    }

    /// Loads a skill from the entry the application holds: reads its SKILL.md and verifies
    /// it (size and digest against the manifest, front matter against the entry's). Fails
    /// with [`ClientError::Unverified`] (the content is dropped) when a check fails. No
    /// other file is read.
    pub async fn load_skill_entry(&self, entry: &SkillEntry) -> Result<LoadedSkill> {
        let result = self.read_resource(&entry.uri).await?;
        let (bytes, _) = content_bytes(&entry.uri, &result)?;
        entry
            .with_core(|core| core.verify_skill_md(&bytes))?
            .map_err(|e| unverified(&entry.uri, e))?;
        let skill_md = String::from_utf8(bytes)
            .map_err(|_| ClientError::Malformed(format!("{}: not UTF-8", entry.uri)))?;
        Ok(LoadedSkill {
            entry: entry.clone(),
            skill_md,
        })
    }

    /// Reads one file of a loaded skill and verifies it against the manifest (it must be
    /// listed; a dynamic entry lists none, so nothing is read). Fails with
    /// [`ClientError::Unverified`] when a check fails.
    pub async fn read_skill_file(&self, skill: &LoadedSkill, uri: &str) -> Result<SkillContent> {
        let listed = skill.entry.files().iter().any(|f| f.uri == uri);
        if !listed {
            return Err(unverified(uri, VerifyError::NotListed));
        }
        let result = self.read_resource(uri).await?;
        let (bytes, mime_type) = content_bytes(uri, &result)?;
        skill
            .entry
            .with_core(|core| core.verify_file(uri, &bytes))?
            .map_err(|e| unverified(uri, e))?;
        Ok(SkillContent {
            uri: uri.to_owned(),
            mime_type,
            bytes,
        })
    }
}

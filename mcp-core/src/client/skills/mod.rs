//! The skills extension (SEP-2640, `io.modelcontextprotocol/skills`) on the client side:
//! its requests ([`SkillsRequest`], sent as [`Request::Skills`](super::Request::Skills)),
//! zero-copy views of what the server answers ([`SkillsPage`], [`SkillEntry`],
//! [`EntryFile`], [`DirectoryPage`]), and the verifier of what a `resources/read` of a skill's file returned
//! ([`EntryFile::verify`], [`SkillEntry::verify_skill_md`]: size, `sha256:` digest and
//! SKILL.md's front matter, see [`frontmatter`]).
//!
//! The client fetches nothing by itself: listing gives entries, and a skill's files are
//! read only when the application loads the skill (the spec forbids retrieving them ahead
//! of need). Loading is: read SKILL.md (`resources/read` of the entry's `uri`), verify it
//! with [`SkillEntry::verify_skill_md`] and use nothing of it on an error; then read the
//! other files when needed, each verified with [`SkillEntry::verify_file`].
//!
//! ```
//! use mcp_rs_core::client::skills::{SkillEntry, VerifyError};
//! use mcp_rs_core::wire::json::{parse, Limits};
//!
//! let skill_md = "---\nname: pdf\ndescription: Fills PDF forms\n---\nBody.\n";
//! let entry = r#"{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"Fills PDF forms"},
//!   "resources":[{"uri":"skill://pdf/SKILL.md","size":53,
//!   "digest":"sha256:434cec2e3ac904e7ed76932197bb5dcc96fc701547b06506fb5c9395f94d1064"}]}"#;
//! let entry = SkillEntry::read(parse(entry.as_bytes(), Limits::default()).unwrap()).unwrap();
//! assert_eq!(entry.verify_skill_md(skill_md.as_bytes()), Ok(()));
//! // One byte changed: the digest differs, and nothing of the file may be used.
//! let tampered = skill_md.replace("Body.", "Evil!");
//! assert_eq!(entry.verify_skill_md(tampered.as_bytes()), Err(VerifyError::Digest));
//! ```

pub mod frontmatter;
mod verify;

pub use frontmatter::FrontMatterError;
pub use verify::{Check, VerifyError};

use super::events::{Response, ResultError};
use crate::wire::json::{Elements, JsonStr, Kind, RawJson};
use crate::wire::method::Method;

pub use super::requests::skills::SkillsRequest;
pub use crate::model::skills::{EXTENSION, SKILL_MD};

/// A required member of kind `kind`.
fn member<'i>(v: RawJson<'i>, key: &'static str, kind: Kind) -> Result<RawJson<'i>, ResultError> {
    let m = v.get(key).ok_or(ResultError::Missing(key))?;
    if m.kind() != kind {
        return Err(ResultError::WrongType(key));
    }
    Ok(m)
}

/// An optional string member.
fn optional_str<'i>(v: RawJson<'i>, key: &'static str) -> Result<Option<JsonStr<'i>>, ResultError> {
    match v.get(key) {
        None => Ok(None),
        Some(m) if m.is_null() => Ok(None),
        Some(m) => m.as_string().map(Some).ok_or(ResultError::WrongType(key)),
    }
}

/// Whether two JSON strings decode to the same text.
fn same(a: JsonStr<'_>, b: JsonStr<'_>) -> bool {
    a == b || a.chars().eq(b.chars())
}

/// One file of an entry's manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryFile<'i> {
    /// The file's resource URI.
    pub uri: JsonStr<'i>,
    /// Its `sha256:<hex>` digest, as sent.
    pub digest: JsonStr<'i>,
    /// Its size in bytes.
    pub size: u64,
}

impl<'i> EntryFile<'i> {
    /// Reads one manifest item (`{uri, digest, size}`).
    pub fn read(v: RawJson<'i>) -> Result<Self, ResultError> {
        Ok(EntryFile {
            uri: member(v, "uri", Kind::String)?
                .as_string()
                .ok_or(ResultError::WrongType("uri"))?,
            digest: member(v, "digest", Kind::String)?
                .as_string()
                .ok_or(ResultError::WrongType("digest"))?,
            size: member(v, "size", Kind::Number)?
                .as_u64()
                .ok_or(ResultError::WrongType("size"))?,
        })
    }
}

/// A skill entry's `resources`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryResources<'i> {
    /// The manifest (a JSON array of `{uri, digest, size}`, each item checked).
    Files(RawJson<'i>),
    /// `"dynamic"`: no manifest, so no file can be verified.
    Dynamic,
}

/// One skill entry, as `skills/list` and `skills/get` return it (borrowed from the frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkillEntry<'i> {
    /// The URI of the skill's SKILL.md.
    pub uri: JsonStr<'i>,
    /// The front matter (a JSON object).
    pub frontmatter: RawJson<'i>,
    /// The manifest, or [`EntryResources::Dynamic`].
    pub resources: EntryResources<'i>,
}

impl<'i> SkillEntry<'i> {
    /// Reads an entry object: a string `uri`, an object `frontmatter`, and `resources`
    /// either `"dynamic"` or an array of well-formed manifest items.
    pub fn read(v: RawJson<'i>) -> Result<Self, ResultError> {
        if v.kind() != Kind::Object {
            return Err(ResultError::WrongType("skill"));
        }
        let uri = member(v, "uri", Kind::String)?
            .as_string()
            .ok_or(ResultError::WrongType("uri"))?;
        let frontmatter = member(v, "frontmatter", Kind::Object)?;
        let raw = v
            .get("resources")
            .ok_or(ResultError::Missing("resources"))?;
        let resources = match raw.kind() {
            Kind::Array => {
                for item in raw.elements().into_iter().flatten() {
                    EntryFile::read(item)?;
                }
                EntryResources::Files(raw)
            }
            Kind::String if raw.as_string().is_some_and(|s| s.eq_str("dynamic")) => {
                EntryResources::Dynamic
            }
            _ => return Err(ResultError::WrongType("resources")),
        };
        Ok(SkillEntry {
            uri,
            frontmatter,
            resources,
        })
    }

    /// The front matter's `name`, if it is a string.
    pub fn name(&self) -> Option<JsonStr<'i>> {
        self.frontmatter.get("name")?.as_string()
    }

    /// The front matter's `description`, if it is a string.
    pub fn description(&self) -> Option<JsonStr<'i>> {
        self.frontmatter.get("description")?.as_string()
    }

    /// The manifest's files, in order (none for a dynamic entry).
    pub fn files(&self) -> impl Iterator<Item = EntryFile<'i>> {
        let items = match self.resources {
            EntryResources::Files(raw) => raw.elements(),
            EntryResources::Dynamic => None,
        };
        items
            .into_iter()
            .flatten()
            .filter_map(|item| EntryFile::read(item).ok())
    }

    /// The manifest's item for `uri` (its decoded text).
    pub fn file(&self, uri: &str) -> Option<EntryFile<'i>> {
        self.files().find(|f| f.uri.eq_str(uri))
    }

    /// The manifest's item for SKILL.md (the entry's own `uri`).
    pub fn skill_md(&self) -> Option<EntryFile<'i>> {
        self.files().find(|f| same(f.uri, self.uri))
    }
}

/// One page of `skills/list`.
#[derive(Clone, Copy, Debug)]
pub struct SkillsPage<'i> {
    /// The entries (a JSON array).
    pub skills: RawJson<'i>,
    /// Where the next page starts; `None` on the last page.
    pub next_cursor: Option<JsonStr<'i>>,
}

impl<'i> SkillsPage<'i> {
    /// The entries, each read with [`SkillEntry::read`].
    pub fn entries(&self) -> impl Iterator<Item = Result<SkillEntry<'i>, ResultError>> {
        self.skills
            .elements()
            .unwrap_or(Elements { rest: "" })
            .map(SkillEntry::read)
    }
}

/// One page of `resources/directory/read`.
#[derive(Clone, Copy, Debug)]
pub struct DirectoryPage<'i> {
    /// The children (a JSON array of resources: files with `size`, subdirectories with
    /// `mimeType` `inode/directory`).
    pub resources: RawJson<'i>,
    /// Where the next page starts; `None` on the last page.
    pub next_cursor: Option<JsonStr<'i>>,
}

impl<'i> Response<'i> {
    /// A `skills/list` page.
    pub fn skills_page(&self) -> Result<SkillsPage<'i>, ResultError> {
        if self.method != Method::SkillsList {
            return Err(ResultError::WrongMethod);
        }
        Ok(SkillsPage {
            skills: member(self.result, "skills", Kind::Array)?,
            next_cursor: optional_str(self.result, "nextCursor")?,
        })
    }

    /// The entry of a `skills/get` result.
    pub fn skill(&self) -> Result<SkillEntry<'i>, ResultError> {
        if self.method != Method::SkillsGet {
            return Err(ResultError::WrongMethod);
        }
        SkillEntry::read(
            self.result
                .get("skill")
                .ok_or(ResultError::Missing("skill"))?,
        )
    }

    /// A `resources/directory/read` page.
    pub fn directory(&self) -> Result<DirectoryPage<'i>, ResultError> {
        if self.method != Method::DirectoryRead {
            return Err(ResultError::WrongMethod);
        }
        Ok(DirectoryPage {
            resources: member(self.result, "resources", Kind::Array)?,
            next_cursor: optional_str(self.result, "nextCursor")?,
        })
    }
}

#[cfg(test)]
mod tests;

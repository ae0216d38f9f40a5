//! The skills extension's requests (`skills/list`, `skills/get`,
//! `resources/directory/read`): here, below [`Request`](super::Request), so that the request
//! layer names no reader of answers (those are in [`client::skills`](crate::client::skills)).

use crate::wire::json::JsonWriter;
use crate::wire::method::Method;

/// A request of the skills extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkillsRequest<'a> {
    /// `skills/list`, from `cursor` (a page's `nextCursor`).
    List {
        /// Where to continue; `None` for the first page.
        cursor: Option<&'a str>,
    },
    /// `skills/get`: the entry of the skill whose SKILL.md is `uri`.
    Get {
        /// The skill's `uri`.
        uri: &'a str,
    },
    /// `resources/directory/read`: the direct children of a skill directory.
    ReadDirectory {
        /// The directory's URI (e.g. `skill://acme/pdf`).
        uri: &'a str,
        /// Where to continue; `None` for the first page.
        cursor: Option<&'a str>,
    },
}

impl SkillsRequest<'_> {
    /// The method.
    pub fn method(&self) -> Method {
        match self {
            SkillsRequest::List { .. } => Method::SkillsList,
            SkillsRequest::Get { .. } => Method::SkillsGet,
            SkillsRequest::ReadDirectory { .. } => Method::DirectoryRead,
        }
    }

    /// Writes the params members (into an open object).
    pub(in crate::client) fn write_members(&self, w: &mut JsonWriter<'_>) {
        let (uri, cursor) = match *self {
            SkillsRequest::List { cursor } => (None, cursor),
            SkillsRequest::Get { uri } => (Some(uri), None),
            SkillsRequest::ReadDirectory { uri, cursor } => (Some(uri), cursor),
        };
        if let Some(uri) = uri {
            w.key("uri");
            w.string(uri);
        }
        if let Some(c) = cursor {
            w.key("cursor");
            w.string(c);
        }
    }
}

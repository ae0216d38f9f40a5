//! The skills extension (SEP-2640) of the fixture server: one skill, `greeting`, whose
//! files are served as resources (`skill://everything/greeting/SKILL.md`, listed with the
//! front matter's name and description, and `references/phrases.md`, unlisted), and whose
//! manifest (`sha256:` digest and size of each file) is computed once at start-up.

use std::sync::LazyLock;

use mcp_rs_core::model::resources::Resource;
use mcp_rs_core::model::skills::{Skill, SkillFile, SkillResources};
use sha2::{Digest, Sha256};

/// The skill's name: its directory's last segment and its front matter's `name`.
const NAME: &str = "greeting";
const DESCRIPTION: &str = "Greets the user in the language they write in";

/// SKILL.md's URI.
pub(crate) const SKILL_URI: &str = "skill://everything/greeting/SKILL.md";

/// SKILL.md: YAML front matter, then the instructions.
const SKILL_MD: &str = "---
name: greeting
description: Greets the user in the language they write in
metadata:
  author: mcp-rs
---
# Greeting

Answer a greeting in the user's language. Common phrases are in
[references/phrases.md](references/phrases.md).
";

/// The front matter above as a JSON object (identical in content, as the spec asks).
const FRONTMATTER: &str = r#"{"name":"greeting","description":"Greets the user in the language they write in","metadata":{"author":"mcp-rs"}}"#;

const PHRASES_MD: &str = "# Phrases

- English: Hello
- French: Bonjour
- German: Hallo
";

/// Every file: (URI, MIME type, text).
const FILES: [(&str, &str, &str); 2] = [
    (SKILL_URI, "text/markdown", SKILL_MD),
    (
        "skill://everything/greeting/references/phrases.md",
        "text/markdown",
        PHRASES_MD,
    ),
];

/// SKILL.md as a listed resource.
pub(crate) const SKILL_RESOURCE: Resource<'static> = Resource {
    description: Some(DESCRIPTION),
    mime_type: Some("text/markdown"),
    ..Resource::new(SKILL_URI, NAME)
};

/// The file a URI names: (MIME type, text).
pub(crate) fn file(uri: &str) -> Option<(&'static str, &'static str)> {
    FILES
        .iter()
        .find(|(u, _, _)| *u == uri)
        .map(|(_, mime, text)| (*mime, *text))
}

static MANIFEST: LazyLock<Vec<SkillFile<'static>>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|(uri, _, text)| {
            let hex: String = Sha256::digest(text.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            SkillFile {
                uri,
                digest: Box::leak(format!("sha256:{hex}").into_boxed_str()),
                size: text.len() as u64,
            }
        })
        .collect()
});

static SKILLS: LazyLock<[Skill<'static>; 1]> = LazyLock::new(|| {
    [Skill {
        uri: SKILL_URI,
        frontmatter: FRONTMATTER,
        resources: SkillResources::Files(MANIFEST.as_slice()),
    }]
});

/// The skill entries (a sized handle: `&'static [Skill]` is a `SkillSet`).
pub(crate) fn skills() -> &'static &'static [Skill<'static>] {
    static TABLE: LazyLock<&'static [Skill<'static>]> = LazyLock::new(|| SKILLS.as_slice());
    &TABLE
}

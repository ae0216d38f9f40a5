//! The skills extension (SEP-2640) of the fixture server: one skill, `greeting`, whose
//! files (`skills/greeting/` beside this file) are served as resources
//! (`skill://everything/greeting/SKILL.md`, listed with the front matter's name and
//! description, and `references/phrases.md`, unlisted). Its entry (front matter as JSON,
//! each file's `sha256:` digest and size) is built at compile time by `skill!`.

use mcp_rs_core::model::resources::Resource;
use mcp_rs_core::model::skills::Skill;

/// The skill's name: its directory's last segment and its front matter's `name`.
const NAME: &str = "greeting";
const DESCRIPTION: &str = "Greets the user in the language they write in";

/// SKILL.md's URI.
pub(crate) const SKILL_URI: &str = "skill://everything/greeting/SKILL.md";

/// Every file: (URI, MIME type, text).
const FILES: [(&str, &str, &str); 2] = [
    (
        SKILL_URI,
        "text/markdown",
        include_str!("skills/greeting/SKILL.md"),
    ),
    (
        "skill://everything/greeting/references/phrases.md",
        "text/markdown",
        include_str!("skills/greeting/references/phrases.md"),
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

/// The entries, computed at compile time from the files.
static SKILLS: [Skill<'static>; 1] = [mcp_rs_core::skill!(
    "src/bin/everything/skills/greeting",
    "skill://everything/greeting"
)];

/// The skill entries (a sized handle: `&'static [Skill]` is a `SkillSet`).
pub(crate) fn skills() -> &'static &'static [Skill<'static>] {
    static TABLE: &[Skill<'static>] = &SKILLS;
    &TABLE
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_entry_matches_the_served_files() {
        let entry = super::SKILLS[0];
        assert_eq!(entry.uri, super::SKILL_URI);
        assert_eq!(
            entry.frontmatter,
            r#"{"name":"greeting","description":"Greets the user in the language they write in","metadata":{"author":"mcp-rs"}}"#
        );
        let mcp_rs_core::model::skills::SkillResources::Files(files) = entry.resources else {
            panic!("a manifest");
        };
        assert_eq!(files.len(), 2);
        for f in files {
            let (_, text) = super::file(f.uri).unwrap();
            assert_eq!(f.size, text.len() as u64);
            assert!(f.digest.starts_with("sha256:") && f.digest.len() == 71);
        }
        assert_eq!(entry.validate(), Ok(()));
    }
}

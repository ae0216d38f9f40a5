//! Skills (the `io.modelcontextprotocol/skills` extension, SEP-2640): static skill
//! entries and the [`SkillSet`] provider trait.
//!
//! A skill is a directory of files served as resources (`skill://<path>/SKILL.md` and the
//! files beside it, read with `resources/read` from the server's
//! [`ResourceSet`](crate::model::resources::ResourceSet)). The extension adds three methods:
//! `skills/list` (every entry), `skills/get` (one entry by its `uri`) and, when
//! [`SkillSet::directory_read`] is on, `resources/directory/read` (the direct children of a
//! skill directory, computed from the entries' file manifests). A server that has a
//! `SkillSet` but no `ResourceSet` offers none of them: the files could not be read.
//!
//! The entry is data, not code: `frontmatter` is the SKILL.md YAML front matter rendered as
//! a JSON object by the application (it must be identical in content to the file's), and
//! each file carries its `sha256:<hex>` digest and size, computed by the application (a
//! build script, or at startup on a host).

use crate::model::common::DefinitionError;
use crate::wire::json::{JsonStr, JsonWriter};

/// The extension identifier, the key under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The MIME type of a directory child in `resources/directory/read`.
pub const DIRECTORY_MIME: &str = "inode/directory";

/// The file name that makes a directory a skill.
pub const SKILL_MD: &str = "SKILL.md";

/// One file of a skill's manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkillFile<'a> {
    /// The file's resource URI (the skill's SKILL.md or a file under its directory).
    pub uri: &'a str,
    /// `sha256:` and 64 lowercase hex digits: the SHA-256 of the file's raw bytes.
    pub digest: &'a str,
    /// The file's length in bytes (the bytes the digest covers).
    pub size: u64,
}

/// A skill entry's `resources`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkillResources<'a> {
    /// The complete manifest, SKILL.md included (each file once).
    Files(&'a [SkillFile<'a>]),
    /// `"dynamic"`: the server publishes no manifest.
    Dynamic,
}

/// One skill entry, as `skills/list` and `skills/get` send it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skill<'a> {
    /// The full resource URI of the skill's SKILL.md, e.g. `skill://acme/pdf/SKILL.md`.
    pub uri: &'a str,
    /// The SKILL.md front matter as a JSON object (raw JSON, at least `name` and
    /// `description`).
    pub frontmatter: &'a str,
    /// The files, or [`SkillResources::Dynamic`].
    pub resources: SkillResources<'a>,
}

/// Whether `d` is `sha256:` followed by 64 lowercase hex digits.
fn digest_ok(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

impl<'a> Skill<'a> {
    /// The skill's directory URI: `uri` without `/SKILL.md` (`None` if it does not end so).
    pub fn directory(&self) -> Option<&'a str> {
        let dir = self.uri.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
        (!dir.is_empty()).then_some(dir)
    }

    /// Checks the entry: a `uri` ending in `/SKILL.md`, a JSON-object `frontmatter` and a
    /// manifest of `sha256:` digests whose URIs are the SKILL.md or under its directory.
    pub fn validate(&self) -> Result<(), DefinitionError> {
        let dir = self.directory().ok_or(DefinitionError::Name)?;
        crate::model::common::check_meta(Some(self.frontmatter))?;
        if let SkillResources::Files(files) = self.resources {
            for f in files {
                let inside = f
                    .uri
                    .strip_prefix(dir)
                    .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'));
                if !inside || !digest_ok(f.digest) {
                    return Err(DefinitionError::Name);
                }
            }
        }
        Ok(())
    }

    /// Writes the skill entry object.
    pub fn write(&self, w: &mut JsonWriter<'_>) {
        w.begin_object();
        w.key("uri");
        w.string(self.uri);
        w.key("frontmatter");
        w.raw_value(self.frontmatter);
        w.key("resources");
        match self.resources {
            SkillResources::Dynamic => w.string("dynamic"),
            SkillResources::Files(files) => {
                w.begin_array();
                for f in files {
                    w.begin_object();
                    w.key("uri");
                    w.string(f.uri);
                    w.key("digest");
                    w.string(f.digest);
                    w.key("size");
                    w.u64(f.size);
                    w.end_object();
                }
                w.end_array();
            }
        }
        w.end_object();
    }
}

/// The skills a server offers, in a stable order.
pub trait SkillSet {
    /// Number of skills.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The skill at `index`.
    fn get(&self, index: usize) -> Option<Skill<'_>>;
    /// Whether `resources/directory/read` is offered (declared as `directoryRead: true`).
    fn directory_read(&self) -> bool {
        true
    }
    /// The index of the skill whose `uri` is `uri`.
    fn find(&self, uri: JsonStr<'_>) -> Option<usize> {
        (0..self.len()).find(|&i| self.get(i).is_some_and(|s| uri.eq_str(s.uri)))
    }
}

/// Static skill entries.
impl SkillSet for [Skill<'_>] {
    fn len(&self) -> usize {
        <[Skill<'_>]>::len(self)
    }
    fn get(&self, index: usize) -> Option<Skill<'_>> {
        <[Skill<'_>]>::get(self, index).copied()
    }
}

/// A borrowed table of static skill entries (sized, so it coerces to `&dyn SkillSet`).
impl SkillSet for &[Skill<'_>] {
    fn len(&self) -> usize {
        <[Skill<'_>]>::len(self)
    }
    fn get(&self, index: usize) -> Option<Skill<'_>> {
        <[Skill<'_>]>::get(self, index).copied()
    }
}

/// One direct child of a directory, as found in the skills' manifests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Child<'a> {
    /// The child's URI (for a subdirectory, the directory's URI without a trailing `/`).
    pub uri: &'a str,
    /// Its last path segment.
    pub name: &'a str,
    /// Size in bytes (files only).
    pub size: Option<u64>,
}

/// The direct child that file `uri` stands for under directory `dir`, if it is under it:
/// the file itself, or the subdirectory it is in.
fn child_of<'a>(dir: &str, uri: &'a str) -> Option<(Child<'a>, bool)> {
    let rest = uri.strip_prefix(dir)?.strip_prefix('/')?;
    if rest.is_empty() {
        return None;
    }
    match rest.find('/') {
        None => Some((
            Child {
                uri,
                name: rest,
                size: None,
            },
            false,
        )),
        Some(0) => None,
        Some(n) => Some((
            Child {
                uri: &uri[..uri.len() - rest.len() + n],
                name: &rest[..n],
                size: None,
            },
            true,
        )),
    }
}

/// Every file of every manifest, in order: (skill index, file index).
fn files<'s>(skills: &'s dyn SkillSet) -> impl Iterator<Item = SkillFile<'s>> + 's {
    (0..skills.len()).flat_map(move |i| {
        let files = match skills.get(i).map(|s| s.resources) {
            Some(SkillResources::Files(f)) => f,
            _ => &[],
        };
        files.iter().copied()
    })
}

/// Calls `each` with every direct child of directory `dir` (subdirectories once, marked
/// `true`), in manifest order; returns whether `dir` is a directory the skills serve.
pub(crate) fn for_each_child<'s>(
    skills: &'s dyn SkillSet,
    dir: &str,
    mut each: impl FnMut(Child<'s>, bool),
) -> bool {
    let dir = dir.strip_suffix('/').unwrap_or(dir);
    let mut any = false;
    for (n, f) in files(skills).enumerate() {
        let Some((mut child, is_dir)) = child_of(dir, f.uri) else {
            continue;
        };
        any = true;
        if is_dir {
            // A subdirectory once: skip it when an earlier file stood for it already.
            let seen = files(skills)
                .take(n)
                .any(|g| child_of(dir, g.uri).is_some_and(|(c, d)| d && c.uri == child.uri));
            if seen {
                continue;
            }
        } else {
            child.size = Some(f.size);
        }
        each(child, is_dir);
    }
    any
}

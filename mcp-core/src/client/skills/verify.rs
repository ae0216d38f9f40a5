//! The verifier: a read's bytes against a manifest item (size first, then the `sha256:`
//! digest), and SKILL.md's front matter against the entry's.

use sha2::{Digest, Sha256};

use super::frontmatter::{self, FrontMatterError};
use super::{EntryFile, EntryResources, SkillEntry};
use crate::wire::json::JsonStr;

/// Which check failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The file is in the entry's manifest.
    Listed,
    /// The byte length equals the manifest's `size`.
    Size,
    /// The SHA-256 equals the manifest's `digest`.
    Digest,
    /// SKILL.md's front matter equals the entry's `frontmatter`.
    FrontMatter,
}

impl Check {
    /// The check's name, for messages.
    pub fn as_str(&self) -> &'static str {
        match self {
            Check::Listed => "manifest",
            Check::Size => "size",
            Check::Digest => "digest",
            Check::FrontMatter => "front matter",
        }
    }
}

/// Why a read was not verified. Content that fails must not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The file is not in the entry's manifest, or the entry is `"dynamic"` (no manifest:
    /// nothing to verify against).
    NotListed,
    /// The byte length is not the manifest's `size` (a verification failure, like a digest
    /// mismatch; the digest is not computed).
    Size {
        /// The manifest's size.
        expected: u64,
        /// The bytes read.
        actual: u64,
    },
    /// The manifest's digest is not `sha256:` and 64 hex digits (no other algorithm is
    /// known).
    UnsupportedDigest,
    /// The SHA-256 of the bytes is not the manifest's digest.
    Digest,
    /// SKILL.md's front matter is unreadable or differs from the entry's.
    FrontMatter(FrontMatterError),
}

impl VerifyError {
    /// The check that failed.
    pub fn check(&self) -> Check {
        match self {
            VerifyError::NotListed => Check::Listed,
            VerifyError::Size { .. } => Check::Size,
            VerifyError::UnsupportedDigest | VerifyError::Digest => Check::Digest,
            VerifyError::FrontMatter(_) => Check::FrontMatter,
        }
    }
}

impl core::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            VerifyError::NotListed => f.write_str("not in the skill's manifest"),
            VerifyError::Size { expected, actual } => {
                write!(
                    f,
                    "size check failed: {actual} bytes, the manifest says {expected}"
                )
            }
            VerifyError::UnsupportedDigest => {
                f.write_str("digest check failed: the manifest's digest is not sha256:<hex>")
            }
            VerifyError::Digest => {
                f.write_str("digest check failed: the SHA-256 differs from the manifest's")
            }
            VerifyError::FrontMatter(e) => write!(f, "front matter check failed: {e}"),
        }
    }
}

impl core::error::Error for VerifyError {}

impl From<FrontMatterError> for VerifyError {
    fn from(e: FrontMatterError) -> Self {
        VerifyError::FrontMatter(e)
    }
}

/// The 32 bytes of a `sha256:<64 hex digits>` digest (either case).
fn expected_digest(digest: JsonStr<'_>) -> Option<[u8; 32]> {
    let mut chars = digest.chars();
    if !"sha256:".chars().all(|c| chars.next() == Some(c)) {
        return None;
    }
    let mut out = [0u8; 32];
    for byte in &mut out {
        let hi = chars.next()?.to_digit(16)?;
        let lo = chars.next()?.to_digit(16)?;
        *byte = (hi * 16 + lo) as u8;
    }
    chars.next().is_none().then_some(out)
}

impl EntryFile<'_> {
    /// Checks `bytes` (the file's content: a text content's UTF-8 bytes, a blob's decoded
    /// bytes) against this item: the size, then the digest.
    pub fn verify(&self, bytes: &[u8]) -> Result<(), VerifyError> {
        let actual = bytes.len() as u64;
        if actual != self.size {
            return Err(VerifyError::Size {
                expected: self.size,
                actual,
            });
        }
        let expected = expected_digest(self.digest).ok_or(VerifyError::UnsupportedDigest)?;
        let hash: [u8; 32] = Sha256::digest(bytes).into();
        if hash != expected {
            return Err(VerifyError::Digest);
        }
        Ok(())
    }

    /// Checks a `resources/read` text content (the JSON string, decoded as it is hashed:
    /// nothing is copied) against this item: the size, then the digest.
    pub fn verify_text(&self, text: JsonStr<'_>) -> Result<(), VerifyError> {
        let actual = text.decoded_len() as u64;
        if actual != self.size {
            return Err(VerifyError::Size {
                expected: self.size,
                actual,
            });
        }
        let expected = expected_digest(self.digest).ok_or(VerifyError::UnsupportedDigest)?;
        let mut hasher = Sha256::new();
        if let Some(plain) = text.as_borrowed() {
            hasher.update(plain.as_bytes());
        } else {
            let mut utf8 = [0u8; 4];
            for c in text.chars() {
                hasher.update(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
        let hash: [u8; 32] = hasher.finalize().into();
        if hash != expected {
            return Err(VerifyError::Digest);
        }
        Ok(())
    }
}

impl SkillEntry<'_> {
    /// Checks a file of the skill other than SKILL.md against its manifest item: it must be
    /// listed (a dynamic entry lists nothing), of the listed size and digest.
    pub fn verify_file(&self, uri: &str, bytes: &[u8]) -> Result<(), VerifyError> {
        self.file(uri).ok_or(VerifyError::NotListed)?.verify(bytes)
    }

    /// Checks the skill's SKILL.md: its size and digest against the manifest (skipped for a
    /// dynamic entry, which has none), then its front matter against the entry's
    /// `frontmatter`, field by field ([`frontmatter`]).
    pub fn verify_skill_md(&self, bytes: &[u8]) -> Result<(), VerifyError> {
        if let EntryResources::Files(_) = self.resources {
            self.skill_md()
                .ok_or(VerifyError::NotListed)?
                .verify(bytes)?;
        }
        frontmatter::compare(bytes, self.frontmatter)?;
        Ok(())
    }
}

//! Protocol revisions, their feature table, and version negotiation.
//!
//! Every per-revision difference the core acts on is one field of [`Features`], looked up
//! from a single table, so no `if version >= ...` is scattered through the code.

use core::fmt;

/// A protocol revision this crate speaks.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// `2024-11-05`, the first stable revision (legacy era).
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, batching, tool annotations, audio.
    V2025_03_26,
    /// `2025-06-18`: structured output, resource links, titles, `_meta`; batching removed.
    V2025_06_18,
    /// `2025-11-25`: icons, tool-name guidance, the last legacy (handshake) revision.
    V2025_11_25,
    /// `2026-07-28`: the modern, stateless era (per-request `_meta`, `server/discover`).
    V2026_07_28,
}

/// What a revision has, as far as a tools server is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Features {
    /// Stateless per-request `_meta` era (no `initialize`, `ping`, `logging/setLevel`).
    pub modern: bool,
    /// JSON-RPC batches (arrays) are accepted.
    pub batching: bool,
    /// `Tool.annotations`.
    pub tool_annotations: bool,
    /// `audio` content blocks.
    pub audio: bool,
    /// `message` on progress notifications.
    pub progress_message: bool,
    /// `structuredContent` on results and `outputSchema` on tools.
    pub structured_content: bool,
    /// `resource_link` content blocks.
    pub resource_link: bool,
    /// `title` on tools and implementations, `_meta` on tools and content blocks,
    /// `lastModified` in annotations.
    pub titles_and_meta: bool,
    /// `icons`, `description`, `websiteUrl` on tools/implementations.
    pub icons: bool,
    /// `resultType` on every result, `ttlMs`/`cacheScope` on list results.
    pub result_type: bool,
    /// Error responses may omit `id` when it could not be read.
    pub error_id_optional: bool,
}

const fn features(modern: bool, rank: u8) -> Features {
    Features {
        modern,
        batching: rank == 1,
        tool_annotations: rank >= 1,
        audio: rank >= 1,
        progress_message: rank >= 1,
        structured_content: rank >= 2,
        resource_link: rank >= 2,
        titles_and_meta: rank >= 2,
        icons: rank >= 3,
        result_type: modern,
        error_id_optional: rank >= 3,
    }
}

/// The table: one row per revision, oldest first, in the order of [`ProtocolVersion::ALL`].
const TABLE: [(ProtocolVersion, &str, Features); 5] = [
    (
        ProtocolVersion::V2024_11_05,
        "2024-11-05",
        features(false, 0),
    ),
    (
        ProtocolVersion::V2025_03_26,
        "2025-03-26",
        features(false, 1),
    ),
    (
        ProtocolVersion::V2025_06_18,
        "2025-06-18",
        features(false, 2),
    ),
    (
        ProtocolVersion::V2025_11_25,
        "2025-11-25",
        features(false, 3),
    ),
    (
        ProtocolVersion::V2026_07_28,
        "2026-07-28",
        features(true, 4),
    ),
];

impl ProtocolVersion {
    /// Every supported revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    /// The newest revision negotiated through `initialize`.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;
    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    fn row(self) -> &'static (ProtocolVersion, &'static str, Features) {
        // `self as usize` indexes TABLE by construction (same order); fall back to the last
        // row rather than panic if that ever changes.
        let i = self as usize;
        TABLE.get(i).unwrap_or(&TABLE[TABLE.len() - 1])
    }

    /// The wire form, e.g. `"2025-06-18"`.
    pub fn as_str(self) -> &'static str {
        self.row().1
    }

    /// The feature row of this revision.
    pub fn features(self) -> Features {
        self.row().2
    }

    /// Whether this is the stateless (2026-07-28+) era.
    pub fn is_modern(self) -> bool {
        self.features().modern
    }

    /// Parses a wire version string; `None` if it is not one we speak.
    pub fn from_wire(s: &str) -> Option<ProtocolVersion> {
        TABLE
            .iter()
            .find(|row| super::bytes_eq(row.1.as_bytes(), s.as_bytes()))
            .map(|row| row.0)
    }

    /// Legacy negotiation: the requested revision if it is a legacy one we speak, otherwise
    /// [`LATEST_LEGACY`](Self::LATEST_LEGACY) (the client then decides whether to continue).
    pub fn negotiate_legacy(requested: Option<ProtocolVersion>) -> ProtocolVersion {
        match requested {
            Some(v) if !v.is_modern() => v,
            _ => ProtocolVersion::LATEST_LEGACY,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_order_matches_enum() {
        for (i, v) in ProtocolVersion::ALL.iter().enumerate() {
            assert_eq!(TABLE[i].0, *v);
            assert_eq!(ProtocolVersion::from_wire(v.as_str()), Some(*v));
        }
    }

    #[test]
    fn feature_rows() {
        use ProtocolVersion::*;
        assert!(V2025_03_26.features().batching);
        assert!(!V2025_06_18.features().batching && !V2024_11_05.features().batching);
        assert!(!V2024_11_05.features().audio && V2025_03_26.features().audio);
        assert!(V2025_06_18.features().structured_content);
        assert!(!V2025_03_26.features().structured_content);
        assert!(V2025_11_25.features().icons && !V2025_06_18.features().icons);
        assert!(V2026_07_28.features().result_type && !V2025_11_25.features().result_type);
        assert!(V2026_07_28.is_modern() && !V2025_11_25.is_modern());
    }

    #[test]
    fn negotiation() {
        use ProtocolVersion::*;
        assert_eq!(
            ProtocolVersion::negotiate_legacy(Some(V2024_11_05)),
            V2024_11_05
        );
        assert_eq!(
            ProtocolVersion::negotiate_legacy(Some(V2025_06_18)),
            V2025_06_18
        );
        assert_eq!(
            ProtocolVersion::negotiate_legacy(Some(V2026_07_28)),
            V2025_11_25
        );
        assert_eq!(ProtocolVersion::negotiate_legacy(None), V2025_11_25);
        assert_eq!(ProtocolVersion::from_wire("1900-01-01"), None);
    }
}

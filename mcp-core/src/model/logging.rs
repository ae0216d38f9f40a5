//! Log levels (RFC 5424 severities, as MCP names them).

/// Severity of a `notifications/message`, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

const NAMES: [(LogLevel, &str); 8] = [
    (LogLevel::Debug, "debug"),
    (LogLevel::Info, "info"),
    (LogLevel::Notice, "notice"),
    (LogLevel::Warning, "warning"),
    (LogLevel::Error, "error"),
    (LogLevel::Critical, "critical"),
    (LogLevel::Alert, "alert"),
    (LogLevel::Emergency, "emergency"),
];

impl LogLevel {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        NAMES
            .iter()
            .find(|(l, _)| *l == self)
            .map_or("emergency", |(_, n)| n)
    }
    /// Parses a wire name.
    pub fn from_wire(s: &str) -> Option<LogLevel> {
        NAMES
            .iter()
            .find(|(_, n)| crate::wire::bytes_eq(n.as_bytes(), s.as_bytes()))
            .map(|(l, _)| *l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip_and_order() {
        for (l, n) in NAMES {
            assert_eq!(LogLevel::from_wire(n), Some(l));
            assert_eq!(l.as_str(), n);
        }
        assert!(LogLevel::Debug < LogLevel::Warning && LogLevel::Alert < LogLevel::Emergency);
        assert_eq!(LogLevel::from_wire("verbose"), None);
    }
}

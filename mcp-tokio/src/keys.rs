//! The server's secret keys from configuration: a file or an environment variable, with
//! rotation.
//!
//! Cursors and sealed `requestState` are signed with the current key; several instances
//! behind a load balancer accept each other's only if they share it. A rotation names the
//! previous key too, with the instant its grace period ends (`previous_not_after`): values
//! signed with it are accepted until then, nothing new is signed with it, and it stops
//! verifying by itself (the core compares that instant with the time of each request).
//!
//! # Format
//!
//! `name = value` lines; `#` starts a comment (to the end of the line) and blank lines are
//! ignored. In an environment variable, `;` separates entries as well as line breaks.
//!
//! ```text
//! # mcp-rs server keys (keep this file readable by the server's user only)
//! current = 000102030405060708090a0b0c0d0e0f
//! previous = f0e1d2c3b4a5968778695a4b3c2d1e0f
//! previous_not_after = 2026-09-01T12:00:00Z
//! ```
//!
//! | name | value |
//! | --- | --- |
//! | `current` (required) | a 16-byte key: 32 hex digits, or base64 (22 characters unpadded, 24 with `==`; standard or URL-safe alphabet) |
//! | `previous` (optional) | a 16-byte key in the same form: still accepted for verification |
//! | `previous_not_after` (with `previous`) | the last instant `previous` is accepted: RFC 3339 (`2026-09-01T12:00:00Z`, `...+02:00`, fractions allowed) or UNIX seconds |
//!
//! Anything else is an error naming the source and line, never the key material: an unknown
//! or repeated name, a malformed key, an all-zero key, `previous` equal to `current`,
//! `previous` without `previous_not_after` or the reverse. A file that group or others may
//! read is loaded with a warning (logged with `tracing`).
//!
//! Generate a key with `head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'` (or
//! `openssl rand -hex 16`).
//!
//! ```
//! use mcp_rs_tokio::keys::Keys;
//!
//! let keys = Keys::parse(
//!     "current = 000102030405060708090a0b0c0d0e0f\n\
//!      previous = 8PHy8/T19vf4+fr7/P3+/w==\n\
//!      previous_not_after = 2026-09-01T12:00:00Z",
//! )
//! .unwrap();
//! let previous = keys.previous.unwrap();
//! assert_eq!(previous.not_after_ms, 1_788_264_000_000);
//! assert_ne!(previous.key, keys.current);
//! assert!(Keys::parse("current = 00").is_err());
//! ```

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use mcp_rs_core::token::mac::PreviousKey;
use mcp_rs_core::{Config, SecretKey};

/// A fresh secret key from the operating system's entropy source (for
/// [`Config::new`]): cursors and sealed request state of one server instance cannot be
/// forged or replayed against another.
pub fn random_key() -> SecretKey {
    let mut key = [0u8; 16];
    if getrandom::fill(&mut key).is_err() {
        // No entropy source at all: refuse to run with a predictable key.
        panic!("mcp-tokio: the operating system provided no randomness for the server key");
    }
    SecretKey(key)
}

/// The keys a server signs and verifies with: the current key and, during a rotation, the
/// previous one with the end of its grace period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    /// Signs every new cursor and `requestState`, and verifies them.
    pub current: SecretKey,
    /// Only verifies, until its `not_after_ms` (UNIX milliseconds).
    pub previous: Option<PreviousKey>,
}

/// Why keys could not be loaded. The message names the source (file or variable) and the
/// line, never the key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeysError {
    /// The file could not be read.
    #[error("cannot read the keys file {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The environment variable is not set (or not Unicode).
    #[error("the environment variable {0} is not set")]
    Unset(String),
    /// The content is not a valid keys document.
    #[error("{source_name}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Invalid {
        /// The file or variable.
        source_name: String,
        /// The 1-based line (entry) at fault, if one is.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
}

/// Where keys come from (for [`Server::reload_keys`](crate::Server::reload_keys)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// A keys file.
    File(PathBuf),
    /// An environment variable holding the same `name = value` entries.
    Env(String),
}

impl KeySource {
    /// Reads and parses the keys.
    pub fn load(&self) -> Result<Keys, KeysError> {
        match self {
            KeySource::File(path) => Keys::from_file(path),
            KeySource::Env(var) => Keys::from_env(var),
        }
    }
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::File(path) => write!(f, "keys file {}", path.display()),
            KeySource::Env(var) => write!(f, "environment variable {var}"),
        }
    }
}

impl Keys {
    /// A fresh current key from the operating system's entropy source and no previous key
    /// (a server nobody shares keys with).
    pub fn random() -> Keys {
        Keys {
            current: random_key(),
            previous: None,
        }
    }

    /// The keys of a session [`Config`].
    pub fn of(config: &Config) -> Keys {
        Keys {
            current: config.key,
            previous: config.previous_key,
        }
    }

    /// Puts these keys into a session [`Config`].
    pub fn apply(&self, config: &mut Config) {
        config.key = self.current;
        config.previous_key = self.previous;
    }

    /// Parses the keys format (see the [module documentation](self)).
    pub fn parse(text: &str) -> Result<Keys, KeysError> {
        parse(text, "keys", false)
    }

    /// Reads a keys file. Warns (with `tracing`) when group or others may read it, and
    /// when its previous key is already past its grace period.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Keys, KeysError> {
        let path = path.as_ref();
        let read = |error| KeysError::Read {
            path: path.to_path_buf(),
            error,
        };
        let meta = std::fs::metadata(path).map_err(read)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode();
            if mode & 0o077 != 0 {
                tracing::warn!(
                    path = %path.display(),
                    mode = format_args!("{:o}", mode & 0o777),
                    "the keys file is readable by group or others; chmod 600 it"
                );
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        let text = std::fs::read_to_string(path).map_err(read)?;
        let keys = parse(&text, &format!("keys file {}", path.display()), false)?;
        keys.warn_if_retired(&path.display().to_string());
        Ok(keys)
    }

    /// Reads keys from the environment variable `var`: the same entries as a file, separated
    /// by line breaks or `;`.
    pub fn from_env(var: &str) -> Result<Keys, KeysError> {
        let text = std::env::var(var).map_err(|_| KeysError::Unset(var.to_string()))?;
        let keys = parse(&text, &format!("environment variable {var}"), true)?;
        keys.warn_if_retired(var);
        Ok(keys)
    }

    fn warn_if_retired(&self, source: &str) {
        if let Some(p) = self.previous {
            if !p.accepts_at(crate::clock::now_ms()) {
                tracing::warn!(
                    source,
                    "the previous key's previous_not_after has passed: it is no longer accepted"
                );
            }
        }
    }
}

/// The parser behind [`Keys::parse`], [`Keys::from_file`] and [`Keys::from_env`].
fn parse(text: &str, source_name: &str, semicolons: bool) -> Result<Keys, KeysError> {
    let fail = |line: Option<usize>, message: String| KeysError::Invalid {
        source_name: source_name.to_string(),
        line,
        message,
    };
    let mut current: Option<(usize, SecretKey)> = None;
    let mut previous: Option<(usize, SecretKey)> = None;
    let mut not_after: Option<(usize, u64)> = None;
    let entries = text
        .split(|c| c == '\n' || (semicolons && c == ';'))
        .enumerate();
    for (index, entry) in entries {
        let line = index + 1;
        // (No key or instant contains `#`.)
        let entry = entry.split('#').next().unwrap_or_default().trim();
        if entry.is_empty() {
            continue;
        }
        let Some((name, value)) = entry.split_once('=') else {
            return Err(fail(Some(line), "expected `name = value`".into()));
        };
        let (name, value) = (name.trim(), value.trim());
        let repeated = |first: usize| {
            fail(
                Some(line),
                format!("`{name}` repeated (first on line {first})"),
            )
        };
        match name {
            "current" | "previous" => {
                let key = decode_key(value)
                    .map_err(|why| fail(Some(line), format!("`{name}`: {why}")))?;
                let slot = if name == "current" {
                    &mut current
                } else {
                    &mut previous
                };
                if let Some((first, _)) = slot {
                    return Err(repeated(*first));
                }
                *slot = Some((line, key));
            }
            "previous_not_after" => {
                if let Some((first, _)) = not_after {
                    return Err(repeated(first));
                }
                let at = parse_instant(value)
                    .map_err(|why| fail(Some(line), format!("`previous_not_after`: {why}")))?;
                not_after = Some((line, at));
            }
            _ => {
                return Err(fail(
                    Some(line),
                    format!(
                        "unknown name `{name}` (expected current, previous or previous_not_after)"
                    ),
                ))
            }
        }
    }
    let Some((_, current)) = current else {
        return Err(fail(None, "no `current` key".into()));
    };
    let previous = match (previous, not_after) {
        (None, None) => None,
        (Some((line, _)), None) => {
            return Err(fail(
                Some(line),
                "`previous` needs `previous_not_after` (the end of its grace period)".into(),
            ))
        }
        (None, Some((line, _))) => {
            return Err(fail(
                Some(line),
                "`previous_not_after` without a `previous` key".into(),
            ))
        }
        (Some((line, key)), Some((_, not_after_ms))) => {
            if key == current {
                return Err(fail(
                    Some(line),
                    "`previous` is the same key as `current`".into(),
                ));
            }
            Some(PreviousKey { key, not_after_ms })
        }
    };
    Ok(Keys { current, previous })
}

/// A 16-byte key from 32 hex digits or base64 (standard or URL-safe, padded or not). The
/// error describes the value's shape, never its content.
fn decode_key(value: &str) -> Result<SecretKey, String> {
    let mut key = [0u8; 16];
    let text = value.as_bytes();
    if text.len() == 32 && text.iter().all(u8::is_ascii_hexdigit) {
        for (k, pair) in key.iter_mut().zip(text.chunks(2)) {
            let hex = std::str::from_utf8(pair).unwrap_or("00");
            *k = u8::from_str_radix(hex, 16).unwrap_or(0);
        }
    } else {
        let unpadded = value.strip_suffix("==").unwrap_or(value);
        if unpadded.len() != 22 {
            return Err(format!(
                "expected 16 bytes as 32 hex digits or 22 base64 characters (24 with ==), \
                 got {} characters",
                value.chars().count()
            ));
        }
        let url: Vec<u8> = unpadded
            .bytes()
            .map(|b| match b {
                b'+' => b'-',
                b'/' => b'_',
                b => b,
            })
            .collect();
        mcp_rs_core::token::mac::base64url_decode(&url, &mut key)
            .map_err(|_| "not valid hex or base64".to_string())?;
    }
    if key == [0; 16] {
        return Err("all zeros is not a secret".into());
    }
    Ok(SecretKey(key))
}

/// UNIX milliseconds from RFC 3339 (`2026-09-01T12:00:00Z`, an offset or fractions allowed)
/// or UNIX seconds.
fn parse_instant(value: &str) -> Result<u64, String> {
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value
            .parse::<u64>()
            .ok()
            .and_then(|s| s.checked_mul(1000))
            .ok_or_else(|| "UNIX seconds out of range".to_string());
    }
    let bad =
        || format!("expected RFC 3339 such as 2026-09-01T12:00:00Z or UNIX seconds, got {value:?}");
    let b = value.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Result<i64, String> {
        let digits = b.get(range).ok_or_else(bad)?;
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)
    };
    let sep = |at: usize, allowed: &[u8]| b.get(at).is_some_and(|c| allowed.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return Err(bad());
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut at = 19;
    let mut millis = 0i64;
    if b.get(at) == Some(&b'.') {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return Err(bad());
        }
        let frac = &value[at + 1..at + 1 + digits.min(3)];
        millis = frac.parse::<i64>().map_err(|_| bad())? * 10i64.pow(3 - frac.len() as u32);
        at += 1 + digits;
    }
    let offset_minutes = match b.get(at) {
        Some(b'Z' | b'z') if b.len() == at + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == at + 6 && b[at + 3] == b':' => {
            let (h, m) = (num(at + 1..at + 3)?, num(at + 4..at + 6)?);
            if h > 23 || m > 59 {
                return Err(bad());
            }
            if *sign == b'+' {
                h * 60 + m
            } else {
                -(h * 60 + m)
            }
        }
        _ => return Err(bad()),
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let valid_day = usize::try_from(month - 1)
        .ok()
        .and_then(|m| month_days.get(m))
        .is_some_and(|&n| (1..=n).contains(&day));
    // RFC 3339 allows second 60 (a leap second); it is read as the next second.
    if !valid_day || hour > 23 || minute > 59 || second > 60 {
        return Err(bad());
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_minutes * 60;
    u64::try_from(seconds * 1000 + millis).map_err(|_| "the instant is before 1970".to_string())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A file's identity and version as far as reloading cares: it changed if any differs.
pub(crate) fn file_stamp(path: &Path) -> Option<(SystemTime, u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.modified().ok()?, meta.len(), inode))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX_A: &str = "000102030405060708090a0b0c0d0e0f";
    const KEY_A: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

    fn invalid(text: &str) -> String {
        match Keys::parse(text) {
            Err(e @ KeysError::Invalid { .. }) => e.to_string(),
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    #[test]
    fn every_key_encoding() {
        for value in [
            HEX_A,
            "000102030405060708090A0B0C0D0E0F",
            "AAECAwQFBgcICQoLDA0ODw",
            "AAECAwQFBgcICQoLDA0ODw==",
        ] {
            let keys = Keys::parse(&format!("current = {value}")).unwrap();
            assert_eq!(keys.current, SecretKey(KEY_A), "{value}");
            assert_eq!(keys.previous, None);
        }
        // Both base64 alphabets: bytes fb ff .. encode with + and / (or - and _).
        let mut key = [0xfbu8; 16];
        key[1] = 0xff;
        let mut url = [0u8; 22];
        let url = mcp_rs_core::token::mac::base64url_encode(&key, &mut url)
            .unwrap()
            .to_string();
        let standard = url.replace('-', "+").replace('_', "/");
        assert_ne!(url, standard);
        for value in [url.clone(), standard.clone(), format!("{standard}==")] {
            let keys = Keys::parse(&format!("current={value}")).unwrap();
            assert_eq!(keys.current, SecretKey(key), "{value}");
        }
    }

    #[test]
    fn rotation_entries() {
        let keys = Keys::parse(&format!(
            "# comment\n\n  current = {HEX_A}  # the key\nprevious = ffeeddccbbaa99887766554433221100\n\
             previous_not_after = 2026-09-01T12:00:00Z\n"
        ))
        .unwrap();
        let previous = keys.previous.unwrap();
        assert_eq!(previous.not_after_ms, 1_788_264_000_000);
        assert_eq!(previous.key.0[0], 0xff);
        // The environment form: `;` separates entries too.
        let env = format!(
            "current={HEX_A}; previous=ffeeddccbbaa99887766554433221100; previous_not_after=1788264000"
        );
        assert_eq!(parse(&env, "env", true).unwrap(), keys);
        // ... but not in a file, where it is part of the value.
        assert!(Keys::parse(&env).is_err());
    }

    #[test]
    fn instants() {
        let cases = [
            ("1970-01-01T00:00:00Z", 0),
            ("1970-01-01T00:00:01.5Z", 1_500),
            ("1970-01-01t00:00:00.123456z", 123),
            ("2000-02-29T23:59:59Z", 951_868_799_000),
            ("2026-09-01T14:00:00+02:00", 1_788_264_000_000),
            ("2026-09-01T11:30:00-00:30", 1_788_264_000_000),
            ("2026-09-01 12:00:00Z", 1_788_264_000_000),
            ("1788264000", 1_788_264_000_000),
            ("0", 0),
        ];
        for (text, ms) in cases {
            assert_eq!(parse_instant(text), Ok(ms), "{text}");
        }
        for bad in [
            "",
            "2026-09-01",
            "2026-09-01T12:00:00",
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-09-31T00:00:00Z",
            "2026-09-01T24:00:00Z",
            "2026-09-01T12:00:00+2:00",
            "2026-09-01T12:00:00.Z",
            "2026-09-01T12:00:00Zjunk",
            "1969-12-31T23:59:59Z",
            "-5",
            "99999999999999999999",
            "１９７０-01-01T00:00:00Z",
        ] {
            assert!(parse_instant(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn clear_errors_that_never_show_the_key() {
        let secret = "0123456789abcdef0123456789abcde"; // 31 hex digits
        let e = invalid(&format!("current = {secret}"));
        assert_eq!(
            e,
            "keys, line 1: `current`: expected 16 bytes as 32 hex digits or 22 base64 \
             characters (24 with ==), got 31 characters"
        );
        assert!(!e.contains(secret));
        assert_eq!(invalid(""), "keys: no `current` key");
        assert_eq!(invalid("# only a comment"), "keys: no `current` key");
        assert_eq!(
            invalid(&format!("current = {HEX_A}\ncurrent = {HEX_A}")),
            "keys, line 2: `current` repeated (first on line 1)"
        );
        assert_eq!(
            invalid(&format!("current {HEX_A}")),
            "keys, line 1: expected `name = value`"
        );
        assert_eq!(
            invalid(&format!("curent = {HEX_A}")),
            "keys, line 1: unknown name `curent` (expected current, previous or previous_not_after)"
        );
        assert_eq!(
            invalid(&format!(
                "current = {HEX_A}\nprevious = ffeeddccbbaa99887766554433221100"
            )),
            "keys, line 2: `previous` needs `previous_not_after` (the end of its grace period)"
        );
        assert_eq!(
            invalid(&format!("current = {HEX_A}\nprevious_not_after = 0")),
            "keys, line 2: `previous_not_after` without a `previous` key"
        );
        assert_eq!(
            invalid(&format!(
                "current = {HEX_A}\nprevious = {HEX_A}\nprevious_not_after = 0"
            )),
            "keys, line 2: `previous` is the same key as `current`"
        );
        assert_eq!(
            invalid("current = 00000000000000000000000000000000"),
            "keys, line 1: `current`: all zeros is not a secret"
        );
        assert_eq!(
            invalid("current = AAECAwQFBgcICQoLDA0OD!"),
            "keys, line 1: `current`: not valid hex or base64"
        );
        let e = invalid(&format!("current = {HEX_A}\nprevious = ffeeddccbbaa99887766554433221100\nprevious_not_after = tomorrow"));
        assert!(
            e.starts_with("keys, line 3: `previous_not_after`: expected RFC 3339"),
            "{e}"
        );
    }

    #[test]
    fn files_and_variables() {
        let dir = std::env::temp_dir().join(format!("mcp-keys-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys");
        std::fs::write(&path, format!("current = {HEX_A}\n")).unwrap();
        let keys = Keys::from_file(&path).unwrap();
        assert_eq!(keys.current, SecretKey(KEY_A));
        assert_eq!(KeySource::File(path.clone()).load().unwrap(), keys);
        let stamp = file_stamp(&path).unwrap();
        std::fs::write(&path, "current = 2\n").unwrap();
        assert_ne!(file_stamp(&path), Some(stamp));
        let e = Keys::from_file(&path).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "keys file {}, line 1: `current`: expected 16 bytes as 32 hex digits or 22 \
                 base64 characters (24 with ==), got 1 characters",
                path.display()
            )
        );
        let missing = dir.join("missing");
        let e = Keys::from_file(&missing).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "cannot read the keys file {}: ",
                missing.display()
            )),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();

        let var = format!("MCP_KEYS_TEST_{}", std::process::id());
        assert_eq!(
            Keys::from_env(&var).unwrap_err().to_string(),
            format!("the environment variable {var} is not set")
        );
        // (Setting a variable would race with other test threads reading the environment:
        // the parser behind `from_env` is tested directly in `rotation_entries`.)
    }

    #[test]
    fn config_round_trip() {
        let keys = Keys {
            current: SecretKey([3; 16]),
            previous: Some(PreviousKey {
                key: SecretKey([4; 16]),
                not_after_ms: 9,
            }),
        };
        let mut config = Config::new(SecretKey([1; 16]));
        keys.apply(&mut config);
        assert_eq!(Keys::of(&config), keys);
        assert_ne!(Keys::random().current, Keys::random().current);
        // Debug output never shows key bytes.
        assert!(!format!("{keys:?}").contains("3, 3"), "{keys:?}");
    }
}

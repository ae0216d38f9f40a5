//! Error replies: the protocol faults a request can end in, and a writer that always
//! produces a reply within [`MIN_OUTPUT`](super::MIN_OUTPUT) bytes.

use crate::model::common::ClientCaps;
use crate::wire::json::{self, truncate_escaped, JsonStr, JsonWriter, StrPart};
use crate::wire::jsonrpc;
use crate::wire::version::ProtocolVersion;

/// A protocol error reply being prepared.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fault<'i> {
    pub(super) code: i32,
    pub(super) message: &'static str,
    pub(super) detail: Detail<'i>,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Detail<'i> {
    None,
    /// Appended to the message: `message: name`.
    Name(JsonStr<'i>),
    /// -32022: `data.supported` + `data.requested`.
    Version(&'i str),
    /// -32021: `data.requiredCapabilities`.
    Caps(ClientCaps),
    /// A numeric bound, as `data.limit`.
    Limit(usize),
    /// A size the output needed, as `data.required`.
    Required(usize),
    /// A scan error: message + offset.
    Scan(json::ScanError),
    /// A short text of the server's own, appended to the message.
    #[cfg(feature = "prompts")]
    Text(InlineText),
    /// A resource URI, as `data.uri` (resource not found).
    #[cfg(feature = "resources")]
    Uri(JsonStr<'i>),
}

impl<'i> Fault<'i> {
    pub(super) const fn new(code: i32, message: &'static str) -> Self {
        Fault {
            code,
            message,
            detail: Detail::None,
        }
    }
    pub(super) const fn with(self, detail: Detail<'i>) -> Self {
        Fault { detail, ..self }
    }
}

/// Writes an error reply. If it does not fit (a huge id or detail), falls back to the
/// bare message, then to no id, so a reply is always produced in `MIN_OUTPUT` bytes.
/// Writes an error reply, dropping optional parts until it fits: first the detail,
/// then the id, then `data` (last, because -32022 and -32021 require it; `data` is
/// bounded, so the id-less reply always fits in `MIN_OUTPUT`). Returns `None` when the
/// reply carries the id it was given, or `Some(bytes the full reply needed)` when the id
/// had to be dropped.
pub(super) fn write_fault(
    w: &mut JsonWriter<'_>,
    id: Option<&str>,
    f: &Fault<'_>,
) -> Option<usize> {
    let before = w.checkpoint();
    let mut needed = 0;
    // The full reply, then without the detail, then without the id: the first that fits.
    for (echo, detailed) in [(id, true), (id, false), (None, false)] {
        w.rewind(before);
        write_fault_full(w, echo, f, detailed);
        if detailed {
            needed = w.len().saturating_sub(before.len());
        }
        if !w.overflowed() {
            if echo.is_some() {
                return None;
            }
            break;
        }
    }
    if w.overflowed() {
        w.rewind(before);
        let message = [
            StrPart::Text(f.message),
            StrPart::Text(" (request id too long to echo)"),
        ];
        jsonrpc::write_error(w, None, f.code, &message, None);
    }
    id.map(|_| before.len() + needed)
}

// Out of line: inlined into the loop above, it is larger on Thumb-2 (#21: size).
#[inline(never)]
fn write_fault_full(w: &mut JsonWriter<'_>, id: Option<&str>, f: &Fault<'_>, detailed: bool) {
    let detail = f.detail;
    // Called only when `has_data` (below): the detail kinds without `data` never reach it.
    // One object around every kind, and the keyed numbers share their writer (#21: size).
    let data = |w: &mut JsonWriter<'_>| {
        w.begin_object();
        match detail {
            Detail::Version(requested) => {
                w.key("supported");
                write_supported_versions(w);
                w.key("requested");
                let (head, _) = truncate_escaped(requested, 32);
                w.string_raw_escaped(head);
            }
            Detail::Caps(ref caps) => {
                w.key("requiredCapabilities");
                caps.write(w);
            }
            Detail::Limit(n) | Detail::Required(n) => {
                w.key(if matches!(detail, Detail::Limit(_)) {
                    "limit"
                } else {
                    "required"
                });
                w.u64(n as u64);
            }
            Detail::Scan(e) => {
                w.key("reason");
                w.string_parts(&e.message_parts());
            }
            #[cfg(feature = "resources")]
            Detail::Uri(uri) => {
                w.key("uri");
                let (head, _) = truncate_escaped(uri.raw(), 256);
                w.string_raw_escaped(head);
            }
            _ => {}
        }
        w.end_object();
    };
    #[cfg(feature = "prompts")]
    let has_data = !matches!(detail, Detail::None | Detail::Name(_) | Detail::Text(_));
    #[cfg(not(feature = "prompts"))]
    let has_data = !matches!(detail, Detail::None | Detail::Name(_));
    // `data.uri` is optional and, escaped, up to 256 characters of 12 bytes: like the
    // message detail, it goes before the id does.
    #[cfg(feature = "resources")]
    let has_data = has_data && (detailed || !matches!(detail, Detail::Uri(_)));
    let (mut parts, mut n) = ([StrPart::Text(""); 7], 1);
    parts[0] = StrPart::Text(f.message);
    let mut push = |p| {
        if let Some(slot) = parts.get_mut(n) {
            *slot = p;
            n += 1;
        }
    };
    let shown = if detailed { detail } else { Detail::None };
    match shown {
        #[cfg(feature = "prompts")]
        Detail::Text(ref t) => {
            push(StrPart::Text(": "));
            push(StrPart::Text(t.as_str()));
        }
        // A name (up to 64 characters) or a version (up to 32), cut by one call.
        Detail::Name(_) | Detail::Version(_) => {
            let (raw, max) = match shown {
                Detail::Name(name) => (name.raw(), 64),
                Detail::Version(v) => (v, 32),
                _ => ("", 0),
            };
            let (head, cut) = truncate_escaped(raw, max);
            push(StrPart::Text(": "));
            push(StrPart::Escaped(head));
            if cut {
                push(StrPart::Text("..."));
            }
        }
        Detail::Scan(e) => {
            push(StrPart::Text(": "));
            for p in e.message_parts() {
                push(p);
            }
        }
        _ => {}
    }
    let message = parts.get(..n).unwrap_or(&[]);
    jsonrpc::write_error(
        w,
        id,
        f.code,
        message,
        if has_data { Some(&data) } else { None },
    );
}

pub(super) fn write_supported_versions(w: &mut JsonWriter<'_>) {
    w.begin_array();
    for v in ProtocolVersion::ALL.iter().rev() {
        w.string(v.as_str());
    }
    w.end_array();
}

#[cfg(test)]
mod tests {
    use super::truncate_escaped;

    #[test]
    fn truncation_never_splits_a_surrogate_pair() {
        let pair = "\\uD83D\\uDE00";
        for max in 0..6 {
            let raw = ["ab", pair, pair, "c"].concat();
            let (head, _) = truncate_escaped(&raw, max);
            // Every cut leaves whole pairs: the text parses as a JSON string.
            let json = ["\"", head, "\""].concat();
            assert!(
                crate::wire::json::parse(json.as_bytes(), Default::default()).is_ok(),
                "{json}"
            );
        }
        assert_eq!(truncate_escaped(&["a", pair].concat(), 1), ("a", true));
        assert_eq!(
            truncate_escaped(&["a", pair].concat(), 4),
            (["a", pair].concat().as_str(), false)
        );
        assert_eq!(truncate_escaped("\\n\\u0041é", 2), ("\\n\\u0041", true));
        // The byte bound: two pairs are 24 bytes, more than 4 * 3.
        assert_eq!(truncate_escaped(&[pair, pair].concat(), 3), (pair, true));
        assert_eq!(truncate_escaped(&["a", pair].concat(), 2), ("a", true));
        assert_eq!(truncate_escaped("ééé", 3), ("ééé", false));
    }
}

#[cfg(feature = "prompts")]
/// Up to 32 bytes of text held inline (a fault outlives the borrow it was made from).
#[derive(Clone, Copy, Debug)]
pub(super) struct InlineText {
    buf: [u8; 32],
    len: u8,
}

#[cfg(feature = "prompts")]
impl InlineText {
    /// `text`, cut at a character boundary to fit.
    pub(super) fn new(text: &str) -> Self {
        let mut len = text.len().min(32);
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        let mut buf = [0u8; 32];
        if let (Some(dst), Some(src)) = (buf.get_mut(..len), text.as_bytes().get(..len)) {
            dst.copy_from_slice(src);
        }
        InlineText {
            buf,
            len: len as u8,
        }
    }
    fn as_str(&self) -> &str {
        core::str::from_utf8(self.buf.get(..usize::from(self.len)).unwrap_or_default())
            .unwrap_or("")
    }
}

//! A bounded, incremental `text/event-stream` parser: the fields MCP uses (`data`, `id`,
//! `retry`), holding at most a limit of an event's data.

/// One server-sent event.
#[derive(Debug, Default, PartialEq)]
pub(super) struct SseEvent {
    pub(super) id: Option<String>,
    pub(super) retry: Option<u64>,
    pub(super) data: String,
}

/// Room beyond the limit for a line's field name and line end (`data: ` and `\r\n`).
const LINE_SLACK: usize = 16;

/// An incremental `text/event-stream` parser (the fields MCP uses: `data`, `id`, `retry`),
/// holding at most `limit` bytes of an event's data (and [`LINE_SLACK`] more of a line).
pub(super) struct SseParser {
    buf: Vec<u8>,
    /// `buf[..scanned]` holds no newline.
    scanned: usize,
    event: SseEvent,
    has_data: bool,
    limit: usize,
    /// A line or an event's data went past `limit`.
    overflow: bool,
}

impl SseParser {
    pub(super) fn new(limit: usize) -> Self {
        SseParser {
            buf: Vec::new(),
            scanned: 0,
            event: SseEvent::default(),
            has_data: false,
            limit,
            overflow: false,
        }
    }

    /// The events `chunk` completes; `None` once a line or an event's data is longer than
    /// the limit (the stream must not be read further).
    pub(super) fn push(&mut self, chunk: &[u8]) -> Option<Vec<SseEvent>> {
        if self.overflow {
            return None;
        }
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(nl) = self
            .buf
            .get(self.scanned..)
            .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
        {
            let line: Vec<u8> = self.buf.drain(..=self.scanned + nl).collect();
            self.scanned = 0;
            self.line(&line, &mut events);
            if self.overflow {
                return None;
            }
        }
        self.scanned = self.buf.len();
        // What is left is one unfinished line.
        if self.buf.len() > self.limit.saturating_add(LINE_SLACK) {
            self.overflow = true;
            return None;
        }
        Some(events)
    }

    fn line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) {
        if line.len() > self.limit.saturating_add(LINE_SLACK) {
            self.overflow = true;
            return;
        }
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.is_empty() {
            if self.has_data || self.event.id.is_some() {
                events.push(std::mem::take(&mut self.event));
            }
            self.has_data = false;
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => {
                if self.has_data {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
                self.has_data = true;
                if self.event.data.len() > self.limit {
                    self.overflow = true;
                }
            }
            "id" => self.event.id = Some(value.to_owned()),
            "retry" => self.event.retry = value.parse().ok(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_parser() {
        let mut p = SseParser::new(1 << 20);
        assert!(p.push(b"id: 1-0\nretry: 500\ndata: \n").unwrap().is_empty());
        let e = p
            .push(b"\nevent: message\nid: 1-1\ndata: {\"a\"")
            .unwrap()
            .pop();
        assert_eq!(
            e,
            Some(SseEvent {
                id: Some("1-0".into()),
                retry: Some(500),
                data: String::new()
            })
        );
        let e = p.push(b":1}\r\n\r\n").unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].data, "{\"a\":1}");
        assert_eq!(e[0].id.as_deref(), Some("1-1"));
        let two = p.push(b"data: x\ndata: y\n\n: comment\n\n").unwrap();
        assert_eq!(two.len(), 1);
        assert_eq!(two[0].data, "x\ny");
        // A line split over many chunks.
        for part in [&b"da"[..], b"ta: ", b"{\"b\":", b"2}\n", b"\n"] {
            let e = p.push(part).unwrap();
            if part == b"\n" {
                assert_eq!(e.len(), 1);
                assert_eq!(e[0].data, "{\"b\":2}");
            } else {
                assert!(e.is_empty());
            }
        }
    }

    #[test]
    fn sse_parser_limits() {
        // A line that never ends.
        let mut p = SseParser::new(16);
        assert!(p.push(b"data: 0123456789abcdef").is_some());
        assert!(p.push(b"0123456789abcdef").is_none());
        assert!(p.push(b"\n\n").is_none(), "stays failed");
        // An event whose data lines add up past the limit, completed in the same chunk.
        let mut p = SseParser::new(16);
        assert!(p.push(b"data: 0123456789\ndata: 0123456789\n\n").is_none());
        // At the limit is fine.
        let mut p = SseParser::new(16);
        let e = p.push(b"data: 0123456789abcdef\r\n\r\n").unwrap();
        assert_eq!(e[0].data, "0123456789abcdef");
        let e = p.push(b"data: 01234567\ndata: 0123456\n\n").unwrap();
        assert_eq!(e[0].data, "01234567\n0123456");
    }
}

//! What the HTTP server tests share: a socket in memory and a reader of the responses
//! written to it. Each test crate uses part of it.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::rc::Rc;
use std::task::Poll;

use serde_json::Value;

// ---- a socket in memory --------------------------------------------------------------

#[derive(Default)]
pub(crate) struct Wire {
    pub(crate) input: VecDeque<u8>,
    /// No more input will come (reads then return 0).
    pub(crate) closed: bool,
    pub(crate) output: Vec<u8>,
    /// Most bytes one read returns (0: as many as fit).
    pub(crate) max_read: usize,
}

#[derive(Clone, Default)]
pub(crate) struct Sock(pub(crate) Rc<RefCell<Wire>>);

impl Sock {
    pub(crate) fn with(input: &[u8]) -> Self {
        let s = Sock::default();
        s.push(input);
        s
    }
    pub(crate) fn push(&self, bytes: &[u8]) {
        self.0.borrow_mut().input.extend(bytes);
    }
    pub(crate) fn close(&self) {
        self.0.borrow_mut().closed = true;
    }
    pub(crate) fn take_output(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut().output)
    }
}

impl embedded_io_async::ErrorType for Sock {
    type Error = Infallible;
}

impl embedded_io_async::Read for Sock {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        std::future::poll_fn(|_| {
            let mut w = self.0.borrow_mut();
            if w.input.is_empty() {
                return if w.closed {
                    Poll::Ready(Ok(0))
                } else {
                    Poll::Pending
                };
            }
            let max = if w.max_read == 0 {
                buf.len()
            } else {
                w.max_read.min(buf.len())
            };
            let n = max.min(w.input.len());
            for b in buf.iter_mut().take(n) {
                *b = w.input.pop_front().unwrap();
            }
            Poll::Ready(Ok(n))
        })
        .await
    }
}

impl embedded_io_async::Write for Sock {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        self.0.borrow_mut().output.extend_from_slice(buf);
        Ok(buf.len())
    }
    async fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

/// Every complete response in `out` (a chunked body must be complete too).
pub(crate) fn responses(mut out: &[u8]) -> Vec<Response> {
    let mut all = Vec::new();
    loop {
        if out.is_empty() {
            return all;
        }
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut resp = httparse::Response::new(&mut headers);
        let httparse::Status::Complete(n) = resp.parse(out).unwrap() else {
            panic!("partial response: {}", String::from_utf8_lossy(out));
        };
        let status = resp.code.unwrap();
        let headers: Vec<(String, String)> = resp
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_string(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect();
        out = &out[n..];
        let get = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name));
        let mut body = Vec::new();
        if status == 100 {
            continue;
        }
        if let Some((_, len)) = get("content-length") {
            let len: usize = len.parse().unwrap();
            body.extend_from_slice(&out[..len]);
            out = &out[len..];
        } else {
            assert_eq!(get("transfer-encoding").unwrap().1, "chunked");
            loop {
                let httparse::Status::Complete((n, size)) =
                    httparse::parse_chunk_size(out).unwrap()
                else {
                    panic!("partial chunk");
                };
                let size = size as usize;
                out = &out[n..];
                if size == 0 {
                    assert_eq!(&out[..2], b"\r\n");
                    out = &out[2..];
                    break;
                }
                body.extend_from_slice(&out[..size]);
                assert_eq!(&out[size..size + 2], b"\r\n");
                out = &out[size + 2..];
            }
        }
        all.push(Response {
            status,
            headers,
            body,
        });
    }
}

//! `framing`: `LineFramer` fed whole, in chunks (`push`) and by `spare`/`commit` gives the
//! frames of a plain reference; it never holds more than its buffer and always makes progress.

use arbitrary::Arbitrary;
use mcp_rs_core::wire::framing::{Frame, LineFramer};

#[derive(Arbitrary, Debug, Clone)]
pub struct Input {
    pub max: u8,
    pub data: Vec<u8>,
    /// Chunk sizes for the chunked push (cycled; 0 counts as 1).
    pub chunks: Vec<u8>,
    /// Read sizes for the `spare`/`commit` driver (cycled; 0 is a read of nothing).
    pub reads: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum F {
    Line(Vec<u8>),
    Oversized(usize),
}

fn own(f: Frame<'_>) -> F {
    match f {
        Frame::Line(l) => F::Line(l.to_vec()),
        Frame::Oversized { len } => F::Oversized(len),
    }
}

/// The documented behaviour, written plainly: split on `\n`; a line longer than `max`
/// (counting a `\r`) is one `Oversized { len: max + 1 }`; blank (ASCII whitespace) lines
/// are dropped; one trailing `\r` is stripped; an unterminated last line counts too.
pub fn reference(max: usize, data: &[u8]) -> Vec<F> {
    let mut out = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        if line.len() > max {
            out.push(F::Oversized(max + 1));
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            let l = line.strip_suffix(b"\r").unwrap_or(line);
            out.push(F::Line(l.to_vec()));
        }
    }
    out
}

fn drain(framer: &mut LineFramer<'_>, out: &mut Vec<F>) -> usize {
    let mut n = 0;
    while let Some(f) = framer.next_frame() {
        out.push(own(f));
        n += 1;
        assert!(n <= 1 << 20, "next_frame does not terminate");
    }
    n
}

fn finish(framer: &mut LineFramer<'_>, out: &mut Vec<F>) {
    let mut n = 0;
    while let Some(f) = framer.finish() {
        out.push(own(f));
        n += 1;
        assert!(n <= 1 << 20, "finish does not terminate");
    }
    assert_eq!(framer.buffered(), 0, "finish leaves bytes behind");
    assert!(!framer.is_discarding());
}

/// `push` with the given chunking (`None`: all at once).
fn by_push(max: usize, data: &[u8], chunks: Option<&[u8]>) -> Vec<F> {
    let mut storage = vec![0u8; max];
    let mut framer = LineFramer::new(&mut storage);
    assert_eq!(framer.max_len(), max);
    let mut out = Vec::new();
    let mut pos = 0;
    let mut k = 0;
    while pos < data.len() {
        let size = match chunks {
            Some(c) if !c.is_empty() => usize::from(c[k % c.len()]).max(1),
            _ => data.len(),
        };
        k += 1;
        let mut input = &data[pos..(pos + size).min(data.len())];
        pos += input.len();
        while !input.is_empty() {
            let n = framer.push(input);
            assert!(n <= input.len());
            assert!(
                framer.buffered() <= max,
                "framer holds more than its buffer"
            );
            input = &input[n..];
            let drained = drain(&mut framer, &mut out);
            assert!(
                n > 0 || drained > 0,
                "push took nothing and no frame was waiting"
            );
        }
    }
    finish(&mut framer, &mut out);
    out
}

/// `spare`/`commit`, as when reading straight from a device.
fn by_spare(max: usize, data: &[u8], reads: &[u8]) -> Vec<F> {
    let mut storage = vec![0u8; max];
    let mut framer = LineFramer::new(&mut storage);
    let mut out = Vec::new();
    let mut pos = 0;
    let mut k = 0;
    let mut idle = 0;
    while pos < data.len() {
        // A zero read reads nothing once; after a run of them, read everything.
        let want = if reads.is_empty() || idle > reads.len() {
            usize::MAX
        } else {
            usize::from(reads[k % reads.len()])
        };
        k += 1;
        let spare = framer.spare();
        let empty = spare.is_empty();
        let n = want.min(spare.len()).min(data.len() - pos);
        spare[..n].copy_from_slice(&data[pos..pos + n]);
        pos += n;
        framer.commit(n);
        assert!(
            framer.buffered() <= max,
            "framer holds more than its buffer"
        );
        let drained = drain(&mut framer, &mut out);
        if empty {
            assert!(drained > 0, "spare() was empty but no frame was waiting");
        }
        idle = if n == 0 && drained == 0 { idle + 1 } else { 0 };
        assert!(idle <= reads.len() + 2, "spare/commit makes no progress");
    }
    finish(&mut framer, &mut out);
    out
}

pub fn check(input: &Input) {
    let max = usize::from(input.max % 48);
    let data = &input.data;
    let expected = reference(max, data);
    let whole = by_push(max, data, None);
    assert_eq!(whole, expected, "push(all) vs reference, max {max}");
    let chunked = by_push(max, data, Some(&input.chunks));
    assert_eq!(chunked, expected, "chunked push vs reference, max {max}");
    let spare = by_spare(max, data, &input.reads);
    assert_eq!(spare, expected, "spare/commit vs reference, max {max}");
}

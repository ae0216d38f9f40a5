//! `json_roundtrip`: sequences of `JsonWriter` operations (repaired into one valid document as
//! they are applied) read back equal with serde_json, and the scanner accepts the text;
//! written again into a smaller buffer, they report the exact size needed and leave a correct
//! prefix.

use arbitrary::Arbitrary;
use mcp_rs_core::wire::json::{parse, Checkpoint, JsonWriter, Limits};
use serde_json::Value;

/// One writer operation. Sequences are repaired into valid documents as they are
/// applied (a value where a key is due gets a generated key, a stray `End` closes
/// nothing, ...), so any sequence yields exactly one JSON document.
#[derive(Arbitrary, Debug, Clone)]
pub enum WOp {
    Str(String),
    StrFmt(String, i64),
    RawValue(String),
    RawEscaped(String),
    I64(i64),
    U64(u64),
    F64(f64),
    Bool(bool),
    Null,
    BeginArray,
    BeginObject,
    End,
    Key(String),
    /// `begin_string_value`: the next value is embedded as a JSON string.
    BeginEmbed,
    Save,
    Restore,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Input {
    pub ops: Vec<WOp>,
    /// Size of the second, possibly too small, buffer.
    pub small: u16,
}

/// The value we expect to read back.
#[derive(Debug, Clone)]
enum Exp {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
    Arr(Vec<Exp>),
    Obj(Vec<(String, Exp)>),
    Embedded(Box<Exp>),
}

#[derive(Debug, Clone)]
enum Open {
    Arr(Vec<Exp>),
    Obj(Vec<(String, Exp)>, Option<String>),
    Embed,
}

#[derive(Debug, Clone, Default)]
struct State {
    stack: Vec<Open>,
    top: Option<Exp>,
    keys: u32,
}

/// Containers nest at most this deep (serde_json's own limit is 127).
const MAX_NEST: usize = 100;

impl State {
    fn in_embed(&self) -> bool {
        self.stack.iter().any(|o| matches!(o, Open::Embed))
    }

    /// Prepares the position for a value; `false` if no value can go here.
    fn before_value(&mut self, w: &mut JsonWriter<'_>) -> bool {
        if self.top.is_some() {
            return false;
        }
        if let Some(Open::Obj(_, pending)) = self.stack.last_mut() {
            if pending.is_none() {
                let k = format!("k{}", self.keys);
                self.keys += 1;
                w.key(&k);
                *pending = Some(k);
            }
        }
        true
    }

    /// A complete value was written.
    fn complete(&mut self, w: &mut JsonWriter<'_>, v: Exp) {
        match self.stack.last_mut() {
            None => self.top = Some(v),
            Some(Open::Arr(items)) => items.push(v),
            Some(Open::Obj(members, pending)) => {
                let k = pending.take().expect("key before value");
                members.push((k, v));
            }
            Some(Open::Embed) => {
                self.stack.pop();
                w.end_string_value();
                self.complete(w, Exp::Embedded(Box::new(v)));
            }
        }
    }

    fn apply(&mut self, w: &mut JsonWriter<'_>, op: &WOp, saved: &mut Option<(Checkpoint, State)>) {
        match op {
            WOp::Save => *saved = Some((w.checkpoint(), self.clone())),
            WOp::Restore => {
                if let Some((cp, st)) = saved {
                    w.rewind(*cp);
                    *self = st.clone();
                }
            }
            WOp::Key(k) => {
                if let Some(Open::Obj(_, pending @ None)) = self.stack.last_mut() {
                    w.key(k);
                    *pending = Some(k.clone());
                }
            }
            WOp::End => match self.stack.last() {
                Some(Open::Arr(_)) => {
                    w.end_array();
                    let Some(Open::Arr(items)) = self.stack.pop() else {
                        unreachable!()
                    };
                    self.complete(w, Exp::Arr(items));
                }
                Some(Open::Obj(_, pending)) => {
                    if pending.is_some() {
                        w.null();
                        self.complete(w, Exp::Null);
                    }
                    w.end_object();
                    let Some(Open::Obj(members, _)) = self.stack.pop() else {
                        unreachable!()
                    };
                    self.complete(w, Exp::Obj(members));
                }
                Some(Open::Embed) => {
                    w.null();
                    self.complete(w, Exp::Null);
                }
                None => {}
            },
            WOp::BeginArray | WOp::BeginObject | WOp::BeginEmbed => {
                if self.stack.len() >= MAX_NEST || !self.before_value(w) {
                    return;
                }
                match op {
                    WOp::BeginArray => {
                        w.begin_array();
                        self.stack.push(Open::Arr(Vec::new()));
                    }
                    WOp::BeginObject => {
                        w.begin_object();
                        self.stack.push(Open::Obj(Vec::new(), None));
                    }
                    _ => {
                        if self.in_embed() {
                            // String mode is one level: embed nothing, write null.
                            w.null();
                            self.complete(w, Exp::Null);
                        } else {
                            w.begin_string_value();
                            self.stack.push(Open::Embed);
                        }
                    }
                }
            }
            scalar => {
                if !self.before_value(w) {
                    return;
                }
                let v = match scalar {
                    WOp::Str(s) => {
                        w.string(s);
                        Exp::Str(s.clone())
                    }
                    WOp::StrFmt(s, n) => {
                        w.string_fmt(format_args!("{s}{n}"));
                        Exp::Str(format!("{s}{n}"))
                    }
                    WOp::RawValue(s) => {
                        w.raw_value(&serde_json::to_string(s).unwrap());
                        Exp::Str(s.clone())
                    }
                    WOp::RawEscaped(s) => {
                        let quoted = serde_json::to_string(s).unwrap();
                        w.string_raw_escaped(&quoted[1..quoted.len() - 1]);
                        Exp::Str(s.clone())
                    }
                    WOp::I64(i) => {
                        w.i64(*i);
                        Exp::I64(*i)
                    }
                    WOp::U64(u) => {
                        w.u64(*u);
                        Exp::U64(*u)
                    }
                    WOp::F64(f) => {
                        w.f64(*f);
                        if f.is_finite() {
                            Exp::F64(*f)
                        } else {
                            Exp::Null
                        }
                    }
                    WOp::Bool(b) => {
                        w.bool(*b);
                        Exp::Bool(*b)
                    }
                    _ => {
                        w.null();
                        Exp::Null
                    }
                };
                self.complete(w, v);
            }
        }
    }

    fn close(&mut self, w: &mut JsonWriter<'_>) {
        while !self.stack.is_empty() {
            self.apply(w, &WOp::End, &mut None);
        }
        if self.top.is_none() {
            w.null();
            self.top = Some(Exp::Null);
        }
    }
}

fn run(
    ops: &[WOp],
    buf: &mut [u8],
) -> (
    Result<usize, mcp_rs_core::wire::json::BufferTooSmall>,
    Vec<u8>,
    Exp,
) {
    let mut w = JsonWriter::new(buf);
    let mut st = State::default();
    let mut saved = None;
    for op in ops {
        st.apply(&mut w, op, &mut saved);
        assert_eq!(
            usize::from(w.depth()),
            st.stack
                .iter()
                .filter(|o| !matches!(o, Open::Embed))
                .count()
        );
    }
    st.close(&mut w);
    assert_eq!(w.depth(), 0);
    assert!(!w.string_mode());
    let written = w.written().to_vec();
    (w.finish(), written, st.top.expect("a value"))
}

/// Checks a serde value against the expectation. Floats compare bit-exact.
fn compare(e: &Exp, v: &Value) {
    match (e, v) {
        (Exp::Null, Value::Null) => {}
        (Exp::Bool(a), Value::Bool(b)) => assert_eq!(a, b),
        (Exp::I64(a), Value::Number(n)) => assert_eq!(n.as_i64(), Some(*a), "i64 {a}"),
        (Exp::U64(a), Value::Number(n)) => assert_eq!(n.as_u64(), Some(*a), "u64 {a}"),
        (Exp::F64(a), Value::Number(n)) => {
            let b = n.as_f64().expect("f64");
            // Bit-exact, sign of zero included: `{:?}` writes `-0.0` and serde_json reads
            // it back as -0.0. (Integral values such as `1.0` read back as f64 too.)
            assert_eq!(a.to_bits(), b.to_bits(), "f64 {a:?} read back as {b:?}");
        }
        (Exp::Str(a), Value::String(b)) => assert_eq!(a, b),
        (Exp::Embedded(inner), Value::String(s)) => {
            let doc: Value =
                serde_json::from_str(s).unwrap_or_else(|err| panic!("embedded text {s:?}: {err}"));
            compare(inner, &doc);
            parse(s.as_bytes(), Limits { max_depth: 128 }).expect("embedded text scans");
        }
        (Exp::Arr(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(b) {
                compare(x, y);
            }
        }
        (Exp::Obj(members), Value::Object(m)) => {
            let mut last: std::collections::BTreeMap<&str, &Exp> = Default::default();
            for (k, v) in members {
                last.insert(k, v);
            }
            assert_eq!(last.len(), m.len());
            for (k, v) in last {
                compare(v, m.get(k).unwrap_or_else(|| panic!("missing key {k:?}")));
            }
        }
        _ => panic!("expected {e:?}, read back {v}"),
    }
}

pub fn check(input: &Input) {
    let mut buf = vec![0u8; 1 << 16];
    let (res, out, exp) = run(&input.ops, &mut buf);
    let Ok(len) = res else {
        return; // More than 64 KiB: nothing to compare against.
    };
    assert_eq!(len, out.len());
    let text = std::str::from_utf8(&out).expect("writer output is UTF-8");
    let v: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("invalid JSON written ({e}): {text}"));
    compare(&exp, &v);
    let ours = parse(&out, Limits { max_depth: 128 })
        .unwrap_or_else(|e| panic!("scanner rejects writer output ({e}): {text}"));
    assert_eq!(ours.as_str(), text);
    // Writing into a smaller buffer: the exact size is reported and the prefix matches.
    let small = usize::from(input.small) % (len + 8);
    let mut sbuf = vec![0u8; small];
    let (res2, out2, _) = run(&input.ops, &mut sbuf);
    if small >= len {
        assert_eq!(res2, Ok(len));
        assert_eq!(out2, out);
    } else {
        assert_eq!(res2.map_err(|e| e.required), Err(len), "required size");
        assert_eq!(out2[..], out[..small], "prefix written before the overflow");
    }
}

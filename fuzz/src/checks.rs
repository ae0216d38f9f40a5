//! Invariant checks shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the
//! stable replay test (`mcp-core/tests/corpus_replay.rs`, which includes this file with
//! `#[path]`). Every check panics on a violated invariant; none depends on libFuzzer.
//!
//! Dependencies: `mcp_rs_core` (feature `serde`), `serde_json` (with `float_roundtrip`, which the
//! workspace test build also gets through `jsonschema`) and `arbitrary` (derive).
#![allow(dead_code)]
#![allow(clippy::too_many_lines)]

use serde_json::Value;

/// A small, independent reader of *valid* JSON text: top-level members and elements as raw
/// text. The session model uses it to see requests the way the wire does (raw keys, raw ids)
/// without relying on the scanner under test.
pub mod raw {
    fn ws(b: &[u8], mut i: usize) -> usize {
        while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    }

    /// End (exclusive) of the string starting with the quote at `i`.
    fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
        i += 1;
        loop {
            match *b.get(i)? {
                b'"' => return Some(i + 1),
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
    }

    /// End (exclusive) of the value starting at `i`.
    fn value_end(b: &[u8], i: usize) -> Option<usize> {
        match *b.get(i)? {
            b'"' => string_end(b, i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    match *b.get(j)? {
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(j + 1);
                            }
                        }
                        b'"' => {
                            j = string_end(b, j)?;
                            continue;
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {
                let mut j = i;
                while let Some(c) = b.get(j) {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    j += 1;
                }
                Some(j)
            }
        }
    }

    /// The trimmed text of a valid JSON document.
    pub fn trim(s: &str) -> &str {
        s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
    }

    /// Top-level members `(raw key without quotes, raw value)` of a valid JSON object text.
    pub fn members(s: &str) -> Option<Vec<(&str, &str)>> {
        let s = trim(s);
        let b = s.as_bytes();
        if b.first() != Some(&b'{') {
            return None;
        }
        let mut out = Vec::new();
        let mut i = ws(b, 1);
        if b.get(i) == Some(&b'}') {
            return Some(out);
        }
        loop {
            let ke = string_end(b, i)?;
            let key = s.get(i + 1..ke - 1)?;
            i = ws(b, ke);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = ws(b, i + 1);
            let ve = value_end(b, i)?;
            out.push((key, s.get(i..ve)?));
            i = ws(b, ve);
            match b.get(i)? {
                b',' => i = ws(b, i + 1),
                b'}' => return Some(out),
                _ => return None,
            }
        }
    }

    /// Top-level elements (raw) of a valid JSON array text.
    pub fn elements(s: &str) -> Option<Vec<&str>> {
        let s = trim(s);
        let b = s.as_bytes();
        if b.first() != Some(&b'[') {
            return None;
        }
        let mut out = Vec::new();
        let mut i = ws(b, 1);
        if b.get(i) == Some(&b']') {
            return Some(out);
        }
        loop {
            let ve = value_end(b, i)?;
            out.push(s.get(i..ve)?);
            i = ws(b, ve);
            match b.get(i)? {
                b',' => i = ws(b, i + 1),
                b']' => return Some(out),
                _ => return None,
            }
        }
    }

    /// Whether a raw value is a valid JSON-RPC id as the wire sees it: a string, or an
    /// integer written without fraction or exponent.
    pub fn is_id(raw: &str) -> bool {
        if raw.starts_with('"') {
            return true;
        }
        let d = raw.strip_prefix('-').unwrap_or(raw);
        !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit())
    }
}

/// Nesting depth of a serde value (`[[1]]` is 2).
pub fn depth_of(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

/// Whether serde_json rejected a text only because of one of its own documented bounds
/// (numbers beyond `f64`, nesting beyond 127).
pub fn serde_bound(e: &serde_json::Error) -> Option<&'static str> {
    let m = e.to_string();
    if m.starts_with("number out of range") {
        Some("number")
    } else if m.starts_with("recursion limit exceeded") {
        Some("depth")
    } else {
        None
    }
}

// =====================================================================================
// json_scan
// =====================================================================================

pub mod json_scan {
    use mcp_rs_core::wire::json::{
        from_json, parse, Kind, Limits, RawJson, ScanError, MAX_DEPTH_LIMIT,
    };
    use serde_json::Value;

    /// What a scan run saw (for the replay test's counts).
    #[derive(Debug, Default, Clone, Copy)]
    pub struct Outcome {
        pub accepted: bool,
        pub compared: bool,
    }

    /// Our nesting depth, walking the views (no recursion limit issue: validated ≤ 128).
    fn our_depth(v: RawJson<'_>) -> usize {
        match v.kind() {
            Kind::Array => 1 + v.elements().unwrap().map(our_depth).max().unwrap_or(0),
            Kind::Object => {
                1 + v
                    .members()
                    .unwrap()
                    .map(|(_, x)| our_depth(x))
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    fn has_infinite(v: RawJson<'_>) -> bool {
        match v.kind() {
            Kind::Number => v.as_f64().is_some_and(|f| f.is_infinite()),
            Kind::Array => v.elements().unwrap().any(has_infinite),
            Kind::Object => v.members().unwrap().any(|(_, x)| has_infinite(x)),
            _ => false,
        }
    }

    fn same_number(ours: RawJson<'_>, theirs: &serde_json::Number) {
        let text = ours.as_str();
        let f = ours
            .as_f64()
            .unwrap_or_else(|| panic!("number {text} has no f64"));
        let g = theirs.as_f64().expect("serde number as f64");
        assert_eq!(
            f.to_bits(),
            g.to_bits(),
            "number {text}: ours {f:?} serde {g:?}"
        );
        if let Some(u) = theirs.as_u64() {
            assert_eq!(ours.as_u64(), Some(u), "u64 of {text}");
        }
        if let Some(i) = theirs.as_i64() {
            assert_eq!(ours.as_i64(), Some(i), "i64 of {text}");
        }
        let integer = !text.contains(['.', 'e', 'E']);
        if !integer {
            assert_eq!(ours.as_i64(), None, "{text}");
            assert_eq!(ours.as_u64(), None, "{text}");
        }
    }

    fn check_string(ours: RawJson<'_>, theirs: &str) {
        let s = ours.as_string().expect("string view");
        let decoded: String = s.chars().collect();
        assert_eq!(decoded, theirs, "decoded string of {}", ours.as_str());
        assert_eq!(s.decoded_len(), theirs.len());
        assert!(s.eq_str(theirs));
        assert!(!s.eq_str(&format!("{theirs}x")));
        if let Some(last) = theirs.chars().last() {
            let shorter = &theirs[..theirs.len() - last.len_utf8()];
            assert!(!s.eq_str(shorter));
        }
        let mut buf = vec![0u8; theirs.len()];
        assert_eq!(s.decode_into(&mut buf), Ok(theirs));
        if !theirs.is_empty() {
            let mut short = vec![0u8; theirs.len() - 1];
            assert_eq!(
                s.decode_into(&mut short).map(|_| ()).unwrap_err().required,
                theirs.len()
            );
        }
        assert_eq!(s.has_escapes(), s.raw().contains('\\'));
        match s.as_borrowed() {
            Some(b) => {
                assert!(!s.has_escapes());
                assert_eq!(b, theirs);
            }
            None => assert!(s.has_escapes()),
        }
    }

    /// Structural comparison of our view with serde_json's value.
    fn compare(ours: RawJson<'_>, theirs: &Value) {
        match theirs {
            Value::Null => {
                assert_eq!(ours.kind(), Kind::Null);
                assert!(ours.is_null());
            }
            Value::Bool(b) => {
                assert_eq!(ours.kind(), Kind::Bool);
                assert_eq!(ours.as_bool(), Some(*b));
            }
            Value::Number(n) => {
                assert_eq!(ours.kind(), Kind::Number);
                same_number(ours, n);
            }
            Value::String(s) => {
                assert_eq!(ours.kind(), Kind::String);
                check_string(ours, s);
            }
            Value::Array(a) => {
                assert_eq!(ours.kind(), Kind::Array);
                let elements: Vec<RawJson<'_>> = ours.elements().expect("elements").collect();
                assert_eq!(elements.len(), a.len(), "array length of {}", ours.as_str());
                for (i, (o, t)) in elements.iter().zip(a).enumerate() {
                    compare(*o, t);
                    assert_eq!(ours.index(i).map(|x| x.as_str()), Some(o.as_str()));
                }
                assert!(ours.index(a.len()).is_none());
            }
            Value::Object(m) => {
                assert_eq!(ours.kind(), Kind::Object);
                let members: Vec<(String, RawJson<'_>)> = ours
                    .members()
                    .expect("members")
                    .map(|(k, v)| (k.chars().collect(), v))
                    .collect();
                // serde_json keeps the last of duplicate keys.
                let mut last: std::collections::BTreeMap<&str, RawJson<'_>> = Default::default();
                for (k, v) in &members {
                    last.insert(k, *v);
                }
                assert_eq!(last.len(), m.len(), "distinct keys of {}", ours.as_str());
                for (k, t) in m {
                    let o = last
                        .get(k.as_str())
                        .unwrap_or_else(|| panic!("key {k:?} missing"));
                    compare(*o, t);
                    let first = members
                        .iter()
                        .find(|(mk, _)| mk == k)
                        .map(|(_, v)| v.as_str());
                    assert_eq!(ours.get(k).map(|v| v.as_str()), first, "get({k:?})");
                }
            }
        }
        assert!(ours.as_string().is_some() == theirs.is_string());
        assert!(ours.members().is_some() == theirs.is_object());
        assert!(ours.elements().is_some() == theirs.is_array());
    }

    /// Numbers equal by value (serde's `Value::Number` distinguishes `-0` (f64) from `0`).
    fn same_value(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
                    || (x.as_f64() == Some(0.0) && y.as_f64() == Some(0.0))
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
            }
            _ => a == b,
        }
    }

    /// Any bytes: never panics; the depth bound is exact and monotonic; when we accept,
    /// serde_json accepts the same structure; when we reject and serde_json accepts, the
    /// reason is the documented depth bound.
    pub fn check(data: &[u8]) -> Outcome {
        let mut outcome = Outcome::default();
        // 1. An arbitrary depth limit (clamped to 128) against the maximum one.
        let d = data.first().map_or(0, |b| b % 140);
        let limited = parse(data, Limits { max_depth: d });
        let full = parse(
            data,
            Limits {
                max_depth: MAX_DEPTH_LIMIT,
            },
        );
        for r in [&limited, &full] {
            if let Err(e) = r {
                if let Some(off) = e.offset() {
                    assert!(
                        off <= data.len(),
                        "{e:?} offset beyond input of {} bytes",
                        data.len()
                    );
                }
                let _ = format!("{e}");
            }
        }
        match (&limited, &full) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.as_str(), b.as_str());
                assert!(our_depth(*a) <= usize::from(d.min(MAX_DEPTH_LIMIT)));
            }
            (Err(ScanError::TooDeep { limit, offset }), r) => {
                assert_eq!(*limit, d.min(MAX_DEPTH_LIMIT), "limit in force");
                assert!(
                    matches!(data.get(*offset), Some(b'[' | b'{')),
                    "TooDeep offset {offset} is not a bracket"
                );
                if let Ok(v) = r {
                    assert!(
                        our_depth(*v) > usize::from(*limit),
                        "TooDeep but depth fits"
                    );
                }
            }
            (Err(e1), Err(e2)) => {
                // Below the limit the scan took the same path.
                assert_eq!(e1, e2, "different errors with limits {d} and 128");
            }
            (Err(e), Ok(_)) => panic!("rejected with limit {d} ({e:?}) but accepted with 128"),
            (Ok(_), Err(e)) => panic!("accepted with limit {d} but rejected with 128 ({e:?})"),
        }

        // 2. Differential against serde_json.
        let theirs = serde_json::from_slice::<Value>(data);
        match (full, theirs) {
            (Ok(v), Ok(t)) => {
                outcome.accepted = true;
                outcome.compared = true;
                // The view is the document without surrounding whitespace.
                assert_eq!(
                    v.as_str(),
                    super::raw::trim(std::str::from_utf8(data).unwrap())
                );
                compare(v, &t);
                // The serde Deserializer over our views builds the same value.
                let mut scratch = vec![0u8; data.len()];
                let ours: Value =
                    from_json(v, &mut scratch).unwrap_or_else(|e| panic!("from_json: {e}"));
                assert!(same_value(&ours, &t), "from_json gave {ours} for {t}");
            }
            (Ok(v), Err(e)) => {
                outcome.accepted = true;
                match super::serde_bound(&e) {
                    Some("depth") => assert!(
                        our_depth(v) >= 128,
                        "serde depth error at depth {}",
                        our_depth(v)
                    ),
                    Some(_) => assert!(has_infinite(v), "serde: {e} but no number overflows f64"),
                    None => panic!("we accept, serde_json rejects: {e}"),
                }
            }
            (Err(e), Ok(_)) => {
                assert!(
                    matches!(e, ScanError::TooDeep { .. }),
                    "we reject ({e:?}) a text serde_json accepts"
                );
            }
            (Err(_), Err(_)) => {}
        }
        outcome
    }
}

// =====================================================================================
// json_roundtrip
// =====================================================================================

pub mod json_roundtrip {
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

        fn apply(
            &mut self,
            w: &mut JsonWriter<'_>,
            op: &WOp,
            saved: &mut Option<(Checkpoint, State)>,
        ) {
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
                let doc: Value = serde_json::from_str(s)
                    .unwrap_or_else(|err| panic!("embedded text {s:?}: {err}"));
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
        let v: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("invalid JSON written ({e}): {text}"));
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
}

// =====================================================================================
// framing
// =====================================================================================

pub mod framing {
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
}

// =====================================================================================
// session
// =====================================================================================

pub mod session {
    use super::{depth_of, raw, serde_bound};
    use arbitrary::Arbitrary;
    use mcp_rs_core::model::completion::{
        CompleteRequest, CompletionRef, CompletionResult, Completions,
    };
    use mcp_rs_core::model::input::InputRequests;
    use mcp_rs_core::model::prompts::{
        GetPromptRequest, Prompt, PromptArgument, PromptResult, PromptSet,
    };
    use mcp_rs_core::model::resources::{
        ReadRequest, ReadResult, Resource, ResourceSet, ResourceTemplate,
    };
    use mcp_rs_core::wire::framing::{Frame as LineFrame, LineFramer};
    use mcp_rs_core::{
        Annotations, CacheScope, CallError, CallRequest, CallToken, ClientCaps, ClientMethod,
        ClientOutcome, Config, Content, Dispatch, Event, ListKind, LogLevel, ProtocolVersion,
        Request, ResourceLink, Role, Route, ServerHandler, ServerInfo, Session, SessionStorage,
        Tool, ToolResult, ToolSet, Transmit,
    };
    use serde_json::Value;
    use std::cell::RefCell;
    use std::collections::{HashMap, HashSet};
    use std::rc::Rc;

    pub const MODERN: &str = "2026-07-28";

    // ---------------------------------------------------------------- grammar

    #[derive(Arbitrary, Debug, Clone)]
    pub enum Rev {
        R0,
        R1,
        R2,
        R3,
        R4,
        Unknown,
        Empty,
        Number,
        /// A long escaped version string: `-32022` truncates it in its message and data.
        Long(LongGen),
    }

    impl Rev {
        fn text(&self) -> String {
            match self {
                Rev::Long(l) => l.text(),
                Rev::R0 => "\"2024-11-05\"".into(),
                Rev::R1 => "\"2025-03-26\"".into(),
                Rev::R2 => "\"2025-06-18\"".into(),
                Rev::R3 => "\"2025-11-25\"".into(),
                Rev::R4 => "\"2026-07-28\"".into(),
                Rev::Unknown => "\"1999-01-01\"".into(),
                Rev::Empty => "\"\"".into(),
                Rev::Number => "20250618".into(),
            }
        }
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum IdGen {
        Small(u8),
        Int(i64),
        Str(u8),
        Text(String),
        /// A 65-byte string id: too long to keep for a deferred call.
        Long,
        /// A 600-byte id: too long to echo in a small output buffer.
        Huge,
        Null,
        Float,
        Exp,
        Bool,
        Obj,
        NegZero,
        BigInt,
        /// The id of a call in flight (duplicate ids, cancellation targets).
        Live(u8),
        /// `"\u0072N"`: equal by value to `Str(N)`, different on the wire.
        Escaped(u8),
    }

    impl IdGen {
        fn text(&self, g: &Gen<'_>) -> String {
            match self {
                IdGen::Small(n) => n.to_string(),
                IdGen::Int(i) => i.to_string(),
                IdGen::Str(n) => format!("\"r{n}\""),
                IdGen::Text(s) => {
                    serde_json::to_string(&s.chars().take(40).collect::<String>()).unwrap()
                }
                IdGen::Long => format!("\"{}\"", "L".repeat(63)),
                IdGen::Huge => format!("\"{}\"", "H".repeat(600)),
                IdGen::Null => "null".into(),
                IdGen::Float => "1.5".into(),
                IdGen::Exp => "1e3".into(),
                IdGen::Bool => "true".into(),
                IdGen::Obj => "{\"a\":1}".into(),
                IdGen::NegZero => "-0".into(),
                IdGen::BigInt => "123456789012345678901234567890".into(),
                IdGen::Live(k) => match g.live_ids.len() {
                    0 => "7".into(),
                    n => g.live_ids[usize::from(*k) % n].clone(),
                },
                IdGen::Escaped(n) => format!("\"\\u0072{n}\""),
            }
        }
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum LevelGen {
        L(u8),
        Bad(String),
        Number,
    }

    const LEVELS: [&str; 8] = [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];

    impl LevelGen {
        fn text(&self) -> String {
            match self {
                LevelGen::L(n) => format!("\"{}\"", LEVELS[usize::from(*n) % 8]),
                LevelGen::Bad(s) => {
                    serde_json::to_string(&s.chars().take(16).collect::<String>()).unwrap()
                }
                LevelGen::Number => "3".into(),
            }
        }
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum CursorGen {
        Absent,
        Null,
        Seen(u8),
        Tampered(u8, u8),
        Garbage(String),
        Number,
        Empty,
    }

    impl CursorGen {
        fn text(&self, g: &Gen<'_>) -> Option<String> {
            let seen = |k: &u8| g.cursors.get(usize::from(*k) % g.cursors.len().max(1));
            match self {
                CursorGen::Absent => None,
                CursorGen::Null => Some("null".to_string()),
                CursorGen::Seen(k) => seen(k).map(|c| jstr(c)),
                CursorGen::Tampered(k, at) => seen(k).map(|c| {
                    let mut b = c.clone().into_bytes();
                    let i = usize::from(*at) % b.len().max(1);
                    if let Some(x) = b.get_mut(i) {
                        *x = if *x == b'A' { b'B' } else { b'A' };
                    }
                    jstr(&String::from_utf8_lossy(&b))
                }),
                CursorGen::Garbage(s) => Some(jstr(s)),
                CursorGen::Number => Some("12".into()),
                CursorGen::Empty => Some("\"\"".into()),
            }
        }
    }

    /// A tool or prompt name (`names` is the list it is drawn from).
    #[derive(Arbitrary, Debug, Clone)]
    pub enum ToolGen {
        Known(u8),
        Unknown(String),
        /// A known name with its first character written as a `\u` escape.
        Escaped(u8),
        NotString,
        /// A long unknown name full of escapes: its error message is truncated.
        Long(LongGen),
    }

    impl ToolGen {
        fn text(&self, names: &[&str]) -> String {
            match self {
                ToolGen::Known(i) => jstr(names[usize::from(*i) % names.len()]),
                ToolGen::Unknown(s) => jstr(s),
                ToolGen::Escaped(i) => {
                    let n = names[usize::from(*i) % names.len()];
                    format!("\"\\u{:04x}{}\"", n.as_bytes()[0], &n[1..])
                }
                ToolGen::NotString => "42".into(),
                ToolGen::Long(l) => l.text(),
            }
        }

        /// The name as sent (quotes included), if it is a string that names nothing in
        /// `names`.
        fn unknown(&self, names: &[&str]) -> Option<String> {
            let raw = self.text(names);
            let name = decode_str(&raw)?;
            (!names.contains(&name.as_str())).then_some(raw)
        }

        fn known(&self) -> bool {
            matches!(self, ToolGen::Known(_) | ToolGen::Escaped(_))
        }
    }

    /// A long string of escapes and multi-byte characters (`\uD83D\uDE00`, `\"`, `\\`,
    /// ...), so that error messages and `data` must be truncated between characters.
    #[derive(Arbitrary, Debug, Clone)]
    pub struct LongGen {
        pub unit: u8,
        pub count: u16,
        pub mixed: bool,
    }

    const UNITS: [&str; 10] = [
        "\\uD83D\\uDE00",
        "\\\"",
        "\\\\",
        "a",
        "\u{e9}",
        "\\n",
        "\\u0000",
        "\\/",
        "\u{1F600}",
        "\\u00e9",
    ];

    impl LongGen {
        /// The JSON string, quotes included: 40 to 439 characters.
        fn text(&self) -> String {
            let n = 40 + usize::from(self.count) % 400;
            let mut s = String::from("\"");
            for i in 0..n {
                let u = usize::from(self.unit) + if self.mixed { i } else { 0 };
                s.push_str(UNITS[u % UNITS.len()]);
            }
            s.push('"');
            s
        }
    }

    /// A resource URI.
    #[derive(Arbitrary, Debug, Clone)]
    pub enum UriGen {
        Listed(u8),
        /// A template filled with (the alphanumerics of) a string.
        Templated(u8, String),
        /// `test://slow/<seq>`: a templated read the handler defers.
        Slow,
        /// A listed URI with its first character as a `\u` escape.
        Escaped(u8),
        Unknown(String),
        /// Never listed, never matching a template: not found, `data.uri` truncated.
        Long(LongGen),
        NotString,
    }

    impl UriGen {
        fn text(&self, g: &mut Gen<'_>) -> String {
            match self {
                UriGen::Listed(i) => jstr(RESOURCES[usize::from(*i) % RESOURCES.len()].0),
                UriGen::Templated(i, v) => {
                    let t = TEMPLATES[usize::from(*i) % TEMPLATES.len()].0;
                    let mut v: String = v
                        .chars()
                        .filter(char::is_ascii_alphanumeric)
                        .take(12)
                        .collect();
                    if v.is_empty() {
                        v.push('x');
                    }
                    let mut out = String::new();
                    let mut rest = t;
                    while let Some(open) = rest.find('{') {
                        out.push_str(&rest[..open]);
                        out.push_str(&v);
                        rest = &rest[rest[open..].find('}').map_or(rest.len(), |c| open + c + 1)..];
                    }
                    out.push_str(rest);
                    jstr(&out)
                }
                UriGen::Slow => {
                    g.seq += 1;
                    jstr(&format!("test://slow/{}", g.seq))
                }
                UriGen::Escaped(i) => {
                    let u = RESOURCES[usize::from(*i) % RESOURCES.len()].0;
                    let first = u.chars().next().unwrap_or('x');
                    format!(
                        "\"\\u{:04x}{}",
                        u32::from(first),
                        &jstr(u)[1 + first.len_utf8()..]
                    )
                }
                UriGen::Unknown(s) => jstr(s),
                UriGen::Long(l) => l.text(),
                UriGen::NotString => "[]".into(),
            }
        }
    }

    /// `requestState` of a retry.
    #[derive(Arbitrary, Debug, Clone)]
    pub enum StateGen {
        None,
        /// One the server sealed earlier (valid if it is for this method and target and has
        /// not expired).
        Seen(u8),
        /// One the server sealed, with one character replaced.
        Tampered(u8, u8),
        /// One the server sealed, its first character written as `\u0073`.
        Escaped(u8),
        Garbage(String),
        NotString(bool),
    }

    impl StateGen {
        fn text(&self, g: &Gen<'_>) -> Option<String> {
            let seen = |k: &u8| {
                g.states
                    .get(usize::from(*k) % g.states.len().max(1))
                    .cloned()
            };
            match self {
                StateGen::None => None,
                StateGen::Seen(k) => Some(jstr(&seen(k).unwrap_or_else(|| "s1.none".into()))),
                StateGen::Tampered(k, at) => {
                    let mut b = seen(k).unwrap_or_else(|| "s1.none".into()).into_bytes();
                    let i = usize::from(*at) % b.len();
                    b[i] = if b[i] == b'A' { b'B' } else { b'A' };
                    Some(jstr(&String::from_utf8_lossy(&b)))
                }
                StateGen::Escaped(k) => {
                    let s = seen(k).unwrap_or_else(|| "s1.none".into());
                    Some(format!("\"\\u0073{}\"", &s[1..]))
                }
                StateGen::Garbage(s) => Some(jstr(s)),
                StateGen::NotString(true) => Some("null".into()),
                StateGen::NotString(false) => Some("5".into()),
            }
        }
    }

    /// `inputResponses` of a retry: absent, an object of result objects, or invalid (null,
    /// not an object, an entry that is not an object).
    fn responses_text(r: u8) -> Option<String> {
        match r % 8 {
            1 => Some(r#"{"q":{"action":"accept","content":{"name":"x"}}}"#.into()),
            2 => Some("null".into()),
            3 => Some("[1]".into()),
            4 => Some(r#"{"q":12345}"#.into()),
            _ => None,
        }
    }

    /// Whether `responses_text` gives something the server accepts (absent, or an object
    /// of objects).
    fn responses_ok(r: u8) -> bool {
        !matches!(r % 8, 2..=4)
    }

    /// `prompts/get` arguments.
    #[derive(Arbitrary, Debug, Clone)]
    pub enum PromptArgsGen {
        Absent,
        Full(String),
        MissingRequired,
        NonString,
        NotObject,
        Null,
    }

    /// `completion/complete` reference.
    #[derive(Arbitrary, Debug, Clone)]
    pub enum RefGen {
        Prompt(ToolGen),
        Template(u8),
        Listed(u8),
        Uri(UriGen),
        BadType,
        NotObject,
        Missing,
    }

    /// `completion/complete` argument value.
    #[derive(Arbitrary, Debug, Clone)]
    pub enum ValueGen {
        Text(String),
        /// More values than a result may carry.
        Many,
        /// `slow<seq>`: deferred by the handler.
        Slow,
        NotString,
    }

    /// The id a client response answers.
    #[derive(Arbitrary, Debug, Clone)]
    pub enum OutIdGen {
        /// A server-to-client request still waiting.
        Pending(u8),
        /// One answered, timed out or of a call that ended (late).
        Stale(u8),
        /// Any number (usually wrong).
        Other(u32),
        /// A waiting one written as a string (not an id the server issued).
        Quoted(u8),
        Zero,
    }

    impl OutIdGen {
        fn text(&self, g: &Gen<'_>) -> String {
            let of = |v: &[u32], k: &u8| v.get(usize::from(*k) % v.len().max(1)).copied();
            match self {
                OutIdGen::Pending(k) => of(&g.pending_out, k).unwrap_or(1).to_string(),
                OutIdGen::Stale(k) => of(g.stale_out, k).unwrap_or(2).to_string(),
                OutIdGen::Other(n) => n.to_string(),
                OutIdGen::Quoted(k) => format!("\"{}\"", of(&g.pending_out, k).unwrap_or(1)),
                OutIdGen::Zero => "0".into(),
            }
        }
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum ArgsGen {
        Absent,
        Null,
        Marker,
        Text(String),
        Big(u16),
        NotObject,
        Deep(u8),
        Add(f64, f64),
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum CancelGen {
        Live(u8),
        Id(IdGen),
        Missing,
        NotObject,
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum Body {
        Initialize {
            rev: Rev,
            caps: u8,
            shape: u8,
        },
        Initialized,
        Ping,
        Discover,
        ToolsList {
            cursor: CursorGen,
        },
        ToolsCall {
            tool: ToolGen,
            args: ArgsGen,
            progress: Option<IdGen>,
            state: StateGen,
            responses: u8,
        },
        SetLevel {
            level: LevelGen,
        },
        Cancel {
            target: CancelGen,
        },
        Other {
            method: u8,
        },
        Reply {
            error: bool,
        },
        /// `tools/list` (0), `prompts/list`, `resources/list`, `resources/templates/list`: a
        /// cursor seen earlier may be of another list.
        List {
            kind: u8,
            cursor: CursorGen,
        },
        Read {
            uri: UriGen,
            state: StateGen,
            responses: u8,
        },
        Subscribe {
            uri: UriGen,
            on: bool,
        },
        GetPrompt {
            prompt: ToolGen,
            args: PromptArgsGen,
            state: StateGen,
            responses: u8,
        },
        Complete {
            reference: RefGen,
            argument: u8,
            value: ValueGen,
            context: Option<u8>,
        },
        /// `subscriptions/listen`: bits 0-2 ask for tools, prompts, resources; bit 3 adds an
        /// explicit `false`, bit 4 an unknown filter, bit 5 makes `notifications` invalid,
        /// bit 6 leaves `params` out.
        Listen {
            filter: u8,
        },
        /// A client response to a server-to-client request (`Session::request`).
        Response {
            to: OutIdGen,
            outcome: u8,
        },
        /// A long method name with escapes (-32601 truncates it).
        LongMethod(LongGen),
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum MetaGen {
        None,
        Legacy,
        Modern {
            rev: Rev,
            caps: u8,
            level: Option<LevelGen>,
            shape: u8,
        },
        Modern2 {
            caps: u8,
        },
        NotObject,
        CapsOnly,
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum Envelope {
        Plain,
        Plain2,
        Plain3,
        Spaced,
        Jsonrpc10,
        NoJsonrpc,
        JsonrpcNumber,
        JsonrpcEscaped,
        ParamsArray,
        ParamsString,
        ParamsNull,
        DupId,
        DupMethod,
        MethodNumber,
        WithResult,
        EscapedMethodKey,
        /// `"\u0069d"`: still the member `id` (see
        /// `fuzz_regressions::escaped_id_key_is_still_a_request`).
        EscapedIdKey,
        ExtraMember,
        Reordered,
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub struct Msg {
        pub id: Option<IdGen>,
        pub body: Body,
        pub meta: MetaGen,
        pub env: Envelope,
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum ResultGen {
        Text(String),
        All,
        Structured(f64),
        StructuredRaw(String),
        Error(String),
        Misuse,
        Big(u16),
        Empty,
        /// `input_required` (2026-07-28): a sealed state or not; bits of `asks`: elicit,
        /// sample, roots, invalid raw JSON.
        InputRequired {
            state: bool,
            asks: u8,
        },
        /// The completer of another kind of request (or `close_subscription`).
        WrongKind(u8),
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub enum SOp {
        Send {
            msg: Msg,
            take: u8,
        },
        Batch {
            msgs: Vec<Msg>,
            take: u8,
        },
        Raw(Vec<u8>),
        Truncated {
            msg: Msg,
            cut: u16,
        },
        Stream {
            msgs: Vec<Msg>,
            chunk: u8,
            max_line: u16,
            take: u8,
        },
        Complete {
            pick: u8,
            result: ResultGen,
        },
        Fail {
            pick: u8,
            code: i32,
            message: String,
        },
        Progress {
            pick: u8,
            progress: f64,
            total: Option<f64>,
            message: Option<String>,
        },
        Log {
            pick: Option<u8>,
            level: u8,
            logger: Option<String>,
            data: String,
        },
        ToolsChanged,
        Oversized {
            limit: u16,
        },
        /// `Session::request` from a call: sampling, elicitation or roots.
        Request {
            pick: u8,
            method: u8,
            timeout: u16,
            bad: bool,
        },
        /// Time passes (`handle_timeout`); `far` goes beyond the state TTL.
        Advance {
            ms: u16,
            far: bool,
        },
        /// `Session::list_changed` of a list kind.
        ListChanged {
            kind: u8,
        },
        /// `Session::resource_updated`.
        ResourceUpdated {
            uri: u8,
        },
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub struct CfgGen {
        pub cap: u8,
        pub out: u16,
        pub page: u8,
        pub batch: u8,
        pub depth: u8,
        pub list_changed: bool,
        pub level: u8,
        pub ttl: u32,
        pub private: bool,
        /// `state_ttl_ms` of sealed `requestState`, in 16 ms units (+1).
        pub state_ttl: u16,
        /// 240 and above: a server with tools only (no resources, prompts, completions).
        pub offer: u8,
    }

    #[derive(Arbitrary, Debug, Clone)]
    pub struct Input {
        pub cfg: CfgGen,
        pub ops: Vec<SOp>,
    }

    /// What rendering needs from the running model.
    pub struct Gen<'a> {
        live_ids: Vec<String>,
        cursors: &'a [String],
        /// `requestState`s the server sealed.
        states: Vec<String>,
        /// Ids of server-to-client requests waiting for a response, and of earlier ones.
        pending_out: Vec<u32>,
        stale_out: &'a [u32],
        /// The session negotiated a legacy revision (legacy requests are admitted).
        initialized: bool,
        /// The server offers tools only.
        minimal: bool,
        seq: u64,
        /// What the replies to the rendered requests must be, by raw id (see [`Claim`]).
        claims: Vec<(String, Claim)>,
    }

    /// A property of the reply to one request, checked when that reply comes.
    #[derive(Debug, Clone)]
    pub enum Claim {
        /// Rendered valid up to its `requestState` (envelope, id, `_meta`, target, arguments
        /// and `inputResponses`): if the state is refused, the error is exactly -32602
        /// [`INVALID_STATE`].
        StrictState,
        /// Exactly this error: the code, and the message in full or (when the detail did not
        /// fit the output) without its detail; `data` at a pointer, if `data` is present.
        Fault {
            code: i64,
            full: String,
            bare: String,
            data: Option<(&'static str, String)>,
        },
        /// The request carries a `requestState` the server must refuse (tampered, foreign,
        /// expired, escaped, not a string): never a result, never deferred.
        BadState,
        /// The request carries a valid `requestState`: never refused for it.
        GoodState,
    }

    /// The message of the -32602 for a refused `requestState`.
    pub const INVALID_STATE: &str =
        "Invalid requestState: tampered, expired or not issued by this server";

    /// A detail as the server truncates a JSON string (`raw`, quotes included): at most
    /// `max` characters (an escape, or an escaped surrogate pair, is one) and at most
    /// `4 * max` bytes of escaped text, decoded, after `prefix`, then `...` if cut.
    fn truncated(prefix: &str, raw: &str, max: usize, dots: bool) -> String {
        let content = &raw[1..raw.len() - 1];
        let b = content.as_bytes();
        let (mut i, mut count, mut cut) = (0, 0, false);
        while i < b.len() {
            let step = match (b[i], b.get(i + 1)) {
                (b'\\', Some(b'u'))
                    if matches!(b[i + 2], b'd' | b'D')
                        && matches!(b[i + 3].to_ascii_lowercase(), b'8'..=b'b') =>
                {
                    12
                }
                (b'\\', Some(b'u')) => 6,
                (b'\\', _) => 2,
                (c, _) if c < 0x80 => 1,
                (c, _) if c < 0xE0 => 2,
                (c, _) if c < 0xF0 => 3,
                _ => 4,
            };
            if count == max || i + step > 4 * max {
                cut = true;
                break;
            }
            i += step;
            count += 1;
        }
        let head = decode_str(&format!("\"{}\"", &content[..i])).expect("a whole-character prefix");
        format!("{prefix}{head}{}", if cut && dots { "..." } else { "" })
    }

    fn caps_obj(bits: u8) -> String {
        let names = ["sampling", "elicitation", "roots", "experimental"];
        let items: Vec<String> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, n)| format!("\"{n}\":{{}}"))
            .collect();
        format!("{{{}}}", items.join(","))
    }

    fn obj(members: &[(String, String)]) -> String {
        let items: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        format!("{{{}}}", items.join(","))
    }

    fn jstr(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    pub const TOOL_NAMES: [&str; 23] = [
        "echo",
        "add",
        "all_content",
        "fail",
        "misuse",
        "slow",
        "slow2",
        "needs_sampling",
        "needs_roots",
        "big",
        "extra_0",
        "extra_1",
        "extra_2",
        "extra_3",
        "extra_4",
        "extra_5",
        "extra_6",
        "extra_7",
        "extra_8",
        "extra_9",
        "wizard",
        "wizard_bare",
        "slow_wizard",
    ];

    pub const PROMPT_NAMES: [&str; 9] = [
        "greet", "wizard", "slow", "plain", "p_0", "p_1", "p_2", "p_3", "p_4",
    ];

    /// Listed resources: URI, name, binary.
    pub const RESOURCES: [(&str, &str, bool); 10] = [
        ("test://static/a", "a", false),
        ("test://static/b", "b", true),
        ("test://ask", "ask", false),
        ("file:///caf%C3%A9", "cafe", false),
        ("test://static/c%20d", "c d", false),
        ("test://r/0", "r0", false),
        ("test://r/1", "r1", false),
        ("test://r/2", "r2", false),
        ("test://r/3", "r3", false),
        ("test://r/4", "r4", false),
    ];

    /// Resource templates: URI template, name.
    pub const TEMPLATES: [(&str, &str); 6] = [
        ("test://logs/{date}", "logs"),
        ("test://slow/{n}", "slow"),
        ("test://items/{id}/{part}", "items"),
        ("test://t0/{x}", "t0"),
        ("test://t1/{x}", "t1"),
        ("test://t2/{x}.txt", "t2"),
    ];

    const LIST_METHODS: [&str; 4] = [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ];

    const COMPLETE_ARGS: [&str; 6] = ["name", "style", "date", "id", "n", "x"];

    const SAMPLING_PARAMS: &str =
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}"#;
    const ELICIT_SCHEMA: &str =
        r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#;
    const ELICIT_PARAMS: &str = r#"{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}"#;

    const OTHER_METHODS: [&str; 10] = [
        "resources/list",
        "prompts/list",
        "completion/complete",
        "resources/subscribe",
        "tools\\/list",
        "",
        "TOOLS/LIST",
        "notifications/progress",
        "notifications/unknown",
        "initialize ",
    ];

    impl Msg {
        /// The message as one line of JSON text (never contains a raw newline).
        pub fn render(&self, g: &mut Gen<'_>) -> String {
            let mut params: Vec<(String, String)> = Vec::new();
            let mut meta: Vec<(String, String)> = Vec::new();
            let mut has_params = true;
            // A response instead of a request: its member and value, and its id.
            let mut is_reply: Option<(&str, String)> = None;
            let mut reply_id: Option<String> = None;
            let mut raw_method: Option<String> = None;
            // Claims about the reply, kept if the envelope and id are valid (see `Claim`).
            let mut pending: Vec<Claim> = Vec::new();
            // The era a valid request is served in: 2026-07-28 (`true`), the negotiated
            // legacy revision (`false`), or `None` when `_meta` or the phase refuse it.
            let era = match &self.meta {
                MetaGen::Modern2 { .. } => Some(true),
                MetaGen::None | MetaGen::Legacy if g.initialized => Some(false),
                _ => None,
            };
            let method = match &self.body {
                Body::Initialize { rev, caps, shape } => {
                    match shape % 4 {
                        1 => {}
                        2 => has_params = false,
                        3 => params.push(("protocolVersion".into(), rev.text())),
                        _ => params.push(("protocolVersion".into(), rev.text())),
                    }
                    let c = if shape % 4 == 3 {
                        "5".to_string()
                    } else {
                        caps_obj(*caps)
                    };
                    params.push(("capabilities".into(), c));
                    params.push((
                        "clientInfo".into(),
                        r#"{"name":"fuzz","version":"1.0"}"#.into(),
                    ));
                    "initialize".to_string()
                }
                Body::Initialized => {
                    has_params = false;
                    "notifications/initialized".into()
                }
                Body::Ping => {
                    has_params = false;
                    "ping".into()
                }
                Body::Discover => "server/discover".into(),
                Body::ToolsList { cursor } => {
                    if let Some(c) = cursor.text(g) {
                        params.push(("cursor".into(), c));
                    }
                    "tools/list".into()
                }
                Body::List { kind, cursor } => {
                    if let Some(c) = cursor.text(g) {
                        params.push(("cursor".into(), c));
                    }
                    LIST_METHODS[usize::from(*kind) % LIST_METHODS.len()].into()
                }
                Body::ToolsCall {
                    tool,
                    args,
                    progress,
                    state,
                    responses,
                } => {
                    params.push(("name".into(), tool.text(&TOOL_NAMES)));
                    g.seq += 1;
                    let seq = g.seq;
                    let a = match args {
                        ArgsGen::Absent => None,
                        ArgsGen::Null => Some("null".to_string()),
                        ArgsGen::Marker => Some(format!("{{\"__seq\":{seq}}}")),
                        ArgsGen::Text(s) => {
                            Some(format!("{{\"__seq\":{seq},\"text\":{}}}", jstr(s)))
                        }
                        ArgsGen::Big(n) => Some(format!(
                            "{{\"__seq\":{seq},\"text\":\"{}\"}}",
                            "x".repeat(usize::from(*n) % 3000)
                        )),
                        ArgsGen::NotObject => Some("[1,2]".into()),
                        ArgsGen::Deep(d) => {
                            let d = usize::from(*d) % 48;
                            Some(format!(
                                "{{\"__seq\":{seq},\"deep\":{}{}}}",
                                "[".repeat(d),
                                "]".repeat(d)
                            ))
                        }
                        ArgsGen::Add(a, b) => Some(format!(
                            "{{\"__seq\":{seq},\"a\":{},\"b\":{}}}",
                            serde_json::to_string(a).unwrap(),
                            serde_json::to_string(b).unwrap()
                        )),
                    };
                    if let Some(a) = a {
                        params.push(("arguments".into(), a));
                    }
                    if let Some(p) = progress {
                        meta.push(("progressToken".into(), p.text(g)));
                    }
                    if let Some(st) = state.text(g) {
                        params.push(("requestState".into(), st));
                    }
                    if let Some(r) = responses_text(*responses) {
                        params.push(("inputResponses".into(), r));
                    }
                    if era.is_some() {
                        if let Some(name) = tool.unknown(&TOOL_NAMES) {
                            pending.push(Claim::Fault {
                                code: -32602,
                                full: truncated("Unknown tool: ", &name, 64, true),
                                bare: "Unknown tool".into(),
                                data: None,
                            });
                        } else if tool.known()
                            && !matches!(args, ArgsGen::NotObject | ArgsGen::Deep(_))
                            && responses_ok(*responses)
                        {
                            pending.push(Claim::StrictState);
                        }
                    }
                    "tools/call".into()
                }
                Body::SetLevel { level } => {
                    params.push(("level".into(), level.text()));
                    "logging/setLevel".into()
                }
                Body::Cancel { target } => {
                    match target {
                        CancelGen::Live(k) => {
                            params.push(("requestId".into(), IdGen::Live(*k).text(g)))
                        }
                        CancelGen::Id(id) => params.push(("requestId".into(), id.text(g))),
                        CancelGen::Missing => {}
                        CancelGen::NotObject => has_params = false,
                    }
                    params.push(("reason".into(), "\"fuzz\"".into()));
                    "notifications/cancelled".into()
                }
                Body::Other { method } => {
                    OTHER_METHODS[usize::from(*method) % OTHER_METHODS.len()].into()
                }
                Body::Reply { error } => {
                    is_reply = Some(if *error {
                        (
                            "error",
                            r#"{"code":-1,"message":"client error"}"#.to_string(),
                        )
                    } else {
                        ("result", "{}".to_string())
                    });
                    String::new()
                }
                Body::Response { to, outcome } => {
                    reply_id = Some(to.text(g));
                    is_reply = Some(match outcome % 6 {
                        0 => (
                            "result",
                            r#"{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}"#
                                .to_string(),
                        ),
                        1 => ("result", "{}".to_string()),
                        2 => ("result", r#"{"roots":[{"uri":"file:///x"}]}"#.to_string()),
                        3 => ("error", r#"{"code":-1,"message":"User rejected"}"#.to_string()),
                        4 => (
                            "error",
                            r#"{"code":-32601,"message":"caf\u00e9 \"q\"","data":[1]}"#.to_string(),
                        ),
                        _ => (
                            "result",
                            r#"{"action":"accept","content":{"name":"x"}}"#.to_string(),
                        ),
                    });
                    String::new()
                }
                Body::Read {
                    uri,
                    state,
                    responses,
                } => {
                    let text = uri.text(g);
                    params.push(("uri".into(), text.clone()));
                    if let Some(st) = state.text(g) {
                        params.push(("requestState".into(), st));
                    }
                    if let Some(r) = responses_text(*responses) {
                        params.push(("inputResponses".into(), r));
                    }
                    if let (Some(modern), false) = (era, g.minimal) {
                        let ok = responses_ok(*responses);
                        if !matches!(uri, UriGen::NotString) && ok {
                            pending.push(Claim::StrictState);
                        }
                        if let (UriGen::Long(_), StateGen::None, true) = (uri, state, ok) {
                            pending.push(Claim::Fault {
                                code: if modern { -32602 } else { -32002 },
                                full: "Resource not found".into(),
                                bare: "Resource not found".into(),
                                data: Some(("/uri", truncated("", &text, 256, false))),
                            });
                        }
                    }
                    "resources/read".into()
                }
                Body::Subscribe { uri, on } => {
                    params.push(("uri".into(), uri.text(g)));
                    if *on {
                        "resources/subscribe".into()
                    } else {
                        "resources/unsubscribe".into()
                    }
                }
                Body::GetPrompt {
                    prompt,
                    args,
                    state,
                    responses,
                } => {
                    params.push(("name".into(), prompt.text(&PROMPT_NAMES)));
                    g.seq += 1;
                    let seq = g.seq;
                    let a = match args {
                        PromptArgsGen::Absent => None,
                        PromptArgsGen::Null => Some("null".to_string()),
                        PromptArgsGen::Full(s) => Some(format!(
                            "{{\"name\":{},\"style\":\"short\",\"__seq\":\"{seq}\"}}",
                            jstr(&s.chars().take(20).collect::<String>())
                        )),
                        PromptArgsGen::MissingRequired => {
                            Some(format!("{{\"style\":\"x\",\"__seq\":\"{seq}\"}}"))
                        }
                        PromptArgsGen::NonString => Some("{\"name\":5}".into()),
                        PromptArgsGen::NotObject => Some("[1]".into()),
                    };
                    if let Some(a) = a {
                        params.push(("arguments".into(), a));
                    }
                    if let Some(st) = state.text(g) {
                        params.push(("requestState".into(), st));
                    }
                    if let Some(r) = responses_text(*responses) {
                        params.push(("inputResponses".into(), r));
                    }
                    if let (Some(_), false) = (era, g.minimal) {
                        let ok = responses_ok(*responses);
                        let greet = match prompt {
                            ToolGen::Known(i) | ToolGen::Escaped(i) => {
                                PROMPT_NAMES[usize::from(*i) % PROMPT_NAMES.len()] == "greet"
                            }
                            _ => false,
                        };
                        let stateless = matches!(state, StateGen::None);
                        if let Some(name) = prompt.unknown(&PROMPT_NAMES) {
                            pending.push(Claim::Fault {
                                code: -32602,
                                full: truncated("Unknown prompt: ", &name, 64, true),
                                bare: "Unknown prompt".into(),
                                data: None,
                            });
                        } else if prompt.known() && !matches!(args, PromptArgsGen::NotObject) && ok
                        {
                            pending.push(Claim::StrictState);
                            let missing = matches!(
                                args,
                                PromptArgsGen::Absent
                                    | PromptArgsGen::Null
                                    | PromptArgsGen::MissingRequired
                            );
                            if greet && stateless && missing {
                                pending.push(Claim::Fault {
                                    code: -32602,
                                    full: "Missing required argument: name".into(),
                                    bare: "Missing required argument".into(),
                                    data: None,
                                });
                            }
                            if stateless && matches!(args, PromptArgsGen::NonString) {
                                pending.push(Claim::Fault {
                                    code: -32602,
                                    full: "Prompt argument values must be strings: name".into(),
                                    bare: "Prompt argument values must be strings".into(),
                                    data: None,
                                });
                            }
                        }
                    }
                    "prompts/get".into()
                }
                Body::Complete {
                    reference,
                    argument,
                    value,
                    context,
                } => {
                    let r = match reference {
                        RefGen::Prompt(t) => Some(format!(
                            "{{\"type\":\"ref/prompt\",\"name\":{}}}",
                            t.text(&PROMPT_NAMES)
                        )),
                        RefGen::Template(i) => Some(format!(
                            "{{\"type\":\"ref/resource\",\"uri\":{}}}",
                            jstr(TEMPLATES[usize::from(*i) % TEMPLATES.len()].0)
                        )),
                        RefGen::Listed(i) => Some(format!(
                            "{{\"type\":\"ref/resource\",\"uri\":{}}}",
                            jstr(RESOURCES[usize::from(*i) % RESOURCES.len()].0)
                        )),
                        RefGen::Uri(u) => Some(format!(
                            "{{\"type\":\"ref/resource\",\"uri\":{}}}",
                            u.text(g)
                        )),
                        RefGen::BadType => Some(r#"{"type":"ref/tool","name":"echo"}"#.into()),
                        RefGen::NotObject => Some("\"greet\"".into()),
                        RefGen::Missing => None,
                    };
                    if let Some(r) = r {
                        params.push(("ref".into(), r));
                    }
                    let v = match value {
                        ValueGen::Text(s) => jstr(&s.chars().take(20).collect::<String>()),
                        ValueGen::Many => "\"many\"".into(),
                        ValueGen::Slow => {
                            g.seq += 1;
                            format!("\"slow{}\"", g.seq)
                        }
                        ValueGen::NotString => "3".into(),
                    };
                    let name = jstr(COMPLETE_ARGS[usize::from(*argument) % COMPLETE_ARGS.len()]);
                    params.push((
                        "argument".into(),
                        format!("{{\"name\":{name},\"value\":{v}}}"),
                    ));
                    match context.map(|c| c % 3) {
                        Some(0) => params
                            .push(("context".into(), r#"{"arguments":{"name":"ctx"}}"#.into())),
                        Some(1) => params.push(("context".into(), r#"{"arguments":5}"#.into())),
                        Some(_) => params.push(("context".into(), "\"nope\"".into())),
                        None => {}
                    }
                    if let (Some(_), false, false) =
                        (era, g.minimal, matches!(value, ValueGen::NotString))
                    {
                        match reference {
                            RefGen::Prompt(t) => {
                                if let Some(name) = t.unknown(&PROMPT_NAMES) {
                                    pending.push(Claim::Fault {
                                        code: -32602,
                                        full: truncated("Unknown prompt: ", &name, 64, true),
                                        bare: "Unknown prompt".into(),
                                        data: None,
                                    });
                                }
                            }
                            RefGen::Uri(UriGen::Long(l)) => {
                                pending.push(Claim::Fault {
                                    code: -32602,
                                    full: "Unknown resource template".into(),
                                    bare: "Unknown resource template".into(),
                                    data: Some(("/uri", truncated("", &l.text(), 256, false))),
                                });
                            }
                            _ => {}
                        }
                    }
                    "completion/complete".into()
                }
                Body::Listen { filter } => {
                    let keys = [
                        "toolsListChanged",
                        "promptsListChanged",
                        "resourcesListChanged",
                    ];
                    let mut n: Vec<(String, String)> = Vec::new();
                    for (i, k) in keys.iter().enumerate() {
                        if filter & (1 << i) != 0 {
                            n.push((k.to_string(), "true".into()));
                        } else if filter & 8 != 0 {
                            n.push((k.to_string(), "false".into()));
                        }
                    }
                    if filter & 16 != 0 {
                        n.push(("fooListChanged".into(), "true".into()));
                    }
                    let notifications = if filter & 32 != 0 {
                        "[]".to_string()
                    } else {
                        obj(&n)
                    };
                    if filter & 64 != 0 {
                        has_params = false;
                    } else {
                        params.push(("notifications".into(), notifications));
                    }
                    "subscriptions/listen".into()
                }
                Body::LongMethod(l) => {
                    if matches!(
                        self.meta,
                        MetaGen::None | MetaGen::Legacy | MetaGen::Modern2 { .. }
                    ) {
                        pending.push(Claim::Fault {
                            code: -32601,
                            full: truncated("Method not found: ", &l.text(), 64, true),
                            bare: "Method not found".into(),
                            data: None,
                        });
                    }
                    raw_method = Some(l.text());
                    String::new()
                }
            };
            match &self.meta {
                MetaGen::None | MetaGen::Legacy => {}
                MetaGen::Modern {
                    rev,
                    caps,
                    level,
                    shape,
                } => {
                    let s = shape % 6;
                    let v = if s == 3 {
                        "20260728".to_string()
                    } else {
                        rev.text()
                    };
                    if let (Rev::Long(l), false) = (rev, s == 3) {
                        let requested = l.text();
                        pending = vec![Claim::Fault {
                            code: -32022,
                            full: truncated("Unsupported protocol version: ", &requested, 32, true),
                            bare: "Unsupported protocol version".into(),
                            data: Some(("/requested", truncated("", &requested, 32, false))),
                        }];
                    }
                    meta.push(("io.modelcontextprotocol/protocolVersion".into(), v));
                    match s {
                        1 => {}
                        2 => meta.push((
                            "io.modelcontextprotocol/clientCapabilities".into(),
                            "[]".into(),
                        )),
                        _ => meta.push((
                            "io.modelcontextprotocol/clientCapabilities".into(),
                            caps_obj(*caps),
                        )),
                    }
                    if let Some(l) = level {
                        meta.push(("io.modelcontextprotocol/logLevel".into(), l.text()));
                    }
                }
                MetaGen::Modern2 { caps } => {
                    meta.push((
                        "io.modelcontextprotocol/protocolVersion".into(),
                        format!("\"{MODERN}\""),
                    ));
                    meta.push((
                        "io.modelcontextprotocol/clientCapabilities".into(),
                        caps_obj(*caps),
                    ));
                }
                MetaGen::NotObject => meta.push(("\u{0}".into(), String::new())),
                MetaGen::CapsOnly => meta.push((
                    "io.modelcontextprotocol/clientCapabilities".into(),
                    "{}".into(),
                )),
            }
            if !meta.is_empty() {
                has_params = true;
                let m = if meta.iter().any(|(k, _)| k == "\u{0}") {
                    "7".to_string()
                } else {
                    obj(&meta)
                };
                params.push(("_meta".into(), m));
            }

            let id = match reply_id {
                Some(r) => Some(r),
                None => self.id.as_ref().map(|i| i.text(g)),
            };
            let mut members: Vec<(String, String)> = vec![("jsonrpc".into(), "\"2.0\"".into())];
            if let Some(id) = &id {
                members.push(("id".into(), id.clone()));
            }
            let reply = is_reply.is_some();
            match is_reply {
                Some((member, value)) => members.push((member.into(), value)),
                None => {
                    members.push(("method".into(), raw_method.unwrap_or_else(|| jstr(&method))));
                    if has_params {
                        members.push(("params".into(), obj(&params)));
                    }
                }
            }
            let valid_env = matches!(
                self.env,
                Envelope::Plain
                    | Envelope::Plain2
                    | Envelope::Plain3
                    | Envelope::Spaced
                    | Envelope::ExtraMember
                    | Envelope::Reordered
            );
            let valid_id = matches!(
                self.id,
                Some(
                    IdGen::Small(_)
                        | IdGen::Int(_)
                        | IdGen::Str(_)
                        | IdGen::Text(_)
                        | IdGen::Escaped(_)
                )
            );
            if let (true, true, false, Some(id)) = (valid_env, valid_id, reply, &id) {
                g.claims
                    .extend(pending.into_iter().map(|c| (id.clone(), c)));
            }
            let set = |members: &mut Vec<(String, String)>, k: &str, v: &str| {
                if let Some(m) = members.iter_mut().find(|(mk, _)| mk == k) {
                    m.1 = v.into();
                }
            };
            let mut spaced = false;
            match self.env {
                Envelope::Plain | Envelope::Plain2 | Envelope::Plain3 => {}
                Envelope::Spaced => spaced = true,
                Envelope::Jsonrpc10 => set(&mut members, "jsonrpc", "\"1.0\""),
                Envelope::NoJsonrpc => {
                    members.remove(0);
                }
                Envelope::JsonrpcNumber => set(&mut members, "jsonrpc", "2.0"),
                Envelope::JsonrpcEscaped => set(&mut members, "jsonrpc", "\"2\\u002e0\""),
                Envelope::ParamsArray => set(&mut members, "params", "[1]"),
                Envelope::ParamsString => set(&mut members, "params", "\"p\""),
                Envelope::ParamsNull => set(&mut members, "params", "null"),
                Envelope::DupId => members.push(("id".into(), "99".into())),
                Envelope::DupMethod => members.push(("method".into(), "\"ping\"".into())),
                Envelope::MethodNumber => set(&mut members, "method", "7"),
                Envelope::WithResult => members.push(("result".into(), "{}".into())),
                Envelope::EscapedMethodKey => {
                    if let Some(m) = members.iter_mut().find(|(k, _)| k == "method") {
                        m.0 = "\\u006dethod".into();
                    }
                }
                Envelope::EscapedIdKey => {
                    if let Some(m) = members.iter_mut().find(|(k, _)| k == "id") {
                        m.0 = "\\u0069d".into();
                    }
                }
                Envelope::ExtraMember => members.push(("extra".into(), "[{\"x\":null}]".into())),
                Envelope::Reordered => members.reverse(),
            }
            let items: Vec<String> = members
                .iter()
                .map(|(k, v)| {
                    if spaced {
                        format!(" \"{k}\" :\t{v} ")
                    } else {
                        format!("\"{k}\":{v}")
                    }
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
    }

    // ---------------------------------------------------------------- tools

    const OBJECT: &str = r#"{"type":"object"}"#;
    const ADD_OUTPUT: &str =
        r#"{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}"#;

    // ---------------------------------------------------------------- server

    /// The `requestState` payloads the handlers sealed, so that a handler can check that it
    /// is only ever given back one of its own, for the same method and target, unexpired.
    #[derive(Debug, Default)]
    pub struct Book {
        /// The time the session is at (set before every `handle`/`handle_timeout`).
        now: u64,
        /// `Config::state_ttl_ms`.
        ttl: u64,
        /// Per payload `k<index>`: method, raw target, expiry.
        issued: Vec<(&'static str, String, u64)>,
    }

    type SharedBook = Rc<RefCell<Book>>;

    impl Book {
        fn issue(&mut self, method: &'static str, target: &str) -> String {
            let n = self.issued.len();
            self.issued.push((
                method,
                target.to_string(),
                self.now.saturating_add(self.ttl),
            ));
            format!("k{n}")
        }

        /// A handler was given `state`: it must be one this server sealed for this method
        /// and target, and not expired (the session refuses every other one).
        fn verify(&self, method: &str, target: &str, state: Option<&str>) {
            let Some(p) = state else { return };
            let (m, t, expiry) = p
                .strip_prefix('k')
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| self.issued.get(n))
                .unwrap_or_else(|| panic!("a handler was given a requestState never sealed: {p}"));
            assert_eq!(
                (*m, t.as_str()),
                (method, target),
                "requestState {p} opened for another method or target"
            );
            assert!(
                self.now <= *expiry,
                "expired requestState {p} reached a handler ({} > {expiry})",
                self.now
            );
        }
    }

    /// The `inputRequests` an `input_required` result asks for (bits: elicit, sample,
    /// roots, invalid raw JSON).
    fn asks(q: &mut InputRequests<'_, '_>, bits: u8) {
        if bits & 1 != 0 {
            q.elicit("q", "Name?", ELICIT_SCHEMA);
        }
        if bits & 2 != 0 {
            q.sample("s", SAMPLING_PARAMS);
        }
        if bits & 4 != 0 {
            q.list_roots("r");
        }
        if bits & 8 != 0 {
            q.elicit("bad", "x", "{\n}");
        }
    }

    pub struct FuzzTools {
        pub defs: Vec<Tool<'static>>,
        book: SharedBook,
    }

    impl FuzzTools {
        fn new(book: SharedBook) -> Self {
            let defs = TOOL_NAMES
                .iter()
                .map(|&name| {
                    let mut t = Tool {
                        description: Some("fuzz tool"),
                        ..Tool::new(name, OBJECT)
                    };
                    match name {
                        "add" => {
                            t.output_schema = Some(ADD_OUTPUT);
                            t.title = Some("Add");
                            t.meta = Some(r#"{"example.com/kind":"math"}"#);
                        }
                        "needs_sampling" => t.requires = ClientCaps::SAMPLING,
                        "needs_roots" => {
                            t.requires = ClientCaps::ROOTS.with(ClientCaps::ELICITATION)
                        }
                        _ => {}
                    }
                    t
                })
                .collect();
            FuzzTools { defs, book }
        }
    }

    fn all_content(r: &mut ToolResult<'_, '_>) {
        r.text("plain");
        r.push(
            &Content::Text("annotated"),
            Some(&Annotations {
                audience: &[Role::User, Role::Assistant],
                priority: Some(0.5),
                last_modified: Some("2025-01-01T00:00:00Z"),
            }),
            Some(r#"{"example.com/x":1}"#),
        );
        r.image("iVBORw0KGgo=", "image/png");
        r.audio("UklGRg==", "audio/wav");
        r.resource_link(&ResourceLink {
            uri: "file:///a.txt",
            name: "a.txt",
            title: Some("A"),
            description: Some("d"),
            mime_type: Some("text/plain"),
            size: Some(3),
        });
        r.embedded_text("test://text", Some("text/plain"), "embedded");
        r.embedded_blob("test://blob", None, "AAEC");
    }

    impl ToolSet for FuzzTools {
        fn len(&self) -> usize {
            self.defs.len()
        }
        fn get(&self, index: usize) -> Option<Tool<'_>> {
            self.defs.get(index).copied()
        }
        fn call(&mut self, req: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
            let name = self.defs[req.tool_index()].name;
            assert!(req.name().eq_str(name), "dispatched to the wrong tool");
            self.book
                .borrow()
                .verify("tools/call", req.name().raw(), req.input().state());
            match name {
                "echo" => {
                    r.text(req.args().as_str());
                }
                "add" => {
                    let num = |k: &str| req.args().get(k).and_then(|v| v.as_f64());
                    match (num("a"), num("b")) {
                        (Some(a), Some(b)) if (a + b).is_finite() => r.structured_with(|w| {
                            w.begin_object();
                            w.key("sum");
                            w.f64(a + b);
                            w.end_object();
                        }),
                        _ => {
                            r.fail(format_args!("add needs numbers a and b"));
                        }
                    }
                }
                "all_content" => all_content(r),
                "fail" => {
                    r.fail(format_args!(
                        "This tool intentionally fails: {}",
                        req.version()
                    ));
                }
                "misuse" => {
                    r.structured_raw("{}");
                    r.text("content after structured output");
                }
                "big" => {
                    r.text(&"b".repeat(3000));
                }
                "wizard" => {
                    // 2026-07-28: asks first (sealing a state), answers on the retry.
                    if !req.version().is_modern() {
                        r.text("wizard: legacy");
                    } else if let Some(s) = req.input().state() {
                        r.text(&format!("state:{s}"));
                    } else {
                        let k = self.book.borrow_mut().issue("tools/call", req.name().raw());
                        r.input_required(Some(&k), |q| asks(q, 7));
                    }
                }
                // No state: refused (internal error) when nothing could be asked, and in
                // legacy sessions.
                "wizard_bare" => r.input_required(None, |q| asks(q, 1)),
                "slow" | "slow2" | "needs_sampling" | "needs_roots" | "slow_wizard" => {
                    return Dispatch::Defer
                }
                _ => {
                    r.text(name);
                }
            }
            Dispatch::Done
        }
    }

    pub struct FuzzResources {
        book: SharedBook,
    }

    impl ResourceSet for FuzzResources {
        fn len(&self) -> usize {
            RESOURCES.len()
        }
        fn get(&self, index: usize) -> Option<Resource<'_>> {
            let (uri, name, binary) = *RESOURCES.get(index)?;
            Some(Resource {
                description: Some("fuzz resource"),
                mime_type: Some(if binary {
                    "application/octet-stream"
                } else {
                    "text/plain"
                }),
                size: binary.then_some(3),
                ..Resource::new(uri, name)
            })
        }
        fn templates_len(&self) -> usize {
            TEMPLATES.len()
        }
        fn template(&self, index: usize) -> Option<ResourceTemplate<'_>> {
            let (t, name) = *TEMPLATES.get(index)?;
            Some(ResourceTemplate {
                title: Some("Fuzz template"),
                ..ResourceTemplate::new(t, name)
            })
        }
        fn subscribable(&self) -> bool {
            true
        }
        fn subscribe(&mut self, uri: mcp_rs_core::wire::json::JsonStr<'_>, _on: bool) -> bool {
            RESOURCES.iter().any(|r| uri.eq_str(r.0))
        }
        fn read(&mut self, req: &ReadRequest<'_>, r: &mut ReadResult<'_, '_>) -> Dispatch {
            let raw = req.uri().raw();
            self.book
                .borrow()
                .verify("resources/read", raw, req.input().state());
            let uri: String = req.uri().chars().collect();
            if let Some(i) = req.resource_index() {
                let (listed, _, binary) = RESOURCES[i];
                assert_eq!(uri, listed, "resource_index names another resource");
                if listed == "test://ask" && req.version().is_modern() {
                    if let Some(s) = req.input().state() {
                        r.text(&uri, Some("text/plain"), &format!("state:{s}"));
                    } else {
                        let k = self.book.borrow_mut().issue("resources/read", raw);
                        r.input_required(Some(&k), |q| asks(q, 4));
                    }
                } else if binary {
                    r.blob(&uri, Some("application/octet-stream"), "AAEC");
                } else {
                    r.text(&uri, Some("text/plain"), "content");
                }
                return Dispatch::Done;
            }
            match req.template_index() {
                Some(t) if TEMPLATES[t].0 == "test://slow/{n}" => return Dispatch::Defer,
                Some(t) => {
                    assert!(
                        mcp_rs_core::wire::uri_template::UriTemplate::new(TEMPLATES[t].0)
                            .matches(&uri)
                            .is_some(),
                        "template_index names a template that does not match {uri}"
                    );
                    r.text(&uri, None, "templated");
                }
                None if uri.starts_with("test://defer/") => return Dispatch::Defer,
                None => r.not_found(),
            }
            Dispatch::Done
        }
    }

    static GREET_ARGS: [PromptArgument<'static>; 2] = [
        PromptArgument::required("name", "Who to greet"),
        PromptArgument::optional("style", "How"),
    ];

    pub struct FuzzPrompts {
        book: SharedBook,
    }

    impl PromptSet for FuzzPrompts {
        fn len(&self) -> usize {
            PROMPT_NAMES.len()
        }
        fn get(&self, index: usize) -> Option<Prompt<'_>> {
            let name = *PROMPT_NAMES.get(index)?;
            Some(Prompt {
                arguments: if name == "greet" { &GREET_ARGS } else { &[] },
                ..Prompt::new(name, "fuzz prompt")
            })
        }
        fn get_prompt(
            &mut self,
            req: &GetPromptRequest<'_>,
            r: &mut PromptResult<'_, '_>,
        ) -> Dispatch {
            let name = PROMPT_NAMES[req.prompt_index()];
            assert!(
                req.name().eq_str(name),
                "prompt dispatched to the wrong prompt"
            );
            self.book
                .borrow()
                .verify("prompts/get", req.name().raw(), req.input().state());
            for (k, v) in req.arguments().members().into_iter().flatten() {
                assert!(
                    v.as_string().is_some(),
                    "prompt argument {} is not a string",
                    k.raw()
                );
            }
            match name {
                "greet" => {
                    let who: String = req
                        .argument("name")
                        .expect("the session checks required arguments")
                        .chars()
                        .collect();
                    r.description("A greeting");
                    r.message(Role::User, &Content::Text(&format!("Hello {who}")));
                }
                "wizard" if req.version().is_modern() => {
                    if let Some(s) = req.input().state() {
                        r.message(Role::User, &Content::Text(&format!("state:{s}")));
                    } else {
                        let k = self
                            .book
                            .borrow_mut()
                            .issue("prompts/get", req.name().raw());
                        r.input_required(Some(&k), |q| asks(q, 1));
                    }
                }
                "slow" => return Dispatch::Defer,
                _ => {
                    r.message(Role::Assistant, &Content::Text(name));
                }
            }
            Dispatch::Done
        }
    }

    pub struct FuzzCompletions;

    impl Completions for FuzzCompletions {
        fn complete(
            &mut self,
            req: &CompleteRequest<'_>,
            r: &mut CompletionResult<'_, '_>,
        ) -> Dispatch {
            match req.reference() {
                CompletionRef::Prompt(name) => assert!(
                    PROMPT_NAMES.iter().any(|p| name.eq_str(p)),
                    "completion for an unknown prompt reached the handler"
                ),
                CompletionRef::Resource(uri) => assert!(
                    TEMPLATES.iter().any(|t| uri.eq_str(t.0))
                        || RESOURCES.iter().any(|t| uri.eq_str(t.0)),
                    "completion for an unknown resource reached the handler"
                ),
            }
            let value: String = req.value().chars().collect();
            if value.starts_with("slow") {
                return Dispatch::Defer;
            }
            if value == "many" {
                for i in 0..150 {
                    r.value(&format!("v{i}"));
                }
                r.total(150);
                return Dispatch::Done;
            }
            for c in ["alice", "bob", "carol"] {
                if c.starts_with(&value) {
                    r.value(c);
                }
            }
            if let Some(ctx) = req.context_argument("name") {
                r.value(&format!("ctx:{}", ctx.chars().collect::<String>()));
            }
            Dispatch::Done
        }
    }

    /// Tools, a small resource set with templates, prompts with a required argument, and
    /// completions (tools only when `minimal`).
    pub struct FuzzServer {
        pub tools: FuzzTools,
        resources: FuzzResources,
        prompts: FuzzPrompts,
        completions: FuzzCompletions,
        minimal: bool,
        book: SharedBook,
    }

    impl FuzzServer {
        fn new(minimal: bool, ttl: u64) -> Self {
            let book: SharedBook = Rc::new(RefCell::new(Book {
                ttl,
                ..Book::default()
            }));
            FuzzServer {
                tools: FuzzTools::new(book.clone()),
                resources: FuzzResources { book: book.clone() },
                prompts: FuzzPrompts { book: book.clone() },
                completions: FuzzCompletions,
                minimal,
                book,
            }
        }
    }

    impl ServerHandler for FuzzServer {
        fn tools(&mut self) -> Option<&mut dyn ToolSet> {
            Some(&mut self.tools)
        }
        fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
            if self.minimal {
                None
            } else {
                Some(&mut self.resources)
            }
        }
        fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
            if self.minimal {
                None
            } else {
                Some(&mut self.prompts)
            }
        }
        fn completions(&mut self) -> Option<&mut dyn Completions> {
            if self.minimal {
                None
            } else {
                Some(&mut self.completions)
            }
        }
    }

    // ---------------------------------------------------------------- model

    /// One server frame with what schema validation needs.
    #[derive(Debug, Clone)]
    pub struct Frame {
        pub value: Value,
        /// Revision the frame was emitted under.
        pub rev: String,
        /// Method of the request it answers (responses only).
        pub method: Option<String>,
    }

    /// What a run did (for the replay test).
    #[derive(Debug, Default)]
    pub struct Report {
        pub frames: Vec<Frame>,
        pub messages: usize,
        pub replies: usize,
        pub completions: usize,
        pub cancels: usize,
        /// Messages whose requests the model could not list (numbers only serde_json cannot
        /// read; see `Expect::unreadable`). Only their own immediate replies went unmatched.
        pub unreadable_messages: usize,
        /// Batches whose replies did not fit and were replaced by one error (documented).
        pub overflowed_batches: usize,
        /// Requests that legitimately got no reply the model could attribute (see
        /// `Model::excused`); the end-of-run check accounts for each of them.
        pub excused: usize,
        /// Server-to-client requests sent, client responses routed to their call, and
        /// requests that timed out (cancelled and reported).
        pub out_requests: usize,
        pub routed: usize,
        pub timeouts: usize,
        /// `subscriptions/listen` streams opened, and list changes sent on them.
        pub listens: usize,
        pub listen_changes: usize,
        /// Sealed `requestState`s seen, and requests that carried a bad one (all refused).
        pub states: usize,
        pub bad_states: usize,
        /// Claims (`Claim`) checked against a reply.
        pub claims: usize,
    }

    /// What the model knows about the ids a message's cancellations named.
    #[derive(Debug, Clone, Copy)]
    enum Cancels<'a> {
        Known(&'a [String]),
        /// The message was unreadable for the model (`Expect::unreadable`).
        Unknown,
    }

    /// What a call token stands for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Tool,
        Read,
        Prompt,
        Complete,
        /// A `subscriptions/listen` stream.
        Listen,
    }

    impl Kind {
        fn method(self) -> &'static str {
            match self {
                Kind::Tool => "tools/call",
                Kind::Read => "resources/read",
                Kind::Prompt => "prompts/get",
                Kind::Complete => "completion/complete",
                Kind::Listen => "subscriptions/listen",
            }
        }
    }

    /// A call's server-to-client request.
    #[derive(Debug, Clone, Copy)]
    struct Out {
        id: u32,
        deadline: u64,
        /// The client's response came in a message whose responses were not taken: it
        /// times out at the next `handle_*`.
        delivered: bool,
    }

    #[derive(Debug, Clone)]
    struct Tok {
        /// The request id (raw), when known.
        id: Option<String>,
        live: bool,
        cancelled: bool,
        /// Whether the call has a progress token (`None`: unknown, for non-tool calls).
        wants_progress: Option<bool>,
        last_progress: f64,
        rev: String,
        kind: Kind,
        /// The raw target (tool or prompt name, URI) its `requestState` is sealed to.
        target: String,
        /// Client capabilities of a legacy call (the session's).
        caps: ClientCaps,
        out: Option<Out>,
        /// Listen stream: the list bits it opted in to.
        listen: u8,
    }

    impl Tok {
        fn new(id: Option<String>, kind: Kind, rev: String) -> Tok {
            Tok {
                id,
                live: true,
                cancelled: false,
                wants_progress: Some(false),
                last_progress: f64::NEG_INFINITY,
                rev,
                kind,
                target: String::new(),
                caps: ClientCaps::NONE,
                out: None,
                listen: 0,
            }
        }
    }

    /// A `requestState` the server sealed.
    #[derive(Debug, Clone)]
    struct StateRec {
        text: String,
        method: String,
        target: String,
        expiry: u64,
    }

    /// Bits of list kinds (as `subscriptions/listen` opts in to them).
    fn list_bit(kind: ListKind) -> u8 {
        match kind {
            ListKind::Tools => 1,
            ListKind::Prompts => 2,
            ListKind::Resources => 4,
            _ => 8,
        }
    }

    fn changed_method(kind: ListKind) -> &'static str {
        match kind {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            _ => "notifications/resources/list_changed",
        }
    }

    /// The first member `key` of a raw object (names compare decoded), as the session reads.
    fn raw_get<'t>(obj: &'t str, key: &str) -> Option<&'t str> {
        raw::members(obj)?
            .into_iter()
            .find(|(k, _)| decode_str(&format!("\"{k}\"")).as_deref() == Some(key))
            .map(|(_, v)| v)
    }

    /// Decodes 11 characters of unpadded base64url into 8 bytes.
    fn base64url_u64(text: &str) -> Option<u64> {
        let mut acc: u128 = 0;
        for c in text.bytes() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'-' => 62,
                b'_' => 63,
                _ => return None,
            };
            acc = (acc << 6) | u128::from(v);
        }
        // 11 characters carry 66 bits: 64 bits of data, then 2 zero bits.
        (text.len() == 11 && acc & 3 == 0).then_some((acc >> 2) as u64)
    }

    /// Expectations for one incoming message, from its bytes alone.
    #[derive(Debug, Default)]
    struct Expect {
        idless: usize,
        ids: Vec<String>,
        seq: HashMap<u64, String>,
        cancels: Vec<String>,
        batch: bool,
        /// serde_json, the model's reference reader, rejects this message although it may be
        /// valid JSON that mcp-core accepts: it holds a number beyond `f64` (`1e400`, or an
        /// integer id of 309+ digits). The model then cannot list the message's requests, so
        /// for this one message it checks only what needs no list (each reply's id occurs in
        /// the message text; the calls it starts are counted from the session and owed as
        /// wildcards in `Model::pool_any`, each still answered exactly once). Every other
        /// message, before and after, keeps the full exactly-once accounting.
        unreadable: bool,
        /// `(id, method, revision)` of every request, in order.
        info: Vec<(String, String, String)>,
        /// Valid responses to server-to-client requests: raw id, and `Ok(raw result)` or
        /// `Err((error.code, error.message))`.
        responses: Vec<(String, Outcome)>,
        /// Claims on the replies, by raw id (rendered ones, and the model's about state).
        claims: Vec<(String, Claim)>,
    }

    struct Model {
        out_len: usize,
        max_depth: usize,
        max_batch: usize,
        capacity: usize,
        outstanding: HashMap<String, usize>,
        tokens: HashMap<CallToken, Tok>,
        order: Vec<CallToken>,
        /// Ids of requests waiting for a deferred answer whose call token is not known yet.
        pool: Vec<String>,
        /// Requests of unreadable messages (`Expect::unreadable`) waiting for a deferred
        /// answer: their ids are unknown, so each may be answered under any id, once.
        pool_any: usize,
        /// Calls in the session's table never handed out. Signed: inside the drain of a
        /// message whose new calls are counted only afterwards (unreadable messages,
        /// overflowed batches) a cancellation of such a call is subtracted first.
        untaken: isize,
        /// `outstanding` for the requests counted in `pool_any`.
        outstanding_any: usize,
        /// Requests that legitimately get no reply the model can attribute: requests of an
        /// overflowed batch whose immediate replies were dropped, and calls cancelled by an
        /// unreadable message (the model cannot tell which pool entry was cancelled). Each
        /// leaves exactly one entry in `pool`/`pool_any` and `outstanding`, and `finish`
        /// requires exactly this many left over.
        excused: usize,
        /// Number tokens serde_json cannot read that the server was given, by unreadable
        /// messages (ids, progress tokens) or by the application (`structured_raw`): the
        /// server may echo them, and only those are tolerated in its frames.
        unreadable_numbers: std::collections::HashSet<String>,
        info: HashMap<String, (String, String)>,
        cursors: Vec<String>,
        seq: u64,
        report: Report,
        /// The session clock (every `handle`/`handle_timeout` passes it).
        now: u64,
        ttl: u64,
        book: SharedBook,
        /// Sealed states seen in results (the latest 16).
        states: Vec<StateRec>,
        /// Every server-to-client request id issued (they must be unique), and the ids of
        /// those no longer waiting (late responses name them).
        out_seen: HashSet<u32>,
        stale_out: Vec<u32>,
        /// Requests whose timeout is owed now: call, id, whether `notifications/cancelled`
        /// was sent for it.
        due: Vec<(CallToken, u32, bool)>,
        /// List changes owed to listen streams (call, method).
        listen_owed: Vec<(CallToken, &'static str)>,
        list_changed: bool,
        minimal: bool,
    }

    fn remove_one(v: &mut Vec<String>, x: &str) -> bool {
        match v.iter().position(|y| y == x) {
            Some(i) => {
                v.remove(i);
                true
            }
            None => false,
        }
    }

    /// Number tokens of `text` that serde_json cannot read (beyond `f64`). Scans every run
    /// of number characters, inside strings too: over-approximating is harmless here.
    fn huge_numbers(text: &str) -> Vec<std::ops::Range<usize>> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'-' || b[i].is_ascii_digit() {
                let start = i;
                i += 1;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                {
                    i += 1;
                }
                if text[start..i].parse::<f64>().is_ok_and(f64::is_infinite) {
                    out.push(start..i);
                }
            } else {
                i += 1;
            }
        }
        out
    }

    fn decode_str(raw_with_quotes: &str) -> Option<String> {
        serde_json::from_str::<String>(raw_with_quotes).ok()
    }

    /// The marker a rendered deferrable request carries: `arguments.__seq` (a number for
    /// tools, a string for prompts), a `test://slow/<seq>` URI, a `slow<seq>` completion.
    fn seq_of(v: &Value) -> Option<u64> {
        let args = v.pointer("/params/arguments/__seq");
        args.and_then(Value::as_u64)
            .or_else(|| args.and_then(Value::as_str).and_then(|s| s.parse().ok()))
            .or_else(|| {
                v.pointer("/params/uri")
                    .and_then(Value::as_str)
                    .and_then(|u| u.strip_prefix("test://slow/"))
                    .and_then(|n| n.parse().ok())
            })
            .or_else(|| {
                v.pointer("/params/argument/value")
                    .and_then(Value::as_str)
                    .and_then(|u| u.strip_prefix("slow"))
                    .and_then(|n| n.parse().ok())
            })
    }

    /// The seq marker of a deferred request as the application sees it.
    fn call_seq(request: &Request<'_>) -> Option<u64> {
        match request {
            Request::Tool(t) => t.args().get("__seq").and_then(|v| v.as_u64()),
            Request::Read(r) => r
                .uri()
                .chars()
                .collect::<String>()
                .strip_prefix("test://slow/")
                .and_then(|n| n.parse().ok()),
            Request::Prompt(p) => p
                .argument("__seq")
                .and_then(|s| s.chars().collect::<String>().parse().ok()),
            Request::Complete(c) => c
                .value()
                .chars()
                .collect::<String>()
                .strip_prefix("slow")
                .and_then(|n| n.parse().ok()),
            _ => None,
        }
    }

    impl Model {
        fn new(
            out_len: usize,
            config: &Config,
            capacity: usize,
            book: SharedBook,
            minimal: bool,
        ) -> Model {
            Model {
                now: 0,
                ttl: config.state_ttl_ms,
                book,
                states: Vec::new(),
                out_seen: HashSet::new(),
                stale_out: Vec::new(),
                due: Vec::new(),
                listen_owed: Vec::new(),
                list_changed: config.list_changed,
                minimal,
                out_len,
                max_depth: usize::from(config.max_depth),
                max_batch: usize::from(config.max_batch),
                capacity,
                outstanding: HashMap::new(),
                tokens: HashMap::new(),
                order: Vec::new(),
                pool: Vec::new(),
                pool_any: 0,
                untaken: 0,
                outstanding_any: 0,
                excused: 0,
                unreadable_numbers: Default::default(),
                info: HashMap::new(),
                cursors: Vec::new(),
                seq: 0,
                report: Report::default(),
            }
        }

        fn legacy_rev(session: &Session<'_>) -> String {
            session
                .negotiated_version()
                .unwrap_or(ProtocolVersion::LATEST_LEGACY)
                .as_str()
                .to_string()
        }

        fn rev_of(session: &Session<'_>, v: &Value) -> String {
            let modern = v
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .is_some()
                || v.get("method").and_then(Value::as_str) == Some("server/discover");
            if modern {
                return MODERN.into();
            }
            if v.get("method").and_then(Value::as_str) == Some("initialize") {
                let requested = v
                    .pointer("/params/protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                return ProtocolVersion::negotiate_legacy(ProtocolVersion::from_wire(requested))
                    .as_str()
                    .into();
            }
            Self::legacy_rev(session)
        }

        /// One element of a message (or the whole message).
        fn element(&mut self, session: &Session<'_>, text: &str, v: &Value, e: &mut Expect) {
            if !v.is_object() {
                e.idless += 1;
                return;
            }
            let members = raw::members(text).expect("raw members of a valid object");
            let mut seen: HashMap<&str, usize> = HashMap::new();
            let mut last: HashMap<&str, &str> = HashMap::new();
            for (k, val) in &members {
                // Member names compare after unescaping (RFC 8259): `"\u0069d"` is `id`.
                let name = decode_str(&format!("\"{k}\"")).unwrap_or_default();
                let known = ["jsonrpc", "id", "method", "params", "result", "error"];
                if let Some(k) = known.iter().find(|n| **n == name) {
                    *seen.entry(k).or_default() += 1;
                    last.insert(k, val);
                }
            }
            let dup = seen.values().any(|&n| n > 1);
            let id = last.get("id").copied();
            let method = last.get("method").copied();
            if method.is_some() && id.is_none() {
                // A notification: never answered. Remember cancellation targets.
                if method.and_then(decode_str).as_deref() == Some("notifications/cancelled") {
                    if let Some(p) = last.get("params").and_then(|p| raw::members(p)) {
                        for (k, t) in p {
                            if decode_str(&format!("\"{k}\"")).as_deref() == Some("requestId") {
                                e.cancels.push(t.to_string());
                            }
                        }
                    }
                }
                return;
            }
            let Some(id) = id else {
                e.idless += 1;
                return;
            };
            if !raw::is_id(id) {
                e.idless += 1;
                return;
            }
            if method.is_none() {
                let valid_response = !dup
                    && last.get("jsonrpc").copied().and_then(decode_str).as_deref() == Some("2.0")
                    && last.contains_key("result") != last.contains_key("error");
                if valid_response {
                    let outcome = match (v.get("result"), v.get("error")) {
                        (Some(_), _) => Ok(last["result"].to_string()),
                        (_, e) => Err((
                            e.and_then(|e| e.get("code"))
                                .and_then(Value::as_i64)
                                .unwrap_or(0),
                            e.and_then(|e| e.get("message"))
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                        )),
                    };
                    e.responses.push((id.to_string(), outcome));
                    return;
                }
            }
            e.ids.push(id.to_string());
            let m = v
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let rev = Self::rev_of(session, v);
            e.info.push((id.to_string(), m.clone(), rev.clone()));
            self.info.insert(id.to_string(), (m.clone(), rev));
            if let Some(seq) = seq_of(v) {
                e.seq.insert(seq, id.to_string());
            }
            if let Some(c) = self.state_claim(&m, last.get("params").copied()) {
                e.claims.push((id.to_string(), c));
            }
        }

        /// Whether a request's `requestState` is one the server must accept: exactly the
        /// text of a state it sealed for this method and raw target, not expired (`None`:
        /// no state, or a method that takes none).
        fn state_claim(&self, method: &str, params: Option<&str>) -> Option<Claim> {
            if !["tools/call", "prompts/get", "resources/read"].contains(&method) {
                return None;
            }
            let params = params?;
            let state = raw_get(params, "requestState")?;
            let key = if method == "resources/read" {
                "uri"
            } else {
                "name"
            };
            let target = raw_get(params, key)
                .and_then(|t| t.strip_prefix('"'))
                .and_then(|t| t.strip_suffix('"'));
            let text = state
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .filter(|t| !t.contains('\\'));
            let good = match (text, target) {
                (Some(text), Some(target)) => self.states.iter().any(|s| {
                    s.text == text
                        && s.method == method
                        && s.target == target
                        && self.now <= s.expiry
                }),
                _ => false,
            };
            Some(if good {
                Claim::GoodState
            } else {
                Claim::BadState
            })
        }

        fn expect(&mut self, session: &Session<'_>, bytes: &[u8]) -> Expect {
            let mut e = Expect::default();
            let Ok(text) = std::str::from_utf8(bytes) else {
                e.idless = 1;
                return e;
            };
            let v: Value = match serde_json::from_str(text) {
                Ok(v) => v,
                // Nesting beyond serde_json's 127 levels is beyond `max_depth` too (at most
                // 100 here): rejected as a whole, like any message deeper than `max_depth`.
                Err(err) if serde_bound(&err) == Some("depth") && self.max_depth < 128 => {
                    e.idless = 1;
                    return e;
                }
                Err(err) if serde_bound(&err).is_some() => {
                    e.unreadable = true;
                    e.batch = raw::trim(text).starts_with('[');
                    return e;
                }
                Err(_) => {
                    e.idless = 1;
                    return e;
                }
            };
            if depth_of(&v) > self.max_depth {
                e.idless = 1;
                return e;
            }
            match &v {
                Value::Array(items) => {
                    e.batch = true;
                    let allowed =
                        session.negotiated_version() == Some(ProtocolVersion::V2025_03_26);
                    if !allowed || items.is_empty() || items.len() > self.max_batch {
                        e.idless = 1;
                        return e;
                    }
                    let raws = raw::elements(text).expect("raw elements of a valid array");
                    assert_eq!(raws.len(), items.len());
                    for (r, item) in raws.iter().zip(items) {
                        self.element(session, r, item, &mut e);
                    }
                }
                _ => self.element(session, text, &v, &mut e),
            }
            e
        }

        fn owe(&mut self, id: &str) {
            *self.outstanding.entry(id.to_string()).or_default() += 1;
        }

        /// One reply (of any kind) to a request with this id: exactly one was owed. A request
        /// of an unreadable message (`outstanding_any`) may be answered under any id.
        fn pay(&mut self, id: &str, what: &str) {
            match self.outstanding.get_mut(id) {
                Some(n) if *n > 0 => *n -= 1,
                _ if self.outstanding_any > 0 => self.outstanding_any -= 1,
                _ => panic!("{what} with id {id} that nobody is waiting for"),
            }
            self.report.replies += 1;
        }

        /// Takes the request with this id off the pool of deferred requests (an exact entry
        /// first, else one of an unreadable message); false if none is waiting.
        fn take_pool(&mut self, id: &str) -> bool {
            if remove_one(&mut self.pool, id) {
                true
            } else if self.pool_any > 0 {
                self.pool_any -= 1;
                true
            } else {
                false
            }
        }

        /// Parses a frame: one line, valid JSON. The only text serde_json may fail on is an
        /// echo of a number it cannot read that the server was given (`unreadable_numbers`);
        /// such numbers read as `0` in the returned value (the text keeps them, and raw ids
        /// come from it).
        fn frame(&self, bytes: &[u8]) -> (Value, String) {
            assert!(
                !bytes.contains(&b'\n') && !bytes.contains(&b'\r'),
                "frame contains a raw line break"
            );
            let text = std::str::from_utf8(bytes)
                .expect("frame is UTF-8")
                .to_string();
            match self.read(&text) {
                Ok(v) => (v, text),
                Err(e) => panic!("server emitted invalid JSON ({e}): {text}"),
            }
        }

        /// Reads JSON text the server wrote, where numbers of `unreadable_numbers` (echoed
        /// from the client) read as `0`; any other number serde_json cannot read is an error.
        fn read(&self, text: &str) -> serde_json::Result<Value> {
            match serde_json::from_str::<Value>(text) {
                Err(e)
                    if serde_bound(&e) == Some("number") && !self.unreadable_numbers.is_empty() =>
                {
                    let mut clean = text.to_string();
                    for r in huge_numbers(text).into_iter().rev() {
                        if self.unreadable_numbers.contains(&text[r.clone()]) {
                            clean.replace_range(r, "0");
                        }
                    }
                    serde_json::from_str::<Value>(&clean).map_err(|_| e)
                }
                other => other,
            }
        }

        fn record(&mut self, value: Value, rev: String, method: Option<String>) {
            if let Some(state) = value
                .pointer("/result/requestState")
                .and_then(Value::as_str)
            {
                self.harvest_state(state);
            }
            self.report.frames.push(Frame { value, rev, method });
        }

        /// A sealed `requestState` in a result: its payload names the handler's record
        /// (method, target, expiry); the sealed expiry must be the issue time plus the TTL.
        fn harvest_state(&mut self, state: &str) {
            assert!(state.starts_with("s1."), "requestState format: {state}");
            let payload = state.get(27..).expect("requestState header");
            let n: usize = payload
                .strip_prefix('k')
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("requestState payload {payload} was not sealed here"));
            let (method, target, expiry) = self.book.borrow().issued[n].clone();
            let sealed = base64url_u64(&state[3..14]).expect("requestState expiry field");
            assert_eq!(
                sealed, expiry,
                "sealed expiry is the issue time plus state_ttl_ms"
            );
            self.report.states += 1;
            if !self.states.iter().any(|s| s.text == state) {
                self.states.push(StateRec {
                    text: state.to_string(),
                    method: method.to_string(),
                    target,
                    expiry,
                });
            }
            if self.states.len() > 16 {
                self.states.remove(0);
            }
        }

        /// Records a reply to a request of this message: the request is found by id, and
        /// among requests sharing an id by the shape of the result.
        fn record_reply(
            &mut self,
            session: &Session<'_>,
            e: &mut Expect,
            v: &Value,
            id: Option<&str>,
        ) {
            let shape = v.get("result").map(|r| {
                if r.get("content").is_some() {
                    "tools/call"
                } else if r.get("tools").is_some() {
                    "tools/list"
                } else if r.get("prompts").is_some() {
                    "prompts/list"
                } else if r.get("resources").is_some() {
                    "resources/list"
                } else if r.get("resourceTemplates").is_some() {
                    "resources/templates/list"
                } else if r.get("contents").is_some() {
                    "resources/read"
                } else if r.get("messages").is_some() {
                    "prompts/get"
                } else if r.get("completion").is_some() {
                    "completion/complete"
                } else if r.get("protocolVersion").is_some() {
                    "initialize"
                } else if r.get("supportedVersions").is_some() {
                    "server/discover"
                } else {
                    "ping"
                }
            });
            let same = |m: &str, s: &str| {
                m == s
                    || (s == "ping"
                        && [
                            "logging/setLevel",
                            "resources/subscribe",
                            "resources/unsubscribe",
                        ]
                        .contains(&m))
            };
            let candidates: Vec<usize> = (0..e.info.len())
                .filter(|&i| Some(e.info[i].0.as_str()) == id)
                .collect();
            let pick = match candidates.as_slice() {
                [] => None,
                [one] => Some(*one),
                many => Some(
                    many.iter()
                        .copied()
                        .find(|&i| shape.is_some_and(|s| same(&e.info[i].1, s)))
                        .unwrap_or(many[0]),
                ),
            };
            match pick {
                Some(i) => {
                    let (_, method, rev) = e.info.remove(i);
                    self.record(v.clone(), rev, Some(method));
                }
                None => self.record_response(session, v, id),
            }
        }

        fn record_response(&mut self, session: &Session<'_>, v: &Value, id: Option<&str>) {
            let (method, rev) = match id.and_then(|i| self.info.get(i)) {
                Some((m, r)) => (Some(m.clone()), r.clone()),
                None => match (session.negotiated_version(), v.get("error").is_some()) {
                    (Some(ver), false) => (None, ver.as_str().to_string()),
                    _ => (None, ProtocolVersion::LATEST_LEGACY.as_str().to_string()),
                },
            };
            self.record(v.clone(), rev, method);
        }

        /// A response object: `Some(raw id)` or `None` for an id-less error.
        fn response_id(v: &Value, text: &str) -> Option<String> {
            assert!(v.is_object(), "response is not an object: {v}");
            assert!(
                v.get("result").is_some() != v.get("error").is_some(),
                "response needs exactly one of result/error: {v}"
            );
            assert_eq!(v.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
            if let Some(e) = v.get("error") {
                assert!(e.get("code").is_some_and(Value::is_i64), "error code: {v}");
                assert!(
                    e.get("message").is_some_and(Value::is_string),
                    "error message: {v}"
                );
            }
            let members = raw::members(text).expect("members");
            members
                .iter()
                .find(|(k, _)| *k == "id")
                .map(|(_, id)| id.to_string())
        }

        fn is_long(&self, id: &str) -> bool {
            id.chars().count() * 6 + 200 > self.out_len
        }

        fn nurse_notification(&self, v: &Value, total_given: Option<f64>) {
            assert!(v.get("id").is_none(), "notification with an id: {v}");
            let method = v
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("not a notification: {v}"));
            assert!(
                [
                    "notifications/progress",
                    "notifications/message",
                    "notifications/tools/list_changed",
                    "notifications/prompts/list_changed",
                    "notifications/resources/list_changed",
                ]
                .contains(&method),
                "unexpected notification {v}"
            );
            let p = v.get("params").unwrap_or_else(|| panic!("no params: {v}"));
            if method == "notifications/progress" {
                assert!(
                    p.get("progress").is_some_and(Value::is_number),
                    "progress must be a number: {v}"
                );
                // A non-finite total has no JSON form: it is left out.
                match (p.get("total"), total_given.filter(|t| t.is_finite())) {
                    (Some(t), Some(given)) => {
                        assert_eq!(t.as_f64().map(f64::to_bits), Some(given.to_bits()), "{v}")
                    }
                    (None, None) => {}
                    (t, given) => panic!("total {t:?} for {given:?}: {v}"),
                }
            }
        }
    }

    // ---------------------------------------------------------------- runner

    struct Runner<'s, 'a> {
        session: Session<'a>,
        server: FuzzServer,
        out: Vec<u8>,
        m: Model,
        /// Claims of the messages rendered for the next `send` (see `Claim`).
        claims: Vec<(String, Claim)>,
        _s: std::marker::PhantomData<&'s ()>,
    }

    /// A deferred request as handed out: its token, seq marker and model entry (id unset).
    type Taken = (CallToken, Option<u64>, Tok);

    /// What a client response carried: `Ok(raw result)` or `Err((code, message))`.
    type Outcome = Result<String, (i64, String)>;

    /// Completes a deferred request of `kind` (a listen stream: closes it) with `result`.
    fn attempt(
        s: &mut Session<'_>,
        out: &mut [u8],
        token: CallToken,
        kind: Kind,
        result: &ResultGen,
        state: Option<&str>,
    ) -> Result<Option<Transmit>, CallError> {
        match kind {
            Kind::Tool => s.complete(token, out, |r| write_tool(r, result, state)),
            Kind::Read => s.complete_read(token, out, |r| write_read(r, result, state)),
            Kind::Prompt => s.complete_prompt(token, out, |r| write_prompt(r, result, state)),
            Kind::Complete => s.complete_completion(token, out, |r| write_completion(r, result)),
            Kind::Listen => s.close_subscription(token, out),
        }
    }

    fn write_tool(r: &mut ToolResult<'_, '_>, result: &ResultGen, state: Option<&str>) {
        match result {
            ResultGen::Text(s) => {
                r.text(s);
            }
            ResultGen::All => all_content(r),
            ResultGen::Structured(x) => r.structured_with(|w| {
                w.begin_object();
                w.key("x");
                w.f64(*x);
                w.end_object();
            }),
            ResultGen::StructuredRaw(s) => {
                if s.len() % 2 == 0 {
                    r.structured_raw(&format!("{{\"v\":{}}}", jstr(s)));
                } else {
                    r.structured_raw(s);
                }
            }
            ResultGen::Error(s) => {
                r.fail(format_args!("failed: {s}"));
            }
            ResultGen::Misuse => {
                r.structured_raw("{}");
                r.image("AA==", "image/png");
            }
            ResultGen::Big(n) => {
                r.text(&"z".repeat(usize::from(*n) * 4));
            }
            ResultGen::Empty => {}
            ResultGen::InputRequired { asks: a, .. } => r.input_required(state, |q| asks(q, *a)),
            ResultGen::WrongKind(_) => {
                r.text("wrong kind");
            }
        }
    }

    fn write_read(r: &mut ReadResult<'_, '_>, result: &ResultGen, state: Option<&str>) {
        const URI: &str = "test://done";
        match result {
            ResultGen::Text(s) => {
                r.text(URI, Some("text/plain"), s);
            }
            ResultGen::All => {
                r.text(URI, None, "a")
                    .blob(URI, Some("application/octet-stream"), "AAEC");
            }
            ResultGen::Structured(_) | ResultGen::StructuredRaw(_) => {
                r.blob(URI, None, "AAEC");
            }
            ResultGen::Error(_) => r.not_found(),
            ResultGen::Misuse => {
                r.text(URI, None, "x");
                r.input_required(None, |q| asks(q, 7));
            }
            ResultGen::Big(n) => {
                r.text(URI, None, &"z".repeat(usize::from(*n) * 4));
            }
            ResultGen::Empty => {}
            ResultGen::InputRequired { asks: a, .. } => r.input_required(state, |q| asks(q, *a)),
            ResultGen::WrongKind(_) => {
                r.text(URI, None, "w");
            }
        }
    }

    fn write_prompt(r: &mut PromptResult<'_, '_>, result: &ResultGen, state: Option<&str>) {
        match result {
            ResultGen::Text(s) => {
                r.message(Role::User, &Content::Text(s));
            }
            ResultGen::All => {
                r.description("all")
                    .message(Role::User, &Content::Text("a"))
                    .message(
                        Role::Assistant,
                        &Content::Image {
                            data: "AA==",
                            mime_type: "image/png",
                        },
                    );
            }
            ResultGen::Error(s) => {
                r.description(s);
            }
            ResultGen::Misuse => {
                r.message(Role::User, &Content::Text("a"));
                r.description("too late");
            }
            ResultGen::Big(n) => {
                r.message(Role::User, &Content::Text(&"z".repeat(usize::from(*n) * 4)));
            }
            ResultGen::InputRequired { asks: a, .. } => r.input_required(state, |q| asks(q, *a)),
            ResultGen::Empty
            | ResultGen::Structured(_)
            | ResultGen::StructuredRaw(_)
            | ResultGen::WrongKind(_) => {}
        }
    }

    fn write_completion(r: &mut CompletionResult<'_, '_>, result: &ResultGen) {
        match result {
            ResultGen::Text(s) => {
                r.value(s);
            }
            ResultGen::Big(n) => {
                for i in 0..usize::from(*n) % 300 {
                    r.value(&format!("v{i}"));
                }
                r.total(u64::from(*n));
            }
            ResultGen::All => {
                r.value("a").value("b").has_more(true);
            }
            _ => {}
        }
    }

    /// Whether completing a live call of `kind` with `result` must be refused as a misuse
    /// (`Some(true)`), must succeed (`Some(false)`), or either (`None`: it depends on the
    /// client capabilities an `input_required` could ask for, or on raw JSON validity).
    fn misuse(kind: Kind, result: &ResultGen, modern: bool) -> Option<bool> {
        match (kind, result) {
            (Kind::Complete | Kind::Listen, _) => Some(false),
            (_, ResultGen::InputRequired { state, asks }) => {
                if !modern || asks & 8 != 0 {
                    Some(true)
                } else if *state {
                    Some(false)
                } else {
                    None
                }
            }
            (Kind::Tool, ResultGen::StructuredRaw(_)) => None,
            (_, ResultGen::Misuse) => Some(true),
            _ => Some(false),
        }
    }

    impl Runner<'_, '_> {
        fn live_ids(&self) -> Vec<String> {
            let mut ids: Vec<String> = self
                .m
                .tokens
                .values()
                .filter(|t| t.live)
                .filter_map(|t| t.id.clone())
                .collect();
            ids.sort();
            ids
        }

        fn gen(&self) -> Gen<'_> {
            let mut pending_out: Vec<u32> = self
                .m
                .tokens
                .values()
                .filter(|t| t.live)
                .filter_map(|t| t.out.map(|o| o.id))
                .collect();
            pending_out.sort_unstable();
            Gen {
                live_ids: self.live_ids(),
                cursors: &self.m.cursors,
                states: self.m.states.iter().map(|s| s.text.clone()).collect(),
                pending_out,
                stale_out: &self.m.stale_out,
                initialized: self.session.negotiated_version().is_some(),
                minimal: self.m.minimal,
                seq: self.m.seq,
                claims: Vec::new(),
            }
        }

        fn render(&mut self, msg: &Msg) -> String {
            let mut g = self.gen();
            let text = msg.render(&mut g);
            let (seq, claims) = (g.seq, g.claims);
            self.m.seq = seq;
            self.claims.extend(claims);
            text
        }

        fn check_in_flight(&self) {
            let n = self.session.calls_in_flight();
            assert!(
                n <= self.m.capacity,
                "{n} calls in flight with capacity {}",
                self.m.capacity
            );
            let live = self.live_count();
            assert!(self.m.untaken >= 0, "untaken {} < 0", self.m.untaken);
            assert_eq!(
                n as isize,
                live + self.m.untaken,
                "calls in flight vs model (live {live}, untaken {})",
                self.m.untaken
            );
        }

        fn live_count(&self) -> isize {
            self.m.tokens.values().filter(|t| t.live).count() as isize
        }

        /// After the drain of a message whose new calls the model could not list: the calls
        /// it added to the table and never handed out, from the session's count.
        fn settle_untaken(&mut self) -> usize {
            let n = self.session.calls_in_flight() as isize - self.live_count() - self.m.untaken;
            let n = usize::try_from(n)
                .unwrap_or_else(|_| panic!("fewer calls in flight than the model has ({n} new)"));
            self.m.untaken += n as isize;
            n
        }

        /// The session clock reached `m.now` (any `handle_*`): requests past their deadline,
        /// and responses the application did not take, are owed a timeout.
        fn model_expire(&mut self) {
            let now = self.m.now;
            self.m.book.borrow_mut().now = now;
            let mut due = Vec::new();
            for (token, t) in self.m.tokens.iter_mut() {
                if let (true, Some(o)) = (t.live, t.out) {
                    if o.delivered || o.deadline <= now {
                        due.push((*token, o.id, false));
                        t.out = None;
                    }
                }
            }
            self.m.due.extend(due);
        }

        /// The model entry of a deferred request handed out (checks what the handler sees).
        fn take_call(&self, call: &mcp_rs_core::Call<'_>) -> Taken {
            let book = self.m.book.borrow();
            let (kind, version, target, wants) = match &call.request {
                Request::Tool(t) => {
                    let args: Value = self.m.read(t.args().as_str()).expect("call args are JSON");
                    assert!(args.is_object(), "call args are an object");
                    let name: String = t.name().chars().collect();
                    assert!(
                        TOOL_NAMES.contains(&name.as_str()),
                        "deferred call of unknown tool {name}"
                    );
                    book.verify("tools/call", t.name().raw(), t.input().state());
                    let target = t.name().raw().to_string();
                    (Kind::Tool, t.version(), target, Some(t.wants_progress()))
                }
                Request::Read(r) => {
                    book.verify("resources/read", r.uri().raw(), r.input().state());
                    (Kind::Read, r.version(), r.uri().raw().to_string(), None)
                }
                Request::Prompt(p) => {
                    let name: String = p.name().chars().collect();
                    assert!(
                        PROMPT_NAMES.contains(&name.as_str()),
                        "deferred prompt {name} is unknown"
                    );
                    book.verify("prompts/get", p.name().raw(), p.input().state());
                    (Kind::Prompt, p.version(), p.name().raw().to_string(), None)
                }
                Request::Complete(c) => (Kind::Complete, c.version(), String::new(), None),
                _ => panic!("deferred request of an unknown kind"),
            };
            let rev = if version.is_modern() {
                MODERN.to_string()
            } else {
                version.as_str().to_string()
            };
            let mut tok = Tok::new(None, kind, rev);
            tok.wants_progress = wants;
            tok.target = target;
            tok.caps = self.session.client_capabilities();
            (call.token(), call_seq(&call.request), tok)
        }

        /// Sends one message and checks its replies, calls, routed responses and the output
        /// that follows.
        fn send(&mut self, bytes: &[u8], take: u8) {
            if std::env::var_os("MCP_FUZZ_TRACE").is_some() {
                eprintln!("  send {}", String::from_utf8_lossy(bytes));
            }
            self.m.report.messages += 1;
            let rendered = std::mem::take(&mut self.claims);
            let mut e = self.m.expect(&self.session, bytes);
            if e.unreadable {
                self.m.report.unreadable_messages += 1;
                let text = std::str::from_utf8(bytes).expect("serde_json read it as UTF-8");
                for r in huge_numbers(text) {
                    self.m.unreadable_numbers.insert(text[r].to_string());
                }
            } else {
                e.claims.extend(rendered);
            }
            for id in &e.ids {
                self.m.owe(id);
            }
            // Responses to server-to-client requests are taken with the calls (always when
            // the model cannot read the message: it could not tell which were delivered).
            let take_responses = take < 200 || e.unreadable;
            let take = if take < 200 {
                usize::MAX
            } else {
                usize::from(take - 200)
            };
            self.model_expire();
            let mut incoming = self
                .session
                .handle(&mut self.server, self.m.now, bytes, &mut self.out)
                .expect("handle");
            let transmit = incoming.transmit();
            let subscription = incoming.subscription();
            let mut taken = Vec::new();
            while taken.len() < take {
                let Some(call) = incoming.next_call(&mut self.session) else {
                    break;
                };
                taken.push(self.take_call(&call));
            }
            let mut responses: Vec<(CallToken, Outcome)> = Vec::new();
            if take_responses {
                while let Some(r) = incoming.next_response(&mut self.session) {
                    let outcome = match r.outcome {
                        ClientOutcome::Result(v) => Ok(v.as_str().to_string()),
                        ClientOutcome::Error { code, message } => {
                            Err((code, message.chars().collect()))
                        }
                    };
                    responses.push((r.call, outcome));
                    assert!(responses.len() <= 4096, "next_response does not terminate");
                }
            }
            drop(incoming);

            // The immediate reply.
            let mut owed = e.ids.clone();
            let mut idless = 0usize;
            let mut batch_overflow = false;
            let mut replied: Vec<(String, Value)> = Vec::new();
            let reply_text = transmit
                .map(|tx| String::from_utf8_lossy(&self.out[..tx.len]).into_owned())
                .unwrap_or_default();
            if let (Some(tx), Some(sub)) = (transmit, subscription) {
                self.listen_ack(&e, bytes, tx, sub, &mut owed);
            } else if let Some(tx) = transmit {
                assert_eq!(tx.route, Route::Reply);
                let (v, text) = self.m.frame(&self.out[..tx.len]);
                let items: Vec<(Value, String)> = match &v {
                    Value::Array(a) => {
                        assert!(e.batch, "array reply to a single message");
                        assert!(!a.is_empty(), "empty batch reply");
                        let raws = raw::elements(&text).unwrap();
                        a.iter()
                            .cloned()
                            .zip(raws.into_iter().map(String::from))
                            .collect()
                    }
                    _ => vec![(v.clone(), text.clone())],
                };
                if e.batch
                    && !v.is_array()
                    && v.pointer("/error/code") == Some(&Value::from(-32603))
                {
                    batch_overflow = v.get("id").is_none();
                }
                for (item, itext) in items {
                    let id = Model::response_id(&item, &itext);
                    self.m
                        .record_reply(&self.session, &mut e, &item, id.as_deref());
                    match id {
                        // The message's ids are unknown: the server echoes ids raw, so the
                        // reply's id must at least occur in the message.
                        Some(id) if e.unreadable => {
                            assert!(
                                bytes.windows(id.len()).any(|w| w == id.as_bytes()),
                                "reply {item} to id {id}, which the message does not contain"
                            );
                            self.m.report.replies += 1;
                        }
                        Some(id) => {
                            if !remove_one(&mut owed, &id) {
                                panic!("reply {item} to id {id} which this message did not carry (expected {:?})", e.ids);
                            }
                            self.m.pay(&id, "immediate reply");
                            replied.push((id, item));
                        }
                        None => idless += 1,
                    }
                }
            }
            // Documented (`handle_batch`): replies of a batch that do not fit are replaced by
            // one id-less error; its deferred calls go on. Settled after the drain below.
            let batch_overflow = batch_overflow && !e.unreadable;
            if !e.unreadable && !batch_overflow {
                assert!(
                    idless >= e.idless,
                    "expected {} id-less error(s), got {idless} for {}",
                    e.idless,
                    String::from_utf8_lossy(bytes)
                );
                for _ in 0..idless - e.idless {
                    // A reply whose id was too long to echo in the output buffer.
                    let i = owed
                        .iter()
                        .position(|id| self.m.is_long(id))
                        .unwrap_or_else(|| {
                            panic!(
                                "unexpected id-less reply to {}: {reply_text}",
                                String::from_utf8_lossy(bytes)
                            )
                        });
                    let id = owed.remove(i);
                    self.m.pay(&id, "id-less reply");
                }
            }
            self.check_claims(&e, &replied, batch_overflow || e.unreadable);

            // Deferred calls: `owed` now holds the ids still waiting for an answer.
            let mut unmarked = Vec::new();
            for (token, seq, mut tok) in taken {
                assert!(
                    !self.m.tokens.get(&token).is_some_and(|t| t.live),
                    "token handed out twice"
                );
                let by_marker = seq
                    .and_then(|s| e.seq.get(&s))
                    .filter(|id| owed.contains(id))
                    .cloned();
                match by_marker {
                    Some(id) => {
                        remove_one(&mut owed, &id);
                        tok.id = Some(id);
                    }
                    None => unmarked.push(token),
                }
                self.m.tokens.insert(token, tok);
                self.m.order.push(token);
            }
            self.check_responses(&e, bytes, responses, take_responses);
            if e.unreadable {
                // Its calls (handed out or not) are owed as wildcards: each is answered once.
                self.drain_unchecked(Cancels::Unknown);
                let n = unmarked.len() + self.settle_untaken();
                self.m.pool_any += n;
                self.m.outstanding_any += n;
                self.check_in_flight();
            } else if batch_overflow {
                // The ids left are deferred calls (handed out or not) or requests whose
                // immediate reply the overflow dropped: all wait in the pool, and the dropped
                // ones (their number is known once the new calls are counted) are excused.
                self.m.report.overflowed_batches += 1;
                let waiting = owed.len();
                self.m.pool.append(&mut owed);
                self.drain_unchecked(Cancels::Known(&e.cancels));
                let calls = unmarked.len() + self.settle_untaken();
                let dropped = waiting.checked_sub(calls).unwrap_or_else(|| {
                    panic!("{calls} calls from an overflowed batch with {waiting} ids left")
                });
                self.excuse(dropped);
                self.check_in_flight();
            } else {
                if unmarked.len() == 1 && owed.len() == 1 {
                    self.m.tokens.get_mut(&unmarked[0]).unwrap().id = owed.pop();
                    unmarked.clear();
                }
                assert!(
                    owed.len() >= unmarked.len(),
                    "more calls handed out than requests left unanswered"
                );
                self.m.untaken += (owed.len() - unmarked.len()) as isize;
                self.m.pool.append(&mut owed);
                self.drain(Cancels::Known(&e.cancels));
            }
        }

        /// The reply to `subscriptions/listen`: the acknowledgement (a notification carrying
        /// the request id as `subscriptionId`) naming exactly the honoured filter. The
        /// request stays owed its one response (the close) unless it is cancelled.
        fn listen_ack(
            &mut self,
            e: &Expect,
            bytes: &[u8],
            tx: Transmit,
            token: CallToken,
            owed: &mut Vec<String>,
        ) {
            assert_eq!(tx.route, Route::Reply);
            let (v, text) = self.m.frame(&self.out[..tx.len]);
            assert_eq!(
                v.get("method").and_then(Value::as_str),
                Some("notifications/subscriptions/acknowledged"),
                "listen acknowledgement: {v}"
            );
            assert!(v.get("id").is_none(), "acknowledgement with an id: {v}");
            let sub = raw_get(&text, "params")
                .and_then(|p| raw_get(p, "_meta"))
                .and_then(|m| raw_get(m, "io.modelcontextprotocol/subscriptionId"))
                .unwrap_or_else(|| panic!("acknowledgement without subscriptionId: {v}"))
                .to_string();
            assert!(
                !self.m.tokens.get(&token).is_some_and(|t| t.live),
                "listen token handed out twice"
            );
            let filter = v
                .pointer("/params/notifications")
                .and_then(Value::as_object)
                .unwrap_or_else(|| panic!("acknowledgement without notifications: {v}"));
            let keys = [
                ("toolsListChanged", 1u8, true),
                ("promptsListChanged", 2, !self.m.minimal),
                ("resourcesListChanged", 4, !self.m.minimal),
            ];
            let honoured: u8 = keys
                .iter()
                .filter(|(k, _, _)| filter.get(*k) == Some(&Value::Bool(true)))
                .map(|(_, b, _)| b)
                .sum();
            assert_eq!(
                filter.len(),
                honoured.count_ones() as usize,
                "acknowledged filter names only honoured lists, as true: {v}"
            );
            let mut tok = Tok::new(None, Kind::Listen, MODERN.into());
            if e.unreadable {
                assert!(bytes.windows(sub.len()).any(|w| w == sub.as_bytes()));
                // Owed as a wildcard, like the calls of an unreadable message.
                self.m.pool_any += 1;
                self.m.outstanding_any += 1;
            } else {
                assert!(
                    remove_one(owed, &sub),
                    "acknowledgement for {sub}, which this message did not carry"
                );
                let text = std::str::from_utf8(bytes).expect("readable message");
                let asked = raw_get(text, "params").and_then(|p| raw_get(p, "notifications"));
                let want: u8 = keys
                    .iter()
                    .filter(|(k, _, offered)| {
                        *offered
                            && self.m.list_changed
                            && asked.and_then(|n| raw_get(n, k)) == Some("true")
                    })
                    .map(|(_, b, _)| b)
                    .sum();
                assert_eq!(honoured, want, "acknowledged filter {v} for {text}");
                tok.id = Some(sub);
            }
            tok.listen = honoured | if honoured & 4 != 0 { 8 } else { 0 };
            self.m.record(v, MODERN.into(), None);
            self.m.tokens.insert(token, tok);
            self.m.order.push(token);
            self.m.report.listens += 1;
        }

        /// Checks the claims on this message's immediate replies.
        fn check_claims(&mut self, e: &Expect, replied: &[(String, Value)], excused: bool) {
            for (id, claim) in &e.claims {
                if e.ids.iter().filter(|i| *i == id).count() != 1 {
                    continue; // which reply answers which request is ambiguous
                }
                let strict = e
                    .claims
                    .iter()
                    .any(|(i, c)| i == id && matches!(c, Claim::StrictState));
                let Some(v) = replied.iter().find(|(i, _)| i == id).map(|(_, v)| v) else {
                    let at_once = matches!(claim, Claim::BadState | Claim::Fault { .. });
                    assert!(
                        !at_once || excused || self.m.is_long(id),
                        "request {id} ({claim:?}) was not answered at once"
                    );
                    continue;
                };
                self.m.report.claims += 1;
                let err = v.get("error");
                let code = err.and_then(|e| e.get("code")).and_then(Value::as_i64);
                let msg = err.and_then(|e| e.get("message")).and_then(Value::as_str);
                match claim {
                    Claim::StrictState => {}
                    Claim::BadState => {
                        self.m.report.bad_states += 1;
                        assert!(err.is_some(), "a refused requestState got a result: {v}");
                        if strict {
                            assert_eq!(
                                (code, msg),
                                (Some(-32602), Some(INVALID_STATE)),
                                "refused requestState: {v}"
                            );
                        }
                    }
                    Claim::GoodState => {
                        assert_ne!(
                            msg,
                            Some(INVALID_STATE),
                            "a valid requestState was refused: {v}"
                        )
                    }
                    Claim::Fault {
                        code: c,
                        full,
                        bare,
                        data,
                    } => {
                        assert_eq!(code, Some(*c), "expected error {c} ({full}): {v}");
                        assert!(
                            msg == Some(full.as_str()) || msg == Some(bare.as_str()),
                            "message {msg:?}, expected {full:?} or {bare:?}: {v}"
                        );
                        if let (Some((ptr, want)), Some(d)) =
                            (data, err.and_then(|e| e.get("data")))
                        {
                            assert_eq!(
                                d.pointer(ptr).and_then(Value::as_str),
                                Some(want.as_str()),
                                "error data {ptr}: {v}"
                            );
                        }
                    }
                }
            }
        }

        /// Client responses the session routed (`got`, taken with `next_response` when
        /// `taken`): exactly those naming a request still waiting, each once, with what the
        /// client sent. Wrong, repeated and late ids route nothing.
        fn check_responses(
            &mut self,
            e: &Expect,
            bytes: &[u8],
            got: Vec<(CallToken, Outcome)>,
            taken: bool,
        ) {
            // (call, request id, outcome, may be lost with a call cancelled alongside)
            let mut expected: Vec<(CallToken, u32, Outcome, bool)> = Vec::new();
            if !e.unreadable {
                for (raw_id, outcome) in &e.responses {
                    let Ok(id) = raw_id.parse::<u32>() else {
                        continue;
                    };
                    if expected.iter().any(|x| x.1 == id) {
                        continue; // a repeat in the same batch
                    }
                    let hit =
                        self.m.tokens.iter().find(|(_, t)| {
                            t.live && t.out.is_some_and(|o| o.id == id && !o.delivered)
                        });
                    if let Some((token, t)) = hit {
                        let optional = !e.cancels.is_empty()
                            && t.id.as_ref().is_none_or(|c| e.cancels.contains(c));
                        expected.push((*token, id, outcome.clone(), optional));
                    }
                }
            }
            for (token, outcome) in got {
                let t = self
                    .m
                    .tokens
                    .get(&token)
                    .unwrap_or_else(|| panic!("response routed to an unknown call {token:?}"));
                assert!(t.live, "response routed to a call not in flight: {t:?}");
                let o = t
                    .out
                    .unwrap_or_else(|| panic!("response routed to a call with no request: {t:?}"));
                assert!(
                    !o.delivered && o.deadline > self.m.now,
                    "late response routed: {o:?} at {}",
                    self.m.now
                );
                if e.unreadable {
                    let id = o.id.to_string();
                    assert!(
                        bytes.windows(id.len()).any(|w| w == id.as_bytes()),
                        "response routed for request {id}, which the message does not name"
                    );
                } else {
                    let i = expected
                        .iter()
                        .position(|x| x.0 == token)
                        .unwrap_or_else(|| {
                            panic!(
                                "response routed to {token:?} (request {}), but none in {} answers it",
                                o.id,
                                String::from_utf8_lossy(bytes)
                            )
                        });
                    let (_, _, want, _) = expected.remove(i);
                    assert_eq!(want, outcome, "routed response differs from the one sent");
                }
                self.m.report.routed += 1;
                self.m.tokens.get_mut(&token).unwrap().out = None;
                self.push_stale(o.id);
            }
            for (token, id, _, optional) in expected {
                assert!(
                    !taken || optional,
                    "response to request {id} of {token:?} was not routed"
                );
                // Not taken (or lost with a cancelled call): it times out at the next handle.
                if let Some(o) = self.m.tokens.get_mut(&token).and_then(|t| t.out.as_mut()) {
                    if o.id == id {
                        o.delivered = true;
                    }
                }
            }
        }

        fn push_stale(&mut self, id: u32) {
            self.m.stale_out.push(id);
            if self.m.stale_out.len() > 32 {
                self.m.stale_out.remove(0);
            }
        }

        fn excuse(&mut self, n: usize) {
            self.m.excused += n;
            self.m.report.excused += n;
        }

        /// Drains `poll_transmit` and `poll_event`, then checks the calls in flight.
        fn drain(&mut self, cancels: Cancels<'_>) {
            self.drain_unchecked(cancels);
            self.check_in_flight();
        }

        fn drain_unchecked(&mut self, cancels: Cancels<'_>) {
            let mut n = 0;
            while let Some(tx) = self
                .session
                .poll_transmit(&mut self.out)
                .expect("poll_transmit buffer")
            {
                n += 1;
                assert!(n <= 4096, "poll_transmit does not terminate");
                let (v, text) = self.m.frame(&self.out[..tx.len]);
                match tx.route {
                    Route::Session => self.session_frame(v, &text),
                    Route::Call(token) => self.call_frame(token, v, &text),
                    Route::Reply => panic!("poll_transmit with route Reply: {v}"),
                }
            }
            let mut n = 0;
            while let Some(ev) = self.session.poll_event() {
                n += 1;
                assert!(n <= 4096, "poll_event does not terminate");
                match ev {
                    Event::Cancelled(token) => {
                        self.m.report.cancels += 1;
                        self.cancelled(token, cancels);
                    }
                    Event::RequestTimedOut(token) => {
                        let i = self
                            .m
                            .due
                            .iter()
                            .position(|d| d.0 == token && d.2)
                            .unwrap_or_else(|| {
                                panic!(
                                    "RequestTimedOut({token:?}) without a due, cancelled request"
                                )
                            });
                        let (_, id, _) = self.m.due.remove(i);
                        assert!(
                            self.m.tokens.get(&token).is_some_and(|t| t.live),
                            "timeout reported for a call not in flight"
                        );
                        self.push_stale(id);
                        self.m.report.timeouts += 1;
                    }
                    _ => {}
                }
            }
            // Every timeout owed was reported, except those of calls cancelled meanwhile
            // (their requests are forgotten with them).
            for (token, id, sent) in std::mem::take(&mut self.m.due) {
                let live = self.m.tokens.get(&token).is_some_and(|t| t.live);
                assert!(
                    !live && !sent,
                    "request {id} of {token:?} timed out, but it was not reported (cancellation sent: {sent})"
                );
                self.push_stale(id);
            }
            for (token, method) in std::mem::take(&mut self.m.listen_owed) {
                assert!(
                    !self.m.tokens.get(&token).is_some_and(|t| t.live),
                    "{method} was not sent on listen stream {token:?}"
                );
            }
            let next = self
                .m
                .tokens
                .values()
                .filter(|t| t.live)
                .filter_map(|t| t.out)
                .filter(|o| !o.delivered)
                .map(|o| o.deadline)
                .min();
            assert_eq!(
                self.session.poll_timeout(),
                next,
                "poll_timeout is the earliest deadline of a waiting request"
            );
        }

        /// A session frame: a legacy list change, or the error reply to a call never taken.
        fn session_frame(&mut self, v: Value, text: &str) {
            if v.get("method").is_some() {
                self.m.nurse_notification(&v, None);
                let rev = Model::legacy_rev(&self.session);
                self.m.record(v, rev, None);
                return;
            }
            let id = Model::response_id(&v, text)
                .unwrap_or_else(|| panic!("abandoned-call reply without id: {v}"));
            assert_eq!(v.pointer("/error/code"), Some(&Value::from(-32603)), "{v}");
            self.m.record_response(&self.session, &v, Some(&id));
            assert!(
                self.m.take_pool(&id),
                "abandoned reply to {id}, which was not waiting"
            );
            self.m.untaken -= 1;
            self.m.pay(&id, "abandoned-call reply");
        }

        /// A frame `poll_transmit` sent for a call: the cancellation of its timed-out request,
        /// or a list change on a listen stream. Never a response.
        fn call_frame(&mut self, token: CallToken, v: Value, text: &str) {
            let t = self
                .m
                .tokens
                .get(&token)
                .cloned()
                .unwrap_or_else(|| panic!("frame for an unknown call: {v}"));
            assert!(t.live, "frame for a call not in flight: {v}");
            assert!(v.get("id").is_none(), "poll_transmit answered a call: {v}");
            let method = v
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if method == "notifications/cancelled" {
                let id = v
                    .pointer("/params/requestId")
                    .and_then(Value::as_u64)
                    .unwrap_or_else(|| panic!("cancellation without a numeric request id: {v}"));
                let d = self
                    .m
                    .due
                    .iter_mut()
                    .find(|d| d.0 == token && u64::from(d.1) == id && !d.2)
                    .unwrap_or_else(|| panic!("cancelled request {id} of {token:?}, not due: {v}"));
                d.2 = true;
                self.m.record(v, t.rev, None);
                return;
            }
            assert_eq!(t.kind, Kind::Listen, "list change on a call: {v}");
            let i = self
                .m
                .listen_owed
                .iter()
                .position(|(k, m)| *k == token && *m == method)
                .unwrap_or_else(|| panic!("{method} not owed to listen stream {token:?}: {v}"));
            self.m.listen_owed.remove(i);
            let sub = raw_get(text, "params")
                .and_then(|p| raw_get(p, "_meta"))
                .and_then(|m| raw_get(m, "io.modelcontextprotocol/subscriptionId"));
            if let Some(id) = &t.id {
                assert_eq!(
                    sub,
                    Some(id.as_str()),
                    "list change tagged with another id: {v}"
                );
            }
            self.m.report.listen_changes += 1;
            self.m.record(v, MODERN.into(), None);
        }

        fn cancelled(&mut self, token: CallToken, cancels: Cancels<'_>) {
            // The waiting request a known cancellation names: an exact pool entry, else a
            // request of an unreadable message (any id).
            let from_pool = |m: &mut Model, cancels: &[String]| -> String {
                if let Some(i) = m.pool.iter().position(|id| cancels.contains(id)) {
                    return m.pool.remove(i);
                }
                assert!(
                    m.pool_any > 0 && !cancels.is_empty(),
                    "cancel event without a matching cancellation"
                );
                m.pool_any -= 1;
                cancels[0].clone()
            };
            match self.m.tokens.get(&token).cloned() {
                Some(t) => {
                    assert!(t.live, "cancel event for a call that is not in flight");
                    match (t.id, cancels) {
                        (Some(id), Cancels::Known(c)) => {
                            assert!(
                                c.contains(&id),
                                "call {id} cancelled, but no cancellation named it"
                            );
                            self.m.pay(&id, "cancellation");
                        }
                        (Some(id), Cancels::Unknown) => self.m.pay(&id, "cancellation"),
                        (None, Cancels::Known(c)) => {
                            let id = from_pool(&mut self.m, c);
                            self.m.pay(&id, "cancellation");
                        }
                        // Which waiting request it was is unknown: its entry stays, excused.
                        (None, Cancels::Unknown) => self.excuse(1),
                    }
                    let t = self.m.tokens.get_mut(&token).unwrap();
                    t.live = false;
                    t.cancelled = true;
                    // Its server-to-client request is forgotten with it.
                    if let Some(o) = t.out.take() {
                        self.push_stale(o.id);
                    }
                }
                None => {
                    // A call cancelled before it was handed out.
                    self.m.untaken -= 1;
                    match cancels {
                        Cancels::Known(c) => {
                            let id = from_pool(&mut self.m, c);
                            self.m.pay(&id, "cancellation");
                        }
                        Cancels::Unknown => self.excuse(1),
                    }
                    let mut t = Tok::new(None, Kind::Tool, MODERN.into());
                    t.live = false;
                    t.cancelled = true;
                    self.m.tokens.insert(token, t);
                    self.m.order.push(token);
                }
            }
        }

        fn pick(&self, pick: u8) -> Option<CallToken> {
            let live: Vec<CallToken> = self
                .m
                .order
                .iter()
                .copied()
                .filter(|t| self.m.tokens[t].live)
                .collect();
            if pick < 200 && !live.is_empty() {
                return Some(live[usize::from(pick) % live.len()]);
            }
            if self.m.order.is_empty() {
                return None;
            }
            Some(self.m.order[usize::from(pick) % self.m.order.len()])
        }

        /// A response the application sent for `token` (a listen stream: its close).
        fn answered(&mut self, token: CallToken, len: usize, route: Route) {
            assert_eq!(route, Route::Call(token));
            let t = self.m.tokens.get(&token).cloned().expect("known token");
            assert!(t.live, "a call that is not in flight was answered");
            let (v, text) = self.m.frame(&self.out[..len]);
            let id = Model::response_id(&v, &text).expect("completion carries an id");
            match &t.id {
                Some(known) => assert_eq!(&id, known, "completion answered the wrong request"),
                None => assert!(
                    self.m.take_pool(&id),
                    "completion for {id}, which is not waiting"
                ),
            }
            if t.kind == Kind::Listen {
                let sub = raw_get(&text, "result")
                    .and_then(|r| raw_get(r, "_meta"))
                    .and_then(|m| raw_get(m, "io.modelcontextprotocol/subscriptionId"));
                assert_eq!(
                    sub,
                    Some(id.as_str()),
                    "listen close tagged with its id: {v}"
                );
            }
            self.m
                .record(v.clone(), t.rev.clone(), Some(t.kind.method().into()));
            self.m.pay(&id, "completion");
            self.m.report.completions += 1;
            let t = self.m.tokens.get_mut(&token).unwrap();
            t.live = false;
            if let Some(o) = t.out.take() {
                self.push_stale(o.id);
            }
        }

        fn dead_call(&self, token: CallToken, r: &Result<Option<Transmit>, CallError>) {
            let t = &self.m.tokens[&token];
            match r {
                Ok(None) => assert!(
                    t.cancelled || (t.live && t.wants_progress != Some(true)),
                    "Ok(None) for {t:?}"
                ),
                Err(CallError::UnknownCall) => assert!(
                    !t.live || t.kind == Kind::Listen,
                    "live call reported unknown: {t:?}"
                ),
                _ => {}
            }
        }

        /// Answers a call (by its kind, or with the completer of `WrongKind`).
        fn complete(&mut self, pick: u8, result: &ResultGen) {
            let Some(token) = self.pick(pick) else { return };
            let t = self.m.tokens[&token].clone();
            let kinds = [
                Kind::Tool,
                Kind::Read,
                Kind::Prompt,
                Kind::Complete,
                Kind::Listen,
            ];
            let kind = match result {
                ResultGen::WrongKind(k) => kinds[usize::from(*k) % kinds.len()],
                _ => t.kind,
            };
            if let ResultGen::StructuredRaw(s) = result {
                for r in huge_numbers(s) {
                    self.m.unreadable_numbers.insert(s[r].to_string());
                }
            }
            let state = match result {
                ResultGen::InputRequired { state: true, .. } if t.live => {
                    Some(self.m.book.borrow_mut().issue(t.kind.method(), &t.target))
                }
                _ => None,
            };
            let state = state.as_deref();
            let res = attempt(&mut self.session, &mut self.out, token, kind, result, state);
            let modern = t.rev == MODERN;
            // A call completed as a listen stream or the other way round: unknown.
            let one_listen = (kind == Kind::Listen) != (t.kind == Kind::Listen);
            if !one_listen {
                self.dead_call(token, &res);
            }
            match res {
                Ok(Some(tx)) => {
                    assert!(t.live && kind == t.kind, "completed {t:?} as {kind:?}");
                    assert_ne!(
                        misuse(kind, result, modern),
                        Some(true),
                        "{result:?} accepted for {t:?}"
                    );
                    self.check_result(&t, result, tx.len);
                    self.answered(token, tx.len, tx.route);
                }
                Ok(None) => {}
                Err(CallError::BufferTooSmall { required }) => {
                    assert!(t.live && kind == t.kind);
                    assert!(
                        required > self.out.len(),
                        "BufferTooSmall but {required} fits {}",
                        self.out.len()
                    );
                    let mut bigger = vec![0u8; required];
                    let tx = attempt(&mut self.session, &mut bigger, token, kind, result, state)
                        .expect("retry with the required size")
                        .expect("still in flight");
                    assert_eq!(tx.len, required, "required size is exact");
                    let saved = std::mem::replace(&mut self.out, bigger);
                    self.check_result(&t, result, tx.len);
                    self.answered(token, tx.len, tx.route);
                    self.out = saved;
                }
                Err(CallError::ResultMisused) => {
                    assert!(t.live && kind == t.kind, "misuse on {t:?} as {kind:?}");
                    assert_ne!(
                        misuse(kind, result, modern),
                        Some(false),
                        "misuse for {result:?} on {t:?}"
                    );
                }
                Err(CallError::WrongKind) => assert!(
                    t.live && kind != t.kind && !one_listen,
                    "WrongKind for {kind:?} on {t:?}"
                ),
                Err(CallError::UnknownCall) => {
                    assert!(!t.live || one_listen, "UnknownCall for {kind:?} on {t:?}")
                }
                Err(e) => panic!("complete: {e:?}"),
            }
            self.drain(Cancels::Known(&[]));
        }

        /// What a completion wrote, by kind.
        fn check_result(&self, t: &Tok, result: &ResultGen, len: usize) {
            let (v, _) = self.m.frame(&self.out[..len]);
            let modern = t.rev == MODERN;
            match (t.kind, result) {
                (Kind::Read, ResultGen::Empty | ResultGen::Error(_)) => assert_eq!(
                    v.pointer("/error/code").and_then(Value::as_i64),
                    Some(if modern { -32602 } else { -32002 }),
                    "a read with no contents is not found: {v}"
                ),
                (
                    Kind::Tool | Kind::Read | Kind::Prompt,
                    ResultGen::InputRequired { state, .. },
                ) => {
                    assert_eq!(
                        v.pointer("/result/resultType").and_then(Value::as_str),
                        Some("input_required"),
                        "{v}"
                    );
                    assert_eq!(
                        v.pointer("/result/requestState").is_some(),
                        *state,
                        "requestState iff one was given: {v}"
                    );
                }
                (Kind::Complete, _) => {
                    let values = v
                        .pointer("/result/completion/values")
                        .and_then(Value::as_array)
                        .unwrap_or_else(|| panic!("completion values: {v}"));
                    assert!(values.len() <= 100, "more than 100 completion values: {v}");
                    if let ResultGen::Big(n) = result {
                        let more = usize::from(*n) % 300 > 100;
                        assert_eq!(
                            v.pointer("/result/completion/hasMore") == Some(&Value::Bool(true)),
                            more,
                            "hasMore: {v}"
                        );
                    }
                }
                _ => {}
            }
        }

        fn fail(&mut self, pick: u8, code: i32, message: &str) {
            let Some(token) = self.pick(pick) else { return };
            let res = self.session.fail(token, code, message, &mut self.out);
            self.dead_call(token, &res);
            match res {
                Ok(Some(tx)) => {
                    let (v, _) = self.m.frame(&self.out[..tx.len]);
                    assert_eq!(
                        v.pointer("/error/code").and_then(Value::as_i64),
                        Some(i64::from(code))
                    );
                    assert_eq!(
                        v.pointer("/error/message").and_then(Value::as_str),
                        Some(message)
                    );
                    self.answered(token, tx.len, tx.route);
                }
                Ok(None) | Err(CallError::UnknownCall) => {}
                Err(CallError::BufferTooSmall { required }) => assert!(required > self.out.len()),
                Err(e) => panic!("fail: {e:?}"),
            }
            self.drain(Cancels::Known(&[]));
        }

        fn progress(&mut self, pick: u8, progress: f64, total: Option<f64>, message: Option<&str>) {
            let Some(token) = self.pick(pick) else { return };
            let res = self
                .session
                .progress(token, progress, total, message, &mut self.out);
            self.dead_call(token, &res);
            let t = self.m.tokens[&token].clone();
            match res {
                Ok(Some(tx)) => {
                    assert!(
                        t.live && t.wants_progress != Some(false),
                        "progress sent for {t:?}"
                    );
                    assert!(progress > t.last_progress && progress.is_finite());
                    let (v, _) = self.m.frame(&self.out[..tx.len]);
                    self.m.nurse_notification(&v, total);
                    assert_eq!(
                        v.pointer("/params/progress")
                            .and_then(Value::as_f64)
                            .map(f64::to_bits),
                        Some(progress.to_bits())
                    );
                    self.m.record(v, t.rev.clone(), None);
                    let t = self.m.tokens.get_mut(&token).unwrap();
                    t.last_progress = progress;
                    t.wants_progress = Some(true);
                }
                Ok(None) => {
                    if t.live {
                        self.m.tokens.get_mut(&token).unwrap().wants_progress = Some(false);
                    }
                }
                Err(CallError::ProgressNotIncreasing) => {
                    assert!(t.live && t.wants_progress != Some(false));
                    assert!(
                        !(progress > t.last_progress && progress.is_finite()),
                        "{progress} after {}",
                        t.last_progress
                    );
                }
                Err(CallError::UnknownCall) => {}
                Err(CallError::BufferTooSmall { required }) => assert!(required > self.out.len()),
                Err(e) => panic!("progress: {e:?}"),
            }
            self.drain(Cancels::Known(&[]));
        }

        fn log(&mut self, pick: Option<u8>, level: u8, logger: Option<&str>, data: &str) {
            let token = match pick {
                Some(p) => match self.pick(p) {
                    Some(t) => Some(t),
                    None => return,
                },
                None => None,
            };
            let lv = LogLevel::from_wire(LEVELS[usize::from(level) % 8]).unwrap();
            let res = self.session.log(token, lv, logger, data, &mut self.out);
            if let Some(t) = token {
                let st = &self.m.tokens[&t];
                match &res {
                    Ok(Some(_)) => assert!(
                        st.live && st.kind != Kind::Listen,
                        "log for a call not in flight"
                    ),
                    Ok(None) => {}
                    Err(CallError::UnknownCall) => assert!(
                        !st.live || st.kind == Kind::Listen,
                        "live call reported unknown"
                    ),
                    Err(e) => panic!("log: {e:?}"),
                }
            }
            if let Ok(Some(tx)) = res {
                assert_eq!(tx.route, token.map_or(Route::Session, Route::Call));
                let (v, _) = self.m.frame(&self.out[..tx.len]);
                self.m.nurse_notification(&v, None);
                assert_eq!(
                    v.pointer("/params/level").and_then(Value::as_str),
                    Some(lv.as_str())
                );
                assert_eq!(
                    v.pointer("/params/data").and_then(Value::as_str),
                    Some(data)
                );
                let rev = match token {
                    Some(t) => self.m.tokens[&t].rev.clone(),
                    None => Model::legacy_rev(&self.session),
                };
                self.m.record(v, rev, None);
            }
            self.drain(Cancels::Known(&[]));
        }

        /// `Session::request` from a call: sent (with a fresh, unique id) exactly when the
        /// call is a live legacy call whose client declared the capability (in a revision
        /// that has the method) and has no request waiting; refused with the documented
        /// error otherwise.
        fn request(&mut self, pick: u8, method: u8, timeout: u16, bad: bool) {
            let Some(token) = self.pick(pick) else { return };
            let (cm, params) = match method % 3 {
                0 => (ClientMethod::CreateMessage, SAMPLING_PARAMS),
                1 => (ClientMethod::Elicit, ELICIT_PARAMS),
                _ => (ClientMethod::ListRoots, "{}"),
            };
            let params = if bad { "{\"a\":\n1}" } else { params };
            let timeout = u64::from(timeout);
            let res = self
                .session
                .request(token, cm, params, timeout, &mut self.out);
            let t = self.m.tokens[&token].clone();
            let expected = if !t.live || t.kind == Kind::Listen {
                Err(CallError::UnknownCall)
            } else if t.rev == MODERN {
                Err(CallError::Stateless)
            } else if !t.caps.contains(cm.capability())
                // Elicitation exists from 2025-06-18 (revisions compare as dates).
                || (cm == ClientMethod::Elicit && t.rev.as_str() < "2025-06-18")
            {
                Err(CallError::ClientCapability)
            } else if t.out.is_some() {
                Err(CallError::RequestPending)
            } else if bad {
                Err(CallError::InvalidParams)
            } else {
                Ok(())
            };
            match (res, expected) {
                (Ok(Some(tx)), Ok(())) => {
                    assert_eq!(tx.route, Route::Call(token));
                    let (v, _) = self.m.frame(&self.out[..tx.len]);
                    assert_eq!(v.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
                    assert_eq!(v.get("method").and_then(Value::as_str), Some(cm.as_str()));
                    let want: Value = serde_json::from_str(params).expect("params");
                    assert_eq!(v.get("params"), Some(&want), "request params: {v}");
                    let id = v
                        .get("id")
                        .and_then(Value::as_u64)
                        .and_then(|i| u32::try_from(i).ok())
                        .filter(|&i| i != 0)
                        .unwrap_or_else(|| panic!("server-to-client request id: {v}"));
                    assert!(
                        self.m.out_seen.insert(id),
                        "server-to-client request id {id} reused: {v}"
                    );
                    self.m.tokens.get_mut(&token).unwrap().out = Some(Out {
                        id,
                        deadline: self.m.now + timeout,
                        delivered: false,
                    });
                    self.m.report.out_requests += 1;
                    self.m.record(v, t.rev.clone(), None);
                }
                (Ok(None), _) => assert!(t.cancelled && !t.live, "request: Ok(None) for {t:?}"),
                (Err(e), Err(want)) => assert_eq!(e, want, "request refused for {t:?}"),
                (r, want) => panic!("request for {t:?}: {r:?}, expected {want:?}"),
            }
            self.drain(Cancels::Known(&[]));
        }

        /// Time passes: requests past their deadline are cancelled and reported.
        fn advance(&mut self, ms: u16, far: bool) {
            let step = u64::from(ms) + if far { self.m.ttl + 1 } else { 0 };
            self.m.now += step;
            self.model_expire();
            self.session.handle_timeout(self.m.now);
            self.drain(Cancels::Known(&[]));
        }

        /// A list changed: each live listen stream that opted in gets exactly one
        /// notification, tagged with its id (legacy sessions get theirs on the session).
        fn list_changed(&mut self, kind: ListKind) {
            let (bit, method) = (list_bit(kind), changed_method(kind));
            let mut owed: Vec<(CallToken, &'static str)> = self
                .m
                .tokens
                .iter()
                .filter(|(_, t)| t.live && t.kind == Kind::Listen && t.listen & bit != 0)
                .map(|(k, _)| (*k, method))
                .collect();
            self.m.listen_owed.append(&mut owed);
            self.session.list_changed(kind);
            self.drain(Cancels::Known(&[]));
        }

        fn resource_updated(&mut self, k: u8) {
            let uris = [
                RESOURCES[0].0,
                RESOURCES[3].0,
                "test://x/%F0%9F%98%80",
                "test://x/a?b=c&d=%22",
            ];
            let uri = uris[usize::from(k) % uris.len()];
            match self.session.resource_updated(uri, &mut self.out) {
                Ok(Some(tx)) => {
                    assert!(self.session.negotiated_version().is_some());
                    assert_eq!(tx.route, Route::Session);
                    let (v, _) = self.m.frame(&self.out[..tx.len]);
                    assert_eq!(
                        v.get("method").and_then(Value::as_str),
                        Some("notifications/resources/updated")
                    );
                    assert_eq!(v.pointer("/params/uri").and_then(Value::as_str), Some(uri));
                    let rev = Model::legacy_rev(&self.session);
                    self.m.record(v, rev, None);
                }
                Ok(None) => assert!(self.session.negotiated_version().is_none()),
                Err(e) => assert!(e.required > self.out.len()),
            }
            self.drain(Cancels::Known(&[]));
        }

        fn stream(&mut self, msgs: &[Msg], chunk: u8, max_line: u16, take: u8) {
            let mut data = Vec::new();
            for m in msgs.iter().take(16) {
                data.extend_from_slice(self.render(m).as_bytes());
                data.extend_from_slice(if chunk & 1 == 0 { b"\n" } else { b"\r\n" });
            }
            // Lines may be cut or merged by the framer: no claims.
            self.claims.clear();
            let mut storage = vec![0u8; 64 + usize::from(max_line) % 2048];
            let mut framer = LineFramer::new(&mut storage);
            let size = usize::from(chunk).max(1);
            let mut lines: Vec<Result<Vec<u8>, usize>> = Vec::new();
            for piece in data.chunks(size) {
                let mut input = piece;
                while !input.is_empty() {
                    let n = framer.push(input);
                    input = &input[n..];
                    while let Some(f) = framer.next_frame() {
                        lines.push(match f {
                            LineFrame::Line(l) => Ok(l.to_vec()),
                            LineFrame::Oversized { len } => Err(len),
                        });
                    }
                }
            }
            while let Some(f) = framer.finish() {
                lines.push(match f {
                    LineFrame::Line(l) => Ok(l.to_vec()),
                    LineFrame::Oversized { len } => Err(len),
                });
            }
            let limit = framer.max_len();
            for line in lines {
                match line {
                    Ok(l) => self.send(&l, take),
                    Err(len) => {
                        assert!(len > limit);
                        self.oversized(limit);
                    }
                }
            }
        }

        fn oversized(&mut self, limit: usize) {
            let tx = self
                .session
                .handle_oversized(limit, &mut self.out)
                .expect("handle_oversized");
            assert_eq!(tx.route, Route::Reply);
            let (v, text) = self.m.frame(&self.out[..tx.len]);
            assert_eq!(Model::response_id(&v, &text), None);
            assert_eq!(v.pointer("/error/code"), Some(&Value::from(-32600)));
            self.m.record_response(&self.session, &v, None);
        }

        fn op(&mut self, op: &SOp) {
            match op {
                SOp::Send { msg, take } => {
                    let text = self.render(msg);
                    self.send(text.as_bytes(), *take);
                }
                SOp::Batch { msgs, take } => {
                    let items: Vec<String> = msgs.iter().take(24).map(|m| self.render(m)).collect();
                    let text = format!("[{}]", items.join(","));
                    self.send(text.as_bytes(), *take);
                }
                SOp::Raw(bytes) => self.send(bytes, 0),
                SOp::Truncated { msg, cut } => {
                    let text = self.render(msg);
                    self.claims.clear();
                    let cut = usize::from(*cut) % text.len().max(1);
                    self.send(&text.as_bytes()[..cut], 0);
                }
                SOp::Stream {
                    msgs,
                    chunk,
                    max_line,
                    take,
                } => self.stream(msgs, *chunk, *max_line, *take),
                SOp::Complete { pick, result } => self.complete(*pick, result),
                SOp::Fail {
                    pick,
                    code,
                    message,
                } => self.fail(*pick, *code, message),
                SOp::Progress {
                    pick,
                    progress,
                    total,
                    message,
                } => self.progress(*pick, *progress, *total, message.as_deref()),
                SOp::Log {
                    pick,
                    level,
                    logger,
                    data,
                } => self.log(*pick, *level, logger.as_deref(), data),
                SOp::ToolsChanged => self.list_changed(ListKind::Tools),
                SOp::Oversized { limit } => self.oversized(usize::from(*limit)),
                SOp::Request {
                    pick,
                    method,
                    timeout,
                    bad,
                } => self.request(*pick, *method, *timeout, *bad),
                SOp::Advance { ms, far } => self.advance(*ms, *far),
                SOp::ListChanged { kind } => {
                    let kinds = [
                        ListKind::Tools,
                        ListKind::Prompts,
                        ListKind::Resources,
                        ListKind::ResourceTemplates,
                    ];
                    self.list_changed(kinds[usize::from(*kind) % kinds.len()]);
                }
                SOp::ResourceUpdated { uri } => self.resource_updated(*uri),
            }
        }

        /// Remembers `nextCursor`s for later requests.
        fn harvest_cursors(&mut self) {
            let from = self.m.report.frames.len().saturating_sub(4);
            for f in &self.m.report.frames[from..] {
                if let Some(c) = f
                    .value
                    .pointer("/result/nextCursor")
                    .and_then(Value::as_str)
                {
                    if !self.m.cursors.iter().any(|x| x == c) {
                        self.m.cursors.push(c.to_string());
                    }
                }
            }
            if self.m.cursors.len() > 16 {
                self.m.cursors.remove(0);
            }
        }

        /// End of the run: answer everything (close listen streams), then every request
        /// must have had its reply.
        fn finish(&mut self) {
            let live: Vec<CallToken> = self
                .m
                .order
                .iter()
                .copied()
                .filter(|t| self.m.tokens[t].live)
                .collect();
            let done = ResultGen::Text("done".into());
            for token in live {
                let kind = self.m.tokens[&token].kind;
                let tx = match attempt(&mut self.session, &mut self.out, token, kind, &done, None) {
                    Err(CallError::BufferTooSmall { required }) => {
                        let mut bigger = vec![0u8; required];
                        let tx = attempt(&mut self.session, &mut bigger, token, kind, &done, None);
                        let saved = std::mem::replace(&mut self.out, bigger);
                        let tx = tx.expect("retry with the required size");
                        let tx = tx.expect("still in flight");
                        self.answered(token, tx.len, tx.route);
                        self.out = saved;
                        continue;
                    }
                    tx => tx,
                };
                match tx {
                    Ok(Some(tx)) => self.answered(token, tx.len, tx.route),
                    other => panic!("completing a live call at the end: {other:?}"),
                }
            }
            // Abandons calls that were never taken; their error replies follow.
            self.send(br#"{"jsonrpc":"2.0","method":"notifications/flush"}"#, 0);
            assert_eq!(self.session.calls_in_flight(), 0, "calls left in flight");
            assert_eq!(
                self.session.poll_timeout(),
                None,
                "a request outlived its call"
            );
            // Every request got exactly one reply, except the excused ones, which got none.
            assert_eq!(
                self.m.pool.len() + self.m.pool_any,
                self.m.excused,
                "deferred requests never answered: {:?} and {} of unreadable messages \
                 ({} excused)",
                self.m.pool,
                self.m.pool_any,
                self.m.excused
            );
            let unanswered: Vec<_> = self.m.outstanding.iter().filter(|(_, n)| **n > 0).collect();
            let left = unanswered.iter().map(|(_, n)| **n).sum::<usize>() + self.m.outstanding_any;
            assert_eq!(
                left, self.m.excused,
                "requests never answered: {unanswered:?} and {} of unreadable messages \
                 ({} excused)",
                self.m.outstanding_any, self.m.excused
            );
        }
    }

    fn config(c: &CfgGen) -> Config {
        Config {
            max_depth: if c.depth < 200 { 32 } else { 1 + c.depth % 100 },
            page_size: if c.page < 128 {
                50
            } else {
                1 + u16::from(c.page % 8)
            },
            max_batch: u16::from(c.batch % 20),
            list_ttl_ms: c.ttl,
            cache_scope: if c.private {
                CacheScope::Private
            } else {
                CacheScope::Public
            },
            list_changed: c.list_changed,
            log_level: LogLevel::from_wire(LEVELS[usize::from(c.level) % 8]).unwrap(),
            state_ttl_ms: 1 + u64::from(c.state_ttl) * 16,
            ..Config::new(mcp_rs_core::SecretKey([0x5a; 16]))
        }
    }

    fn run<const N: usize>(input: &Input) -> Report {
        let info = ServerInfo {
            name: "fuzz-server",
            version: "0.1.0",
            title: Some("Fuzz Server"),
            description: Some("Under test"),
            website_url: Some("https://example.com"),
            icons: &[],
            instructions: if input.cfg.list_changed {
                Some("Use the tools.")
            } else {
                None
            },
        };
        let config = config(&input.cfg);
        let out_len = if input.cfg.out & 3 == 0 {
            mcp_rs_core::MIN_OUTPUT + usize::from(input.cfg.out) % 4096
        } else {
            65536
        };
        let minimal = input.cfg.offer >= 240;
        let server = FuzzServer::new(minimal, config.state_ttl_ms);
        let book = server.book.clone();
        let mut storage = SessionStorage::<N>::new();
        let session = Session::new(&info, config, &mut storage);
        let mut r = Runner {
            session,
            server,
            out: vec![0u8; out_len],
            m: Model::new(out_len, &config, N, book, minimal),
            claims: Vec::new(),
            _s: std::marker::PhantomData,
        };
        let trace = std::env::var_os("MCP_FUZZ_TRACE").is_some();
        for op in input.ops.iter().take(64) {
            if trace {
                eprintln!("op: {op:?}");
            }
            r.op(op);
            if trace {
                eprintln!(
                    "  in flight {}, live {:?}, untaken {}, pool {:?}, now {}",
                    r.session.calls_in_flight(),
                    r.live_ids(),
                    r.m.untaken,
                    r.m.pool,
                    r.m.now
                );
            }
            r.harvest_cursors();
        }
        r.finish();
        std::mem::take(&mut r.m.report)
    }

    /// Runs one operation sequence against a fresh session, checking every invariant.
    pub fn check(input: &Input) -> Report {
        match input.cfg.cap % 4 {
            0 => run::<1>(input),
            1 => run::<2>(input),
            2 => run::<4>(input),
            _ => run::<8>(input),
        }
    }

    /// Drives a fixed list of messages (corpus seeds, replay) through a fresh session with
    /// default settings and the same checks; deferred calls are completed at the end.
    pub fn check_messages(messages: &[&[u8]]) -> Report {
        with_runner(65536, |r| {
            for m in messages {
                r.send(m, 0);
            }
            r.finish();
            std::mem::take(&mut r.m.report)
        })
    }

    /// Runs `f` on a fresh session (default settings, 8 call slots, `out_len` bytes of
    /// output) wrapped in the checking runner.
    fn with_runner<R>(out_len: usize, f: impl FnOnce(&mut Runner<'_, '_>) -> R) -> R {
        let info = ServerInfo {
            name: "fuzz-server",
            version: "0.1.0",
            ..Default::default()
        };
        let mut storage = SessionStorage::<8>::new();
        let config = Config::new(mcp_rs_core::SecretKey([0x5a; 16]));
        let server = FuzzServer::new(false, config.state_ttl_ms);
        let book = server.book.clone();
        let session = Session::new(&info, config, &mut storage);
        let mut r = Runner {
            session,
            server,
            out: vec![0u8; out_len],
            m: Model::new(out_len, &config, 8, book, false),
            claims: Vec::new(),
            _s: std::marker::PhantomData,
        };
        f(&mut r)
    }

    /// The model's own accounting: messages it cannot read, overflowed batches and
    /// cancellations it cannot attribute relax nothing beyond themselves (run by the replay
    /// test, which includes this file).
    #[cfg(test)]
    mod tests {
        use super::*;
        use std::panic::{catch_unwind, AssertUnwindSafe};

        const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        const READY: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        /// A deferred call serde_json cannot read (`1e400`), so its id is unknown to the model.
        const UNREADABLE_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"x":1e400}}}"#;
        const PING_7: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

        fn panic_message(f: impl FnOnce()) -> String {
            let e = catch_unwind(AssertUnwindSafe(f)).expect_err("the model must catch this");
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_default()
        }

        /// An unreadable call, then a ping: the call is owed once (a wildcard), the ping
        /// exactly (its reply was matched to its id).
        fn unreadable_then_ping(r: &mut Runner<'_, '_>) {
            for m in [INIT, READY, UNREADABLE_CALL, PING_7] {
                r.send(m, 0);
            }
            assert_eq!(r.m.report.unreadable_messages, 1);
            assert_eq!((r.m.pool_any, r.m.outstanding_any), (1, 1));
            assert_eq!(r.m.outstanding.get("7"), Some(&0));
            assert_eq!(r.live_count(), 1, "the unreadable call was handed out");
        }

        #[test]
        fn unreadable_message_is_answered_exactly_once() {
            let report = with_runner(65536, |r| {
                unreadable_then_ping(r);
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!((report.completions, report.excused), (1, 0));
        }

        #[test]
        fn duplicate_reply_after_an_unreadable_message_is_caught() {
            let msg = with_runner(65536, |r| {
                unreadable_then_ping(r);
                // A second reply to ping 7 (a server bug) can only take the wildcard...
                r.m.pay("7", "duplicate reply");
                // ...so the unreadable call's own completion finds nothing owed.
                panic_message(|| r.finish())
            });
            assert!(msg.contains("nobody is waiting"), "{msg}");
        }

        #[test]
        fn unanswered_request_after_an_unreadable_message_is_caught() {
            let msg = with_runner(65536, |r| {
                unreadable_then_ping(r);
                r.m.owe("8"); // as if a later request had never been answered
                panic_message(|| r.finish())
            });
            assert!(msg.contains("requests never answered"), "{msg}");
        }

        #[test]
        fn echoed_unreadable_id_is_read() {
            let id = "9".repeat(400);
            let ping = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let report = with_runner(65536, |r| {
                r.send(INIT, 0);
                r.send(READY, 0);
                r.send(ping.as_bytes(), 0);
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!(report.unreadable_messages, 1);
            let last = report.frames.last().expect("the ping's reply");
            assert_eq!(last.value.get("result"), Some(&serde_json::json!({})));
        }

        #[test]
        fn unreadable_cancellations() {
            // Of a call whose id the model knows: that id is paid, nothing is excused.
            let call =
                br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#;
            let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","n":1e400}}"#;
            let report = with_runner(65536, |r| {
                for m in [INIT, READY, &call[..], &cancel[..], PING_7] {
                    r.send(m, 0);
                }
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!((report.cancels, report.unreadable_messages), (1, 1));
            assert_eq!((report.completions, report.excused), (0, 0));
            // Of an unreadable call (its id unknown): its wildcard is excused, exactly once.
            let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"n":1e400}}"#;
            let report = with_runner(65536, |r| {
                for m in [INIT, READY, UNREADABLE_CALL, &cancel[..], PING_7] {
                    r.send(m, 0);
                }
                assert_eq!((r.m.pool_any, r.m.excused), (1, 1));
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!((report.cancels, report.unreadable_messages), (1, 2));
            assert_eq!((report.completions, report.excused), (0, 1));
        }

        /// 2025-03-26 batch whose replies exceed a small output buffer: one id-less error
        /// replaces them; the deferred call goes on.
        fn overflowed_batch(r: &mut Runner<'_, '_>) {
            let mut items = vec![
                r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"slow"}}"#
                    .to_string(),
            ];
            for i in 0..12 {
                items.push(format!(
                    r#"{{"jsonrpc":"2.0","id":"ping-{i}-{}","method":"ping"}}"#,
                    "p".repeat(40)
                ));
            }
            r.send(INIT, 0);
            r.send(READY, 0);
            r.send(format!("[{}]", items.join(",")).as_bytes(), 0);
            assert_eq!(r.m.report.overflowed_batches, 1);
            assert_eq!(r.m.excused, 12, "the 12 pings' replies were dropped");
            assert_eq!(r.live_count(), 1, "the call was handed out");
        }

        #[test]
        fn overflowed_batch_excuses_exactly_its_dropped_replies() {
            let report = with_runner(MIN_OUTPUT_FOR_TESTS, |r| {
                overflowed_batch(r);
                r.send(PING_7, 0);
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!((report.completions, report.excused), (1, 12));
        }

        #[test]
        fn late_reply_to_a_dropped_request_is_caught() {
            let msg = with_runner(MIN_OUTPUT_FOR_TESTS, |r| {
                overflowed_batch(r);
                // As if the server answered a request whose reply the overflow dropped.
                assert!(r
                    .m
                    .take_pool("\"ping-3-pppppppppppppppppppppppppppppppppppppppp\""));
                r.m.pay(
                    "\"ping-3-pppppppppppppppppppppppppppppppppppppppp\"",
                    "late reply",
                );
                panic_message(|| r.finish())
            });
            assert!(msg.contains("never answered"), "{msg}");
        }

        #[test]
        fn application_numbers_serde_cannot_read_are_tolerated() {
            let init = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
            let call =
                br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#;
            let report = with_runner(65536, |r| {
                for m in [&init[..], READY, &call[..]] {
                    r.send(m, 0);
                }
                // Odd length: passed to `structured_raw` as is, so 1e999 reaches the frame.
                r.complete(0, &ResultGen::StructuredRaw(r#"{"a":1e999}"#.into()));
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!((report.completions, report.unreadable_messages), (1, 0));
            let last = report.frames.last().expect("the completion");
            assert_eq!(
                last.value.pointer("/result/structuredContent"),
                Some(&serde_json::json!({"a": 0}))
            );
        }

        const MIN_OUTPUT_FOR_TESTS: usize = mcp_rs_core::MIN_OUTPUT;

        /// A 2025-06-18 session whose client declared sampling, with one deferred call that
        /// sent `sampling/createMessage` (request id 1, deadline 1000).
        fn call_with_request(r: &mut Runner<'_, '_>) -> CallToken {
            let init = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
            let call =
                br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#;
            for m in [&init[..], READY, &call[..]] {
                r.send(m, 0);
            }
            r.request(0, 0, 1000, false);
            assert_eq!(r.m.report.out_requests, 1);
            *r.m.order.last().expect("the call")
        }

        const RESPONSE_1: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}"#;

        #[test]
        fn responses_are_routed_once() {
            let report = with_runner(65536, |r| {
                call_with_request(r);
                r.send(RESPONSE_1, 0);
                r.send(RESPONSE_1, 0); // a repeat: ignored
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!((report.routed, report.timeouts), (1, 0));
        }

        #[test]
        fn a_response_routed_to_a_call_without_request_is_caught() {
            let msg = with_runner(65536, |r| {
                let token = call_with_request(r);
                // As if the server routed a response the call is not waiting for.
                r.m.tokens.get_mut(&token).unwrap().out = None;
                panic_message(|| r.send(RESPONSE_1, 0))
            });
            assert!(msg.contains("no request"), "{msg}");
        }

        #[test]
        fn a_response_not_routed_is_caught() {
            let msg = with_runner(65536, |r| {
                let token = call_with_request(r);
                // As if the server ignored a response to a request that is waiting.
                r.m.tokens.get_mut(&token).unwrap().out.as_mut().unwrap().id = 2;
                let response = br#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
                panic_message(|| r.send(response, 0))
            });
            assert!(msg.contains("was not routed"), "{msg}");
        }

        #[test]
        fn a_timeout_not_reported_is_caught() {
            let msg = with_runner(65536, |r| {
                let token = call_with_request(r);
                // As if the server kept a request past its deadline.
                r.m.tokens
                    .get_mut(&token)
                    .unwrap()
                    .out
                    .as_mut()
                    .unwrap()
                    .deadline = 10;
                panic_message(|| r.advance(10, false))
            });
            assert!(msg.contains("was not reported"), "{msg}");
            let report = with_runner(65536, |r| {
                call_with_request(r);
                r.advance(999, false);
                assert_eq!(r.m.report.timeouts, 0);
                r.advance(1, false);
                r.send(RESPONSE_1, 0); // late: ignored
                r.finish();
                std::mem::take(&mut r.m.report)
            });
            assert_eq!((report.routed, report.timeouts), (0, 1));
        }

        #[test]
        fn a_refused_state_answered_with_a_result_is_caught() {
            let msg = with_runner(65536, |r| {
                let e = Expect {
                    ids: vec!["1".into()],
                    claims: vec![("1".into(), Claim::BadState)],
                    ..Expect::default()
                };
                let reply = serde_json::json!({"jsonrpc":"2.0","id":1,"result":{"content":[]}});
                panic_message(|| r.check_claims(&e, &[("1".into(), reply)], false))
            });
            assert!(msg.contains("got a result"), "{msg}");
        }

        #[test]
        fn a_handler_given_a_foreign_state_is_caught() {
            let book = Book {
                now: 5,
                ttl: 10,
                ..Book::default()
            };
            let mut book = book;
            let k = book.issue("tools/call", "wizard");
            book.verify("tools/call", "wizard", Some(&k));
            let msg = panic_message(|| book.verify("tools/call", "echo", Some(&k)));
            assert!(msg.contains("another method or target"), "{msg}");
            book.now = 16;
            let msg = panic_message(|| book.verify("tools/call", "wizard", Some(&k)));
            assert!(msg.contains("expired"), "{msg}");
        }
    }
}

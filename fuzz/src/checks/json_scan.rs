//! `json_scan`: any bytes through the scanner. It never panics; the depth bound is exact and
//! monotonic; what it accepts, serde_json reads as the same structure (numbers bit-exact,
//! strings decoded, the last of duplicate keys) and `from_json` builds the same value; what it
//! rejects and serde_json accepts is beyond the depth bound.

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

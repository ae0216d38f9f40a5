//! A small, independent reader of *valid* JSON text: top-level members and elements as raw
//! text. The session model uses it to see requests the way the wire does (raw keys, raw ids)
//! without relying on the scanner under test.

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

//! A small strict JSON checker for raw JSON given as string literals (`meta`,
//! `input_schema`, `output_schema`): a mistake there is a compile error rather than a tool
//! that fails when listed.

/// Checks that `text` is one JSON value (an object when `object`), without line breaks
/// outside strings (they would split a stdio frame). The error completes "must be ...".
pub(super) fn check(text: &str, object: bool) -> Result<(), &'static str> {
    let b = text.as_bytes();
    let mut at = 0;
    ws(b, &mut at)?;
    if object && b.get(at) != Some(&b'{') {
        return Err("a JSON object");
    }
    value(b, &mut at, 0)?;
    ws(b, &mut at)?;
    if at == b.len() {
        Ok(())
    } else {
        Err("one JSON value (found text after it)")
    }
}

const INVALID: &str = "valid JSON";

fn ws(b: &[u8], at: &mut usize) -> Result<(), &'static str> {
    while let Some(&c) = b.get(*at) {
        match c {
            b' ' | b'\t' => *at += 1,
            b'\n' | b'\r' => return Err("JSON without line breaks outside strings"),
            _ => break,
        }
    }
    Ok(())
}

fn eat(b: &[u8], at: &mut usize, c: u8) -> bool {
    if b.get(*at) == Some(&c) {
        *at += 1;
        true
    } else {
        false
    }
}

fn value(b: &[u8], at: &mut usize, depth: usize) -> Result<(), &'static str> {
    if depth > 128 {
        return Err("JSON nested at most 128 levels deep");
    }
    match b.get(*at) {
        Some(b'{') => {
            *at += 1;
            ws(b, at)?;
            if eat(b, at, b'}') {
                return Ok(());
            }
            loop {
                ws(b, at)?;
                if b.get(*at) != Some(&b'"') {
                    return Err(INVALID);
                }
                string(b, at)?;
                ws(b, at)?;
                if !eat(b, at, b':') {
                    return Err(INVALID);
                }
                ws(b, at)?;
                value(b, at, depth + 1)?;
                ws(b, at)?;
                if eat(b, at, b'}') {
                    return Ok(());
                }
                if !eat(b, at, b',') {
                    return Err(INVALID);
                }
            }
        }
        Some(b'[') => {
            *at += 1;
            ws(b, at)?;
            if eat(b, at, b']') {
                return Ok(());
            }
            loop {
                ws(b, at)?;
                value(b, at, depth + 1)?;
                ws(b, at)?;
                if eat(b, at, b']') {
                    return Ok(());
                }
                if !eat(b, at, b',') {
                    return Err(INVALID);
                }
            }
        }
        Some(b'"') => string(b, at),
        Some(b't') => word(b, at, b"true"),
        Some(b'f') => word(b, at, b"false"),
        Some(b'n') => word(b, at, b"null"),
        Some(b'-' | b'0'..=b'9') => number(b, at),
        _ => Err(INVALID),
    }
}

fn word(b: &[u8], at: &mut usize, w: &[u8]) -> Result<(), &'static str> {
    if b.get(*at..*at + w.len()) == Some(w) {
        *at += w.len();
        Ok(())
    } else {
        Err(INVALID)
    }
}

fn digits(b: &[u8], at: &mut usize) -> usize {
    let from = *at;
    while b.get(*at).is_some_and(u8::is_ascii_digit) {
        *at += 1;
    }
    *at - from
}

fn number(b: &[u8], at: &mut usize) -> Result<(), &'static str> {
    eat(b, at, b'-');
    if eat(b, at, b'0') {
        if b.get(*at).is_some_and(u8::is_ascii_digit) {
            return Err(INVALID);
        }
    } else if digits(b, at) == 0 {
        return Err(INVALID);
    }
    if eat(b, at, b'.') && digits(b, at) == 0 {
        return Err(INVALID);
    }
    if eat(b, at, b'e') || eat(b, at, b'E') {
        if !eat(b, at, b'+') {
            eat(b, at, b'-');
        }
        if digits(b, at) == 0 {
            return Err(INVALID);
        }
    }
    Ok(())
}

fn string(b: &[u8], at: &mut usize) -> Result<(), &'static str> {
    *at += 1; // the opening quote
    loop {
        match b.get(*at) {
            None => return Err(INVALID),
            Some(b'"') => {
                *at += 1;
                return Ok(());
            }
            Some(b'\\') => {
                *at += 1;
                match b.get(*at) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => *at += 1,
                    Some(b'u') => {
                        let hex = b.get(*at + 1..*at + 5).ok_or(INVALID)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(INVALID);
                        }
                        *at += 5;
                    }
                    _ => return Err(INVALID),
                }
            }
            Some(&c) if c < 0x20 => return Err(INVALID),
            Some(_) => *at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn accepts_and_refuses() {
        assert!(check(r#"{"a":[1,-2.5e3,true,null,"x\u00e9\n"]}"#, true).is_ok());
        assert!(check(" {} ", true).is_ok());
        assert!(check("[]", false).is_ok());
        assert!(check("[]", true).is_err());
        assert!(check("{", true).is_err());
        assert!(check(r#"{"a":1,}"#, true).is_err());
        assert!(check("{}\n", true).is_err());
        assert!(check("{} {}", true).is_err());
        assert!(check(r#"{"a":01}"#, true).is_err());
    }
}

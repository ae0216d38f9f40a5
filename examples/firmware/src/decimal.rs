//! Fixed-point decimal numbers: an `i64` counting millionths (six fractional digits).
//!
//! Parsing reads any JSON number text (fraction, exponent) exactly, rounding half away
//! from zero at the sixth fractional digit; printing gives the shortest exact decimal.
//! No floating point is involved, so none of core's float parsing or printing is linked.

/// One, in millionths.
pub const ONE: i64 = 1_000_000;
/// Fractional digits.
const SCALE: i32 = 6;
/// Longest printed form: sign, 13 integer digits, point, 6 fractional digits.
pub const MAX_LEN: usize = 24;

/// Parses a (valid) JSON number; `None` if its magnitude is not below `i64::MAX / ONE`,
/// or, when `exact`, if it has a nonzero digit below the millionths (which would be
/// rounded away). Two passes over the bytes, no `str` searching (code size).
pub fn parse(text: &str, exact: bool) -> Option<i64> {
    let bytes = text.as_bytes();
    // Pass 1: how many digits precede the point, and the exponent (saturated far beyond
    // any that matters).
    let mut int_digits: i32 = 0;
    let mut in_fraction = false;
    let mut in_exponent = false;
    let mut exponent_negative = false;
    let mut exponent: i32 = 0;
    for &c in bytes {
        match c {
            b'.' => in_fraction = true,
            b'e' | b'E' => in_exponent = true,
            b'-' if in_exponent => exponent_negative = true,
            b'0'..=b'9' if in_exponent => {
                exponent = (exponent * 10 + i32::from(c - b'0')).min(100_000);
            }
            b'0'..=b'9' if !in_fraction => int_digits += 1,
            _ => {}
        }
    }
    if exponent_negative {
        exponent = -exponent;
    }
    // Pass 2: the mantissa's digits. `place` is the power of ten, in millionths, of the
    // next digit.
    let mut place = int_digits + exponent + SCALE - 1;
    let mut acc: u64 = 0;
    let mut round_up = false;
    for &c in bytes {
        match c {
            b'0'..=b'9' => {
                let d = u64::from(c - b'0');
                if place >= 0 {
                    acc = acc.checked_mul(10)?.checked_add(d)?;
                } else if exact && d != 0 {
                    return None;
                } else {
                    round_up |= place == -1 && d >= 5;
                }
                place -= 1;
            }
            b'e' | b'E' => break,
            _ => {}
        }
    }
    // Digits ran out above the units of millionths: scale up (zeros cost nothing).
    while acc != 0 && place >= 0 {
        acc = acc.checked_mul(10)?;
        place -= 1;
    }
    signed(
        bytes.first() == Some(&b'-'),
        acc.checked_add(u64::from(round_up))?,
    )
}

/// Largest magnitude (in millionths): just below 9.2e12.
const MAX: u64 = (i64::MAX / ONE * ONE) as u64;

/// `a * b`, rounded half away from zero; `None` on overflow.
pub fn mul(a: i64, b: i64) -> Option<i64> {
    let (hi, lo) = wide_mul(a.unsigned_abs(), b.unsigned_abs());
    signed((a < 0) != (b < 0), wide_div_round(hi, lo, ONE as u64)?)
}

/// `a / b` (`b != 0`), rounded half away from zero; `None` on overflow.
pub fn div(a: i64, b: i64) -> Option<i64> {
    let (hi, lo) = wide_mul(a.unsigned_abs(), ONE as u64);
    signed(
        (a < 0) != (b < 0),
        wide_div_round(hi, lo, b.unsigned_abs())?,
    )
}

fn signed(negative: bool, magnitude: u64) -> Option<i64> {
    let v = i64::try_from(magnitude).ok().filter(|_| magnitude <= MAX)?;
    Some(if negative { -v } else { v })
}

/// The 128-bit product as (high, low) halves, from 32-bit limbs (no 128-bit runtime calls).
fn wide_mul(a: u64, b: u64) -> (u64, u64) {
    let (a1, a0) = (a >> 32, a & 0xFFFF_FFFF);
    let (b1, b0) = (b >> 32, b & 0xFFFF_FFFF);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let mid = (p00 >> 32) + (p01 & 0xFFFF_FFFF) + (p10 & 0xFFFF_FFFF);
    let lo = (p00 & 0xFFFF_FFFF) | (mid << 32);
    let hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    (hi, lo)
}

/// `(hi:lo) / d` rounded half away from zero, by binary long division; `None` if the
/// quotient does not fit 64 bits (or `d` is 0).
fn wide_div_round(hi: u64, lo: u64, d: u64) -> Option<u64> {
    if d == 0 || hi >= d {
        return None;
    }
    let (mut r, mut q) = (hi, 0u64);
    for i in (0..64).rev() {
        let carry = r >> 63;
        r = (r << 1) | ((lo >> i) & 1);
        q <<= 1;
        if carry != 0 || r >= d {
            r = r.wrapping_sub(d);
            q |= 1;
        }
    }
    if r >= d - r {
        q = q.checked_add(1)?;
    }
    Some(q)
}

/// `(n / d, n % d)` by binary long division (`d != 0`): shifts and subtractions only, so
/// no 64-bit division routine (about 1 KiB of flash) is linked.
pub fn divmod(n: u64, d: u64) -> (u64, u64) {
    let (mut q, mut r) = (0u64, 0u64);
    for i in (0..64).rev() {
        r = (r << 1) | ((n >> i) & 1);
        q <<= 1;
        if r >= d {
            r -= d;
            q |= 1;
        }
    }
    (q, r)
}

/// Prints `value` as the shortest exact JSON number (`-12.5`, `3`, `0.000001`): one digit
/// at a time from the right, by [`divmod`] (small code; at most 19 digits).
pub fn format(value: i64, buf: &mut [u8; MAX_LEN]) -> &str {
    let mut end = MAX_LEN;
    let mut push = |b: u8| {
        end -= 1;
        if let Some(slot) = buf.get_mut(end) {
            *slot = b;
        }
    };
    let mut rest = value.unsigned_abs();
    // Trailing fractional zeros are left out (and then the point).
    let mut fraction = false;
    for place in 0.. {
        let (q, digit) = divmod(rest, 10);
        rest = q;
        if place < SCALE {
            fraction |= digit != 0;
            if fraction {
                push(b'0' + digit as u8);
            }
            if place == SCALE - 1 && fraction {
                push(b'.');
            }
        } else {
            push(b'0' + digit as u8);
            if rest == 0 {
                break;
            }
        }
    }
    if value < 0 {
        push(b'-');
    }
    // Only ASCII digits, '.' and '-' were written.
    core::str::from_utf8(buf.get(end..).unwrap_or_default()).unwrap_or("0")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny generator (xorshift64), deterministic.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// `parse` by decimal string arithmetic: the digits with the point moved by the
    /// exponent and six places, rounded half away from zero at the point.
    fn reference(text: &str, exact: bool) -> Option<i64> {
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = body.split_once(['e', 'E']).unwrap_or((body, "0"));
        let exponent: i64 = exponent.trim_start_matches('+').parse().unwrap();
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: Vec<u8> = int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
        // Digits before the point of the value in millionths.
        let point = int.len() as i64 + exponent + 6;
        let (whole, dropped): (Vec<u8>, Vec<u8>) = if point <= 0 {
            (vec![], digits.clone())
        } else if point as usize >= digits.len() {
            let mut w = digits.clone();
            w.resize(point as usize, 0);
            (w, vec![])
        } else {
            (
                digits[..point as usize].to_vec(),
                digits[point as usize..].to_vec(),
            )
        };
        if exact && dropped.iter().any(|&d| d != 0) {
            return None;
        }
        let round_up = point >= 0 && dropped.first().is_some_and(|&d| d >= 5);
        let mut value: u128 = 0;
        for d in whole.iter().skip_while(|&&d| d == 0) {
            value = value.checked_mul(10)?.checked_add(u128::from(*d))?;
        }
        let value = value + u128::from(round_up);
        if value > u128::from(MAX) {
            return None;
        }
        let value = value as i64;
        Some(if negative { -value } else { value })
    }

    fn random_number(rng: &mut Rng) -> String {
        let r = rng.next();
        let mut s = String::new();
        if r & 1 == 1 {
            s.push('-');
        }
        let int_len = (r >> 1) % 16;
        if int_len == 0 {
            s.push('0');
        } else {
            s.push(char::from(b'1' + ((r >> 5) % 9) as u8));
            for _ in 1..int_len {
                s.push(char::from(b'0' + (rng.next() % 10) as u8));
            }
        }
        if (r >> 9) & 1 == 1 {
            s.push('.');
            for _ in 0..1 + (r >> 10) % 12 {
                s.push(char::from(b'0' + (rng.next() % 10) as u8));
            }
        }
        if (r >> 14) & 3 == 0 {
            s.push(if (r >> 16) & 1 == 1 { 'e' } else { 'E' });
            match (r >> 17) % 3 {
                0 => s.push('-'),
                1 => s.push('+'),
                _ => {}
            }
            s.push_str(&((r >> 20) % 25).to_string());
        }
        s
    }

    #[test]
    fn parse_reads_json_numbers_exactly() {
        assert_eq!(parse("0.1", false), Some(100_000));
        assert_eq!(parse("-2.15", false), Some(-2_150_000));
        assert_eq!(parse("1e3", false), Some(1_000_000_000));
        assert_eq!(parse("12.5E-1", false), Some(1_250_000));
        assert_eq!(parse("0.0000005", false), Some(1));
        assert_eq!(parse("-0.0000005", false), Some(-1));
        assert_eq!(parse("0.0000004999", false), Some(0));
        assert_eq!(parse("0.0000001", true), None);
        assert_eq!(parse("1.0", true), Some(ONE));
        assert_eq!(parse("10e-1", true), Some(ONE));
        assert_eq!(
            parse("9223372036854", false),
            Some(9_223_372_036_854_000_000)
        );
        assert_eq!(
            parse("9223372036854.0000001", false),
            Some(9_223_372_036_854_000_000)
        );
        assert_eq!(parse("9223372036854.000001", false), None);
        assert_eq!(parse("1e400", false), None);
        assert_eq!(parse("1e-400", false), Some(0));
        assert_eq!(parse("0e99999", false), Some(0));
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300_000 {
            let s = random_number(&mut rng);
            for exact in [false, true] {
                assert_eq!(parse(&s, exact), reference(&s, exact), "{s} exact={exact}");
            }
        }
    }

    #[test]
    fn format_prints_the_shortest_exact_decimal() {
        let f = |v| format(v, &mut [0; MAX_LEN]).to_string();
        assert_eq!(f(0), "0");
        assert_eq!(f(ONE * 42), "42");
        assert_eq!(f(333_333), "0.333333");
        assert_eq!(f(-2_150_000), "-2.15");
        assert_eq!(f(-1), "-0.000001");
        assert_eq!(f(MAX as i64), "9223372036854");
        assert_eq!(f(i64::MIN), "-9223372036854.775808");
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..300_000 {
            let v = (i128::from(rng.next() % (2 * MAX + 1)) - i128::from(MAX)) as i64;
            let text = f(v);
            assert_eq!(parse(&text, true), Some(v), "{v} printed {text}");
            assert!(!text.contains('.') || !text.ends_with('0'), "{text}");
        }
    }

    #[test]
    fn mul_and_div_round_half_away_from_zero() {
        let round = |n: i128, d: i128| -> Option<i64> {
            let (q, r) = (n / d, n % d);
            let q = if 2 * r.abs() >= d.abs() {
                q + n.signum() * d.signum()
            } else {
                q
            };
            (q.unsigned_abs() <= u128::from(MAX)).then_some(q as i64)
        };
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for i in 0..300_000 {
            // Small, large and mixed magnitudes.
            let scale = [1_000, ONE as u64, 1_000 * ONE as u64, MAX][i % 4];
            let pick = |r: u64| (i128::from(r % (2 * scale + 1)) - i128::from(scale)) as i64;
            let (a, b) = (pick(rng.next()), pick(rng.next()));
            let one = i128::from(ONE);
            assert_eq!(
                mul(a, b),
                round(i128::from(a) * i128::from(b), one),
                "{a} * {b}"
            );
            if b != 0 {
                assert_eq!(
                    div(a, b),
                    round(i128::from(a) * one, i128::from(b)),
                    "{a} / {b}"
                );
            }
        }
        assert_eq!(div(ONE, 3 * ONE), Some(333_333));
        assert_eq!(div(2 * ONE, 3 * ONE), Some(666_667));
        assert_eq!(div(-2 * ONE, 3 * ONE), Some(-666_667));
        assert_eq!(mul(MAX as i64, 2 * ONE), None);
    }

    #[test]
    fn divmod_divides() {
        let mut rng = Rng(7);
        for _ in 0..100_000 {
            let (n, d) = (rng.next(), rng.next() >> (rng.next() % 64) | 1);
            assert_eq!(divmod(n, d), (n / d, n % d));
        }
    }
}

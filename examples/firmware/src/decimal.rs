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

//! Dice notation `[N]d S [(+|-) M]`, read as the calculator's `parse_dice` reads it
//! (examples/src/lib.rs): a case-insensitive `d`, white space around the whole and around
//! the sign, then 1-100 dice of 2-1000 sides and a modifier of at most 1000. The syntax is
//! exactly the language of the schema's `pattern` (`^\s*[0-9]*[dD][0-9]+\s*([+-]\s*[0-9]+)?\s*$`,
//! with ECMAScript's `\s`).
//!
//! One pass over the characters, by a transition table: no buffer, no length limit, no
//! `str` searching (code size). Self-contained, so that `rustc --test` runs its tests on
//! the host (scripts/test-firmware.sh).

/// A parsed roll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dice {
    /// Number of dice, 1-100.
    pub count: u32,
    /// Sides per die, 2-1000.
    pub sides: u32,
    /// Added to the sum, -1000 to 1000.
    pub modifier: i32,
}

/// Not of the form `NdS`, `NdS+M` or `NdS-M`.
pub const SYNTAX: &str = "expected NdS, NdS+M or NdS-M, e.g. 2d6+3, d20, 4d8-1";
/// The number of dice is outside 1-100.
pub const COUNT: &str = "roll 1 to 100 dice";
/// The number of sides is outside 2-1000.
pub const SIDES: &str = "dice have 2 to 1000 sides";
/// The modifier is outside -1000 to 1000.
pub const MODIFIER: &str = "the modifier is at most 1000";

/// Parses the characters of a notation; the error is one of the messages above.
pub fn parse(chars: impl Iterator<Item = char>) -> Result<Dice, &'static str> {
    // States: 0 before the count, 1 in the count, 2 after the `d`, 3 in the sides, 4 in
    // white space after them, 5 after the sign, 6 in the modifier, 7 after it; 8 refuses.
    // NEXT[state][class], classes: digit, `d`, sign, white space (anything else refuses).
    const NEXT: [[u8; 4]; 8] = [
        [1, 2, 8, 0],
        [1, 2, 8, 8],
        [3, 8, 8, 8],
        [3, 8, 5, 4],
        [8, 8, 5, 4],
        [6, 8, 8, 5],
        [6, 8, 8, 7],
        [8, 8, 8, 7],
    ];
    let mut state = 0u8;
    // Count, sides and modifier magnitude, saturated (far above every limit); the count
    // is 1 unless written.
    let mut values = [1u32, 0, 0];
    let mut negative = false;
    for c in chars {
        let class = match c {
            '0'..='9' => 0,
            'd' | 'D' => 1,
            '+' | '-' => 2,
            _ if is_space(c) => 3,
            _ => return Err(SYNTAX),
        };
        let next = NEXT
            .get(usize::from(state))
            .and_then(|row| row.get(class))
            .copied()
            .unwrap_or(8);
        if class == 0 {
            // The digit's field: state 1 count, 3 sides, 6 modifier (`next / 3` for every
            // state 0-8, by a multiplication: the Cortex-M0 has no divide instruction).
            if let Some(v) = values.get_mut(usize::from((next * 11) >> 5)) {
                // A written count starts from zero (its default is 1).
                let before = if state == 0 { 0 } else { *v };
                *v = before
                    .saturating_mul(10)
                    .saturating_add(c as u32 - '0' as u32);
            }
        }
        // A sign anywhere but after the sides leads to state 8.
        negative |= c == '-';
        state = next;
    }
    // Complete in states 3, 4, 6 and 7.
    if state > 7 || 0b1101_1000 >> state & 1 == 0 {
        return Err(SYNTAX);
    }
    let [count, sides, magnitude] = values;
    if count == 0 || count > 100 {
        return Err(COUNT);
    }
    if !(2..=1000).contains(&sides) {
        return Err(SIDES);
    }
    if magnitude > 1000 {
        return Err(MODIFIER);
    }
    let modifier = magnitude as i32;
    Ok(Dice {
        count,
        sides,
        modifier: if negative { -modifier } else { modifier },
    })
}

/// ECMAScript's `\s`, as the schema's `pattern` and the calculator read it: Unicode
/// `White_Space` without U+0085, plus U+FEFF (a match, not `char::is_whitespace`'s table).
fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calculator's `parse_dice` (examples/src/lib.rs), its error kinds mapped to
    /// this module's messages: the reference this parser must agree with.
    fn reference(notation: &str) -> Result<Dice, &'static str> {
        fn space(c: char) -> bool {
            (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
        }
        fn number(s: &str) -> Option<u64> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(s.bytes().fold(0u64, |n, b| {
                n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
            }))
        }
        let s = notation.trim_matches(space);
        let (count, rest) = s.split_once(['d', 'D']).ok_or(SYNTAX)?;
        let count = if count.is_empty() {
            1
        } else {
            number(count).ok_or(SYNTAX)?
        };
        let (sides, modifier) = match rest.find(['+', '-']) {
            Some(i) => {
                let (sides, m) = rest.split_at(i);
                let neg = m.starts_with('-');
                let magnitude =
                    number(m.get(1..).unwrap_or_default().trim_matches(space)).ok_or(SYNTAX)?;
                (sides.trim_end_matches(space), Some((neg, magnitude)))
            }
            None => (rest, None),
        };
        let sides = number(sides).ok_or(SYNTAX)?;
        let count = u32::try_from(count)
            .ok()
            .filter(|c| (1..=100).contains(c))
            .ok_or(COUNT)?;
        let sides = u32::try_from(sides)
            .ok()
            .filter(|s| (2..=1000).contains(s))
            .ok_or(SIDES)?;
        let modifier = match modifier {
            None => 0,
            Some((neg, m)) if m <= 1000 => {
                let m = i32::try_from(m).unwrap_or(0);
                if neg {
                    -m
                } else {
                    m
                }
            }
            Some(_) => return Err(MODIFIER),
        };
        Ok(Dice {
            count,
            sides,
            modifier,
        })
    }

    fn check(notation: &str) {
        assert_eq!(
            parse(notation.chars()),
            reference(notation),
            "notation {notation:?}"
        );
    }

    #[test]
    fn reads_the_calculators_examples() {
        let dice = |count, sides, modifier| {
            Ok(Dice {
                count,
                sides,
                modifier,
            })
        };
        assert_eq!(parse("2d6+3".chars()), dice(2, 6, 3));
        assert_eq!(parse("d20".chars()), dice(1, 20, 0));
        assert_eq!(parse("4d8-1".chars()), dice(4, 8, -1));
        assert_eq!(parse(" 3D10 - 2 ".chars()), dice(3, 10, -2));
        assert_eq!(
            parse("\u{3000}100d1000+1000\t".chars()),
            dice(100, 1000, 1000)
        );
        assert_eq!(parse("0002d06+0".chars()), dice(2, 6, 0));
        for bad in [
            "", "d", "2d", "2x6", "2 d6", "2d 6", "2d6+", "2d6+-1", "+2d6", "2d6 3",
        ] {
            assert_eq!(parse(bad.chars()), Err(SYNTAX), "{bad:?}");
        }
        assert_eq!(parse("0d6".chars()), Err(COUNT));
        assert_eq!(parse("101d6".chars()), Err(COUNT));
        assert_eq!(parse("99999999999999999999d6".chars()), Err(COUNT));
        assert_eq!(parse("2d1".chars()), Err(SIDES));
        assert_eq!(parse("2d1001".chars()), Err(SIDES));
        assert_eq!(parse("2d6-1001".chars()), Err(MODIFIER));
        assert_eq!(parse("\u{feff}1d2".chars()), dice(1, 2, 0));
        assert_eq!(parse("\u{85}1d2".chars()), Err(SYNTAX));
        for case in [
            "2d6+3",
            "d20",
            "4d8-1",
            "0d1+9999",
            " 1d2 ",
            "1d2 +\u{a0}3",
            "\u{85}d4",
        ] {
            check(case);
        }
    }

    #[test]
    fn white_space_is_ecmascript_white_space() {
        for c in '\0'..=char::MAX {
            let ecmascript = (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
            assert_eq!(is_space(c), ecmascript, "{c:?}");
        }
    }

    #[test]
    fn agrees_with_the_calculator_on_generated_notations() {
        // Every string of up to 5 symbols over an alphabet covering each class (and the
        // boundary values), then random longer ones.
        const ALPHABET: [&str; 12] = [
            "0", "1", "2", "100", "1000", "1001", "d", "D", "+", "-", " ", "\u{feff}",
        ];
        let mut stack = vec![(String::new(), 0)];
        while let Some((s, symbols)) = stack.pop() {
            check(&s);
            if symbols < 5 {
                for a in ALPHABET {
                    stack.push((format!("{s}{a}"), symbols + 1));
                }
            }
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            let mut s = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut bits = seed;
            for _ in 0..(bits % 14) {
                bits = bits.rotate_right(5) ^ seed;
                s.push_str(ALPHABET[(bits % ALPHABET.len() as u64) as usize]);
                s.push_str(["", "x", "9", "\t", "\u{85}", "\u{2003}"][(bits >> 8) as usize % 6]);
            }
            check(&s);
        }
    }
}

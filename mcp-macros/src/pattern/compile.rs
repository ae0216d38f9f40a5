//! Thompson construction: a parsed pattern becomes a program of [`Inst`]s, sized first so
//! that repetitions are expanded only when the result fits [`MAX_STATES`].

use super::parse::Node;
use super::{Inst, MAX_STATES};

/// The number of instructions `node` compiles to (saturating).
pub(crate) fn size(node: &Node) -> u64 {
    match node {
        Node::Empty => 0,
        Node::Char(_) | Node::Class(_) | Node::Start | Node::End => 1,
        Node::Concat(nodes) => nodes.iter().map(size).fold(0, u64::saturating_add),
        Node::Alt(nodes) => {
            let extra = 2 * (nodes.len() as u64).saturating_sub(1);
            nodes.iter().map(size).fold(extra, u64::saturating_add)
        }
        Node::Repeat { node, min, max } => {
            let s = size(node);
            let min = u64::from(*min);
            match *max {
                None if min == 0 => s.saturating_add(2),
                None => min.saturating_mul(s).saturating_add(1),
                Some(max) => min
                    .saturating_mul(s)
                    .saturating_add((u64::from(max) - min).saturating_mul(s.saturating_add(1))),
            }
        }
    }
}

/// The program of `node`, ending with [`Inst::Match`]; an error when it would have more
/// than [`MAX_STATES`] instructions.
pub(crate) fn compile(node: &Node) -> Result<Vec<Inst>, String> {
    let needed = size(node).saturating_add(1);
    if needed > MAX_STATES as u64 {
        let shown = if needed == u64::MAX {
            "more".to_owned()
        } else {
            needed.to_string()
        };
        return Err(format!(
            "the pattern needs {shown} states, more than the {MAX_STATES} the matcher allows \
             (every character, class and assertion is one state, `|` adds two per \
             alternative and `{{n,m}}` repeats its operand m times): shorten it, or use `*` \
             or `+` instead of large counts"
        ));
    }
    let mut out = Vec::with_capacity(needed as usize);
    emit(node, &mut out);
    out.push(Inst::Match);
    Ok(out)
}

fn emit(node: &Node, out: &mut Vec<Inst>) {
    match node {
        Node::Empty => {}
        Node::Char(c) => out.push(Inst::Char(*c)),
        Node::Class(set) => match set.ranges.as_slice() {
            [(lo, hi)] if !set.negated && lo == hi => out.push(Inst::Char(*lo)),
            _ => out.push(Inst::Class(set.clone())),
        },
        Node::Start => out.push(Inst::Start),
        Node::End => out.push(Inst::End),
        Node::Concat(nodes) => nodes.iter().for_each(|n| emit(n, out)),
        Node::Alt(nodes) => {
            let mut jumps = Vec::new();
            let (last, rest) = match nodes.split_last() {
                Some(split) => split,
                None => return,
            };
            for alternative in rest {
                let split = out.len();
                out.push(Inst::Split(split + 1, 0));
                emit(alternative, out);
                jumps.push(out.len());
                out.push(Inst::Jump(0));
                let next = out.len();
                out[split] = Inst::Split(split + 1, next);
            }
            emit(last, out);
            let end = out.len();
            for jump in jumps {
                out[jump] = Inst::Jump(end);
            }
        }
        Node::Repeat { node, min, max } => match *max {
            None if *min == 0 => {
                let split = out.len();
                out.push(Inst::Split(split + 1, 0));
                emit(node, out);
                out.push(Inst::Jump(split));
                let end = out.len();
                out[split] = Inst::Split(split + 1, end);
            }
            None => {
                for _ in 1..*min {
                    emit(node, out);
                }
                let start = out.len();
                emit(node, out);
                let after = out.len() + 1;
                out.push(Inst::Split(start, after));
            }
            Some(max) => {
                for _ in 0..*min {
                    emit(node, out);
                }
                let mut splits = Vec::new();
                for _ in *min..max {
                    splits.push(out.len());
                    out.push(Inst::Split(out.len() + 1, 0));
                    emit(node, out);
                }
                let end = out.len();
                for split in splits {
                    out[split] = Inst::Split(split + 1, end);
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn program(pattern: &str) -> Vec<Inst> {
        compile(&parse(pattern).unwrap()).unwrap()
    }

    #[test]
    fn sizes_are_exact() {
        for pattern in [
            "",
            "a",
            "a|b|c",
            "(?:ab|c)*",
            "a+",
            "(?:ab){3}",
            "a{2,5}",
            "a{0,3}b{2,}",
            "^\\s*[0-9]*[dD][0-9]+\\s*([+-]\\s*[0-9]+)?\\s*$",
            "(?:a|b{0})x{0}",
        ] {
            let node = parse(pattern).unwrap();
            assert_eq!(size(&node) + 1, program(pattern).len() as u64, "{pattern}");
        }
    }

    #[test]
    fn the_state_cap_is_enforced_before_expanding() {
        assert!(compile(&parse("a{255}").unwrap()).is_ok());
        let e = compile(&parse("a{256}").unwrap()).unwrap_err();
        assert!(e.contains("needs 257 states"), "{e}");
        let e = compile(&parse("((a{1000}){1000}){1000}").unwrap()).unwrap_err();
        assert!(e.contains("more than the 256"), "{e}");
        let e = compile(&parse("a{4294967295}").unwrap()).unwrap_err();
        assert!(e.contains("more than the 256"), "{e}");
    }

    #[test]
    fn single_character_classes_are_characters() {
        assert_eq!(program("[a]"), vec![Inst::Char('a'), Inst::Match]);
    }
}

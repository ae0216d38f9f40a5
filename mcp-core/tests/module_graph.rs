//! The import graph of mcp-core's modules: no cycle between sibling modules, and the
//! layers of the crate root depend only downwards.
//!
//! Every file under `src/` is read as text. Each path it names that starts with `crate::`
//! or `super::` (in `use` items, grouped imports included, and in expressions or types) is
//! resolved to the deepest module it reaches. An edge from module `a::b::c` to `a::d::e` is
//! an edge between the siblings `a::b` and `a::d` (their children of the common ancestor);
//! a module naming its own ancestor or descendant adds no edge (a parent re-exports its
//! children). Unit tests (`#[cfg(test)] mod tests` at the bottom of a file) are left out:
//! a test may use anything.
//!
//! Then: the graph between siblings, at every level, has no cycle; and the crate root's
//! layers (`LAYERS`, lowest first) name only layers below them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate root's modules, lowest layer first. A module may use modules of its own or a
/// lower layer only. Modules of the root not listed here fail the test.
const LAYERS: &[&[&str]] = &[
    &["wire"],
    &["token"],
    &["model"],
    &["typed"],
    &["session", "client"],
    &["pump"],
];

/// Root items that are not modules (re-exports, the optional macros).
fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Module path of a file: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `lib.rs` is the root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a file without its unit tests and comments.
fn code_of(text: &str) -> String {
    let mut body = text;
    if let Some(at) = text.find("#[cfg(test)]\nmod tests") {
        body = &text[..at];
    }
    body.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Expands grouped imports: `crate::{a::{b, c}, d}` -> `crate::a::b`, `crate::a::c`, `crate::d`.
fn expand(prefix: &str, rest: &str, out: &mut Vec<String>) {
    let rest = rest.trim();
    if let Some(inner) = rest.strip_prefix('{') {
        // split the top level of the group on commas
        let inner = &inner[..inner.rfind('}').unwrap_or(inner.len())];
        let mut depth = 0;
        let mut start = 0;
        let bytes = inner.as_bytes();
        for i in 0..=bytes.len() {
            let c = bytes.get(i).copied().unwrap_or(b',');
            match c {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                b',' if depth == 0 => {
                    let item = inner[start..i].trim();
                    if !item.is_empty() {
                        expand(prefix, item, out);
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
    } else if let Some(brace) = rest.find("::{") {
        let head = &rest[..brace];
        expand(&format!("{prefix}::{head}"), &rest[brace + 2..], out);
    } else {
        let word: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        out.push(format!("{prefix}::{word}"));
    }
}

/// Every `crate::`/`super::` path a piece of code names.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            // must not be the tail of an identifier (`$crate::`, `my_crate::`)
            if at > 0 {
                let prev = bytes[at - 1];
                if prev.is_ascii_alphanumeric() || prev == b'_' || prev == b'$' {
                    continue;
                }
                if start == "super::" && code[..at].ends_with("::") {
                    continue; // part of a longer `super::super::` chain, handled at its start
                }
            }
            let head = start.trim_end_matches("::");
            let rest = &code[from..];
            // take the path up to its end: a group is balanced braces
            let mut end = 0;
            let mut depth = 0;
            for (j, c) in rest.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth > 0 => depth -= 1,
                    c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => {
                        end = j;
                        break;
                    }
                    _ => {}
                }
                end = j + c.len_utf8();
            }
            expand(head, &rest[..end], &mut out);
        }
    }
    out
}

/// Resolves a `crate::`/`super::` path named in module `from` to the deepest known module.
fn resolve(from: &[String], path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String>;
    let mut i = 0;
    if segs.first() == Some(&"crate") {
        base = Vec::new();
        i = 1;
    } else {
        base = from.to_vec();
        while segs.get(i) == Some(&"super") {
            base.pop()?;
            i += 1;
        }
    }
    for s in &segs[i..] {
        let mut next = base.clone();
        next.push((*s).to_string());
        if modules.contains(&next) {
            base = next;
        } else {
            break;
        }
    }
    Some(base)
}

#[test]
fn no_cycles_and_layers_point_down() {
    let src = src_dir();
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut modules = BTreeSet::new();
    let mut code = BTreeMap::new();
    for f in &all {
        let m = module_of(f.strip_prefix(&src).unwrap());
        modules.insert(m.clone());
        code.insert(m, code_of(&std::fs::read_to_string(f).unwrap()));
    }
    // also inline modules are not files; they never carry edges of their own here

    // sibling edges, keyed by parent module
    let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    let mut why: BTreeMap<(Vec<String>, String, String), String> = BTreeMap::new();
    for (m, text) in &code {
        for p in paths_in(text) {
            let Some(to) = resolve(m, &p, &modules) else {
                continue;
            };
            let common = m.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == m.len() || common == to.len() {
                continue; // ancestor or descendant
            }
            let parent = m[..common].to_vec();
            let (a, b) = (m[common].clone(), to[common].clone());
            why.entry((parent.clone(), a.clone(), b.clone()))
                .or_insert_with(|| format!("{} names {p}", m.join("::")));
            edges.entry(parent).or_default().insert((a, b));
        }
    }

    let mut failures = Vec::new();
    for (parent, set) in &edges {
        let nodes: BTreeSet<&String> = set.iter().flat_map(|(a, b)| [a, b]).collect();
        // find a cycle with a DFS
        let mut state: BTreeMap<&String, u8> = BTreeMap::new();
        fn dfs<'a>(
            n: &'a String,
            set: &'a BTreeSet<(String, String)>,
            state: &mut BTreeMap<&'a String, u8>,
            stack: &mut Vec<&'a String>,
        ) -> Option<Vec<String>> {
            state.insert(n, 1);
            stack.push(n);
            for (a, b) in set {
                if a != n {
                    continue;
                }
                match state.get(b).copied().unwrap_or(0) {
                    1 => {
                        let at = stack.iter().position(|x| *x == b).unwrap();
                        let mut cycle: Vec<String> =
                            stack[at..].iter().map(|s| s.to_string()).collect();
                        cycle.push(b.clone());
                        return Some(cycle);
                    }
                    0 => {
                        if let Some(c) = dfs(b, set, state, stack) {
                            return Some(c);
                        }
                    }
                    _ => {}
                }
            }
            stack.pop();
            state.insert(n, 2);
            None
        }
        for n in &nodes {
            if state.get(n).copied().unwrap_or(0) == 0 {
                if let Some(cycle) = dfs(n, set, &mut state, &mut Vec::new()) {
                    let reasons: Vec<String> = cycle
                        .windows(2)
                        .map(|w| why[&(parent.clone(), w[0].clone(), w[1].clone())].clone())
                        .collect();
                    failures.push(format!(
                        "cycle in `{}`: {}\n    {}",
                        if parent.is_empty() {
                            "crate".into()
                        } else {
                            parent.join("::")
                        },
                        cycle.join(" -> "),
                        reasons.join("\n    ")
                    ));
                    break;
                }
            }
        }
    }

    // the root's layers
    let layer_of = |name: &str| LAYERS.iter().position(|l| l.contains(&name));
    for m in &modules {
        if m.len() == 1 && layer_of(&m[0]).is_none() {
            failures.push(format!("root module `{}` is in no layer of LAYERS", m[0]));
        }
    }
    if let Some(root) = edges.get(&Vec::new()) {
        for (a, b) in root {
            if let (Some(la), Some(lb)) = (layer_of(a), layer_of(b)) {
                if lb > la {
                    failures.push(format!(
                        "layer `{a}` uses the higher layer `{b}`: {}",
                        why[&(Vec::new(), a.clone(), b.clone())]
                    ));
                }
            }
        }
    }

    let graph: Vec<String> = edges
        .iter()
        .flat_map(|(p, s)| {
            let p = if p.is_empty() {
                "crate".to_string()
            } else {
                p.join("::")
            };
            s.iter().map(move |(a, b)| format!("  {p}: {a} -> {b}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{}\n\nthe sibling graph:\n{}",
        failures.join("\n"),
        graph.join("\n")
    );
}

#[test]
fn the_scanner_reads_grouped_imports_and_super() {
    let mut modules = BTreeSet::new();
    for m in ["a", "a::b", "a::c", "d"] {
        modules.insert(m.split("::").map(String::from).collect::<Vec<_>>());
    }
    let paths = paths_in("use crate::{a::{b::X, c}, d::Y};\nlet x = super::super::d::f();");
    assert_eq!(
        paths,
        [
            "crate::a::b::X",
            "crate::a::c",
            "crate::d::Y",
            "super::super::d::f"
        ]
    );
    let from: Vec<String> = vec!["a".into(), "b".into()];
    assert_eq!(
        resolve(&from, "super::super::d::f", &modules),
        Some(vec!["d".to_string()])
    );
    assert_eq!(
        resolve(&from, "super::c::Z", &modules),
        Some(vec!["a".to_string(), "c".to_string()])
    );
}

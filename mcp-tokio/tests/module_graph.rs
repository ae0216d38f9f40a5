//! The module graph of mcp-tokio has no cycles: every file under `src/` is scanned for the
//! paths it names through `crate::` (and `super::` / `self::` reaching the crate root), each
//! resolved to a top-level module (a name the crate root re-exports counts as the module it
//! comes from), and the graph of top-level modules must be acyclic. The leaves (`output`,
//! `config`, `error`, `clock`, `lines`, `budget`) must import nothing from the crate.
//!
//! The scan is textual: comments (so rustdoc links), string and character literals are
//! skipped; inline `mod name { ... }` blocks are followed so that `super::` inside them
//! resolves to the right module. `crate::` paths inside the crate root (`lib.rs`) are its
//! re-exports, not dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Modules that must import nothing from the crate.
const LEAVES: &[&str] = &["output", "config", "error", "clock", "lines", "budget"];

/// The code of `text` with comments, strings and character literals blanked out (replaced
/// by spaces, newlines kept).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if (c == b'r' || (c == b'b' && next == Some(b'r')))
            && !b
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_')
            && {
                let mut j = i + if c == b'b' { 2 } else { 1 };
                while b.get(j) == Some(&b'#') {
                    j += 1;
                }
                b.get(j) == Some(&b'"')
            }
        {
            // A raw string: r#"..."#.
            let mut j = i + if c == b'b' { 2 } else { 1 };
            let mut hashes = 0;
            while b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|h| **h == b'#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &x in &b[i..j.min(b.len())] {
                blank(&mut out, x);
            }
            i = j;
        } else if c == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    out.push(b' ');
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if next == Some(b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|x| *x == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                // Multi-byte UTF-8 character?
                let s = std::str::from_utf8(&b[i + 1..(i + 6).min(b.len())]).unwrap_or("");
                s.chars()
                    .next()
                    .filter(|ch| ch.len_utf8() > 1)
                    .and_then(|ch| {
                        (b.get(i + 1 + ch.len_utf8()) == Some(&b'\''))
                            .then(|| i + 1 + ch.len_utf8())
                    })
            };
            match end {
                Some(e) => {
                    out.extend(std::iter::repeat_n(b' ', e + 1 - i));
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier starting at `s` (after spaces).
fn ident(s: &str) -> &str {
    let s = s.trim_start();
    let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
    &s[..end]
}

/// One path reference: its segments after the root keyword as far as they can be read
/// (`crate::{a::X, b}` gives `[a, X]` and `[b]`).
fn group_heads(rest: &str) -> Vec<Vec<String>> {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        // Split the group's items at depth 0.
        let mut items = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    items.push(&inner[start..k]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&inner[start..k]);
                    start = k + 1;
                }
                _ => {}
            }
        }
        items
            .into_iter()
            .filter(|i| !i.trim().is_empty())
            .flat_map(|item| {
                let first = ident(item).to_string();
                let after = item.trim_start()[first.len()..].trim_start();
                match after.strip_prefix("::") {
                    Some(more) => group_heads(more)
                        .into_iter()
                        .map(|mut p| {
                            p.insert(0, first.clone());
                            p
                        })
                        .collect::<Vec<_>>(),
                    None => vec![vec![first]],
                }
            })
            .collect()
    } else {
        let first = ident(rest).to_string();
        if first.is_empty() {
            return Vec::new();
        }
        let after = rest.trim_start()[first.len()..].trim_start();
        match after.strip_prefix("::") {
            Some(more) if !more.trim_start().starts_with('<') => {
                let tails = group_heads(more);
                if tails.is_empty() {
                    vec![vec![first]]
                } else {
                    tails
                        .into_iter()
                        .map(|mut p| {
                            p.insert(0, first.clone());
                            p
                        })
                        .collect()
                }
            }
            _ => vec![vec![first]],
        }
    }
}

/// Every path the code of a file names relative to the crate root, as absolute segment
/// lists (`crate::a::B` in any file, `super::x` in `src/m.rs` gives `[x]`, ...).
fn references(code: &str, file_module: &[String]) -> Vec<Vec<String>> {
    let mut refs = Vec::new();
    // The module path at each point: the file's, plus the inline `mod x {` blocks open.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (at, ch) = chars[k];
        let prev_ident = at > 0 && code[..at].chars().next_back().is_some_and(is_ident);
        match ch {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            _ if prev_ident || !is_ident(ch) => {}
            _ => {
                let word = ident(&code[at..]);
                let after = &code[at + word.len()..];
                if word == "mod" {
                    let name = ident(after);
                    let rest = after.trim_start()[name.len()..].trim_start();
                    if !name.is_empty() && rest.starts_with('{') {
                        inline.push((name.to_string(), depth));
                    }
                }
                let here: Vec<String> = file_module
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(n, _)| n.clone()))
                    .collect();
                let rooted = match word {
                    "crate" => after.strip_prefix("::").map(|r| (Vec::new(), r)),
                    "super" | "self" => {
                        // Climb one module per `super::`.
                        let mut base = here.clone();
                        let mut r = after;
                        let mut w = word;
                        loop {
                            let Some(more) = r.strip_prefix("::") else {
                                break None;
                            };
                            if w == "super" {
                                base.pop();
                            }
                            let nw = ident(more);
                            if nw == "super" {
                                w = nw;
                                r = &more.trim_start()[nw.len()..];
                                continue;
                            }
                            break Some((base, more));
                        }
                    }
                    _ => None,
                };
                if let Some((base, rest)) = rooted {
                    for tail in group_heads(rest) {
                        let mut path = base.clone();
                        path.extend(tail);
                        refs.push(path);
                    }
                }
                k += word.chars().count();
                continue;
            }
        }
        k += 1;
    }
    refs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules declared in `lib.rs`, and the module each root re-export comes
/// from (`pub use config::{ServerInfo, Limits};` maps `ServerInfo` and `Limits` to `config`).
fn crate_root(lib: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let code = code_only(lib);
    let mut modules = BTreeSet::new();
    let mut reexports = BTreeMap::new();
    for stmt in code.split(';') {
        let s = stmt.trim();
        let s = s.rsplit(']').next().unwrap_or(s).trim();
        let s = s.strip_prefix("pub ").unwrap_or(s).trim_start();
        if let Some(m) = s.strip_prefix("mod ") {
            let name = ident(m);
            if !name.is_empty() && !m.contains('{') {
                modules.insert(name.to_string());
            }
        }
    }
    for stmt in code.split(';') {
        let s = stmt.trim();
        let Some(i) = s.find("use ") else { continue };
        if s[..i].contains('{') {
            continue; // inside an inline module
        }
        for path in group_heads(&s[i + 4..]) {
            let Some(first) = path.first() else { continue };
            let first = if first == "crate" {
                path.get(1)
            } else {
                Some(first)
            };
            let Some(module) = first.filter(|m| modules.contains(*m)) else {
                continue;
            };
            let Some(last) = path.last() else { continue };
            // `x as y`: only the first identifier of each item was read; good enough for
            // the names this crate re-exports.
            reexports.insert(last.clone(), module.clone());
        }
    }
    (modules, reexports)
}

/// Top-level module -> the top-level modules it names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let (modules, reexports) = crate_root(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    let mut unresolved = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let mut module: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        if module == ["lib"] {
            continue; // the root: declarations and re-exports
        }
        let top = module[0].clone();
        let code = code_only(&fs::read_to_string(&file).expect("source"));
        for path in references(&code, &module) {
            let Some(first) = path.first() else { continue };
            let target = if modules.contains(first) {
                first.clone()
            } else if let Some(m) = reexports.get(first) {
                m.clone()
            } else if first == "__macro_support" || first.is_empty() {
                continue;
            } else {
                unresolved.push(format!("{}: crate::{}", rel.display(), path.join("::")));
                continue;
            };
            if target != top {
                graph.entry(top.clone()).or_default().insert(target);
            }
        }
    }
    assert!(
        unresolved.is_empty(),
        "paths that name neither a top-level module nor a root re-export of one (move items \
         out of lib.rs into a module):\n{}",
        unresolved.join("\n")
    );
    graph
}

fn render(graph: &BTreeMap<String, BTreeSet<String>>) -> String {
    graph
        .iter()
        .map(|(m, deps)| {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            format!("  {m} -> {}", deps.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Tarjan<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            let graph = self.graph;
            for w in graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    scc.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.found.push(scc);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.found
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = module_graph();
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "cycles between top-level modules of mcp-tokio: {found:?}\nmodule graph:\n{}",
        render(&graph)
    );
    // The expected layering, so that a regression names the edge.
    for (upper, lower) in [("server", "driver"), ("driver", "state")] {
        assert!(
            graph[upper].contains(lower),
            "expected {upper} -> {lower}\nmodule graph:\n{}",
            render(&graph)
        );
    }
    println!("module graph:\n{}", render(&graph));
}

#[test]
fn leaves_import_nothing_from_the_crate() {
    let graph = module_graph();
    for leaf in LEAVES {
        let deps = graph
            .get(*leaf)
            .unwrap_or_else(|| panic!("no module {leaf}"));
        assert!(
            deps.is_empty(),
            "{leaf} must be a leaf but names {deps:?}\nmodule graph:\n{}",
            render(&graph)
        );
    }
}

/// The scanner finds what it must: a cycle planted in text is reported.
#[test]
fn the_scan_sees_paths_and_cycles() {
    let code = code_only(
        "use crate::{a::X, b};\n// crate::c::Y\nlet s = \"crate::d\";\nmod tests { use super::e; }\nfn f<'a>(c: char) -> bool { c == '{' || super::g::h() }\n",
    );
    let refs = references(&code, &["m".to_string()]);
    let firsts: BTreeSet<String> = refs.iter().map(|p| p[0].clone()).collect();
    // `super::e` inside `mod tests` of `m` is `m::e`; `super::g` at the top of `m` is `g`.
    assert_eq!(
        firsts,
        ["a", "b", "g", "m"].iter().map(|s| s.to_string()).collect(),
        "{refs:?}"
    );
    let mut graph = BTreeMap::new();
    graph.insert("x".to_string(), BTreeSet::from(["y".to_string()]));
    graph.insert("y".to_string(), BTreeSet::from(["x".to_string()]));
    graph.insert("z".to_string(), BTreeSet::from(["x".to_string()]));
    assert_eq!(cycles(&graph), vec![vec!["x".to_string(), "y".to_string()]]);
}

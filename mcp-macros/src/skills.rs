//! `skill!("dir", "skill://base/name")`: a skill entry (`mcp_rs_core::model::skills::Skill`)
//! built at compile time from a directory of files. Every file under `dir` (relative to the
//! crate's `Cargo.toml`) is in the manifest with its size and `sha256:` digest; the front
//! matter is SKILL.md's, converted to JSON. The files are tracked (`include_bytes!`), so a
//! change rebuilds the entry.
//!
//! The front matter subset converted: `key: scalar` and one level of nested mappings
//! (`metadata:` then indented `key: scalar` lines), plain, `'single'` and `"double"` quoted
//! scalars (every scalar becomes a JSON string; `key:` with nothing under it is `null`),
//! blank lines and comments. Anything else is a compile error naming the line.

use crate::attrs::json_string;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;
use sha2::{Digest, Sha256};
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

/// Expands `skill!(dir, uri)`.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match expand_inner(input) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

fn expand_inner(input: TokenStream) -> syn::Result<TokenStream> {
    let args =
        syn::parse::Parser::parse2(Punctuated::<LitStr, Token![,]>::parse_terminated, input)?;
    let [dir_lit, uri_lit] = args.iter().collect::<Vec<_>>()[..] else {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "expected skill!(\"directory\", \"skill://…/name\")",
        ));
    };
    let err = |m: String| syn::Error::new(dir_lit.span(), m);
    let base = std::env::var("CARGO_MANIFEST_DIR").map_err(|e| err(e.to_string()))?;
    let dir = Path::new(&base).join(dir_lit.value());
    let skill_uri = uri_lit.value().trim_end_matches('/').to_owned();
    let mut files = Vec::new();
    walk(&dir, &mut files).map_err(|e| err(format!("{}: {e}", dir.display())))?;
    files.sort();
    let skill_md = dir.join("SKILL.md");
    let text = std::fs::read_to_string(&skill_md)
        .map_err(|e| err(format!("{}: {e}", skill_md.display())))?;
    let frontmatter =
        frontmatter_json(&text).map_err(|m| err(format!("SKILL.md front matter: {m}")))?;
    let mut entries = Vec::new();
    let mut tracked = Vec::new();
    // SKILL.md first, then the others in path order.
    files.sort_by_key(|p| *p != skill_md);
    for path in &files {
        let bytes = std::fs::read(path).map_err(|e| err(format!("{}: {e}", path.display())))?;
        let rel = path
            .strip_prefix(&dir)
            .map_err(|e| err(e.to_string()))?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let uri = format!("{skill_uri}/{rel}");
        let digest = format!("sha256:{:x}", Sha256::digest(&bytes));
        let size = bytes.len() as u64;
        entries.push(quote! {
            ::mcp_rs_core::model::skills::SkillFile { uri: #uri, digest: #digest, size: #size }
        });
        let abs = path.to_string_lossy().into_owned();
        tracked.push(quote! { const _: &[u8] = include_bytes!(#abs); });
    }
    let md_uri = format!("{skill_uri}/SKILL.md");
    Ok(quote! {
        {
            #(#tracked)*
            ::mcp_rs_core::model::skills::Skill {
                uri: #md_uri,
                frontmatter: #frontmatter,
                resources: ::mcp_rs_core::model::skills::SkillResources::Files(&[#(#entries),*]),
            }
        }
    })
}

/// Every file under `dir`, recursively.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// A scalar's text, as a JSON string.
fn scalar(value: &str, line: usize) -> Result<String, String> {
    let bad = || format!("line {line}: outside the supported YAML subset");
    if let Some(rest) = value.strip_prefix('\'') {
        let end = rest.rfind('\'').ok_or_else(bad)?;
        let after = rest[end + 1..].trim_start();
        if !(after.is_empty() || after.starts_with('#')) {
            return Err(bad());
        }
        return Ok(json_string(&rest[..end].replace("''", "'")));
    }
    if let Some(rest) = value.strip_prefix('"') {
        let mut text = String::new();
        let mut chars = rest.chars();
        loop {
            match chars.next().ok_or_else(bad)? {
                '"' => break,
                '\\' => text.push(match chars.next().ok_or_else(bad)? {
                    '\\' => '\\',
                    '"' => '"',
                    '/' => '/',
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    _ => return Err(bad()),
                }),
                c => text.push(c),
            }
        }
        let after = chars.as_str().trim_start();
        if !(after.is_empty() || after.starts_with('#')) {
            return Err(bad());
        }
        return Ok(json_string(&text));
    }
    if value.starts_with(['[', '{', '&', '*', '!', '|', '>', '%', '@', '`', '-', '?']) {
        return Err(bad());
    }
    let text = value.split(" #").next().unwrap_or("").trim_end();
    if text.contains(": ") || text.ends_with(':') {
        return Err(bad());
    }
    Ok(json_string(text))
}

/// SKILL.md's front matter (the YAML subset above) as a JSON object.
fn frontmatter_json(text: &str) -> Result<String, String> {
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("SKILL.md does not start with `---`")?;
    let mut top: Vec<(String, String)> = Vec::new();
    // The open mapping: (its key's index in `top`, its members).
    let mut open: Option<(usize, Vec<(String, String)>)> = None;
    let mut closed = false;
    // The indentation of the open mapping's members, once known.
    let mut indent = 0;
    let close = |open: &mut Option<(usize, Vec<(String, String)>)>,
                 top: &mut Vec<(String, String)>| {
        if let Some((i, members)) = open.take() {
            if !members.is_empty() {
                let inner: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{}:{v}", json_string(k)))
                    .collect();
                top[i].1 = format!("{{{}}}", inner.join(","));
            }
        }
    };
    for (n, raw) in body.lines().enumerate() {
        let line = n + 2;
        let raw = raw.trim_end();
        if raw == "---" {
            closed = true;
            break;
        }
        let trimmed = raw.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let nested = trimmed.len() != raw.len();
        if nested {
            let width = raw.len() - trimmed.len();
            if indent != 0 && width != indent {
                return Err(format!("line {line}: outside the supported YAML subset"));
            }
            indent = width;
        }
        let (key, value) = trimmed
            .split_once(": ")
            .map(|(k, v)| (k, v.trim()))
            .or_else(|| trimmed.strip_suffix(':').map(|k| (k, "")))
            .ok_or(format!("line {line}: expected `key: value`"))?;
        if key.is_empty() || key.starts_with(['\'', '"', '-', '?', '\t']) {
            return Err(format!("line {line}: outside the supported YAML subset"));
        }
        let value = if value.is_empty() || value.starts_with('#') {
            None
        } else {
            Some(scalar(value, line)?)
        };
        if nested {
            let (_, members) = open
                .as_mut()
                .ok_or(format!("line {line}: outside the supported YAML subset"))?;
            let value = value.ok_or(format!("line {line}: nesting deeper than one mapping"))?;
            if members.iter().any(|(k, _)| k == key) {
                return Err(format!("line {line}: duplicate key"));
            }
            members.push((key.to_owned(), value));
            continue;
        }
        close(&mut open, &mut top);
        indent = 0;
        if top.iter().any(|(k, _)| k == key) {
            return Err(format!("line {line}: duplicate key"));
        }
        match value {
            Some(v) => top.push((key.to_owned(), v)),
            None => {
                top.push((key.to_owned(), "null".to_owned()));
                open = Some((top.len() - 1, Vec::new()));
            }
        }
    }
    if !closed {
        return Err("no closing `---`".into());
    }
    close(&mut open, &mut top);
    let members: Vec<String> = top
        .iter()
        .map(|(k, v)| format!("{}:{v}", json_string(k)))
        .collect();
    Ok(format!("{{{}}}", members.join(",")))
}

#[cfg(test)]
mod tests {
    use super::frontmatter_json;

    #[test]
    fn the_subset_converts() {
        let md = "---\nname: greeting\ndescription: 'It''s \"here\"' # note\nmetadata:\n  author: \"mcp\\\\rs\"\nempty:\n---\nbody\n";
        assert_eq!(
            frontmatter_json(md).unwrap(),
            r#"{"name":"greeting","description":"It's \"here\"","metadata":{"author":"mcp\\rs"},"empty":null}"#
        );
    }

    #[test]
    fn the_rest_is_refused() {
        for md in [
            "no front matter",
            "---\nname: a\n",
            "---\ntools: [a]\n---\n",
            "---\nm:\n  a:\n---\n",
            "---\nm:\n  a: b\n    c: d\n---\n",
            "---\n  a: b\n---\n",
            "---\na: b\na: c\n---\n",
            "---\njust text\n---\n",
        ] {
            assert!(frontmatter_json(md).is_err(), "{md:?}");
        }
    }
}

//! Golden transcripts: `tests/vectors/<concept>/*.jsonl`. Each line is one of
//! `{"c": <message>}` (sent as compact JSON), `{"raw": "<text>"}` (sent verbatim),
//! `{"op": "tools_changed"}`, `{"op": "complete", "call": <n>, "text": "..."}` (completes the
//! n-th deferred call handed out so far) or `{"op": "progress", "call": <n>, "progress": p,
//! "total": t}`; `{"op": "full"}` (serve resources, prompts, completions and the `confirm`
//! tool too, see `Pair::full`), `{"op": "list_changed", "kind": "tools" | "prompts" |
//! "resources" | "templates"}`, `{"op": "now", "ms": t}` (the time of later messages),
//! `{"op": "complete_read", "call": <n>, "contents": [{"uri", "text" | "blob"}]}` (no
//! `contents`: not found), `{"op": "complete_prompt", "call": <n>, "text": "..."}`,
//! `{"op": "complete_completion", "call": <n>, "values": [...]}` and `{"op": "close",
//! "subscription": <n>}` (closes the n-th listen stream); each is followed by the
//! `{"s": <message>}` lines the server must emit,
//! compared as JSON values. Every emitted frame is also schema-validated (see `pair`).
//! `UPDATE_GOLDEN=1 cargo test --test golden` rewrites the `s` lines from the current output.

mod pair;

use std::path::{Path, PathBuf};

use mcp_rs_core::ListKind;
use pair::Pair;
use serde_json::{json, Value};

fn run_ops(p: &mut Pair, op: &Value) -> Vec<Value> {
    if let Some(msg) = op.get("c") {
        return p.send(&msg.to_string());
    }
    if let Some(raw) = op.get("raw").and_then(Value::as_str) {
        return p
            .send_bytes(raw.as_bytes())
            .into_iter()
            .map(|f| f.value)
            .collect();
    }
    let call = |p: &Pair| p.calls[op["call"].as_u64().expect("call index") as usize].0;
    match op["op"].as_str() {
        Some("tools_changed") => {
            p.session.tools_changed();
            let mut frames = Vec::new();
            p.drain(&mut frames);
            frames.into_iter().map(|f| f.value).collect()
        }
        Some("complete") => {
            let token = call(p);
            p.complete_text(token, op["text"].as_str().unwrap_or(""))
                .into_iter()
                .collect()
        }
        Some("progress") => {
            let token = call(p);
            let mut out = vec![0u8; 4096];
            let total = op.get("total").and_then(Value::as_f64);
            match p
                .session
                .progress(
                    token,
                    op["progress"].as_f64().unwrap(),
                    total,
                    None,
                    &mut out,
                )
                .unwrap()
            {
                Some(tx) => {
                    p.out[..tx.len].copy_from_slice(&out[..tx.len]);
                    vec![p.frame(tx)]
                }
                None => vec![],
            }
        }
        Some("full") => {
            p.enable_full();
            vec![]
        }
        Some("now") => {
            p.now = op["ms"].as_u64().expect("ms");
            vec![]
        }
        Some("list_changed") => {
            let kind = match op["kind"].as_str() {
                Some("tools") => ListKind::Tools,
                Some("prompts") => ListKind::Prompts,
                Some("resources") => ListKind::Resources,
                Some("templates") => ListKind::ResourceTemplates,
                other => panic!("unknown list kind {other:?} in {op}"),
            };
            p.session.list_changed(kind);
            p.pending().into_iter().map(|f| f.value).collect()
        }
        Some("complete_read") => {
            let token = call(p);
            let contents = op.get("contents").and_then(Value::as_array).cloned();
            let tx = p
                .session
                .complete_read(token, &mut p.out, |r| match &contents {
                    None => r.not_found(),
                    Some(items) => {
                        for c in items {
                            let uri = c["uri"].as_str().expect("uri");
                            let mime = c.get("mimeType").and_then(Value::as_str);
                            match (c.get("text"), c.get("blob")) {
                                (Some(t), _) => r.text(uri, mime, t.as_str().unwrap()),
                                (_, Some(b)) => r.blob(uri, mime, b.as_str().unwrap()),
                                _ => panic!("contents need text or blob: {c}"),
                            };
                        }
                    }
                });
            p.answered(tx).into_iter().collect()
        }
        Some("complete_prompt") => {
            let token = call(p);
            let text = op["text"].as_str().unwrap_or("");
            let tx = p.session.complete_prompt(token, &mut p.out, |r| {
                r.message(mcp_rs_core::Role::User, &mcp_rs_core::Content::Text(text));
            });
            p.answered(tx).into_iter().collect()
        }
        Some("complete_completion") => {
            let token = call(p);
            let values = op["values"].as_array().cloned().unwrap_or_default();
            let tx = p.session.complete_completion(token, &mut p.out, |r| {
                for v in &values {
                    r.value(v.as_str().unwrap());
                }
            });
            p.answered(tx).into_iter().collect()
        }
        Some("close") => {
            let token =
                p.subscriptions[op["subscription"].as_u64().expect("subscription") as usize];
            let mut out = vec![0u8; 1024];
            let tx = p.session.close_subscription(token, &mut out);
            match tx.expect("close") {
                Some(tx) => {
                    p.out[..tx.len].copy_from_slice(&out[..tx.len]);
                    vec![p.frame(tx)]
                }
                None => vec![],
            }
        }
        other => panic!("unknown op {other:?} in {op}"),
    }
}

fn run_file(path: &Path, update: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut p = Pair::with(
        mcp_rs_core::Config {
            page_size: 3,
            ..mcp_rs_core::Config::new(mcp_rs_core::SecretKey([0x6d; 16]))
        },
        4,
        65536,
    );
    let mut blessed = Vec::new();
    let mut expected: Vec<Value> = Vec::new();
    let mut actual: Vec<Value> = Vec::new();
    let mut failures = Vec::new();
    let mut last_input = String::new();
    let check = |expected: &mut Vec<Value>,
                 actual: &mut Vec<Value>,
                 input: &str,
                 failures: &mut Vec<String>| {
        if expected != actual {
            failures.push(format!(
                "after {input}\n  expected: {}\n  actual:   {}",
                serde_json::to_string(expected).unwrap(),
                serde_json::to_string(actual).unwrap()
            ));
        }
        expected.clear();
        actual.clear();
    };
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        if let Some(s) = v.get("s") {
            expected.push(s.clone());
            continue;
        }
        check(&mut expected, &mut actual, &last_input, &mut failures);
        blessed.push(line.to_string());
        let out = run_ops(&mut p, &v);
        for frame in &out {
            blessed.push(json!({ "s": frame }).to_string());
        }
        actual = out;
        last_input = line.to_string();
    }
    check(&mut expected, &mut actual, &last_input, &mut failures);
    if update {
        std::fs::write(path, blessed.join("\n") + "\n").map_err(|e| e.to_string())?;
        return Ok(());
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{}:\n{}", path.display(), failures.join("\n")))
    }
}

fn vector_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut files = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/vectors") {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            for f in std::fs::read_dir(&dir).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "jsonl") {
                    files.push(f);
                }
            }
        }
    }
    files.sort();
    files
}

#[test]
fn golden_transcripts() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let files = vector_files();
    assert!(
        files.len() >= 14,
        "expected golden transcripts, found {}",
        files.len()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| run_file(f, update).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! Proves the schema-validation harness really validates: official examples pass, broken
//! messages fail with useful errors.

mod harness;

use harness::{has_def, spec_dir, spec_revisions, validate_def, validate_server_message};
use serde_json::{json, Value};

const LATEST: &str = "2026-07-28";

#[test]
fn all_revisions_load() {
    assert_eq!(spec_revisions().len(), 5);
    for rev in spec_revisions() {
        assert!(has_def(rev, "Result"), "{rev}: no Result definition");
        assert!(has_def(rev, "JSONRPCNotification"), "{rev}");
        assert!(has_def(rev, "ListToolsResult"), "{rev}");
        assert!(has_def(rev, "CallToolResult"), "{rev}");
    }
    assert!(has_def(LATEST, "DiscoverResult"));
    assert!(!has_def("2025-11-25", "DiscoverResult"));
    assert!(!has_def(LATEST, "InitializeResult"));
    assert!(!has_def("2099-01-01", "Result"));
    let err = validate_def("2099-01-01", "Result", &json!({})).unwrap_err();
    assert!(err.contains("2099-01-01"), "{err}");
    let err = validate_def(LATEST, "NoSuchType", &json!({})).unwrap_err();
    assert!(err.contains("NoSuchType") && err.contains(LATEST), "{err}");
}

#[test]
fn official_examples_validate() {
    let dir = spec_dir().join(LATEST).join("examples");
    let mut types: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    types.sort();
    let (mut checked, mut skipped_types) = (0usize, Vec::new());
    let mut failures = Vec::new();
    for type_dir in &types {
        let type_name = type_dir.file_name().unwrap().to_str().unwrap().to_owned();
        if !has_def(LATEST, &type_name) {
            skipped_types.push(type_name);
            continue;
        }
        let mut files: Vec<_> = std::fs::read_dir(type_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let value: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            if let Err(e) = validate_def(LATEST, &type_name, &value) {
                failures.push(format!("{}: {e}", file.display()));
            }
            checked += 1;
        }
    }
    println!(
        "checked {checked} examples in {} types; skipped types without a definition: {skipped_types:?}",
        types.len() - skipped_types.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked > 50, "only {checked} examples checked");
}

#[test]
fn examples_fail_when_broken() {
    // The validator is not vacuous: mutating a real example makes it fail.
    let path = spec_dir()
        .join(LATEST)
        .join("examples/ListToolsResult/tools-list-with-cursor-and-ttl.json");
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    validate_def(LATEST, "ListToolsResult", &value).unwrap();
    value["tools"][0]["name"] = json!(42);
    let err = validate_def(LATEST, "ListToolsResult", &value).unwrap_err();
    assert!(err.contains("/tools/0/name"), "{err}");
}

fn tool() -> Value {
    json!({"name": "echo", "description": "Echo", "inputSchema": {"type": "object"}})
}

#[test]
fn initialize_result_2024() {
    let rev = "2024-11-05";
    let ok = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "protocolVersion": rev,
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": {"name": "mcp-rs", "version": "0.1.0"}
        }
    });
    validate_server_message(rev, Some("initialize"), &ok).unwrap();
    let mut bad = ok.clone();
    bad["result"].as_object_mut().unwrap().remove("serverInfo");
    let err = validate_server_message(rev, Some("initialize"), &bad).unwrap_err();
    assert!(
        err.contains(rev) && err.contains("InitializeResult") && err.contains("serverInfo"),
        "{err}"
    );
    // Envelope errors are caught as well.
    let mut bad = ok.clone();
    bad["jsonrpc"] = json!("1.0");
    let err = validate_server_message(rev, Some("initialize"), &bad).unwrap_err();
    assert!(
        err.contains("JSONRPCResponse") && err.contains("/jsonrpc"),
        "{err}"
    );
}

#[test]
fn list_tools_result_requires_tools() {
    for rev in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let ok = json!({"jsonrpc": "2.0", "id": "a", "result": {"tools": [tool()]}});
        validate_server_message(rev, Some("tools/list"), &ok).unwrap();
        let bad = json!({"jsonrpc": "2.0", "id": "a", "result": {"nextCursor": "x"}});
        let err = validate_server_message(rev, Some("tools/list"), &bad).unwrap_err();
        assert!(
            err.contains(rev) && err.contains("ListToolsResult") && err.contains("tools"),
            "{err}"
        );
        let bad = json!({"tools": [{"name": "no-schema"}]});
        let err = validate_def(rev, "ListToolsResult", &bad).unwrap_err();
        assert!(err.contains("/tools/0"), "{err}");
    }
}

#[test]
fn list_tools_result_2026_requires_ttl() {
    let ok = json!({"jsonrpc": "2.0", "id": 2, "result": {
        "resultType": "complete", "tools": [tool()], "ttlMs": 0, "cacheScope": "public"
    }});
    validate_server_message(LATEST, Some("tools/list"), &ok).unwrap();
    let mut bad = ok.clone();
    bad["result"].as_object_mut().unwrap().remove("ttlMs");
    let err = validate_server_message(LATEST, Some("tools/list"), &bad).unwrap_err();
    assert!(err.contains(LATEST) && err.contains("ttlMs"), "{err}");
    // A pre-2026 result is not a 2026 result.
    let old = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool()]}});
    assert!(validate_server_message(LATEST, Some("tools/list"), &old).is_err());
}

#[test]
fn call_tool_result_content_type() {
    for rev in spec_revisions() {
        let mut result = json!({"content": [{"type": "text", "text": "hi"}], "isError": false});
        if *rev == LATEST {
            result["resultType"] = json!("complete");
        }
        let ok = json!({"jsonrpc": "2.0", "id": 3, "result": result});
        validate_server_message(rev, Some("tools/call"), &ok).unwrap();
        let mut bad = ok.clone();
        bad["result"]["content"] = json!("hi");
        let err = validate_server_message(rev, Some("tools/call"), &bad).unwrap_err();
        assert!(
            err.contains(rev)
                && err.contains("CallToolResult")
                && err.contains("at /result/content:"),
            "{err}"
        );
        let mut bad = ok.clone();
        bad["result"]["content"][0]["type"] = json!("bogus");
        assert!(validate_server_message(rev, Some("tools/call"), &bad).is_err());
    }
}

#[test]
fn empty_results() {
    for rev in spec_revisions() {
        let mut result = json!({});
        if *rev == LATEST {
            result["resultType"] = json!("complete");
        }
        let msg = json!({"jsonrpc": "2.0", "id": 9, "result": result});
        validate_server_message(rev, Some("ping"), &msg).unwrap();
        validate_server_message(rev, Some("logging/setLevel"), &msg).unwrap();
        validate_server_message(rev, None, &msg).unwrap();
        let bad = json!({"jsonrpc": "2.0", "id": 9, "result": []});
        assert!(
            validate_server_message(rev, Some("ping"), &bad).is_err(),
            "{rev}"
        );
    }
    // 2026 results need resultType.
    let msg = json!({"jsonrpc": "2.0", "id": 9, "result": {}});
    assert!(validate_server_message(LATEST, Some("ping"), &msg).is_err());
}

#[test]
fn error_responses() {
    for rev in spec_revisions() {
        let ok = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found"}});
        validate_server_message(rev, Some("foo/bar"), &ok).unwrap();
        // Parse errors have no id (null or absent, depending on the revision).
        let bad = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": "x", "message": "m"}});
        let err = validate_server_message(rev, None, &bad).unwrap_err();
        assert!(err.contains("/error/code") && err.contains(rev), "{err}");
        let bad = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32601}});
        assert!(validate_server_message(rev, None, &bad).is_err(), "{rev}");
    }
    let unsupported = json!({"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "1999-01-01"}
    }});
    validate_server_message(LATEST, Some("tools/list"), &unsupported).unwrap();
    let mut bad = unsupported.clone();
    bad["error"].as_object_mut().unwrap().remove("data");
    let err = validate_server_message(LATEST, Some("tools/list"), &bad).unwrap_err();
    assert!(err.contains("UnsupportedProtocolVersionError"), "{err}");
    // Older revisions have no such definition: only the generic envelope applies.
    validate_server_message("2025-11-25", None, &bad).unwrap();

    let example = spec_dir()
        .join(LATEST)
        .join("examples/MissingRequiredClientCapabilityError");
    for file in std::fs::read_dir(example).unwrap() {
        let value: Value =
            serde_json::from_str(&std::fs::read_to_string(file.unwrap().path()).unwrap()).unwrap();
        validate_server_message(LATEST, None, &value).unwrap();
        let mut bad = value.clone();
        bad["error"]["data"] = json!("nope");
        let err = validate_server_message(LATEST, None, &bad).unwrap_err();
        assert!(
            err.contains("MissingRequiredClientCapabilityError"),
            "{err}"
        );
    }
}

#[test]
fn notifications() {
    for rev in spec_revisions() {
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t1", "progress": 0.5, "total": 1}});
        validate_server_message(rev, None, &progress).unwrap();
        let mut bad = progress.clone();
        bad["params"]
            .as_object_mut()
            .unwrap()
            .remove("progressToken");
        let err = validate_server_message(rev, None, &bad).unwrap_err();
        assert!(
            err.contains("ProgressNotification") && err.contains(rev),
            "{err}"
        );

        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "hello"}});
        validate_server_message(rev, None, &log).unwrap();
        let mut bad = log.clone();
        bad["params"]["level"] = json!("loud");
        let err = validate_server_message(rev, None, &bad).unwrap_err();
        assert!(err.contains("/params/level"), "{err}");

        let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        validate_server_message(rev, None, &changed).unwrap();

        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "timeout"}});
        validate_server_message(rev, None, &cancelled).unwrap();

        let other = json!({"jsonrpc": "2.0", "method": "notifications/custom", "params": {}});
        validate_server_message(rev, None, &other).unwrap();
        let bad = json!({"jsonrpc": "2.0", "method": 5});
        assert!(validate_server_message(rev, None, &bad).is_err(), "{rev}");
    }
    assert!(validate_server_message(LATEST, None, &json!([1, 2])).is_err());
}

#[test]
fn discover_result_2026() {
    let dir = spec_dir().join(LATEST).join("examples/DiscoverResult");
    for file in std::fs::read_dir(dir).unwrap() {
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(file.unwrap().path()).unwrap()).unwrap();
        let msg = json!({"jsonrpc": "2.0", "id": 1, "result": result});
        validate_server_message(LATEST, Some("server/discover"), &msg).unwrap();
        let mut bad = msg.clone();
        bad["result"] = json!({"resultType": "complete"});
        let err = validate_server_message(LATEST, Some("server/discover"), &bad).unwrap_err();
        assert!(err.contains("DiscoverResult"), "{err}");
    }
}

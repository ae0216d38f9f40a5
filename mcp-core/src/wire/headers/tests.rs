//! Every row of the module tables, and the session's view of the body.

use super::*;
use crate::wire::peek::peek;
use std::string::ToString;

fn peeked(text: &str) -> Peek<'_> {
    peek(text.as_bytes(), Limits::default())
}

fn request(h: &[(&str, &str)], body: &str) -> Result<(), HeaderError> {
    check_request(h, &peeked(body)).map_err(|r| r.error)
}

const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

#[test]
fn method_rows() {
    let ok = [("Mcp-Method", "tools/call"), ("Mcp-Name", "t")];
    assert_eq!(request(&ok, CALL), Ok(()));
    // Row 1: missing.
    assert_eq!(
        request(&[("Mcp-Name", "t")], CALL),
        Err(HeaderError::MissingMethod)
    );
    // Row 2: values are case-sensitive, names are not, white space is trimmed.
    let upper = [("Mcp-Method", "TOOLS/CALL"), ("Mcp-Name", "t")];
    assert_eq!(request(&upper, CALL), Err(HeaderError::MethodMismatch));
    let names = [("MCP-METHOD", " tools/call\t"), ("mcp-name", "\tt ")];
    assert_eq!(request(&names, CALL), Ok(()));
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(
        request(&[("Mcp-Method", "tools/call")], list),
        Err(HeaderError::MethodMismatch)
    );
    assert_eq!(request(&[("Mcp-Method", "tools/list")], list), Ok(()));
    // Escapes in the body compare decoded; unknown methods compare as sent.
    let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"tools\/list"}"#;
    assert_eq!(request(&[("Mcp-Method", "tools/list")], escaped), Ok(()));
    let unknown = r#"{"jsonrpc":"2.0","id":1,"method":"x/y","params":{"name":"n"}}"#;
    assert_eq!(request(&[("Mcp-Method", "x/y")], unknown), Ok(()));
}

#[test]
fn version_row() {
    let h = |v| {
        [
            ("MCP-Protocol-Version", v),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "t"),
        ]
    };
    assert_eq!(request(&h(MODERN), CALL), Ok(()));
    // Row 3: the body names another revision than the header.
    assert_eq!(
        request(&h("2025-11-25"), CALL),
        Err(HeaderError::VersionMismatch)
    );
    let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-2\u0038"}}}"#;
    let list = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/list"),
    ];
    assert_eq!(request(&list, escaped), Ok(()));
    // A body without a version: the session answers it.
    let bare = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(request(&list, bare), Ok(()));
}

#[test]
fn name_rows() {
    // Row 4: missing, for each method with a target.
    assert_eq!(
        request(&[("Mcp-Method", "tools/call")], CALL),
        Err(HeaderError::MissingName)
    );
    let get = r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p","uri":"u"}}"#;
    assert_eq!(
        request(&[("Mcp-Method", "prompts/get")], get),
        Err(HeaderError::MissingName)
    );
    assert_eq!(
        request(&[("Mcp-Method", "prompts/get"), ("Mcp-Name", "p")], get),
        Ok(())
    );
    let read = r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a://b"}}"#;
    let h = |n| [("Mcp-Method", "resources/read"), ("Mcp-Name", n)];
    assert_eq!(request(&h("a://b"), read), Ok(()));
    // Row 5: another target; a target that is no string matches nothing.
    assert_eq!(request(&h("a://c"), read), Err(HeaderError::NameMismatch));
    let call = |n| [("Mcp-Method", "tools/call"), ("Mcp-Name", n)];
    assert_eq!(request(&call("u"), CALL), Err(HeaderError::NameMismatch));
    let numbered = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#;
    assert_eq!(
        request(&call("5"), numbered),
        Err(HeaderError::NameMismatch)
    );
    // The encoded form is decoded: "é" is w6k=, "t" is dA==.
    let accented = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"\u00e9"}}"#;
    assert_eq!(request(&call("=?base64?w6k=?="), accented), Ok(()));
    assert_eq!(request(&call("=?base64?dA==?="), CALL), Ok(()));
    // Legacy-only methods name no target here (the session refuses them).
    let subscribe =
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"a://b"}}"#;
    assert_eq!(
        request(&[("Mcp-Method", "resources/subscribe")], subscribe),
        Ok(())
    );
}

#[test]
fn generic_rows() {
    // Row 9: repeated, whatever the case of the names.
    let twice = [
        ("Mcp-Method", "tools/call"),
        ("mcp-method", "tools/call"),
        ("Mcp-Name", "t"),
    ];
    assert_eq!(request(&twice, CALL), Err(HeaderError::Repeated));
    let names = [
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "t"),
        ("MCP-NAME", "t"),
    ];
    assert_eq!(request(&names, CALL), Err(HeaderError::Repeated));
    let versions = [
        ("MCP-Protocol-Version", MODERN),
        ("mcp-protocol-version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "t"),
    ];
    assert_eq!(request(&versions, CALL), Err(HeaderError::Repeated));
    // Row 10: not visible ASCII.
    let raw = [("Mcp-Method", "tools/call"), ("Mcp-Name", "\u{e9}")];
    let accented = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"\u00e9"}}"#;
    assert_eq!(request(&raw, accented), Err(HeaderError::NotText));
    // Row 11: the encoded form with bad base64.
    let bad = [("Mcp-Method", "tools/call"), ("Mcp-Name", "=?base64?dA=?=")];
    assert_eq!(request(&bad, CALL), Err(HeaderError::BadBase64));
    let refused = check_request(&bad[..], &peeked(CALL)).unwrap_err();
    assert_eq!(refused.field, Field::Name);
    assert_eq!(
        refused.to_string(),
        "Header mismatch: a =?base64?...?= header value is not valid base64 (Mcp-Name)"
    );
}

#[test]
fn only_requests_the_session_reads_are_checked() {
    let none: [(&str, &str); 0] = [];
    for text in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}]"#,
        "{",
        r#"{"id":1,"method":"tools/call","params":{"name":"t"}}"#,
        // Duplicate members: -32600 from the session.
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"tools/list","params":{"name":"t"}}"#,
    ] {
        assert_eq!(request(&none, text), Ok(()), "{text}");
    }
    // Deeper than the session's bound: malformed, whatever the headers say.
    let deep = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"region":[[[1]]]}}}"#;
    let h = [("Mcp-Method", "tools/list")];
    let shallow = peek(deep.as_bytes(), Limits { max_depth: 6 });
    assert!(check_request(&h[..], &shallow).is_err());
    let refused = peek(deep.as_bytes(), Limits { max_depth: 5 });
    assert!(matches!(refused, Peek::Malformed));
    assert_eq!(check_request(&h[..], &refused), Ok(()));
    let sent = [("Mcp-Param-Region", "1")];
    assert!(check_params_text(&sent[..], &shallow, SCHEMA, Limits::default()).is_err());
    assert_eq!(
        check_params_text(&sent[..], &refused, SCHEMA, Limits::default()),
        Ok(())
    );
}

const SCHEMA: &str = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"count":{"type":"integer","x-mcp-header":"Count"},"q":{"type":"string"}}}"#;

fn params(h: &[(&str, &str)], arguments: &str) -> Result<(), HeaderError> {
    let body = std::format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
    );
    check_params_text(h, &peeked(&body), SCHEMA, Limits::default()).map_err(|r| r.error)
}

#[test]
fn param_rows() {
    let region = |v| [("Mcp-Param-Region", v)];
    assert_eq!(params(&region("Bern"), r#"{"region":"Bern"}"#), Ok(()));
    assert_eq!(
        params(&[("mcp-param-region", " Bern ")], r#"{"region":"Bern"}"#),
        Ok(())
    );
    assert_eq!(
        params(
            &region("=?base64?WsO8cmljaA==?="),
            r#"{"region":"Z\u00fcrich"}"#
        ),
        Ok(())
    );
    // Row 6: missing; absent or null arguments need no header.
    assert_eq!(
        params(&[], r#"{"region":"Bern"}"#),
        Err(HeaderError::MissingParam)
    );
    assert_eq!(params(&[], r#"{"q":"x"}"#), Ok(()));
    assert_eq!(params(&[], r#"{"region":null}"#), Ok(()));
    assert_eq!(params(&[], "{}"), Ok(()));
    // Row 7: a header without its argument.
    assert_eq!(
        params(&region("Bern"), "{}"),
        Err(HeaderError::ParamWithoutArgument)
    );
    assert_eq!(
        params(&region("Bern"), r#"{"region":null}"#),
        Err(HeaderError::ParamWithoutArgument)
    );
    // Row 8: another value; case matters; integers compare numerically.
    assert_eq!(
        params(&region("Basel"), r#"{"region":"Bern"}"#),
        Err(HeaderError::ParamMismatch)
    );
    assert_eq!(
        params(&region("BERN"), r#"{"region":"Bern"}"#),
        Err(HeaderError::ParamMismatch)
    );
    assert_eq!(
        params(&region("=?base64?SGVsbG8=?="), r#"{"region":"Hello!"}"#),
        Err(HeaderError::ParamMismatch)
    );
    assert_eq!(
        params(&[("Mcp-Param-Count", "012")], r#"{"count":12}"#),
        Ok(())
    );
    assert_eq!(
        params(&[("Mcp-Param-Count", "13")], r#"{"count":12}"#),
        Err(HeaderError::ParamMismatch)
    );
    // The first of duplicate arguments is what the tool sees, so it is what is checked.
    assert_eq!(
        params(&region("good"), r#"{"region":"evil","region":"good"}"#),
        Err(HeaderError::ParamMismatch)
    );
    assert_eq!(
        params(&region("good"), r#"{"regi\u006fn":"go\u006fd"}"#),
        Ok(())
    );
    // Rows 9 to 11 for Mcp-Param-*.
    let twice = [("Mcp-Param-Region", "good"), ("MCP-PARAM-REGION", "good")];
    assert_eq!(
        params(&twice, r#"{"region":"good"}"#),
        Err(HeaderError::Repeated)
    );
    assert_eq!(
        params(&region("Z\u{fc}rich"), r#"{"region":"Z\u00fcrich"}"#),
        Err(HeaderError::NotText)
    );
    for bad in [
        "=?base64?SGVsbG8?=",
        "=?base64?SGVs!!!bG8=?=",
        "=?base64?!!?=",
    ] {
        assert_eq!(
            params(&region(bad), r#"{"region":"Hello"}"#),
            Err(HeaderError::BadBase64),
            "{bad}"
        );
    }
    // The refusal names the header.
    let body = peeked(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"region":"x"}}}"#,
    );
    let refused = check_params_text(&[][..], &body, SCHEMA, Limits::default()).unwrap_err();
    assert_eq!(refused.field, Field::Param("Region"));
    assert!(
        refused.to_string().contains("Mcp-Param-Region"),
        "{refused}"
    );
}

#[test]
fn what_declares_no_params() {
    let sent = [("Mcp-Param-Region", "x")];
    let body = peeked(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"region":"y"}}}"#,
    );
    // No marks, marks that break the rules, a schema that does not parse.
    for schema in [
        r#"{"type":"object"}"#,
        r#"{"properties":{"region":{"type":"object","x-mcp-header":"Region"}}}"#,
        "{",
    ] {
        assert_eq!(
            check_params_text(&sent[..], &body, schema, Limits::default()),
            Ok(()),
            "{schema}"
        );
    }
    // Only tools/call requests.
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"t","arguments":{"region":"y"}}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","arguments":{"region":"y"}}}"#,
    ] {
        assert_eq!(
            check_params_text(&sent[..], &peeked(text), SCHEMA, Limits::default()),
            Ok(()),
            "{text}"
        );
    }
}

#[test]
fn modern_and_called_tools() {
    assert!(declares_modern(
        &[("mcp-protocol-version", " 2026-07-28 ")][..]
    ));
    assert!(!declares_modern(
        &[("MCP-Protocol-Version", "2025-11-25")][..]
    ));
    assert!(!declares_modern(&[("Mcp-Method", "2026-07-28")][..]));
    let call =
        peeked(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x\u0079"}}"#);
    assert!(called_tool(&call).is_some_and(|t| t.eq_str("xy")));
    let note = peeked(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#);
    assert!(called_tool(&note).is_some_and(|t| t.eq_str("x")));
    let get = peeked(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}"#);
    assert_eq!(called_tool(&get), None);
    let batch = peeked(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}]"#);
    assert_eq!(called_tool(&batch), None);
}

#[test]
fn every_refusal_is_400_and_32020() {
    assert_eq!((STATUS, CODE), (400, -32020));
    for e in [
        HeaderError::MissingMethod,
        HeaderError::MethodMismatch,
        HeaderError::VersionMismatch,
        HeaderError::MissingName,
        HeaderError::NameMismatch,
        HeaderError::MissingParam,
        HeaderError::ParamWithoutArgument,
        HeaderError::ParamMismatch,
        HeaderError::Repeated,
        HeaderError::NotText,
        HeaderError::BadBase64,
    ] {
        assert!(e.message().starts_with("Header mismatch: "), "{e:?}");
    }
}

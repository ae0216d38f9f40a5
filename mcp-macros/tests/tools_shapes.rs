//! `#[tools]` options and less common shapes: `no_tool_set` next to runtime tools, generic
//! impls, `Dispatch` returns, `crate = ...`, an empty impl.

mod tools_common;

use mcp_rs_core::{tools, CallRequest, Dispatch, Tool, ToolResult, ToolSet};
use serde_json::json;
use tools_common::{call, session, texts, Number, Pair};

const LATEST: &str = "2025-11-25";

/// Macro tools plus runtime-generated ones, in one hand-written `ToolSet`.
struct Mixed {
    extra: Vec<String>,
}

#[tools(no_tool_set)]
impl Mixed {
    /// Multiplies.
    #[tool]
    fn multiply(&self, args: Pair) -> Number {
        Number {
            value: args.a * args.b,
        }
    }

    /// Deferred to the runtime.
    #[tool]
    fn later(&mut self) -> Dispatch {
        Dispatch::Defer
    }
}

impl ToolSet for Mixed {
    fn len(&self) -> usize {
        self.extra.len() + Self::TOOLS.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        // Runtime tools first, to show the offset.
        match self.extra.get(index) {
            Some(name) => Some(Tool::new(name, r#"{"type":"object"}"#)),
            None => Self::TOOLS.get(index - self.extra.len()).copied(),
        }
    }
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        match request.tool_index().checked_sub(self.extra.len()) {
            Some(index) => self.call_tool(index, request, result),
            None => {
                result.text("runtime tool");
                Dispatch::Done
            }
        }
    }
}

#[test]
fn no_tool_set_chains_with_runtime_tools() {
    let mut tools = Mixed {
        extra: vec!["dyn_a".into(), "dyn_b".into()],
    };
    let replies = session(
        &mut tools,
        LATEST,
        &[
            json!({"method": "tools/list"}),
            call("multiply", json!({"a": 3, "b": 4})),
            call("dyn_b", json!({})),
            call("later", json!({})),
        ],
    );
    let names: Vec<&str> = replies[0]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["dyn_a", "dyn_b", "multiply", "later"]);
    assert_eq!(
        replies[1]["result"]["structuredContent"],
        json!({"value": 12.0})
    );
    assert_eq!(texts(&replies[2]["result"]), ["runtime tool"]);
    // Deferred: the test driver completes it with an error block.
    assert_eq!(texts(&replies[3]["result"]), ["deferred"]);
}

/// A generic tool set: the generated impls carry the generics and bounds.
struct Scaled<T: Copy + Into<f64>> {
    factor: T,
}

#[tools]
impl<T> Scaled<T>
where
    T: Copy + Into<f64>,
{
    /// Scales a + b.
    #[tool]
    fn scale(&self, args: Pair) -> Number {
        Number {
            value: (args.a + args.b) * self.factor.into(),
        }
    }
}

#[test]
fn generic_impls() {
    let replies = session(
        &mut Scaled { factor: 2u8 },
        LATEST,
        &[call("scale", json!({"a": 1, "b": 2}))],
    );
    assert_eq!(
        replies[0]["result"]["structuredContent"],
        json!({"value": 6.0})
    );
    assert_eq!(Scaled::<f32>::TOOLS.len(), 1);
}

mod reexport {
    pub(crate) use mcp_rs_core as core_again;
}

struct Renamed;

#[tools(crate = reexport::core_again)]
impl Renamed {
    /// Says hi.
    #[tool(name = "hi")]
    fn r#type(&mut self) -> &'static str {
        "hi"
    }
}

#[test]
fn crate_path_and_raw_identifiers() {
    let replies = session(&mut Renamed, LATEST, &[call("hi", json!({}))]);
    assert_eq!(texts(&replies[0]["result"]), ["hi"]);
}

struct Nothing;

#[tools]
impl Nothing {
    #[allow(dead_code)]
    fn not_a_tool(&self) {}
}

#[test]
fn an_impl_without_tools_is_an_empty_tool_set() {
    assert!(Nothing::TOOLS.is_empty());
    let replies = session(
        &mut Nothing,
        LATEST,
        &[json!({"method": "tools/list"}), call("x", json!({}))],
    );
    assert_eq!(replies[0]["result"]["tools"], json!([]));
    assert_eq!(replies[1]["error"]["code"], -32602);
}

struct Owned;

#[tools]
impl Owned {
    /// A `Result` alias with an owned error and text output.
    #[tool]
    fn shout(args: tools_common::Text<'_>) -> Result<String, std::fmt::Error> {
        Ok(args.text.to_string().to_uppercase())
    }

    /// A fallible unit method that wrote its own result.
    #[tool]
    fn wrote(&self, result: &mut ToolResult<'_, '_>) -> std::io::Result<()> {
        result.text("partial");
        Err(std::io::Error::other("then failed"))
    }
}

#[test]
fn result_aliases_and_owned_text() {
    let replies = session(
        &mut Owned,
        LATEST,
        &[
            call("shout", json!({"text": "hey"})),
            call("wrote", json!({})),
        ],
    );
    assert_eq!(texts(&replies[0]["result"]), ["HEY"]);
    assert_eq!(replies[1]["result"]["isError"], true);
    assert_eq!(texts(&replies[1]["result"]), ["partial", "then failed"]);
}

struct Receivers;

#[tools]
impl Receivers {
    /// A typed receiver.
    #[tool]
    #[allow(clippy::needless_arbitrary_self_type)]
    fn typed(self: &mut Self) -> &'static str {
        "typed"
    }

    /// A receiver with a named lifetime.
    #[tool]
    fn named<'a>(&'a self, args: tools_common::Text<'a>) -> String {
        format!("named {}", args.text)
    }
}

#[test]
fn receiver_forms() {
    let replies = session(
        &mut Receivers,
        LATEST,
        &[
            call("typed", json!({})),
            call("named", json!({"text": "x"})),
        ],
    );
    assert_eq!(texts(&replies[0]["result"]), ["typed"]);
    assert_eq!(texts(&replies[1]["result"]), ["named x"]);
}

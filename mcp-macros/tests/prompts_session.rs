//! `#[derive(PromptArgs)]` and `#[prompts]` driven through a real `mcp_rs_core::Session`.

mod handler_common;
use handler_common::run;
use mcp_rs_core::model::common::Dispatch;
use mcp_rs_core::model::content::{Content, Role};
use mcp_rs_core::model::prompts::{GetPromptRequest, PromptResult, PromptSet};
use mcp_rs_core::typed::prompt_args::{PromptArgValue, PromptArgs};
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::ServerHandler;
use serde_json::{json, Value};

/// Which language to review.
#[derive(mcp_rs_core::PromptArgs, Debug, PartialEq)]
#[arg(rename_all = "lowercase")]
enum Language {
    Rust,
    #[arg(rename = "c++")]
    Cpp,
}

#[derive(mcp_rs_core::PromptArgs)]
#[arg(rename_all = "camelCase")]
struct ReviewArgs<'i> {
    /// The code to review.
    code: JsonStr<'i>,
    /// Which language it is in.
    #[arg(title = "Language")]
    language: Option<Language>,
    #[arg(rename = "focus", description = "What to look at")]
    focus_area: Option<String>,
    /// Who asks.
    user_name: Option<JsonStr<'i>>,
}

#[derive(mcp_rs_core::PromptArgs)]
struct Empty {}

#[derive(Default)]
struct MyPrompts {
    rendered: usize,
}

#[mcp_rs_core::prompts]
impl MyPrompts {
    /// Reviews code.
    #[prompt(name = "code_review", title = "Code review")]
    fn code_review(&mut self, args: ReviewArgs<'_>, result: &mut PromptResult<'_, '_>) {
        self.rendered += 1;
        let text = format!(
            "Review this {:?} code ({}) for {}: {}",
            args.language,
            args.focus_area.as_deref().unwrap_or("anything"),
            args.user_name
                .map_or("nobody".to_owned(), |u| u.to_string()),
            args.code
        );
        result
            .description("A code review")
            .message(Role::User, &Content::Text(&text));
    }

    #[prompt(description = "Says hello")]
    fn hello(result: &mut PromptResult<'_, '_>) {
        result.message(Role::Assistant, &Content::Text("hello"));
    }

    #[prompt(name = "failing")]
    fn failing(
        &self,
        _args: Empty,
        request: &GetPromptRequest<'_>,
        result: &mut PromptResult<'_, '_>,
    ) -> Result<(), &'static str> {
        assert_eq!(request.name(), "failing");
        result.message(Role::User, &Content::Text("discarded"));
        Err("the disk is on fire")
    }

    #[prompt(name = "later")]
    fn later(&self, _result: &mut PromptResult<'_, '_>) -> Dispatch {
        Dispatch::Defer
    }

    /// Not a prompt.
    #[allow(dead_code)]
    fn helper(&self) -> usize {
        self.rendered
    }
}

struct Server(MyPrompts);

impl ServerHandler for Server {
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(&mut self.0)
    }
}

fn get(id: u32, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"prompts/get","params":{"name":name,"arguments":arguments}})
}

#[test]
fn derive_declares_arguments() {
    let args = <ReviewArgs<'_> as PromptArgs<'_>>::ARGUMENTS;
    let summary: Vec<_> = args
        .iter()
        .map(|a| (a.name, a.title, a.description, a.required))
        .collect();
    assert_eq!(
        summary,
        [
            ("code", None, Some("The code to review."), true),
            (
                "language",
                Some("Language"),
                Some("Which language it is in."),
                false
            ),
            ("focus", None, Some("What to look at"), false),
            ("userName", None, Some("Who asks."), false),
        ]
    );
    assert_eq!(<Language as PromptArgValue<'_>>::CHOICES, ["rust", "c++"]);
    assert_eq!(<Option<Language> as PromptArgValue<'_>>::CHOICES.len(), 2);
    assert!(Empty::ARGUMENTS.is_empty());
    assert_eq!(MyPrompts::PROMPTS.len(), 4);
    assert_eq!(MyPrompts::PROMPTS[1].name, "hello");
}

#[test]
fn parse_errors_name_the_argument() {
    let parse = |text: &'static str| {
        let v = mcp_rs_core::wire::json::parse(text.as_bytes(), Default::default()).unwrap();
        ReviewArgs::parse(v).err().map(|e| e.to_string())
    };
    assert_eq!(parse(r#"{"code":"x","language":"rust"}"#), None);
    assert_eq!(
        parse(r#"{"language":"rust"}"#).unwrap(),
        "argument `code`: is required"
    );
    assert_eq!(
        parse(r#"{"code":"x","language":"go"}"#).unwrap(),
        "argument `language`: must be one of rust, c++"
    );
    assert_eq!(
        parse(r#"{"code":1}"#).unwrap(),
        "argument `code`: must be a string"
    );
    assert_eq!(
        parse(r#"{"code":"x","verbose":"y"}"#).unwrap(),
        "arguments: unknown member \"verbose\""
    );
    assert_eq!(parse("[]").unwrap(), "arguments: must be an object");
}

#[test]
fn prompts_list_shows_arguments() {
    let mut server = Server(MyPrompts::default());
    let replies = run(
        &mut server,
        "2025-06-18",
        &[json!({"jsonrpc":"2.0","id":1,"method":"prompts/list"})],
    );
    let prompts = &replies[0]["result"]["prompts"];
    assert_eq!(
        prompts[0],
        json!({
            "name": "code_review",
            "title": "Code review",
            "description": "Reviews code.",
            "arguments": [
                {"name": "code", "description": "The code to review.", "required": true},
                {"name": "language", "title": "Language", "description": "Which language it is in."},
                {"name": "focus", "description": "What to look at"},
                {"name": "userName", "description": "Who asks."},
            ]
        })
    );
    assert_eq!(
        prompts[1],
        json!({"name": "hello", "description": "Says hello"})
    );
    assert_eq!(prompts[2], json!({"name": "failing"}));
}

#[test]
fn prompts_get_with_good_arguments() {
    let mut server = Server(MyPrompts::default());
    let replies = run(
        &mut server,
        "2025-06-18",
        &[
            get(
                1,
                "code_review",
                json!({"code":"fn main() {}","language":"c++","focus":"style","userName":"ann\n"}),
            ),
            json!({"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"hello"}}),
        ],
    );
    assert_eq!(
        replies[0]["result"],
        json!({
            "description": "A code review",
            "messages": [{"role": "user", "content": {"type": "text",
                "text": "Review this Some(Cpp) code (style) for ann\n: fn main() {}"}}]
        })
    );
    assert_eq!(
        replies[1]["result"]["messages"][0]["content"]["text"],
        "hello"
    );
    assert_eq!(server.0.rendered, 1);
}

#[test]
fn prompts_get_with_bad_arguments() {
    let mut server = Server(MyPrompts::default());
    let replies = run(
        &mut server,
        "2025-06-18",
        &[
            get(1, "code_review", json!({"language":"rust"})),
            get(2, "code_review", json!({"code":"x","verbose":"yes"})),
            get(3, "code_review", json!({"code":"x","language":"go"})),
            get(4, "code_review", json!({"code":7})),
            get(5, "hello", json!({"extra":"1"})),
        ],
    );
    let errors: Vec<_> = replies
        .iter()
        .map(|r| {
            (
                r["id"].as_u64().unwrap(),
                r["error"]["code"].as_i64().unwrap(),
                r["error"]["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            (1, -32602, "Missing required argument: code".to_owned()),
            (2, -32602, "Unknown argument: verbose".to_owned()),
            (3, -32602, "Invalid argument value: language".to_owned()),
            (
                4,
                -32602,
                "Prompt argument values must be strings: code".to_owned()
            ),
            (5, -32602, "Unknown argument: extra".to_owned()),
        ]
    );
    assert_eq!(server.0.rendered, 0);
}

#[test]
fn prompt_errors_and_deferral() {
    let mut server = Server(MyPrompts::default());
    let replies = run(&mut server, "2025-06-18", &[get(1, "failing", json!({}))]);
    assert_eq!(
        replies[0]["error"],
        json!({"code": -32603, "message": "Prompt failed: the disk is on fire"})
    );
    // A deferred prompt is not answered inline.
    let replies = run(&mut server, "2025-06-18", &[get(2, "later", json!({}))]);
    assert!(replies.is_empty(), "{replies:?}");
}

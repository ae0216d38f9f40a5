//! The server under test ([`FuzzServer`]): tools, resources with templates, prompts with a
//! required argument, and completions, some answering at once and some deferred; and the
//! [`Book`] of the `requestState`s its handlers sealed.

use mcp_rs_core::model::completion::{
    CompleteRequest, CompletionRef, CompletionResult, Completions,
};
use mcp_rs_core::model::input::InputRequests;
use mcp_rs_core::model::prompts::{
    GetPromptRequest, Prompt, PromptArgument, PromptResult, PromptSet,
};
use mcp_rs_core::model::resources::{
    ReadRequest, ReadResult, Resource, ResourceSet, ResourceTemplate,
};
use mcp_rs_core::{
    Annotations, CallRequest, ClientCaps, Content, Dispatch, ResourceLink, Role, ServerHandler,
    Tool, ToolResult, ToolSet,
};
use std::cell::RefCell;
use std::rc::Rc;

pub const TOOL_NAMES: [&str; 23] = [
    "echo",
    "add",
    "all_content",
    "fail",
    "misuse",
    "slow",
    "slow2",
    "needs_sampling",
    "needs_roots",
    "big",
    "extra_0",
    "extra_1",
    "extra_2",
    "extra_3",
    "extra_4",
    "extra_5",
    "extra_6",
    "extra_7",
    "extra_8",
    "extra_9",
    "wizard",
    "wizard_bare",
    "slow_wizard",
];

pub const PROMPT_NAMES: [&str; 9] = [
    "greet", "wizard", "slow", "plain", "p_0", "p_1", "p_2", "p_3", "p_4",
];

/// Listed resources: URI, name, binary.
pub const RESOURCES: [(&str, &str, bool); 10] = [
    ("test://static/a", "a", false),
    ("test://static/b", "b", true),
    ("test://ask", "ask", false),
    ("file:///caf%C3%A9", "cafe", false),
    ("test://static/c%20d", "c d", false),
    ("test://r/0", "r0", false),
    ("test://r/1", "r1", false),
    ("test://r/2", "r2", false),
    ("test://r/3", "r3", false),
    ("test://r/4", "r4", false),
];

/// Resource templates: URI template, name.
pub const TEMPLATES: [(&str, &str); 6] = [
    ("test://logs/{date}", "logs"),
    ("test://slow/{n}", "slow"),
    ("test://items/{id}/{part}", "items"),
    ("test://t0/{x}", "t0"),
    ("test://t1/{x}", "t1"),
    ("test://t2/{x}.txt", "t2"),
];

pub(super) const SAMPLING_PARAMS: &str =
    r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}"#;
const ELICIT_SCHEMA: &str =
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#;
pub(super) const ELICIT_PARAMS: &str = r#"{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}"#;

const OBJECT: &str = r#"{"type":"object"}"#;
const ADD_OUTPUT: &str =
    r#"{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}"#;

/// The `requestState` payloads the handlers sealed, so that a handler can check that it
/// is only ever given back one of its own, for the same method and target, unexpired.
#[derive(Debug, Default)]
pub struct Book {
    /// The time the session is at (set before every `handle`/`handle_timeout`).
    pub(super) now: u64,
    /// `Config::state_ttl_ms`.
    pub(super) ttl: u64,
    /// Per payload `k<index>`: method, raw target, expiry.
    pub(super) issued: Vec<(&'static str, String, u64)>,
}

pub(super) type SharedBook = Rc<RefCell<Book>>;

impl Book {
    pub(super) fn issue(&mut self, method: &'static str, target: &str) -> String {
        let n = self.issued.len();
        self.issued.push((
            method,
            target.to_string(),
            self.now.saturating_add(self.ttl),
        ));
        format!("k{n}")
    }

    /// A handler was given `state`: it must be one this server sealed for this method
    /// and target, and not expired (the session refuses every other one).
    pub(super) fn verify(&self, method: &str, target: &str, state: Option<&str>) {
        let Some(p) = state else { return };
        let (m, t, expiry) = p
            .strip_prefix('k')
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| self.issued.get(n))
            .unwrap_or_else(|| panic!("a handler was given a requestState never sealed: {p}"));
        assert_eq!(
            (*m, t.as_str()),
            (method, target),
            "requestState {p} opened for another method or target"
        );
        assert!(
            self.now <= *expiry,
            "expired requestState {p} reached a handler ({} > {expiry})",
            self.now
        );
    }
}

/// The `inputRequests` an `input_required` result asks for (bits: elicit, sample,
/// roots, invalid raw JSON).
pub(super) fn asks(q: &mut InputRequests<'_, '_>, bits: u8) {
    if bits & 1 != 0 {
        q.elicit("q", "Name?", ELICIT_SCHEMA);
    }
    if bits & 2 != 0 {
        q.sample("s", SAMPLING_PARAMS);
    }
    if bits & 4 != 0 {
        q.list_roots("r");
    }
    if bits & 8 != 0 {
        q.elicit("bad", "x", "{\n}");
    }
}

pub struct FuzzTools {
    pub defs: Vec<Tool<'static>>,
    book: SharedBook,
}

impl FuzzTools {
    fn new(book: SharedBook) -> Self {
        let defs = TOOL_NAMES
            .iter()
            .map(|&name| {
                let mut t = Tool {
                    description: Some("fuzz tool"),
                    ..Tool::new(name, OBJECT)
                };
                match name {
                    "add" => {
                        t.output_schema = Some(ADD_OUTPUT);
                        t.title = Some("Add");
                        t.meta = Some(r#"{"example.com/kind":"math"}"#);
                    }
                    "needs_sampling" => t.requires = ClientCaps::SAMPLING,
                    "needs_roots" => t.requires = ClientCaps::ROOTS.with(ClientCaps::ELICITATION),
                    _ => {}
                }
                t
            })
            .collect();
        FuzzTools { defs, book }
    }
}

pub(super) fn all_content(r: &mut ToolResult<'_, '_>) {
    r.text("plain");
    r.push(
        &Content::Text("annotated"),
        Some(&Annotations {
            audience: &[Role::User, Role::Assistant],
            priority: Some(0.5),
            last_modified: Some("2025-01-01T00:00:00Z"),
        }),
        Some(r#"{"example.com/x":1}"#),
    );
    r.image("iVBORw0KGgo=", "image/png");
    r.audio("UklGRg==", "audio/wav");
    r.resource_link(&ResourceLink {
        uri: "file:///a.txt",
        name: "a.txt",
        title: Some("A"),
        description: Some("d"),
        mime_type: Some("text/plain"),
        size: Some(3),
    });
    r.embedded_text("test://text", Some("text/plain"), "embedded");
    r.embedded_blob("test://blob", None, "AAEC");
}

impl ToolSet for FuzzTools {
    fn len(&self) -> usize {
        self.defs.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        self.defs.get(index).copied()
    }
    fn call(&mut self, req: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        let name = self.defs[req.tool_index()].name;
        assert!(req.name().eq_str(name), "dispatched to the wrong tool");
        self.book
            .borrow()
            .verify("tools/call", req.name().raw(), req.input().state());
        match name {
            "echo" => {
                r.text(req.args().as_str());
            }
            "add" => {
                let num = |k: &str| req.args().get(k).and_then(|v| v.as_f64());
                match (num("a"), num("b")) {
                    (Some(a), Some(b)) if (a + b).is_finite() => r.structured_with(|w| {
                        w.begin_object();
                        w.key("sum");
                        w.f64(a + b);
                        w.end_object();
                    }),
                    _ => {
                        r.fail(format_args!("add needs numbers a and b"));
                    }
                }
            }
            "all_content" => all_content(r),
            "fail" => {
                r.fail(format_args!(
                    "This tool intentionally fails: {}",
                    req.version()
                ));
            }
            "misuse" => {
                r.structured_raw("{}");
                r.text("content after structured output");
            }
            "big" => {
                r.text(&"b".repeat(3000));
            }
            "wizard" => {
                // 2026-07-28: asks first (sealing a state), answers on the retry.
                if !req.version().is_modern() {
                    r.text("wizard: legacy");
                } else if let Some(s) = req.input().state() {
                    r.text(&format!("state:{s}"));
                } else {
                    let k = self.book.borrow_mut().issue("tools/call", req.name().raw());
                    r.input_required(Some(&k), |q| asks(q, 7));
                }
            }
            // No state: refused (internal error) when nothing could be asked, and in
            // legacy sessions.
            "wizard_bare" => r.input_required(None, |q| asks(q, 1)),
            "slow" | "slow2" | "needs_sampling" | "needs_roots" | "slow_wizard" => {
                return Dispatch::Defer
            }
            _ => {
                r.text(name);
            }
        }
        Dispatch::Done
    }
}

pub struct FuzzResources {
    book: SharedBook,
}

impl ResourceSet for FuzzResources {
    fn len(&self) -> usize {
        RESOURCES.len()
    }
    fn get(&self, index: usize) -> Option<Resource<'_>> {
        let (uri, name, binary) = *RESOURCES.get(index)?;
        Some(Resource {
            description: Some("fuzz resource"),
            mime_type: Some(if binary {
                "application/octet-stream"
            } else {
                "text/plain"
            }),
            size: binary.then_some(3),
            ..Resource::new(uri, name)
        })
    }
    fn templates_len(&self) -> usize {
        TEMPLATES.len()
    }
    fn template(&self, index: usize) -> Option<ResourceTemplate<'_>> {
        let (t, name) = *TEMPLATES.get(index)?;
        Some(ResourceTemplate {
            title: Some("Fuzz template"),
            ..ResourceTemplate::new(t, name)
        })
    }
    fn subscribable(&self) -> bool {
        true
    }
    fn subscribe(&mut self, uri: mcp_rs_core::wire::json::JsonStr<'_>, _on: bool) -> bool {
        RESOURCES.iter().any(|r| uri.eq_str(r.0))
    }
    fn read(&mut self, req: &ReadRequest<'_>, r: &mut ReadResult<'_, '_>) -> Dispatch {
        let raw = req.uri().raw();
        self.book
            .borrow()
            .verify("resources/read", raw, req.input().state());
        let uri: String = req.uri().chars().collect();
        if let Some(i) = req.resource_index() {
            let (listed, _, binary) = RESOURCES[i];
            assert_eq!(uri, listed, "resource_index names another resource");
            if listed == "test://ask" && req.version().is_modern() {
                if let Some(s) = req.input().state() {
                    r.text(&uri, Some("text/plain"), &format!("state:{s}"));
                } else {
                    let k = self.book.borrow_mut().issue("resources/read", raw);
                    r.input_required(Some(&k), |q| asks(q, 4));
                }
            } else if binary {
                r.blob(&uri, Some("application/octet-stream"), "AAEC");
            } else {
                r.text(&uri, Some("text/plain"), "content");
            }
            return Dispatch::Done;
        }
        match req.template_index() {
            Some(t) if TEMPLATES[t].0 == "test://slow/{n}" => return Dispatch::Defer,
            Some(t) => {
                assert!(
                    mcp_rs_core::wire::uri_template::UriTemplate::new(TEMPLATES[t].0)
                        .matches(&uri)
                        .is_some(),
                    "template_index names a template that does not match {uri}"
                );
                r.text(&uri, None, "templated");
            }
            None if uri.starts_with("test://defer/") => return Dispatch::Defer,
            None => r.not_found(),
        }
        Dispatch::Done
    }
}

static GREET_ARGS: [PromptArgument<'static>; 2] = [
    PromptArgument::required("name", "Who to greet"),
    PromptArgument::optional("style", "How"),
];

pub struct FuzzPrompts {
    book: SharedBook,
}

impl PromptSet for FuzzPrompts {
    fn len(&self) -> usize {
        PROMPT_NAMES.len()
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        let name = *PROMPT_NAMES.get(index)?;
        Some(Prompt {
            arguments: if name == "greet" { &GREET_ARGS } else { &[] },
            ..Prompt::new(name, "fuzz prompt")
        })
    }
    fn get_prompt(&mut self, req: &GetPromptRequest<'_>, r: &mut PromptResult<'_, '_>) -> Dispatch {
        let name = PROMPT_NAMES[req.prompt_index()];
        assert!(
            req.name().eq_str(name),
            "prompt dispatched to the wrong prompt"
        );
        self.book
            .borrow()
            .verify("prompts/get", req.name().raw(), req.input().state());
        for (k, v) in req.arguments().members().into_iter().flatten() {
            assert!(
                v.as_string().is_some(),
                "prompt argument {} is not a string",
                k.raw()
            );
        }
        match name {
            "greet" => {
                let who: String = req
                    .argument("name")
                    .expect("the session checks required arguments")
                    .chars()
                    .collect();
                r.description("A greeting");
                r.message(Role::User, &Content::Text(&format!("Hello {who}")));
            }
            "wizard" if req.version().is_modern() => {
                if let Some(s) = req.input().state() {
                    r.message(Role::User, &Content::Text(&format!("state:{s}")));
                } else {
                    let k = self
                        .book
                        .borrow_mut()
                        .issue("prompts/get", req.name().raw());
                    r.input_required(Some(&k), |q| asks(q, 1));
                }
            }
            "slow" => return Dispatch::Defer,
            _ => {
                r.message(Role::Assistant, &Content::Text(name));
            }
        }
        Dispatch::Done
    }
}

pub struct FuzzCompletions;

impl Completions for FuzzCompletions {
    fn complete(
        &mut self,
        req: &CompleteRequest<'_>,
        r: &mut CompletionResult<'_, '_>,
    ) -> Dispatch {
        match req.reference() {
            CompletionRef::Prompt(name) => assert!(
                PROMPT_NAMES.iter().any(|p| name.eq_str(p)),
                "completion for an unknown prompt reached the handler"
            ),
            CompletionRef::Resource(uri) => assert!(
                TEMPLATES.iter().any(|t| uri.eq_str(t.0))
                    || RESOURCES.iter().any(|t| uri.eq_str(t.0)),
                "completion for an unknown resource reached the handler"
            ),
        }
        let value: String = req.value().chars().collect();
        if value.starts_with("slow") {
            return Dispatch::Defer;
        }
        if value == "many" {
            for i in 0..150 {
                r.value(&format!("v{i}"));
            }
            r.total(150);
            return Dispatch::Done;
        }
        for c in ["alice", "bob", "carol"] {
            if c.starts_with(&value) {
                r.value(c);
            }
        }
        if let Some(ctx) = req.context_argument("name") {
            r.value(&format!("ctx:{}", ctx.chars().collect::<String>()));
        }
        Dispatch::Done
    }
}

/// Tools, a small resource set with templates, prompts with a required argument, and
/// completions (tools only when `minimal`).
pub struct FuzzServer {
    pub tools: FuzzTools,
    resources: FuzzResources,
    prompts: FuzzPrompts,
    completions: FuzzCompletions,
    minimal: bool,
    pub(super) book: SharedBook,
}

impl FuzzServer {
    pub(super) fn new(minimal: bool, ttl: u64) -> Self {
        let book: SharedBook = Rc::new(RefCell::new(Book {
            ttl,
            ..Book::default()
        }));
        FuzzServer {
            tools: FuzzTools::new(book.clone()),
            resources: FuzzResources { book: book.clone() },
            prompts: FuzzPrompts { book: book.clone() },
            completions: FuzzCompletions,
            minimal,
            book,
        }
    }
}

impl ServerHandler for FuzzServer {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(&mut self.tools)
    }
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        if self.minimal {
            None
        } else {
            Some(&mut self.resources)
        }
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        if self.minimal {
            None
        } else {
            Some(&mut self.prompts)
        }
    }
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        if self.minimal {
            None
        } else {
            Some(&mut self.completions)
        }
    }
}

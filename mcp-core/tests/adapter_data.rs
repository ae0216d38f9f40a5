//! Data an adapter attaches to a message (`Session::handle_with`) reaches every request
//! view the message produces: tool calls answered inline and deferred ones, prompts,
//! reads and completions; a message handled without data, or data of another type, gives
//! `None`.

use mcp_rs_core::model::completion::{CompleteRequest, CompletionResult, Completions};
use mcp_rs_core::model::prompts::{GetPromptRequest, Prompt, PromptResult, PromptSet};
use mcp_rs_core::model::resources::{ReadRequest, ReadResult, Resource, ResourceSet};
use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::{
    CallRequest, Config, Content, Dispatch, Role, SecretKey, ServerHandler, ServerInfo, Session,
    SessionStorage, Tool, ToolResult, ToolSet,
};

#[derive(Debug, PartialEq)]
struct Principal(&'static str);

static TOOLS: [Tool<'static>; 2] = [
    Tool::new("inline", r#"{"type":"object"}"#),
    Tool::new("later", r#"{"type":"object"}"#),
];
static PROMPTS: [Prompt<'static>; 1] = [Prompt::new("p", "a prompt")];
static RESOURCES: [Resource<'static>; 1] = [Resource::new("mem:///r", "r")];

#[derive(Default)]
struct Seen {
    who: Vec<Option<&'static str>>,
}

impl ToolSet for Seen {
    fn len(&self) -> usize {
        TOOLS.len()
    }
    fn get(&self, i: usize) -> Option<Tool<'_>> {
        TOOLS.get(i).copied()
    }
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        if request.tool_index() == 1 {
            return Dispatch::Defer;
        }
        self.who
            .push(request.adapter_data::<Principal>().map(|p| p.0));
        result.text("ok");
        Dispatch::Done
    }
}

impl PromptSet for Seen {
    fn len(&self) -> usize {
        PROMPTS.len()
    }
    fn get(&self, i: usize) -> Option<Prompt<'_>> {
        PROMPTS.get(i).copied()
    }
    fn get_prompt(
        &mut self,
        request: &GetPromptRequest<'_>,
        result: &mut PromptResult<'_, '_>,
    ) -> Dispatch {
        self.who
            .push(request.adapter_data::<Principal>().map(|p| p.0));
        result.message(Role::User, &Content::Text("hi"));
        Dispatch::Done
    }
}

impl ResourceSet for Seen {
    fn len(&self) -> usize {
        RESOURCES.len()
    }
    fn get(&self, i: usize) -> Option<Resource<'_>> {
        RESOURCES.get(i).copied()
    }
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        self.who
            .push(request.adapter_data::<Principal>().map(|p| p.0));
        result.text("mem:///r", None, "x");
        Dispatch::Done
    }
}

impl Completions for Seen {
    fn complete(
        &mut self,
        request: &CompleteRequest<'_>,
        _: &mut CompletionResult<'_, '_>,
    ) -> Dispatch {
        self.who
            .push(request.adapter_data::<Principal>().map(|p| p.0));
        Dispatch::Done
    }
}

struct Server(Seen);

impl ServerHandler for Server {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(&mut self.0)
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(&mut self.0)
    }
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        Some(&mut self.0)
    }
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        Some(&mut self.0)
    }
}

fn modern(id: u32, method: &str, params: &str) -> String {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let params = if params.is_empty() {
        format!("{{{meta}}}")
    } else {
        format!("{{{params},{meta}}}")
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

#[test]
fn every_request_view_hands_back_the_attached_data() {
    let info = ServerInfo {
        name: "t",
        version: "1",
        ..Default::default()
    };
    let mut storage = SessionStorage::<4>::new();
    let mut session = Session::new(&info, Config::new(SecretKey([1; 16])), &mut storage);
    let mut server = Server(Seen::default());
    let mut out = vec![0u8; 4096];
    let alice = Principal("alice");

    let messages = [
        modern(1, "tools/call", r#""name":"inline","arguments":{}"#),
        modern(2, "prompts/get", r#""name":"p""#),
        modern(3, "resources/read", r#""uri":"mem:///r""#),
        modern(
            4,
            "completion/complete",
            r#""ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}"#,
        ),
    ];
    for m in &messages {
        let incoming = session
            .handle_with(&mut server, 1, m.as_bytes(), Some(&alice), &mut out)
            .unwrap();
        let reply = incoming.transmit().expect("answered inline");
        let text = std::str::from_utf8(&out[..reply.len]).unwrap();
        assert!(text.contains(r#""result""#), "{text}");
    }
    assert_eq!(server.0.who, [Some("alice"); 4]);

    // deferred: the Call rebuilt from the message carries it too
    let later = modern(5, "tools/call", r#""name":"later","arguments":{}"#);
    let mut pump = Pump::message(later.as_bytes(), 2);
    // Pump::message has no data: the same call through handle_with below.
    let mut deferred_without = None;
    while let Some(o) = pump.poll(&mut session, &mut server, &mut out).unwrap() {
        if let Output::Call(call) = o {
            deferred_without = Some(call.adapter_data::<Principal>().is_none());
            assert_eq!(call.name().raw(), "later");
            let _ = session.complete(call.token(), &mut out, |r| {
                r.text("done");
            });
        }
    }
    assert_eq!(deferred_without, Some(true));

    let mut incoming = session
        .handle_with(&mut server, 3, later.as_bytes(), Some(&alice), &mut out)
        .unwrap();
    let call = incoming.next_call(&mut session).expect("deferred");
    assert_eq!(call.adapter_data::<Principal>(), Some(&alice));
    assert_eq!(call.adapter_data::<u32>(), None, "another type is None");
    assert_eq!(
        call.tool().unwrap().adapter_data::<Principal>(),
        Some(&alice)
    );
}

#[test]
fn the_pump_hands_its_data_to_inline_and_deferred_requests() {
    let info = ServerInfo {
        name: "t",
        version: "1",
        ..Default::default()
    };
    let mut storage = SessionStorage::<4>::new();
    let mut session = Session::new(&info, Config::new(SecretKey([1; 16])), &mut storage);
    let mut server = Server(Seen::default());
    let mut out = vec![0u8; 4096];
    let bob = Principal("bob");

    let inline = modern(1, "tools/call", r#""name":"inline","arguments":{}"#);
    let mut pump = Pump::message(inline.as_bytes(), 1).with_data(&bob);
    let mut replies = 0;
    while let Some(o) = pump.poll(&mut session, &mut server, &mut out).unwrap() {
        if let Output::Transmit(tx) = o {
            assert!(std::str::from_utf8(&out[..tx.len])
                .unwrap()
                .contains(r#""text":"ok""#));
            replies += 1;
        }
    }
    assert_eq!(replies, 1);
    assert_eq!(server.0.who, [Some("bob")]);

    let later = modern(2, "tools/call", r#""name":"later","arguments":{}"#);
    let mut pump = Pump::message(later.as_bytes(), 2).with_data(&bob);
    let mut seen = None;
    while let Some(o) = pump.poll(&mut session, &mut server, &mut out).unwrap() {
        if let Output::Call(call) = o {
            seen = Some(call.adapter_data::<Principal>() == Some(&bob));
            let _ = session.complete(call.token(), &mut out, |r| {
                r.text("done");
            });
        }
    }
    assert_eq!(seen, Some(true));
}

//! `#[derive(TemplateVars)]` and `#[resources]` driven through a real `mcp_rs_core::Session`.

mod handler_common;
use handler_common::run;
use mcp_rs_core::model::common::Dispatch;
use mcp_rs_core::model::resources::{ReadRequest, ReadResult, ResourceSet};
use mcp_rs_core::typed::template_vars::{PctStr, TemplateVars};
use mcp_rs_core::ServerHandler;
use serde_json::{json, Value};

#[derive(mcp_rs_core::TemplateVars)]
struct FileVars<'u> {
    path: PctStr<'u>,
}

#[derive(mcp_rs_core::TemplateVars)]
#[arg(rename_all = "camelCase")]
struct LogVars<'u> {
    log_day: u32,
    #[arg(rename = "level")]
    severity: &'u str,
}

#[derive(mcp_rs_core::TemplateVars)]
struct Decoded {
    name: String,
}

#[derive(Default)]
struct MyResources {
    reads: Vec<String>,
}

#[mcp_rs_core::resources]
impl MyResources {
    /// The read-me.
    #[resource(
        uri = "file:///README",
        name = "readme",
        mime_type = "text/plain",
        size = 5
    )]
    fn readme(&mut self, uri: &str, result: &mut ReadResult<'_, '_>) {
        self.reads.push("readme".into());
        result.text(uri, Some("text/plain"), "hello");
    }

    #[resource(uri = "file:///broken", title = "Broken")]
    fn broken(&self, _result: &mut ReadResult<'_, '_>) -> Result<(), std::fmt::Error> {
        Err(std::fmt::Error)
    }

    /// Logs of one day.
    #[resource_template(
        uri_template = "log://{logDay}/{level}",
        name = "logs",
        mime_type = "text/plain"
    )]
    fn logs(&mut self, vars: LogVars<'_>, uri: &str, result: &mut ReadResult<'_, '_>) {
        self.reads
            .push(format!("logs {} {}", vars.log_day, vars.severity));
        result.text(uri, None, "log lines");
    }

    /// Any log URI the first template refused (a day that is not a number).
    #[resource_template(uri_template = "log://{day}/{level}", name = "other-logs")]
    fn other_logs(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) {
        self.reads.push(format!("other {}", request.uri()));
        result.not_found();
    }

    #[resource_template(uri_template = "file:///{path}", name = "file", title = "Files")]
    fn file(&mut self, vars: FileVars<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        let mut buf = [0u8; 64];
        let path = vars.path.decode_into(&mut buf).unwrap().to_owned();
        self.reads.push(format!("file {path}"));
        if path == "later" {
            return Dispatch::Defer;
        }
        result.text("file:///x", None, &path);
        Dispatch::Done
    }

    #[resource_template(uri_template = "name:{name}", name = "name")]
    fn name(&mut self, vars: Decoded, result: &mut ReadResult<'_, '_>) {
        result.text("name:", None, &vars.name);
    }
}

struct Server(MyResources);

impl ServerHandler for Server {
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        Some(&mut self.0)
    }
}

fn read(id: u32, uri: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"resources/read","params":{"uri":uri}})
}

#[test]
fn derive_lists_variables() {
    assert_eq!(
        <LogVars<'_> as TemplateVars<'_>>::VARIABLES,
        ["logDay", "level"]
    );
    assert_eq!(FileVars::VARIABLES, ["path"]);
    assert_eq!(MyResources::RESOURCES.len(), 2);
    assert_eq!(MyResources::RESOURCE_TEMPLATES.len(), 4);
    for t in MyResources::RESOURCE_TEMPLATES {
        assert_eq!(t.validate(), Ok(()), "{}", t.uri_template);
    }
}

#[test]
fn lists() {
    let mut server = Server(MyResources::default());
    let replies = run(
        &mut server,
        "2025-06-18",
        &[
            json!({"jsonrpc":"2.0","id":1,"method":"resources/list"}),
            json!({"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}),
        ],
    );
    assert_eq!(
        replies[0]["result"]["resources"],
        json!([
            {"uri": "file:///README", "name": "readme", "description": "The read-me.",
             "mimeType": "text/plain", "size": 5},
            {"uri": "file:///broken", "name": "broken", "title": "Broken"},
        ])
    );
    assert_eq!(
        replies[1]["result"]["resourceTemplates"],
        json!([
            {"uriTemplate": "log://{logDay}/{level}", "name": "logs",
             "description": "Logs of one day.", "mimeType": "text/plain"},
            {"uriTemplate": "log://{day}/{level}", "name": "other-logs",
             "description": "Any log URI the first template refused (a day that is not a number)."},
            {"uriTemplate": "file:///{path}", "name": "file", "title": "Files"},
            {"uriTemplate": "name:{name}", "name": "name"},
        ])
    );
}

#[test]
fn reads() {
    let mut server = Server(MyResources::default());
    let replies = run(
        &mut server,
        "2025-06-18",
        &[
            read(1, "file:///README"),
            read(2, "log://20250101/warn"),
            read(3, "file:///a%20b"),
            read(4, "log://yesterday/warn"),
            read(5, "nothing://here"),
            read(6, "file:///broken"),
            read(7, "name:caf%C3%A9"),
            read(8, "file:///later"),
        ],
    );
    assert_eq!(
        replies[0]["result"]["contents"],
        json!([{"uri": "file:///README", "mimeType": "text/plain", "text": "hello"}])
    );
    assert_eq!(
        replies[1]["result"]["contents"],
        json!([{"uri": "log://20250101/warn", "text": "log lines"}])
    );
    assert_eq!(replies[2]["result"]["contents"][0]["text"], "a b");
    // The first log template refuses a non-numeric day; the second matches and says not
    // found.
    assert_eq!(
        replies[3]["error"],
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "log://yesterday/warn"}})
    );
    assert_eq!(
        replies[4]["error"],
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "nothing://here"}})
    );
    assert_eq!(
        replies[5]["error"],
        json!({"code": -32603, "message": "Resource read failed"})
    );
    assert_eq!(replies[6]["result"]["contents"][0]["text"], "café");
    // Deferred: not answered inline.
    assert_eq!(replies.len(), 7, "{replies:?}");
    assert_eq!(
        server.0.reads,
        [
            "readme",
            "logs 20250101 warn",
            "file a b",
            "other log://yesterday/warn",
            "file later"
        ]
    );
}

#[test]
fn unknown_uri_is_32002_in_2025_11_25() {
    let mut server = Server(MyResources::default());
    let replies = run(&mut server, "2025-11-25", &[read(1, "nothing://here")]);
    assert_eq!(replies[0]["error"]["code"], -32002);
}

//! Test support: validates messages the server emits against the official MCP JSON Schemas.
//!
//! Use from an integration test with `mod harness;`. The schemas are read from
//! `$MCP_SPEC_DIR/<revision>/schema.json`, by default the copies in `mcp-core/tests/spec` (see
//! that directory's README). Compiled validators are cached per revision and definition for the
//! whole test binary.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};

/// Protocol revisions with a schema, oldest first.
const REVISIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The tasks extension's schema (SEP-2663, `io.modelcontextprotocol/tasks`), kept beside the
/// revisions as `ext-tasks/schema.json`: it defines `notifications/tasks` and the `taskIds`
/// of `subscriptions/listen`.
pub(crate) const EXT_TASKS: &str = "ext-tasks";

/// The protocol revisions that have a schema, oldest first.
pub(crate) fn spec_revisions() -> &'static [&'static str] {
    REVISIONS
}

/// Directory holding `<revision>/schema.json`: `$MCP_SPEC_DIR`, else `mcp-core/tests/spec` (the
/// packages that include this file sit one level below the repository root).
pub(crate) fn spec_dir() -> PathBuf {
    match std::env::var_os("MCP_SPEC_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-core/tests/spec"),
    }
}

/// One revision's root schema document.
struct Spec {
    root: Value,
    /// `"definitions"` (draft-07) or `"$defs"` (2020-12).
    defs_key: &'static str,
}

impl Spec {
    fn has(&self, def: &str) -> bool {
        self.root
            .get(self.defs_key)
            .and_then(|d| d.get(def))
            .is_some()
    }
}

type Cache<T> = OnceLock<Mutex<HashMap<String, Arc<T>>>>;

static SPECS: Cache<Spec> = OnceLock::new();
static VALIDATORS: Cache<jsonschema::Validator> = OnceLock::new();

fn lock<T>(cache: &'static Cache<T>) -> std::sync::MutexGuard<'static, HashMap<String, Arc<T>>> {
    cache
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn spec(rev: &str) -> Result<Arc<Spec>, String> {
    if let Some(s) = lock(&SPECS).get(rev) {
        return Ok(Arc::clone(s));
    }
    if !REVISIONS.contains(&rev) && rev != EXT_TASKS {
        return Err(format!(
            "unknown MCP revision {rev:?} (known: {REVISIONS:?})"
        ));
    }
    let path = spec_dir().join(rev).join("schema.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("[{rev}] cannot read {}: {e}", path.display()))?;
    let root: Value = serde_json::from_str(&text)
        .map_err(|e| format!("[{rev}] {} is not JSON: {e}", path.display()))?;
    let defs_key = if root.get("$defs").is_some() {
        "$defs"
    } else if root.get("definitions").is_some() {
        "definitions"
    } else {
        return Err(format!("[{rev}] {} has no definitions", path.display()));
    };
    let s = Arc::new(Spec { root, defs_key });
    lock(&SPECS).insert(rev.to_owned(), Arc::clone(&s));
    Ok(s)
}

/// Whether revision `rev` has a definition named `def`.
pub(crate) fn has_def(rev: &str, def: &str) -> bool {
    spec(rev).map(|s| s.has(def)).unwrap_or(false)
}

/// Compiled validator for `#/<defs>/<def>` of revision `rev`.
fn validator(rev: &str, def: &str) -> Result<Arc<jsonschema::Validator>, String> {
    let cache_key = format!("{rev}#{def}");
    if let Some(v) = lock(&VALIDATORS).get(&cache_key) {
        return Ok(Arc::clone(v));
    }
    let s = spec(rev)?;
    if !s.has(def) {
        return Err(format!(
            "[{rev}] schema has no definition {def:?} under {}",
            s.defs_key
        ));
    }
    // Wrapper schema: `$ref` to the definition plus the whole definitions table (and the
    // dialect), so that no sibling keywords of the root schema interfere (draft-07 ignores
    // siblings of `$ref`, 2020-12 would apply them).
    let mut wrapper = json!({ "$ref": format!("#/{}/{def}", s.defs_key) });
    if let Some(dialect) = s.root.get("$schema") {
        wrapper["$schema"] = dialect.clone();
    }
    if let Some(defs) = s.root.get(s.defs_key) {
        wrapper[s.defs_key] = defs.clone();
    }
    let compiled = jsonschema::validator_for(&wrapper)
        .map_err(|e| format!("[{rev}] cannot compile schema for {def}: {e}"))?;
    let compiled = Arc::new(compiled);
    lock(&VALIDATORS).insert(cache_key, Arc::clone(&compiled));
    Ok(compiled)
}

/// Validates `value` against definition `def` (e.g. `"CallToolResult"`) of revision `rev`.
///
/// The error names the revision, the definition and every validation error with its
/// instance path (and schema path).
pub(crate) fn validate_def(rev: &str, def: &str, value: &Value) -> Result<(), String> {
    validate_at(rev, def, value, "")
}

/// [`validate_def`] for a value found at JSON pointer `base` of a larger message; instance
/// paths in the error are reported relative to that message.
fn validate_at(rev: &str, def: &str, value: &Value, base: &str) -> Result<(), String> {
    let v = validator(rev, def)?;
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| {
            let at = format!("{base}{}", e.instance_path().as_str());
            let at = if at.is_empty() { "/" } else { &at };
            format!("  at {at}: {e} (schema: {})", e.schema_path().as_str())
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "[{rev}] {def}: {} validation error(s) in {}\n{}",
            errors.len(),
            value,
            errors.join("\n")
        ))
    }
}

/// Result definition for a successful response to `method`, by revision (an
/// `input_required` result of 2026-07-28 is an `InputRequiredResult` whatever the method).
fn result_def(rev: &str, method: Option<&str>, result: &Value) -> &'static str {
    if result.get("resultType").and_then(Value::as_str) == Some("input_required")
        && has_def(rev, "InputRequiredResult")
    {
        return "InputRequiredResult";
    }
    let named = match method {
        Some("initialize") => "InitializeResult",
        Some("ping")
        | Some("logging/setLevel")
        | Some("resources/subscribe")
        | Some("resources/unsubscribe") => "EmptyResult",
        Some("tools/list") => "ListToolsResult",
        Some("tools/call") => "CallToolResult",
        Some("server/discover") => "DiscoverResult",
        Some("resources/list") => "ListResourcesResult",
        Some("resources/templates/list") => "ListResourceTemplatesResult",
        Some("resources/read") => "ReadResourceResult",
        Some("prompts/list") => "ListPromptsResult",
        Some("prompts/get") => "GetPromptResult",
        Some("completion/complete") => "CompleteResult",
        Some("subscriptions/listen") => "SubscriptionsListenResult",
        _ => "Result",
    };
    if has_def(rev, named) {
        named
    } else {
        "Result"
    }
}

/// First of `names` that revision `rev` defines.
fn first_def(rev: &str, names: &[&'static str]) -> Result<&'static str, String> {
    names
        .iter()
        .copied()
        .find(|n| has_def(rev, n))
        .ok_or_else(|| format!("[{rev}] schema defines none of {names:?}"))
}

/// Validates one message the server sent, choosing the definitions from its shape.
///
/// * `result` present: the envelope against `JSONRPCResultResponse` (≥ 2025-11-25) or
///   `JSONRPCResponse`, and `msg["result"]` against the result type of `request_method`
///   (`initialize` → `InitializeResult`, `ping` / `logging/setLevel` /
///   `resources/(un)subscribe` → `EmptyResult`, `tools/list` → `ListToolsResult`,
///   `tools/call` → `CallToolResult`, `server/discover` → `DiscoverResult`, `resources/list`,
///   `resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get`,
///   `completion/complete`, `subscriptions/listen` → their `…Result`; an `input_required`
///   result → `InputRequiredResult`; `Result` when the method is unknown or the revision
///   lacks the type).
/// * `error` present: `JSONRPCErrorResponse` (≥ 2025-11-25) or `JSONRPCError`; where the
///   revision defines them, code -32022 also against `UnsupportedProtocolVersionError` and
///   -32021 against `MissingRequiredClientCapabilityError`.
/// * `id` without `result` / `error`: a server-to-client request, against `JSONRPCRequest`
///   and, where the revision defines it, `CreateMessageRequest`, `ElicitRequest` or
///   `ListRootsRequest`.
/// * otherwise a notification, by method: `notifications/progress` → `ProgressNotification`,
///   `notifications/message` → `LoggingMessageNotification`, `notifications/{tools,prompts,
///   resources}/list_changed` → `{Tool,Prompt,Resource}ListChangedNotification`,
///   `notifications/resources/updated` → `ResourceUpdatedNotification`,
///   `notifications/cancelled` → `CancelledNotification`,
///   `notifications/subscriptions/acknowledged` → `SubscriptionsAcknowledgedNotification`
///   (where defined), anything else (and in addition to the specific type) →
///   `JSONRPCNotification`.
///
/// `request_method` is the method of the request being answered (ignored for
/// notifications). All failures are collected into the error string.
pub(crate) fn validate_server_message(
    rev: &str,
    request_method: Option<&str>,
    msg: &Value,
) -> Result<(), String> {
    // (definition, value, JSON pointer of the value within `msg`)
    let mut checks: Vec<(&'static str, &Value, &str)> = Vec::new();
    let obj = msg
        .as_object()
        .ok_or_else(|| format!("[{rev}] server message is not a JSON object: {msg}"))?;
    if let Some(result) = obj.get("result") {
        // The tasks extension (SEP-2663) is in no schema: its shapes are checked here.
        if let Some(kind) = tasks_v2_kind(request_method, result) {
            validate_tasks_v2(rev, kind, result)?;
            if let Some(inner) = result.get("result") {
                // Inlined, the tool result carries no `resultType` of its own.
                let mut inner = inner.clone();
                if let Some(o) = inner.as_object_mut() {
                    o.entry("resultType").or_insert(json!("complete"));
                }
                validate_at(rev, "CallToolResult", &inner, "/result/result")?;
            }
            return validate_at(
                rev,
                first_def(rev, &["JSONRPCResultResponse", "JSONRPCResponse"])?,
                msg,
                "",
            );
        }
        checks.push((
            first_def(rev, &["JSONRPCResultResponse", "JSONRPCResponse"])?,
            msg,
            "",
        ));
        let def = result_def(rev, request_method, result);
        if def == "InputRequiredResult"
            && result.get("inputRequests").is_none()
            && result.get("requestState").is_none()
        {
            return Err(format!(
                "[{rev}] InputRequiredResult without inputRequests or requestState: {msg}"
            ));
        }
        checks.push((def, result, "/result"));
    } else if obj.contains_key("error") {
        checks.push((
            first_def(rev, &["JSONRPCErrorResponse", "JSONRPCError"])?,
            msg,
            "",
        ));
        let specific = match msg.pointer("/error/code").and_then(Value::as_i64) {
            Some(-32022) => Some("UnsupportedProtocolVersionError"),
            Some(-32021) => Some("MissingRequiredClientCapabilityError"),
            Some(-32700) => Some("ParseError"),
            Some(-32600) => Some("InvalidRequestError"),
            Some(-32601) => Some("MethodNotFoundError"),
            Some(-32602) => Some("InvalidParamsError"),
            Some(-32603) => Some("InternalError"),
            _ => None,
        };
        if let Some(def) = specific.filter(|d| has_def(rev, d)) {
            // The per-code definitions of 2026-07-28 describe the `error` object; the two
            // older ones the whole response.
            let whole = matches!(
                def,
                "UnsupportedProtocolVersionError" | "MissingRequiredClientCapabilityError"
            );
            match (whole, msg.get("error")) {
                (false, Some(error)) => checks.push((def, error, "/error")),
                _ => checks.push((def, msg, "")),
            }
        }
    } else if obj.contains_key("id") {
        // A request from the server to the client (e.g. sampling, elicitation, ping).
        checks.push(("JSONRPCRequest", msg, ""));
        let specific = match obj.get("method").and_then(Value::as_str) {
            Some("sampling/createMessage") => Some("CreateMessageRequest"),
            Some("elicitation/create") => Some("ElicitRequest"),
            Some("roots/list") => Some("ListRootsRequest"),
            _ => None,
        };
        if let Some(def) = specific.filter(|d| has_def(rev, d)) {
            checks.push((def, msg, ""));
        }
    } else {
        checks.push(("JSONRPCNotification", msg, ""));
        validate_tasks_notification(msg)?;
        let specific = match obj.get("method").and_then(Value::as_str) {
            Some("notifications/progress") => Some("ProgressNotification"),
            Some("notifications/message") => Some("LoggingMessageNotification"),
            Some("notifications/tools/list_changed") => Some("ToolListChangedNotification"),
            Some("notifications/prompts/list_changed") => Some("PromptListChangedNotification"),
            Some("notifications/resources/list_changed") => Some("ResourceListChangedNotification"),
            Some("notifications/resources/updated") => Some("ResourceUpdatedNotification"),
            Some("notifications/cancelled") => Some("CancelledNotification"),
            Some("notifications/subscriptions/acknowledged") => {
                Some("SubscriptionsAcknowledgedNotification")
            }
            _ => None,
        };
        if let Some(def) = specific.filter(|d| has_def(rev, d)) {
            checks.push((def, msg, ""));
        }
    }
    let failures: Vec<String> = checks
        .into_iter()
        .filter_map(|(def, value, base)| validate_at(rev, def, value, base).err())
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// Validates one message the client sent, choosing the definitions from its shape.
///
/// * `method` and `id`: a request, against `JSONRPCRequest` and its own type
///   (`initialize` → `InitializeRequest`, `tools/call` → `CallToolRequest`, ...), and
///   `ClientRequest` where the revision defines it.
/// * `method` without `id`: a notification, against `JSONRPCNotification` and
///   `InitializedNotification` / `CancelledNotification`.
/// * `result`: an answer to the server request `answered` (`ping` → `EmptyResult`,
///   `sampling/createMessage` → `CreateMessageResult`, `elicitation/create` →
///   `ElicitResult`, `roots/list` → `ListRootsResult`) in its envelope.
/// * `error`: `JSONRPCErrorResponse` (≥ 2025-11-25) or `JSONRPCError`.
pub(crate) fn validate_client_message(
    rev: &str,
    answered: Option<&str>,
    msg: &Value,
) -> Result<(), String> {
    let mut checks: Vec<(&'static str, &Value, &str)> = Vec::new();
    let obj = msg
        .as_object()
        .ok_or_else(|| format!("[{rev}] client message is not a JSON object: {msg}"))?;
    let method = obj.get("method").and_then(Value::as_str);
    if let Some(result) = obj.get("result") {
        checks.push((
            first_def(rev, &["JSONRPCResultResponse", "JSONRPCResponse"])?,
            msg,
            "",
        ));
        let def = match answered {
            Some("ping") => "EmptyResult",
            Some("sampling/createMessage") => "CreateMessageResult",
            Some("elicitation/create") => "ElicitResult",
            Some("roots/list") => "ListRootsResult",
            _ => "Result",
        };
        checks.push((def, result, "/result"));
    } else if obj.contains_key("error") {
        checks.push((
            first_def(rev, &["JSONRPCErrorResponse", "JSONRPCError"])?,
            msg,
            "",
        ));
    } else if obj.contains_key("id") {
        checks.push(("JSONRPCRequest", msg, ""));
        let def = match method {
            Some("initialize") => "InitializeRequest",
            Some("ping") => "PingRequest",
            Some("server/discover") => "DiscoverRequest",
            Some("logging/setLevel") => "SetLevelRequest",
            Some("tools/list") => "ListToolsRequest",
            Some("tools/call") => "CallToolRequest",
            Some("prompts/list") => "ListPromptsRequest",
            Some("prompts/get") => "GetPromptRequest",
            Some("resources/list") => "ListResourcesRequest",
            Some("resources/templates/list") => "ListResourceTemplatesRequest",
            Some("resources/read") => "ReadResourceRequest",
            Some("completion/complete") => "CompleteRequest",
            Some("resources/subscribe") => "SubscribeRequest",
            Some("resources/unsubscribe") => "UnsubscribeRequest",
            Some("subscriptions/listen") => "SubscriptionsListenRequest",
            // The tasks extension (SEP-2663) is in no schema: its params are checked here
            // (the `_meta` against the revision's `RequestParams`).
            Some(m @ ("tasks/get" | "tasks/update" | "tasks/cancel")) => {
                return validate_tasks_v2_request(rev, m, msg);
            }
            other => {
                return Err(format!(
                    "[{rev}] unexpected client request {other:?}: {msg}"
                ))
            }
        };
        if !has_def(rev, def) {
            return Err(format!("[{rev}] the revision has no {def}: {msg}"));
        }
        checks.push((def, msg, ""));
        if has_def(rev, "ClientRequest") {
            checks.push(("ClientRequest", msg, ""));
        }
    } else {
        checks.push(("JSONRPCNotification", msg, ""));
        let def = match method {
            Some("notifications/initialized") => "InitializedNotification",
            Some("notifications/cancelled") => "CancelledNotification",
            other => {
                return Err(format!(
                    "[{rev}] unexpected client notification {other:?}: {msg}"
                ))
            }
        };
        checks.push((def, msg, ""));
    }
    let failures: Vec<String> = checks
        .into_iter()
        .filter_map(|(def, value, base)| validate_at(rev, def, value, base).err())
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// A tasks-v2 request the client sent: a `JSONRPCRequest` whose params are the revision's
/// `RequestParams` (the per-request `_meta`, which must list the extension in its client
/// capabilities) plus a `taskId` string, and for `tasks/update` an `inputResponses`
/// object of the revision's `InputResponses`. Nothing else.
fn validate_tasks_v2_request(rev: &str, method: &str, msg: &Value) -> Result<(), String> {
    let params = &msg["params"];
    let mut failures: Vec<String> = [
        validate_at(rev, "JSONRPCRequest", msg, ""),
        validate_at(rev, "RequestParams", params, "/params"),
    ]
    .into_iter()
    .filter_map(Result::err)
    .collect();
    let caps = &params["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    if caps["extensions"]["io.modelcontextprotocol/tasks"].is_null() {
        failures.push(format!(
            "[{rev}] {method} does not declare the tasks extension: {msg}"
        ));
    }
    if params["taskId"].as_str().is_none_or(str::is_empty) {
        failures.push(format!("[{rev}] {method} without a taskId string: {msg}"));
    }
    let allowed: &[&str] = match method {
        "tasks/update" => &["taskId", "inputResponses", "_meta"],
        _ => &["taskId", "_meta"],
    };
    for key in params.as_object().into_iter().flat_map(|o| o.keys()) {
        if !allowed.contains(&key.as_str()) {
            failures.push(format!(
                "[{rev}] {method} has an unknown member {key}: {msg}"
            ));
        }
    }
    if method == "tasks/update" {
        match params.get("inputResponses") {
            Some(r) => {
                if let Err(e) = validate_at(rev, "InputResponses", r, "/params/inputResponses") {
                    failures.push(e);
                }
            }
            None => failures.push(format!(
                "[{rev}] tasks/update without inputResponses: {msg}"
            )),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// The tasks extension's parts of a notification, against its own schema ([`EXT_TASKS`]):
/// `notifications/tasks` as `TaskStatusNotification` (plus the `DetailedTask` checks of
/// `tasks/get`, without `resultType`), and an acknowledgement's `notifications.taskIds` as
/// `TaskSubscriptionAcknowledgedNotifications`.
fn validate_tasks_notification(msg: &Value) -> Result<(), String> {
    match msg.get("method").and_then(Value::as_str) {
        Some("notifications/tasks") => {
            validate_at(EXT_TASKS, "TaskStatusNotification", msg, "")?;
            let mut params = msg.get("params").cloned().unwrap_or_default();
            if let Some(o) = params.as_object_mut() {
                o.remove("_meta");
                o.insert("resultType".into(), json!("complete"));
            }
            validate_tasks_v2(EXT_TASKS, "DetailedTask", &params)
        }
        Some("notifications/subscriptions/acknowledged") => {
            match msg.pointer("/params/notifications") {
                Some(n) if n.get("taskIds").is_some() => validate_at(
                    EXT_TASKS,
                    "TaskSubscriptionAcknowledgedNotifications",
                    n,
                    "/params/notifications",
                ),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// Which tasks-v2 shape a result is: `CreateTaskResult` (`resultType: "task"`), the
/// `DetailedTask` of `tasks/get`, or the empty ack of `tasks/update` / `tasks/cancel`.
fn tasks_v2_kind(method: Option<&str>, result: &Value) -> Option<&'static str> {
    if result.get("resultType").and_then(Value::as_str) == Some("task") {
        return Some("CreateTaskResult");
    }
    match method {
        Some("tasks/get") => Some("DetailedTask"),
        Some("tasks/update") | Some("tasks/cancel") => Some("TaskAck"),
        _ => None,
    }
}

/// The tasks-v2 shapes as the conformance suite's SEP-2663 scenarios check them (there
/// is no published schema): flat task fields, RFC 3339 times, integer `ttlMs` /
/// `pollIntervalMs`, no v1 `ttl` / `pollInterval` / `task` wrapper / `requestState`, the
/// payload that goes with the status, and acks without any task field.
fn validate_tasks_v2(rev: &str, kind: &str, result: &Value) -> Result<(), String> {
    let time = json!({"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$"});
    let task = json!({
        "type": "object",
        "required": ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "resultType"],
        "properties": {
            "taskId": {"type": "string", "minLength": 1},
            "status": {"enum": ["working", "input_required", "completed", "failed", "cancelled"]},
            "createdAt": time,
            "lastUpdatedAt": time,
            "ttlMs": {"type": ["integer", "null"], "minimum": 1},
            "pollIntervalMs": {"type": "integer", "minimum": 1},
            "statusMessage": {"type": "string"},
            "_meta": {"type": "object"}
        },
        "not": {"anyOf": [
            {"required": ["ttl"]}, {"required": ["pollInterval"]}, {"required": ["task"]},
            {"required": ["requestState"]}
        ]}
    });
    let schema = match kind {
        "CreateTaskResult" => json!({"allOf": [task, {
            "properties": {"resultType": {"const": "task"}},
            "not": {"anyOf": [{"required": ["result"]}, {"required": ["error"]}, {"required": ["inputRequests"]}]}
        }]}),
        "DetailedTask" => json!({"allOf": [task, {
            "properties": {"resultType": {"const": "complete"}},
            "oneOf": [
                {"properties": {"status": {"const": "completed"}}, "required": ["result"],
                 "not": {"anyOf": [{"required": ["error"]}, {"required": ["inputRequests"]}]}},
                {"properties": {"status": {"const": "failed"},
                                "error": {"type": "object", "required": ["code", "message"],
                                          "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}}},
                 "required": ["error"],
                 "not": {"anyOf": [{"required": ["result"]}, {"required": ["inputRequests"]}]}},
                {"properties": {"status": {"const": "input_required"},
                                "inputRequests": {"type": "object", "minProperties": 1,
                                                  "additionalProperties": {"type": "object", "required": ["method"]}}},
                 "required": ["inputRequests"],
                 "not": {"anyOf": [{"required": ["result"]}, {"required": ["error"]}]}},
                {"properties": {"status": {"enum": ["working", "cancelled"]}},
                 "not": {"anyOf": [{"required": ["result"]}, {"required": ["error"]}, {"required": ["inputRequests"]}]}}
            ]
        }]}),
        _ => json!({
            "type": "object",
            "required": ["resultType"],
            "properties": {"resultType": {"const": "complete"}},
            "not": {"anyOf": [
                {"required": ["taskId"]}, {"required": ["status"]}, {"required": ["result"]},
                {"required": ["error"]}, {"required": ["inputRequests"]}
            ]}
        }),
    };
    let validator = jsonschema::validator_for(&schema).map_err(|e| format!("{kind}: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| format!("[{rev}] {kind}: {e} at {}", e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

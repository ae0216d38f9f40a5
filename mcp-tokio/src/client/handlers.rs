//! What the application does for the server: sampling (`sampling/createMessage`),
//! elicitation (`elicitation/create`) and roots (`roots/list`). Registering a handler
//! declares its capability; the same handlers answer legacy server requests and
//! 2026-07-28 `input_required` rounds.
//!
//! Handlers take the request's `params` and return its result object as JSON (the
//! schema's `CreateMessageResult`, `ElicitResult`, `ListRootsResult`); an `Err` is sent
//! as a JSON-RPC error. Elicitation results that `accept` get the requested schema's
//! `default`s for every field the user left out (SEP-1034).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_rs_core::model::common::ClientCaps;
use serde_json::{Map, Value};

/// The future a handler returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<Value, HandlerError>> + Send>>;

/// A handler: `params` in, result object out.
pub type Handler = Arc<dyn Fn(Value) -> HandlerFuture + Send + Sync>;

/// A handler's refusal, sent as a JSON-RPC error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerError {
    /// The code (the spec's examples use -1 for a user who declines).
    pub code: i32,
    /// The message.
    pub message: String,
}

impl HandlerError {
    /// An error with `code` and `message`.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        HandlerError {
            code,
            message: message.into(),
        }
    }
}

/// The handlers an application registered (see [`ClientOptions`](super::ClientOptions)).
#[derive(Clone, Default)]
pub struct Handlers {
    /// `sampling/createMessage`.
    pub sampling: Option<Handler>,
    /// `elicitation/create`.
    pub elicitation: Option<Handler>,
    /// `roots/list`.
    pub roots: Option<Handler>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

/// Which server request a handler answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    Sampling,
    Elicitation,
    Roots,
}

impl Handlers {
    /// The capabilities the registered handlers declare.
    pub fn capabilities(&self) -> ClientCaps {
        let mut caps = ClientCaps::NONE;
        if self.sampling.is_some() {
            caps = caps.with(ClientCaps::SAMPLING);
        }
        if self.elicitation.is_some() {
            caps = caps.with(ClientCaps::ELICITATION);
        }
        if self.roots.is_some() {
            caps = caps.with(ClientCaps::ROOTS);
        }
        caps
    }

    /// Answers one server request: the handler's result (elicitation defaults applied), or
    /// -32601 without a handler.
    pub(crate) async fn answer(&self, want: Want, params: Value) -> Result<Value, HandlerError> {
        let handler = match want {
            Want::Sampling => &self.sampling,
            Want::Elicitation => &self.elicitation,
            Want::Roots => &self.roots,
        };
        let Some(handler) = handler else {
            return Err(HandlerError::new(-32601, "Method not found"));
        };
        let schema = params.get("requestedSchema").cloned();
        let mut result = handler(params).await?;
        if let (Want::Elicitation, Some(schema)) = (want, schema) {
            apply_defaults(&mut result, &schema);
        }
        Ok(result)
    }
}

/// SEP-1034: in an `accept`ed elicitation result, every property of `schema` that has a
/// `default` and is missing from `content` gets that default.
pub fn apply_defaults(result: &mut Value, schema: &Value) {
    if result.get("action").and_then(Value::as_str) != Some("accept") {
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let Some(obj) = result.as_object_mut() else {
        return;
    };
    let content = obj
        .entry("content")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(content) = content.as_object_mut() else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            if content.get(name).is_none_or(Value::is_null) {
                content.insert(name.clone(), default.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepted_elicitations_get_the_schema_defaults() {
        let schema = json!({"type":"object","properties":{
            "name":{"type":"string","default":"John"},
            "age":{"type":"integer","default":30},
            "note":{"type":"string"}}});
        let mut accepted = json!({"action":"accept","content":{"name":"Ann"}});
        apply_defaults(&mut accepted, &schema);
        assert_eq!(
            accepted,
            json!({"action":"accept","content":{"name":"Ann","age":30}})
        );
        let mut declined = json!({"action":"decline"});
        apply_defaults(&mut declined, &schema);
        assert_eq!(declined, json!({"action":"decline"}));
    }
}

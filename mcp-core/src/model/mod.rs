//! What a server offers, apart from how it is carried: definitions of tools, prompts,
//! resources and completions, the content they return, the result envelope shared by every
//! result, the provider traits, and [`ServerHandler`](handler::ServerHandler) on top.
//!
//! | module | concept |
//! |---|---|
//! | [`common`] | vocabulary of every concept: server info, client capabilities, `Dispatch`, the result envelope, definition errors |
//! | [`content`] | content blocks, icons, annotations |
//! | [`logging`] | log levels |
//! | [`input`] | 2026-07-28 `input_required` results (requests to the client, sealed state) |
//! | [`tools`] | tool definitions, calls and results (`ToolSet`) |
//! | [`prompts`] | prompt definitions and results (`PromptSet`) |
//! | [`resources`] | resources, templates and reads (`ResourceSet`) |
//! | [`completion`] | argument completion (`Completions`) |
//! | [`skills`] | the skills extension: skill entries (`SkillSet`) |
//! | [`tasks`] | the tasks extension: the task table (`TaskTable`, `TaskStore`) |
//! | [`handler`] | `ServerHandler`: one server's providers |
//!
//! Depends on the wire and token layers only; within the layer, each module uses only those
//! above it in this table.

pub mod common;
#[cfg(feature = "completion")]
pub mod completion;
pub mod content;
pub mod handler;
#[cfg(feature = "input-required")]
pub mod input;
pub mod logging;
#[cfg(feature = "prompts")]
pub mod prompts;
#[cfg(feature = "resources")]
pub mod resources;
#[cfg(feature = "skills")]
pub mod skills;
#[cfg(feature = "tasks")]
pub mod tasks;
pub mod tools;

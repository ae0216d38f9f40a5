//! # mcp-macros
//!
//! Compile-time code generation for [mcp-rs-core](https://docs.rs/mcp-rs-core), re-exported there
//! behind its `macros` feature (`mcp_rs_core::ToolArgs`, ...), and for mcp-tokio (its `macros`
//! feature). Everything generated for mcp-core is plain `no_std`, allocation-free code
//! against traits of `mcp_rs_core::typed` that can also be implemented by hand:
//!
//! - `#[derive(ToolArgs)]`: a struct's JSON Schema as a `&'static str` built at compile time,
//!   and a borrowing parser that enforces exactly that schema. Field attributes
//!   `#[arg(rename, description, title, minimum, maximum, min_length, max_length, pattern,
//!   default, examples, header)]`; container attributes `#[arg(rename_all, allow_unknown)]`.
//!   `pattern = "..."` is compiled here into a Thompson NFA (at most 256 states, `{n,m}`
//!   copying its operand) that `mcp_rs_core::typed::pattern` runs without allocation or
//!   backtracking; the ECMA-262 subset it accepts: literals and escapes, `.`, classes with
//!   ranges and negation, `\d \D \w \W \s \S` (ECMAScript meanings), `^`, `$`, groups,
//!   `|`, `* + ? {n} {n,} {n,m}`. Backreferences, lookaround, `\b`, `\p{..}` and inline
//!   flags are compile errors naming the construct. `examples = [...]` become the schema's
//!   `examples`, each checked at compile time against the field's pattern, lengths and
//!   bounds;
//! - `#[derive(ToolOutput)]`: `outputSchema` and the writer of `structuredContent`;
//! - `#[tools]` on an `impl` block: the static tool table and the `ToolSet` implementation
//!   (`#[tool(name, title, description, read_only, destructive, idempotent, open_world,
//!   icons, meta, requires)]` on methods; the doc comment is the default description);
//! - `#[mcp_rs_tokio::tools]` (entry point `tokio_tools`, re-exported by mcp-tokio): the same
//!   syntax with `async fn` methods taking mcp-tokio's `Context`, registered into its
//!   `Tools` registry;
//! - `#[derive(PromptArgs)]` and `#[prompts]`: prompt arguments from a struct, the prompt
//!   table and the `PromptSet` implementation;
//! - `#[derive(TemplateVars)]` and `#[resources]`: resource template variables from a
//!   struct (checked against the RFC 6570 template at compile time), the resource and
//!   template tables and the `ResourceSet` implementation.
//!
//! The syntax of each is documented on the items of `mcp_rs_core` they implement and in the
//! module docs of this crate's sources.
#![cfg_attr(docsrs, feature(doc_cfg))]

use proc_macro::TokenStream;

mod args;
mod attrs;
mod output;
mod pattern;
mod prompts;
mod resources;
mod skills;
mod tools;

/// Derives `mcp_rs_core::typed::ToolArgs` (structs with named fields) or the value traits
/// (unit-only enums, usable as field types). See the crate documentation.
#[proc_macro_derive(ToolArgs, attributes(arg, serde))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    args::derive(input.into()).into()
}

/// Derives `mcp_rs_core::typed::ToolOutput` (structs with named fields) or the output value
/// traits (unit-only enums). See the crate documentation.
#[proc_macro_derive(ToolOutput, attributes(arg, serde))]
pub fn derive_tool_output(input: TokenStream) -> TokenStream {
    output::derive(input.into()).into()
}

/// On an `impl` block: every method marked `#[tool(...)]` becomes a tool; generates the
/// static tool table and the `mcp_rs_core::ToolSet` implementation.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    tools::expand(attr.into(), item.into(), tools::Form::Core).into()
}

/// `#[mcp_rs_tokio::tools]` (re-exported by mcp-tokio under that name, feature `macros`): the
/// syntax of `#[tools]`, for `async fn` methods too (with mcp-tokio's `Context`), generating
/// the static tool table and `register(self: Arc<Self>, &mcp_rs_tokio::Tools)`.
#[proc_macro_attribute]
pub fn tokio_tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    tools::expand(attr.into(), item.into(), tools::Form::Tokio).into()
}

/// Derives `mcp_rs_core::typed::prompt_args::PromptArgs` (a struct whose fields are a prompt's
/// arguments) or `PromptArgValue` (a unit-only enum: a string from a fixed set).
#[proc_macro_derive(PromptArgs, attributes(arg))]
pub fn derive_prompt_args(input: TokenStream) -> TokenStream {
    prompts::derive_args(input.into()).into()
}

/// On an `impl` block: every method marked `#[prompt(...)]` becomes a prompt; generates the
/// static prompt table and the `mcp_rs_core::PromptSet` implementation.
#[proc_macro_attribute]
pub fn prompts(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompts::expand(attr.into(), item.into()).into()
}

/// Derives `mcp_rs_core::typed::template_vars::TemplateVars`: a struct whose fields are the variables
/// of a resource template (checked against the template at compile time by `#[resources]`).
#[proc_macro_derive(TemplateVars, attributes(arg))]
pub fn derive_template_vars(input: TokenStream) -> TokenStream {
    resources::derive_vars(input.into()).into()
}

/// On an `impl` block: every method marked `#[resource_template(...)]` (and
/// `#[resource(...)]`) becomes a resource template (a resource); generates the static tables
/// and the `mcp_rs_core::ResourceSet` implementation.
#[proc_macro_attribute]
pub fn resources(attr: TokenStream, item: TokenStream) -> TokenStream {
    resources::expand(attr.into(), item.into()).into()
}

/// `skill!("dir", "skill://base/name")`: a skills-extension entry
/// (`mcp_rs_core::model::skills::Skill`, a constant expression) built at compile time from
/// the files under `dir` (relative to the crate's `Cargo.toml`): every file in the manifest
/// with its size and `sha256:` digest, SKILL.md first, and SKILL.md's YAML front matter as
/// the JSON `frontmatter` (the subset: `key: scalar` and one level of nested mappings;
/// every scalar becomes a JSON string; anything else is a compile error naming the line).
#[proc_macro]
pub fn skill(input: TokenStream) -> TokenStream {
    skills::expand(input.into()).into()
}

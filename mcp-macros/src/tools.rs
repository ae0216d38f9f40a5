//! `#[tools]`: an inherent `impl` block whose `#[tool(...)]` methods become a static tool
//! table and a synchronous `ToolSet`; and `#[mcp_rs_tokio::tools]` (the `tokio_tools` entry
//! point), the same syntax for mcp-tokio with `async fn` methods (see [the last
//! section](#mcp_tokiotools)).
//!
//! # Syntax
//!
//! ```text
//! #[tools]                    // or #[tools(no_tool_set)], #[tools(crate = path::to::mcp_rs_core)]
//! impl MyTools {
//!     /// Adds two numbers.          <- the description, unless `description = "..."`
//!     #[tool(title = "Add", read_only, idempotent, open_world = false)]
//!     fn add(&mut self, args: AddArgs, result: &mut ToolResult<'_, '_>) -> Result<Sum, Overflow> { ... }
//!
//!     fn helper(&self) {}         // no #[tool]: left alone
//! }
//! ```
//!
//! Tools are listed in declaration order. `#[tool]` keys (all optional):
//!
//! | key | meaning |
//! |---|---|
//! | `name = "..."` | tool name (default: the method name); 1-64 of `[A-Za-z0-9_.-/]`, unique |
//! | `title = "..."` | `title`, and `annotations.title` (older clients read that one) |
//! | `description = "..."` | default: the doc comment (lines joined, paragraphs kept); `""` for none |
//! | `read_only`, `destructive`, `idempotent`, `open_world` | annotation hints: bare flag = `true`, or `= true` / `= false`; unset hints are left out |
//! | `annotations = EXPR` | a `ToolAnnotations<'static>` constant the flags and title override |
//! | `icons = EXPR` | a `&'static [Icon<'static>]` |
//! | `meta = "{...}"` | raw JSON object, `_meta` (checked at compile time) |
//! | `requires = EXPR` | a `ClientCaps` constant: client capabilities the tool needs |
//! | `input_schema = EXPR` | a `&'static str` schema for a tool that reads its arguments itself (`RawJson` or `&CallRequest`); not with a `ToolArgs` parameter |
//! | `output_schema = EXPR` | a `&'static str` `outputSchema` for a tool that writes structured output itself; not with a `ToolOutput` return type |
//!
//! # Method shapes
//!
//! A receiver `&self` / `&mut self` (or none: an associated function), then, in any order:
//! - at most one arguments value: a type implementing `ToolArgs<'_>` (its `SCHEMA` is the
//!   `inputSchema`; a failed parse is answered with the `isError` result
//!   ``Invalid arguments for tool add: argument `a`: must be a number`` and the method is
//!   not called), or `RawJson<'_>` (the arguments as sent, unchecked; needs
//!   `input_schema`);
//! - `&CallRequest<'_>` (revision, progress, client capabilities, raw arguments);
//! - `&mut ToolResult<'_, '_>` (content blocks; a method returning a value may add text
//!   blocks first: the value is written after it returns).
//!
//! Without an arguments parameter and without `input_schema`, the input schema is
//! `{"type":"object","additionalProperties":false}` and any argument is refused the same
//! way (`arguments: unknown member "x"`).
//!
//! Parameter types are recognised by their last path segment (`CallRequest`, `ToolResult`,
//! `RawJson`), so aliases under other names count as arguments types.
//!
//! Returns:
//! - `()`: whatever the method wrote (possibly nothing: an empty content list);
//! - `T: ToolOutput`: `result.structured(&value)` (a JSON text block and
//!   `structuredContent`); `T::SCHEMA` is the `outputSchema`;
//! - `&str` / `String`: one text block;
//! - `Result<X, E>` with `X` one of the above and `E: Display`: `Err(e)` becomes an
//!   `isError` text block with `e`'s text (after anything the method wrote);
//! - `Dispatch`: passed through (`Dispatch::Defer` hands the call out for later completion).
//!
//! Refused at compile time, with the offending tokens underlined: `async fn` (the core is
//! synchronous; `#[mcp_rs_tokio::tools]` serves async tools), type or const generic methods (schemas need
//! concrete types), `unsafe fn`, `self` by value, a second arguments parameter, other
//! parameter types (references, tuples, `impl Trait`), `impl Trait` returns, unknown or
//! repeated keys, invalid or duplicate names, invalid literal JSON, `#[tools]` on anything
//! but an inherent `impl`.
//!
//! # Generated items
//!
//! In a second inherent `impl` block with the same generics:
//! - `pub const TOOLS: &'static [Tool<'static>]`: the definitions, in declaration order;
//! - `pub fn call_tool(&mut self, index: usize, request: &CallRequest<'_>, result: &mut
//!   ToolResult<'_, '_>) -> Dispatch`: runs `TOOLS[index]` (an index past the table gets an
//!   `isError` result);
//! - `pub fn find_tool(name: JsonStr<'_>) -> Option<usize>`: the index of a tool by name;
//!
//! and, unless `no_tool_set`, `impl ToolSet` (`len`/`get` from `TOOLS`, `call` through
//! `call_tool` with `request.tool_index()`). With `no_tool_set` a hand-written `ToolSet` can
//! put the macro's tools next to runtime-generated ones (offsetting indices as it likes).
//!
//! Generated code names only `::mcp_rs_core` (or the `crate = ...` path) and `::core` items:
//! no allocation, no `unsafe`.
//!
//! # `#[mcp_rs_tokio::tools]`
//!
//! The same attribute syntax and `#[tool]` keys, expanded for mcp-tokio's runtime registry
//! (a separate entry point rather than `#[tools]` switching on `async fn`: the two generate
//! different things, an `impl ToolSet` of `no_std` code against a `&mut self` value versus a
//! registration of tasks against a shared `Arc<Self>`, and which one a block gets should not
//! change when one of its methods becomes `async`; nor can a macro tell which crate
//! re-exported it).
//!
//! - Methods take `&self` (or no receiver): the value is shared by concurrent calls.
//! - A synchronous `fn` has the shapes above, except that it cannot return `Dispatch`.
//! - An `async fn` takes, in any order: one arguments value (`ToolArgs`, possibly
//!   borrowing; or `RawJson<'_>` with `input_schema`), `Context` or `&Context`, and
//!   `&mut ToolReply` (mcp-tokio's owned result, for blocks before the returned value).
//!   It returns `()`, `&str`/`String`, a `ToolOutput`-derived value, mcp-tokio's
//!   `ToolReply` (recognised by that last path segment), or `Result` of one of these with
//!   `E: Display`. `&CallRequest` and `&mut ToolResult` are refused (a task outlives the
//!   request), as are two `Context`s and a `Context` in a synchronous method.
//! - `#[tool(inline = path)]` (async tools only): a
//!   `fn(&Self, &CallRequest<'_>, &mut ToolResult<'_, '_>) -> Dispatch` run inside the
//!   connection's loop before the task; `Dispatch::Done` answers the call there.
//! - `#[tool(task)]` or `#[tool(task = "optional" | "required" | "forbidden")]` (tokio
//!   form; bare `task` is `"optional"`): the tool's `TaskSupport` in the tasks extension
//!   (`ToolDef::task`, served with `Server::tasks`). A task-augmented `tools/call` from a
//!   client that negotiated the extension is answered with a `CreateTaskResult` at once and
//!   an async method runs detached as the task (its `Context::task` names it), its answer
//!   stored as the task's result; any other call is answered as without the key.
//!
//! An async tool's arguments are parsed twice: inline, before the task is spawned (a
//! refusal is answered at once with the core form's `isError` text, and no task is
//! spawned), and in the task, from the task's own copy of the arguments (mcp-tokio's
//! `Args`), which the parsed value may borrow (the task cannot borrow the request buffer,
//! which the connection reuses). Parsing is allocation-free and cheap next to spawning a
//! task.
//!
//! Generated, in a second inherent `impl` block: `TOOLS` and `find_tool` as above, and
//! `pub fn register(self: Arc<Self>, tools: &mcp_rs_tokio::Tools) where Self: Send + Sync +
//! 'static`, adding every tool with `ToolDef::from_static(&Self::TOOLS[i])` (nothing copied)
//! and a `Handler::sync` (synchronous methods), `Handler::mixed` (async methods whose
//! arguments are checked inline, or with `inline`) or `Handler::async_fn` (async methods with
//! `input_schema` and no `inline`). Options: `tokio = path::to::mcp_rs_tokio` (default
//! `::mcp_rs_tokio`) and `crate = path::to::mcp_rs_core` (default: the copy mcp-tokio re-exports).

mod attr;
mod json;
mod sig;
mod tokio;

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Ident, ImplItem, ImplItemFn, Item, ItemImpl, LitStr, Path};

use attr::{Options, ToolAttr};
use sig::{Param, Receiver, Ret, Shape, Value};

/// Which attribute is expanding: mcp-core's `#[tools]` or `#[mcp_rs_tokio::tools]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `#[tools]`: synchronous methods, `impl ToolSet`, `::mcp_rs_core` only.
    Core,
    /// `#[mcp_rs_tokio::tools]`: sync and `async fn` methods, registered into `mcp_rs_tokio::Tools`.
    Tokio,
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream, form: Form) -> TokenStream {
    match expand_inner(attr, item.clone(), form) {
        Ok(tokens) => tokens,
        Err(e) => {
            // Keep the item so that the errors are only ours (no "cannot find method").
            let mut out = e.to_compile_error();
            if let Ok(Item::Impl(mut imp)) = syn::parse2::<Item>(item.clone()) {
                strip_tool_attrs(&mut imp);
                imp.to_tokens(&mut out);
            } else {
                out.extend(item);
            }
            out
        }
    }
}

fn is_tool_attr(a: &syn::Attribute) -> bool {
    a.path().is_ident("tool")
}

fn strip_tool_attrs(imp: &mut ItemImpl) {
    for item in &mut imp.items {
        let attrs = match item {
            ImplItem::Fn(f) => &mut f.attrs,
            ImplItem::Const(c) => &mut c.attrs,
            ImplItem::Type(t) => &mut t.attrs,
            _ => continue,
        };
        attrs.retain(|a| !is_tool_attr(a));
    }
}

/// One tool as read from its method.
struct ToolDef {
    method: Ident,
    name: LitStr,
    attr: ToolAttr,
    description: Option<String>,
    shape: Shape,
}

fn expand_inner(attr: TokenStream, item: TokenStream, form: Form) -> syn::Result<TokenStream> {
    let options = Options::parse(attr, form)?;
    let item: Item = syn::parse2(item)?;
    let mut imp = match item {
        Item::Impl(imp) => imp,
        other => {
            return Err(syn::Error::new(
                first_token_span(&other),
                "#[tools] goes on an inherent impl block: `#[tools] impl MyTools { ... }`",
            ))
        }
    };
    if let Some((_, path, _)) = &imp.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "#[tools] goes on an inherent impl block (`impl MyTools { ... }`), not on a trait \
             impl: it generates the `ToolSet` impl itself",
        ));
    }

    let mut tools = Vec::<ToolDef>::new();
    let mut errors = Vec::<syn::Error>::new();
    for item in &imp.items {
        match item {
            ImplItem::Fn(f) => match tool_def(f, form) {
                Ok(Some(def)) => tools.push(def),
                Ok(None) => {}
                Err(e) => errors.push(e),
            },
            ImplItem::Const(c) => {
                if let Some(a) = c.attrs.iter().find(|a| is_tool_attr(a)) {
                    errors.push(syn::Error::new(a.span(), "#[tool] goes on methods"));
                }
            }
            ImplItem::Type(t) => {
                if let Some(a) = t.attrs.iter().find(|a| is_tool_attr(a)) {
                    errors.push(syn::Error::new(a.span(), "#[tool] goes on methods"));
                }
            }
            _ => {}
        }
    }

    let mut seen = HashMap::<String, Span>::new();
    for def in &tools {
        let name = def.name.value();
        if let Some(first) = seen.get(&name) {
            let mut e = syn::Error::new(
                def.name.span(),
                format!("duplicate tool name `{name}`: tool names must be unique"),
            );
            e.combine(syn::Error::new(*first, "first used here"));
            errors.push(e);
        } else {
            seen.insert(name, def.name.span());
        }
    }
    if let Some(e) = errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        return Err(e);
    }

    strip_tool_attrs(&mut imp);
    let generated = match form {
        Form::Core => generate(&options, &imp, &tools)?,
        Form::Tokio => tokio::generate(&options, &imp, &tools),
    };
    Ok(quote! {
        #imp
        #generated
    })
}

fn first_token_span(item: &Item) -> Span {
    item.to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}

/// Reads one method: `None` when it has no `#[tool]`.
fn tool_def(f: &ImplItemFn, form: Form) -> syn::Result<Option<ToolDef>> {
    let mut marks = f.attrs.iter().filter(|a| is_tool_attr(a));
    let Some(mark) = marks.next() else {
        return Ok(None);
    };
    if let Some(again) = marks.next() {
        return Err(syn::Error::new(
            again.span(),
            "more than one #[tool] on a method: put every key in one #[tool(...)]",
        ));
    }
    let attr = ToolAttr::parse(mark, form)?;
    let shape = sig::shape(&f.sig, form)?;
    if let Some(inline) = &attr.inline {
        if form == Form::Core {
            return Err(syn::Error::new_spanned(
                inline,
                "`inline` is for async tools of #[mcp_rs_tokio::tools]: a core tool answers \
                 inline already",
            ));
        }
        if !shape.is_async {
            return Err(syn::Error::new_spanned(
                inline,
                "`inline` goes on an `async fn` tool: a synchronous tool is answered inline \
                 already",
            ));
        }
    }
    let method = f.sig.ident.clone();
    let name = match &attr.name {
        Some(lit) => lit.clone(),
        None => {
            let text = method.to_string();
            let text = text.strip_prefix("r#").unwrap_or(&text).to_owned();
            if !attr::valid_name(&text) {
                return Err(syn::Error::new(
                    method.span(),
                    "this method name is not a valid tool name: set one with `name = \"...\"`",
                ));
            }
            LitStr::new(&text, method.span())
        }
    };
    let description = match &attr.description {
        Some(d) => Some(d.value()).filter(|d| !d.is_empty()),
        None => attr::doc_description(&f.attrs),
    };
    let takes_args = shape.params.iter().find_map(|p| match p {
        Param::Args(ty) => Some((ty, true)),
        Param::Raw(ty) => Some((ty, false)),
        _ => None,
    });
    match (takes_args, &attr.input_schema) {
        (Some((ty, true)), Some(_)) => {
            return Err(syn::Error::new_spanned(
                ty,
                "`input_schema` conflicts with the arguments type: its `ToolArgs::SCHEMA` is \
                 the input schema (take `RawJson<'_>` to parse the arguments yourself)",
            ))
        }
        (Some((ty, false)), None) => {
            return Err(syn::Error::new_spanned(
                ty,
                "a `RawJson` arguments parameter needs `input_schema = \"...\"` in #[tool]: \
                 the arguments reach the method unchecked",
            ))
        }
        _ => {}
    }
    if let (Some(schema), Ret::Plain(Value::Output(_)) | Ret::Fallible(Value::Output(_), _)) =
        (&attr.output_schema, &shape.ret)
    {
        return Err(syn::Error::new_spanned(
            schema,
            "`output_schema` conflicts with the return type: its `ToolOutput::SCHEMA` is the \
             output schema",
        ));
    }
    Ok(Some(ToolDef {
        method,
        name,
        attr,
        description,
        shape,
    }))
}

fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn opt_bool(b: Option<&syn::LitBool>) -> Option<TokenStream> {
    b.map(|b| quote!(::core::option::Option::Some(#b)))
}

/// The `Tool` expression of one definition.
fn tool_expr(k: &Path, def: &ToolDef) -> TokenStream {
    let a = &def.attr;
    let name = &def.name;
    let title = opt_str(a.title.as_ref().map(LitStr::value).as_deref());
    let description = opt_str(def.description.as_deref());
    let args_ty = def.shape.params.iter().find_map(|p| match p {
        Param::Args(ty) => Some(ty),
        _ => None,
    });
    let input_schema = match (args_ty, &a.input_schema) {
        (Some(ty), _) => {
            let ty_static = sig::with_lifetimes(ty, "'static");
            quote_spanned!(ty.span()=> <#ty_static as #k::typed::ToolArgs<'static>>::SCHEMA)
        }
        (None, Some(expr)) => quote!(#expr),
        (None, None) => quote!(#k::typed::__macro_support::NO_ARGS_SCHEMA),
    };
    let output = match &def.shape.ret {
        Ret::Plain(Value::Output(ty)) | Ret::Fallible(Value::Output(ty), _) => Some(ty),
        _ => None,
    };
    let output_schema = match (output, &a.output_schema) {
        (Some(ty), _) => {
            let ty_static = sig::with_lifetimes(ty, "'static");
            quote_spanned!(ty.span()=>
                ::core::option::Option::Some(<#ty_static as #k::typed::ToolOutput>::SCHEMA))
        }
        (None, Some(expr)) => quote!(::core::option::Option::Some(#expr)),
        (None, None) => quote!(::core::option::Option::None),
    };
    let hints = [&a.read_only, &a.destructive, &a.idempotent, &a.open_world];
    let annotations =
        if a.annotations.is_none() && a.title.is_none() && hints.iter().all(|h| h.is_none()) {
            quote!(::core::option::Option::None)
        } else {
            let (base, field) = match &a.annotations {
                Some(expr) => (
                    quote!(let base: #k::ToolAnnotations<'static> = #expr;),
                    Some(()),
                ),
                None => (quote!(), None),
            };
            let or_base = |value: Option<TokenStream>, f: &str| -> TokenStream {
                let f = Ident::new(f, Span::call_site());
                match (value, field) {
                    (Some(v), _) => v,
                    (None, Some(())) => quote!(base.#f),
                    (None, None) => quote!(::core::option::Option::None),
                }
            };
            let title = or_base(
                a.title
                    .as_ref()
                    .map(|t| quote!(::core::option::Option::Some(#t))),
                "title",
            );
            let read_only = or_base(opt_bool(a.read_only.as_ref()), "read_only_hint");
            let destructive = or_base(opt_bool(a.destructive.as_ref()), "destructive_hint");
            let idempotent = or_base(opt_bool(a.idempotent.as_ref()), "idempotent_hint");
            let open_world = or_base(opt_bool(a.open_world.as_ref()), "open_world_hint");
            quote!(::core::option::Option::Some({
                #base
                #k::ToolAnnotations {
                    title: #title,
                    read_only_hint: #read_only,
                    destructive_hint: #destructive,
                    idempotent_hint: #idempotent,
                    open_world_hint: #open_world,
                }
            }))
        };
    let icons = match &a.icons {
        Some(expr) => quote!(#expr),
        None => quote!(&[]),
    };
    let meta = opt_str(a.meta.as_ref().map(LitStr::value).as_deref());
    let requires = match &a.requires {
        Some(expr) => quote!(#expr),
        None => quote!(#k::ClientCaps::NONE),
    };
    quote! {
        #k::Tool {
            name: #name,
            title: #title,
            description: #description,
            input_schema: #input_schema,
            output_schema: #output_schema,
            annotations: #annotations,
            icons: #icons,
            meta: #meta,
            requires: #requires,
        }
    }
}

/// The `match` arm body of one synchronous tool (in `call_tool`, or in a `Handler::sync`
/// closure of the tokio form, where `recv` is the shared `this`): evaluates to a `Dispatch`.
fn call_body(k: &Path, def: &ToolDef, recv: &TokenStream) -> TokenStream {
    let support = quote!(#k::typed::__macro_support);
    let method = &def.method;
    let name = &def.name;
    let args = def.shape.params.iter().map(|p| match p {
        Param::Args(_) => quote!(args),
        Param::Raw(_) => quote!(request.args()),
        Param::Request => quote!(request),
        Param::Result => quote!(&mut *result),
        // Refused in synchronous methods by `sig::shape`.
        Param::Context(_) | Param::Output => quote!(),
    });
    let call = match def.shape.receiver {
        Receiver::Method => quote!(#recv.#method(#(#args),*)),
        Receiver::Associated => quote!(Self::#method(#(#args),*)),
    };
    let done = quote!(#k::Dispatch::Done);
    // `value` and the call get the return type's span: a missing trait is reported there.
    let write = |value: &Value| -> TokenStream {
        match value {
            Value::Unit => quote!({}),
            Value::Text(ty) => quote_spanned!(ty.span()=> {
                result.text(::core::convert::AsRef::<str>::as_ref(&value));
            }),
            Value::Output(ty) => quote_spanned!(ty.span()=> result.structured(&value)),
            Value::Owned(ty) => quote_spanned!(ty.span()=> value.write(&mut *result)),
        }
    };
    let run = match &def.shape.ret {
        Ret::Dispatch => call,
        Ret::Plain(Value::Unit) => quote!({
            #call;
            #done
        }),
        Ret::Plain(value) => {
            let write = write(value);
            quote!({
                let value = #call;
                #write;
                #done
            })
        }
        Ret::Fallible(value, ret_ty) => {
            let ok = match value {
                Value::Unit => quote!(::core::result::Result::Ok(()) => {}),
                _ => {
                    let write = write(value);
                    quote!(::core::result::Result::Ok(value) => #write,)
                }
            };
            let failed = quote_spanned!(ret_ty.span()=> #support::failed(result, &error));
            quote!({
                match #call {
                    #ok
                    ::core::result::Result::Err(error) => #failed,
                }
                #done
            })
        }
    };
    let args_ty = def.shape.params.iter().find_map(|p| match p {
        Param::Args(ty) => Some(ty),
        _ => None,
    });
    let checked = def.shape.params.iter().any(|p| matches!(p, Param::Raw(_)))
        || def.attr.input_schema.is_some();
    let invalid = quote!({
        #support::invalid_args(result, #name, &error);
        #done
    });
    match args_ty {
        Some(ty) => {
            let ty_any = sig::with_lifetimes(ty, "'_");
            let parse = quote_spanned!(ty.span()=>
                <#ty_any as #k::typed::ToolArgs<'_>>::parse_into(request.args(), &mut error));
            quote!({
                let mut error = #k::typed::ArgError::blank();
                match #parse {
                    ::core::result::Result::Ok(args) => #run,
                    ::core::result::Result::Err(_) => #invalid,
                }
            })
        }
        None if checked => run,
        None => quote!({
            let mut error = #k::typed::ArgError::blank();
            match #support::no_args_into(request.args(), &mut error) {
                ::core::result::Result::Ok(()) => #run,
                ::core::result::Result::Err(_) => #invalid,
            }
        }),
    }
}

fn generate(options: &Options, imp: &ItemImpl, tools: &[ToolDef]) -> syn::Result<TokenStream> {
    let k = &options.krate;
    let (impl_generics, _, where_clause) = imp.generics.split_for_impl();
    let self_ty = &imp.self_ty;
    let defs = tools.iter().map(|d| tool_expr(k, d));
    let arms = tools.iter().enumerate().map(|(i, d)| {
        let body = call_body(k, d, &quote!(self));
        quote!(#i => #body,)
    });
    let tools_doc = tools_doc("#[tools]", tools);
    let dispatch = if tools.is_empty() {
        quote!({
            let _ = (index, request);
            #k::typed::__macro_support::unknown_tool(result);
            #k::Dispatch::Done
        })
    } else {
        quote!(match index {
            #(#arms)*
            _ => {
                #k::typed::__macro_support::unknown_tool(result);
                #k::Dispatch::Done
            }
        })
    };
    let tool_set = if options.no_tool_set {
        quote!()
    } else {
        quote! {
            #[automatically_derived]
            impl #impl_generics #k::ToolSet for #self_ty #where_clause {
                fn len(&self) -> usize {
                    Self::TOOLS.len()
                }
                fn get(&self, index: usize) -> ::core::option::Option<#k::Tool<'_>> {
                    Self::TOOLS.get(index).copied()
                }
                fn find(&self, name: #k::wire::json::JsonStr<'_>) -> ::core::option::Option<usize> {
                    Self::find_tool(name)
                }
                fn call(
                    &mut self,
                    request: &#k::CallRequest<'_>,
                    result: &mut #k::ToolResult<'_, '_>,
                ) -> #k::Dispatch {
                    self.call_tool(request.tool_index(), request, result)
                }
            }
        }
    };
    Ok(quote! {
        impl #impl_generics #self_ty #where_clause {
            #[doc = #tools_doc]
            pub const TOOLS: &'static [#k::Tool<'static>] = &[#(#defs),*];

            /// Runs tool `index` of [`Self::TOOLS`] (generated by `#[tools]`): parses its
            /// arguments (invalid ones get an `isError` result naming the argument, and the
            /// method is not called), calls the method and writes what it returned. An index
            /// past the table gets an `isError` result.
            #[allow(unused_variables, clippy::match_single_binding)]
            pub fn call_tool(
                &mut self,
                index: usize,
                request: &#k::CallRequest<'_>,
                result: &mut #k::ToolResult<'_, '_>,
            ) -> #k::Dispatch {
                #dispatch
            }

            /// The index in [`Self::TOOLS`] of the tool called `name` (generated by
            /// `#[tools]`).
            pub fn find_tool(name: #k::wire::json::JsonStr<'_>) -> ::core::option::Option<usize> {
                Self::TOOLS.iter().position(|tool| name.eq_str(tool.name))
            }
        }
        #tool_set
    })
}

/// The doc comment of a generated `TOOLS` table: `macro_name`'s tools, listed by name.
fn tools_doc(macro_name: &str, tools: &[ToolDef]) -> String {
    let list: String = tools
        .iter()
        .map(|d| format!("`{}`", d.name.value()))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "The tool definitions generated by `{macro_name}`, in declaration order ({}: {list}).",
        tools.len()
    )
}

//! What a tool method's signature asks for: its parameters and what its return value means.

use super::Form;
use proc_macro2::{Group, Ident, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, GenericParam, Lifetime, PathArguments, ReturnType, Signature, Type,
};

/// How the method is called.
#[derive(Clone, Copy)]
pub(super) enum Receiver {
    /// `&self` / `&mut self`: `self.method(...)`.
    Method,
    /// No receiver: `Self::method(...)`.
    Associated,
}

/// One parameter after the receiver.
pub(super) enum Param {
    /// mcp-tokio's `Context` (async tools): by value, or `&Context` when `true`.
    Context(bool),
    /// `&mut ToolReply` (async tools): mcp-tokio's owned result, built in place.
    Output,
    /// A type implementing `ToolArgs`: parsed from the arguments.
    Args(Box<Type>),
    /// `RawJson<'_>`: the arguments object as sent (the method checks it).
    Raw(Box<Type>),
    /// `&CallRequest<'_>`.
    Request,
    /// `&mut ToolResult<'_, '_>`.
    Result,
}

/// What a successful return value becomes.
pub(super) enum Value {
    /// `()`: the method wrote the result (or left it empty).
    Unit,
    /// `&str` / `String`: one text block.
    Text(Type),
    /// A type implementing `ToolOutput`: the structured result; its `SCHEMA` is the
    /// `outputSchema`.
    Output(Type),
    /// mcp-tokio's owned `ToolReply` (`#[mcp_rs_tokio::tools]` only): the whole result.
    Owned(Type),
}

/// What the method returns.
pub(super) enum Ret {
    /// A value.
    Plain(Value),
    /// `Result<value, E>` with `E: Display`: `Err` becomes an `isError` text block.
    Fallible(Value, Box<Type>),
    /// `Dispatch`: returned as is (`Dispatch::Defer` hands the call out).
    Dispatch,
}

pub(super) struct Shape {
    /// `async fn` (`#[mcp_rs_tokio::tools]` only).
    pub is_async: bool,
    pub receiver: Receiver,
    pub params: Vec<Param>,
    pub ret: Ret,
}

fn err<T>(span: Span, message: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new(span, message))
}

/// An error underlining all of `tokens` (a `Span` on stable only covers the first token).
fn err_at<T>(tokens: impl ToTokens, message: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new_spanned(tokens, message))
}

const PARAMS_HELP: &str = "a tool method takes, after `&self` or `&mut self`: at most one \
    arguments value (a type implementing `ToolArgs`, or `RawJson<'_>` with `input_schema`), \
    `&CallRequest<'_>` and `&mut ToolResult<'_, '_>`";

/// The type without groups and parentheses.
fn bare(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => bare(&g.elem),
        Type::Paren(p) => bare(&p.elem),
        _ => ty,
    }
}

/// The last path segment's name, for a plain path type.
fn last_ident(ty: &Type) -> Option<&Ident> {
    match bare(ty) {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| &s.ident),
        _ => None,
    }
}

fn is_unit(ty: &Type) -> bool {
    matches!(bare(ty), Type::Tuple(t) if t.elems.is_empty())
}

fn is_text(ty: &Type) -> bool {
    match bare(ty) {
        Type::Reference(r) => {
            r.mutability.is_none() && last_ident(&r.elem).is_some_and(|i| i == "str")
        }
        _ => last_ident(ty).is_some_and(|i| i == "String"),
    }
}

/// `Result<T, E>` (or an alias `Result<T>`, whose error type is only known to the compiler):
/// `T` and the whole type.
fn result_ok(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = bare(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    if p.qself.is_some() || last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(t)) => Some(t),
        _ => None,
    }
}

fn value(ty: &Type, form: Form) -> syn::Result<Value> {
    if is_unit(ty) {
        return Ok(Value::Unit);
    }
    if is_text(ty) {
        return Ok(Value::Text(ty.clone()));
    }
    if form == Form::Tokio && last_ident(ty).is_some_and(|i| i == "ToolReply") {
        return Ok(Value::Owned(ty.clone()));
    }
    match bare(ty) {
        Type::ImplTrait(_) => err_at(
            ty,
            "a tool cannot return `impl Trait`: return a named type implementing `ToolOutput` \
             (its SCHEMA becomes the tool's outputSchema)",
        ),
        Type::Path(_) if last_ident(ty).is_some_and(|i| i == "Dispatch") => {
            err_at(ty, "`Dispatch` is returned as is, not inside a `Result`")
        }
        Type::Path(_) => Ok(Value::Output(ty.clone())),
        _ => err_at(
            ty,
            match form {
                Form::Core => {
                    "unsupported return type: a tool returns `()`, a type implementing \
                     `ToolOutput`, `&str`/`String` (a text block), `Result` of one of these \
                     with an error type implementing `Display`, or `Dispatch`"
                }
                Form::Tokio => {
                    "unsupported return type: a tool returns `()`, a type implementing \
                     `ToolOutput`, `&str`/`String` (a text block), mcp-tokio's `ToolReply`, \
                     or `Result` of one of these with an error type implementing `Display`"
                }
            },
        ),
    }
}

const ASYNC_PARAMS_HELP: &str = "an async tool method takes, after `&self`: at most one \
    arguments value (a type implementing `ToolArgs`, or `RawJson<'_>` with `input_schema`), \
    `Context` (or `&Context`) and `&mut ToolReply`";

/// Reads a tool method's signature (`form`: which attribute is reading it).
pub(super) fn shape(sig: &Signature, form: Form) -> syn::Result<Shape> {
    let is_async = sig.asyncness.is_some();
    if let (Some(a), Form::Core) = (&sig.asyncness, form) {
        return err(
            a.span(),
            "async tools need `#[mcp_rs_tokio::tools]` (the same syntax, registering the tools \
             into mcp-tokio's `Tools`, where they run as tasks with a `Context`): the core \
             runs tools synchronously. Or return `Dispatch::Defer` and complete the call later",
        );
    }
    if let Some(u) = &sig.unsafety {
        return err(u.span(), "a tool method cannot be `unsafe`");
    }
    for param in &sig.generics.params {
        if !matches!(param, GenericParam::Lifetime(_)) {
            return err(
                param.span(),
                "generic tool methods are not supported: each tool needs one concrete \
                 arguments type and output type for its schemas",
            );
        }
    }
    let help = if is_async {
        ASYNC_PARAMS_HELP
    } else {
        PARAMS_HELP
    };
    if let Some(v) = &sig.variadic {
        return err(v.span(), help);
    }
    let mut inputs = sig.inputs.iter().peekable();
    let receiver = match inputs.peek() {
        Some(FnArg::Receiver(r)) => {
            let by_ref = r.reference.is_some()
                || matches!(bare(&r.ty), Type::Reference(t) if last_ident(&t.elem).is_some_and(|i| i == "Self"));
            if !by_ref {
                return err_at(
                    r,
                    match form {
                        Form::Core => {
                            "a tool method takes `&self` or `&mut self` (the tool set is \
                             borrowed, not consumed)"
                        }
                        Form::Tokio => {
                            "a tool method takes `&self` (the tool set is shared as \
                             `Arc<Self>`, not consumed)"
                        }
                    },
                );
            }
            let by_mut = r.mutability.is_some()
                || matches!(bare(&r.ty), Type::Reference(t) if t.mutability.is_some());
            if form == Form::Tokio && by_mut {
                return err_at(
                    r,
                    "in #[mcp_rs_tokio::tools] the tool set is shared (`Arc<Self>`) by concurrent \
                     calls: take `&self`, and keep mutable state behind a `Mutex` or in atomics",
                );
            }
            inputs.next();
            Receiver::Method
        }
        _ => Receiver::Associated,
    };
    let mut params = Vec::new();
    let mut args_at = None::<&Type>;
    let mut request_at = None::<&Type>;
    let mut result_at = None::<&Type>;
    let mut context_at = None::<&Type>;
    let mut output_at = None::<&Type>;
    let no_context = |ty: &Type| -> syn::Result<Param> {
        match form {
            Form::Core => err_at(
                ty,
                "`Context` is mcp-tokio's: an async tool with a `Context` needs \
                 `#[mcp_rs_tokio::tools]` and an `async fn`",
            ),
            Form::Tokio => err_at(
                ty,
                "`Context` is for async tools: make the method an `async fn` (a synchronous \
                 tool answers at once, inside the connection's loop)",
            ),
        }
    };
    for input in inputs {
        let FnArg::Typed(pt) = input else {
            return err(input.span(), help);
        };
        let ty = &*pt.ty;
        let param = match bare(ty) {
            Type::Reference(r) => match last_ident(&r.elem) {
                Some(i) if i == "CallRequest" => {
                    if is_async {
                        return err_at(
                            ty,
                            "an async tool cannot borrow the request: it runs as a task \
                             after the request was handled. Take an arguments type and \
                             `Context` (progress, logging, cancellation, client capabilities, \
                             requests to the client); or answer what can be answered at once \
                             with `#[tool(inline = ...)]`",
                        );
                    }
                    if r.mutability.is_some() {
                        return err_at(ty, "take the request as `&CallRequest<'_>` (not `&mut`)");
                    }
                    Param::Request
                }
                Some(i) if i == "ToolResult" => {
                    if is_async {
                        return err_at(
                            ty,
                            "an async tool cannot write into the core's `ToolResult`: it runs \
                             as a task. Return the result, or add blocks to a `&mut \
                             ToolReply` parameter",
                        );
                    }
                    if r.mutability.is_none() {
                        return err_at(ty, "take the result as `&mut ToolResult<'_, '_>`");
                    }
                    Param::Result
                }
                Some(i) if i == "Context" => {
                    if !is_async || form == Form::Core {
                        no_context(ty)?
                    } else if r.mutability.is_some() {
                        return err_at(ty, "take the context as `Context` or `&Context`");
                    } else {
                        Param::Context(true)
                    }
                }
                Some(i) if i == "ToolReply" && form == Form::Tokio => {
                    if !is_async {
                        return err_at(
                            ty,
                            "a synchronous tool writes into `&mut ToolResult<'_, '_>` (or \
                             returns a `ToolReply`)",
                        );
                    }
                    if r.mutability.is_none() {
                        return err_at(ty, "take the output as `&mut ToolReply`");
                    }
                    Param::Output
                }
                _ => {
                    return err_at(
                        ty,
                        format_args!(
                            "unsupported parameter type: the arguments are taken by value; \
                             {help}"
                        ),
                    )
                }
            },
            Type::Path(_) => match last_ident(ty) {
                Some(i) if i == "CallRequest" => {
                    return err_at(ty, "take the request by reference: `&CallRequest<'_>`")
                }
                Some(i) if i == "ToolResult" => {
                    return err_at(
                        ty,
                        "take the result by reference: `&mut ToolResult<'_, '_>`",
                    )
                }
                Some(i) if i == "Context" => {
                    if !is_async || form == Form::Core {
                        no_context(ty)?
                    } else {
                        Param::Context(false)
                    }
                }
                Some(i) if i == "RawJson" => Param::Raw(Box::new(ty.clone())),
                _ => Param::Args(Box::new(ty.clone())),
            },
            Type::ImplTrait(_) => {
                return err_at(
                    ty,
                    "`impl Trait` arguments are not supported: name a type implementing \
                     `ToolArgs` (its SCHEMA becomes the tool's inputSchema)",
                )
            }
            _ => return err_at(ty, format_args!("unsupported parameter type; {help}")),
        };
        let seen = match param {
            Param::Args(_) | Param::Raw(_) => &mut args_at,
            Param::Request => &mut request_at,
            Param::Result => &mut result_at,
            Param::Context(_) => &mut context_at,
            Param::Output => &mut output_at,
        };
        if let Some(first) = *seen {
            let what = match param {
                Param::Args(_) | Param::Raw(_) => {
                    "more than one arguments parameter: a tool gets one arguments object; \
                     put every argument in one type implementing `ToolArgs`"
                }
                Param::Request => "the request is taken twice",
                Param::Result => "the result is taken twice",
                Param::Context(_) => "the context is taken twice: one `Context` per call",
                Param::Output => "the output is taken twice",
            };
            let mut e = syn::Error::new_spanned(ty, what);
            e.combine(syn::Error::new_spanned(first, "first taken here"));
            return Err(e);
        }
        *seen = Some(ty);
        params.push(param);
    }
    let ret = match &sig.output {
        ReturnType::Default => Ret::Plain(Value::Unit),
        ReturnType::Type(_, ty) => {
            if last_ident(ty).is_some_and(|i| i == "Dispatch") {
                if form == Form::Tokio {
                    return err_at(
                        ty,
                        if is_async {
                            "an async tool returns its result: `Dispatch` is for synchronous \
                             tools of the core (to answer some calls at once, before the \
                             task, use `#[tool(inline = ...)]`)"
                        } else {
                            "in #[mcp_rs_tokio::tools] a synchronous tool answers at once: \
                             `Dispatch::Defer` would hand the call to nothing. Make it an \
                             `async fn`, with `#[tool(inline = ...)]` for what can be \
                             answered at once"
                        },
                    );
                }
                Ret::Dispatch
            } else if let Some(ok) = result_ok(ty) {
                Ret::Fallible(value(ok, form)?, ty.clone())
            } else {
                Ret::Plain(value(ty, form)?)
            }
        }
    };
    if let (Some(at), Ret::Plain(Value::Owned(owned)) | Ret::Fallible(Value::Owned(owned), _)) =
        (output_at, &ret)
    {
        let mut e = syn::Error::new_spanned(
            at,
            "this tool returns a `ToolReply`: it does not also take `&mut ToolReply` (return \
             `()` or a value to build the result in place)",
        );
        e.combine(syn::Error::new_spanned(owned, "returned here"));
        return Err(e);
    }
    Ok(Shape {
        is_async,
        receiver,
        params,
        ret,
    })
}

/// `ty` with every lifetime but `'static` replaced by `to` (`"'static"` to name a schema
/// constant in the tool table, `"'_"` in the call): method lifetimes cannot be named outside
/// the method.
pub(super) fn with_lifetimes(ty: &Type, to: &str) -> TokenStream {
    fn walk(tokens: TokenStream, to: &str) -> TokenStream {
        let mut out = TokenStream::new();
        let mut tokens = tokens.into_iter().peekable();
        while let Some(tt) = tokens.next() {
            match tt {
                TokenTree::Punct(p) if p.as_char() == '\'' => match tokens.next() {
                    Some(TokenTree::Ident(i)) if i != "static" => {
                        Lifetime::new(to, i.span()).to_tokens(&mut out);
                    }
                    Some(next) => {
                        out.extend([TokenTree::Punct(p), next]);
                    }
                    None => out.extend([TokenTree::Punct(p)]),
                },
                TokenTree::Group(g) => {
                    let mut ng = Group::new(g.delimiter(), walk(g.stream(), to));
                    ng.set_span(g.span());
                    out.extend([TokenTree::Group(ng)]);
                }
                other => out.extend([other]),
            }
        }
        out
    }
    walk(ty.to_token_stream(), to)
}

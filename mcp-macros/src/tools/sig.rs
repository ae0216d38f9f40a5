//! What a tool method's signature asks for: its parameters and what its return value means.

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

fn value(ty: &Type) -> syn::Result<Value> {
    if is_unit(ty) {
        return Ok(Value::Unit);
    }
    if is_text(ty) {
        return Ok(Value::Text(ty.clone()));
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
            "unsupported return type: a tool returns `()`, a type implementing `ToolOutput`, \
             `&str`/`String` (a text block), `Result` of one of these with an error type \
             implementing `Display`, or `Dispatch`",
        ),
    }
}

/// Reads a tool method's signature.
pub(super) fn shape(sig: &Signature) -> syn::Result<Shape> {
    if let Some(a) = &sig.asyncness {
        return err(
            a.span(),
            "async tools are not supported by #[tools]: the core runs tools synchronously. \
             Serve async tools with mcp-tokio's `Tools` registry, or return \
             `Dispatch::Defer` and complete the call later",
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
    if let Some(v) = &sig.variadic {
        return err(v.span(), PARAMS_HELP);
    }
    let mut inputs = sig.inputs.iter().peekable();
    let receiver = match inputs.peek() {
        Some(FnArg::Receiver(r)) => {
            let by_ref = r.reference.is_some()
                || matches!(bare(&r.ty), Type::Reference(t) if last_ident(&t.elem).is_some_and(|i| i == "Self"));
            if !by_ref {
                return err_at(
                    r,
                    "a tool method takes `&self` or `&mut self` (the tool set is borrowed, \
                     not consumed)",
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
    for input in inputs {
        let FnArg::Typed(pt) = input else {
            return err(input.span(), PARAMS_HELP);
        };
        let ty = &*pt.ty;
        let param = match bare(ty) {
            Type::Reference(r) => match last_ident(&r.elem) {
                Some(i) if i == "CallRequest" => {
                    if r.mutability.is_some() {
                        return err_at(ty, "take the request as `&CallRequest<'_>` (not `&mut`)");
                    }
                    Param::Request
                }
                Some(i) if i == "ToolResult" => {
                    if r.mutability.is_none() {
                        return err_at(ty, "take the result as `&mut ToolResult<'_, '_>`");
                    }
                    Param::Result
                }
                _ => {
                    return err_at(
                        ty,
                        format_args!(
                            "unsupported parameter type: the arguments are taken by value; \
                             {PARAMS_HELP}"
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
            _ => {
                return err_at(
                    ty,
                    format_args!("unsupported parameter type; {PARAMS_HELP}"),
                )
            }
        };
        let seen = match param {
            Param::Args(_) | Param::Raw(_) => &mut args_at,
            Param::Request => &mut request_at,
            Param::Result => &mut result_at,
        };
        if let Some(first) = *seen {
            let what = match param {
                Param::Args(_) | Param::Raw(_) => {
                    "more than one arguments parameter: a tool gets one arguments object; \
                     put every argument in one type implementing `ToolArgs`"
                }
                Param::Request => "the request is taken twice",
                Param::Result => "the result is taken twice",
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
                Ret::Dispatch
            } else if let Some(ok) = result_ok(ty) {
                Ret::Fallible(value(ok)?, ty.clone())
            } else {
                Ret::Plain(value(ty)?)
            }
        }
    };
    Ok(Shape {
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

//! The `#[tools(...)]` options and the `#[tool(...)]` keys of one method.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitBool, LitStr, Meta, Path, Token};

use super::{json, Form};

/// The keys `#[tool(...)]` accepts, for the error about an unknown one.
const KEYS: &str = "name, title, description, read_only, destructive, idempotent, open_world, \
                    annotations, icons, meta, requires, input_schema, output_schema";

/// Options of `#[tools(...)]` / `#[mcp_rs_tokio::tools(...)]`.
pub(super) struct Options {
    /// `no_tool_set` (core form): generate the table and `call_tool`, not `impl ToolSet`.
    pub no_tool_set: bool,
    /// `crate = path`: where mcp-core is (default `::mcp_rs_core`; in the tokio form, the
    /// copy re-exported by mcp-tokio).
    pub krate: Path,
    /// `tokio = path` (tokio form): where mcp-tokio is (default `::mcp_rs_tokio`).
    pub tokio: Path,
}

impl Options {
    pub(super) fn parse(attr: proc_macro2::TokenStream, form: Form) -> syn::Result<Options> {
        let mut no_tool_set = None::<Span>;
        let mut krate = None::<Path>;
        let mut tokio = None::<Path>;
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("no_tool_set") && form == Form::Core {
                if no_tool_set.is_some() {
                    return Err(meta.error("duplicate `no_tool_set` option"));
                }
                no_tool_set = Some(meta.path.span());
                Ok(())
            } else if meta.path.is_ident("crate") {
                if krate.is_some() {
                    return Err(meta.error("duplicate `crate` option"));
                }
                krate = Some(meta.value()?.call(Path::parse_mod_style)?);
                Ok(())
            } else if meta.path.is_ident("tokio") && form == Form::Tokio {
                if tokio.is_some() {
                    return Err(meta.error("duplicate `tokio` option"));
                }
                tokio = Some(meta.value()?.call(Path::parse_mod_style)?);
                Ok(())
            } else {
                Err(meta.error(match form {
                    Form::Core => {
                        "unknown #[tools] option; expected `no_tool_set` or \
                         `crate = path::to::mcp_rs_core`"
                    }
                    Form::Tokio => {
                        "unknown #[mcp_rs_tokio::tools] option; expected \
                         `tokio = path::to::mcp_rs_tokio` or `crate = path::to::mcp_rs_core`"
                    }
                }))
            }
        });
        syn::parse::Parser::parse2(parser, attr)?;
        let tokio: Path = tokio.unwrap_or_else(|| syn::parse_quote!(::mcp_rs_tokio));
        let krate = krate.unwrap_or_else(|| match form {
            Form::Core => syn::parse_quote!(::mcp_rs_core),
            Form::Tokio => syn::parse_quote!(#tokio::__macro_support::mcp_rs_core),
        });
        Ok(Options {
            no_tool_set: no_tool_set.is_some(),
            krate,
            tokio,
        })
    }
}

/// The keys of one `#[tool(...)]`.
#[derive(Default)]
pub(super) struct ToolAttr {
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub read_only: Option<LitBool>,
    pub destructive: Option<LitBool>,
    pub idempotent: Option<LitBool>,
    pub open_world: Option<LitBool>,
    pub annotations: Option<Expr>,
    pub icons: Option<Expr>,
    pub meta: Option<LitStr>,
    pub requires: Option<Expr>,
    pub input_schema: Option<Expr>,
    pub output_schema: Option<Expr>,
    /// Tokio form, async tools: `fn(&Self, &CallRequest, &mut ToolResult) -> Dispatch`
    /// run before the task (`Dispatch::Done`: answered; `Defer`: the task runs).
    pub inline: Option<Expr>,
    /// Tokio form: `task` (optional) or `task = "optional" | "required" | "forbidden"`, the
    /// tool's `TaskSupport` (tasks extension).
    pub task: Option<Ident>,
}

/// `task` or `task = "optional" | "required" | "forbidden"`: the `TaskSupport` variant.
fn task_support(input: ParseStream<'_>, span: Span) -> syn::Result<Ident> {
    if !input.peek(Token![=]) {
        return Ok(Ident::new("Optional", span));
    }
    input.parse::<Token![=]>()?;
    let lit: LitStr = input.parse()?;
    let variant = match lit.value().as_str() {
        "optional" => "Optional",
        "required" => "Required",
        "forbidden" => "Forbidden",
        _ => {
            return Err(syn::Error::new(
                lit.span(),
                "expected `task`, `task = \"optional\"`, `task = \"required\"` or \
                 `task = \"forbidden\"`",
            ))
        }
    };
    Ok(Ident::new(variant, lit.span()))
}

fn set<T>(slot: &mut Option<T>, value: T, key: &str, span: Span) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(span, format!("duplicate `{key}` key")));
    }
    *slot = Some(value);
    Ok(())
}

/// A flag: `read_only` (true) or `read_only = true/false`.
fn flag(input: ParseStream<'_>, span: Span) -> syn::Result<LitBool> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        input.parse::<LitBool>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `true` or `false` (or the bare flag for true)",
            )
        })
    } else {
        Ok(LitBool::new(true, span))
    }
}

impl ToolAttr {
    /// Parses `#[tool]` or `#[tool(key = value, flag, ...)]`.
    pub(super) fn parse(attr: &Attribute, form: Form) -> syn::Result<ToolAttr> {
        let more = match form {
            Form::Core => "",
            Form::Tokio => ", inline, task",
        };
        let mut out = ToolAttr::default();
        match &attr.meta {
            Meta::Path(_) => return Ok(out),
            Meta::NameValue(nv) => {
                return Err(syn::Error::new_spanned(
                    nv,
                    "expected `#[tool]` or `#[tool(key = value, ...)]`",
                ))
            }
            Meta::List(_) => {}
        }
        attr.parse_nested_meta(|meta| {
            let span = meta.path.span();
            let key = match meta.path.get_ident() {
                Some(ident) => ident.to_string(),
                None => {
                    return Err(meta.error(format!(
                        "unknown #[tool] key; expected one of: {KEYS}{more}"
                    )))
                }
            };
            match key.as_str() {
                "name" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    check_name(&lit)?;
                    set(&mut out.name, lit, &key, span)
                }
                "title" => set(&mut out.title, meta.value()?.parse()?, &key, span),
                "description" => set(&mut out.description, meta.value()?.parse()?, &key, span),
                "read_only" => set(&mut out.read_only, flag(meta.input, span)?, &key, span),
                "destructive" => set(&mut out.destructive, flag(meta.input, span)?, &key, span),
                "idempotent" => set(&mut out.idempotent, flag(meta.input, span)?, &key, span),
                "open_world" => set(&mut out.open_world, flag(meta.input, span)?, &key, span),
                "annotations" => set(&mut out.annotations, meta.value()?.parse()?, &key, span),
                "icons" => set(&mut out.icons, meta.value()?.parse()?, &key, span),
                "meta" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    check_json(&lit, "meta", true)?;
                    set(&mut out.meta, lit, &key, span)
                }
                "requires" => set(&mut out.requires, meta.value()?.parse()?, &key, span),
                "input_schema" => {
                    let expr: Expr = meta.value()?.parse()?;
                    check_schema_literal(&expr, "input_schema", true)?;
                    set(&mut out.input_schema, expr, &key, span)
                }
                "output_schema" => {
                    let expr: Expr = meta.value()?.parse()?;
                    check_schema_literal(&expr, "output_schema", false)?;
                    set(&mut out.output_schema, expr, &key, span)
                }
                "inline" => set(&mut out.inline, meta.value()?.parse()?, &key, span),
                "task" if form == Form::Tokio => {
                    set(&mut out.task, task_support(meta.input, span)?, &key, span)
                }
                _ => Err(meta.error(format_args!(
                    "unknown #[tool] key `{key}`; expected one of: {KEYS}{more}"
                ))),
            }
        })?;
        Ok(out)
    }
}

/// Whether `name` is 1-64 characters of `[A-Za-z0-9_.-/]` (what `Tool::validate` checks).
pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
}

fn check_name(lit: &LitStr) -> syn::Result<()> {
    if valid_name(&lit.value()) {
        Ok(())
    } else {
        Err(syn::Error::new(
            lit.span(),
            "a tool name is 1-64 characters of A-Z, a-z, 0-9, `_`, `-`, `.` and `/`",
        ))
    }
}

fn check_json(lit: &LitStr, key: &str, object: bool) -> syn::Result<()> {
    match json::check(&lit.value(), object) {
        Ok(()) => Ok(()),
        Err(why) => Err(syn::Error::new(
            lit.span(),
            format!("`{key}` is raw JSON and must be {why}"),
        )),
    }
}

/// A schema given as a string literal is checked here; any other expression (a `const`)
/// is checked when the tool is listed.
fn check_schema_literal(expr: &Expr, key: &str, object: bool) -> syn::Result<()> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => check_json(lit, key, object),
        _ => Ok(()),
    }
}

/// The method's doc comment as a description: lines trimmed, lines of a paragraph joined
/// with spaces, paragraphs separated by a blank line, list items (`- `, `* `, `+ `, `1. `)
/// kept on lines of their own. `None` without a (literal) doc comment.
pub(super) fn doc_description(attrs: &[Attribute]) -> Option<String> {
    let mut out = String::new();
    let mut blank = false;
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        let Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) = &nv.value
        else {
            continue;
        };
        for line in lit.value().split('\n') {
            let line = line.trim();
            if line.is_empty() {
                blank = !out.is_empty();
                continue;
            }
            if !out.is_empty() {
                out.push_str(if blank {
                    "\n\n"
                } else if list_item(line) {
                    "\n"
                } else {
                    " "
                });
            }
            blank = false;
            out.push_str(line);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn list_item(line: &str) -> bool {
    if ["- ", "* ", "+ "].iter().any(|m| line.starts_with(m)) {
        return true;
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(". ")
}

//! Pieces shared by the prompt and resource macros: `key = value` attribute lists, doc
//! comments, renaming rules, and the shape of handler methods.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Attribute, Error, Expr, ExprLit, FnArg, GenericArgument, Ident, Lit, LitStr, Meta,
    PathArguments, Result, ReturnType, Token, Type,
};

/// A parsed `key = value, flag` list, checked against the allowed keys.
pub(crate) struct Keys {
    pub(crate) values: Vec<(Ident, Expr)>,
    pub(crate) flags: Vec<Ident>,
}

impl Keys {
    /// Parses the tokens of an attribute's parentheses.
    pub(crate) fn parse(tokens: TokenStream, values: &[&str], flags: &[&str]) -> Result<Self> {
        let metas =
            syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, tokens)?;
        let mut keys = Keys {
            values: Vec::new(),
            flags: Vec::new(),
        };
        let mut seen: Vec<String> = Vec::new();
        for meta in metas {
            let path = meta.path();
            let Some(ident) = path.get_ident().cloned() else {
                return Err(Error::new(path.span(), "expected a key"));
            };
            let name = ident.to_string();
            if seen.contains(&name) {
                return Err(Error::new(ident.span(), format!("duplicate key `{name}`")));
            }
            seen.push(name.clone());
            match meta {
                Meta::NameValue(nv) if values.contains(&name.as_str()) => {
                    keys.values.push((ident, nv.value));
                }
                Meta::Path(_) if flags.contains(&name.as_str()) => keys.flags.push(ident),
                _ => {
                    let mut expected: Vec<String> =
                        values.iter().map(|v| format!("`{v} = ...`")).collect();
                    expected.extend(flags.iter().map(|f| format!("`{f}`")));
                    let list = if expected.is_empty() {
                        "nothing".to_owned()
                    } else {
                        expected.join(", ")
                    };
                    return Err(Error::new(
                        ident.span(),
                        format!("unknown or malformed key `{name}`: expected {list}"),
                    ));
                }
            }
        }
        Ok(keys)
    }

    /// Parses every `#[arg(...)]` of `attrs`.
    pub(crate) fn from_attrs(attrs: &[Attribute], values: &[&str], flags: &[&str]) -> Result<Self> {
        let mut all = Keys {
            values: Vec::new(),
            flags: Vec::new(),
        };
        for a in attrs.iter().filter(|a| a.path().is_ident("arg")) {
            let list = a.meta.require_list()?;
            let k = Keys::parse(list.tokens.clone(), values, flags)?;
            for (ident, _) in &k.values {
                if all.get(&ident.to_string()).is_some() {
                    return Err(Error::new(ident.span(), format!("duplicate key `{ident}`")));
                }
            }
            all.values.extend(k.values);
            all.flags.extend(k.flags);
        }
        Ok(all)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Expr> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn flag(&self, key: &str) -> bool {
        self.flags.iter().any(|f| f == key)
    }

    /// A value that must be a string literal.
    pub(crate) fn lit(&self, key: &str) -> Result<Option<LitStr>> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => lit_str(e)
                .map(Some)
                .ok_or_else(|| Error::new(e.span(), format!("`{key}` must be a string literal"))),
        }
    }

    /// `Some(value)` for a key, as an `Option<&str>` expression.
    pub(crate) fn opt(&self, key: &str) -> TokenStream {
        match self.get(key) {
            Some(e) => quote!(::core::option::Option::Some(#e)),
            None => quote!(::core::option::Option::None),
        }
    }
}

/// The string literal an expression is, if it is one.
pub(crate) fn lit_str(e: &Expr) -> Option<LitStr> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        Expr::Group(g) => lit_str(&g.expr),
        _ => None,
    }
}

/// The identifier without a raw `r#` prefix.
pub(crate) fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// Every lifetime of a type replaced by `'static` (for constants naming the type).
pub(crate) fn staticize(ty: &Type) -> Type {
    let mut ty = ty.clone();
    fix(&mut ty);
    fn fix(ty: &mut Type) {
        match ty {
            Type::Path(p) => {
                if let Some(q) = &mut p.qself {
                    fix(&mut q.ty);
                }
                for seg in &mut p.path.segments {
                    if let PathArguments::AngleBracketed(a) = &mut seg.arguments {
                        for arg in &mut a.args {
                            match arg {
                                GenericArgument::Lifetime(l) => {
                                    *l = syn::Lifetime::new("'static", l.span());
                                }
                                GenericArgument::Type(t) => fix(t),
                                _ => {}
                            }
                        }
                    }
                }
            }
            Type::Reference(r) => {
                r.lifetime = Some(syn::Lifetime::new("'static", r.and_token.span));
                fix(&mut r.elem);
            }
            Type::Paren(p) => fix(&mut p.elem),
            Type::Group(g) => fix(&mut g.elem),
            Type::Slice(s) => fix(&mut s.elem),
            Type::Array(a) => fix(&mut a.elem),
            Type::Tuple(t) => t.elems.iter_mut().for_each(fix),
            _ => {}
        }
    }
    ty
}

/// The last path segment's name of a type, through references.
fn type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(r) => type_name(&r.elem),
        Type::Group(g) => type_name(&g.elem),
        Type::Paren(p) => type_name(&p.elem),
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// What a handler method's parameter receives.
pub(crate) enum Param {
    /// The typed arguments (variables): a non-reference type.
    Typed(Box<Type>),
    /// `&GetPromptRequest` / `&ReadRequest`.
    Request,
    /// `&mut PromptResult` / `&mut ReadResult`.
    Result,
    /// `&str`: the URI (resources only).
    Uri,
}

/// How a handler method returns.
pub(crate) enum Ret {
    Unit,
    Dispatch,
    Result,
}

/// A handler method's shape.
pub(crate) struct Handler {
    pub(crate) receiver: bool,
    pub(crate) params: Vec<Param>,
    pub(crate) ret: Ret,
}

/// Classifies a method's parameters. `request`/`result` are the accepted type names
/// (`GetPromptRequest`, `PromptResult`); `uri` whether a `&str` parameter is allowed.
pub(crate) fn handler(
    sig: &syn::Signature,
    request: &str,
    result: &str,
    uri: bool,
    what: &str,
) -> Result<Handler> {
    if let Some(a) = &sig.asyncness {
        return Err(Error::new(
            a.span(),
            format!(
                "{what} methods must be synchronous: return `Dispatch::Defer` to answer later \
                 (through the session's completion methods)"
            ),
        ));
    }
    if !sig.generics.params.is_empty() {
        return Err(Error::new(
            sig.generics.span(),
            format!("{what} methods cannot be generic"),
        ));
    }
    let mut h = Handler {
        receiver: false,
        params: Vec::new(),
        ret: Ret::Unit,
    };
    let (mut typed, mut req, mut res, mut u) = (false, false, false, false);
    for input in &sig.inputs {
        let ty = match input {
            FnArg::Receiver(r) => {
                if r.reference.is_none() || r.colon_token.is_some() {
                    return Err(Error::new(
                        r.span(),
                        format!("{what} methods take `&self` or `&mut self`"),
                    ));
                }
                h.receiver = true;
                continue;
            }
            FnArg::Typed(t) => &*t.ty,
        };
        let name = type_name(ty);
        let dup = |seen: &mut bool, label: &str| {
            if std::mem::replace(seen, true) {
                Err(Error::new(ty.span(), format!("a second {label} parameter")))
            } else {
                Ok(())
            }
        };
        let param = match (ty, name.as_deref()) {
            (Type::Reference(r), Some(n)) if n == request && r.mutability.is_none() => {
                dup(&mut req, "request")?;
                Param::Request
            }
            (Type::Reference(r), Some(n)) if n == result && r.mutability.is_some() => {
                dup(&mut res, "result")?;
                Param::Result
            }
            (Type::Reference(r), Some("str")) if uri && r.mutability.is_none() => {
                dup(&mut u, "URI")?;
                Param::Uri
            }
            (Type::Reference(_), _) => {
                let mut expected = format!("`&{request}<'_>`, `&mut {result}<'_, '_>`");
                if uri {
                    expected.push_str(", `&str` (the URI)");
                }
                return Err(Error::new(
                    ty.span(),
                    format!(
                        "unexpected parameter type: expected {expected} or the typed {} struct (by value)",
                        if uri { "variables" } else { "arguments" }
                    ),
                ));
            }
            _ => {
                dup(&mut typed, "typed")?;
                Param::Typed(Box::new(ty.clone()))
            }
        };
        h.params.push(param);
    }
    if !res {
        return Err(Error::new(
            sig.ident.span(),
            format!("{what} methods need a `&mut {result}<'_, '_>` parameter to write to"),
        ));
    }
    h.ret = match &sig.output {
        ReturnType::Default => Ret::Unit,
        ReturnType::Type(_, ty) => match (&**ty, type_name(ty).as_deref()) {
            (Type::Tuple(t), _) if t.elems.is_empty() => Ret::Unit,
            (_, Some("Dispatch")) => Ret::Dispatch,
            (_, Some("Result")) => Ret::Result,
            _ => {
                return Err(Error::new(
                    ty.span(),
                    format!(
                        "{what} methods return `()`, `Dispatch` or `Result<(), E>` (E: Display)"
                    ),
                ))
            }
        },
    };
    Ok(h)
}

/// Removes the attributes called `name` from `attrs`, returning them.
pub(crate) fn take_attrs(attrs: &mut Vec<Attribute>, name: &str) -> Vec<Attribute> {
    let (taken, kept) = std::mem::take(attrs)
        .into_iter()
        .partition(|a| a.path().is_ident(name));
    *attrs = kept;
    taken
}

/// The tokens of an attribute's parentheses (empty for a bare `#[name]`).
pub(crate) fn attr_tokens(a: &Attribute) -> Result<TokenStream> {
    match &a.meta {
        Meta::Path(_) => Ok(TokenStream::new()),
        Meta::List(l) => Ok(l.tokens.clone()),
        Meta::NameValue(nv) => Err(Error::new(
            nv.span(),
            "expected `#[name(key = value, ...)]`",
        )),
    }
}

/// `compile_error!`s for every error, or the tokens.
pub(crate) fn or_errors(r: Result<TokenStream>) -> TokenStream {
    r.unwrap_or_else(|e| e.to_compile_error())
}

/// A string literal token at `span`.
pub(crate) fn str_at(s: &str, span: Span) -> TokenStream {
    LitStr::new(s, span).to_token_stream()
}

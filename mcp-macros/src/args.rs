//! `#[derive(ToolArgs)]`: on a struct with named fields, `ToolArgs` and `ArgValue` (a
//! compile-time schema and the parser enforcing it); on a unit-only enum, `ArgValue`.
//!
//! Also the pieces `#[derive(ToolOutput)]` shares: type checks, field schemas, renaming.

use proc_macro2::{Group, Literal, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Fields, GenericArgument, GenericParam, Lifetime, PathArguments, Type,
};

use crate::attrs::{self, json_string, ContainerAttrs, FieldAttrs};

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    match syn::parse2::<DeriveInput>(input).and_then(|input| expand(&input)) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

/// Which derive is asking (field types and traits differ).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Args,
    Output,
}

/// The one lifetime a derived type may have.
pub(crate) fn lifetime_of(input: &DeriveInput) -> syn::Result<Option<Lifetime>> {
    let mut lifetime = None;
    for param in &input.generics.params {
        match param {
            GenericParam::Lifetime(l) if lifetime.is_none() && l.bounds.is_empty() => {
                lifetime = Some(l.lifetime.clone());
            }
            _ => {
                return Err(syn::Error::new(
                    param.span(),
                    "only one lifetime parameter (without bounds) is supported: schemas are \
                     built at compile time, so type parameters cannot be",
                ))
            }
        }
    }
    if let Some(clause) = &input.generics.where_clause {
        return Err(syn::Error::new(
            clause.span(),
            "where clauses are not supported",
        ));
    }
    Ok(lifetime)
}

/// Replaces every lifetime by `'static` (schemas are evaluated in nested `const` items,
/// which cannot name the impl's lifetime).
/// (Struct fields always name their lifetimes, so rewriting lifetime tokens is enough.)
pub(crate) fn static_type(ty: &Type) -> TokenStream {
    fn rewrite(tokens: TokenStream) -> TokenStream {
        let mut out = Vec::new();
        let mut iter = tokens.into_iter().peekable();
        while let Some(tree) = iter.next() {
            match tree {
                TokenTree::Punct(p) if p.as_char() == '\'' => {
                    if let Some(TokenTree::Ident(_)) = iter.peek() {
                        iter.next();
                        let l = Lifetime::new("'static", p.span());
                        out.extend(quote!(#l));
                    } else {
                        out.push(TokenTree::Punct(p));
                    }
                }
                TokenTree::Group(g) => {
                    let mut group = Group::new(g.delimiter(), rewrite(g.stream()));
                    group.set_span(g.span());
                    out.push(TokenTree::Group(group));
                }
                other => out.push(other),
            }
        }
        out.into_iter().collect()
    }
    rewrite(quote!(#ty))
}

/// The last path segment's name and generic type arguments, for a plain path type.
fn path_parts(ty: &Type) -> Option<(String, Vec<&Type>)> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?;
    let args = match &last.arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some((last.ident.to_string(), args))
}

/// `T` when `ty` is written `Option<T>`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    match path_parts(ty) {
        Some((name, args)) if name == "Option" && args.len() == 1 => args.first().copied(),
        _ => None,
    }
}

/// The name of a primitive number type (`u8`, ..., `f64`) when `ty` is one.
pub(crate) fn primitive_number(ty: &Type) -> Option<String> {
    let Type::Path(p) = ty else { return None };
    let ident = p.path.get_ident()?.to_string();
    matches!(
        ident.as_str(),
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "f32"
    )
    .then_some(ident)
}

/// The range of a primitive number type, as JSON text and values.
fn width_range(name: &str) -> (&'static str, &'static str, f64, f64) {
    match name {
        "i8" => ("-128", "127", -128.0, 127.0),
        "i16" => ("-32768", "32767", -32768.0, 32767.0),
        "i32" => ("-2147483648", "2147483647", -2147483648.0, 2147483647.0),
        "i64" => (
            "-9223372036854775808",
            "9223372036854775807",
            -9223372036854775808.0,
            9223372036854775807.0,
        ),
        "u8" => ("0", "255", 0.0, 255.0),
        "u16" => ("0", "65535", 0.0, 65535.0),
        "u32" => ("0", "4294967295", 0.0, 4294967295.0),
        "u64" => ("0", "18446744073709551615", 0.0, 18446744073709551615.0),
        _ => (
            "-3.4028234663852886e38",
            "3.4028234663852886e38",
            -3.4028234663852886e38,
            3.4028234663852886e38,
        ),
    }
}

/// Rejects field types the derives cannot support, with a hint.
pub(crate) fn check_type(ty: &Type, side: Side) -> syn::Result<()> {
    let unsupported = |msg: &str| Err(syn::Error::new(ty.span(), msg));
    match ty {
        Type::Reference(r) if side == Side::Args => {
            if matches!(&*r.elem, Type::Path(p) if p.path.is_ident("str")) {
                unsupported(
                    "`&str` is not supported as an argument type: a JSON string with escapes \
                     cannot be borrowed as `&str`; use `JsonStr<'_>` (zero-copy, from \
                     `mcp_rs_core::wire::json`) or `String` (feature `alloc`)",
                )
            } else {
                unsupported("references are not supported as argument types")
            }
        }
        Type::Reference(r) => check_type(&r.elem, side),
        Type::Slice(s) if side == Side::Output => check_type(&s.elem, side),
        Type::Array(a) if side == Side::Output => check_type(&a.elem, side),
        Type::Tuple(_) => unsupported(
            "tuples are not supported: use a struct with named fields (it becomes an object)",
        ),
        Type::Array(_) | Type::Slice(_) => unsupported(
            "arrays and slices are not supported as argument types: use `ArgList<'_, T>` \
             (zero-copy) or `Vec<T>` (feature `alloc`)",
        ),
        Type::Paren(p) => check_type(&p.elem, side),
        Type::Group(g) => check_type(&g.elem, side),
        Type::Path(_) => {
            let Some((name, args)) = path_parts(ty) else {
                return unsupported("qualified paths are not supported as field types");
            };
            match name.as_str() {
                "char" => unsupported(
                    "`char` is not supported: use `JsonStr<'_>` or `String` with \
                     `#[arg(min_length = 1, max_length = 1)]`",
                ),
                "usize" | "isize" | "u128" | "i128" => unsupported(
                    "this integer type is not supported: its range is platform-dependent or \
                     beyond JSON numbers; use `u8`..`u64` or `i8`..`i64`",
                ),
                "HashMap" | "BTreeMap" | "IndexMap" | "HashSet" | "BTreeSet" => unsupported(
                    "maps and sets are not supported: use a struct (known keys) or an array",
                ),
                "Box" | "Rc" | "Arc" | "Cow" => {
                    unsupported("smart pointers are not supported as field types")
                }
                _ => {
                    for arg in args {
                        check_type(arg, side)?;
                    }
                    Ok(())
                }
            }
        }
        _ => unsupported("this type is not supported as a field type"),
    }
}

/// The JSON name of a field or variant after `rename` / `rename_all`.
pub(crate) fn json_name(
    ident: &syn::Ident,
    attrs: &FieldAttrs,
    container: &ContainerAttrs,
    variant: bool,
) -> String {
    if let Some(name) = &attrs.rename {
        return name.clone();
    }
    let raw = ident.unraw().to_string();
    match container.rename_all {
        Some(rule) if variant => rule.apply_to_variant(&raw),
        Some(rule) => rule.apply_to_field(&raw),
        None => raw,
    }
}

/// One field, read and checked.
pub(crate) struct Field {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
    pub(crate) name: String,
    pub(crate) attrs: FieldAttrs,
    /// Written `Option<T>`: not required.
    pub(crate) optional: bool,
}

/// The named fields of a struct, with duplicate JSON names rejected.
pub(crate) fn fields(
    input: &DeriveInput,
    container: &ContainerAttrs,
    side: Side,
) -> syn::Result<Vec<Field>> {
    let Data::Struct(data) = &input.data else {
        unreachable!("checked by the caller")
    };
    let named = match &data.fields {
        Fields::Named(named) => named,
        Fields::Unnamed(_) => {
            return Err(syn::Error::new(
                input.ident.span(),
                "tuple structs are not supported: use named fields (they become the object's \
                 properties)",
            ))
        }
        Fields::Unit => {
            return Err(syn::Error::new(
                input.ident.span(),
                "unit structs are not supported: use `struct Name {}` for an empty object",
            ))
        }
    };
    let mut out: Vec<Field> = Vec::new();
    for field in &named.named {
        let Some(ident) = field.ident.clone() else {
            continue;
        };
        check_type(&field.ty, side)?;
        let attrs = attrs::field_attrs(&field.attrs)?;
        let name = json_name(&ident, &attrs, container, false);
        if out.iter().any(|f| f.name == name) {
            return Err(syn::Error::new(
                ident.span(),
                format!("duplicate property name \"{name}\" (after renaming)"),
            ));
        }
        let optional = option_inner(&field.ty).is_some();
        out.push(Field {
            ident,
            ty: field.ty.clone(),
            name,
            attrs,
            optional,
        });
    }
    Ok(out)
}

fn text(s: &str) -> TokenStream {
    quote!(::mcp_rs_core::typed::SchemaText::Text(#s))
}

/// The `"name":{...}` property of a field, as `SchemaText` expressions.
pub(crate) fn property_schema(field: &Field, side: Side) -> syn::Result<Vec<TokenStream>> {
    let attrs = &field.attrs;
    let inner = option_inner(&field.ty).unwrap_or(&field.ty);
    let static_inner = static_type(inner);
    let mut parts = vec![text(&format!("{}:{{", json_string(&field.name)))];
    let mut minimum = attrs.minimum.as_ref().map(|n| n.json.clone());
    let mut maximum = attrs.maximum.as_ref().map(|n| n.json.clone());
    if let Some(prim) = primitive_number(inner) {
        // The width's own bounds, replaced (never duplicated) by the user's.
        let (min_json, max_json, min, max) = width_range(&prim);
        for (bound, below) in [(&attrs.minimum, true), (&attrs.maximum, false)] {
            if let Some(n) = bound {
                if n.value < min || n.value > max {
                    return Err(syn::Error::new(
                        n.span,
                        format!(
                            "`{}` is outside the range of `{prim}` ({min_json} ..= {max_json})",
                            if below { "minimum" } else { "maximum" }
                        ),
                    ));
                }
            }
        }
        let ty = if prim.starts_with('f') {
            "number"
        } else {
            "integer"
        };
        parts.push(text(&format!("\"type\":\"{ty}\"")));
        minimum.get_or_insert_with(|| min_json.to_owned());
        maximum.get_or_insert_with(|| max_json.to_owned());
    } else {
        parts.push(match side {
            Side::Args => {
                quote!(<#static_inner as ::mcp_rs_core::typed::ArgValue<'static>>::SCHEMA_BODY)
            }
            Side::Output => {
                quote!(<#static_inner as ::mcp_rs_core::typed::OutputValue>::SCHEMA_BODY)
            }
        });
    }
    if let Some(default) = &attrs.default {
        check_default(default, attrs, inner, "default")?;
    }
    for example in attrs.examples.iter().flatten() {
        check_default(example, attrs, inner, "example")?;
    }
    let mut extra = String::new();
    if let Some(title) = &attrs.title {
        extra += &format!(",\"title\":{}", json_string(title));
    }
    if let Some(description) = &attrs.description {
        extra += &format!(",\"description\":{}", json_string(description));
    }
    if let Some(min) = &minimum {
        extra += &format!(",\"minimum\":{min}");
    }
    if let Some(max) = &maximum {
        extra += &format!(",\"maximum\":{max}");
    }
    if let Some(default) = &attrs.default {
        extra += &format!(",\"default\":{}", default.json);
    }
    if let Some(examples) = &attrs.examples {
        let values: Vec<&str> = examples.iter().map(|e| e.json.as_str()).collect();
        extra += &format!(",\"examples\":[{}]", values.join(","));
    }
    if let Some(header) = &attrs.header {
        extra += &format!(",\"x-mcp-header\":{}", json_string(header));
    }
    parts.push(text(&extra));
    for ((n, _), keyword) in [
        (attrs.min_length, "MIN_KEYWORD"),
        (attrs.max_length, "MAX_KEYWORD"),
    ]
    .into_iter()
    .filter_map(|(bound, k)| Some((bound?, k)))
    {
        let keyword = syn::Ident::new(keyword, Span::call_site());
        parts.push(text(","));
        parts.push(quote!(::mcp_rs_core::typed::SchemaText::Text(
            <#static_inner as ::mcp_rs_core::typed::ArgLength>::#keyword,
        )));
        parts.push(text(&n.to_string()));
    }
    if let Some(pattern) = &attrs.pattern {
        // Only strings implement `ArgText`: anything else is a compile error, raised by the
        // parser's check on the argument side, by the keyword's lookup here on the output side.
        parts.push(match side {
            Side::Args => text(",\"pattern\":"),
            Side::Output => quote!(::mcp_rs_core::typed::SchemaText::Parts(&[
                ::mcp_rs_core::typed::SchemaText::Text(","),
                ::mcp_rs_core::typed::SchemaText::Text(
                    <#static_inner as ::mcp_rs_core::typed::ArgText>::PATTERN_KEYWORD,
                ),
            ])),
        });
        parts.push(text(&json_string(&pattern.source)));
    }
    parts.push(text("}"));
    Ok(parts)
}

/// Rejects a default (or example) the field's own checks would reject (numbers: range and
/// wholeness; strings: `pattern` and lengths; others: the literal's kind against primitive
/// types).
fn check_default(
    default: &attrs::JsonLiteral,
    attrs: &FieldAttrs,
    ty: &Type,
    what: &str,
) -> syn::Result<()> {
    crate::pattern::check_literal(default, attrs, what)?;
    let err = |msg: String| Err(syn::Error::new(default.span, msg));
    let prim = primitive_number(ty).or_else(|| {
        let Type::Path(p) = ty else { return None };
        p.path
            .get_ident()
            .filter(|i| *i == "f64" || *i == "bool")
            .map(ToString::to_string)
    });
    match (prim.as_deref(), default.number) {
        (Some("bool"), None) if default.json == "true" || default.json == "false" => Ok(()),
        (Some("bool"), _) => err(format!("the {what} of a `bool` must be `true` or `false`")),
        (Some(_), None) => err(format!("the {what} of a number must be a number")),
        (Some(prim), Some(v)) => {
            if prim.starts_with(['i', 'u']) && v.fract() != 0.0 {
                return err(format!("the {what} of an integer must be a whole number"));
            }
            let (_, _, mut min, mut max) = if prim == "f64" {
                ("", "", f64::MIN, f64::MAX)
            } else {
                width_range(prim)
            };
            if let Some(n) = &attrs.minimum {
                min = n.value;
            }
            if let Some(n) = &attrs.maximum {
                max = n.value;
            }
            if v < min || v > max {
                return err(format!(
                    "the {what} is outside the field's `minimum`..`maximum`"
                ));
            }
            Ok(())
        }
        (None, _) => Ok(()),
    }
}

/// `"type":"object","properties":{...},"required":[...]` (+ `additionalProperties`).
pub(crate) fn object_body(
    fields: &[Field],
    side: Side,
    deny_unknown: bool,
) -> syn::Result<TokenStream> {
    let mut parts = vec![text("\"type\":\"object\",\"properties\":{")];
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            parts.push(text(","));
        }
        parts.extend(property_schema(field, side)?);
    }
    let required: Vec<String> = fields
        .iter()
        .filter(|f| !f.optional && (side == Side::Output || f.attrs.default.is_none()))
        .map(|f| json_string(&f.name))
        .collect();
    let mut tail = String::from("}");
    if !required.is_empty() {
        tail += &format!(",\"required\":[{}]", required.join(","));
    }
    if deny_unknown {
        tail += ",\"additionalProperties\":false";
    }
    parts.push(text(&tail));
    Ok(quote!(::mcp_rs_core::typed::SchemaText::Parts(&[#(#parts),*])))
}

/// `impl<'x>` generics and the type with its lifetime, plus the lifetime to implement
/// `ArgValue<'x>` for.
pub(crate) fn impl_lifetime(lifetime: &Option<Lifetime>) -> (Lifetime, TokenStream) {
    match lifetime {
        Some(l) => (l.clone(), quote!(<#l>)),
        None => (Lifetime::new("'__mcp_i", Span::call_site()), quote!()),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let container = attrs::container_attrs(&input.attrs)?;
    let lifetime = lifetime_of(input)?;
    match &input.data {
        Data::Struct(_) => expand_struct(input, &container, &lifetime),
        Data::Enum(data) => {
            let variants = enum_variants(input, data, &container)?;
            Ok(expand_enum_args(&input.ident, &variants))
        }
        Data::Union(u) => Err(syn::Error::new(
            u.union_token.span,
            "unions are not supported: use a struct with named fields or a unit-only enum",
        )),
    }
}

/// A unit-only enum's variants and their JSON names (`input` is the enum: it takes no
/// lifetime parameter).
pub(crate) fn enum_variants(
    input: &DeriveInput,
    data: &syn::DataEnum,
    container: &ContainerAttrs,
) -> syn::Result<Vec<(syn::Ident, String)>> {
    if lifetime_of(input)?.is_some() {
        return Err(syn::Error::new(
            input.generics.span(),
            "enums take no lifetime parameter",
        ));
    }
    if container.allow_unknown {
        return Err(syn::Error::new(
            Span::call_site(),
            "`allow_unknown` applies to structs only",
        ));
    }
    let mut out: Vec<(syn::Ident, String)> = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            return Err(syn::Error::new(
                variant.ident.span(),
                "only unit variants are supported (the enum becomes a string `enum`)",
            ));
        }
        let attrs = attrs::field_attrs(&variant.attrs)?;
        if let Some(span) = attrs.field_only {
            return Err(syn::Error::new(
                span,
                "only `rename` is supported on enum variants",
            ));
        }
        let name = json_name(&variant.ident, &attrs, container, true);
        if out.iter().any(|(_, n)| *n == name) {
            return Err(syn::Error::new(
                variant.ident.span(),
                format!("duplicate enum value \"{name}\" (after renaming)"),
            ));
        }
        out.push((variant.ident.clone(), name));
    }
    if out.is_empty() {
        return Err(syn::Error::new(
            data.brace_token.span.join(),
            "an enum without variants has no valid value",
        ));
    }
    Ok(out)
}

/// `"type":"string","enum":[...]`
pub(crate) fn enum_body(variants: &[(syn::Ident, String)]) -> String {
    let names: Vec<String> = variants.iter().map(|(_, n)| json_string(n)).collect();
    format!("\"type\":\"string\",\"enum\":[{}]", names.join(","))
}

fn expand_enum_args(ident: &syn::Ident, variants: &[(syn::Ident, String)]) -> TokenStream {
    let body = enum_body(variants);
    let allowed = variants
        .iter()
        .map(|(_, n)| json_string(n))
        .collect::<Vec<_>>()
        .join(", ");
    let names = variants.iter().map(|(_, n)| n);
    // One shared function finds the value's position; the last variant takes the rest.
    // Names JSON writes as they are are found in the `must be one of` list itself (no
    // table of names beside it: flash); others through a table of the decoded names.
    let plain = variants
        .iter()
        .all(|(_, n)| json_string(n).len() == n.len() + 2);
    let position = if plain {
        quote!(::mcp_rs_core::typed::enum_position(v, #allowed, error)?)
    } else {
        quote!(::mcp_rs_core::typed::enum_index(v, &[#(#names),*], #allowed, error)?)
    };
    let last = variants.len() - 1;
    let arms = variants.iter().enumerate().map(|(i, (v, _))| {
        if i == last {
            quote!(_ => #ident::#v,)
        } else {
            quote!(#i => #ident::#v,)
        }
    });
    quote! {
        impl<'__mcp_i> ::mcp_rs_core::typed::ArgValue<'__mcp_i> for #ident {
            const SCHEMA_BODY: ::mcp_rs_core::typed::SchemaText =
                ::mcp_rs_core::typed::SchemaText::Text(#body);
            fn from_json(
                v: ::mcp_rs_core::wire::json::RawJson<'__mcp_i>,
                error: &mut ::mcp_rs_core::typed::ArgError<'__mcp_i>,
            ) -> ::core::result::Result<Self, ::mcp_rs_core::typed::Rejected> {
                ::core::result::Result::Ok(
                    match #position {
                        #(#arms)*
                    },
                )
            }
        }
    }
}

fn expand_struct(
    input: &DeriveInput,
    container: &ContainerAttrs,
    lifetime: &Option<Lifetime>,
) -> syn::Result<TokenStream> {
    let ident = &input.ident;
    let fields = fields(input, container, Side::Args)?;
    let (l, generics) = impl_lifetime(lifetime);
    let body = object_body(&fields, Side::Args, !container.allow_unknown)?;
    let static_self = if lifetime.is_some() {
        quote!(#ident<'static>)
    } else {
        quote!(#ident)
    };

    let slots: Vec<syn::Ident> = (0..fields.len())
        .map(|i| syn::Ident::new(&format!("__mcp_f{i}"), Span::call_site()))
        .collect();
    let names = fields.iter().map(|f| &f.name);
    let count = fields.len();
    let collect = if container.allow_unknown {
        quote!(collect_known_members)
    } else {
        quote!(collect_members)
    };
    let asserts = fields.iter().map(optional_assert);
    let values = fields
        .iter()
        .zip(&slots)
        .enumerate()
        .map(|(i, (f, slot))| field_value(f, i, slot));
    let idents = fields.iter().map(|f| &f.ident);
    let (at_decl, read_mut) = if count > 1 {
        (quote!(let mut at: usize = 0;), quote!(mut))
    } else {
        (quote!(let at: usize = 0;), quote!())
    };

    Ok(quote! {
        impl<#l> ::mcp_rs_core::typed::ArgValue<#l> for #ident #generics {
            const SCHEMA_BODY: ::mcp_rs_core::typed::SchemaText = #body;
            // Out of line: inlined into a dispatch (every tool's, in one function) the
            // parser costs more flash than the call.
            #[inline(never)]
            fn from_json(
                v: ::mcp_rs_core::wire::json::RawJson<#l>,
                error: &mut ::mcp_rs_core::typed::ArgError<#l>,
            ) -> ::core::result::Result<Self, ::mcp_rs_core::typed::Rejected> {
                #(#asserts)*
                // One shared function reads the members, driven by this table (code size);
                // the slots are in field order.
                const NAMES: &[&str] = &[#(#names),*];
                let mut slots: [::core::option::Option<::mcp_rs_core::wire::json::RawJson<#l>>; #count] =
                    [::core::option::Option::None; #count];
                ::mcp_rs_core::typed::#collect(v, NAMES, &mut slots, error)?;
                let [#(#slots),*] = slots;
                // The field being read: a refusal gets its name once, after the closure.
                #at_decl
                let #read_mut read = |error: &mut ::mcp_rs_core::typed::ArgError<#l>|
                    -> ::core::result::Result<Self, ::mcp_rs_core::typed::Rejected> {
                    ::core::result::Result::Ok(Self {
                        #(#idents: #values,)*
                    })
                };
                read(error).map_err(|_| ::mcp_rs_core::typed::field_failed(error, NAMES, at))
            }
        }

        impl<#l> ::mcp_rs_core::typed::ToolArgs<#l> for #ident #generics {
            const SCHEMA: &'static str = ::mcp_rs_core::schema_str!(
                ::mcp_rs_core::typed::SchemaText::Parts(&[
                    ::mcp_rs_core::typed::SchemaText::Text("{"),
                    <#static_self as ::mcp_rs_core::typed::ArgValue<'static>>::SCHEMA_BODY,
                    ::mcp_rs_core::typed::SchemaText::Text("}"),
                ])
            );
            fn parse(
                args: ::mcp_rs_core::wire::json::RawJson<#l>,
            ) -> ::core::result::Result<Self, ::mcp_rs_core::typed::ArgError<#l>> {
                let mut error = ::mcp_rs_core::typed::ArgError::blank();
                <Self as ::mcp_rs_core::typed::ArgValue<#l>>::from_json(args, &mut error)
                    .map_err(|_| error)
            }
            fn parse_into(
                args: ::mcp_rs_core::wire::json::RawJson<#l>,
                error: &mut ::mcp_rs_core::typed::ArgError<#l>,
            ) -> ::core::result::Result<Self, ::mcp_rs_core::typed::Rejected> {
                <Self as ::mcp_rs_core::typed::ArgValue<#l>>::from_json(args, error)
            }
        }
    })
}

fn f64_lit(v: f64) -> Literal {
    Literal::f64_suffixed(v)
}

/// The compile-time check that a field's `required` status (decided from its written
/// type) is its type's.
fn optional_assert(f: &Field) -> TokenStream {
    let static_ty = static_type(&f.ty);
    let optional = f.optional;
    let assert_msg = format!(
        "field `{}`: write `Option<...>` literally for an optional member (the schema's \
         `required` list is decided from the written type)",
        f.ident
    );
    quote_spanned! {f.ident.span()=>
        const _: () = ::core::assert!(
            <#static_ty as ::mcp_rs_core::typed::ArgValue<'static>>::OPTIONAL == #optional,
            #assert_msg
        );
    }
}

/// The expression producing field `i`'s value from its slot, with attribute checks (inside
/// the parser's closure: `error` and `at` are its).
fn field_value(f: &Field, i: usize, slot: &syn::Ident) -> TokenStream {
    let ty = &f.ty;
    let span = f.ident.span();
    let mut checks = Vec::new();
    if let Some(min) = &f.attrs.minimum {
        let v = f64_lit(min.value);
        checks.push(quote!(::mcp_rs_core::typed::check_minimum(x, #v, error)));
    }
    if let Some(max) = &f.attrs.maximum {
        let v = f64_lit(max.value);
        checks.push(quote!(::mcp_rs_core::typed::check_maximum(x, #v, error)));
    }
    if let Some((n, _)) = f.attrs.min_length {
        let n = Literal::usize_unsuffixed(n as usize);
        checks.push(quote!(::mcp_rs_core::typed::check_min_length(x, #n, error)));
    }
    if let Some((n, _)) = f.attrs.max_length {
        let n = Literal::usize_unsuffixed(n as usize);
        checks.push(quote!(::mcp_rs_core::typed::check_max_length(x, #n, error)));
    }
    if let Some(pattern) = &f.attrs.pattern {
        let program = pattern.program.to_tokens(&pattern.source);
        let inner = option_inner(ty).unwrap_or(ty);
        checks.push(
            quote_spanned!(inner.span()=> ::mcp_rs_core::typed::check_pattern(x, {
                static PATTERN: ::mcp_rs_core::typed::Pattern = #program;
                &PATTERN
            }, error)),
        );
    }
    let checks = if checks.is_empty() {
        quote!()
    } else if f.optional {
        quote! {
            if let ::core::option::Option::Some(x) = &x {
                #(#checks?;)*
            }
        }
    } else {
        quote! {
            {
                let x = &x;
                #(#checks?;)*
            }
        }
    };
    let set_at = (i > 0).then(|| quote!(at = #i;));
    // An absent member with a default is read from the default (JSON this derive wrote:
    // taken as is).
    let member = match &f.attrs.default {
        Some(d) => {
            let json = &d.json;
            quote!(#slot.or(::core::option::Option::Some(
                ::mcp_rs_core::wire::json::RawJson::__trusted(#json)
            )))
        }
        None => quote!(#slot),
    };
    quote_spanned! {span=>
        {
            #set_at
            let x: #ty = ::mcp_rs_core::typed::read_field(#member, error)?;
            #checks
            x
        }
    }
}

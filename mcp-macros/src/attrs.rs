//! Field and container attributes shared by `#[derive(ToolArgs)]` and `#[derive(ToolOutput)]`:
//! `#[arg(...)]`, the `serde` attributes that change names, doc comments, renaming rules
//! and JSON text helpers.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Lit, LitStr, UnOp};

use crate::pattern;

/// A serde-style renaming rule (`rename_all = "camelCase"`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// Parses a `rename_all` value.
    pub(crate) fn parse(s: &LitStr) -> syn::Result<Self> {
        Ok(match s.value().as_str() {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => {
                return Err(syn::Error::new(
                    s.span(),
                    "unknown rename rule: expected one of \"lowercase\", \"UPPERCASE\", \
                     \"PascalCase\", \"camelCase\", \"snake_case\", \"SCREAMING_SNAKE_CASE\", \
                     \"kebab-case\", \"SCREAMING-KEBAB-CASE\"",
                ))
            }
        })
    }

    /// Renames a field written in snake_case (as serde does).
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for c in field.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                lower_first(&pascal)
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// Renames a variant written in PascalCase (as serde does).
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => lower_first(variant),
            RenameRule::Snake => {
                let mut out = String::new();
                for (i, c) in variant.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// A number from an attribute: its JSON text and value.
#[derive(Clone, Debug)]
pub(crate) struct Number {
    pub(crate) json: String,
    pub(crate) value: f64,
    pub(crate) span: Span,
}

/// A literal as JSON text (`default = ...`, an element of `examples = [...]`).
#[derive(Clone, Debug)]
pub(crate) struct JsonLiteral {
    pub(crate) json: String,
    /// The number's value when the literal is one.
    pub(crate) number: Option<f64>,
    /// The string's value when the literal is one.
    pub(crate) string: Option<String>,
    pub(crate) span: Span,
}

/// `pattern = "..."`: the source and its compiled program.
#[derive(Clone, Debug)]
pub(crate) struct PatternAttr {
    pub(crate) source: String,
    pub(crate) program: pattern::Program,
}

/// `#[arg(...)]` (and `#[serde(rename)]`) on a field or variant.
#[derive(Default, Debug)]
pub(crate) struct FieldAttrs {
    pub(crate) rename: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) minimum: Option<Number>,
    pub(crate) maximum: Option<Number>,
    pub(crate) min_length: Option<(u64, Span)>,
    pub(crate) max_length: Option<(u64, Span)>,
    pub(crate) default: Option<JsonLiteral>,
    pub(crate) header: Option<String>,
    pub(crate) pattern: Option<PatternAttr>,
    pub(crate) examples: Option<Vec<JsonLiteral>>,
    /// Span of the first attribute that only fits struct fields (for errors on variants).
    pub(crate) field_only: Option<Span>,
}

/// `#[arg(...)]` (and `#[serde(rename_all)]`) on the struct or enum.
#[derive(Default, Debug)]
pub(crate) struct ContainerAttrs {
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) allow_unknown: bool,
}

/// The doc comment, lines trimmed; lines of one paragraph joined with spaces, paragraphs
/// with a newline.
pub(crate) fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let mut out = String::new();
    let mut blank = false;
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            continue;
        };
        for line in s.value().lines() {
            let line = line.trim();
            if line.is_empty() {
                blank = !out.is_empty();
                continue;
            }
            if blank {
                out.push('\n');
                blank = false;
            } else if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(line);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The string value of `key` (`rename` or `rename_all`) in a `#[serde(...)]` attribute; the
/// other serde keys are skipped. The per-direction form (`rename(serialize = "..",
/// deserialize = "..")`) is refused: a schema cannot express names that differ by direction.
fn serde_key(attr: &Attribute, key: &str) -> syn::Result<Option<LitStr>> {
    let mut found = None;
    attr.parse_nested_meta(|meta| {
        if !meta.path.is_ident(key) {
            return skip_value(&meta);
        }
        if !meta.input.peek(syn::Token![=]) {
            return Err(meta.error(format!(
                "#[serde({key}(...))] with per-direction names is not supported here: \
                 use #[arg({key} = \"...\")]"
            )));
        }
        found = Some(lit_str(&meta)?);
        Ok(())
    })?;
    Ok(found)
}

/// Skips the value of a `serde` attribute key this derive does not read.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn lit_str(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    meta.value()?.parse::<LitStr>()
}

/// A numeric literal, possibly negated, as a [`Number`].
fn number(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Number> {
    let expr: Expr = meta.value()?.parse()?;
    let lit = json_literal(&expr)?;
    match lit.number {
        Some(value) => Ok(Number {
            json: lit.json,
            value,
            span: lit.span,
        }),
        None => Err(syn::Error::new(expr.span(), "expected a number")),
    }
}

/// A literal (number, possibly negated; bool; string) as JSON text.
fn json_literal(expr: &Expr) -> syn::Result<JsonLiteral> {
    let span = expr.span();
    let (negative, lit) = match expr {
        Expr::Lit(ExprLit { lit, .. }) => (false, lit),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit { lit, .. }) => (true, lit),
            _ => return Err(syn::Error::new(span, "expected a literal")),
        },
        _ => return Err(syn::Error::new(span, "expected a literal")),
    };
    let sign = if negative { "-" } else { "" };
    let string = match lit {
        Lit::Str(s) if !negative => Some(s.value()),
        _ => None,
    };
    let (json, number) = match lit {
        Lit::Int(i) => {
            let digits = i.base10_digits();
            let value: f64 = digits
                .parse()
                .map_err(|_| syn::Error::new(span, "invalid number"))?;
            (
                format!("{sign}{digits}"),
                Some(if negative { -value } else { value }),
            )
        }
        Lit::Float(f) => {
            let digits = f.base10_digits();
            let value: f64 = digits
                .parse()
                .map_err(|_| syn::Error::new(span, "invalid number"))?;
            if !value.is_finite() {
                return Err(syn::Error::new(span, "the number must be finite"));
            }
            // Rust accepts `1.` and `1.e3`; JSON wants a digit after the point.
            let digits = digits.replace(".e", ".0e").replace(".E", ".0E");
            let digits = if digits.ends_with('.') {
                format!("{digits}0")
            } else {
                digits
            };
            (
                format!("{sign}{digits}"),
                Some(if negative { -value } else { value }),
            )
        }
        Lit::Bool(b) if !negative => (b.value.to_string(), None),
        Lit::Str(s) if !negative => (json_string(&s.value()), None),
        _ => {
            return Err(syn::Error::new(
                span,
                "expected a number, bool or string literal",
            ))
        }
    };
    Ok(JsonLiteral {
        json,
        number,
        string,
        span,
    })
}

fn count(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<(u64, Span)> {
    let lit: syn::LitInt = meta.value()?.parse()?;
    Ok((lit.base10_parse()?, lit.span()))
}

fn set<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &syn::meta::ParseNestedMeta<'_>,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error("this attribute is given twice"));
    }
    *slot = Some(value);
    Ok(())
}

/// Reads a field's (or variant's) attributes and doc comment.
pub(crate) fn field_attrs(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
    let mut out = FieldAttrs {
        description: doc_comment(attrs),
        ..FieldAttrs::default()
    };
    let mut explicit_description = false;
    let mut serde_rename = None;
    for attr in attrs {
        if attr.path().is_ident("serde") {
            if let Some(name) = serde_key(attr, "rename")? {
                serde_rename = Some(name.value());
            }
            continue;
        }
        if !attr.path().is_ident("arg") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if !matches!(key.as_str(), "rename" | "description") && out.field_only.is_none() {
                out.field_only = Some(meta.path.span());
            }
            match key.as_str() {
                "rename" => set(&mut out.rename, lit_str(&meta)?.value(), &meta),
                "description" => {
                    if explicit_description {
                        return Err(meta.error("this attribute is given twice"));
                    }
                    explicit_description = true;
                    out.description = Some(lit_str(&meta)?.value());
                    Ok(())
                }
                "title" => set(&mut out.title, lit_str(&meta)?.value(), &meta),
                "minimum" => set(&mut out.minimum, number(&meta)?, &meta),
                "maximum" => set(&mut out.maximum, number(&meta)?, &meta),
                "min_length" => set(&mut out.min_length, count(&meta)?, &meta),
                "max_length" => set(&mut out.max_length, count(&meta)?, &meta),
                "default" => {
                    let expr: Expr = meta.value()?.parse()?;
                    set(&mut out.default, json_literal(&expr)?, &meta)
                }
                "header" => {
                    let name = lit_str(&meta)?;
                    let value = name.value();
                    if value.is_empty()
                        || !value
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b))
                    {
                        return Err(syn::Error::new(
                            name.span(),
                            "a header name must be a non-empty HTTP token (e.g. \"X-Region\")",
                        ));
                    }
                    set(&mut out.header, value, &meta)
                }
                "pattern" => {
                    let source = lit_str(&meta)?;
                    let program = pattern::compile(&source.value())
                        .map_err(|e| syn::Error::new(source.span(), e))?;
                    let value = PatternAttr {
                        source: source.value(),
                        program,
                    };
                    set(&mut out.pattern, value, &meta)
                }
                "examples" => {
                    let expr: Expr = meta.value()?.parse()?;
                    let Expr::Array(array) = &expr else {
                        return Err(syn::Error::new(
                            expr.span(),
                            "expected an array of literals: `examples = [\"a\", \"b\"]`",
                        ));
                    };
                    if array.elems.is_empty() {
                        return Err(syn::Error::new(
                            array.span(),
                            "`examples` needs at least one value",
                        ));
                    }
                    let values = array
                        .elems
                        .iter()
                        .map(json_literal)
                        .collect::<syn::Result<Vec<_>>>()?;
                    set(&mut out.examples, values, &meta)
                }
                _ => Err(meta.error(
                    "unknown attribute: expected one of `rename`, `description`, `title`, \
                     `minimum`, `maximum`, `min_length`, `max_length`, `pattern`, `default`, \
                     `examples`, `header`",
                )),
            }
        })?;
    }
    if out.rename.is_none() {
        out.rename = serde_rename;
    }
    if let (Some(min), Some(max)) = (&out.minimum, &out.maximum) {
        if min.value > max.value {
            return Err(syn::Error::new(
                min.span,
                "`minimum` is greater than `maximum`",
            ));
        }
    }
    if let (Some((min, span)), Some((max, _))) = (out.min_length, out.max_length) {
        if min > max {
            return Err(syn::Error::new(
                span,
                "`min_length` is greater than `max_length`",
            ));
        }
    }
    Ok(out)
}

/// Reads a container's attributes.
pub(crate) fn container_attrs(attrs: &[Attribute]) -> syn::Result<ContainerAttrs> {
    let mut out = ContainerAttrs::default();
    let mut serde_rule = None;
    for attr in attrs {
        if attr.path().is_ident("serde") {
            if let Some(rule) = serde_key(attr, "rename_all")? {
                serde_rule = Some(RenameRule::parse(&rule)?);
            }
            continue;
        }
        if !attr.path().is_ident("arg") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename_all") {
                let rule = RenameRule::parse(&lit_str(&meta)?)?;
                set(&mut out.rename_all, rule, &meta)
            } else if meta.path.is_ident("allow_unknown") {
                out.allow_unknown = true;
                Ok(())
            } else {
                Err(meta.error(
                    "unknown container attribute: expected `rename_all = \"...\"` or \
                     `allow_unknown`",
                ))
            }
        })?;
    }
    if out.rename_all.is_none() {
        out.rename_all = serde_rule;
    }
    Ok(out)
}

/// `s` as a JSON string literal, quotes included.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

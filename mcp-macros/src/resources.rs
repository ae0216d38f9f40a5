//! `#[derive(TemplateVars)]` and `#[resources]`.
//!
//! The derive implements `mcp_rs_core::typed::template_vars::TemplateVars` for a struct whose named
//! fields are the variables of a URI template. `#[resources]` on an inherent `impl` block
//! turns every `#[resource(...)]` method into a listed resource and every
//! `#[resource_template(...)]` method into a resource template: `RESOURCES` and
//! `RESOURCE_TEMPLATES` tables, a `read_resource` dispatcher and the `ResourceSet` impl.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, ImplItem, ItemImpl, LitStr, Result};

use crate::attrs::{doc_comment as doc, RenameRule};
use crate::prompts::common::{self, handler, lit_str, staticize, str_at, unraw, Keys, Param};
use crate::prompts::{call, inherent, one_lifetime, returned};

pub(crate) fn derive_vars(input: TokenStream) -> TokenStream {
    common::or_errors(derive_inner(input))
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    common::or_errors(expand_inner(attr, item))
}

/// Whether `name` is an RFC 6570 varname: varchar *( "." varchar ), varchar being ALPHA /
/// DIGIT / "_" / pct-encoded.
fn valid_varname(name: &str) -> bool {
    let b = name.as_bytes();
    let mut i = 0;
    let mut prev_dot = true;
    while i < b.len() {
        match b[i] {
            b'.' if !prev_dot => prev_dot = true,
            b'%' if b.len() > i + 2
                && b[i + 1].is_ascii_hexdigit()
                && b[i + 2].is_ascii_hexdigit() =>
            {
                prev_dot = false;
                i += 2;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' => prev_dot = false,
            _ => return false,
        }
        i += 1;
    }
    !prev_dot
}

/// The variables of a level 1 template, or what is wrong with it.
fn template_vars(t: &str) -> std::result::Result<Vec<String>, String> {
    let mut vars: Vec<String> = Vec::new();
    let mut rest = t;
    let mut after_expr = false;
    while let Some(c) = rest.chars().next() {
        match c {
            '{' => {
                if after_expr {
                    return Err("two expressions need a literal between them".into());
                }
                let end = rest.find('}').ok_or("unclosed `{`")?;
                let name = &rest[1..end];
                if name.is_empty() {
                    return Err("empty expression `{}`".into());
                }
                if name.contains('{') {
                    return Err("nested `{`".into());
                }
                if let Some(op) = name.chars().next().filter(|c| "+#./;?&=,!@|".contains(*c)) {
                    return Err(format!("operator `{op}` is beyond RFC 6570 level 1"));
                }
                if name.contains([',', '*', ':']) {
                    return Err(format!(
                        "`{{{name}}}`: variable lists and modifiers are beyond RFC 6570 level 1"
                    ));
                }
                if !valid_varname(name) {
                    return Err(format!("invalid variable name `{name}`"));
                }
                if vars.iter().any(|v| v == name) {
                    return Err(format!("variable `{name}` appears twice"));
                }
                vars.push(name.to_owned());
                rest = &rest[end + 1..];
                after_expr = true;
            }
            '}' => return Err("`}` outside an expression".into()),
            c => {
                rest = &rest[c.len_utf8()..];
                after_expr = false;
            }
        }
    }
    if vars.len() > 8 {
        return Err("more than 8 variables".into());
    }
    Ok(vars)
}

fn derive_inner(input: TokenStream) -> Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(f) => f,
            _ => {
                return Err(Error::new(
                    input.ident.span(),
                    "#[derive(TemplateVars)] needs a struct with named fields (one a template variable)",
                ))
            }
        },
        _ => {
            return Err(Error::new(
                input.ident.span(),
                "#[derive(TemplateVars)] needs a struct with named fields (one a template variable)",
            ))
        }
    };
    let container = Keys::from_attrs(&input.attrs, &["rename_all"], &[])?;
    let rule = container
        .lit("rename_all")?
        .map(|l| RenameRule::parse(&l))
        .transpose()?;
    let lifetime = one_lifetime(&input, "#[derive(TemplateVars)]")?;
    let ident = &input.ident;
    let mut names: Vec<String> = Vec::new();
    let mut inits = Vec::new();
    for f in &fields.named {
        let keys = Keys::from_attrs(&f.attrs, &["rename"], &[])?;
        let field = f
            .ident
            .as_ref()
            .ok_or_else(|| Error::new(f.span(), "unnamed field"))?;
        let (name, span) = match keys.lit("rename")? {
            Some(l) => (l.value(), l.span()),
            None => (
                match rule {
                    Some(r) => r.apply_to_field(&unraw(field)),
                    None => unraw(field),
                },
                field.span(),
            ),
        };
        if !valid_varname(&name) {
            return Err(Error::new(
                span,
                format!("\"{name}\" is not a URI template variable name (letters, digits, `_`, `.` between them, %XX)"),
            ));
        }
        if names.contains(&name) {
            return Err(Error::new(
                span,
                format!("duplicate template variable \"{name}\""),
            ));
        }
        names.push(name.clone());
        let ty = &f.ty;
        let lit = str_at(&name, field.span());
        inits.push(quote_spanned! {ty.span()=>
            #field: ::mcp_rs_core::typed::template_vars::__var::<#ty>(captures, #lit)?
        });
    }
    let (impl_lt, ty_lt) = match &lifetime {
        Some(l) => (quote!(#l), quote!(<#l>)),
        None => (quote!('__u), quote!()),
    };
    Ok(quote! {
        impl<#impl_lt> ::mcp_rs_core::typed::template_vars::TemplateVars<#impl_lt> for #ident #ty_lt {
            const VARIABLES: &'static [&'static str] = &[#(#names),*];
            #[allow(unused_variables)]
            fn from_captures(
                captures: &::mcp_rs_core::wire::uri_template::Captures<'_, #impl_lt>,
            ) -> ::core::result::Result<Self, ::mcp_rs_core::typed::ArgError<#impl_lt>> {
                ::core::result::Result::Ok(#ident { #(#inits),* })
            }
        }
    })
}

const RESOURCE_KEYS: &[&str] = &[
    "uri",
    "name",
    "title",
    "description",
    "mime_type",
    "size",
    "annotations",
    "icons",
    "meta",
];
const TEMPLATE_KEYS: &[&str] = &[
    "uri_template",
    "name",
    "title",
    "description",
    "mime_type",
    "annotations",
    "icons",
    "meta",
];

fn expand_inner(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let options = Keys::parse(attr, &[], &["no_resource_set"])?;
    let mut item: ItemImpl = syn::parse2(item)?;
    inherent(&item, "resources")?;

    let mut names: Vec<String> = Vec::new();
    let mut uris: Vec<String> = Vec::new();
    let (mut resources, mut templates) = (Vec::new(), Vec::new());
    let (mut fixed_arms, mut template_arms) = (Vec::new(), Vec::new());
    let mut checks = Vec::new();
    for it in &mut item.items {
        let ImplItem::Fn(f) = it else { continue };
        let mut attrs = common::take_attrs(&mut f.attrs, "resource");
        let is_template_attr = attrs.len();
        attrs.extend(common::take_attrs(&mut f.attrs, "resource_template"));
        let Some(a) = attrs.first() else { continue };
        if let Some(second) = attrs.get(1) {
            return Err(Error::new(
                second.span(),
                "a second #[resource] / #[resource_template] on one method",
            ));
        }
        let template = is_template_attr == 0;
        let what = if template {
            "resource template"
        } else {
            "resource"
        };
        let keys = Keys::parse(
            common::attr_tokens(a)?,
            if template {
                TEMPLATE_KEYS
            } else {
                RESOURCE_KEYS
            },
            &[],
        )?;
        let uri_key = if template { "uri_template" } else { "uri" };
        let Some(uri) = keys.get(uri_key).cloned() else {
            return Err(Error::new(
                a.span(),
                format!(
                    "#[{}] needs `{uri_key} = \"...\"`",
                    a.path()
                        .get_ident()
                        .map_or(String::new(), |i| i.to_string())
                ),
            ));
        };
        let h = handler(&f.sig, "ReadRequest", "ReadResult", true, what)?;
        let method = f.sig.ident.clone();
        let name = match keys.get("name") {
            Some(e) => e.clone(),
            None => {
                let lit = str_at(&unraw(&method), method.span());
                syn::parse_quote!(#lit)
            }
        };
        if let Some(l) = lit_str(&name) {
            if l.value().is_empty() {
                return Err(Error::new(
                    l.span(),
                    format!("a {what} name cannot be empty"),
                ));
            }
            if names.contains(&l.value()) {
                return Err(Error::new(
                    l.span(),
                    format!("duplicate resource name \"{}\"", l.value()),
                ));
            }
            names.push(l.value());
        }
        let typed = h.params.iter().find_map(|p| match p {
            Param::Typed(t) => Some((**t).clone()),
            _ => None,
        });
        let description = match keys.get("description") {
            Some(e) => quote!(::core::option::Option::Some(#e)),
            None => match doc(&f.attrs) {
                Some(d) => quote!(::core::option::Option::Some(#d)),
                None => quote!(::core::option::Option::None),
            },
        };
        let title = keys.opt("title");
        let mime_type = keys.opt("mime_type");
        let annotations = keys.opt("annotations");
        let meta = keys.opt("meta");
        let icons = keys.get("icons").map_or(quote!(&[]), |e| quote!(#e));
        let c = call(&method, h.receiver, &h.params, &quote!(__vars));
        let ret = returned(&h.ret, c, false);
        if template {
            let index = templates.len();
            let uri_lit: Option<LitStr> = lit_str(&uri);
            let vars = match &uri_lit {
                Some(l) => Some(
                    template_vars(&l.value())
                        .map_err(|e| Error::new(l.span(), format!("URI template: {e}")))?,
                ),
                None => None,
            };
            templates.push(quote! {
                ::mcp_rs_core::model::resources::ResourceTemplate {
                    uri_template: #uri,
                    name: #name,
                    title: #title,
                    description: #description,
                    mime_type: #mime_type,
                    annotations: #annotations,
                    icons: #icons,
                    meta: #meta,
                }
            });
            let body = match &typed {
                Some(t) => quote! {
                    if let ::core::result::Result::Ok(__vars) =
                        ::mcp_rs_core::typed::template_vars::TemplateVars::from_captures(&__captures)
                    {
                        let __vars: #t = __vars;
                        return ::core::option::Option::Some(#ret);
                    }
                },
                None => quote! {
                    let _ = &__captures;
                    return ::core::option::Option::Some(#ret);
                },
            };
            template_arms.push(quote! {
                if let ::core::option::Option::Some(__captures) = Self::RESOURCE_TEMPLATES
                    .get(#index)
                    .and_then(|t| t.template().matches(__uri))
                {
                    #body
                }
            });
            if let (Some(t), Some(vars), Some(l)) = (&typed, &vars, &uri_lit) {
                let st = staticize(t);
                let ty_text = quote!(#t).to_string().replace(' ', "");
                let template_text = l.value().replace('{', "{{").replace('}', "}}");
                let declared = quote_spanned!(t.span()=> <#st as ::mcp_rs_core::typed::template_vars::TemplateVars<'static>>::VARIABLES);
                for v in vars {
                    let msg = format!(
                        "URI template variable `{v}` is not a field of `{ty_text}` (#[derive(TemplateVars)])"
                    );
                    checks.push(quote_spanned! {l.span()=>
                        ::core::assert!(::mcp_rs_core::typed::template_vars::__has(#declared, #v), #msg);
                    });
                }
                let msg = format!(
                    "`{ty_text}` has a field that is not a variable of the URI template \"{template_text}\""
                );
                checks.push(quote_spanned! {l.span()=>
                    ::core::assert!(::mcp_rs_core::typed::template_vars::__all_in(#declared, &[#(#vars),*]), #msg);
                });
            }
        } else {
            if let Some(t) = &typed {
                return Err(Error::new(
                    t.span(),
                    "a fixed #[resource] has no template variables: remove this parameter, or use #[resource_template]",
                ));
            }
            if let Some(l) = lit_str(&uri) {
                if uris.contains(&l.value()) {
                    return Err(Error::new(
                        l.span(),
                        format!("duplicate resource URI \"{}\"", l.value()),
                    ));
                }
                uris.push(l.value());
            }
            let index = resources.len();
            let size = keys.opt("size");
            resources.push(quote! {
                ::mcp_rs_core::model::resources::Resource {
                    uri: #uri,
                    name: #name,
                    title: #title,
                    description: #description,
                    mime_type: #mime_type,
                    size: #size,
                    annotations: #annotations,
                    icons: #icons,
                    meta: #meta,
                }
            });
            fixed_arms.push(quote! {
                if Self::RESOURCES.get(#index).is_some_and(|r| r.uri == __uri) {
                    return ::core::option::Option::Some(#ret);
                }
            });
        }
    }

    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let self_ty = &item.self_ty;
    let set = if options.flag("no_resource_set") {
        quote!()
    } else {
        quote! {
            impl #impl_generics ::mcp_rs_core::model::resources::ResourceSet for #self_ty #where_clause {
                fn len(&self) -> usize {
                    Self::RESOURCES.len()
                }
                fn get(&self, index: usize) -> ::core::option::Option<::mcp_rs_core::model::resources::Resource<'_>> {
                    Self::RESOURCES.get(index).copied()
                }
                fn templates_len(&self) -> usize {
                    Self::RESOURCE_TEMPLATES.len()
                }
                fn template(
                    &self,
                    index: usize,
                ) -> ::core::option::Option<::mcp_rs_core::model::resources::ResourceTemplate<'_>> {
                    Self::RESOURCE_TEMPLATES.get(index).copied()
                }
                fn read(
                    &mut self,
                    request: &::mcp_rs_core::model::resources::ReadRequest<'_>,
                    result: &mut ::mcp_rs_core::model::resources::ReadResult<'_, '_>,
                ) -> ::mcp_rs_core::model::common::Dispatch {
                    match self.read_resource(request, result) {
                        ::core::option::Option::Some(d) => d,
                        ::core::option::Option::None => {
                            result.not_found();
                            ::mcp_rs_core::model::common::Dispatch::Done
                        }
                    }
                }
            }
        }
    };
    let checks = if checks.is_empty() {
        quote!()
    } else {
        let id = format_ident!("_");
        quote!(const #id: () = { #(#checks)* };)
    };
    Ok(quote! {
        #item
        impl #impl_generics #self_ty #where_clause {
            /// The listed resources `#[resources]` generated, in declaration order.
            pub const RESOURCES: &'static [::mcp_rs_core::model::resources::Resource<'static>] = &[#(#resources),*];
            /// The resource templates `#[resources]` generated, in declaration order.
            pub const RESOURCE_TEMPLATES: &'static [::mcp_rs_core::model::resources::ResourceTemplate<'static>] =
                &[#(#templates),*];

            /// Reads the URI of `request`: the listed resource with that URI, else the first
            /// template (in declaration order) that matches it and whose variables parse;
            /// `None` if none does (nothing written).
            #[allow(unused_variables, unreachable_code, clippy::unit_arg, clippy::needless_return)]
            pub fn read_resource(
                &mut self,
                request: &::mcp_rs_core::model::resources::ReadRequest<'_>,
                result: &mut ::mcp_rs_core::model::resources::ReadResult<'_, '_>,
            ) -> ::core::option::Option<::mcp_rs_core::model::common::Dispatch> {
                let __uri_json = request.uri();
                let mut __buf = [0u8; ::mcp_rs_core::typed::template_vars::MAX_URI];
                let __uri: &str = __uri_json.text_in(&mut __buf)?;
                #(#fixed_arms)*
                #(#template_arms)*
                ::core::option::Option::None
            }
        }
        #set
        #checks
    })
}

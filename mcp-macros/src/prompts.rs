//! `#[derive(PromptArgs)]` and `#[prompts]`.
//!
//! The derive on a struct with named fields implements `mcp_rs_core::typed::prompt_args::PromptArgs`
//! (one prompt argument a field); on a unit-only enum it implements
//! `mcp_rs_core::typed::prompt_args::PromptArgValue` (a string from a fixed set, usable as a field
//! type). `#[prompts]` on an inherent `impl` block turns every `#[prompt(...)]` method into a
//! prompt: a `PROMPTS` table, a `render_prompt` dispatcher and the `PromptSet` impl.

pub(crate) mod common;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, GenericParam, ImplItem, ItemImpl, Result};

use crate::attrs::{doc_comment as doc, RenameRule as Rule};
use common::{handler, lit_str, staticize, str_at, unraw, Keys, Param, Ret};

pub(crate) fn derive_args(input: TokenStream) -> TokenStream {
    common::or_errors(derive_inner(input))
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    common::or_errors(expand_inner(attr, item))
}

/// The single lifetime of a derive input (`None`: no lifetime); type and const generics
/// are refused.
pub(crate) fn one_lifetime(input: &DeriveInput, what: &str) -> Result<Option<syn::Lifetime>> {
    let mut lifetime = None;
    for p in &input.generics.params {
        match p {
            GenericParam::Lifetime(l) if lifetime.is_none() => lifetime = Some(l.lifetime.clone()),
            _ => {
                return Err(Error::new(
                    p.span(),
                    format!("{what} supports at most one lifetime parameter and no other generics"),
                ))
            }
        }
    }
    Ok(lifetime)
}

fn derive_inner(input: TokenStream) -> Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(f) => derive_struct(&input, f),
            _ => Err(Error::new(
                input.ident.span(),
                "#[derive(PromptArgs)] needs a struct with named fields (one a prompt argument) \
                 or an enum of unit variants",
            )),
        },
        Data::Enum(e) => derive_enum(&input, e),
        Data::Union(_) => Err(Error::new(
            input.ident.span(),
            "#[derive(PromptArgs)] does not support unions",
        )),
    }
}

fn rename_rule(keys: &Keys) -> Result<Option<Rule>> {
    keys.lit("rename_all")?.map(|l| Rule::parse(&l)).transpose()
}

fn derive_struct(input: &DeriveInput, fields: &syn::FieldsNamed) -> Result<TokenStream> {
    let container = Keys::from_attrs(&input.attrs, &["rename_all"], &[])?;
    let rule = rename_rule(&container)?;
    let lifetime = one_lifetime(input, "#[derive(PromptArgs)]")?;
    let ident = &input.ident;

    let mut names: Vec<String> = Vec::new();
    let mut decls = Vec::new();
    let mut inits = Vec::new();
    let mut slots = Vec::new();
    for (i, f) in fields.named.iter().enumerate() {
        let keys = Keys::from_attrs(&f.attrs, &["rename", "description", "title"], &[])?;
        let field = f
            .ident
            .as_ref()
            .ok_or_else(|| Error::new(f.span(), "unnamed field"))?;
        let name = match keys.lit("rename")? {
            Some(l) => l.value(),
            None => match rule {
                Some(r) => r.apply_to_field(&unraw(field)),
                None => unraw(field),
            },
        };
        if name.is_empty() {
            return Err(Error::new(field.span(), "an argument name cannot be empty"));
        }
        if names.contains(&name) {
            return Err(Error::new(
                field.span(),
                format!("duplicate prompt argument name \"{name}\""),
            ));
        }
        names.push(name.clone());
        let description = match keys.get("description") {
            Some(e) => quote!(::core::option::Option::Some(#e)),
            None => match doc(&f.attrs) {
                Some(d) => quote!(::core::option::Option::Some(#d)),
                None => quote!(::core::option::Option::None),
            },
        };
        let title = keys.opt("title");
        let ty = &f.ty;
        let sty = staticize(ty);
        let lit = str_at(&name, field.span());
        decls.push(quote_spanned! {ty.span()=>
            ::mcp_rs_core::model::prompts::PromptArgument {
                name: #lit,
                title: #title,
                description: #description,
                required: <#sty as ::mcp_rs_core::typed::prompt_args::PromptArgValue<'static>>::REQUIRED,
            }
        });
        let slot = format_ident!("__arg{}", i);
        inits.push(quote_spanned! {ty.span()=>
            #field: ::mcp_rs_core::typed::prompt_args::__field::<#ty>(#lit, #slot)?
        });
        slots.push(slot);
    }

    let (impl_lt, ty_lt) = match &lifetime {
        Some(l) => (quote!(#l), quote!(<#l>)),
        None => (quote!('__i), quote!()),
    };
    Ok(quote! {
        impl<#impl_lt> ::mcp_rs_core::typed::prompt_args::PromptArgs<#impl_lt> for #ident #ty_lt {
            const ARGUMENTS: &'static [::mcp_rs_core::model::prompts::PromptArgument<'static>] = &[#(#decls),*];
            fn parse(
                arguments: ::mcp_rs_core::wire::json::RawJson<#impl_lt>,
            ) -> ::core::result::Result<Self, ::mcp_rs_core::typed::ArgError<#impl_lt>> {
                let [#(#slots),*] = ::mcp_rs_core::typed::prompt_args::__collect(arguments, &[#(#names),*])?;
                ::core::result::Result::Ok(#ident { #(#inits),* })
            }
        }
    })
}

fn derive_enum(input: &DeriveInput, e: &syn::DataEnum) -> Result<TokenStream> {
    let container = Keys::from_attrs(&input.attrs, &["rename_all"], &[])?;
    let rule = rename_rule(&container)?;
    if !input.generics.params.is_empty() {
        return Err(Error::new(
            input.generics.span(),
            "#[derive(PromptArgs)] on an enum supports no generics",
        ));
    }
    if e.variants.is_empty() {
        return Err(Error::new(
            input.ident.span(),
            "#[derive(PromptArgs)] needs at least one variant",
        ));
    }
    let ident = &input.ident;
    let mut names: Vec<String> = Vec::new();
    let mut arms = Vec::new();
    for (i, v) in e.variants.iter().enumerate() {
        if !matches!(v.fields, Fields::Unit) {
            return Err(Error::new(
                v.span(),
                "#[derive(PromptArgs)] on an enum needs unit variants (a prompt argument is a string)",
            ));
        }
        let keys = Keys::from_attrs(&v.attrs, &["rename"], &[])?;
        let name = match keys.lit("rename")? {
            Some(l) => l.value(),
            None => match rule {
                Some(r) => r.apply_to_variant(&unraw(&v.ident)),
                None => unraw(&v.ident),
            },
        };
        if names.contains(&name) {
            return Err(Error::new(
                v.ident.span(),
                format!("duplicate value \"{name}\""),
            ));
        }
        names.push(name);
        let vi = &v.ident;
        arms.push(quote!(#i => ::core::result::Result::Ok(#ident::#vi)));
    }
    let allowed = names.join(", ");
    Ok(quote! {
        impl<'__i> ::mcp_rs_core::typed::prompt_args::PromptArgValue<'__i> for #ident {
            const CHOICES: &'static [&'static str] = &[#(#names),*];
            fn from_arg(
                value: ::mcp_rs_core::wire::json::JsonStr<'__i>,
            ) -> ::core::result::Result<Self, ::mcp_rs_core::typed::Problem<'__i>> {
                match ::mcp_rs_core::typed::prompt_args::__choice(value, Self::CHOICES, #allowed)? {
                    #(#arms,)*
                    _ => ::core::result::Result::Err(::mcp_rs_core::typed::Problem::NotInEnum(#allowed)),
                }
            }
        }
    })
}

/// Checks that the `impl` block is inherent, for `#[prompts]` / `#[resources]`.
pub(crate) fn inherent(item: &ItemImpl, what: &str) -> Result<()> {
    if let Some((_, path, _)) = &item.trait_ {
        return Err(Error::new(
            path.span(),
            format!("#[{what}] goes on an inherent impl block (`impl MyType {{ ... }}`)"),
        ));
    }
    Ok(())
}

/// The call of a handler method with its parameters in declared order.
pub(crate) fn call(
    method: &syn::Ident,
    receiver: bool,
    params: &[Param],
    typed: &TokenStream,
) -> TokenStream {
    let args = params.iter().map(|p| match p {
        Param::Typed(_) => typed.clone(),
        Param::Request => quote!(request),
        Param::Result => quote!(&mut *result),
        Param::Uri => quote!(__uri),
    });
    if receiver {
        quote!(self.#method(#(#args),*))
    } else {
        quote!(Self::#method(#(#args),*))
    }
}

/// `Dispatch` from a handler's return value; an `Err` fails the result (`result.fail(&e)`
/// when `with_error`, else `result.fail()`).
pub(crate) fn returned(ret: &Ret, call: TokenStream, with_error: bool) -> TokenStream {
    let fail = if with_error {
        quote!(result.fail(&e))
    } else {
        quote!({
            let _ = e;
            result.fail()
        })
    };
    match ret {
        Ret::Unit => quote!({
            #call;
            ::mcp_rs_core::model::common::Dispatch::Done
        }),
        Ret::Dispatch => call,
        Ret::Result => quote!(match #call {
            ::core::result::Result::Ok(()) => ::mcp_rs_core::model::common::Dispatch::Done,
            ::core::result::Result::Err(e) => {
                #fail;
                ::mcp_rs_core::model::common::Dispatch::Done
            }
        }),
    }
}

fn expand_inner(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let options = Keys::parse(attr, &[], &["no_prompt_set"])?;
    let mut item: ItemImpl = syn::parse2(item)?;
    inherent(&item, "prompts")?;

    let mut names: Vec<String> = Vec::new();
    let mut table = Vec::new();
    let mut arms = Vec::new();
    for it in &mut item.items {
        let ImplItem::Fn(f) = it else { continue };
        let attrs = common::take_attrs(&mut f.attrs, "prompt");
        let Some(a) = attrs.first() else { continue };
        if let Some(second) = attrs.get(1) {
            return Err(Error::new(
                second.span(),
                "a second #[prompt] on one method",
            ));
        }
        let keys = Keys::parse(
            common::attr_tokens(a)?,
            &["name", "title", "description", "icons", "meta", "requires"],
            &[],
        )?;
        let h = handler(&f.sig, "GetPromptRequest", "PromptResult", false, "prompt")?;
        let method = &f.sig.ident;
        let name = match keys.get("name") {
            Some(e) => e.clone(),
            None => {
                let lit = str_at(&unraw(method), method.span());
                syn::parse_quote!(#lit)
            }
        };
        if let Some(l) = lit_str(&name) {
            if l.value().is_empty() {
                return Err(Error::new(l.span(), "a prompt name cannot be empty"));
            }
            if names.contains(&l.value()) {
                return Err(Error::new(
                    name.span(),
                    format!("duplicate prompt name \"{}\"", l.value()),
                ));
            }
            names.push(l.value());
        }
        let description = match keys.get("description") {
            Some(e) => quote!(::core::option::Option::Some(#e)),
            None => match doc(&f.attrs) {
                Some(d) => quote!(::core::option::Option::Some(#d)),
                None => quote!(::core::option::Option::None),
            },
        };
        let title = keys.opt("title");
        let meta = keys.opt("meta");
        let icons = keys.get("icons").map_or(quote!(&[]), |e| quote!(#e));
        let requires = keys.get("requires").map_or(
            quote!(::mcp_rs_core::model::common::ClientCaps::NONE),
            |e| quote!(#e),
        );
        let typed = h.params.iter().find_map(|p| match p {
            Param::Typed(t) => Some((**t).clone()),
            _ => None,
        });
        let arguments = match &typed {
            Some(t) => {
                let st = staticize(t);
                quote_spanned!(t.span()=> <#st as ::mcp_rs_core::typed::prompt_args::PromptArgs<'static>>::ARGUMENTS)
            }
            None => quote!(&[]),
        };
        table.push(quote! {
            ::mcp_rs_core::model::prompts::Prompt {
                name: #name,
                title: #title,
                description: #description,
                arguments: #arguments,
                icons: #icons,
                meta: #meta,
                requires: #requires,
            }
        });
        let index = arms.len();
        let body = match &typed {
            Some(t) => {
                let c = call(method, h.receiver, &h.params, &quote!(__args));
                let ret = returned(&h.ret, c, true);
                quote! {{
                    let __args: #t = match ::mcp_rs_core::typed::prompt_args::PromptArgs::parse(request.arguments()) {
                        ::core::result::Result::Ok(a) => a,
                        ::core::result::Result::Err(e) => {
                            result.invalid_arguments(&e);
                            return ::core::option::Option::Some(::mcp_rs_core::model::common::Dispatch::Done);
                        }
                    };
                    #ret
                }}
            }
            None => {
                let c = call(method, h.receiver, &h.params, &quote!());
                let ret = returned(&h.ret, c, true);
                // No declared arguments: any given one is unknown.
                quote! {{
                    if let ::core::result::Result::Err(e) =
                        ::mcp_rs_core::typed::prompt_args::__collect(request.arguments(), &[])
                    {
                        result.invalid_arguments(&e);
                        return ::core::option::Option::Some(::mcp_rs_core::model::common::Dispatch::Done);
                    }
                    #ret
                }}
            }
        };
        arms.push(quote!(#index => ::core::option::Option::Some(#body)));
    }

    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let self_ty = &item.self_ty;
    let set = if options.flag("no_prompt_set") {
        quote!()
    } else {
        quote! {
            impl #impl_generics ::mcp_rs_core::model::prompts::PromptSet for #self_ty #where_clause {
                fn len(&self) -> usize {
                    Self::PROMPTS.len()
                }
                fn get(&self, index: usize) -> ::core::option::Option<::mcp_rs_core::model::prompts::Prompt<'_>> {
                    Self::PROMPTS.get(index).copied()
                }
                fn get_prompt(
                    &mut self,
                    request: &::mcp_rs_core::model::prompts::GetPromptRequest<'_>,
                    result: &mut ::mcp_rs_core::model::prompts::PromptResult<'_, '_>,
                ) -> ::mcp_rs_core::model::common::Dispatch {
                    match self.render_prompt(request.prompt_index(), request, result) {
                        ::core::option::Option::Some(d) => d,
                        ::core::option::Option::None => {
                            result.fail(&"unknown prompt index");
                            ::mcp_rs_core::model::common::Dispatch::Done
                        }
                    }
                }
            }
        }
    };
    Ok(quote! {
        #item
        impl #impl_generics #self_ty #where_clause {
            /// The prompts `#[prompts]` generated, in declaration order.
            pub const PROMPTS: &'static [::mcp_rs_core::model::prompts::Prompt<'static>] = &[#(#table),*];

            /// Renders the prompt at `index` of [`Self::PROMPTS`] (its arguments parsed into
            /// the method's typed struct first); `None` if there is no such prompt.
            #[allow(unused_variables, clippy::unit_arg)]
            pub fn render_prompt(
                &mut self,
                index: usize,
                request: &::mcp_rs_core::model::prompts::GetPromptRequest<'_>,
                result: &mut ::mcp_rs_core::model::prompts::PromptResult<'_, '_>,
            ) -> ::core::option::Option<::mcp_rs_core::model::common::Dispatch> {
                match index {
                    #(#arms,)*
                    _ => ::core::option::Option::None,
                }
            }
        }
        #set
    })
}

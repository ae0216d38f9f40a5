//! `#[derive(ToolOutput)]`: on a struct with named fields, `ToolOutput` and `OutputValue`
//! (`outputSchema` and the writer of `structuredContent`); on a unit-only enum,
//! `OutputValue`.
//!
//! Field attributes are those of `#[derive(ToolArgs)]`; on output they only shape the
//! schema (`minimum`, lengths, `default`, ... are promises of the tool, not checked when
//! writing). `Option<T>` fields are left out of `required` and omitted when `None`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput};

use crate::args::{
    enum_body, enum_variants, fields, impl_lifetime, lifetime_of, object_body, Side,
};
use crate::attrs;

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    match syn::parse2::<DeriveInput>(input).and_then(|input| expand(&input)) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let container = attrs::container_attrs(&input.attrs)?;
    let lifetime = lifetime_of(input)?;
    let ident = &input.ident;
    match &input.data {
        Data::Struct(_) => {
            if container.allow_unknown {
                return Err(syn::Error::new(
                    ident.span(),
                    "`allow_unknown` applies to `#[derive(ToolArgs)]` only",
                ));
            }
            let fields = fields(input, &container, Side::Output)?;
            let body = object_body(&fields, Side::Output, true)?;
            let (l, generics) = impl_lifetime(&lifetime);
            let impl_generics = if lifetime.is_some() {
                quote!(<#l>)
            } else {
                quote!()
            };
            let static_self = if lifetime.is_some() {
                quote!(#ident<'static>)
            } else {
                quote!(#ident)
            };
            let writes = fields.iter().map(|f| {
                let name = &f.name;
                let field = &f.ident;
                if f.optional {
                    quote! {
                        if let ::core::option::Option::Some(value) = &self.#field {
                            w.key(#name);
                            ::mcp_rs_core::typed::OutputValue::write_value(value, w);
                        }
                    }
                } else {
                    quote! {
                        w.key(#name);
                        ::mcp_rs_core::typed::OutputValue::write_value(&self.#field, w);
                    }
                }
            });
            Ok(quote! {
                impl #impl_generics ::mcp_rs_core::typed::OutputValue for #ident #generics {
                    const SCHEMA_BODY: ::mcp_rs_core::typed::SchemaText = #body;
                    fn write_value(&self, w: &mut ::mcp_rs_core::wire::json::JsonWriter<'_>) {
                        w.begin_object();
                        #(#writes)*
                        w.end_object();
                    }
                }

                impl #impl_generics ::mcp_rs_core::typed::ToolOutput for #ident #generics {
                    const SCHEMA: &'static str = ::mcp_rs_core::schema_str!(
                        ::mcp_rs_core::typed::SchemaText::Parts(&[
                            ::mcp_rs_core::typed::SchemaText::Text("{"),
                            <#static_self as ::mcp_rs_core::typed::OutputValue>::SCHEMA_BODY,
                            ::mcp_rs_core::typed::SchemaText::Text("}"),
                        ])
                    );
                    fn write(&self, w: &mut ::mcp_rs_core::wire::json::JsonWriter<'_>) {
                        ::mcp_rs_core::typed::OutputValue::write_value(self, w);
                    }
                }
            })
        }
        Data::Enum(data) => {
            let variants = enum_variants(input, data, &container)?;
            let body = enum_body(&variants);
            let arms = variants
                .iter()
                .map(|(v, name)| quote!(#ident::#v => #name,));
            Ok(quote! {
                impl ::mcp_rs_core::typed::OutputValue for #ident {
                    const SCHEMA_BODY: ::mcp_rs_core::typed::SchemaText =
                        ::mcp_rs_core::typed::SchemaText::Text(#body);
                    fn write_value(&self, w: &mut ::mcp_rs_core::wire::json::JsonWriter<'_>) {
                        w.string(match self {
                            #(#arms)*
                        });
                    }
                }
            })
        }
        Data::Union(u) => Err(syn::Error::new(
            u.union_token.span,
            "unions are not supported: use a struct with named fields or a unit-only enum",
        )),
    }
}

//! `#[derive(...)]` for output (stub: to be written).

use proc_macro2::TokenStream;

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let _ = input;
    quote::quote!(compile_error!("not implemented yet");)
}

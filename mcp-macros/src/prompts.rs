//! `#[derive(PromptArgs)]` and `#[prompts]` (stubs: to be written).

use proc_macro2::TokenStream;

pub(crate) fn derive_args(input: TokenStream) -> TokenStream {
    let _ = input;
    quote::quote!(compile_error!("not implemented yet");)
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let _ = attr;
    item
}

//! `#[tools]` (stub: to be written).

use proc_macro2::TokenStream;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let _ = attr;
    item
}

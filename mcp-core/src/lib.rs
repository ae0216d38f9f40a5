//! mcp-core: placeholder crate docs, rewritten once the session lands.
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod framing;
pub mod json;
pub mod pagination;

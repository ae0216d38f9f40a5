//! The wire layer: JSON ([`json`]), JSON-RPC 2.0 ([`jsonrpc`]), newline framing
//! ([`framing`]), the revision table ([`version`]), the method table ([`method`]), borrowed
//! views of request parameters and `_meta` ([`params`]) and RFC 6570 URI templates
//! ([`uri_template`]). Nothing here knows what a tool or a session is.

pub mod framing;
pub mod json;
pub mod jsonrpc;
pub mod method;
pub mod params;
pub mod peek;
#[cfg(test)]
pub(crate) mod test_rng;
pub mod uri_template;
pub mod version;

pub use method::{
    Capability, Eras, Method, Notification, ServerMethod, ServerNotification, Target, METHODS,
};
pub use params::{Meta, Params};

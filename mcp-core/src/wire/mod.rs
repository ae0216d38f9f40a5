//! The wire layer between JSON-RPC and protocol meaning: the method table and borrowed,
//! typed views of request parameters and `_meta`.

pub mod method;
pub mod params;

pub use method::{Capability, Eras, Method, Notification, Target, METHODS};
pub use params::{Meta, Params};

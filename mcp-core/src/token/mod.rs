//! Tokens the server hands out and verifies: keyed MACs and base64url ([`mac`]), list
//! cursors ([`cursor`]) and sealed 2026-07-28 `requestState` ([`seal`]). Internal: the
//! public names are [`SecretKey`](crate::SecretKey), `PreviousKey` and
//! [`ListKind`](crate::ListKind) at the crate root.
//!
//! Depends on the wire layer only.

pub mod cursor;
pub mod mac;
pub mod seal;

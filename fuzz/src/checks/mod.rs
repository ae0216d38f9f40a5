//! Invariant checks shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the
//! stable replay test (`mcp-core/tests/corpus_replay.rs`, which includes this file with
//! `#[path]`; being a `mod.rs`, its submodules resolve beside it). Every check panics on a
//! violated invariant; none depends on libFuzzer.
//!
//! | file | target | what it checks |
//! |---|---|---|
//! | `mod.rs` | | shared helpers: serde nesting depth, serde_json's own documented bounds |
//! | `raw.rs` | | (a helper) an independent reader of valid JSON text: raw members, elements, ids |
//! | `json_scan.rs` | `json_scan` | the scanner on any bytes, against serde_json: exact, monotonic depth bound; same structure, numbers bit-exact, strings decoded; `from_json` agrees |
//! | `json_roundtrip.rs` | `json_roundtrip` | `JsonWriter` op sequences: one valid document that reads back equal; a small buffer reports the exact size and writes a correct prefix |
//! | `framing.rs` | `framing` | `LineFramer` (`push` whole or chunked, `spare`/`commit`) against a plain reference |
//! | `client/` | `client` | operation sequences against a live sans-IO `Client`: every frame it writes, every outcome exactly once, timeouts, cancellation, retries, answers to server requests (its `mod.rs` has its own table) |
//! | `session/` | `session` | operation sequences against a live `Session`: every request answered exactly once, frames, calls, state, listen streams, server-to-client requests (its `mod.rs` has its own table) |
//!
//! The `http_headers` target's checks are in `../http_checks.rs`, outside this folder: they
//! need `mcp-rs-tokio`, so only `mcp-tokio/tests/http_fuzz_replay.rs` includes them.
//!
//! Dependencies: `mcp_rs_core` (feature `serde`), `serde_json` (with `float_roundtrip`, which the
//! workspace test build also gets through `jsonschema`) and `arbitrary` (derive).
#![allow(dead_code)]
#![allow(clippy::too_many_lines)]

pub mod client;
pub mod framing;
pub mod json_roundtrip;
pub mod json_scan;
pub mod raw;
pub mod session;

use serde_json::Value;

/// Nesting depth of a serde value (`[[1]]` is 2).
pub fn depth_of(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

/// Whether serde_json rejected a text only because of one of its own documented bounds
/// (numbers beyond `f64`, nesting beyond 127).
pub fn serde_bound(e: &serde_json::Error) -> Option<&'static str> {
    let m = e.to_string();
    if m.starts_with("number out of range") {
        Some("number")
    } else if m.starts_with("recursion limit exceeded") {
        Some("depth")
    } else {
        None
    }
}

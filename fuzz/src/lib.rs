//! Invariant checks shared by the fuzz targets and `mcp-core/tests/corpus_replay.rs`
//! (which includes `checks.rs` with `#[path]`, so it must stay free of libFuzzer).
pub mod checks;

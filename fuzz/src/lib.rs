//! Invariant checks shared by the fuzz targets and `mcp-core/tests/corpus_replay.rs`
//! (which includes `checks/mod.rs` and `seeds.rs` with `#[path]`, so they must stay free of
//! libFuzzer).
pub mod checks;
pub mod embedded_checks;
pub mod http_checks;
pub mod seeds;

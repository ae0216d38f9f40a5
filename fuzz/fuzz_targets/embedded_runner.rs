#![no_main]
use libfuzzer_sys::fuzz_target;
use mcp_core_fuzz::embedded_checks::{check, Input};

fuzz_target!(|input: Input| {
    check(&input);
});

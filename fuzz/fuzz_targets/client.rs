#![no_main]
use libfuzzer_sys::fuzz_target;
use mcp_core_fuzz::checks::client::{check, Input};

fuzz_target!(|input: Input| {
    let _ = check(&input);
});

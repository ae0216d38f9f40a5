#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp_core_fuzz::checks::json_scan::check(data);
});

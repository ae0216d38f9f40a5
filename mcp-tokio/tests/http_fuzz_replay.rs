//! Replays the `http_headers` fuzz corpus (`fuzz/corpus/http_headers`) on stable, plus
//! inputs decoded from a fixed pseudo-random stream, through the same invariant checks the
//! fuzz target runs (`fuzz/src/http_checks.rs`).
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

// The fuzz crate exports these to its targets; here they are private.
#[allow(unreachable_pub)]
#[path = "../../fuzz/src/http_checks.rs"]
mod http_checks;

use arbitrary::{Arbitrary, Unstructured};

fn run(bytes: &[u8]) {
    if let Ok(input) = http_checks::Input::arbitrary_take_rest(Unstructured::new(bytes)) {
        http_checks::check(&input);
    }
}

#[test]
fn corpus_replays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/http_headers");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus directory") {
        let path = entry.unwrap().path();
        run(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "empty corpus in {}", dir.display());
}

#[test]
fn random_inputs_hold_the_invariants() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut buf = vec![0u8; 512];
    for _ in 0..20_000 {
        for b in buf.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        run(&buf);
    }
}

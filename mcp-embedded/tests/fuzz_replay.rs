//! Replays the `embedded_runner` fuzz corpus (`fuzz/corpus/embedded_runner`) on stable, plus
//! inputs decoded from a fixed pseudo-random stream, through the same invariant checks the
//! fuzz target runs (`fuzz/src/embedded_checks.rs`): arbitrary bytes into the blocking
//! runner never panic, every frame is one JSON-RPC line within the transmit buffer, and the
//! runner answers a final request after any input.

// The fuzz crate exports these to its targets; here they are private.
#[allow(unreachable_pub)]
#[path = "../../fuzz/src/embedded_checks.rs"]
mod embedded_checks;

use arbitrary::{Arbitrary, Unstructured};
use embedded_checks::{check, Input, Op};

fn run(bytes: &[u8]) {
    if let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(bytes)) {
        check(&input);
    }
}

#[test]
fn corpus_replays() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/embedded_runner");
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
    let mut buf = vec![0u8; 768];
    for _ in 0..3_000 {
        for b in buf.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        run(&buf);
    }
}

/// Hand-written runs through every operation: the deep states the canned lines reach.
#[test]
fn every_operation_in_both_eras() {
    let every = |read_size| Input {
        read_size,
        ops: (0..16)
            .map(Op::Canned)
            .chain([
                Op::Progress(0, 5, true),
                Op::Progress(1, 9, false),
                Op::ResourceUpdated,
                Op::ListChanged(0),
                Op::Bytes(b"{garbage\n".to_vec()),
                Op::Bytes(vec![b'x'; 2000]),
                Op::RxError,
                Op::Bytes(b"tail of a broken line\n".to_vec()),
                Op::Complete(0),
                Op::Fail(0),
                Op::Advance(60_000),
                Op::Complete(1),
                // An open line without its newline: the final request still gets through.
                Op::Bytes(br#"{"jsonrpc":"2.0","id":"final","method":"#.to_vec()),
            ])
            .collect(),
    };
    for read_size in [0, 6, 99, 255] {
        check(&every(read_size));
    }
}

//! Replays the fuzz corpora (`fuzz/corpus/<target>/`) on stable through the same invariant
//! checks the cargo-fuzz targets run (`fuzz/src/checks/`), and validates every frame the
//! session emits against the official JSON schema of the revision it was emitted under
//! (too slow inside libFuzzer, cheap here).

// The fuzz crate exports these to its targets; here they are private.
#[allow(unreachable_pub)]
#[path = "../../fuzz/src/checks/mod.rs"]
mod checks;

// The fuzz crate exports these to its targets; here they are private.
#[allow(unreachable_pub)]
#[path = "../../fuzz/src/seeds.rs"]
mod seeds;

#[path = "harness/mod.rs"]
mod harness;

use std::path::PathBuf;

use arbitrary::{Arbitrary, Unstructured};
use checks::session::{self, Frame};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read corpus file");
            (p, bytes)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    files
}

/// Decodes a corpus file exactly as `libfuzzer_sys::fuzz_target!` does for a typed input.
fn decode<'a, T: Arbitrary<'a>>(bytes: &'a [u8]) -> Option<T> {
    if bytes.len() < T::size_hint(0).0 {
        return None;
    }
    T::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}

/// Runs `check` per file and names the file in any panic.
fn replay<F: FnMut(&[u8])>(target: &str, mut check: F) -> usize {
    let files = corpus(target);
    for (path, bytes) in &files {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(bytes)));
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| e.downcast_ref::<&str>().copied())
                .unwrap_or("?");
            panic!("{target}: {} fails: {msg}", path.display());
        }
    }
    files.len()
}

fn validate(frames: &[Frame]) -> usize {
    for f in frames {
        if let Err(e) = harness::validate_server_message(&f.rev, f.method.as_deref(), &f.value) {
            panic!("schema violation for {}:\n{e}", f.value);
        }
    }
    frames.len()
}

#[test]
fn json_scan_corpus() {
    let (mut accepted, mut frames) = (0, 0);
    let n = replay("json_scan", |bytes| {
        let o = checks::json_scan::check(bytes);
        accepted += usize::from(o.accepted);
        // The same text as a message to a fresh session, to one initialized at each legacy
        // revision, and inside a 2025-03-26 batch; every reply is schema-checked.
        let mut runs: Vec<Vec<Vec<u8>>> = vec![vec![bytes.to_vec()]];
        for rev in harness::spec_revisions()
            .iter()
            .filter(|r| **r != session::MODERN)
        {
            let init = format!(
                r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":"{rev}","capabilities":{{}},"clientInfo":{{"name":"replay","version":"1"}}}}}}"#
            );
            let ready = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec();
            runs.push(vec![init.into_bytes(), ready, bytes.to_vec()]);
        }
        for run in runs {
            let msgs: Vec<&[u8]> = run.iter().map(Vec::as_slice).collect();
            frames += validate(&session::check_messages(&msgs).frames);
        }
    });
    println!("json_scan: {n} files, {accepted} valid JSON, {frames} session frames schema-checked");
}

#[test]
fn json_roundtrip_corpus() {
    let mut decoded = 0;
    let n = replay("json_roundtrip", |bytes| {
        if let Some(input) = decode::<checks::json_roundtrip::Input>(bytes) {
            decoded += 1;
            checks::json_roundtrip::check(&input);
        }
    });
    println!("json_roundtrip: {n} files, {decoded} decoded");
}

#[test]
fn framing_corpus() {
    let mut decoded = 0;
    let n = replay("framing", |bytes| {
        if let Some(input) = decode::<checks::framing::Input>(bytes) {
            decoded += 1;
            checks::framing::check(&input);
        }
    });
    println!("framing: {n} files, {decoded} decoded");
}

#[test]
fn session_corpus() {
    let (mut decoded, mut messages, mut frames, mut completions) = (0, 0, 0, 0);
    let (mut unreadable, mut overflowed, mut excused) = (0, 0, 0);
    let n = replay("session", |bytes| {
        if let Some(input) = decode::<session::Input>(bytes) {
            decoded += 1;
            let report = session::check(&input);
            messages += report.messages;
            completions += report.completions;
            unreadable += report.unreadable_messages;
            overflowed += report.overflowed_batches;
            excused += report.excused;
            frames += validate(&report.frames);
        }
    });
    println!(
        "session: {n} files, {decoded} decoded, {messages} messages, {completions} completions, \
         {frames} frames schema-checked; {unreadable} messages serde_json cannot read, \
         {overflowed} overflowed batches, {excused} requests excused from a reply"
    );
}

#[test]
fn client_corpus() {
    let (mut decoded, mut connected) = (0, 0);
    let (mut requests, mut outcomes, mut frames) = (0, 0, 0);
    let n = replay("client", |bytes| {
        if let Some(input) = decode::<checks::client::Input>(bytes) {
            decoded += 1;
            let r = checks::client::check(&input);
            connected += usize::from(r.connected);
            requests += r.requests;
            outcomes += r.outcomes;
            frames += r.frames;
        }
    });
    println!(
        "client: {n} files, {decoded} decoded, {connected} connected, {requests} requests, \
         {outcomes} outcomes, {frames} server frames"
    );
    assert!(
        connected > 0 && outcomes > 0,
        "the client corpus never gets past the handshake"
    );
}

/// A scripted client run: both handshakes, requests, answers of each kind, a round, a
/// timeout and server requests go through the model (guards against a vacuous one).
#[test]
fn client_model_is_not_vacuous() {
    use checks::client::{Body, Cfg, HandshakeBody, IdForm, Input, Op, Req, SId, SMethod, Text};
    let cfg = |legacy| Cfg {
        slots: 4,
        legacy,
        caps: 7,
        timeout: 1000,
        depth: 28,
        out: 1000,
    };
    let send = |request| Op::Send {
        request,
        progress: true,
        timeout: None,
        level: false,
    };
    let answer = |pick, body| Op::Answer {
        pick,
        id: IdForm::Exact,
        body,
    };
    let modern = Input {
        cfg: cfg(false),
        ops: vec![
            Op::Connect,
            Op::Handshake(HandshakeBody::Discover(vec![0, 1])),
            send(Req::CallTool(Text::Pool(0), Some(0))),
            answer(1, Body::Result(8)), // input_required
            Op::Retry {
                pick: 0,
                same: true,
                answers: 3,
                state: true,
            },
            answer(2, Body::Result(2)), // the retry's result
            send(Req::ListTools(None)),
            Op::Advance(1000),          // times out
            answer(3, Body::Result(1)), // too late: unknown
        ],
    };
    let r = checks::client::check(&modern);
    assert!(r.connected);
    assert_eq!((r.requests, r.outcomes), (4, 3), "{r:?}");
    let legacy = Input {
        cfg: cfg(true),
        ops: vec![
            Op::Connect,
            Op::Handshake(HandshakeBody::Initialize(1, true)),
            Op::ServerRequest {
                method: SMethod::Ping,
                id: SId::Number(7),
            },
            Op::ServerRequest {
                method: SMethod::Roots,
                id: SId::Text("r".into()),
            },
            Op::Respond {
                pick: 0,
                error: false,
            },
            send(Req::Subscribe(Text::Pool(2))),
            answer(1, Body::Error(-32602, true)),
            Op::Cancel(0),
        ],
    };
    let r = checks::client::check(&legacy);
    assert!(r.connected);
    assert_eq!((r.requests, r.outcomes), (2, 1), "{r:?}");
}

/// The checks themselves catch violations (guards against a vacuous model).
#[test]
fn session_model_is_not_vacuous() {
    let msgs: [&[u8]; 4] = [
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        br#"[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"__seq":1}}},{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow2"}}]"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
    ];
    let report = session::check_messages(&msgs);
    assert_eq!(report.cancels, 1);
    assert_eq!(report.completions, 1);
    assert_eq!(report.unreadable_messages, 0);
    assert_eq!(report.excused, 0);
    // initialize, the batch reply (ping), the completion of call 2.
    assert_eq!(report.frames.len(), 3, "{:#?}", report.frames);
    validate(&report.frames);
}

/// The hand-written session seeds (`fuzz/src/seeds.rs`): each round-trips through
/// `arbitrary`, is committed as `fuzz/corpus/session/seed-<name>` (rewrite them with
/// `MCP_WRITE_SEEDS=1` after a grammar change), and exercises what it is named for.
#[test]
fn session_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/session");
    let write = std::env::var_os("MCP_WRITE_SEEDS").is_some();
    for (name, input) in seeds::seeds() {
        let bytes = seeds::encode(&input);
        let decoded = decode::<session::Input>(&bytes).expect("a seed decodes");
        assert_eq!(
            format!("{decoded:?}"),
            format!("{input:?}"),
            "seed {name} does not round-trip through arbitrary"
        );
        let path = dir.join(format!("seed-{name}"));
        if write {
            std::fs::write(&path, &bytes).expect("write seed");
        } else {
            assert!(
                std::fs::read(&path).ok() == Some(bytes),
                "{} is missing or stale: rewrite the seeds with MCP_WRITE_SEEDS=1 \
                 cargo test -p mcp-rs-core --test corpus_replay session_seeds",
                path.display()
            );
        }
        let r = session::check(&input);
        let frames = validate(&r.frames);
        println!(
            "seed {name}: {frames} frames, {} completions, {} cancels, {} out requests, \
             {} routed, {} timeouts, {} listens, {} listen changes, {} states, \
             {} bad states, {} claims",
            r.completions,
            r.cancels,
            r.out_requests,
            r.routed,
            r.timeouts,
            r.listens,
            r.listen_changes,
            r.states,
            r.bad_states,
            r.claims
        );
        let exercised = match name {
            "state" => r.states >= 4 && r.bad_states >= 6 && r.claims >= 20,
            "requests" => r.out_requests >= 5 && r.routed >= 1 && r.timeouts >= 3,
            "requests-batch" => r.out_requests >= 3 && r.routed >= 1 && r.cancels >= 1,
            "listen" => r.listens >= 3 && r.listen_changes >= 3 && r.cancels >= 1,
            "resources" | "resources-small" => r.claims >= 9 && r.completions >= 2,
            "prompts" => r.claims >= 10 && r.completions >= 2,
            _ => r.claims >= 8,
        };
        assert!(exercised, "seed {name} no longer exercises what it is for");
    }
}

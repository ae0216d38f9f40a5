//! Both runners over in-memory embedded-io pipes: full legacy and modern exchanges, input
//! split at random points, injected receive errors (overruns) with resync, oversized lines.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mcp_rs_core::{
    CallRequest, Config, Dispatch, ServerInfo, Session, SessionStorage, Tool, ToolResult, ToolSet,
};
use mcp_rs_embedded::{
    asynch, blocking, Buffers, Error, ErrorKind, Stats, Step, DEFERRED_CALL_MESSAGE,
};
use serde::Deserialize;
use serde_json::{json, Value};

// ---- a tiny deterministic PRNG (xorshift64*) -------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// ---- the pipe ------------------------------------------------------------------------

/// A receive error, as a UART driver would report an overrun.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Overrun;

impl core::fmt::Display for Overrun {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("receive overrun")
    }
}
impl core::error::Error for Overrun {}
impl embedded_io::Error for Overrun {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Other
    }
}

/// Where the reader fails: before delivering byte `at`, losing `lost` bytes from there.
#[derive(Clone, Copy, Debug)]
struct Fault {
    at: usize,
    lost: usize,
}

/// The receiving end: hands out `data` in random-sized chunks (1..=max_chunk), failing at
/// the configured faults.
struct Reader {
    data: Vec<u8>,
    pos: usize,
    faults: Vec<Fault>,
    rng: Rng,
    max_chunk: usize,
}

impl Reader {
    fn new(data: Vec<u8>, seed: u64, max_chunk: usize) -> Self {
        Reader {
            data,
            pos: 0,
            faults: Vec::new(),
            rng: Rng::new(seed),
            max_chunk,
        }
    }
    fn with_faults(mut self, mut faults: Vec<Fault>) -> Self {
        faults.sort_by_key(|f| f.at);
        self.faults = faults;
        self
    }
    fn read_sync(&mut self, buf: &mut [u8]) -> Result<usize, Overrun> {
        if let Some(f) = self.faults.first().copied() {
            if self.pos == f.at {
                self.faults.remove(0);
                self.pos = (self.pos + f.lost).min(self.data.len());
                return Err(Overrun);
            }
        }
        let mut end = self.data.len();
        if let Some(f) = self.faults.first() {
            end = end.min(f.at);
        }
        let want = 1 + self.rng.below(self.max_chunk);
        let n = want.min(buf.len()).min(end - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl embedded_io::ErrorType for Reader {
    type Error = Overrun;
}
impl embedded_io::Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Overrun> {
        self.read_sync(buf)
    }
}
impl embedded_io_async::Read for Reader {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Overrun> {
        if self.rng.below(3) == 0 {
            YieldOnce(false).await;
        }
        self.read_sync(buf)
    }
}

/// The transmitting end: accepts a random number of bytes per write.
struct Writer {
    out: Vec<u8>,
    rng: Rng,
    flushes: usize,
}

impl Writer {
    fn new(seed: u64) -> Self {
        Writer {
            out: Vec::new(),
            rng: Rng::new(seed ^ 0xABCD),
            flushes: 0,
        }
    }
    fn write_sync(&mut self, buf: &[u8]) -> usize {
        let n = (1 + self.rng.below(64)).min(buf.len());
        self.out.extend_from_slice(&buf[..n]);
        n
    }
    /// The frames written, parsed.
    fn frames(&self) -> Vec<Value> {
        let text = std::str::from_utf8(&self.out).expect("output is UTF-8");
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "output ends with a newline"
        );
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl embedded_io::ErrorType for Writer {
    type Error = Infallible;
}
impl embedded_io::Write for Writer {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        Ok(self.write_sync(buf))
    }
    fn flush(&mut self) -> Result<(), Infallible> {
        self.flushes += 1;
        Ok(())
    }
}
impl embedded_io_async::Write for Writer {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        if self.rng.below(4) == 0 {
            YieldOnce(false).await;
        }
        Ok(self.write_sync(buf))
    }
    async fn flush(&mut self) -> Result<(), Infallible> {
        self.flushes += 1;
        Ok(())
    }
}

// ---- a minimal executor ----------------------------------------------------------------

/// Returns `Pending` once (waking itself), then `Ready`.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Polls a future to completion with a no-op waker (every future here is ready or wakes
/// itself immediately).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..10_000_000 {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("future never completed");
}

// ---- the server under test -------------------------------------------------------------

static TOOLS: [Tool<'static>; 3] = [
    Tool::new(
        "add",
        r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#,
    ),
    Tool::new(
        "echo",
        r#"{"type":"object","properties":{"text":{"type":"string"}}}"#,
    ),
    Tool::new("later", r#"{"type":"object"}"#),
];

struct Tools;

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

impl ToolSet for Tools {
    fn len(&self) -> usize {
        TOOLS.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        TOOLS.get(index).copied()
    }
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        match request.tool_index() {
            0 => match request.parse_args::<AddArgs>(&mut []) {
                Ok(AddArgs { a, b }) => {
                    result.text_fmt(format_args!("{}", a + b));
                }
                Err(e) => {
                    result.fail(format_args!("{e}"));
                }
            },
            1 => {
                result.text(request.args().as_str());
            }
            _ => return Dispatch::Defer,
        }
        Dispatch::Done
    }
}

const INFO: ServerInfo<'static> = ServerInfo {
    name: "pipe-test",
    version: "0.0.1",
    title: None,
    description: None,
    website_url: None,
    icons: &[],
    instructions: None,
};

const RX: usize = 256;
const TX: usize = 1024;

fn run_blocking(reader: &mut Reader, writer: &mut Writer) -> (Stats, Vec<Step>) {
    let mut storage = SessionStorage::<2>::new();
    let mut session = Session::new(
        &INFO,
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        &mut storage,
    );
    let mut buffers = Buffers::<RX, TX>::new();
    let mut runner = blocking::Runner::new(&mut buffers);
    let mut steps = Vec::new();
    loop {
        let step = runner
            .step(&mut session, &mut Tools, reader, writer)
            .unwrap();
        steps.push(step);
        if step == Step::Eof {
            return (runner.stats(), steps);
        }
    }
}

fn run_async(reader: &mut Reader, writer: &mut Writer) -> (Stats, Vec<Step>) {
    block_on(async {
        let mut storage = SessionStorage::<2>::new();
        let mut session = Session::new(
            &INFO,
            Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
            &mut storage,
        );
        let mut buffers = Buffers::<RX, TX>::new();
        let mut runner = asynch::Runner::new(&mut buffers);
        let mut steps = Vec::new();
        loop {
            let step = runner
                .step(&mut session, &mut Tools, reader, writer)
                .await
                .unwrap();
            steps.push(step);
            if step == Step::Eof {
                return (runner.stats(), steps);
            }
        }
    })
}

type RunFn = fn(&mut Reader, &mut Writer) -> (Stats, Vec<Step>);
const RUNNERS: [(&str, RunFn); 2] = [("blocking", run_blocking), ("async", run_async)];

fn lines(messages: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        out.extend_from_slice(serde_json::to_string(m).unwrap().as_bytes());
        out.push(b'\n');
    }
    out
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn legacy_exchange() -> Vec<Value> {
    vec![
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}),
        json!({"jsonrpc":"2.0","id":"four","method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u{e9}llo \"q\""}}}),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":"x"}}}),
        json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"later"}}),
        json!({"jsonrpc":"2.0","id":7,"method":"ping"}),
    ]
}

fn check_legacy(frames: &[Value]) {
    assert_eq!(frames.len(), 7, "{frames:#?}");
    assert_eq!(frames[0]["id"], 1);
    assert_eq!(frames[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(frames[0]["result"]["serverInfo"]["name"], "pipe-test");
    assert_eq!(frames[1]["id"], 2);
    let names: Vec<_> = frames[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("add"), json!("echo"), json!("later")]);
    assert_eq!(
        frames[2],
        json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"42"}]}})
    );
    assert_eq!(frames[3]["id"], "four");
    assert_eq!(
        frames[3]["result"]["content"][0]["text"],
        r#"{"text":"héllo \"q\""}"#
    );
    assert_eq!(frames[4]["id"], 5);
    assert_eq!(frames[4]["result"]["isError"], true);
    assert_eq!(frames[5]["id"], 6);
    assert_eq!(frames[5]["error"]["code"], -32603);
    assert_eq!(frames[5]["error"]["message"], DEFERRED_CALL_MESSAGE);
    assert_eq!(frames[6], json!({"jsonrpc":"2.0","id":7,"result":{}}));
}

#[test]
fn legacy_exchange_over_random_splits() {
    for (name, run) in RUNNERS {
        for seed in 0..50u64 {
            let input = lines(&legacy_exchange());
            let mut reader = Reader::new(input, seed, 1 + (seed as usize % 40));
            let mut writer = Writer::new(seed);
            let (stats, steps) = run(&mut reader, &mut writer);
            check_legacy(&writer.frames());
            assert_eq!(stats.messages, 8, "{name} seed {seed}");
            assert_eq!(stats.frames_sent, 7);
            assert_eq!(stats.rx_errors, 0);
            assert!(steps
                .iter()
                .all(|s| matches!(s, Step::Received(_) | Step::Eof)));
            assert!(writer.flushes >= 1);
        }
    }
}

#[test]
fn modern_exchange_over_random_splits() {
    let meta = modern_meta();
    let input = lines(&[
        json!({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":meta}}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":meta}}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":meta}}),
    ]);
    for (name, run) in RUNNERS {
        for seed in 0..50u64 {
            let mut reader = Reader::new(input.clone(), seed, 1 + (seed as usize % 17));
            let mut writer = Writer::new(seed);
            run(&mut reader, &mut writer);
            let frames = writer.frames();
            assert_eq!(frames.len(), 4, "{name} seed {seed}: {frames:#?}");
            assert_eq!(frames[0]["id"], "d");
            assert!(frames[0]["result"]["supportedVersions"]
                .as_array()
                .unwrap()
                .contains(&json!("2026-07-28")));
            assert_eq!(frames[1]["result"]["tools"].as_array().unwrap().len(), 3);
            assert_eq!(frames[1]["result"]["resultType"], "complete");
            assert_eq!(frames[2]["result"]["content"][0]["text"], "3");
            assert_eq!(frames[2]["result"]["resultType"], "complete");
            assert_eq!(frames[3]["id"], 3);
            assert!(frames[3].get("error").is_some() || frames[3]["result"]["isError"] == true);
        }
    }
}

#[test]
fn both_eras_on_one_link_with_crlf_blank_lines_and_no_final_newline() {
    let meta = modern_meta();
    let mut input = b"\r\n  \n".to_vec();
    input.extend(lines(&legacy_exchange()[..2]).iter().flat_map(|&b| {
        if b == b'\n' {
            vec![b'\r', b'\n']
        } else {
            vec![b]
        }
    }));
    input.extend(lines(&[json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1},"_meta":meta}})]));
    input.extend(br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":2}}}"#);
    for (name, run) in RUNNERS {
        let mut reader = Reader::new(input.clone(), 7, 9);
        let mut writer = Writer::new(7);
        run(&mut reader, &mut writer);
        let frames = writer.frames();
        assert_eq!(frames.len(), 3, "{name}: {frames:#?}");
        assert_eq!(frames[1]["result"]["content"][0]["text"], "2");
        assert_eq!(frames[1]["result"]["resultType"], "complete");
        assert_eq!(frames[2]["result"]["content"][0]["text"], "4");
        assert!(frames[2]["result"].get("resultType").is_none());
    }
}

/// Requests `id` 0..n, each a call of `add` with `a = id`.
fn numbered_calls(n: usize) -> (Vec<u8>, Vec<(usize, usize)>) {
    let meta = modern_meta();
    let mut data = Vec::new();
    let mut spans = Vec::new();
    for id in 0..n {
        let start = data.len();
        let msg = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"add","arguments":{"a":id,"b":1000},"_meta":meta}});
        data.extend_from_slice(serde_json::to_string(&msg).unwrap().as_bytes());
        data.push(b'\n');
        spans.push((start, data.len())); // [start, end): end - 1 is the newline
    }
    (data, spans)
}

/// Which requests a correct runner answers. A fault at `at` drops the partial line, and
/// input from `at + lost` is discarded up to and including the first newline there: every
/// line whose newline comes at or after `at` and that starts at or before that newline is
/// lost.
fn expected_answers(spans: &[(usize, usize)], faults: &[Fault]) -> BTreeSet<usize> {
    (0..spans.len())
        .filter(|&id| {
            let (start, end) = spans[id];
            let newline = end - 1;
            faults.iter().all(|f| {
                let resume = f.at + f.lost;
                let resync_end = spans
                    .iter()
                    .map(|&(_, e)| e - 1)
                    .find(|&nl| nl >= resume)
                    .unwrap_or(usize::MAX);
                newline < f.at || start > resync_end
            })
        })
        .collect()
}

#[test]
fn overruns_resync_at_next_newline_and_never_wedge() {
    let mut lost_lines = 0;
    for (name, run) in RUNNERS {
        for seed in 0..200u64 {
            let mut rng = Rng::new(seed + 1000);
            let (data, spans) = numbered_calls(12);
            let mut faults: Vec<Fault> = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(data.len());
                let lost = if rng.below(2) == 0 { 0 } else { rng.below(300) };
                // Keep faults apart (a real UART reports one error per overrun).
                if faults
                    .iter()
                    .all(|f| at > f.at + f.lost + 1 || at + lost + 1 < f.at)
                {
                    faults.push(Fault { at, lost });
                }
            }
            faults.sort_by_key(|f| f.at);
            let expected = expected_answers(&spans, &faults);
            lost_lines += spans.len() - expected.len();
            let mut reader =
                Reader::new(data.clone(), seed, 1 + rng.below(64)).with_faults(faults.clone());
            let mut writer = Writer::new(seed);
            let (stats, steps) = run(&mut reader, &mut writer);
            let frames = writer.frames();
            let answered: Vec<usize> = frames
                .iter()
                .map(|f| f["id"].as_u64().unwrap() as usize)
                .collect();
            let sorted: Vec<usize> = expected.iter().copied().collect();
            assert_eq!(answered, sorted, "{name} seed {seed} faults {faults:?}");
            for f in &frames {
                let id = f["id"].as_u64().unwrap();
                assert_eq!(f["result"]["content"][0]["text"], format!("{}", id + 1000));
            }
            assert_eq!(stats.rx_errors as usize, faults.len());
            assert_eq!(
                steps
                    .iter()
                    .filter(|s| matches!(s, Step::RxError(_)))
                    .count(),
                faults.len()
            );
        }
    }
    assert!(lost_lines > 400, "faults should cost lines: {lost_lines}");
}

#[test]
fn the_line_after_an_overrun_is_served() {
    // Error in the middle of line 0: line 0 is dropped, line 1 answered.
    let (data, spans) = numbered_calls(2);
    let fault = Fault {
        at: spans[0].1 / 2,
        lost: 3,
    };
    for (name, run) in RUNNERS {
        let mut reader = Reader::new(data.clone(), 1, 8).with_faults(vec![fault]);
        let mut writer = Writer::new(1);
        let (stats, _) = run(&mut reader, &mut writer);
        let frames = writer.frames();
        assert_eq!(frames.len(), 1, "{name}");
        assert_eq!(frames[0]["id"], 1);
        assert_eq!(stats.rx_errors, 1);
        assert_eq!(stats.discarded as usize, spans[0].1 - fault.at - fault.lost);
    }
}

#[test]
fn oversized_lines_and_garbage_are_answered_and_skipped() {
    let meta = modern_meta();
    let mut input = Vec::new();
    input.extend(vec![b'x'; RX * 3]);
    input.push(b'\n');
    input.extend(b"\xff\xfe not json\n");
    input.extend(lines(&[json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1},"_meta":meta}})]));
    for (name, run) in RUNNERS {
        for seed in 0..20 {
            let mut reader = Reader::new(input.clone(), seed, 1 + seed as usize * 13);
            let mut writer = Writer::new(seed);
            let (stats, _) = run(&mut reader, &mut writer);
            let frames = writer.frames();
            assert_eq!(frames.len(), 3, "{name}: {frames:#?}");
            assert_eq!(frames[0]["error"]["code"], -32600);
            assert_eq!(frames[0]["error"]["data"]["limit"], RX);
            assert_eq!(frames[1]["error"]["code"], -32700);
            assert_eq!(frames[2]["result"]["content"][0]["text"], "2");
            assert_eq!(stats.oversized, 1);
        }
    }
}

#[test]
fn run_returns_at_eof_and_write_errors_are_fatal() {
    struct Failing;
    impl embedded_io::ErrorType for Failing {
        type Error = ErrorKind;
    }
    impl embedded_io::Write for Failing {
        fn write(&mut self, _: &[u8]) -> Result<usize, ErrorKind> {
            Err(ErrorKind::BrokenPipe)
        }
        fn flush(&mut self) -> Result<(), ErrorKind> {
            Ok(())
        }
    }
    struct Zero;
    impl embedded_io::ErrorType for Zero {
        type Error = Infallible;
    }
    impl embedded_io::Write for Zero {
        fn write(&mut self, _: &[u8]) -> Result<usize, Infallible> {
            Ok(0)
        }
        fn flush(&mut self) -> Result<(), Infallible> {
            Ok(())
        }
    }
    let input = lines(&legacy_exchange());
    let mut storage = SessionStorage::<2>::new();
    let mut session = Session::new(
        &INFO,
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        &mut storage,
    );
    let mut buffers = Buffers::<RX, TX>::new();
    let mut runner = blocking::Runner::new(&mut buffers);
    let mut rx = &input[..];
    assert_eq!(
        runner.run(&mut session, &mut Tools, &mut rx, &mut Failing),
        Err(Error::Write(ErrorKind::BrokenPipe))
    );
    let mut rx = &input[..];
    let mut runner = blocking::Runner::new(&mut buffers);
    assert_eq!(
        runner.run(&mut session, &mut Tools, &mut rx, &mut Zero),
        Err(Error::WriteZero)
    );

    // Plain slices as reader and writer; `run` stops at EOF.
    let mut storage = SessionStorage::<2>::new();
    let mut session = Session::new(
        &INFO,
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        &mut storage,
    );
    let mut runner = blocking::Runner::new(&mut buffers);
    let mut rx = &input[..];
    let mut out = vec![0u8; 8192];
    let mut tx = &mut out[..];
    runner
        .run(&mut session, &mut Tools, &mut rx, &mut tx)
        .unwrap();
    let left = tx.len();
    let text = std::str::from_utf8(&out[..8192 - left]).unwrap();
    let frames: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    check_legacy(&frames);
}

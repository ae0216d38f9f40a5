//! Hand-written seeds for the `session` target: operation sequences that reach what random
//! bytes reach slowly (a sealed `requestState` taken from an `input_required` reply and sent
//! back valid, tampered or expired; server-to-client requests answered, answered late or
//! with a wrong id; listen streams and their cancellation), and an encoder that turns an
//! [`Input`] into the bytes `arbitrary` decodes back into it.
//!
//! `mcp-core/tests/corpus_replay.rs` checks that every seed round-trips, that the committed
//! `fuzz/corpus/session/seed-*` files are current, and that each seed exercises what it is
//! named for. After a grammar change, rewrite them with
//! `MCP_WRITE_SEEDS=1 cargo test -p mcp-rs-core --test corpus_replay session_seeds`.

use crate::checks::session::*;

/// One decoding step of `arbitrary` (1.x), as the encoder records it.
enum Step {
    /// Bytes read from the front.
    Front(Vec<u8>),
    /// A length read from the back (1, 2 or 4 bytes, depending on what is left).
    Size(usize),
}

/// Writes values in the order `arbitrary` reads them.
#[derive(Default)]
pub struct Encoder {
    steps: Vec<Step>,
}

impl Encoder {
    fn front(&mut self, b: &[u8]) {
        self.steps.push(Step::Front(b.to_vec()));
    }
    fn u8(&mut self, v: u8) {
        self.front(&[v]);
    }
    fn u16(&mut self, v: u16) {
        self.front(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.front(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.front(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.front(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.front(&v.to_bits().to_le_bytes());
    }
    fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }
    /// Variant `i` of an enum with `count` variants (derive: `(u32 * count) >> 32`).
    fn variant(&mut self, i: u64, count: u64) {
        let x = (i << 32).div_ceil(count);
        self.u32(u32::try_from(x).expect("variant index"));
    }
    fn string(&mut self, s: &str) {
        self.steps.push(Step::Size(s.len()));
        self.front(s.as_bytes());
    }
    fn vec<T: Enc>(&mut self, v: &[T]) {
        for x in v {
            self.bool(true);
            x.enc(self);
        }
        self.bool(false);
    }
    fn option<T: Enc>(&mut self, o: &Option<T>) {
        match o {
            Some(x) => {
                self.bool(true);
                x.enc(self);
            }
            None => self.bool(false),
        }
    }

    /// The bytes: front steps in order, lengths at the back (the first one read last).
    pub fn finish(self) -> Vec<u8> {
        let front: usize = self
            .steps
            .iter()
            .map(|s| match s {
                Step::Front(b) => b.len(),
                Step::Size(_) => 0,
            })
            .sum();
        // The width of each length depends on how much is left when it is read, which
        // depends on the widths: iterate to the fixed point (widths only grow).
        let mut widths: Vec<usize> = self
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Size(_)))
            .map(|_| 1)
            .collect();
        loop {
            let total = front + widths.iter().sum::<usize>();
            let (mut left, mut next) = (total as i64, Vec::new());
            for s in &self.steps {
                match s {
                    Step::Front(b) => left -= b.len() as i64,
                    Step::Size(n) => {
                        let w = match left {
                            l if l <= 1 => {
                                assert_eq!(*n, 0, "no room left for a length");
                                l.max(0) as usize
                            }
                            l if l <= 256 => 1,
                            l if l <= 65537 => 2,
                            _ => 4,
                        };
                        next.push(w);
                        left -= w as i64;
                    }
                }
            }
            if next == widths {
                break;
            }
            widths = next;
        }
        let mut out = Vec::new();
        let mut back: Vec<Vec<u8>> = Vec::new();
        let mut k = 0;
        for s in &self.steps {
            match s {
                Step::Front(b) => out.extend_from_slice(b),
                Step::Size(n) => {
                    let w = widths[k];
                    k += 1;
                    // Read big-endian from the back slice, in forward order.
                    let be = (*n as u64).to_be_bytes();
                    back.push(be[8 - w..].to_vec());
                }
            }
        }
        for b in back.iter().rev() {
            out.extend_from_slice(b);
        }
        out
    }
}

/// The inverse of `Arbitrary` for the session grammar.
pub trait Enc {
    fn enc(&self, e: &mut Encoder);
}

impl Enc for u8 {
    fn enc(&self, e: &mut Encoder) {
        e.u8(*self);
    }
}

impl Enc for f64 {
    fn enc(&self, e: &mut Encoder) {
        e.f64(*self);
    }
}

impl Enc for String {
    fn enc(&self, e: &mut Encoder) {
        e.string(self);
    }
}

impl Enc for LongGen {
    fn enc(&self, e: &mut Encoder) {
        e.u8(self.unit);
        e.u16(self.count);
        e.bool(self.mixed);
    }
}

impl Enc for Rev {
    fn enc(&self, e: &mut Encoder) {
        let i = match self {
            Rev::R0 => 0,
            Rev::R1 => 1,
            Rev::R2 => 2,
            Rev::R3 => 3,
            Rev::R4 => 4,
            Rev::Unknown => 5,
            Rev::Empty => 6,
            Rev::Number => 7,
            Rev::Long(_) => 8,
        };
        e.variant(i, 9);
        if let Rev::Long(l) = self {
            l.enc(e);
        }
    }
}

impl Enc for IdGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 15;
        match self {
            IdGen::Small(n) => {
                e.variant(0, N);
                e.u8(*n);
            }
            IdGen::Int(i) => {
                e.variant(1, N);
                e.i64(*i);
            }
            IdGen::Str(n) => {
                e.variant(2, N);
                e.u8(*n);
            }
            IdGen::Text(s) => {
                e.variant(3, N);
                e.string(s);
            }
            IdGen::Long => e.variant(4, N),
            IdGen::Huge => e.variant(5, N),
            IdGen::Null => e.variant(6, N),
            IdGen::Float => e.variant(7, N),
            IdGen::Exp => e.variant(8, N),
            IdGen::Bool => e.variant(9, N),
            IdGen::Obj => e.variant(10, N),
            IdGen::NegZero => e.variant(11, N),
            IdGen::BigInt => e.variant(12, N),
            IdGen::Live(k) => {
                e.variant(13, N);
                e.u8(*k);
            }
            IdGen::Escaped(n) => {
                e.variant(14, N);
                e.u8(*n);
            }
        }
    }
}

impl Enc for LevelGen {
    fn enc(&self, e: &mut Encoder) {
        match self {
            LevelGen::L(n) => {
                e.variant(0, 3);
                e.u8(*n);
            }
            LevelGen::Bad(s) => {
                e.variant(1, 3);
                e.string(s);
            }
            LevelGen::Number => e.variant(2, 3),
        }
    }
}

impl Enc for CursorGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 7;
        match self {
            CursorGen::Absent => e.variant(0, N),
            CursorGen::Null => e.variant(1, N),
            CursorGen::Seen(k) => {
                e.variant(2, N);
                e.u8(*k);
            }
            CursorGen::Tampered(k, at) => {
                e.variant(3, N);
                e.u8(*k);
                e.u8(*at);
            }
            CursorGen::Garbage(s) => {
                e.variant(4, N);
                e.string(s);
            }
            CursorGen::Number => e.variant(5, N),
            CursorGen::Empty => e.variant(6, N),
        }
    }
}

impl Enc for ToolGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 5;
        match self {
            ToolGen::Known(i) => {
                e.variant(0, N);
                e.u8(*i);
            }
            ToolGen::Unknown(s) => {
                e.variant(1, N);
                e.string(s);
            }
            ToolGen::Escaped(i) => {
                e.variant(2, N);
                e.u8(*i);
            }
            ToolGen::NotString => e.variant(3, N),
            ToolGen::Long(l) => {
                e.variant(4, N);
                l.enc(e);
            }
        }
    }
}

impl Enc for UriGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 7;
        match self {
            UriGen::Listed(i) => {
                e.variant(0, N);
                e.u8(*i);
            }
            UriGen::Templated(i, s) => {
                e.variant(1, N);
                e.u8(*i);
                e.string(s);
            }
            UriGen::Slow => e.variant(2, N),
            UriGen::Escaped(i) => {
                e.variant(3, N);
                e.u8(*i);
            }
            UriGen::Unknown(s) => {
                e.variant(4, N);
                e.string(s);
            }
            UriGen::Long(l) => {
                e.variant(5, N);
                l.enc(e);
            }
            UriGen::NotString => e.variant(6, N),
        }
    }
}

impl Enc for StateGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 6;
        match self {
            StateGen::None => e.variant(0, N),
            StateGen::Seen(k) => {
                e.variant(1, N);
                e.u8(*k);
            }
            StateGen::Tampered(k, at) => {
                e.variant(2, N);
                e.u8(*k);
                e.u8(*at);
            }
            StateGen::Escaped(k) => {
                e.variant(3, N);
                e.u8(*k);
            }
            StateGen::Garbage(s) => {
                e.variant(4, N);
                e.string(s);
            }
            StateGen::NotString(b) => {
                e.variant(5, N);
                e.bool(*b);
            }
        }
    }
}

impl Enc for PromptArgsGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 6;
        match self {
            PromptArgsGen::Absent => e.variant(0, N),
            PromptArgsGen::Full(s) => {
                e.variant(1, N);
                e.string(s);
            }
            PromptArgsGen::MissingRequired => e.variant(2, N),
            PromptArgsGen::NonString => e.variant(3, N),
            PromptArgsGen::NotObject => e.variant(4, N),
            PromptArgsGen::Null => e.variant(5, N),
        }
    }
}

impl Enc for RefGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 7;
        match self {
            RefGen::Prompt(t) => {
                e.variant(0, N);
                t.enc(e);
            }
            RefGen::Template(i) => {
                e.variant(1, N);
                e.u8(*i);
            }
            RefGen::Listed(i) => {
                e.variant(2, N);
                e.u8(*i);
            }
            RefGen::Uri(u) => {
                e.variant(3, N);
                u.enc(e);
            }
            RefGen::BadType => e.variant(4, N),
            RefGen::NotObject => e.variant(5, N),
            RefGen::Missing => e.variant(6, N),
        }
    }
}

impl Enc for ValueGen {
    fn enc(&self, e: &mut Encoder) {
        match self {
            ValueGen::Text(s) => {
                e.variant(0, 4);
                e.string(s);
            }
            ValueGen::Many => e.variant(1, 4),
            ValueGen::Slow => e.variant(2, 4),
            ValueGen::NotString => e.variant(3, 4),
        }
    }
}

impl Enc for OutIdGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 5;
        match self {
            OutIdGen::Pending(k) => {
                e.variant(0, N);
                e.u8(*k);
            }
            OutIdGen::Stale(k) => {
                e.variant(1, N);
                e.u8(*k);
            }
            OutIdGen::Other(n) => {
                e.variant(2, N);
                e.u32(*n);
            }
            OutIdGen::Quoted(k) => {
                e.variant(3, N);
                e.u8(*k);
            }
            OutIdGen::Zero => e.variant(4, N),
        }
    }
}

impl Enc for ArgsGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 8;
        match self {
            ArgsGen::Absent => e.variant(0, N),
            ArgsGen::Null => e.variant(1, N),
            ArgsGen::Marker => e.variant(2, N),
            ArgsGen::Text(s) => {
                e.variant(3, N);
                e.string(s);
            }
            ArgsGen::Big(n) => {
                e.variant(4, N);
                e.u16(*n);
            }
            ArgsGen::NotObject => e.variant(5, N),
            ArgsGen::Deep(d) => {
                e.variant(6, N);
                e.u8(*d);
            }
            ArgsGen::Add(a, b) => {
                e.variant(7, N);
                e.f64(*a);
                e.f64(*b);
            }
        }
    }
}

impl Enc for CancelGen {
    fn enc(&self, e: &mut Encoder) {
        match self {
            CancelGen::Live(k) => {
                e.variant(0, 4);
                e.u8(*k);
            }
            CancelGen::Id(id) => {
                e.variant(1, 4);
                id.enc(e);
            }
            CancelGen::Missing => e.variant(2, 4),
            CancelGen::NotObject => e.variant(3, 4),
        }
    }
}

impl Enc for Body {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 18;
        match self {
            Body::Initialize { rev, caps, shape } => {
                e.variant(0, N);
                rev.enc(e);
                e.u8(*caps);
                e.u8(*shape);
            }
            Body::Initialized => e.variant(1, N),
            Body::Ping => e.variant(2, N),
            Body::Discover => e.variant(3, N),
            Body::ToolsList { cursor } => {
                e.variant(4, N);
                cursor.enc(e);
            }
            Body::ToolsCall {
                tool,
                args,
                progress,
                state,
                responses,
            } => {
                e.variant(5, N);
                tool.enc(e);
                args.enc(e);
                e.option(progress);
                state.enc(e);
                e.u8(*responses);
            }
            Body::SetLevel { level } => {
                e.variant(6, N);
                level.enc(e);
            }
            Body::Cancel { target } => {
                e.variant(7, N);
                target.enc(e);
            }
            Body::Other { method } => {
                e.variant(8, N);
                e.u8(*method);
            }
            Body::Reply { error } => {
                e.variant(9, N);
                e.bool(*error);
            }
            Body::List { kind, cursor } => {
                e.variant(10, N);
                e.u8(*kind);
                cursor.enc(e);
            }
            Body::Read {
                uri,
                state,
                responses,
            } => {
                e.variant(11, N);
                uri.enc(e);
                state.enc(e);
                e.u8(*responses);
            }
            Body::Subscribe { uri, on } => {
                e.variant(12, N);
                uri.enc(e);
                e.bool(*on);
            }
            Body::GetPrompt {
                prompt,
                args,
                state,
                responses,
            } => {
                e.variant(13, N);
                prompt.enc(e);
                args.enc(e);
                state.enc(e);
                e.u8(*responses);
            }
            Body::Complete {
                reference,
                argument,
                value,
                context,
            } => {
                e.variant(14, N);
                reference.enc(e);
                e.u8(*argument);
                value.enc(e);
                e.option(context);
            }
            Body::Listen { filter } => {
                e.variant(15, N);
                e.u8(*filter);
            }
            Body::Response { to, outcome } => {
                e.variant(16, N);
                to.enc(e);
                e.u8(*outcome);
            }
            Body::LongMethod(l) => {
                e.variant(17, N);
                l.enc(e);
            }
        }
    }
}

impl Enc for MetaGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 6;
        match self {
            MetaGen::None => e.variant(0, N),
            MetaGen::Legacy => e.variant(1, N),
            MetaGen::Modern {
                rev,
                caps,
                level,
                shape,
            } => {
                e.variant(2, N);
                rev.enc(e);
                e.u8(*caps);
                e.option(level);
                e.u8(*shape);
            }
            MetaGen::Modern2 { caps } => {
                e.variant(3, N);
                e.u8(*caps);
            }
            MetaGen::NotObject => e.variant(4, N),
            MetaGen::CapsOnly => e.variant(5, N),
        }
    }
}

impl Enc for Envelope {
    fn enc(&self, e: &mut Encoder) {
        let i = match self {
            Envelope::Plain => 0,
            Envelope::Plain2 => 1,
            Envelope::Plain3 => 2,
            Envelope::Spaced => 3,
            Envelope::Jsonrpc10 => 4,
            Envelope::NoJsonrpc => 5,
            Envelope::JsonrpcNumber => 6,
            Envelope::JsonrpcEscaped => 7,
            Envelope::ParamsArray => 8,
            Envelope::ParamsString => 9,
            Envelope::ParamsNull => 10,
            Envelope::DupId => 11,
            Envelope::DupMethod => 12,
            Envelope::MethodNumber => 13,
            Envelope::WithResult => 14,
            Envelope::EscapedMethodKey => 15,
            Envelope::EscapedIdKey => 16,
            Envelope::ExtraMember => 17,
            Envelope::Reordered => 18,
        };
        e.variant(i, 19);
    }
}

impl Enc for Msg {
    fn enc(&self, e: &mut Encoder) {
        e.option(&self.id);
        self.body.enc(e);
        self.meta.enc(e);
        self.env.enc(e);
    }
}

impl Enc for ResultGen {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 10;
        match self {
            ResultGen::Text(s) => {
                e.variant(0, N);
                e.string(s);
            }
            ResultGen::All => e.variant(1, N),
            ResultGen::Structured(x) => {
                e.variant(2, N);
                e.f64(*x);
            }
            ResultGen::StructuredRaw(s) => {
                e.variant(3, N);
                e.string(s);
            }
            ResultGen::Error(s) => {
                e.variant(4, N);
                e.string(s);
            }
            ResultGen::Misuse => e.variant(5, N),
            ResultGen::Big(n) => {
                e.variant(6, N);
                e.u16(*n);
            }
            ResultGen::Empty => e.variant(7, N),
            ResultGen::InputRequired { state, asks } => {
                e.variant(8, N);
                e.bool(*state);
                e.u8(*asks);
            }
            ResultGen::WrongKind(k) => {
                e.variant(9, N);
                e.u8(*k);
            }
        }
    }
}

impl Enc for SOp {
    fn enc(&self, e: &mut Encoder) {
        const N: u64 = 15;
        match self {
            SOp::Send { msg, take } => {
                e.variant(0, N);
                msg.enc(e);
                e.u8(*take);
            }
            SOp::Batch { msgs, take } => {
                e.variant(1, N);
                e.vec(msgs);
                e.u8(*take);
            }
            SOp::Raw(bytes) => {
                e.variant(2, N);
                e.vec(bytes);
            }
            SOp::Truncated { msg, cut } => {
                e.variant(3, N);
                msg.enc(e);
                e.u16(*cut);
            }
            SOp::Stream {
                msgs,
                chunk,
                max_line,
                take,
            } => {
                e.variant(4, N);
                e.vec(msgs);
                e.u8(*chunk);
                e.u16(*max_line);
                e.u8(*take);
            }
            SOp::Complete { pick, result } => {
                e.variant(5, N);
                e.u8(*pick);
                result.enc(e);
            }
            SOp::Fail {
                pick,
                code,
                message,
            } => {
                e.variant(6, N);
                e.u8(*pick);
                e.i32(*code);
                e.string(message);
            }
            SOp::Progress {
                pick,
                progress,
                total,
                message,
            } => {
                e.variant(7, N);
                e.u8(*pick);
                e.f64(*progress);
                e.option(total);
                e.option(message);
            }
            SOp::Log {
                pick,
                level,
                logger,
                data,
            } => {
                e.variant(8, N);
                e.option(pick);
                e.u8(*level);
                e.option(logger);
                e.string(data);
            }
            SOp::ToolsChanged => e.variant(9, N),
            SOp::Oversized { limit } => {
                e.variant(10, N);
                e.u16(*limit);
            }
            SOp::Request {
                pick,
                method,
                timeout,
                bad,
            } => {
                e.variant(11, N);
                e.u8(*pick);
                e.u8(*method);
                e.u16(*timeout);
                e.bool(*bad);
            }
            SOp::Advance { ms, far } => {
                e.variant(12, N);
                e.u16(*ms);
                e.bool(*far);
            }
            SOp::ListChanged { kind } => {
                e.variant(13, N);
                e.u8(*kind);
            }
            SOp::ResourceUpdated { uri } => {
                e.variant(14, N);
                e.u8(*uri);
            }
        }
    }
}

impl Enc for CfgGen {
    fn enc(&self, e: &mut Encoder) {
        e.u8(self.cap);
        e.u16(self.out);
        e.u8(self.page);
        e.u8(self.batch);
        e.u8(self.depth);
        e.bool(self.list_changed);
        e.u8(self.level);
        e.u32(self.ttl);
        e.bool(self.private);
        e.u16(self.state_ttl);
        e.u8(self.offer);
    }
}

/// The bytes `Input::arbitrary_take_rest` decodes into `input`.
pub fn encode(input: &Input) -> Vec<u8> {
    let mut e = Encoder::default();
    input.cfg.enc(&mut e);
    e.vec(&input.ops);
    e.finish()
}

// ------------------------------------------------------------------------------ seeds

fn cfg() -> CfgGen {
    CfgGen {
        cap: 3,    // 8 call slots
        out: 1,    // 64 KiB of output
        page: 130, // pages of 3
        batch: 16,
        depth: 0, // max_depth 32
        list_changed: true,
        level: 0,
        ttl: 0,
        private: false,
        state_ttl: 100, // 1601 ms
        offer: 0,       // resources, prompts, completions
    }
}

fn msg(id: u8, body: Body, meta: MetaGen) -> Msg {
    Msg {
        id: Some(IdGen::Small(id)),
        body,
        meta,
        env: Envelope::Plain,
    }
}

fn send(id: u8, body: Body, meta: MetaGen) -> SOp {
    SOp::Send {
        msg: msg(id, body, meta),
        take: 0,
    }
}

fn note(body: Body) -> SOp {
    SOp::Send {
        msg: Msg {
            id: None,
            body,
            meta: MetaGen::None,
            env: Envelope::Plain,
        },
        take: 0,
    }
}

fn init(rev: Rev, caps: u8) -> [SOp; 2] {
    [
        send(
            0,
            Body::Initialize {
                rev,
                caps,
                shape: 0,
            },
            MetaGen::None,
        ),
        note(Body::Initialized),
    ]
}

fn modern(caps: u8) -> MetaGen {
    MetaGen::Modern2 { caps }
}

fn tool(name: &str) -> ToolGen {
    ToolGen::Known(TOOL_NAMES.iter().position(|n| *n == name).expect("tool") as u8)
}

fn prompt(name: &str) -> ToolGen {
    ToolGen::Known(
        PROMPT_NAMES
            .iter()
            .position(|n| *n == name)
            .expect("prompt") as u8,
    )
}

fn call(name: &str, state: StateGen) -> Body {
    Body::ToolsCall {
        tool: tool(name),
        args: ArgsGen::Marker,
        progress: None,
        state,
        responses: 0,
    }
}

fn respond(to: OutIdGen, outcome: u8) -> SOp {
    SOp::Send {
        msg: Msg {
            id: None,
            body: Body::Response { to, outcome },
            meta: MetaGen::None,
            env: Envelope::Plain,
        },
        take: 0,
    }
}

fn request(method: u8, timeout: u16, bad: bool) -> SOp {
    SOp::Request {
        pick: 0,
        method,
        timeout,
        bad,
    }
}

fn complete(result: ResultGen) -> SOp {
    SOp::Complete { pick: 0, result }
}

fn long(unit: u8, count: u16, mixed: bool) -> LongGen {
    LongGen { unit, count, mixed }
}

/// The seeds, by name (`fuzz/corpus/session/seed-<name>`).
pub fn seeds() -> Vec<(&'static str, Input)> {
    let m = || modern(7);
    let state = vec![
        // 2026-07-28: input_required with a sealed state from a tool, a prompt, a read and
        // a deferred tool; each retried with it, then tampered, escaped, foreign, expired.
        send(1, call("wizard", StateGen::None), m()),
        send(
            2,
            Body::GetPrompt {
                prompt: prompt("wizard"),
                args: PromptArgsGen::Absent,
                state: StateGen::None,
                responses: 0,
            },
            m(),
        ),
        send(
            3,
            Body::Read {
                uri: UriGen::Listed(2),
                state: StateGen::None,
                responses: 0,
            },
            m(),
        ),
        send(4, call("slow_wizard", StateGen::None), m()),
        complete(ResultGen::InputRequired {
            state: true,
            asks: 3,
        }),
        send(5, call("wizard", StateGen::Seen(0)), m()),
        send(
            6,
            Body::GetPrompt {
                prompt: prompt("wizard"),
                args: PromptArgsGen::Absent,
                state: StateGen::Seen(1),
                responses: 1,
            },
            m(),
        ),
        send(
            7,
            Body::Read {
                uri: UriGen::Listed(2),
                state: StateGen::Seen(2),
                responses: 1,
            },
            m(),
        ),
        send(8, call("slow_wizard", StateGen::Seen(3)), m()),
        complete(ResultGen::All),
        send(9, call("wizard", StateGen::Tampered(0, 20)), m()),
        send(10, call("wizard", StateGen::Tampered(0, 2)), m()),
        send(11, call("wizard", StateGen::Escaped(0)), m()),
        send(12, call("echo", StateGen::Seen(0)), m()),
        send(13, call("wizard", StateGen::Garbage("s1.x".into())), m()),
        send(14, call("wizard", StateGen::NotString(true)), m()),
        // Legacy sessions check a requestState too.
        init(Rev::R3, 0)[0].clone(),
        send(15, call("wizard", StateGen::Seen(0)), MetaGen::None),
        send(16, call("wizard_bare", StateGen::None), m()),
        SOp::Advance { ms: 0, far: true },
        send(17, call("wizard", StateGen::Seen(0)), m()),
        send(
            18,
            Body::Read {
                uri: UriGen::Listed(2),
                state: StateGen::Seen(2),
                responses: 0,
            },
            m(),
        ),
    ];
    let requests = {
        let mut ops = init(Rev::R2, 7).to_vec();
        ops.extend([
            send(1, call("slow", StateGen::None), MetaGen::None),
            request(0, 1000, false),
            request(1, 1000, false), // one outstanding per call
            respond(OutIdGen::Other(999), 1),
            respond(OutIdGen::Quoted(0), 1),
            respond(OutIdGen::Pending(0), 0),
            respond(OutIdGen::Stale(0), 1), // a repeat: late
            request(1, 500, true),
            request(1, 500, false),
            SOp::Advance {
                ms: 600,
                far: false,
            }, // times out
            respond(OutIdGen::Stale(1), 5), // late
            request(2, 50, false),
            SOp::Send {
                msg: msg(
                    0,
                    Body::Response {
                        to: OutIdGen::Pending(0),
                        outcome: 3,
                    },
                    MetaGen::None,
                ),
                take: 200, // not taken: reported as timed out at the next handle
            },
            send(2, Body::Ping, MetaGen::None),
            request(0, 0, false), // deadline now
            send(3, Body::Ping, MetaGen::None),
            request(2, 100, false),
            complete(ResultGen::Text("done".into())), // the request is forgotten
            respond(OutIdGen::Stale(3), 2),
            send(4, call("slow", StateGen::None), m()),
            request(0, 100, false), // stateless: refused
            complete(ResultGen::Empty),
        ]);
        ops
    };
    let requests_batch = {
        let mut ops = init(Rev::R1, 1).to_vec();
        let resp = |to, outcome| Msg {
            id: None,
            body: Body::Response { to, outcome },
            meta: MetaGen::None,
            env: Envelope::Plain,
        };
        ops.extend([
            send(1, call("slow", StateGen::None), MetaGen::None),
            request(1, 1000, false), // no elicitation capability
            request(0, 1000, false),
            SOp::Batch {
                msgs: vec![
                    resp(OutIdGen::Pending(0), 0),
                    resp(OutIdGen::Pending(0), 3), // same id again: ignored
                    msg(2, Body::Ping, MetaGen::None),
                ],
                take: 0,
            },
            request(0, 1000, false),
            note(Body::Cancel {
                target: CancelGen::Live(0),
            }), // the request goes with it
            respond(OutIdGen::Stale(1), 0),
            send(3, call("slow", StateGen::None), MetaGen::None),
            request(0, 1000, false),
            SOp::Batch {
                msgs: vec![
                    resp(OutIdGen::Pending(0), 4),
                    Msg {
                        id: None,
                        body: Body::Cancel {
                            target: CancelGen::Live(0),
                        },
                        meta: MetaGen::None,
                        env: Envelope::Plain,
                    },
                ],
                take: 0,
            },
        ]);
        ops
    };
    let resources = {
        let mut ops = init(Rev::R3, 0).to_vec();
        let read = |uri| Body::Read {
            uri,
            state: StateGen::None,
            responses: 0,
        };
        ops.extend([
            send(
                1,
                Body::List {
                    kind: 2,
                    cursor: CursorGen::Absent,
                },
                MetaGen::None,
            ),
            send(
                2,
                Body::List {
                    kind: 2,
                    cursor: CursorGen::Seen(0),
                },
                MetaGen::None,
            ),
            send(
                3,
                Body::List {
                    kind: 3,
                    cursor: CursorGen::Seen(0),
                },
                MetaGen::None,
            ),
            send(
                4,
                Body::List {
                    kind: 3,
                    cursor: CursorGen::Absent,
                },
                MetaGen::None,
            ),
            send(
                5,
                Body::List {
                    kind: 1,
                    cursor: CursorGen::Seen(0),
                },
                MetaGen::None,
            ),
            send(
                6,
                Body::ToolsList {
                    cursor: CursorGen::Seen(1),
                },
                MetaGen::None,
            ),
            send(
                7,
                Body::List {
                    kind: 2,
                    cursor: CursorGen::Tampered(0, 5),
                },
                MetaGen::None,
            ),
            send(8, read(UriGen::Listed(0)), MetaGen::None),
            send(9, read(UriGen::Listed(1)), MetaGen::None),
            send(10, read(UriGen::Templated(0, "2024".into())), MetaGen::None),
            send(11, read(UriGen::Escaped(3)), MetaGen::None),
            send(
                12,
                read(UriGen::Unknown("test://nope".into())),
                MetaGen::None,
            ),
            send(13, read(UriGen::Long(long(0, 300, true))), MetaGen::None),
            send(14, read(UriGen::Long(long(1, 100, false))), modern(0)),
            send(15, read(UriGen::Slow), MetaGen::None),
            send(16, read(UriGen::Slow), modern(0)),
            complete(ResultGen::Text("x".into())),
            complete(ResultGen::Empty),
            send(
                17,
                Body::Subscribe {
                    uri: UriGen::Listed(0),
                    on: true,
                },
                MetaGen::None,
            ),
            send(
                18,
                Body::Subscribe {
                    uri: UriGen::Unknown("test://nope".into()),
                    on: false,
                },
                MetaGen::None,
            ),
            send(
                19,
                Body::Subscribe {
                    uri: UriGen::Listed(0),
                    on: true,
                },
                modern(0),
            ),
            SOp::ListChanged { kind: 3 },
            SOp::ResourceUpdated { uri: 1 },
            send(
                20,
                Body::List {
                    kind: 2,
                    cursor: CursorGen::Seen(0),
                },
                MetaGen::None,
            ),
        ]);
        ops
    };
    let prompts = {
        let mut ops = init(Rev::R2, 0).to_vec();
        let get = |p, args| Body::GetPrompt {
            prompt: p,
            args,
            state: StateGen::None,
            responses: 0,
        };
        let comp = |reference, value, context| Body::Complete {
            reference,
            argument: 0,
            value,
            context,
        };
        ops.extend([
            send(
                1,
                Body::List {
                    kind: 1,
                    cursor: CursorGen::Absent,
                },
                MetaGen::None,
            ),
            send(
                2,
                get(prompt("greet"), PromptArgsGen::Full("Ada \"L\"".into())),
                MetaGen::None,
            ),
            send(
                3,
                get(prompt("greet"), PromptArgsGen::MissingRequired),
                MetaGen::None,
            ),
            send(4, get(prompt("greet"), PromptArgsGen::NonString), modern(0)),
            send(
                5,
                get(ToolGen::Escaped(0), PromptArgsGen::Full("x".into())),
                modern(0),
            ),
            send(
                6,
                get(ToolGen::Unknown("nope".into()), PromptArgsGen::Absent),
                MetaGen::None,
            ),
            send(
                7,
                get(ToolGen::Long(long(0, 100, false)), PromptArgsGen::Absent),
                MetaGen::None,
            ),
            send(
                8,
                get(prompt("slow"), PromptArgsGen::Full("y".into())),
                MetaGen::None,
            ),
            complete(ResultGen::All),
            send(
                9,
                get(prompt("wizard"), PromptArgsGen::Absent),
                MetaGen::None,
            ),
            send(
                10,
                comp(
                    RefGen::Prompt(prompt("greet")),
                    ValueGen::Text("a".into()),
                    Some(0),
                ),
                MetaGen::None,
            ),
            send(
                11,
                comp(RefGen::Prompt(prompt("greet")), ValueGen::Many, None),
                modern(0),
            ),
            send(
                12,
                comp(RefGen::Template(0), ValueGen::Text("".into()), None),
                MetaGen::None,
            ),
            send(
                13,
                comp(
                    RefGen::Prompt(ToolGen::Long(long(3, 70, true))),
                    ValueGen::Text("".into()),
                    None,
                ),
                MetaGen::None,
            ),
            send(
                14,
                comp(
                    RefGen::Uri(UriGen::Long(long(2, 260, false))),
                    ValueGen::Text("".into()),
                    None,
                ),
                MetaGen::None,
            ),
            send(
                15,
                comp(RefGen::Listed(0), ValueGen::Slow, Some(1)),
                MetaGen::None,
            ),
            complete(ResultGen::Big(150)),
            send(
                16,
                comp(RefGen::BadType, ValueGen::Text("".into()), None),
                MetaGen::None,
            ),
        ]);
        ops
    };
    let listen = {
        let l = |filter| Body::Listen { filter };
        vec![
            send(10, l(7), m()),
            send(11, l(1 | 8), m()),
            send(12, l(32), m()),
            send(13, l(7), MetaGen::None), // legacy-less session: not a legacy method
            SOp::ListChanged { kind: 0 },
            SOp::ListChanged { kind: 3 },
            note(Body::Cancel {
                target: CancelGen::Live(0),
            }),
            SOp::ListChanged { kind: 1 },
            complete(ResultGen::WrongKind(0)),
            SOp::Fail {
                pick: 0,
                code: -1,
                message: "no".into(),
            },
            complete(ResultGen::WrongKind(4)),
            send(14, l(4 | 16), m()),
            SOp::ListChanged { kind: 2 },
        ]
    };
    let long_names = vec![
        send(1, Body::LongMethod(long(0, 100, false)), MetaGen::None),
        send(2, Body::LongMethod(long(1, 20, true)), m()),
        send(
            3,
            Body::Ping,
            MetaGen::Modern {
                rev: Rev::Long(long(0, 50, false)),
                caps: 0,
                level: None,
                shape: 0,
            },
        ),
        send(
            4,
            call("echo", StateGen::None),
            MetaGen::Modern {
                rev: Rev::Long(long(2, 10, true)),
                caps: 0,
                level: None,
                shape: 4,
            },
        ),
        send(
            5,
            Body::ToolsCall {
                tool: ToolGen::Long(long(0, 300, false)),
                args: ArgsGen::Absent,
                progress: None,
                state: StateGen::None,
                responses: 0,
            },
            m(),
        ),
        send(
            6,
            Body::ToolsCall {
                tool: ToolGen::Long(long(4, 64 - 40, false)),
                args: ArgsGen::Absent,
                progress: None,
                state: StateGen::None,
                responses: 0,
            },
            m(),
        ),
        send(
            7,
            Body::ToolsCall {
                tool: ToolGen::Long(long(5, 25, true)),
                args: ArgsGen::Absent,
                progress: None,
                state: StateGen::None,
                responses: 0,
            },
            m(),
        ),
        send(
            8,
            Body::Read {
                uri: UriGen::Long(long(1, 300, true)),
                state: StateGen::None,
                responses: 0,
            },
            m(),
        ),
    ];
    let small = |ops: Vec<SOp>| Input {
        cfg: CfgGen { out: 0, ..cfg() },
        ops,
    };
    let with = |ops: Vec<SOp>| Input { cfg: cfg(), ops };
    vec![
        ("state", with(state)),
        ("requests", with(requests)),
        ("requests-batch", with(requests_batch)),
        ("resources", with(resources.clone())),
        ("resources-small", small(resources)),
        ("prompts", with(prompts)),
        ("listen", with(listen)),
        ("long-names", with(long_names.clone())),
        ("long-names-small", small(long_names)),
    ]
}

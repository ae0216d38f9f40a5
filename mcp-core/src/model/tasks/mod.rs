//! The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): long tool calls that
//! answer at once with a task handle, then are polled with `tasks/get`.
//!
//! Heap-free: tasks live in a caller-owned [`TaskTable`] of `N` slots of `R` bytes each
//! (the inlined result, error or pending `inputRequests` of one task). Time is passed in
//! (milliseconds since the UNIX epoch: the `now` given to
//! [`Session::handle`](crate::Session::handle)); a task expires `ttlMs` after its
//! creation and its slot is reused, never earlier.
//!
//! # Wire shapes (the conformance suite's SEP-2663 scenarios, 2026-07-28 wire)
//!
//! | message | shape |
//! | --- | --- |
//! | capability | `capabilities.extensions["io.modelcontextprotocol/tasks"]: {}` (never a v1 `capabilities.tasks`) |
//! | negotiation | the client lists the extension in `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`, per request (a session-level declaration is the same key on every request) |
//! | `tools/call` → `CreateTaskResult` | flat `{taskId, status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs?, resultType:"task"}`: no `task` wrapper, no `result`/`error`/`inputRequests`/`requestState`, no v1 `ttl`/`pollInterval` |
//! | `tasks/get {taskId}` → `DetailedTask` | the task fields + `resultType:"complete"`; `result` (the tool result, `content[]`) when `completed`, `error {code,message,data?}` when `failed`, `inputRequests {key: {method, params}}` when `input_required`; never `requestState` |
//! | `tasks/update {taskId, inputResponses}` | `{resultType:"complete"}`; answered keys leave `inputRequests`, unknown keys are ignored; once none is pending the task is `working` again |
//! | `tasks/cancel {taskId}` | `{resultType:"complete"}`, also on a terminal task (idempotent); a running task becomes `cancelled` |
//! | `tasks/result`, `tasks/list` | removed in v2: -32601 |
//! | unknown or expired `taskId` | -32602 |
//! | tasks methods without the extension negotiated | -32021, `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]` |
//! | `tools/call` of a `required` task tool without the extension | -32021, same data |
//! | `tools/call` of an `optional` task tool without the extension | a plain synchronous `ToolResult` |
//! | legacy `task` param on `tools/call` | ignored (never promotes a tool to a task) |
//! | `subscriptions/listen` with `notifications.taskIds` | the acknowledgement's `notifications.taskIds` lists the live ids kept (at most [`MAX_TASK_SUBSCRIPTIONS`](crate::MAX_TASK_SUBSCRIPTIONS) a stream; unknown ids and repeats left out); without the extension in the request's client capabilities: -32021, same data |
//! | `notifications/tasks {DetailedTask, _meta.subscriptionId}` | on the stream: each subscribed task's current state once, then every change (the `DetailedTask` of `tasks/get`, without `resultType`), the terminal status last; nothing on expiry ([`Session::tasks_changed_next`](crate::Session::tasks_changed_next)) |
//!
//! Statuses: `working`, `input_required`, `completed`, `failed`, `cancelled`; the last three
//! are terminal. A tool that ran and reported an error is `completed` with
//! `result.isError: true`; `failed` is for protocol-level errors.
//!
//! # Task ids
//!
//! 32 lowercase hex digits: SipHash-2-4 under the table's key (its own, or the session's
//! cursor key material) of a creation counter, two 64-bit halves. Without the key, an id
//! is not guessable from other ids, so a client cannot poll or cancel another client's
//! task by counting (the spec asks for ids that are unique and hard to guess; they are not
//! an authorization mechanism).

mod table;

pub use table::TaskTable;

use crate::wire::json::{JsonWriter, RawJson};

/// The extension identifier, the key under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Length of a task id: 32 hex digits.
pub const ID_LEN: usize = 32;

/// Default `ttlMs` of a task: 5 minutes.
pub const DEFAULT_TTL_MS: u32 = 300_000;

/// Default `pollIntervalMs` suggested to clients.
pub const DEFAULT_POLL_INTERVAL_MS: u32 = 500;

/// Whether a tool runs as a task (the tool's `execution.taskSupport`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Always synchronous (the default).
    #[default]
    Forbidden,
    /// A task when the client negotiated the extension, else synchronous.
    Optional,
    /// Only as a task: without the extension the call is refused with -32021.
    Required,
}

/// A task's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's `inputResponses` (`tasks/update`).
    InputRequired,
    /// Done; `result` holds the tool result.
    Completed,
    /// A protocol-level error; `error` holds it.
    Failed,
    /// Cancelled by `tasks/cancel`.
    Cancelled,
}

impl TaskStatus {
    /// Every status, in the order of the lifecycle.
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
    /// Whether the task has ended (`completed`, `failed`, `cancelled`).
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// A task id: [`ID_LEN`] lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TaskId(pub(crate) [u8; ID_LEN]);

impl TaskId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.0).unwrap_or("")
    }
}

impl core::fmt::Debug for TaskId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a task operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskError {
    /// Every slot holds a live task (`capacity` slots).
    Full {
        /// The table's slot count.
        capacity: usize,
    },
    /// No task has this id (never created, or expired).
    Unknown,
    /// The payload does not fit the slot: `needed` bytes, `capacity` available.
    TooLarge {
        /// Bytes the payload needed.
        needed: usize,
        /// Bytes a slot holds.
        capacity: usize,
    },
    /// The payload is not the JSON object it must be.
    Invalid,
    /// The task has ended: its status can no longer change.
    Terminal,
}

impl core::fmt::Display for TaskError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            TaskError::Full { capacity } => write!(f, "task table full ({capacity} slots)"),
            TaskError::Unknown => f.write_str("unknown task"),
            TaskError::TooLarge { needed, capacity } => {
                write!(
                    f,
                    "task payload needs {needed} bytes, a slot holds {capacity}"
                )
            }
            TaskError::Invalid => f.write_str("task payload is not a JSON object"),
            TaskError::Terminal => f.write_str("task has ended"),
        }
    }
}

impl core::error::Error for TaskError {}

/// One task as `tasks/get` shows it, borrowed from its slot.
#[derive(Clone, Copy, Debug)]
pub struct TaskView<'t> {
    /// The id.
    pub id: &'t str,
    /// The status.
    pub status: TaskStatus,
    /// Creation time, ms since the UNIX epoch.
    pub created_ms: u64,
    /// Last status change, ms since the UNIX epoch.
    pub updated_ms: u64,
    /// `ttlMs`.
    pub ttl_ms: u32,
    /// `pollIntervalMs`.
    pub poll_interval_ms: u32,
    /// The status's payload, a JSON object: the result (`completed`), the error (`failed`)
    /// or the pending `inputRequests` (`input_required`); `None` otherwise.
    pub payload: Option<RawJson<'t>>,
}

impl TaskView<'_> {
    /// Writes the `Task` members (inside an open object): `taskId`, `status`, `createdAt`,
    /// `lastUpdatedAt`, `ttlMs`, `pollIntervalMs`.
    pub(crate) fn write_fields(&self, w: &mut JsonWriter<'_>) {
        w.key("taskId");
        w.string(self.id);
        w.key("status");
        w.string(self.status.as_str());
        w.key("createdAt");
        write_timestamp(w, self.created_ms);
        w.key("lastUpdatedAt");
        write_timestamp(w, self.updated_ms);
        w.key("ttlMs");
        w.u64(u64::from(self.ttl_ms));
        w.key("pollIntervalMs");
        w.u64(u64::from(self.poll_interval_ms));
    }

    /// Writes the `DetailedTask` members: the fields and the status's payload.
    pub(crate) fn write_detailed(&self, w: &mut JsonWriter<'_>) {
        self.write_fields(w);
        let key = match self.status {
            TaskStatus::Completed => "result",
            TaskStatus::Failed => "error",
            TaskStatus::InputRequired => "inputRequests",
            TaskStatus::Working | TaskStatus::Cancelled => return,
        };
        if let Some(payload) = self.payload {
            w.key(key);
            w.raw_value(payload.as_str());
        }
    }
}

/// The tasks a server keeps, as the session reaches them (see
/// [`ServerHandler::tasks`](crate::ServerHandler::tasks)). [`TaskTable`] is the
/// implementation; the trait keeps its const generics out of the session.
pub trait TaskStore {
    /// Starts a `working` task at `now_ms`.
    fn create(&mut self, now_ms: u64) -> Result<TaskId, TaskError>;
    /// The live task `id` at `now_ms` (expired tasks are dropped first).
    fn view(&mut self, id: &str, now_ms: u64) -> Option<TaskView<'_>>;
    /// `tasks/update`: delivers the `inputResponses` members whose keys are pending.
    fn answer(&mut self, id: &str, responses: RawJson<'_>, now_ms: u64) -> Result<(), TaskError>;
    /// `tasks/cancel`: a running task becomes `cancelled`; a terminal one is unchanged.
    fn cancel(&mut self, id: &str, now_ms: u64) -> Result<(), TaskError>;
    /// The task ended with `result` (a `CallToolResult` object).
    fn complete(&mut self, id: &str, result: &str, now_ms: u64) -> Result<(), TaskError>;
    /// The task failed with a protocol-level error.
    fn fail(&mut self, id: &str, code: i32, message: &str, now_ms: u64) -> Result<(), TaskError>;
    /// Forgets the task at once (a call that answered without becoming a task).
    fn remove(&mut self, id: &str);
    /// The tool waits for the client: `requests` is the `inputRequests` object
    /// (`{"key":{"method":...,"params":...}}`, one line), shown by `tasks/get` until
    /// `tasks/update` has answered every key.
    fn ask(&mut self, id: &str, requests: &str, now_ms: u64) -> Result<(), TaskError>;
    /// Takes the responses `tasks/update` delivered since the last call, as an object's
    /// members (`"key":value,...`, without braces) written into `out`; `None` when there
    /// are none. The task is `working` again once no request is pending.
    fn take_responses<'o>(
        &mut self,
        id: &str,
        out: &'o mut [u8],
        now_ms: u64,
    ) -> Result<Option<&'o str>, TaskError>;
    /// Whether the task has been cancelled (a running tool checks this and stops).
    fn is_cancelled(&mut self, id: &str, now_ms: u64) -> bool;
}

/// Writes `ms` (since the UNIX epoch) as an RFC 3339 UTC timestamp with milliseconds:
/// `"2026-07-28T12:00:00.000Z"`.
pub(crate) fn write_timestamp(w: &mut JsonWriter<'_>, ms: u64) {
    let mut out = [0u8; 24];
    let text = timestamp(ms, &mut out);
    w.string(text);
}

/// `n / d` and `n % d` for a divisor below 2^16, in 32-bit steps: a 64-bit division would
/// pull in the runtime's (0.8 KiB of flash on Cortex-M).
fn div_small(n: u64, d: u32) -> (u64, u32) {
    let (mut q, mut r) = (0u64, 0u32);
    for shift in [48u32, 32, 16, 0] {
        let cur = (r << 16) | ((n >> shift) as u32 & 0xffff);
        q = (q << 16) | u64::from(cur / d);
        r = cur % d;
    }
    (q, r)
}

/// `ms` since the UNIX epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (years past 9999 are clamped).
pub(crate) fn timestamp(ms: u64, out: &mut [u8; 24]) -> &str {
    let ms = ms.min(253_402_300_799_999); // 9999-12-31T23:59:59.999Z
    let (secs, milli) = div_small(ms, 1000);
    let (mins, sec) = div_small(secs, 60);
    let (hours, min) = div_small(mins, 60);
    let (days, hour) = div_small(hours, 24);
    // Below 2,932,897 after the clamp.
    let (y, m, d) = civil_from_days(days as u32);
    let fields: [(usize, u32, usize); 7] = [
        (0, y, 4),
        (5, m, 2),
        (8, d, 2),
        (11, hour, 2),
        (14, min, 2),
        (17, sec, 2),
        (20, milli, 3),
    ];
    *out = *b"0000-00-00T00:00:00.000Z";
    for (at, mut v, width) in fields {
        for i in (0..width).rev() {
            if let Some(b) = out.get_mut(at + i) {
                *b = b'0' + (v % 10) as u8;
            }
            v /= 10;
        }
    }
    core::str::from_utf8(out).unwrap_or("1970-01-01T00:00:00.000Z")
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day) (H. Hinnant's
/// `civil_from_days`, for non-negative days).
fn civil_from_days(days: u32) -> (u32, u32, u32) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u32::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        let mut out = [0u8; 24];
        assert_eq!(timestamp(0, &mut out), "1970-01-01T00:00:00.000Z");
        let mut out = [0u8; 24];
        // 2026-07-28T12:34:56.789Z
        assert_eq!(
            timestamp(1_785_242_096_789, &mut out),
            "2026-07-28T12:34:56.789Z"
        );
        let mut out = [0u8; 24];
        // A leap day.
        assert_eq!(
            timestamp(951_782_400_000, &mut out),
            "2000-02-29T00:00:00.000Z"
        );
        let mut out = [0u8; 24];
        assert_eq!(timestamp(u64::MAX, &mut out), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn small_divisions_match_the_64_bit_ones() {
        for n in [0, 1, 999, 1000, 86_399_999, 1_785_242_096_789, u64::MAX] {
            for d in [24u32, 60, 1000, 65_535] {
                assert_eq!(
                    div_small(n, d),
                    (n / u64::from(d), (n % u64::from(d)) as u32)
                );
            }
        }
    }

    #[test]
    fn statuses() {
        assert!(TaskStatus::Cancelled.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
        assert_eq!(TaskStatus::InputRequired.as_str(), "input_required");
    }
}

//! Task work without a heap (feature `tasks`, the tasks extension, SEP-2663).
//!
//! The core does the protocol: a tool whose
//! [`ToolSet::task_support`](mcp_rs_core::ToolSet::task_support) allows it, called by a
//! client that negotiated the extension, gets a task before it runs
//! ([`CallRequest::task`](mcp_rs_core::CallRequest::task)); `tasks/get`, `tasks/update` and
//! `tasks/cancel` are answered from the handler's
//! [`TaskStore`]. What the core leaves to the
//! runner is the work itself, which outlives the `tools/call` that started it.
//!
//! [`TaskHost`] is that part, caller-owned: the core's [`TaskTable`] (`N` tasks of `R`
//! bytes) plus `K` jobs of `A` bytes. A tool handed a task queues a job
//! ([`TaskHost::queue`]: the tool's name and whatever the work needs, such as its
//! arguments, copied) and returns [`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer): the
//! client gets a `working` task at once. A worker takes the job and runs it to its end,
//! reporting to the table (with the HTTP server: `http::Server::serve_tasks`, one future per
//! worker, and the `http::TaskContext` it hands the runner). `tasks/update` and
//! `tasks/cancel` wake the workers waiting on the task (the host implements `TaskStore`
//! around the table and wakes them), so a worker waiting for input or sleeping notices
//! at once.
//!
//! The serial runners need nothing more: the handler returns its host from
//! [`ServerHandler::tasks`] and the application takes
//! jobs in its own loop ([`TaskHost::take_job`]) and reports through the host's
//! `TaskStore` methods.
//!
//! | limit | size | refusal |
//! |---|---|---|
//! | tasks at once | `N` ([`TaskTable`]) | the core's -32603 "Task table full", `data.limit` |
//! | a task's result, error or pending `inputRequests` | `R` bytes ([`TaskTable`]) | the task fails with -32603 and `data.required` |
//! | jobs waiting for a worker | `K` | [`TaskHost::queue`] fails the task (-32603 "No task worker free") and returns [`TaskError::Full`] |
//! | a job's name and data | `A` bytes | [`TaskHost::queue`] fails the task (-32603 "Task data exceeds its job slot") and returns [`TaskError::TooLarge`] |
//! | workers waiting for a change | `K` wakers | a worker beyond them is woken at once and polls again |

use core::task::Waker;

use mcp_rs_core::model::tasks::{TaskError, TaskId, TaskStore, TaskTable, TaskView, ID_LEN};
use mcp_rs_core::wire::json::RawJson;
use mcp_rs_core::ServerHandler;

/// The JSON-RPC code a task fails with when its job cannot be queued.
const INTERNAL_ERROR: i32 = -32603;

/// One queued job: the task id, then `buf[..name]` (the tool's name) and
/// `buf[name..name + data]` (the work's data).
#[derive(Clone, Copy, Debug)]
struct Job<const A: usize> {
    used: bool,
    seq: u32,
    id: [u8; ID_LEN],
    name: usize,
    data: usize,
    buf: [u8; A],
}

impl<const A: usize> Job<A> {
    const EMPTY: Self = Job {
        used: false,
        seq: 0,
        id: [0; ID_LEN],
        name: 0,
        data: 0,
        buf: [0; A],
    };
}

/// A job taken by a worker ([`TaskJobs::take_job`]): its task id; its tool name and data
/// are in the worker's buffer (`name` bytes, then `data` bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TakenJob {
    /// The task's id (ASCII hex).
    pub id: [u8; ID_LEN],
    /// Length of the tool's name at the start of the buffer.
    pub name: usize,
    /// Length of the data after the name.
    pub data: usize,
}

/// The core's task table with a queue of task work and the wakers of the workers: own it
/// in the handler, return it from [`ServerHandler::tasks`] and [`TaskHandler::task_jobs`].
///
/// `N` tasks of `R` bytes (the [`TaskTable`]), `K` queued jobs of `A` bytes (a tool's name
/// and its data). RAM: about `N * (R + 80) + K * (A + 56) + K * 16` bytes.
pub struct TaskHost<const N: usize, const R: usize, const K: usize, const A: usize> {
    table: TaskTable<N, R>,
    jobs: [Job<A>; K],
    next_seq: u32,
    epoch: u32,
    wakers: [Option<Waker>; K],
}

impl<const N: usize, const R: usize, const K: usize, const A: usize> core::fmt::Debug
    for TaskHost<N, R, K, A>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskHost")
            .field("table", &self.table)
            .field("queued", &self.queued())
            .finish_non_exhaustive()
    }
}

impl<const N: usize, const R: usize, const K: usize, const A: usize> TaskHost<N, R, K, A> {
    const VALID: () = assert!(K >= 1, "a task host needs at least one job slot");

    /// A host around `table` with no job queued.
    pub const fn new(table: TaskTable<N, R>) -> Self {
        let () = Self::VALID;
        TaskHost {
            table,
            jobs: [Job::EMPTY; K],
            next_seq: 0,
            epoch: 0,
            wakers: [const { None }; K],
        }
    }

    /// The table.
    pub fn table(&mut self) -> &mut TaskTable<N, R> {
        &mut self.table
    }

    /// Jobs queued and not yet taken by a worker.
    pub fn queued(&self) -> usize {
        self.jobs.iter().filter(|j| j.used).count()
    }

    /// Queues the work of task `id` (from a tool's `call`, which then returns
    /// [`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer)): `tool` names it, `data` is what
    /// it needs (its arguments, an answer gathered before the task...), both copied. When
    /// the job cannot be queued the task is failed at once (-32603, so that the client
    /// sees `failed` rather than a task that never ends) and the reason returned:
    /// [`TaskError::Full`] with `K` when every job slot is taken,
    /// [`TaskError::TooLarge`] when `tool` and `data` exceed `A` bytes.
    pub fn queue(
        &mut self,
        id: &TaskId,
        tool: &str,
        data: &str,
        now_ms: u64,
    ) -> Result<(), TaskError> {
        let needed = tool.len().saturating_add(data.len());
        let refused = if needed > A {
            Some((
                TaskError::TooLarge {
                    needed,
                    capacity: A,
                },
                "Task data exceeds its job slot",
            ))
        } else if self.jobs.iter().all(|j| j.used) {
            Some((TaskError::Full { capacity: K }, "No task worker free"))
        } else {
            None
        };
        if let Some((e, message)) = refused {
            let _ = self.fail(id.as_str(), INTERNAL_ERROR, message, now_ms);
            return Err(e);
        }
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        if let Some(job) = self.jobs.iter_mut().find(|j| !j.used) {
            job.used = true;
            job.seq = seq;
            job.id.copy_from_slice(id.as_str().as_bytes());
            job.name = tool.len();
            job.data = data.len();
            if let Some(dst) = job.buf.get_mut(..tool.len()) {
                dst.copy_from_slice(tool.as_bytes());
            }
            if let Some(dst) = job.buf.get_mut(tool.len()..needed) {
                dst.copy_from_slice(data.as_bytes());
            }
        }
        self.changed();
        Ok(())
    }

    /// Bumps the epoch and wakes every waiting worker.
    fn changed(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        for w in self.wakers.iter_mut() {
            if let Some(w) = w.take() {
                w.wake();
            }
        }
    }
}

/// What a worker needs of a [`TaskHost`], without its const generics.
pub trait TaskJobs {
    /// The table, as the session reaches it.
    fn store(&mut self) -> &mut dyn TaskStore;

    /// Takes the oldest queued job, copying its tool name and data into `out`; `None` when
    /// none is queued. A job that does not fit `out` fails its task (-32603, "Task data
    /// exceeds the worker's buffer") and the next one is taken.
    fn take_job(&mut self, out: &mut [u8], now_ms: u64) -> Option<TakenJob>;

    /// Changes so far (jobs queued, answers, cancellations, outcomes): a waiter compares it
    /// with what it saw.
    fn epoch(&self) -> u32;

    /// Wakes `waker` at the next change.
    fn register(&mut self, waker: &Waker);
}

impl<const N: usize, const R: usize, const K: usize, const A: usize> TaskJobs
    for TaskHost<N, R, K, A>
{
    fn store(&mut self) -> &mut dyn TaskStore {
        self
    }

    fn take_job(&mut self, out: &mut [u8], now_ms: u64) -> Option<TakenJob> {
        loop {
            let oldest = self
                .jobs
                .iter_mut()
                .filter(|j| j.used)
                .min_by_key(|j| j.seq.wrapping_sub(self.next_seq))?;
            oldest.used = false;
            let (id, name, data) = (oldest.id, oldest.name, oldest.data);
            let len = name.saturating_add(data);
            let copied = match (out.get_mut(..len), oldest.buf.get(..len)) {
                (Some(dst), Some(src)) => {
                    dst.copy_from_slice(src);
                    true
                }
                _ => false,
            };
            if copied {
                return Some(TakenJob { id, name, data });
            }
            let id = core::str::from_utf8(&id).unwrap_or("");
            let _ = self.table.fail(
                id,
                INTERNAL_ERROR,
                "Task data exceeds the worker's buffer",
                now_ms,
            );
        }
    }

    fn epoch(&self) -> u32 {
        self.epoch
    }

    fn register(&mut self, waker: &Waker) {
        if let Some(w) = self
            .wakers
            .iter_mut()
            .find(|w| w.as_ref().is_some_and(|w| w.will_wake(waker)))
        {
            *w = Some(waker.clone());
            return;
        }
        match self.wakers.iter_mut().find(|w| w.is_none()) {
            Some(w) => *w = Some(waker.clone()),
            None => waker.wake_by_ref(),
        }
    }
}

/// The table's operations; those that change a task wake the workers.
impl<const N: usize, const R: usize, const K: usize, const A: usize> TaskStore
    for TaskHost<N, R, K, A>
{
    fn create(&mut self, now_ms: u64) -> Result<TaskId, TaskError> {
        self.table.create(now_ms)
    }

    fn view(&mut self, id: &str, now_ms: u64) -> Option<TaskView<'_>> {
        self.table.view(id, now_ms)
    }

    fn answer(&mut self, id: &str, responses: RawJson<'_>, now_ms: u64) -> Result<(), TaskError> {
        let r = self.table.answer(id, responses, now_ms);
        self.changed();
        r
    }

    fn cancel(&mut self, id: &str, now_ms: u64) -> Result<(), TaskError> {
        let r = self.table.cancel(id, now_ms);
        self.changed();
        r
    }

    fn complete(&mut self, id: &str, result: &str, now_ms: u64) -> Result<(), TaskError> {
        let r = self.table.complete(id, result, now_ms);
        self.changed();
        r
    }

    fn fail(&mut self, id: &str, code: i32, message: &str, now_ms: u64) -> Result<(), TaskError> {
        let r = self.table.fail(id, code, message, now_ms);
        self.changed();
        r
    }

    fn remove(&mut self, id: &str) {
        self.table.remove(id);
        // A job queued for it (a tool that queued and then answered at once) goes too.
        for job in self.jobs.iter_mut() {
            if job.used && job.id.as_slice() == id.as_bytes() {
                job.used = false;
            }
        }
        self.changed();
    }

    fn ask(&mut self, id: &str, requests: &str, now_ms: u64) -> Result<(), TaskError> {
        let r = self.table.ask(id, requests, now_ms);
        self.changed();
        r
    }

    fn take_responses<'o>(
        &mut self,
        id: &str,
        out: &'o mut [u8],
        now_ms: u64,
    ) -> Result<Option<&'o str>, TaskError> {
        self.table.take_responses(id, out, now_ms)
    }

    fn is_cancelled(&mut self, id: &str, now_ms: u64) -> bool {
        self.table.is_cancelled(id, now_ms)
    }
}

/// A handler that hosts task work: its [`TaskHost`] (usually the same object its
/// [`ServerHandler::tasks`] returns).
pub trait TaskHandler: ServerHandler {
    /// The host, or `None` when this handler runs no task work.
    fn task_jobs(&mut self) -> Option<&mut dyn TaskJobs>;
}

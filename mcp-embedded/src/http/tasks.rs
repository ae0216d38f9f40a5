//! Task workers (features `http` and `tasks`): the futures that run the work of the tasks
//! the handler's [`TaskHost`](crate::tasks::TaskHost) queued, after the `tools/call` that
//! created them was answered (see [`crate::tasks`]).
//!
//! The application runs `W` workers besides its connection slots (with embassy: a task
//! pool of `W`), each with its own [`TaskWorker`] memory, all calling
//! [`Server::serve_tasks`] with the same server. A worker waits for a job, hands it to the
//! [`TaskRunner`] with a [`TaskContext`], and once the runner returns takes the next one. A
//! runner that returned without an outcome leaves the task `failed` (-32603 "Task work
//! ended without a result").

use core::convert::Infallible;
use core::future::{poll_fn, Future};
use core::task::Poll;

use mcp_rs_core::model::tasks::{TaskError, TaskStatus, ID_LEN};

use super::wait::{select, Either};
use super::Server;
use crate::tasks::{TaskHandler, TaskJobs};

/// One worker's memory: `A` bytes for the job it runs (the tool's name and its data; give
/// it the host's `A`).
#[derive(Debug)]
pub struct TaskWorker<const A: usize> {
    buf: [u8; A],
}

impl<const A: usize> TaskWorker<A> {
    /// An idle worker.
    pub const fn new() -> Self {
        TaskWorker { buf: [0; A] }
    }
}

impl<const A: usize> Default for TaskWorker<A> {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs the work of one task to its end ([`Server::serve_tasks`]), reporting through the
/// [`TaskContext`]: [`complete`](TaskContext::complete), [`fail`](TaskContext::fail), or
/// [`ask`](TaskContext::ask) and [`responses`](TaskContext::responses) for input on the
/// way. A long wait is wrapped in [`until_stopped`](TaskContext::until_stopped) so that
/// `tasks/cancel` ends it.
pub trait TaskRunner {
    /// Runs the job in `task`.
    fn run<'c>(&'c mut self, task: &'c mut TaskContext<'_>) -> impl Future<Output = ()> + 'c;
}

/// Lends the handler's task host for one operation at a time, with the time.
pub(super) trait HostAccess {
    /// Runs `f` on the host; `false` when it cannot be reached (the handler has no host,
    /// or it is borrowed, which no await ever leaves it).
    fn with(&self, f: &mut dyn FnMut(&mut dyn TaskJobs, u64)) -> bool;
    /// A task's status changed: wakes the listen streams (task status notifications).
    fn changed(&self);
}

impl<S: TaskHandler, const SESSIONS: usize, const WAITERS: usize> HostAccess
    for Server<'_, S, SESSIONS, WAITERS>
{
    fn with(&self, f: &mut dyn FnMut(&mut dyn TaskJobs, u64)) -> bool {
        let now = self.now();
        let Ok(mut handler) = self.handler.try_borrow_mut() else {
            return false;
        };
        match handler.task_jobs() {
            Some(host) => {
                f(host, now);
                true
            }
            None => false,
        }
    }
    fn changed(&self) {
        self.changes.bump_index(super::wait::TASKS);
    }
}

/// One task's job as a [`TaskRunner`] sees it: the task's id, the tool's name and the data
/// it queued, and the operations that report to the table. Each borrows the handler for
/// its own duration only.
pub struct TaskContext<'c> {
    access: &'c dyn HostAccess,
    id: [u8; ID_LEN],
    name: &'c str,
    data: &'c str,
}

impl core::fmt::Debug for TaskContext<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskContext")
            .field("id", &self.id())
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TaskContext<'_> {
    /// The task id.
    pub fn id(&self) -> &str {
        core::str::from_utf8(&self.id).unwrap_or("")
    }

    /// The tool's name, as queued.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The data the tool queued with the job.
    pub fn data(&self) -> &str {
        self.data
    }

    fn on_store<T>(
        &self,
        f: impl FnOnce(&mut dyn mcp_rs_core::model::tasks::TaskStore, &str, u64) -> T,
    ) -> Option<T> {
        let id = core::str::from_utf8(&self.id).unwrap_or("");
        let mut f = Some(f);
        let mut out = None;
        self.access.with(&mut |host, now| {
            if let Some(f) = f.take() {
                out = Some(f(host.store(), id, now));
            }
        });
        out
    }

    /// The task's status now; `None` once it is gone (expired, or the host unreachable).
    pub fn status(&self) -> Option<TaskStatus> {
        self.on_store(|s, id, now| s.view(id, now).map(|v| v.status))
            .flatten()
    }

    /// Whether the work should stop: the task was cancelled, has ended or is gone.
    pub fn is_stopped(&self) -> bool {
        self.status().is_none_or(TaskStatus::is_terminal)
    }

    /// Completes once the work should stop ([`is_stopped`](Self::is_stopped)): woken by
    /// `tasks/cancel`.
    pub async fn stopped(&self) {
        poll_fn(|cx| {
            if self.is_stopped() {
                return Poll::Ready(());
            }
            let reached = self.access.with(&mut |host, _| host.register(cx.waker()));
            if !reached {
                return Poll::Ready(());
            }
            Poll::Pending
        })
        .await;
    }

    /// Runs `work` until it finishes (`Some` with its output) or the task stops (`None`:
    /// cancelled, ended elsewhere or gone; `work` is dropped).
    pub async fn until_stopped<F: Future>(&self, work: F) -> Option<F::Output> {
        match select(work, self.stopped()).await {
            Either::First(out) => Some(out),
            Either::Second(()) => None,
        }
    }

    /// The task ends `completed` with `result` (a `CallToolResult` object on one line);
    /// [`TaskError::Terminal`] once it was cancelled, [`TaskError::Unknown`] once it
    /// expired. A result larger than the task's slot fails the task with -32603 and the
    /// size it needed ([`TaskError::TooLarge`]).
    pub fn complete(&self, result: &str) -> Result<(), TaskError> {
        let done = self
            .on_store(|s, id, now| s.complete(id, result, now))
            .unwrap_or(Err(TaskError::Unknown));
        self.access.changed();
        done
    }

    /// The task ends `failed` with a protocol-level error.
    pub fn fail(&self, code: i32, message: &str) -> Result<(), TaskError> {
        let done = self
            .on_store(|s, id, now| s.fail(id, code, message, now))
            .unwrap_or(Err(TaskError::Unknown));
        self.access.changed();
        done
    }

    /// The task waits for the client (`input_required`): `requests` is the
    /// `inputRequests` object (`{"key":{"method":...,"params":...}}`, one line).
    pub fn ask(&self, requests: &str) -> Result<(), TaskError> {
        let done = self
            .on_store(|s, id, now| s.ask(id, requests, now))
            .unwrap_or(Err(TaskError::Unknown));
        self.access.changed();
        done
    }

    /// Waits for the responses `tasks/update` delivered (woken by it) and takes them into
    /// `out`, as an object's members (`"key":value,...`, without braces): those delivered
    /// so far, which may be fewer than were asked. [`TaskError::Terminal`] when the task
    /// stopped meanwhile, [`TaskError::Unknown`] when it is gone,
    /// [`TaskError::TooLarge`] when they do not fit `out`.
    pub async fn responses<'o>(&self, out: &'o mut [u8]) -> Result<&'o str, TaskError> {
        let len = poll_fn(|cx| {
            let taken = self.on_store(|s, id, now| {
                match s.view(id, now).map(|v| v.status) {
                    None => return Err(TaskError::Unknown),
                    Some(status) if status.is_terminal() => return Err(TaskError::Terminal),
                    Some(_) => {}
                }
                s.take_responses(id, out, now).map(|t| t.map(str::len))
            });
            match taken {
                None => Poll::Ready(Err(TaskError::Unknown)),
                Some(Err(e)) => Poll::Ready(Err(e)),
                Some(Ok(Some(n))) => Poll::Ready(Ok(n)),
                Some(Ok(None)) => {
                    self.access.with(&mut |host, _| host.register(cx.waker()));
                    Poll::Pending
                }
            }
        })
        .await?;
        out.get(..len)
            .and_then(|b| core::str::from_utf8(b).ok())
            .ok_or(TaskError::Invalid)
    }
}

impl<S: TaskHandler, const SESSIONS: usize, const WAITERS: usize> Server<'_, S, SESSIONS, WAITERS> {
    /// Runs task work forever with `worker`'s memory: takes the jobs the handler's
    /// [`TaskHost`](crate::tasks::TaskHost) queued, oldest first, and runs each with
    /// `runner` to its end, after the `tools/call` that created the task was answered. Run
    /// one such future per worker beside the connection slots (with embassy: a task pool
    /// of workers), all with the same server. A runner that returns without an outcome
    /// leaves the task `failed` (-32603 "Task work ended without a result").
    pub async fn serve_tasks<R: TaskRunner, const A: usize>(
        &self,
        worker: &mut TaskWorker<A>,
        runner: &mut R,
    ) -> Infallible {
        loop {
            let job = poll_fn(|cx| {
                let mut taken = None;
                HostAccess::with(self, &mut |host, now| {
                    taken = host.take_job(&mut worker.buf, now);
                    if taken.is_none() {
                        host.register(cx.waker());
                    }
                });
                match taken {
                    Some(job) => Poll::Ready(job),
                    None => Poll::Pending,
                }
            })
            .await;
            let name_end = job.name;
            let data_end = job.name.saturating_add(job.data);
            let text = |r: core::ops::Range<usize>| {
                worker
                    .buf
                    .get(r)
                    .and_then(|b| core::str::from_utf8(b).ok())
                    .unwrap_or("")
            };
            let mut ctx = TaskContext {
                access: self,
                id: job.id,
                name: text(0..name_end),
                data: text(name_end..data_end),
            };
            runner.run(&mut ctx).await;
            if ctx.status().is_some_and(|s| !s.is_terminal()) {
                let _ = ctx.fail(-32603, "Task work ended without a result");
            }
        }
    }
}

//! hyper's header-read timer for one connection, with one tokio timer entry per connection
//! instead of one per request.
//!
//! hyper arms its `header_read_timeout` each time it starts waiting for a request head (on a
//! keep-alive connection: after every response) and drops it once the head is parsed. With
//! [`hyper_util::rt::TokioTimer`] that is, per request, a boxed tokio `Sleep`, its
//! insertion into the runtime's timer wheel (under the driver's lock) and its removal.
//! Here each deadline hyper asks for is a small [`Deadline`] that shares one tokio `Sleep`
//! per connection; the entry is moved only when it would fire too late for the deadline
//! being polled, or has fired (at most once per `header_timeout` while the connection
//! is busy). When it fires before the deadline now pending, it wakes the connection once,
//! which re-arms it. The timeout itself is unchanged: a head that is not complete within
//! `header_timeout` of hyper starting to wait for it ends the connection, as before.
//!
//! The clock is tokio's ([`tokio::time::Instant`]), so paused-time tests see the same
//! behaviour as with `TokioTimer`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

/// The per-connection tokio timer entry, created on the first wait.
type Entry = Arc<Mutex<Option<Pin<Box<tokio::time::Sleep>>>>>;

/// A [`Timer`] for one connection's hyper `http1` connection (see the module docs).
#[derive(Clone, Default)]
pub(super) struct HeadTimer {
    entry: Entry,
}

impl HeadTimer {
    pub(super) fn new() -> HeadTimer {
        HeadTimer::default()
    }
}

impl Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(Deadline {
            at: tokio::time::Instant::from_std(deadline),
            entry: self.entry.clone(),
        })
    }

    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<Deadline>() {
            Some(d) => d.get_mut().at = tokio::time::Instant::from_std(new_deadline),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// One deadline hyper waits for; resolves once `at` has passed.
struct Deadline {
    at: tokio::time::Instant,
    entry: Entry,
}

impl Sleep for Deadline {}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let at = self.at;
        let now = tokio::time::Instant::now();
        if now >= at {
            return Poll::Ready(());
        }
        let mut entry = self.entry.lock().unwrap_or_else(PoisonError::into_inner);
        let sleep = entry.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        // An entry firing earlier than `at` only wakes the connection early (which polls
        // again and moves it here); one firing later would miss the deadline.
        let fires = sleep.deadline();
        if fires > at || fires <= now {
            sleep.as_mut().reset(at);
        }
        // Registers this task's waker (ready only if the clock passed `at` meanwhile).
        sleep.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `d` once with a waker that counts its wake-ups.
    fn poll_once(d: &mut Pin<Box<dyn Sleep>>, woken: &Arc<WakeCount>) -> Poll<()> {
        let waker = std::task::Waker::from(woken.clone());
        d.as_mut().poll(&mut Context::from_waker(&waker))
    }

    #[derive(Default)]
    struct WakeCount(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for WakeCount {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn each_deadline_fires_at_its_time_with_one_entry() {
        let timer = HeadTimer::new();
        let woken = Arc::new(WakeCount::default());
        let t0 = timer.now();
        let mut first = timer.sleep_until(t0 + Duration::from_secs(10));
        assert!(poll_once(&mut first, &woken).is_pending());
        let armed = timer.entry.lock().unwrap().as_ref().map(|s| s.deadline());
        assert_eq!(
            armed,
            Some(tokio::time::Instant::from_std(t0) + Duration::from_secs(10))
        );
        drop(first);

        // A later deadline keeps the earlier entry (no move in the wheel) ...
        tokio::time::advance(Duration::from_secs(4)).await;
        let mut second = timer.sleep(Duration::from_secs(10)); // at t0 + 14 s
        assert!(poll_once(&mut second, &woken).is_pending());
        let armed_now = timer.entry.lock().unwrap().as_ref().map(|s| s.deadline());
        assert_eq!(armed_now, armed);
        // ... which fires at t0 + 10 s: a wake-up, but the deadline has not passed; the
        // entry then moves to it.
        tokio::time::advance(Duration::from_secs(6)).await;
        assert!(woken.0.load(std::sync::atomic::Ordering::SeqCst) >= 1);
        assert!(poll_once(&mut second, &woken).is_pending());
        let moved = timer.entry.lock().unwrap().as_ref().map(|s| s.deadline());
        assert_eq!(
            moved,
            Some(tokio::time::Instant::from_std(t0) + Duration::from_secs(14))
        );
        tokio::time::advance(Duration::from_millis(3_999)).await;
        assert!(poll_once(&mut second, &woken).is_pending());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(poll_once(&mut second, &woken).is_ready());

        // An earlier deadline than the entry's moves the entry back.
        let mut far = timer.sleep(Duration::from_secs(60));
        assert!(poll_once(&mut far, &woken).is_pending());
        let mut near = timer.sleep(Duration::from_secs(1));
        assert!(poll_once(&mut near, &woken).is_pending());
        let now = tokio::time::Instant::now();
        let armed = timer.entry.lock().unwrap().as_ref().map(|s| s.deadline());
        assert_eq!(armed, Some(now + Duration::from_secs(1)));
        // `reset` moves a deadline.
        timer.reset(&mut near, timer.now() + Duration::from_secs(2));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(poll_once(&mut near, &woken).is_pending());
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(poll_once(&mut near, &woken).is_ready());
    }
}

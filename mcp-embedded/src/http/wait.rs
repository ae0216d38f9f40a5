//! What a slot waits on besides its socket: list changes shared by every slot (an epoch
//! per list and the wakers of the streams waiting), and a two-way `select`.

use core::cell::{Cell, RefCell};
use core::future::{poll_fn, Future};
use core::pin::pin;
use core::task::{Poll, Waker};

use mcp_rs_core::ListKind;

/// Epochs kept: one per list ([`KINDS`]), then [`EVENTS`], [`UPDATES`] and [`TASKS`].
const EPOCHS: usize = 7;

/// The epoch bumped when the task table may have changed (a task worker reported, or a
/// request was served): listen streams subscribed to a task look for changes.
#[cfg_attr(not(feature = "tasks"), allow(dead_code))]
pub(super) const TASKS: usize = 6;

/// The epoch bumped by each resource update: it is the count of updates
/// ([`Updates`](super::updates::Updates) numbers them the same way).
pub(super) const UPDATES: usize = 5;

/// The epoch bumped when a legacy session keeps an event for resumption (resumed streams
/// wait on it).
pub(super) const EVENTS: usize = 4;

/// List changes (an epoch per [`ListKind`]), kept events ([`EVENTS`]), and the wakers of
/// the streams waiting for one (`W` at most; a stream beyond polls again at once).
#[derive(Debug)]
pub(super) struct Changes<const W: usize> {
    epochs: [Cell<u32>; EPOCHS],
    wakers: RefCell<[Option<Waker>; W]>,
}

pub(super) const KINDS: [ListKind; 4] = [
    ListKind::Tools,
    ListKind::Prompts,
    ListKind::Resources,
    ListKind::ResourceTemplates,
];

impl<const W: usize> Changes<W> {
    pub(super) const fn new() -> Self {
        Changes {
            epochs: [const { Cell::new(0) }; EPOCHS],
            wakers: RefCell::new([const { None }; W]),
        }
    }

    pub(super) fn now(&self) -> [u32; EPOCHS] {
        core::array::from_fn(|i| self.epochs.get(i).map_or(0, Cell::get))
    }

    pub(super) fn bump(&self, kind: ListKind) {
        if let Some(i) = KINDS.iter().position(|k| *k == kind) {
            self.bump_index(i);
        }
    }

    /// Bumps epoch `i` and wakes every waiting stream.
    pub(super) fn bump_index(&self, i: usize) {
        if let Some(e) = self.epochs.get(i) {
            e.set(e.get().wrapping_add(1));
        }
        if let Ok(mut wakers) = self.wakers.try_borrow_mut() {
            for w in wakers.iter_mut() {
                if let Some(w) = w.take() {
                    w.wake();
                }
            }
        }
    }

    /// Completes with the new epochs once they differ from `seen`.
    pub(super) fn wait(&self, seen: [u32; EPOCHS]) -> impl Future<Output = [u32; EPOCHS]> + '_ {
        poll_fn(move |cx| {
            let now = self.now();
            if now != seen {
                return Poll::Ready(now);
            }
            let registered = self.wakers.try_borrow_mut().is_ok_and(|mut wakers| {
                if let Some(w) = wakers
                    .iter_mut()
                    .find(|w| w.as_ref().is_some_and(|w| w.will_wake(cx.waker())))
                {
                    *w = Some(cx.waker().clone());
                    return true;
                }
                match wakers.iter_mut().find(|w| w.is_none()) {
                    Some(w) => {
                        *w = Some(cx.waker().clone());
                        true
                    }
                    None => false,
                }
            });
            if !registered {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
    }
}

/// Which of two futures finished first.
pub(super) enum Either<A, B> {
    First(A),
    Second(B),
}

/// The first of two futures to finish (the other is dropped).
pub(super) async fn select<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let (mut a, mut b) = (pin!(a), pin!(b));
    poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::First(x));
        }
        if let Poll::Ready(y) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Second(y));
        }
        Poll::Pending
    })
    .await
}

//! The global memory budget of the HTTP transport ([`crate::http::HttpConfig::memory_budget`]):
//! one counter of the bytes held in buffers that clients decide the size of — request
//! bodies being read, frames queued for a response or a stream (a JSON answer being
//! gathered, an SSE stream's queue, a GET or listen stream's queue, the backlogs kept for
//! resumption). Each holder owns a [`Permit`] for its bytes, given back when it is dropped;
//! a buffer that would take the counter past the budget is refused (new work gets 503, a
//! stream that cannot queue a frame is closed as if its client did not read).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The shared counter and its limit; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Budget(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    used: AtomicUsize,
    limit: usize,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Budget {
        Budget(Arc::new(Inner {
            used: AtomicUsize::new(0),
            limit,
        }))
    }

    /// Bytes held now.
    pub(crate) fn used(&self) -> usize {
        self.0.used.load(Ordering::Acquire)
    }

    /// The limit.
    #[cfg(test)]
    pub(crate) fn limit(&self) -> usize {
        self.0.limit
    }

    /// A permit for `bytes`, or `None` when they would take the total past the limit.
    pub(crate) fn take(&self, bytes: usize) -> Option<Permit> {
        self.add(bytes).then(|| Permit {
            budget: self.clone(),
            bytes,
        })
    }

    /// Adds `bytes` to the total unless that passes the limit.
    fn add(&self, bytes: usize) -> bool {
        let limit = self.0.limit;
        self.0
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= limit)
            })
            .is_ok()
    }
}

/// Bytes counted against a [`Budget`] until dropped.
#[derive(Debug)]
pub(crate) struct Permit {
    budget: Budget,
    bytes: usize,
}

impl Permit {
    /// Counts `more` bytes too; `false` (and nothing counted) when they would take the total
    /// past the limit.
    pub(crate) fn grow(&mut self, more: usize) -> bool {
        if !self.budget.add(more) {
            return false;
        }
        self.bytes += more;
        true
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.budget.0.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_count_until_dropped_and_never_pass_the_limit() {
        let budget = Budget::new(100);
        let mut a = budget.take(60).expect("within the limit");
        assert!(budget.take(41).is_none(), "60 + 41 > 100");
        assert!(!a.grow(41));
        assert_eq!(budget.used(), 60);
        assert!(a.grow(40));
        assert_eq!(budget.used(), 100);
        assert!(budget.take(1).is_none());
        let zero = budget.take(0).expect("nothing to count");
        drop(a);
        assert_eq!(budget.used(), 0);
        let b = budget.take(100).expect("freed");
        assert!(budget.take(usize::MAX).is_none(), "no overflow");
        drop((b, zero));
        assert_eq!((budget.used(), budget.limit()), (0, 100));
    }
}

//! Counting allocations: the system allocator instrumented by `stats_alloc` (no unsafe code
//! here: the workspace forbids it), read as the change since the server started serving.

use std::alloc::System;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

/// The global allocator: the system's, counting.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The counters when serving started.
static START: OnceLock<Region<'static, System>> = OnceLock::new();

/// Marks the end of start-up: allocations from now on are counted.
pub(crate) fn start() {
    let _ = START.set(Region::new(GLOBAL));
}

/// Allocations made by [`excluding`]'s reporting itself.
static EXCLUDED: AtomicUsize = AtomicUsize::new(0);

fn raw() -> usize {
    START.get().map_or(0, |region| {
        let change = region.change();
        change.allocations + change.reallocations
    })
}

/// Allocations and reallocations since [`start`] (0 before it), the reporting's own left
/// out.
pub(crate) fn since_start() -> usize {
    raw().saturating_sub(EXCLUDED.load(Ordering::Relaxed))
}

/// Runs `f` (the reporting: formatting, a file name) without counting what it allocates.
/// The program is single-threaded: nothing else allocates meanwhile.
pub(crate) fn excluding<R>(f: impl FnOnce() -> R) -> R {
    let before = raw();
    let r = f();
    EXCLUDED.fetch_add(raw().saturating_sub(before), Ordering::Relaxed);
    r
}

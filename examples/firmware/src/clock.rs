//! Uptime from SysTick: the 24-bit counter runs from the 25 MHz core clock and wraps every
//! 500 ms; its interrupt counts the wraps (two wake-ups a second, nothing else).

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::exception;

const CORE_HZ: u32 = 25_000_000;
const PERIOD_MS: u32 = 500;
const RELOAD: u32 = CORE_HZ / 1000 * PERIOD_MS - 1;

static PERIODS: AtomicU32 = AtomicU32::new(0);

/// Starts the counter and its wrap interrupt.
pub fn init(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

#[exception]
fn SysTick() {
    PERIODS.fetch_add(1, Ordering::Relaxed);
}

/// Milliseconds since boot.
pub fn uptime_ms() -> u64 {
    loop {
        let periods = PERIODS.load(Ordering::Relaxed);
        let current = SYST::get_current();
        // A wrap whose interrupt has not run yet would make `current` jump back: retry
        // once the handler has counted it (interrupts are enabled in the main loop).
        if SCB::is_pendst_pending() || PERIODS.load(Ordering::Relaxed) != periods {
            continue;
        }
        let elapsed = u64::from(RELOAD.saturating_sub(current));
        return u64::from(periods) * u64::from(PERIOD_MS)
            + crate::decimal::divmod(elapsed, u64::from(CORE_HZ / 1000)).0;
    }
}

/// Cycles since boot (modulo 2^32): a little entropy from the client's timing.
pub fn cycles() -> u32 {
    let periods = PERIODS.load(Ordering::Relaxed);
    periods
        .wrapping_mul(RELOAD + 1)
        .wrapping_add(RELOAD - SYST::get_current())
}

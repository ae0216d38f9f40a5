//! An embassy-time driver on SysTick (implements [`embassy_time_driver::Driver`]).
//!
//! SysTick counts the 25 MHz core clock down from `RELOAD` and interrupts once a
//! millisecond (embassy-time runs at 1 kHz: feature `tick-hz-1_000`). The handler counts
//! the ticks and wakes the timers that are due. The timers wait in a fixed-capacity
//! [`heapless::Vec`] of `(deadline, waker)`: this image has a handful of timers at most
//! (the MCP task's countdown timer, the sensor sampler's ticker), so a linear scan beats a
//! sorted queue in both flash and time.
//!
//! A millisecond interrupt is the simple choice (QEMU's idle host cost stays small); a
//! tickless driver would reprogram SysTick for the next deadline instead.

use core::cell::{Cell, RefCell};
use core::task::Waker;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::exception;
use critical_section::Mutex;
use embassy_time_driver::Driver;

const CORE_HZ: u32 = 25_000_000;
/// One millisecond of core clock cycles, minus one (SysTick counts RELOAD..=0).
const RELOAD: u32 = CORE_HZ / 1000 - 1;
/// Timers waiting at once; a timer beyond these is woken at once (embassy-time's `Timer`
/// then polls again, so it degrades to polling instead of failing).
const TIMERS: usize = 8;

struct SysTickDriver {
    /// Milliseconds since boot (a `u64`: Cortex-M4 has no 64-bit atomics, hence the mutex).
    ticks: Mutex<Cell<u64>>,
    timers: Mutex<RefCell<heapless::Vec<(u64, Waker), TIMERS>>>,
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    ticks: Mutex::new(Cell::new(0)),
    timers: Mutex::new(RefCell::new(heapless::Vec::new())),
});

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.ticks.borrow(cs).get())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            if at <= self.ticks.borrow(cs).get() {
                waker.wake_by_ref();
                return;
            }
            let mut timers = self.timers.borrow_ref_mut(cs);
            if let Some(slot) = timers.iter_mut().find(|(_, w)| w.will_wake(waker)) {
                slot.0 = slot.0.min(at);
            } else if timers.push((at, waker.clone())).is_err() {
                waker.wake_by_ref();
            }
        });
    }
}

/// Starts SysTick: a 1 ms period from the core clock, with its interrupt.
pub fn init(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

#[exception]
fn SysTick() {
    critical_section::with(|cs| {
        let ticks = DRIVER.ticks.borrow(cs);
        let now = ticks.get() + 1;
        ticks.set(now);
        DRIVER.timers.borrow_ref_mut(cs).retain(|(at, waker)| {
            let due = *at <= now;
            if due {
                waker.wake_by_ref();
            }
            !due
        });
    });
}

/// Cycles since boot (modulo 2^32): a little entropy from the client's timing.
pub fn cycles() -> u32 {
    critical_section::with(|cs| {
        let ticks = DRIVER.ticks.borrow(cs).get() as u32;
        ticks
            .wrapping_mul(RELOAD + 1)
            .wrapping_add(RELOAD - SYST::get_current())
    })
}

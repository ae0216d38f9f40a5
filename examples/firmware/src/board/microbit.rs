//! The BBC micro:bit v1 (nRF51822, a Cortex-M0 at 16 MHz; QEMU `microbit`): UART0 (receive
//! by interrupt), TIMER0 for uptime (the nRF51's Cortex-M0 has no SysTick), and two LEDs of
//! the 5x5 matrix.
//!
//! The Cortex-M0 has no atomic read-modify-write: the receive ring ([`super::arm`]) and the
//! period counter below use plain loads and stores, each with a single writer.

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m_rt::entry;

pub use super::arm::Rx;

/// `serverInfo.title`.
pub const TITLE: &str = "mcp-rs on a Cortex-M0";
/// `serverInfo.description`.
pub const DESCRIPTION: &str = "An MCP server on a BBC micro:bit (nRF51822): tools over UART0";

#[entry]
fn main() -> ! {
    uart_init();
    timer_init();
    leds::init();
    // SAFETY: the handlers share state with the main loop only through single-writer
    // atomics (the ring, PERIODS); no priority-based locking is relied upon.
    unsafe {
        let nvic = &*cortex_m::peripheral::NVIC::PTR;
        nvic.iser[0].write(1 << UART0_IRQ | 1 << TIMER0_IRQ);
    }
    crate::serve()
}

/// NVIC interrupt numbers: a peripheral's is bits 12-16 of its base address.
const UART0_IRQ: u32 = 2;
const TIMER0_IRQ: u32 = 8;

/// A device vector: a handler, or a reserved (never enabled) slot.
#[derive(Clone, Copy)]
pub union Vector {
    handler: unsafe extern "C" fn(),
    reserved: usize,
}

/// The device interrupt vectors up to the last one used (TIMER0), after cortex-m-rt's 16
/// exception vectors; the others are never enabled.
#[link_section = ".vector_table.interrupts"]
#[no_mangle]
#[used]
static __INTERRUPTS: [Vector; 9] = {
    let mut v = [Vector { reserved: 0 }; 9];
    v[UART0_IRQ as usize] = Vector { handler: uart0 };
    v[TIMER0_IRQ as usize] = Vector { handler: timer0 };
    v
};

/// Volatile access to the board's registers (only this module's constants are passed).
mod reg {
    pub fn read(addr: usize) -> u32 {
        // SAFETY: `addr` is one of this module's UART0, TIMER0 or GPIO registers: a valid,
        // aligned, always-mapped 32-bit MMIO location on the nRF51822.
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }
    pub fn write(addr: usize, value: u32) {
        // SAFETY: as for `read`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }
}

// ---- UART0 at 0x4000_2000: TX on P0.24, RX on P0.25 (the USB interface chip's serial) ----

const UART: usize = 0x4000_2000;
const TASKS_STARTRX: usize = UART;
const TASKS_STARTTX: usize = UART + 0x008;
const EVENTS_RXDRDY: usize = UART + 0x108;
const EVENTS_TXDRDY: usize = UART + 0x11C;
const EVENTS_ERROR: usize = UART + 0x124;
const INTENSET: usize = UART + 0x304;
const ERRORSRC: usize = UART + 0x480;
const ENABLE: usize = UART + 0x500;
const PSELTXD: usize = UART + 0x50C;
const PSELRXD: usize = UART + 0x514;
const RXD: usize = UART + 0x518;
const TXD: usize = UART + 0x51C;
const BAUDRATE: usize = UART + 0x524;

const INT_RXDRDY: u32 = 1 << 2;
const INT_ERROR: u32 = 1 << 9;
const ENABLE_UART: u32 = 4;
const BAUD_115200: u32 = 0x01D7_E000;
const ERROR_OVERRUN: u32 = 1 << 0;

fn uart_init() {
    reg::write(ENABLE, ENABLE_UART);
    reg::write(PSELTXD, 24);
    reg::write(PSELRXD, 25);
    reg::write(BAUDRATE, BAUD_115200);
    reg::write(INTENSET, INT_RXDRDY | INT_ERROR);
    reg::write(TASKS_STARTTX, 1);
    reg::write(TASKS_STARTRX, 1);
}

/// IRQ 2: UART0 (a received byte, or a receive error).
unsafe extern "C" fn uart0() {
    if reg::read(EVENTS_ERROR) != 0 {
        reg::write(EVENTS_ERROR, 0);
        if reg::read(ERRORSRC) & ERROR_OVERRUN != 0 {
            super::arm::overrun();
        }
        reg::write(ERRORSRC, reg::read(ERRORSRC)); // write one to clear
    }
    // The event is cleared before RXD is read: reading RXD raises it again while the
    // receive FIFO holds more bytes.
    while reg::read(EVENTS_RXDRDY) != 0 {
        reg::write(EVENTS_RXDRDY, 0);
        super::arm::push(reg::read(RXD) as u8);
    }
}

/// Sends a byte ([`super::Tx`] writes through it): one at a time, each until its TXDRDY event.
pub(super) fn send(byte: u8) {
    reg::write(EVENTS_TXDRDY, 0);
    reg::write(TXD, u32::from(byte));
    while reg::read(EVENTS_TXDRDY) == 0 {}
}

/// Waits until the bytes sent have left ([`super::Tx`]'s flush): nothing to wait for,
/// `send` returns once its byte has left.
pub(super) fn flush() {}

// ---- Uptime from TIMER0 ----
//
// 1 MHz (16 MHz / 2^4), cleared by its COMPARE[0] event every 500 ms, whose interrupt
// counts the periods (two wake-ups a second); CAPTURE[1] reads the count within a period.

const TIMER: usize = 0x4000_8000;
const TIMER_START: usize = TIMER;
const TIMER_CAPTURE1: usize = TIMER + 0x044;
const TIMER_COMPARE0: usize = TIMER + 0x140;
const TIMER_SHORTS: usize = TIMER + 0x200;
const TIMER_INTENSET: usize = TIMER + 0x304;
const TIMER_BITMODE: usize = TIMER + 0x508;
const TIMER_PRESCALER: usize = TIMER + 0x510;
const TIMER_CC0: usize = TIMER + 0x540;
const TIMER_CC1: usize = TIMER + 0x544;

const TICKS_PER_MS: u32 = 1000;
const PERIOD_MS: u32 = 500;
const PERIOD: u32 = TICKS_PER_MS * PERIOD_MS;

/// Periods counted by the TIMER0 interrupt (its only writer: a load and a store, the
/// Cortex-M0 has no `fetch_add`).
static PERIODS: AtomicU32 = AtomicU32::new(0);

fn timer_init() {
    reg::write(TIMER_BITMODE, 3); // 32 bits
    reg::write(TIMER_PRESCALER, 4); // 1 MHz
    reg::write(TIMER_CC0, PERIOD);
    reg::write(TIMER_SHORTS, 1); // COMPARE[0] clears the counter
    reg::write(TIMER_INTENSET, 1 << 16); // COMPARE[0]
    reg::write(TIMER_START, 1);
}

/// IRQ 8: TIMER0, a period has passed.
unsafe extern "C" fn timer0() {
    reg::write(TIMER_COMPARE0, 0);
    PERIODS.store(
        PERIODS.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

/// (periods, microseconds into the current period), consistently.
fn now() -> (u32, u32) {
    loop {
        let periods = PERIODS.load(Ordering::Relaxed);
        reg::write(TIMER_CAPTURE1, 1);
        let ticks = reg::read(TIMER_CC1);
        // A period end whose interrupt has not run yet would make `ticks` jump back: retry
        // once the handler has counted it (interrupts are enabled in the main loop).
        if reg::read(TIMER_COMPARE0) == 0 && PERIODS.load(Ordering::Relaxed) == periods {
            return (periods, ticks);
        }
    }
}

/// Milliseconds since boot.
pub fn uptime_ms() -> u64 {
    let (periods, ticks) = now();
    u64::from(periods) * u64::from(PERIOD_MS)
        + crate::decimal::divmod(u64::from(ticks), u64::from(TICKS_PER_MS)).0
}

/// Microseconds since boot (modulo 2^32): a little entropy from the client's timing.
pub fn cycles() -> u32 {
    let (periods, ticks) = now();
    periods.wrapping_mul(PERIOD).wrapping_add(ticks)
}

/// Two LEDs of the 5x5 matrix, both on matrix row 1 (P0.13, driven high) and lit by
/// pulling their column low: LED 0 is column 1 (P0.4), LED 1 is column 2 (P0.5). Sharing
/// the row, they can be on together without multiplexing.
pub mod leds {
    use super::reg;

    const GPIO: usize = 0x5000_0000;
    const OUT: usize = GPIO + 0x504;
    const OUTSET: usize = GPIO + 0x508;
    const OUTCLR: usize = GPIO + 0x50C;
    const DIRSET: usize = GPIO + 0x518;
    const ROW1: u32 = 1 << 13;
    /// The first column's pin: LED `i` is column `i + 1`, pin `COL_SHIFT + i`.
    const COL_SHIFT: u32 = 4;
    const COLS: u32 = 0b11 << COL_SHIFT;

    /// Both LEDs off (columns high), row 1 powered.
    pub(super) fn init() {
        reg::write(OUTSET, ROW1 | COLS);
        reg::write(DIRSET, ROW1 | COLS);
    }

    /// Bit 0 is LED 0, bit 1 is LED 1 (a low column is a lit LED).
    pub fn get() -> u32 {
        (!reg::read(OUT) & COLS) >> COL_SHIFT
    }
    /// Sets LED 0 and LED 1 from bits 0 and 1.
    pub fn set(value: u32) {
        reg::write(OUTCLR, (value << COL_SHIFT) & COLS);
        reg::write(OUTSET, (!value << COL_SHIFT) & COLS);
    }
}

//! QEMU's `mps2-an386` (ARM MPS2 FPGA board with the AN386 Cortex-M4F image): UART0 (an
//! ARM CMSDK APB UART, receive by interrupt), SysTick for uptime, and the FPGA I/O block's
//! two user LEDs.

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::{entry, exception};

pub use super::arm::Rx;

/// `serverInfo.title`.
pub const TITLE: &str = "mcp-rs on a Cortex-M4F";
/// `serverInfo.description`.
pub const DESCRIPTION: &str = "An MCP server in 32 KiB of flash: QEMU mps2-an386, tools over UART0";

#[entry]
fn main() -> ! {
    // SAFETY: `main` runs once (cortex-m-rt never re-enters it) and is the only code that
    // takes the core peripherals; `take()` would add a critical section and a flag.
    let peripherals = unsafe { cortex_m::Peripherals::steal() };
    clock_init(peripherals.SYST);
    uart_init();
    crate::serve()
}

/// The device interrupt vectors, after cortex-m-rt's 16 exception vectors. Only IRQ 0
/// (UART0 RX) is ever enabled, so the table stops there: a full 240-entry table would
/// cost 960 bytes of flash.
#[link_section = ".vector_table.interrupts"]
#[no_mangle]
#[used]
static __INTERRUPTS: [unsafe extern "C" fn(); 1] = [uart0_rx];

// ---- UART0: an ARM CMSDK APB UART at 0x4000_4000, clocked at 25 MHz ----

/// UART0 base address.
const BASE: usize = 0x4000_4000;
const DATA: usize = BASE;
const STATE: usize = BASE + 0x04;
const CTRL: usize = BASE + 0x08;
const INTCLEAR: usize = BASE + 0x0C;
const BAUDDIV: usize = BASE + 0x10;

const STATE_TX_FULL: u32 = 1 << 0;
const STATE_RX_FULL: u32 = 1 << 1;
const STATE_RX_OVERRUN: u32 = 1 << 3;
const CTRL_TX_EN: u32 = 1 << 0;
const CTRL_RX_EN: u32 = 1 << 1;
const CTRL_RX_INT_EN: u32 = 1 << 3;
const INT_RX: u32 = 1 << 1;
const INT_RX_OVERRUN: u32 = 1 << 3;

/// The peripheral clock of the mps2 boards.
const CLOCK_HZ: u32 = 25_000_000;
/// The line rate (QEMU ignores it, but the divisor must be at least 16).
const BAUD: u32 = 115_200;

/// NVIC interrupt number of UART0 RX on the mps2-an385/an386.
const RX_IRQ: u32 = 0;

/// Volatile access to the board's registers (only this module's constants are passed).
mod reg {
    pub fn read(addr: usize) -> u32 {
        // SAFETY: `addr` is one of this module's UART0 or LED registers: a valid, aligned,
        // always-mapped 32-bit MMIO location on the mps2-an386.
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }
    pub fn write(addr: usize, value: u32) {
        // SAFETY: as for `read`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }
}

/// Configures UART0 (baud divisor, TX/RX enable, RX interrupt) and unmasks its IRQ.
fn uart_init() {
    reg::write(BAUDDIV, CLOCK_HZ / BAUD);
    reg::write(CTRL, CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_INT_EN);
    reg::write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    // SAFETY: unmasking only enables the handler below, which shares state with the main
    // loop through the ring's atomics (one producer, one consumer); no priority-based
    // locking is relied upon.
    unsafe {
        let nvic = &*cortex_m::peripheral::NVIC::PTR;
        nvic.iser[0].write(1 << RX_IRQ);
    }
}

/// IRQ 0: UART0 receive.
unsafe extern "C" fn uart0_rx() {
    reg::write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    if reg::read(STATE) & STATE_RX_OVERRUN != 0 {
        reg::write(STATE, STATE_RX_OVERRUN); // write one to clear
        super::arm::overrun();
    }
    while reg::read(STATE) & STATE_RX_FULL != 0 {
        // Reading DATA clears RXFULL and lets the next byte in.
        super::arm::push(reg::read(DATA) as u8);
    }
}

/// The transmitting half: waits for TXFULL to clear before every byte.
pub struct Tx;

impl embedded_io::ErrorType for Tx {
    type Error = core::convert::Infallible;
}

impl embedded_io::Write for Tx {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        for &byte in buf {
            while reg::read(STATE) & STATE_TX_FULL != 0 {}
            reg::write(DATA, u32::from(byte));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        while reg::read(STATE) & STATE_TX_FULL != 0 {}
        Ok(())
    }
}

// ---- Uptime from SysTick ----
//
// The 24-bit counter runs from the 25 MHz core clock and wraps every 500 ms; its interrupt
// counts the wraps (two wake-ups a second, nothing else).

const CORE_HZ: u32 = 25_000_000;
const PERIOD_MS: u32 = 500;
const RELOAD: u32 = CORE_HZ / 1000 * PERIOD_MS - 1;

static PERIODS: AtomicU32 = AtomicU32::new(0);

/// Starts the counter and its wrap interrupt.
fn clock_init(mut syst: SYST) {
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

/// The board's two user LEDs: the FPGA I/O block's LED register (`0x4002_8000`, bits 0-1).
pub mod leds {
    const LED0: usize = 0x4002_8000;

    /// The LED register: bit 0 is LED 0, bit 1 is LED 1.
    pub fn get() -> u32 {
        super::reg::read(LED0)
    }
    /// Writes the LED register.
    pub fn set(value: u32) {
        super::reg::write(LED0, value)
    }
}

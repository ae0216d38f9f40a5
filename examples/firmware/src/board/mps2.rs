//! QEMU's `mps2-an386` (ARM MPS2 FPGA board with the AN386 Cortex-M4F image): UART0 (an
//! ARM CMSDK APB UART, receive by interrupt), SysTick for uptime, and the FPGA I/O block's
//! two user LEDs.

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::{entry, exception};

pub use super::arm::Rx;
use super::cmsdk_uart as uart;

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
    uart::init();
    crate::serve()
}

/// The device interrupt vectors, after cortex-m-rt's 16 exception vectors. Only IRQ 0
/// (UART0 RX) is ever enabled, so the table stops there: a full 240-entry table would
/// cost 960 bytes of flash.
#[link_section = ".vector_table.interrupts"]
#[no_mangle]
#[used]
static __INTERRUPTS: [unsafe extern "C" fn(); 1] = [uart0_rx];

// ---- UART0: an ARM CMSDK APB UART (registers in cmsdk_uart.rs, shared with the embassy image) ----

/// IRQ 0: UART0 receive.
unsafe extern "C" fn uart0_rx() {
    if uart::ack_rx_interrupt() {
        super::arm::overrun();
    }
    while let Some(byte) = uart::receive() {
        super::arm::push(byte);
    }
}

/// Sends a byte ([`super::Tx`] writes through it), waiting for TXFULL to clear first.
pub(super) fn send(byte: u8) {
    uart::send(byte);
}

/// Waits for TXFULL to clear ([`super::Tx`]'s flush).
pub(super) fn flush() {
    uart::flush();
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
        // SAFETY: LED0 is the FPGA I/O block's LED register: a valid, aligned,
        // always-mapped 32-bit MMIO location on the mps2-an386.
        unsafe { core::ptr::read_volatile(LED0 as *const u32) }
    }
    /// Writes the LED register.
    pub fn set(value: u32) {
        // SAFETY: as for `get`.
        unsafe { core::ptr::write_volatile(LED0 as *mut u32, value) }
    }
}

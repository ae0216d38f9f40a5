//! UART0 of the mps2-an386: an ARM CMSDK APB UART at `0x4000_4000`, clocked at 25 MHz. The
//! registers only; the board modules own what is done with the bytes. Shared by
//! `examples/firmware` (`board/mps2.rs`) and `examples/firmware-embassy` (`src/uart.rs`,
//! through `#[path]`). Every function is `#[inline(always)]`: the images stay as small as
//! with the registers written in place.

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

#[inline(always)]
fn read(addr: usize) -> u32 {
    // SAFETY: `addr` is one of this module's UART0 registers: a valid, aligned,
    // always-mapped 32-bit MMIO location on the mps2-an386.
    unsafe { core::ptr::read_volatile(addr as *const u32) }
}

#[inline(always)]
fn write(addr: usize, value: u32) {
    // SAFETY: as for `read`.
    unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
}

/// Configures UART0 (baud divisor, TX/RX enable, RX interrupt) and unmasks its IRQ (IRQ 0,
/// vector 16). The caller's handler must be in place and its state ready.
#[inline(always)]
pub fn init() {
    write(BAUDDIV, CLOCK_HZ / BAUD);
    write(CTRL, CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_INT_EN);
    write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    // SAFETY: unmasking only enables the board's RX handler, which shares state with the
    // main loop or task through a single-producer single-consumer ring and atomics; no
    // priority-based locking is relied upon.
    unsafe {
        let nvic = &*cortex_m::peripheral::NVIC::PTR;
        nvic.iser[0].write(1 << RX_IRQ);
    }
}

/// In the RX interrupt: clears it, and reports (and clears) a hardware receive overrun.
#[inline(always)]
pub fn ack_rx_interrupt() -> bool {
    write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    let overrun = read(STATE) & STATE_RX_OVERRUN != 0;
    if overrun {
        write(STATE, STATE_RX_OVERRUN); // write one to clear
    }
    overrun
}

/// The next received byte, if one is waiting (reading DATA clears RXFULL and lets the
/// next byte in).
#[inline(always)]
pub fn receive() -> Option<u8> {
    (read(STATE) & STATE_RX_FULL != 0).then(|| read(DATA) as u8)
}

/// Sends a byte, waiting for TXFULL to clear first.
#[inline(always)]
pub fn send(byte: u8) {
    flush();
    write(DATA, u32::from(byte));
}

/// Waits for TXFULL to clear.
#[inline(always)]
pub fn flush() {
    while read(STATE) & STATE_TX_FULL != 0 {}
}

//! UART0 of the mps2-an386: an ARM CMSDK APB UART at `0x4000_4000`, clocked at 25 MHz.
//!
//! Reception is interrupt driven (UART0 RX is IRQ 0): the handler moves bytes into a ring
//! buffer, and [`Rx::read`] sleeps with `WFI` while the ring is empty, so an idle firmware
//! costs the host no CPU. Transmission polls `STATE.TXFULL` before every byte.
//!
//! A ring overflow or a hardware receive overrun is reported by [`Rx::read`] as
//! [`Overrun`] once the bytes received before it have been delivered; bytes arriving until
//! then are dropped (the MCP runner resyncs at the next newline).

use core::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize};

use cortex_m::interrupt;

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

/// Bytes buffered between the interrupt handler and the MCP runner.
const RING: usize = 512;

/// Volatile access to the UART's registers (only the constants above are ever passed).
mod reg {
    pub fn read(addr: usize) -> u32 {
        // SAFETY: `addr` is one of this module's UART0 registers: a valid, aligned,
        // always-mapped 32-bit MMIO location on the mps2-an386.
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }
    pub fn write(addr: usize, value: u32) {
        // SAFETY: as for `read`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }
}

/// The receive ring: a single producer (the interrupt handler) and a single consumer (the
/// main loop), so atomics are enough and neither side needs a critical section. `HEAD` and
/// `TAIL` count bytes read and written (wrapping); `TAIL - HEAD` are buffered.
static RING_BUF: [AtomicU8; RING] = [const { AtomicU8::new(0) }; RING];
static HEAD: AtomicUsize = AtomicUsize::new(0);
static TAIL: AtomicUsize = AtomicUsize::new(0);
/// Bytes were lost; set until the reader has reported it. While set, the handler drops
/// every byte, so that no bytes from after the gap are spliced onto bytes from before it.
static OVERRUN: AtomicBool = AtomicBool::new(false);

/// Configures UART0 (baud divisor, TX/RX enable, RX interrupt) and unmasks its IRQ.
pub fn init() {
    reg::write(BAUDDIV, CLOCK_HZ / BAUD);
    reg::write(CTRL, CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_INT_EN);
    reg::write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    // SAFETY: unmasking only enables the handler below, which shares state with the main
    // loop through atomics (one producer, one consumer); no priority-based locking is
    // relied upon.
    unsafe {
        let nvic = &*cortex_m::peripheral::NVIC::PTR;
        nvic.iser[0].write(1 << RX_IRQ);
    }
}

/// The UART0 RX interrupt handler (vector 16 + IRQ 0).
pub fn on_rx_interrupt() {
    reg::write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    if reg::read(STATE) & STATE_RX_OVERRUN != 0 {
        reg::write(STATE, STATE_RX_OVERRUN); // write one to clear
        OVERRUN.store(true, Relaxed);
    }
    while reg::read(STATE) & STATE_RX_FULL != 0 {
        // Reading DATA clears RXFULL and lets the next byte in.
        let byte = reg::read(DATA) as u8;
        let tail = TAIL.load(Relaxed);
        if OVERRUN.load(Relaxed) || tail.wrapping_sub(HEAD.load(Acquire)) >= RING {
            OVERRUN.store(true, Relaxed);
            continue;
        }
        if let Some(slot) = RING_BUF.get(tail % RING) {
            slot.store(byte, Relaxed);
        }
        TAIL.store(tail.wrapping_add(1), Release);
    }
}

/// A receive overrun: bytes were lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overrun;

impl core::fmt::Display for Overrun {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("UART receive overrun")
    }
}

impl core::error::Error for Overrun {}

impl embedded_io::Error for Overrun {
    fn kind(&self) -> embedded_io::ErrorKind {
        embedded_io::ErrorKind::Other
    }
}

/// The receiving half: blocks (sleeping) until bytes arrive.
pub struct Rx;

impl embedded_io::ErrorType for Rx {
    type Error = Overrun;
}

impl embedded_io::Read for Rx {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Overrun> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let (mut head, tail) = (HEAD.load(Relaxed), TAIL.load(Acquire));
            let mut n = 0;
            for slot in buf.iter_mut() {
                if head == tail {
                    break;
                }
                if let Some(byte) = RING_BUF.get(head % RING) {
                    *slot = byte.load(Relaxed);
                }
                head = head.wrapping_add(1);
                n += 1;
            }
            if n > 0 {
                HEAD.store(head, Release);
                return Ok(n);
            }
            if OVERRUN.swap(false, Relaxed) {
                return Err(Overrun);
            }
            interrupt::free(|_| {
                // Interrupts are masked here, so none can slip in between this check and
                // the sleep: a pending one still ends WFI, and runs when `free` returns.
                if TAIL.load(Relaxed) == head && !OVERRUN.load(Relaxed) {
                    cortex_m::asm::wfi();
                }
            });
        }
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

//! UART0 of the mps2-an386: an ARM CMSDK APB UART at `0x4000_4000`, clocked at 25 MHz.
//!
//! Reception is interrupt driven (UART0 RX is IRQ 0): the handler moves bytes into a ring
//! buffer, and [`Rx::read`] sleeps with `WFI` while the ring is empty, so an idle firmware
//! costs the host no CPU. Transmission polls `STATE.TXFULL` before every byte.
//!
//! A ring overflow or a hardware receive overrun is reported by [`Rx::read`] as
//! [`Overrun`] once the bytes received before it have been delivered; bytes arriving until
//! then are dropped (the MCP runner resyncs at the next newline).

use core::cell::RefCell;

use cortex_m::interrupt::{self, Mutex};

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

struct Ring {
    buf: [u8; RING],
    head: usize,
    len: usize,
    /// Bytes were lost; set until the reader has reported it.
    overrun: bool,
}

impl Ring {
    const fn new() -> Self {
        Ring {
            buf: [0; RING],
            head: 0,
            len: 0,
            overrun: false,
        }
    }

    fn push(&mut self, byte: u8) {
        if self.overrun || self.len == RING {
            // Drop everything until the reader reports the gap, so that no bytes from
            // after it are spliced onto bytes from before it.
            self.overrun = true;
            return;
        }
        let tail = (self.head + self.len) % RING;
        self.buf[tail] = byte;
        self.len += 1;
    }

    fn pop_into(&mut self, out: &mut [u8]) -> usize {
        let n = self.len.min(out.len());
        for slot in out.iter_mut().take(n) {
            *slot = self.buf[self.head];
            self.head = (self.head + 1) % RING;
        }
        self.len -= n;
        n
    }
}

static RX_RING: Mutex<RefCell<Ring>> = Mutex::new(RefCell::new(Ring::new()));

/// Configures UART0 (baud divisor, TX/RX enable, RX interrupt) and unmasks its IRQ.
pub fn init() {
    reg::write(BAUDDIV, CLOCK_HZ / BAUD);
    reg::write(CTRL, CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_INT_EN);
    reg::write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    // SAFETY: unmasking only enables the handler below, which shares state with the main
    // loop through a critical-section mutex; no priority-based locking is relied upon.
    unsafe {
        let nvic = &*cortex_m::peripheral::NVIC::PTR;
        nvic.iser[0].write(1 << RX_IRQ);
    }
}

/// The UART0 RX interrupt handler (vector 16 + IRQ 0).
pub fn on_rx_interrupt() {
    reg::write(INTCLEAR, INT_RX | INT_RX_OVERRUN);
    interrupt::free(|cs| {
        let mut ring = RX_RING.borrow(cs).borrow_mut();
        if reg::read(STATE) & STATE_RX_OVERRUN != 0 {
            reg::write(STATE, STATE_RX_OVERRUN); // write one to clear
            ring.overrun = true;
        }
        while reg::read(STATE) & STATE_RX_FULL != 0 {
            // Reading DATA clears RXFULL and lets the next byte in.
            ring.push(reg::read(DATA) as u8);
        }
    });
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
            let got = interrupt::free(|cs| {
                let mut ring = RX_RING.borrow(cs).borrow_mut();
                let n = ring.pop_into(buf);
                if n > 0 {
                    return Some(Ok(n));
                }
                if ring.overrun {
                    ring.overrun = false;
                    return Some(Err(Overrun));
                }
                // Interrupts are masked here, so none can slip in between the check above
                // and the sleep: a pending one still ends WFI, and runs when `free` returns.
                cortex_m::asm::wfi();
                None
            });
            if let Some(result) = got {
                return result;
            }
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

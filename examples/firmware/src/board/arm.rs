//! What the Cortex-M boards share: the UART receive ring between the board's receive
//! interrupt and the runner, and the panic handler.
//!
//! Reception is interrupt driven: the board's UART handler moves bytes into the ring with
//! [`push`], and [`Rx::read`] sleeps with `WFI` while the ring is empty, so an idle firmware
//! costs the host no CPU.
//!
//! A ring overflow or a hardware receive overrun ([`overrun`]) is reported by [`Rx::read`]
//! as [`Overrun`] once the bytes received before it have been delivered; bytes arriving
//! until then are dropped (the MCP runner resyncs at the next newline).
//!
//! Only atomic loads and stores are used (the Cortex-M0 has no read-modify-write atomics):
//! one producer (the handler) and one consumer (the main loop), and the one flag both sides
//! write is cleared inside a critical section.

use core::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize};

use cortex_m::interrupt;

/// Bytes buffered between the interrupt handler and the MCP runner.
const RING: usize = 512;

/// The receive ring. `HEAD` and `TAIL` count bytes read and written (wrapping); `TAIL -
/// HEAD` are buffered.
static RING_BUF: [AtomicU8; RING] = [const { AtomicU8::new(0) }; RING];
static HEAD: AtomicUsize = AtomicUsize::new(0);
static TAIL: AtomicUsize = AtomicUsize::new(0);
/// Bytes were lost; set until the reader has reported it. While set, the handler drops
/// every byte, so that no bytes from after the gap are spliced onto bytes from before it.
static OVERRUN: AtomicBool = AtomicBool::new(false);

/// From the receive interrupt handler: one received byte.
pub fn push(byte: u8) {
    let tail = TAIL.load(Relaxed);
    if OVERRUN.load(Relaxed) || tail.wrapping_sub(HEAD.load(Acquire)) >= RING {
        OVERRUN.store(true, Relaxed);
        return;
    }
    if let Some(slot) = RING_BUF.get(tail % RING) {
        slot.store(byte, Relaxed);
    }
    TAIL.store(tail.wrapping_add(1), Release);
}

/// From the receive interrupt handler: the UART lost bytes.
pub fn overrun() {
    OVERRUN.store(true, Relaxed);
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
            let overrun = interrupt::free(|_| {
                // Interrupts are masked here, so none can slip in between these checks and
                // the sleep: a pending one still ends WFI, and runs when `free` returns.
                if TAIL.load(Relaxed) != head {
                    return false;
                }
                if OVERRUN.load(Relaxed) {
                    OVERRUN.store(false, Relaxed);
                    return true;
                }
                cortex_m::asm::wfi();
                false
            });
            if overrun {
                return Err(Overrun);
            }
        }
    }
}

/// A panic (none is expected: the core and runner are panic-free) resets the board; the
/// client sees its pending request time out and can start over.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    cortex_m::peripheral::SCB::sys_reset()
}

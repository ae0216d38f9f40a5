//! UART0 of the mps2-an386 (an ARM CMSDK APB UART at `0x4000_4000`, clocked at 25 MHz) as
//! an async byte stream: [`embedded_io_async::Read`] on an interrupt-fed ring, and
//! [`embedded_io_async::Write`].
//!
//! Reception is interrupt driven (UART0 RX is IRQ 0): [`on_rx_interrupt`] moves every
//! received byte into a [`heapless::spsc`] queue (the interrupt is its only producer, the
//! MCP task its only consumer) and wakes the reader. [`Rx::read`] takes bytes only when it
//! completes, so dropping it (losing a `select`) loses nothing: it is cancel-safe, as the
//! runner's `read` requires.
//!
//! A full ring or a hardware receive overrun is reported by the next read as [`Overrun`]
//! once the bytes received before it have been delivered; bytes arriving until then are
//! dropped (the MCP runner resyncs at the next newline).
//!
//! Transmission polls `STATE.TXFULL` before every byte rather than waiting on the TX
//! interrupt: QEMU's UART sends every byte at once, so the task never actually waits
//! (on hardware at 115200 baud, a TX-interrupt-fed ring would free the executor).

use core::cell::RefCell;
use core::future::poll_fn;
use core::sync::atomic::{AtomicBool, Ordering::Relaxed};
use core::task::Poll;

use critical_section::Mutex;
use embassy_sync::waitqueue::AtomicWaker;
use heapless::spsc::{Consumer, Producer, Queue};

// The CMSDK UART's registers, shared with examples/firmware's mps2 board.
#[path = "../../firmware/src/board/cmsdk_uart.rs"]
mod cmsdk;

/// The receive ring: 512 bytes (a `heapless::spsc::Queue` of N holds N - 1).
type Ring = Queue<u8, 513>;

/// The ring's storage. Split once, in [`init`]; the halves live in [`PRODUCER`] and [`Rx`].
static mut RING: Ring = Queue::new();
/// The interrupt handler's half. Behind a critical-section mutex only to be shareable as
/// a `static`: the handler is its one user, and it runs with its own priority.
static PRODUCER: Mutex<RefCell<Option<Producer<'static, u8>>>> = Mutex::new(RefCell::new(None));
/// Wakes the task waiting in [`Rx::read`].
static RX_WAKER: AtomicWaker = AtomicWaker::new();
/// Bytes were lost; set until the reader has reported it. While set, the handler drops
/// every byte, so that no bytes from after the gap are spliced onto bytes from before it.
static OVERRUN: AtomicBool = AtomicBool::new(false);

/// Configures UART0 (baud divisor, TX/RX enable, RX interrupt), unmasks its IRQ and
/// returns the two halves. Call once.
pub fn init() -> (Rx, Tx) {
    // SAFETY: `init` is called once, before the interrupt is unmasked: this is the only
    // reference ever made to `RING`, and its halves are `'static` from here on.
    let (producer, consumer) = unsafe { (*core::ptr::addr_of_mut!(RING)).split() };
    critical_section::with(|cs| *PRODUCER.borrow_ref_mut(cs) = Some(producer));
    // The handler below shares state with the task through the spsc queue (one producer,
    // one consumer) and atomics.
    cmsdk::init();
    (Rx { ring: consumer }, Tx)
}

/// The UART0 RX interrupt handler (vector 16 + IRQ 0).
pub fn on_rx_interrupt() {
    if cmsdk::ack_rx_interrupt() {
        OVERRUN.store(true, Relaxed);
    }
    critical_section::with(|cs| {
        let mut producer = PRODUCER.borrow_ref_mut(cs);
        while let Some(byte) = cmsdk::receive() {
            let stored = !OVERRUN.load(Relaxed)
                && producer.as_mut().is_some_and(|p| p.enqueue(byte).is_ok());
            if !stored {
                OVERRUN.store(true, Relaxed);
            }
        }
    });
    RX_WAKER.wake();
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

impl embedded_io_async::Error for Overrun {
    fn kind(&self) -> embedded_io_async::ErrorKind {
        embedded_io_async::ErrorKind::Other
    }
}

/// The receiving half: completes once bytes are buffered (or an overrun is to report).
pub struct Rx {
    ring: Consumer<'static, u8>,
}

impl embedded_io_async::ErrorType for Rx {
    type Error = Overrun;
}

impl embedded_io_async::Read for Rx {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Overrun> {
        if buf.is_empty() {
            return Ok(0);
        }
        poll_fn(|cx| {
            // Register first, then look: a byte that arrives in between wakes us again.
            RX_WAKER.register(cx.waker());
            let mut n = 0;
            for slot in buf.iter_mut() {
                match self.ring.dequeue() {
                    Some(byte) => *slot = byte,
                    None => break,
                }
                n += 1;
            }
            if n > 0 {
                Poll::Ready(Ok(n))
            } else if OVERRUN.swap(false, Relaxed) {
                Poll::Ready(Err(Overrun))
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

/// The transmitting half: waits for TXFULL to clear before every byte.
pub struct Tx;

impl embedded_io_async::ErrorType for Tx {
    type Error = core::convert::Infallible;
}

impl embedded_io_async::Write for Tx {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        for &byte in buf {
            cmsdk::send(byte);
        }
        Ok(buf.len())
    }

    async fn flush(&mut self) -> Result<(), Self::Error> {
        cmsdk::flush();
        Ok(())
    }
}

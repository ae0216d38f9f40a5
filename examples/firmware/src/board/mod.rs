//! The board: everything the firmware needs from the hardware, one module per board, chosen
//! by the build target (build.rs sets `cfg(board = "...")` from `TARGET`):
//!
//! | target | `board` | module |
//! | --- | --- | --- |
//! | `thumbv7em-none-eabihf` | `mps2` | [`mps2`]: QEMU `mps2-an386` (Cortex-M4F) |
//! | `thumbv6m-none-eabi` | `microbit` | `microbit`: BBC micro:bit v1 (nRF51822, Cortex-M0) |
//! | `riscv32imac-unknown-none-elf` | `riscv` | `riscv`: QEMU `sifive_e` (SiFive FE310, HiFive1) |
//!
//! Each provides the same items:
//!
//! - the seam the tools use ([`crate::tools`]): `uptime_ms()` (milliseconds since boot),
//!   `cycles()` (a few bits of timing entropy) and `leds::{get, set}` (two user LEDs, bits
//!   0 and 1);
//! - the UART halves the runner reads and writes: `Rx` (`embedded_io`), and `send` and
//!   `flush` for the shared transmitting half [`Tx`];
//! - `TITLE` and `DESCRIPTION` for the server's `serverInfo`;
//! - the entry point (the runtime crate's `#[entry]`), which initialises the board and
//!   calls [`crate::serve`], the interrupt vectors it needs, and the panic handler.
//!
//! The two Cortex-M boards share the interrupt-driven receive ring and the panic handler
//! ([`arm`]); mps2's UART registers ([`cmsdk_uart`]) are shared with the embassy image
//! (`examples/firmware-embassy/src/uart.rs`, through `#[path]`).

#[cfg(target_arch = "arm")]
mod arm;

#[cfg(board = "mps2")]
mod cmsdk_uart;
#[cfg(board = "mps2")]
mod mps2;
#[cfg(board = "mps2")]
use mps2 as chosen;
#[cfg(board = "mps2")]
pub use mps2::*;

#[cfg(board = "microbit")]
mod microbit;
#[cfg(board = "microbit")]
use microbit as chosen;
#[cfg(board = "microbit")]
pub use microbit::*;

#[cfg(board = "riscv")]
mod riscv;
#[cfg(board = "riscv")]
use riscv as chosen;
#[cfg(board = "riscv")]
pub use riscv::*;

/// The transmitting half of the board's UART: every byte through the board's blocking
/// `send`, and its `flush`.
pub struct Tx;

impl embedded_io::ErrorType for Tx {
    type Error = core::convert::Infallible;
}

impl embedded_io::Write for Tx {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        for &byte in buf {
            chosen::send(byte);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        chosen::flush();
        Ok(())
    }
}

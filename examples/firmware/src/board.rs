//! What the tools need from the board, the one seam between [`crate::tools`] and the
//! hardware: milliseconds since boot, a few bits of timing entropy, and two user LEDs.
//! Another board (or an embassy image that reuses the tools) provides a module of the same
//! shape.

pub use crate::clock::{cycles, uptime_ms};

/// The board's two user LEDs: the FPGA I/O block's LED register (`0x4002_8000`, bits 0-1).
pub mod leds {
    const LED0: usize = 0x4002_8000;

    /// The LED register: bit 0 is LED 0, bit 1 is LED 1.
    pub fn get() -> u32 {
        // SAFETY: LED0 of the mps2 FPGA I/O block: a valid, aligned 32-bit MMIO register.
        unsafe { core::ptr::read_volatile(LED0 as *const u32) }
    }
    /// Writes the LED register.
    pub fn set(value: u32) {
        // SAFETY: as for `get`.
        unsafe { core::ptr::write_volatile(LED0 as *mut u32, value) }
    }
}

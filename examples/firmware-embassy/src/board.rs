//! What the shared tools (`examples/firmware/src/tools.rs`) need from the board, provided
//! on embassy: milliseconds since boot from embassy-time (this image's SysTick driver,
//! [`crate::time_driver`]), a few bits of timing entropy, and the two user LEDs.

/// Milliseconds since boot (embassy-time's clock).
pub fn uptime_ms() -> u64 {
    embassy_time::Instant::now().as_millis()
}

/// Cycles since boot (modulo 2^32): a little entropy from the client's timing.
pub fn cycles() -> u32 {
    crate::time_driver::cycles()
}

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

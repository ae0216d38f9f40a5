//! What the shared tools (`examples/firmware/src/tools.rs`) need from the board, on the
//! RP2040 with embassy: milliseconds since boot from embassy-time (embassy-rp's driver,
//! the 1 MHz TIMER), a few bits of timing entropy, and two LEDs: LED 0 is the Pico's (and
//! the W5500-EVB-Pico's) green user LED on GPIO 25, LED 1 an external LED on GPIO 15 (the
//! board has one LED; without a second one wired, bit 1 only changes the pin).

use core::cell::RefCell;

use embassy_rp::gpio::Output;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::blocking_mutex::Mutex;

/// Milliseconds since boot (embassy-time's clock).
pub fn uptime_ms() -> u64 {
    embassy_time::Instant::now().as_millis()
}

/// Microseconds since boot (modulo 2^32): a little entropy from the client's timing (the
/// Cortex-M0+ has no cycle counter; the TIMER counts microseconds).
pub fn cycles() -> u32 {
    embassy_time::Instant::now().as_ticks() as u32
}

/// The two LED pins, set once by [`leds::init`].
static LEDS: Mutex<CriticalSectionRawMutex, RefCell<Option<[Output<'static>; 2]>>> =
    Mutex::new(RefCell::new(None));

/// The board's LEDs as a bit field: bit 0 is LED 0 (GPIO 25), bit 1 is LED 1 (GPIO 15).
pub mod leds {
    use super::{Output, LEDS};

    /// Hands the two LED outputs (LED 0, LED 1) to the tools.
    pub fn init(pins: [Output<'static>; 2]) {
        LEDS.lock(|leds| *leds.borrow_mut() = Some(pins));
    }

    /// The LEDs that are on (0 before [`init`]).
    pub fn get() -> u32 {
        LEDS.lock(|leds| match leds.borrow().as_ref() {
            Some(pins) => pins
                .iter()
                .enumerate()
                .map(|(i, pin)| u32::from(pin.is_set_high()) << i)
                .sum(),
            None => 0,
        })
    }

    /// Turns each LED on or off after its bit (nothing before [`init`]).
    pub fn set(value: u32) {
        LEDS.lock(|leds| {
            if let Some(pins) = leds.borrow_mut().as_mut() {
                for (i, pin) in pins.iter_mut().enumerate() {
                    pin.set_level((value >> i & 1 != 0).into());
                }
            }
        });
    }
}

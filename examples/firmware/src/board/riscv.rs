//! SiFive's FE310 (the HiFive1 board's RV32IMAC; QEMU `sifive_e`): UART0, uptime from the
//! CLINT's `mtime`, `mcycle` for entropy, and the board's green and blue LEDs on GPIO.
//!
//! Why `sifive_e` and not `virt`: it is a real board (the image runs from the SPI flash at
//! 0x2040_0000 with 16 KiB of RAM, as on a HiFive1, and has LEDs on GPIO); `virt` would run
//! the image from RAM and has no LED.
//!
//! Reception polls the UART's 8-byte receive FIFO from [`Rx::read`] and sleeps with `WFI`
//! while it is empty: the UART's receive-watermark interrupt is enabled at the UART, the
//! PLIC and `mie`, but never globally (`mstatus.MIE` stays clear), so it ends `WFI` without
//! trapping, and an idle firmware costs the host no CPU. No byte is lost while the firmware
//! is busy answering: QEMU's SiFive UART takes no input while its FIFO is full, so the
//! sender waits (on a real HiFive1, a client must not send faster than the FIFO is read,
//! or a ring filled by an interrupt handler, as on the Cortex-M boards, would be needed).

use riscv_rt::entry;

/// `serverInfo.title`.
pub const TITLE: &str = "mcp-rs on a RISC-V RV32IMAC";
/// `serverInfo.description`.
pub const DESCRIPTION: &str = "An MCP server on a SiFive FE310 (HiFive1): tools over UART0";

#[entry]
fn main() -> ! {
    uart_init();
    leds::init();
    clock_init();
    crate::serve()
}

/// A panic (none is expected: the core and runner are panic-free) stops the board (the FE310
/// has no software reset short of the watchdog); the client sees its request time out.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        riscv::asm::wfi();
    }
}

/// Volatile access to the board's registers (only this module's constants are passed).
mod reg {
    pub fn read(addr: usize) -> u32 {
        // SAFETY: `addr` is one of this module's UART0, PLIC, CLINT, AON or GPIO registers:
        // a valid, aligned, always-mapped 32-bit MMIO location on the FE310.
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }
    pub fn write(addr: usize, value: u32) {
        // SAFETY: as for `read`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }
}

// ---- UART0 at 0x1001_3000 (GPIO 16 RX, 17 TX: the USB interface chip's serial) ----

const UART: usize = 0x1001_3000;
const TXDATA: usize = UART;
const RXDATA: usize = UART + 0x04;
const TXCTRL: usize = UART + 0x08;
const RXCTRL: usize = UART + 0x0C;
const IE: usize = UART + 0x10;
const DIV: usize = UART + 0x18;
const FIFO_FULL: u32 = 1 << 31;
const FIFO_EMPTY: u32 = 1 << 31;
const IE_RXWM: u32 = 1 << 1;

/// The PLIC: UART0 is source 3; hart 0's machine-mode context is 0.
const PLIC: usize = 0x0C00_0000;
const UART0_SOURCE: u32 = 3;
const PLIC_PRIORITY: usize = PLIC + 4 * UART0_SOURCE as usize;
const PLIC_ENABLE: usize = PLIC + 0x2000;
const PLIC_THRESHOLD: usize = PLIC + 0x20_0000;
const PLIC_CLAIM: usize = PLIC + 0x20_0004;

fn uart_init() {
    // The pins to the UART (I/O function 0).
    reg::write(leds::IOF_SEL, reg::read(leds::IOF_SEL) & !(0b11 << 16));
    reg::write(leds::IOF_EN, reg::read(leds::IOF_EN) | 0b11 << 16);
    reg::write(DIV, 16_000_000 / 115_200 - 1); // the bus clock after reset; QEMU ignores it
    reg::write(TXCTRL, 1); // txen, one stop bit
    reg::write(RXCTRL, 1); // rxen, watermark 0: "at least one byte"
    reg::write(IE, IE_RXWM);
    reg::write(PLIC_PRIORITY, 1);
    reg::write(PLIC_ENABLE, 1 << UART0_SOURCE);
    reg::write(PLIC_THRESHOLD, 0);
    // SAFETY: enables the machine external interrupt in `mie` only; `mstatus.MIE` stays
    // clear, so it wakes `WFI` and never traps.
    unsafe { riscv::register::mie::set_mext() };
}

/// The receiving half: reads the FIFO, sleeping while it is empty.
pub struct Rx;

impl embedded_io::ErrorType for Rx {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Rx {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut acknowledged = false;
        loop {
            let mut n = 0;
            for slot in buf.iter_mut() {
                let data = reg::read(RXDATA); // pops a byte unless EMPTY is set
                if data & FIFO_EMPTY != 0 {
                    break;
                }
                *slot = data as u8;
                n += 1;
            }
            if n > 0 {
                return Ok(n);
            }
            if acknowledged {
                // Empty after the acknowledgement: a byte arriving from now on raises the
                // interrupt again, which ends WFI (or keeps it from sleeping).
                riscv::asm::wfi();
                acknowledged = false;
            } else {
                // Claim and complete the PLIC's interrupt, so that it can be raised anew,
                // then look at the FIFO once more before sleeping.
                let source = reg::read(PLIC_CLAIM);
                if source != 0 {
                    reg::write(PLIC_CLAIM, source);
                }
                acknowledged = true;
            }
        }
    }
}

/// Sends a byte ([`super::Tx`] writes through it), waiting for room in the transmit FIFO first.
pub(super) fn send(byte: u8) {
    while reg::read(TXDATA) & FIFO_FULL != 0 {}
    reg::write(TXDATA, u32::from(byte));
}

/// [`super::Tx`]'s flush: nothing to wait for (the FIFO drains on its own).
pub(super) fn flush() {}

// ---- Uptime from the CLINT's mtime ----
//
// On the FE310, `mtime` counts the 32,768 Hz real-time clock; QEMU before 8.1 (Debian 12's
// 7.2) counts it at 10 MHz and has no always-on (AON) block. [`clock_init`] tells them
// apart by whether the AON watchdog's compare register keeps a value written to it.

const MTIME_LO: usize = 0x0200_BFF8;
const MTIME_HI: usize = 0x0200_BFFC;
const AON_WDOGKEY: usize = 0x1000_001C;
const AON_WDOGCMP0: usize = 0x1000_0020;
const WDOG_UNLOCK: u32 = 0x0051_F15E;

/// `mtime` counts at 10 MHz (QEMU before 8.1) rather than 32,768 Hz.
static mut FAST_MTIME: bool = false;

fn clock_init() {
    // The watchdog stays disabled (`wdogcfg` is never written), and its compare register
    // gets its value back. Each write needs the unlock key first.
    let saved = reg::read(AON_WDOGCMP0);
    reg::write(AON_WDOGKEY, WDOG_UNLOCK);
    reg::write(AON_WDOGCMP0, saved ^ 0x5A5A);
    let modelled = reg::read(AON_WDOGCMP0) == saved ^ 0x5A5A;
    reg::write(AON_WDOGKEY, WDOG_UNLOCK);
    reg::write(AON_WDOGCMP0, saved);
    // SAFETY: written once, before `serve` starts (no interrupt handler reads it).
    unsafe { FAST_MTIME = !modelled };
}

fn mtime() -> u64 {
    loop {
        let hi = reg::read(MTIME_HI);
        let lo = reg::read(MTIME_LO);
        if reg::read(MTIME_HI) == hi {
            return u64::from(hi) << 32 | u64::from(lo);
        }
    }
}

/// Milliseconds since boot.
pub fn uptime_ms() -> u64 {
    let ticks = mtime();
    // SAFETY: only written by `clock_init`, before `serve` starts.
    if unsafe { FAST_MTIME } {
        crate::decimal::divmod(ticks, 10_000).0
    } else {
        (ticks * 125) >> 12 // * 1000 / 32768
    }
}

/// Cycles since boot (modulo 2^32): a little entropy from the client's timing.
pub fn cycles() -> u32 {
    riscv::register::mcycle::read() as u32
}

/// The HiFive1's RGB LED, active low: LED 0 is green (GPIO 19), LED 1 is blue (GPIO 21).
pub mod leds {
    use super::reg;

    const GPIO: usize = 0x1001_2000;
    const OUTPUT_EN: usize = GPIO + 0x08;
    const OUTPUT_VAL: usize = GPIO + 0x0C;
    pub(super) const IOF_EN: usize = GPIO + 0x38;
    pub(super) const IOF_SEL: usize = GPIO + 0x3C;
    const GREEN: u32 = 1 << 19;
    const BLUE: u32 = 1 << 21;

    /// Both LEDs off (pins high), driven.
    pub(super) fn init() {
        reg::write(OUTPUT_VAL, reg::read(OUTPUT_VAL) | GREEN | BLUE);
        reg::write(OUTPUT_EN, reg::read(OUTPUT_EN) | GREEN | BLUE);
    }

    /// Bit 0 is LED 0, bit 1 is LED 1 (a low pin is a lit LED).
    pub fn get() -> u32 {
        let out = !reg::read(OUTPUT_VAL);
        (out & GREEN) >> 19 | (out & BLUE) >> 20
    }
    /// Sets LED 0 and LED 1 from bits 0 and 1.
    pub fn set(value: u32) {
        let lit = (value & 1) << 19 | (value & 2) << 20;
        let out = reg::read(OUTPUT_VAL) & !(GREEN | BLUE);
        reg::write(OUTPUT_VAL, out | ((GREEN | BLUE) & !lit));
    }
}

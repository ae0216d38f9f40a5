//! An MCP server on a Cortex-M4F: QEMU's `mps2-an386` board serving tools over UART0.
//!
//! ```text
//! cargo run --release            # from examples/firmware: build, then serve MCP on stdio
//! ```
//!
//! A superloop: [`mcp_rs_embedded::blocking::Runner`] reads the UART (sleeping with `WFI`
//! until the receive interrupt brings bytes), answers every complete line, and writes the
//! replies back. No heap, no semihosting: the UART is the only output, so QEMU's stdout
//! carries protocol bytes only.
#![no_std]
#![no_main]

mod board;
mod clock;
mod decimal;
mod dice;
mod mem;
mod tools;
mod uart;

use core::panic::PanicInfo;

use cortex_m_rt::entry;
use mcp_rs_core::SecretKey;
use mcp_rs_core::{Config, ServerInfo, Session, SessionStorage};
use mcp_rs_embedded::{blocking::Runner, Buffers};

/// Longest incoming line (bytes, without the newline).
const RX_BUF: usize = 1024;
/// Longest outgoing frame.
const TX_BUF: usize = 2048;

/// The runner's receive and transmit buffers.
static mut BUFFERS: Buffers<RX_BUF, TX_BUF> = Buffers::new();

static INFO: ServerInfo<'static> = ServerInfo {
    name: "mcp-rs-firmware",
    version: env!("CARGO_PKG_VERSION"),
    title: Some("mcp-rs on a Cortex-M4F"),
    description: Some("An MCP server in 32 KiB of flash: QEMU mps2-an386, tools over UART0"),
    website_url: None,
    icons: &[],
    instructions: Some(
        "calculate, roll_dice and tell_fortune are for fun; read_temperature, set_led and \
         uptime_ms talk to the (emulated) board.",
    ),
};

#[entry]
fn main() -> ! {
    // SAFETY: `main` runs once (cortex-m-rt never re-enters it) and is the only code that
    // takes the core peripherals; `take()` would add a critical section and a flag.
    let peripherals = unsafe { cortex_m::Peripherals::steal() };
    clock::init(peripherals.SYST);
    uart::init();

    // In statics, so that they count in the static RAM budget, not on the stack. SAFETY:
    // as above, `main` runs once and this is the only reference to `BUFFERS` (a
    // `singleton!` adds a critical section and a flag).
    let buffers = unsafe { &mut *core::ptr::addr_of_mut!(BUFFERS) };
    let Some(storage) = cortex_m::singleton!(: SessionStorage<1> = SessionStorage::new()) else {
        halt()
    };
    let config = Config {
        list_changed: false,
        // No entropy source on this board: every image gets its own random key at build
        // time (build.rs), so one device's cursors cannot be forged from the source.
        ..Config::new(SecretKey(include!(concat!(env!("OUT_DIR"), "/key.rs"))))
    };
    let mut session = Session::new(&INFO, config, storage);
    let mut runner = Runner::new(buffers);
    let mut tools = tools::DeviceTools::new();
    loop {
        // The UART never reports end of input and its writer cannot fail; receive errors
        // are survived inside the runner (resync at the next newline).
        let _ = runner.step(&mut session, &mut tools, &mut uart::Rx, &mut uart::Tx);
    }
}

/// The device interrupt vectors, after cortex-m-rt's 16 exception vectors. Only IRQ 0
/// (UART0 RX) is ever enabled, so the table stops there: a full 240-entry table would
/// cost 960 bytes of flash.
#[link_section = ".vector_table.interrupts"]
#[no_mangle]
#[used]
static __INTERRUPTS: [unsafe extern "C" fn(); 1] = [uart0_rx];

/// IRQ 0: UART0 receive.
unsafe extern "C" fn uart0_rx() {
    uart::on_rx_interrupt();
}

fn halt() -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}

/// A panic (none is expected: the core and runner are panic-free) resets the board; the
/// client sees its pending request time out and can start over.
#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    cortex_m::peripheral::SCB::sys_reset()
}

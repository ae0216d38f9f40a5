//! An MCP server on a microcontroller, serving six tools over its UART: one source for three
//! boards, chosen by the build target (see [`board`] and build.rs):
//!
//! | target | board (QEMU machine) |
//! | --- | --- |
//! | `thumbv7em-none-eabihf` (the default) | `mps2-an386`, Cortex-M4F |
//! | `thumbv6m-none-eabi` | `microbit`, nRF51822 Cortex-M0 |
//! | `riscv32imac-unknown-none-elf` | `sifive_e`, FE310 RV32IMAC (HiFive1) |
//!
//! ```text
//! cargo run --release                                        # mps2-an386, MCP on stdio
//! cargo run --release --target thumbv6m-none-eabi            # microbit
//! cargo run --release --target riscv32imac-unknown-none-elf  # sifive_e
//! ```
//!
//! A superloop: [`mcp_rs_embedded::blocking::Runner`] reads the UART (sleeping with `WFI`
//! until the board's UART has bytes), answers every complete line, and writes the replies
//! back. No heap, no semihosting: the UART is the only output, so QEMU's stdout carries
//! protocol bytes only.
#![no_std]
#![no_main]

mod board;
mod decimal;
mod dice;
#[cfg(feature = "tasks")]
mod tasks;
mod tools;

use mcp_rs_core::SecretKey;
use mcp_rs_core::{Config, ServerInfo, Session, SessionStorage};
use mcp_rs_embedded::{blocking::Runner, Buffers};

/// Longest incoming line (bytes, without the newline).
const RX_BUF: usize = 1024;
/// Longest outgoing frame. mcp-core is built without `pagination` (no cursor MAC: 1.7 KiB
/// less flash), so a list is one frame: the six tools' `tools/list` (about 3.9 KiB in
/// 2026-07-28 with its trailer) must fit.
const TX_BUF: usize = 4096;

/// The runner's receive and transmit buffers.
static mut BUFFERS: Buffers<RX_BUF, TX_BUF> = Buffers::new();
/// The session's call slots.
static mut STORAGE: SessionStorage<1> = SessionStorage::new();
/// The tools and the task table (feature `tasks`), static so that the RAM figure counts them.
#[cfg(feature = "tasks")]
static mut TASKS: tasks::WithTasks =
    tasks::WithTasks::new(SecretKey(include!(concat!(env!("OUT_DIR"), "/key.rs"))));

static INFO: ServerInfo<'static> = ServerInfo {
    name: "mcp-rs-firmware",
    version: env!("CARGO_PKG_VERSION"),
    title: Some(board::TITLE),
    description: Some(board::DESCRIPTION),
    website_url: None,
    icons: &[],
    instructions: Some(
        "calculate, roll_dice and tell_fortune are for fun; read_temperature, set_led and \
         uptime_ms talk to the (emulated) board.",
    ),
};

/// Serves MCP on the board's UART, forever. Called once, by the board's entry point, after
/// [`board::init`].
#[inline(always)] // into the entry point: one call, and the outliner then does better
fn serve() -> ! {
    // In statics, so that they count in the static RAM budget, not on the stack. SAFETY:
    // `serve` runs once (the board's entry point calls it and never returns) and these are
    // the only references to `BUFFERS` and `STORAGE` (a `singleton!` would add a critical
    // section and a flag).
    let buffers = unsafe { &mut *core::ptr::addr_of_mut!(BUFFERS) };
    let storage = unsafe { &mut *core::ptr::addr_of_mut!(STORAGE) };
    let config = Config {
        list_changed: false,
        // No entropy source used at boot: every image gets its own random key at build
        // time (build.rs), so one device's cursors cannot be forged from the source.
        ..Config::new(SecretKey(include!(concat!(env!("OUT_DIR"), "/key.rs"))))
    };
    let mut session = Session::new(&INFO, config, storage);
    let mut runner = Runner::new(buffers);
    #[cfg(not(feature = "tasks"))]
    let mut tools = tools::DeviceTools::new();
    #[cfg(feature = "tasks")]
    let server = unsafe { &mut *core::ptr::addr_of_mut!(TASKS) };
    loop {
        // The UART never reports end of input and its writer cannot fail; receive errors
        // are survived inside the runner (resync at the next newline).
        #[cfg(not(feature = "tasks"))]
        let _ = runner.step(&mut session, &mut tools, &mut board::Rx, &mut board::Tx);
        #[cfg(feature = "tasks")]
        let _ = runner.step_with(
            &mut session,
            server,
            &mut (),
            &mut board::Rx,
            &mut board::Tx,
        );
    }
}

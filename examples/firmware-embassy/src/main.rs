//! An MCP server on embassy: QEMU's `mps2-an386` (Cortex-M4F) serving a whole MCP server
//! over UART0 with [`mcp_rs_embedded::asynch::Runner`].
//!
//! ```text
//! cargo run --release            # from examples/firmware-embassy: build, serve MCP on stdio
//! MCP_DEFMT_LOG=/tmp/defmt.bin cargo run --release      # ... and keep the defmt log
//! defmt-print -e target/thumbv7em-none-eabihf/release/mcp-firmware-embassy < /tmp/defmt.bin
//! ```
//!
//! What it serves, in every revision the core speaks (the `initialize` handshake,
//! 2024-11-05 to 2025-11-25, and stateless 2026-07-28 requests, on one connection):
//!
//! - **tools**: the six tools of `examples/firmware` (`calculate`, `roll_dice`,
//!   `tell_fortune`, `read_temperature`, `set_led`, `uptime_ms`; the same source files,
//!   answered inline) and `countdown`, an async tool that waits on an embassy timer and is
//!   answered later as a deferred call: `notifications/progress` after every step when the
//!   request carries a progressToken, stopped by `notifications/cancelled`;
//! - **a resource**: `sensor://temperature` (simulated, sampled every 500 ms by its own
//!   task); a client that subscribed gets `notifications/resources/updated` whenever the
//!   sample changes: in the initialize era with `resources/subscribe` (the device keeps
//!   that subscription), in the 2026-07-28 era with a `subscriptions/listen` stream whose
//!   `resourceSubscriptions` names it (the core keeps those, and tags each notification
//!   with the stream's subscription id; the lists never change, so the stream's
//!   list-change filters are not honoured);
//! - **a prompt**: `temperature_report`, with a required `unit` argument.
//!
//! How: embassy-executor's thread-mode executor runs two tasks. `main` owns the MCP
//! session and `select`s between the runner's cancel-safe `read` of the UART, the
//! sampler's new readings and the next countdown step's timer; everything that writes
//! (`answer`, `progress`, `complete`, `resource_updated`) runs outside the `select`. The
//! embassy-time driver ([`time_driver`]) is SysTick; the UART ([`uart`]) is interrupt
//! driven. No heap: every buffer is a static or lives in a task's static future.
//!
//! QEMU's stdout is the UART, protocol bytes only. The log goes out through semihosting
//! console calls ([`log`]), which the cargo runner routes to `$MCP_DEFMT_LOG` (or
//! `/dev/null`): one line per message read (its method), what the server did with it, and
//! the runner's session events.
//!
//! `scripts/test-firmware-embassy.sh` checks it all: fmt and clippy, the release build and
//! its footprint (no allocator may be linked), and `interop/test.mjs`, which drives the
//! image with the official TypeScript SDK clients (1.x for the initialize era, 2.x for
//! 2026-07-28) and checks the decoded defmt log.
#![no_std]
#![no_main]

mod board;
#[path = "../../firmware/src/decimal.rs"]
mod decimal;
#[path = "../../firmware/src/dice.rs"]
mod dice;
mod log;
mod server;
mod time_driver;
#[path = "../../firmware/src/tools.rs"]
mod tools;
mod uart;

use core::future::pending;
use core::sync::atomic::Ordering::Relaxed;

use embassy_executor::Spawner;
use embassy_futures::select::{select3, Either3};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::{Duration, Instant, Ticker, Timer};
use mcp_rs_core::{Config, SecretKey, ServerInfo, Session, SessionStorage};
use mcp_rs_embedded::{asynch::Runner, Buffers, Step};

use server::{Device, Pending, SENSOR_URI, TENTHS_C};

/// Longest incoming line (bytes, without the newline).
const RX_BUF: usize = 1024;
/// Longest outgoing frame.
const TX_BUF: usize = 2048;
/// Deferred calls and `subscriptions/listen` streams in flight: the countdowns, one
/// stream, plus one to spare for a refused call.
const SLOTS: usize = server::COUNTDOWNS + 2;

static INFO: ServerInfo<'static> = ServerInfo {
    name: "mcp-rs-firmware-embassy",
    version: env!("CARGO_PKG_VERSION"),
    title: Some("mcp-rs on embassy (Cortex-M4F)"),
    description: Some(
        "An MCP server on embassy: QEMU mps2-an386, tools, a sensor resource, a prompt over UART0",
    ),
    website_url: None,
    icons: &[],
    instructions: Some(
        "calculate, roll_dice and tell_fortune are for fun; read_temperature, set_led and \
         uptime_ms talk to the (emulated) board; countdown waits on a timer with progress. \
         Subscribe to sensor://temperature for its changes.",
    ),
};

/// New sensor readings (tenths of a degree Celsius), from the sampler to the MCP task.
/// An embassy-sync `Signal` rather than a `heapless::spsc` queue: only the latest value
/// matters (a slow reader misses intermediate values, never the current one), and the
/// waiting task needs a waker, which heapless does not provide.
static READINGS: Signal<CriticalSectionRawMutex, i32> = Signal::new();

defmt::timestamp!("{=u64:ms}", Instant::now().as_millis());

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    // SAFETY: `main` runs once and is the only code that takes the core peripherals.
    let peripherals = unsafe { cortex_m::Peripherals::steal() };
    time_driver::init(peripherals.SYST);
    let (rx, mut tx) = uart::init();
    let mut rx = server::LoggedRx::new(rx);
    spawner.spawn(sampler().expect("the sampler task is spawned once"));
    defmt::info!("mcp-firmware-embassy: serving MCP on UART0");

    // The locals of this task live in its static future: they count as static RAM.
    let mut buffers = Buffers::<RX_BUF, TX_BUF>::new();
    let mut storage = SessionStorage::<SLOTS>::new();
    let config = Config {
        list_changed: false, // the lists are fixed
        // No entropy source on this board: every image gets its own random key at build
        // time (build.rs), so one device's cursors cannot be forged from the source.
        ..Config::new(SecretKey(include!(concat!(env!("OUT_DIR"), "/key.rs"))))
    };
    let mut session = Session::new(&INFO, config, &mut storage);
    let mut runner = Runner::new(&mut buffers).with_clock(board::uptime_ms);
    let mut device = Device::new();
    let mut hooks = Pending {
        countdowns: heapless::Vec::new(),
    };

    // Without the core's `requests` feature the session never waits on time
    // (`Session::poll_timeout` is always `None`), so no session timer is raced here.
    loop {
        let next_step = hooks.next_deadline();
        let countdown = async {
            match next_step {
                Some(at) => Timer::at(Instant::from_millis(at)).await,
                None => pending().await,
            }
        };
        // `runner.read` is cancel-safe (so is `uart::Rx::read`), and so are
        // `Signal::wait` and the timer: losing the race loses nothing.
        match select3(runner.read(&mut rx), READINGS.wait(), countdown).await {
            Either3::First(step) => {
                if let Step::RxError(_) = step {
                    defmt::warn!("UART receive overrun: resyncing");
                }
                let _ = runner
                    .answer(&mut session, &mut device, &mut hooks, &mut tx)
                    .await;
            }
            Either3::Second(tenths) => {
                // A legacy client's subscription is the device's to keep; the listen
                // streams' are the core's: `resource_updated` tells both, and
                // `resource_updated_on_streams` the streams alone.
                let sent = if device.sensors.subscribed {
                    runner
                        .resource_updated(&mut session, &mut hooks, &mut tx, SENSOR_URI)
                        .await
                } else {
                    runner
                        .resource_updated_on_streams(&mut session, &mut hooks, &mut tx, SENSOR_URI)
                        .await
                };
                if matches!(sent, Ok(true)) {
                    defmt::info!(
                        "notify: resources/updated {=str} ({=i32})",
                        SENSOR_URI,
                        tenths
                    );
                }
            }
            Either3::Third(()) => {
                step_countdowns(&mut runner, &mut session, &mut hooks, &mut tx).await
            }
        }
    }
}

/// Advances every countdown whose step is due: progress after each step (sent only when
/// the request carried a progressToken), then the result after the last.
async fn step_countdowns(
    runner: &mut Runner<'_>,
    session: &mut Session<'_>,
    hooks: &mut Pending,
    tx: &mut uart::Tx,
) {
    let now = board::uptime_ms();
    while let Some(i) = hooks.countdowns.iter().position(|c| c.next_at <= now) {
        let Some(c) = hooks.countdowns.get_mut(i) else {
            break;
        };
        c.done += 1;
        c.next_at += c.step_ms;
        let countdown = *c;
        let _ = runner
            .progress(
                session,
                hooks,
                tx,
                countdown.token,
                // Integers: written without linking float formatting.
                countdown.done,
                Some(countdown.steps),
                Some("counting down"),
            )
            .await;
        if countdown.done >= countdown.steps {
            hooks.countdowns.swap_remove(i);
            defmt::info!("countdown finished");
            let waited = countdown.step_ms * u64::from(countdown.steps);
            let _ = runner
                .complete(session, hooks, tx, countdown.token, |r| {
                    r.text_fmt(format_args!(
                        "waited {waited} ms in {} steps",
                        countdown.steps
                    ));
                })
                .await;
        }
    }
}

/// Samples the (simulated) temperature sensor every 500 ms and reports each change: a slow
/// triangle wave between 20.0 and 24.0 C over two minutes, plus +-0.2 noise (the shape of
/// `read_temperature` in the shared tools).
#[embassy_executor::task]
async fn sampler() {
    let mut ticker = Ticker::every(Duration::from_millis(500));
    let mut seed = board::cycles() | 1;
    loop {
        ticker.next().await;
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let noise = (seed % 5) as i32 - 2;
        let phase = (decimal::divmod(board::uptime_ms(), 1500 * 80).1 as u32 / 1500) as i32;
        let wave = if phase < 40 { phase } else { 80 - phase };
        let tenths = 200 + wave + noise;
        if TENTHS_C.swap(tenths, Relaxed) != tenths {
            READINGS.signal(tenths);
        }
    }
}

/// The device interrupt vectors, after cortex-m-rt's 16 exception vectors. Only IRQ 0
/// (UART0 RX) is ever enabled, so the table stops there.
#[link_section = ".vector_table.interrupts"]
#[no_mangle]
#[used]
static __INTERRUPTS: [unsafe extern "C" fn(); 1] = [uart0_rx];

/// IRQ 0: UART0 receive.
unsafe extern "C" fn uart0_rx() {
    uart::on_rx_interrupt();
}

/// A panic (none is expected) is logged and resets the board; the client sees its pending
/// request time out and can start over.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    defmt::error!("panic: resetting");
    cortex_m::peripheral::SCB::sys_reset()
}

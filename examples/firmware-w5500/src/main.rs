//! An MCP server over Streamable HTTP on real hardware: a Raspberry Pi Pico (RP2040,
//! Cortex-M0+) with a WIZnet W5500 Ethernet controller on SPI0, as wired on WIZnet's
//! W5500-EVB-Pico, served by [`mcp_rs_embedded::http`] over embassy-net.
//!
//! ```text
//! cargo build --release     # from examples/firmware-w5500 (thumbv6m-none-eabi)
//! probe-rs run --chip RP2040 target/thumbv6m-none-eabi/release/mcp-firmware-w5500
//! ```
//!
//! It is compiled (and its footprint checked) by the README's test command, never run
//! there: QEMU has no RP2040 machine.
//!
//! What it serves on `http://<address>/mcp` (port 80), in every revision the core speaks
//! (legacy sessions from `initialize`, 2024-11-05 to 2025-11-25, with `Mcp-Session-Id`;
//! stateless 2026-07-28 requests): the six tools of `examples/firmware` (`calculate`,
//! `roll_dice`, `tell_fortune`, `read_temperature`, `set_led`, `uptime_ms`; the same source
//! files), `set_led` driving the board's LED on GPIO 25 ([`board`]).
//!
//! How: embassy-executor's thread-mode executor runs the W5500 driver, the embassy-net
//! stack (DHCP), and one task per connection slot ([`SLOTS`]), each with its own TCP socket
//! and its own [`Slot`] (request and frame buffers, call storage), all sharing one
//! [`Server`]. When every slot is busy, the next connection lands on the overflow socket
//! that `main` keeps: it closes an idle keep-alive connection, if any, so that the
//! client's next connection finds a slot, and answers this one 503. No heap: every buffer
//! is a static or lives in a task's static future.
//!
//! Pins (W5500-EVB-Pico): SPI0 SCK GPIO 18, MOSI GPIO 19, MISO GPIO 16, CS GPIO 17,
//! INTn GPIO 21, RSTn GPIO 20. The defmt log goes out over RTT (a debug probe).
#![no_std]
#![no_main]

mod board;
#[path = "../../firmware/src/decimal.rs"]
mod decimal;
#[path = "../../firmware/src/dice.rs"]
mod dice;
#[path = "../../firmware/src/tools.rs"]
mod tools;

use core::fmt::Write as _;

use portable_atomic::{AtomicUsize, Ordering};

use defmt_rtt as _;
use embassy_executor::Spawner;
use embassy_futures::yield_now;
use embassy_net::tcp::{State as TcpState, TcpSocket};
use embassy_net::{Stack, StackResources};
use embassy_net_wiznet::chip::W5500;
use embassy_rp::clocks::RoscRng;
use embassy_rp::gpio::{Input, Level, Output, Pull};
use embassy_rp::peripherals::{DMA_CH0, DMA_CH1, SPI0};
use embassy_rp::spi::{self, Async, Spi};
use embassy_rp::{bind_interrupts, dma};
use embassy_time::{with_timeout, Delay, Duration};
use embedded_hal_bus::spi::ExclusiveDevice;
use mcp_rs_core::{CallSlot, Config, SecretKey, ServerHandler, ServerInfo, ToolSet};
use mcp_rs_embedded::http::{HttpConfig, Server, Slot, SlotState};
use panic_probe as _;
use static_cell::{ConstStaticCell, StaticCell};

use tools::DeviceTools;

/// Connection slots: connections served at once, one task each.
const SLOTS: usize = 4;
/// Bytes of a request (head and body) per slot.
const RX: usize = 2048;
/// Bytes of the largest frame sent per slot.
const TX: usize = 2048;
/// Calls in flight per connection's session (one is taken by an open
/// `subscriptions/listen` stream).
const CALLS: usize = 2;
/// Legacy (initialize-era) sessions kept at once.
const SESSIONS: usize = 4;
/// Each slot socket's TCP receive and transmit buffers (bytes, each way).
const SOCKET_BUF: usize = 1024;
/// The overflow socket's buffers (it only answers 503).
const OVERFLOW_BUF: usize = 256;
/// Ethernet frames (1,514 bytes each) queued between the W5500 driver and the stack, each
/// way (embassy's examples take 8: 24 KiB).
const ETH_FRAMES: usize = 4;
/// The TCP port served.
const PORT: u16 = 80;
/// A peer silent for this long while data waits for its ACK (or a keep-alive probe) loses
/// its connection: a stalled client holds a slot at most this long.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Keep-alive probes on idle connections (open SSE streams), so that [`TIMEOUT`] finds
/// vanished peers.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// How long closing a connection may wait for its last bytes to be acknowledged.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// One connection's memory.
type HttpSlot = Slot<RX, TX, CALLS>;
/// The MCP server all slots share (as many SSE waiters as slots).
type McpServer = Server<'static, Device, SESSIONS, SLOTS>;
/// The W5500 behind its SPI device.
type EthSpi = ExclusiveDevice<Spi<'static, SPI0, Async>, Output<'static>, Delay>;

static INFO: ServerInfo<'static> = ServerInfo {
    name: "mcp-rs-firmware-w5500",
    version: env!("CARGO_PKG_VERSION"),
    title: Some("mcp-rs on a Raspberry Pi Pico with a W5500"),
    description: Some("An MCP server over Streamable HTTP: RP2040, WIZnet W5500, embassy-net"),
    website_url: None,
    icons: &[],
    instructions: Some(
        "calculate, roll_dice and tell_fortune are for fun; read_temperature (simulated), \
         set_led (LED 0: the board's LED) and uptime_ms talk to the board.",
    ),
};

/// The server's handler: the firmware's tools.
struct Device {
    tools: DeviceTools,
}

impl ServerHandler for Device {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(&mut self.tools)
    }
}

bind_interrupts!(struct Irqs {
    DMA_IRQ_0 => dma::InterruptHandler<DMA_CH0>, dma::InterruptHandler<DMA_CH1>;
});

/// What the overflow socket knows of each slot (idle or not).
static SLOT_STATES: ConstStaticCell<[SlotState; SLOTS]> =
    ConstStaticCell::new([const { SlotState::new() }; SLOTS]);
/// The legacy sessions' call storage, filled at start-up (`.bss`: an empty `CallSlot` is
/// not all zero bytes, so a `const` initializer would put it in `.data`, in flash too).
static SESSION_MEMORY: StaticCell<[[CallSlot; CALLS]; SESSIONS]> = StaticCell::new();
/// Slot tasks whose socket exists (the overflow socket is created after them, so that
/// embassy-net offers it a connection only when no slot socket listens).
static SOCKETS_READY: AtomicUsize = AtomicUsize::new(0);

defmt::timestamp!("{=u64:ms}", embassy_time::Instant::now().as_millis());

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let p = embassy_rp::init(Default::default());
    board::leds::init([
        Output::new(p.PIN_25, Level::Low),
        Output::new(p.PIN_15, Level::Low),
    ]);

    // This image's build-time secret (build.rs).
    let mut key: [u8; 16] = include!(concat!(env!("OUT_DIR"), "/key.rs"));
    // A locally administered MAC address, fixed per image (so DHCP leases stay put): the
    // W5500 has none of its own.
    let mac = [0x02, b'm', b'c', key[0], key[1], key[2]];
    // The key of cursors and session ids: the secret mixed with the ring oscillator's
    // random bits (a weak source alone, but it differs per boot).
    let mut rosc = [0u8; 16];
    RoscRng.fill_bytes(&mut rosc);
    for (k, r) in key.iter_mut().zip(rosc) {
        *k ^= r;
    }

    let mut spi_config = spi::Config::default();
    spi_config.frequency = 50_000_000;
    let spi = Spi::new(
        p.SPI0, p.PIN_18, p.PIN_19, p.PIN_16, p.DMA_CH0, p.DMA_CH1, Irqs, spi_config,
    );
    let cs = Output::new(p.PIN_17, Level::High);
    let Ok(spi) = ExclusiveDevice::new(spi, cs, Delay);
    let int = Input::new(p.PIN_21, Pull::Up);
    let rst = Output::new(p.PIN_20, Level::High);

    static ETH_STATE: StaticCell<embassy_net_wiznet::State<ETH_FRAMES, ETH_FRAMES>> =
        StaticCell::new();
    let state = ETH_STATE.init(embassy_net_wiznet::State::new());
    let (device, eth_runner) =
        match embassy_net_wiznet::new::<_, _, W5500, _, _, _>(mac, state, spi, int, rst).await {
            Ok(driver) => driver,
            Err(_) => defmt::panic!("no W5500 answers on SPI0"),
        };
    spawner.spawn(spawned(eth_task(eth_runner)));

    // Sockets: the slots', the overflow socket and DHCP's.
    static RESOURCES: StaticCell<StackResources<{ SLOTS + 2 }>> = StaticCell::new();
    let (stack, net_runner) = embassy_net::new(
        device,
        embassy_net::Config::dhcpv4(Default::default()),
        RESOURCES.init(StackResources::new()),
        RoscRng.next_u64(),
    );
    spawner.spawn(spawned(net_task(net_runner)));

    defmt::info!("waiting for DHCP");
    stack.wait_config_up().await;
    let Some(config) = stack.config_v4() else {
        defmt::panic!("the stack is up without an IPv4 configuration");
    };
    let address = config.address.address();
    defmt::info!("serving MCP on http://{}:{}/mcp", address, PORT);

    // The Host names accepted besides the loopback ones: the leased address (a renewal
    // that changes it needs a restart) and the board's name.
    static ADDRESS: StaticCell<heapless::String<15>> = StaticCell::new();
    let text = ADDRESS.init(heapless::String::new());
    let _ = write!(text, "{address}"); // at most 15 bytes: "255.255.255.255"
    static HOSTS: StaticCell<[&str; 2]> = StaticCell::new();
    let hosts = HOSTS.init([text.as_str(), "mcp-pico"]);

    static SERVER: StaticCell<McpServer> = StaticCell::new();
    let config = Config {
        list_changed: false, // the tool list is fixed
        ..Config::new(SecretKey(key))
    };
    let server: &'static McpServer = SERVER.init(
        Server::new(
            &INFO,
            config,
            Device {
                tools: DeviceTools::new(),
            },
        )
        .with_http(HttpConfig::new().allowed_hosts(hosts))
        .with_clock(board::uptime_ms)
        .with_sessions(SESSION_MEMORY.init([[CallSlot::EMPTY; CALLS]; SESSIONS])),
    );

    let states: &'static [SlotState; SLOTS] = SLOT_STATES.take();
    for state in states {
        spawner.spawn(spawned(slot_task(stack, server, state)));
    }
    while SOCKETS_READY.load(Ordering::Acquire) < SLOTS {
        yield_now().await;
    }

    // The overflow socket: connections that find every slot busy.
    let mut rx = [0u8; OVERFLOW_BUF];
    let mut tx = [0u8; OVERFLOW_BUF];
    let mut socket = TcpSocket::new(stack, &mut rx, &mut tx);
    loop {
        socket.set_timeout(Some(TIMEOUT));
        if socket.accept(PORT).await.is_err() {
            reset(&mut socket).await;
            continue;
        }
        let evicted = states.iter().any(SlotState::evict);
        defmt::warn!(
            "every slot busy: 503 (an idle connection closed: {})",
            evicted
        );
        let _ = server.refuse_busy(&mut socket).await;
        finish(&mut socket).await;
    }
}

/// One connection slot: accepts a connection on its own socket and serves it with its own
/// [`Slot`], then the next. The slot and the socket buffers are locals of the task, so they
/// live in its pool's static future (`.bss`): a `static` slot would be `.data` (an empty
/// `CallSlot` is not all zero bytes), in flash as well as RAM.
#[embassy_executor::task(pool_size = SLOTS)]
async fn slot_task(
    stack: Stack<'static>,
    server: &'static McpServer,
    state: &'static SlotState,
) -> ! {
    let mut slot = HttpSlot::new();
    let mut rx = [0u8; SOCKET_BUF];
    let mut tx = [0u8; SOCKET_BUF];
    let mut socket = TcpSocket::new(stack, &mut rx, &mut tx);
    SOCKETS_READY.fetch_add(1, Ordering::Release);
    loop {
        socket.set_timeout(Some(TIMEOUT));
        socket.set_keep_alive(Some(KEEP_ALIVE));
        if socket.accept(PORT).await.is_err() {
            reset(&mut socket).await;
            continue;
        }
        let ended = server.serve_with(&mut slot, state, &mut socket).await;
        defmt::debug!("connection ended: {}", defmt::Debug2Format(&ended));
        finish(&mut socket).await;
    }
}

/// A task's spawn token (a task is spawned more often than its pool allows only by a bug
/// here, so that panics, once, at start-up).
fn spawned<T, E>(token: Result<T, E>) -> T {
    match token {
        Ok(token) => token,
        Err(_) => defmt::panic!("a task pool is too small"),
    }
}

/// Closes a served connection: the last bytes and the FIN go out (for at most
/// [`CLOSE_WAIT`]), then whatever is left is reset so that the socket can listen again.
async fn finish(socket: &mut TcpSocket<'_>) {
    socket.close();
    let _ = with_timeout(CLOSE_WAIT, socket.flush()).await;
    if !matches!(socket.state(), TcpState::Closed | TcpState::TimeWait) {
        reset(socket).await;
    }
}

/// Resets the connection (RST) and waits, briefly, until that went out.
async fn reset(socket: &mut TcpSocket<'_>) {
    socket.abort();
    let _ = with_timeout(CLOSE_WAIT, socket.flush()).await;
}

#[embassy_executor::task]
async fn eth_task(
    runner: embassy_net_wiznet::Runner<'static, W5500, EthSpi, Input<'static>, Output<'static>>,
) -> ! {
    runner.run().await
}

#[embassy_executor::task]
async fn net_task(
    mut runner: embassy_net::Runner<'static, embassy_net_wiznet::Device<'static>>,
) -> ! {
    runner.run().await
}

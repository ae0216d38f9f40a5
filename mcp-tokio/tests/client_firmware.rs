//! Our own client drives the Cortex-M firmware in QEMU over its UART (stdio through the
//! `qemu-run` wrapper), in both eras. Needs `qemu-system-arm` and the release image, so it
//! is ignored by a plain `cargo test`; `scripts/test-firmware.sh` builds the image and runs
//! it with `--ignored` (`MCP_FIRMWARE_ELF` may point at the image).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_rs_tokio::client::{Client, ClientOptions, Era};
use serde_json::json;
use tokio::process::Command;

fn firmware_command() -> Command {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let fw = root.join("examples/firmware");
    let elf = std::env::var_os("MCP_FIRMWARE_ELF")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| fw.join("target"));
            target.join("thumbv7em-none-eabihf/release/mcp-firmware")
        });
    assert!(
        elf.exists(),
        "firmware image missing: {} (run scripts/test-firmware.sh)",
        elf.display()
    );
    let mut cmd = Command::new(fw.join("qemu-run"));
    cmd.arg(elf);
    cmd
}

fn options(era: Era) -> ClientOptions {
    // Emulated UART input is slow (~30-40 µs per byte) and QEMU needs ~1 s to boot.
    ClientOptions {
        request_timeout: Duration::from_secs(30),
        ..ClientOptions::with_era(era)
    }
}

async fn exercise(era: Era) {
    let started = Instant::now();
    let client = Client::spawn_with(firmware_command(), options(era))
        .await
        .expect("firmware starts and answers");
    let connected = started.elapsed();
    let tools = client
        .list_tools()
        .await
        .expect("tools/list (one reply: the firmware does not page)");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "calculate",
            "roll_dice",
            "tell_fortune",
            "read_temperature",
            "set_led",
            "uptime_ms"
        ]
    );

    let t = Instant::now();
    let r = client
        .call_tool(
            "calculate",
            json!({"operation": "multiply", "a": 6, "b": 7}),
        )
        .await
        .unwrap();
    let call_time = t.elapsed();
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.structured_content, Some(json!({"result": 42})));
    let r = client
        .call_tool("calculate", json!({"operation": "divide", "a": 1, "b": 0}))
        .await
        .unwrap();
    assert!(r.is_error);

    let r = client
        .call_tool("roll_dice", json!({"notation": "3d20"}))
        .await
        .unwrap();
    let s = r.structured_content.expect("structured dice");
    let rolls = s["rolls"].as_array().unwrap();
    assert_eq!(rolls.len(), 3);
    assert!(rolls
        .iter()
        .all(|r| (1..=20).contains(&r.as_i64().unwrap())));
    assert_eq!(
        s["total"].as_i64().unwrap(),
        rolls.iter().map(|r| r.as_i64().unwrap()).sum::<i64>()
    );

    let r = client
        .call_tool("tell_fortune", json!({"category": "career"}))
        .await
        .unwrap();
    assert!(!r.is_error && !r.text().is_empty());

    let r = client
        .call_tool("read_temperature", json!({"unit": "celsius"}))
        .await
        .unwrap();
    let s = r.structured_content.expect("structured temperature");
    let celsius = s["temperature"].as_f64().unwrap();
    assert!((19.0..=25.0).contains(&celsius), "{s}");

    let r = client
        .call_tool("set_led", json!({"led": 1, "on": true}))
        .await
        .unwrap();
    assert_eq!(r.structured_content.expect("leds")["leds"][1], true);
    let r = client
        .call_tool("set_led", json!({"led": 1, "on": false}))
        .await
        .unwrap();
    assert_eq!(r.structured_content.expect("leds")["leds"][1], false);

    let a = client
        .call_tool("uptime_ms", json!({}))
        .await
        .unwrap()
        .structured_content
        .unwrap()["uptime_ms"]
        .as_u64()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let b = client
        .call_tool("uptime_ms", json!({}))
        .await
        .unwrap()
        .structured_content
        .unwrap()["uptime_ms"]
        .as_u64()
        .unwrap();
    assert!(b > a, "uptime advances: {a} then {b}");

    // Bad arguments are tool errors; unknown tools are protocol errors; the device keeps serving.
    assert!(
        client
            .call_tool("set_led", json!({"led": 7, "on": true}))
            .await
            .unwrap()
            .is_error
    );
    let err = client
        .call_tool("self_destruct", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(-32602), "{err}");
    assert!(
        !client
            .call_tool("uptime_ms", json!({}))
            .await
            .unwrap()
            .is_error
    );

    println!(
        "{:?}: connected in {connected:?}, calculate round trip {call_time:?}",
        client.protocol_version()
    );
    let status = client.close().await.expect("close");
    assert!(
        status.is_none_or(|s| s.success()),
        "qemu-run exits cleanly on stdin EOF: {status:?}"
    );
}

#[tokio::test]
#[ignore = "needs qemu-system-arm and the firmware image: run by scripts/test-firmware.sh"]
async fn legacy_era_over_the_uart() {
    exercise(Era::legacy()).await;
}

#[tokio::test]
#[ignore = "needs qemu-system-arm and the firmware image: run by scripts/test-firmware.sh"]
async fn modern_era_over_the_uart() {
    exercise(Era::Modern).await;
}

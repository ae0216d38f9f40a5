//! Chooses the board from the build target, puts its memory map (`memory/<board>.x`, as
//! `memory.x`) and, for the Cortex-M boards, `device.x` (empty: each board defines the few
//! interrupt vectors it uses itself) where the linker (`-Tlink.x` from cortex-m-rt or
//! riscv-rt) finds them, sets `cfg(board = "...")` for `src/board/`, and draws the image's
//! secret key (`key.rs`).
use std::{env, fs, path::PathBuf};

/// Build target, `cfg(board)` value, memory map.
const BOARDS: &[(&str, &str, &str)] = &[
    ("thumbv7em-none-eabihf", "mps2", "memory/mps2-an386.x"),
    ("thumbv6m-none-eabi", "microbit", "memory/microbit.x"),
    ("riscv32imac-unknown-none-elf", "riscv", "memory/sifive_e.x"),
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(board, values(\"mps2\", \"microbit\", \"riscv\"))");
    println!("cargo:rerun-if-changed=build.rs");
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let Some(&(_, board, memory)) = BOARDS.iter().find(|(t, _, _)| *t == target) else {
        let known: Vec<&str> = BOARDS.iter().map(|(t, _, _)| *t).collect();
        panic!("mcp-firmware has no board for target {target}; build for one of {known:?}");
    };
    println!("cargo:rustc-cfg=board=\"{board}\"");

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::copy(memory, out.join("memory.x")).expect("copy the board's memory map");
    println!("cargo:rerun-if-changed={memory}");
    fs::write(
        out.join("device.x"),
        "/* The interrupt vectors are in src/board/. */\n",
    )
    .expect("write device.x");
    // A per-build secret for cursor MACs: the boards are not asked for entropy at boot.
    let mut key = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
        .expect("read /dev/urandom for the firmware's key");
    fs::write(out.join("key.rs"), format!("{key:?}")).expect("write key.rs");
    println!("cargo:rustc-link-search={}", out.display());
}

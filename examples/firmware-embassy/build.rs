//! Puts `memory.x` (the board's memory map) and `device.x` (empty: the firmware defines
//! its one interrupt vector itself) where the linker (`-Tlink.x` from cortex-m-rt) finds
//! them, and draws the image's secret key (`key.rs`).
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("write memory.x");
    fs::write(
        out.join("device.x"),
        "/* The interrupt vectors are in src/main.rs. */\n",
    )
    .expect("write device.x");
    // A per-build secret for cursor MACs: the board has no entropy source at run time.
    let mut key = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
        .expect("read /dev/urandom for the firmware's key");
    fs::write(out.join("key.rs"), format!("{key:?}")).expect("write key.rs");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}

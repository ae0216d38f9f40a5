//! Puts `memory.x` (the Pico's memory map) where the linker (`-Tlink.x` from cortex-m-rt)
//! finds it, and draws a per-build secret (`key.rs`) that `main` mixes with the RP2040's
//! ring oscillator bits for the key of cursors and session ids.
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("write memory.x");
    let mut key = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
        .expect("read /dev/urandom for the firmware's key");
    fs::write(out.join("key.rs"), format!("{key:?}")).expect("write key.rs");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}

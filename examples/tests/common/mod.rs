//! Helpers shared by the tests that run the example binaries as processes: their stderr
//! collected on a thread, and their memory from `/proc/<pid>/status`.
#![allow(dead_code)] // each test file uses a part

use std::io::Read;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::thread;

/// `VmHWM` (peak) and `VmRSS` (current), in KiB.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mem {
    pub hwm_kib: u64,
    pub rss_kib: u64,
}

impl std::fmt::Display for Mem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "VmRSS {:.1} MiB (VmHWM {:.1} MiB)",
            mib(self.rss_kib),
            mib(self.hwm_kib)
        )
    }
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The memory of process `pid`.
pub(crate) fn memory(pid: u32) -> Mem {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/<pid>/status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/<pid>/status"))
    };
    Mem {
        hwm_kib: field("VmHWM:"),
        rss_kib: field("VmRSS:"),
    }
}

/// Takes the child's stderr pipe and collects it on a thread (always draining it, so the
/// child never blocks on a full pipe); read it with [`text`].
pub(crate) fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut pipe = child.stderr.take().expect("stderr");
    let sink = Arc::clone(&stderr);
    thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    stderr
}

/// What was collected so far.
pub(crate) fn text(collected: &Mutex<String>) -> String {
    collected.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

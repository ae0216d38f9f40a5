//! What the load generator reads about a process from `/proc`: CPU time (`utime + stime`
//! of `/proc/<pid>/stat`, every thread, in clock ticks) and memory (`VmRSS`, `VmHWM` of
//! `/proc/<pid>/status`, KiB).

use std::io;

/// Clock ticks per second (`getconf CLK_TCK`; the kernel's USER_HZ).
pub(crate) fn clock_ticks() -> io::Result<u64> {
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| io::Error::other("getconf CLK_TCK printed no number"))
}

/// `utime + stime` of a process (all its threads), in clock ticks. `pid` 0 is this process.
pub(crate) fn cpu_ticks(pid: u32) -> io::Result<u64> {
    let path = if pid == 0 {
        "/proc/self/stat".to_owned()
    } else {
        format!("/proc/{pid}/stat")
    };
    let stat = std::fs::read_to_string(path)?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the
    // last ')'. There, index 0 is field 3 (state); utime and stime are fields 14 and 15.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| io::Error::other("malformed /proc/<pid>/stat"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| -> io::Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| io::Error::other("malformed /proc/<pid>/stat"))
    };
    Ok(field(11)? + field(12)?)
}

/// A `Vm*` line of `/proc/<pid>/status` (e.g. `VmRSS`, `VmHWM`), in KiB.
pub(crate) fn status_kib(pid: u32, key: &str) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| {
            let value = l.strip_prefix(key)?.strip_prefix(':')?;
            value.trim().strip_suffix("kB")?.trim().parse().ok()
        })
        .ok_or_else(|| io::Error::other(format!("no {key} in /proc/{pid}/status")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        assert!(clock_ticks().unwrap() > 0);
        // Burn a little CPU so the counter is not necessarily zero; it must parse either way.
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        cpu_ticks(0).unwrap();
        let pid = std::process::id();
        cpu_ticks(pid).unwrap();
        assert!(status_kib(pid, "VmRSS").unwrap() > 0);
        assert!(status_kib(pid, "VmHWM").unwrap() >= status_kib(pid, "VmRSS").unwrap() / 2);
        assert!(status_kib(pid, "VmNope").is_err());
    }
}

//! The `defmt` global logger: frames out through Arm semihosting's *console* calls, which
//! QEMU routes to the chardev named by `-semihosting-config chardev=...` (the cargo runner
//! points it at a file, `$MCP_DEFMT_LOG`).
//!
//! Not `defmt-semihosting`: it writes with `SYS_WRITE` to a `:tt` handle, which QEMU 7.2
//! (Debian 12) sends to its own stdout whatever the chardev says, interleaving the log
//! with the MCP bytes of the UART (`-serial stdio`). The console calls do honour the
//! chardev: `SYS_WRITE0` writes a NUL-terminated string and `SYS_WRITEC` one byte. defmt's
//! rzCOBS frames have no zero byte but their terminator, so each frame goes out as
//! `SYS_WRITE0` chunks and its terminating zero as one `SYS_WRITEC`.
//!
//! Semihosting traps into the debugger (QEMU here): on a board without one attached, the
//! `BKPT` would fault. This image is for QEMU, whose runner always enables semihosting.

use core::cell::RefCell;

use critical_section::{Mutex, RestoreState};

/// Bytes collected before a `SYS_WRITE0` (one more for the terminating NUL).
const CHUNK: usize = 64;

struct State {
    encoder: defmt::Encoder,
    /// A plain array rather than a `heapless::Vec`: `SYS_WRITE0` needs the bytes followed
    /// by a NUL in one buffer, so the spare byte must exist whatever the length.
    chunk: [u8; CHUNK + 1],
    len: usize,
}

static STATE: Mutex<RefCell<State>> = Mutex::new(RefCell::new(State {
    encoder: defmt::Encoder::new(),
    chunk: [0; CHUNK + 1],
    len: 0,
}));
/// The critical section held from `acquire` to `release` (touched only inside it).
static mut RESTORE: RestoreState = RestoreState::invalid();

/// A semihosting call: `op` with its parameter block `arg`.
fn semihost(op: u32, arg: *const u8) {
    // SAFETY: `BKPT 0xAB` is the Arm semihosting trap (QEMU serves it, see the module
    // docs); `op` is WRITEC or WRITE0, whose parameter is a byte / a NUL-terminated string
    // that outlives the call. r0 is clobbered by the result.
    unsafe {
        core::arch::asm!("bkpt #0xab", inout("r0") op => _, in("r1") arg, options(nostack));
    }
}

const SYS_WRITEC: u32 = 0x03;
const SYS_WRITE0: u32 = 0x04;

impl State {
    fn flush(&mut self) {
        if self.len > 0 {
            if let Some(end) = self.chunk.get_mut(self.len) {
                *end = 0;
            }
            semihost(SYS_WRITE0, self.chunk.as_ptr());
            self.len = 0;
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == 0 {
                self.flush();
                semihost(SYS_WRITEC, &b);
            } else {
                if let Some(slot) = self.chunk.get_mut(self.len) {
                    *slot = b;
                }
                self.len += 1;
                if self.len == CHUNK {
                    self.flush();
                }
            }
        }
    }

    /// Runs `f` with the encoder and a writer into the chunk.
    fn encode(&mut self, f: impl FnOnce(&mut defmt::Encoder, &mut dyn FnMut(&[u8]))) {
        let mut encoder = core::mem::replace(&mut self.encoder, defmt::Encoder::new());
        f(&mut encoder, &mut |bytes| self.put(bytes));
        self.encoder = encoder;
    }
}

#[defmt::global_logger]
struct Logger;

// SAFETY: `acquire` takes a critical section that `release` gives back, so frames never
// interleave (single core: nothing else runs in between); `write` and `release` run only
// between the two, as defmt guarantees.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        // SAFETY: paired with the `release` in `Logger::release`.
        let restore = unsafe { critical_section::acquire() };
        // SAFETY: inside the critical section just taken: the only access.
        unsafe { *core::ptr::addr_of_mut!(RESTORE) = restore };
        critical_section::with(|cs| {
            STATE
                .borrow_ref_mut(cs)
                .encode(|e, w| e.start_frame(|b| w(b)));
        });
    }

    unsafe fn flush() {
        // Semihosting is synchronous: the host has every byte already written.
    }

    unsafe fn release() {
        critical_section::with(|cs| {
            STATE
                .borrow_ref_mut(cs)
                .encode(|e, w| e.end_frame(|b| w(b)));
        });
        // SAFETY: still inside the critical section `acquire` took.
        let restore = unsafe { *core::ptr::addr_of!(RESTORE) };
        // SAFETY: paired with `acquire`.
        unsafe { critical_section::release(restore) };
    }

    unsafe fn write(bytes: &[u8]) {
        critical_section::with(|cs| {
            STATE
                .borrow_ref_mut(cs)
                .encode(|e, w| e.write(bytes, |b| w(b)));
        });
    }
}

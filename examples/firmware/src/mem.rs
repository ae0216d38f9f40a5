//! Byte-at-a-time memory routines in place of compiler-builtins' word-at-a-time ones:
//! about 1 KiB less flash for copies that are never long here (at most a 2 KiB frame,
//! and the UART moves a byte every ~35 µs, so the copy speed does not show).
//!
//! The ARM EABI names are what LLVM calls for `copy_from_slice`, struct moves and zeroing.
//! Volatile accesses keep LLVM from recognising the loops as a copy and compiling them
//! into a call to the very function being defined.
//!
//! ARM only (`#![cfg]` below): other targets keep compiler-builtins' routines.
#![cfg(target_arch = "arm")]

/// `dest[..n] = src[..n]` (the regions do not overlap).
///
/// # Safety
/// `dest` and `src` are valid for `n` bytes and do not overlap.
unsafe fn copy(dest: *mut u8, src: *const u8, n: usize) {
    for i in 0..n {
        // SAFETY: both are valid for `n` bytes (the caller's contract).
        unsafe { dest.add(i).write_volatile(src.add(i).read_volatile()) }
    }
}

/// `dest[..n] = c`.
///
/// # Safety
/// `dest` is valid for `n` bytes.
unsafe fn fill(dest: *mut u8, n: usize, c: u8) {
    for i in 0..n {
        // SAFETY: valid for `n` bytes (the caller's contract).
        unsafe { dest.add(i).write_volatile(c) }
    }
}

/// # Safety
/// As `memcpy`.
#[no_mangle]
pub unsafe extern "C" fn __aeabi_memcpy(dest: *mut u8, src: *const u8, n: usize) {
    unsafe { copy(dest, src, n) }
}

/// # Safety
/// As `memcpy`.
#[no_mangle]
pub unsafe extern "C" fn __aeabi_memcpy4(dest: *mut u8, src: *const u8, n: usize) {
    unsafe { copy(dest, src, n) }
}

/// # Safety
/// As `memcpy`.
#[no_mangle]
pub unsafe extern "C" fn __aeabi_memcpy8(dest: *mut u8, src: *const u8, n: usize) {
    unsafe { copy(dest, src, n) }
}

/// # Safety
/// As `memset` (note the EABI argument order: length before value).
#[no_mangle]
pub unsafe extern "C" fn __aeabi_memset(dest: *mut u8, n: usize, c: i32) {
    unsafe { fill(dest, n, c as u8) }
}

/// # Safety
/// As `memset` with zero.
#[no_mangle]
pub unsafe extern "C" fn __aeabi_memclr(dest: *mut u8, n: usize) {
    unsafe { fill(dest, n, 0) }
}

/// # Safety
/// As `memset` with zero.
#[no_mangle]
pub unsafe extern "C" fn __aeabi_memclr4(dest: *mut u8, n: usize) {
    unsafe { fill(dest, n, 0) }
}

/// # Safety
/// As `memset` with zero.
#[no_mangle]
pub unsafe extern "C" fn __aeabi_memclr8(dest: *mut u8, n: usize) {
    unsafe { fill(dest, n, 0) }
}

/// # Safety
/// As `memcmp`: `a` and `b` are valid for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        // SAFETY: both are valid for `n` bytes (the caller's contract).
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}

//! The wire layer: JSON ([`json`]), JSON-RPC 2.0 ([`jsonrpc`]), newline framing
//! ([`framing`]), the revision table ([`version`]), the method table ([`method`]), borrowed
//! views of request parameters and `_meta` ([`params`]) and RFC 6570 URI templates
//! ([`uri_template`]), the DNS-rebinding check of HTTP transports ([`authority`]) and their 2026-07-28
//! request-header checks ([`headers`]).
//! Nothing here knows what a tool or a session is.

pub mod authority;
#[cfg(any(feature = "listen", feature = "client"))]
pub(crate) mod fnv;
pub mod framing;
pub mod headers;
pub mod json;
pub mod jsonrpc;
pub mod method;
pub mod params;
pub mod peek;
#[cfg(test)]
pub(crate) mod test_rng;
pub mod uri_template;
pub mod version;

pub use method::{
    Capability, Eras, Method, Notification, ServerMethod, ServerNotification, Target, METHODS,
};
pub use params::{Meta, Params};

/// `dst.copy_from_slice(src)` for the copies of JSON text (the writer's buffer, decoded
/// strings, framing). On bare-metal targets (`target_os = "none"`) a byte loop: the copies
/// are short, and the call to `memcpy` that `copy_from_slice` becomes would link
/// compiler-builtins' word-at-a-time routine (about 1 KiB of flash, #21). `black_box` keeps
/// LLVM from recognising the loop as a copy and calling `memcpy` anyway. Elsewhere the
/// library's `memcpy`. The lengths must be equal (as for `copy_from_slice`; callers check).
#[inline]
pub(crate) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    #[cfg(target_os = "none")]
    copy_bytewise(dst, src);
    #[cfg(not(target_os = "none"))]
    dst.copy_from_slice(src);
}

/// The bare-metal [`copy_bytes`] (compiled everywhere, so that the host tests run it).
#[cfg_attr(not(target_os = "none"), allow(dead_code))]
#[inline(never)]
fn copy_bytewise(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = core::hint::black_box(*s);
    }
}

/// `a == b`, compared byte by byte: a slice comparison is a call to `memcmp`, which on
/// microcontrollers links compiler-builtins' word-at-a-time routine (#21) for what are
/// short keys and literals here.
pub(crate) fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The 6 bits a base64 character stands for, in the alphabet whose last two characters are
/// `c62` and `c63` (`-`, `_` for base64url: `token`; `+`, `/` for standard base64: the
/// `=?base64?…?=` header values of [`headers`]).
pub(crate) fn sextet(c: u8, c62: u8, c63: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        _ if c == c62 => 62,
        _ if c == c63 => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

#[cfg(test)]
mod copy_tests {
    #[test]
    fn bytes_eq_compares() {
        assert!(super::bytes_eq(b"", b""));
        assert!(super::bytes_eq(b"null", b"null"));
        assert!(!super::bytes_eq(b"null", b"nul"));
        assert!(!super::bytes_eq(b"true", b"tru\0"));
    }

    #[test]
    fn copy_bytewise_copies() {
        let mut dst = [0u8; 9];
        super::copy_bytewise(&mut dst, b"abcdefghi");
        assert_eq!(&dst, b"abcdefghi");
        super::copy_bytes(&mut dst[2..5], b"XYZ");
        assert_eq!(&dst, b"abXYZfghi");
    }
}

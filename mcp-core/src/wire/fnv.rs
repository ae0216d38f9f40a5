//! 64-bit FNV-1a, the core's one non-keyed hash: for keys a peer does not choose against us
//! (a resource subscription's URI, a client's own request target, a task frame's
//! fingerprint). Where a peer could aim for collisions, the core uses its keyed SipHash
//! (`token::mac`) instead.

/// The FNV-1a offset basis: the hash of no bytes.
pub(crate) const START: u64 = 0xcbf2_9ce4_8422_2325;

/// `h` continued over `bytes` (start from [`START`]).
pub(crate) fn fnv1a(mut h: u64, bytes: impl IntoIterator<Item = u8>) -> u64 {
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // The FNV-1a 64 reference values for "" and "a".
        assert_eq!(fnv1a(START, []), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(START, *b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}

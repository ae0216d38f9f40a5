//! 2026-07-28 `input_required` rounds as the session sees them: the verified
//! `inputResponses` and `requestState` of a request, and the keyed target digest that binds
//! sealed state to the request it was issued for.

#[cfg(feature = "input-required")]
use super::faults::Fault;
#[cfg(feature = "input-required")]
use crate::wire::jsonrpc::code;
#[cfg(feature = "input-required")]
use crate::wire::{Method, Params};

/// The `inputResponses` and verified `requestState` of a request (2026-07-28). A state
/// that does not open under any of the configured keys (tampered, foreign, expired, or
/// sealed under a retired key) is -32602.
#[cfg(feature = "input-required")]
pub(super) fn input_context<'i>(
    p: &Params<'i>,
    method: Method,
    target: &str,
    config: &super::Config,
    now: u64,
) -> Result<crate::model::input::InputContext<'i>, Fault<'i>> {
    // Every response is a result object (ElicitResult, CreateMessageResult,
    // ListRootsResult); anything else is a malformed request, never a completed call.
    let is_object = |r: crate::wire::json::RawJson<'_>| r.kind() == crate::wire::json::Kind::Object;
    let responses = match p.input_responses {
        None => None,
        Some(r) if is_object(r) && r.members().into_iter().flatten().all(|(_, v)| is_object(v)) => {
            Some(r)
        }
        Some(_) => {
            return Err(Fault::new(
                code::INVALID_PARAMS,
                "params.inputResponses must be an object of result objects",
            ))
        }
    };
    let state = match p.request_state {
        None => None,
        Some(s) => {
            let invalid = Fault::new(
                code::INVALID_PARAMS,
                "Invalid requestState: tampered, expired or not issued by this server",
            );
            let s = s.as_string().ok_or(invalid)?;
            // Sealed state never has escapes; one that does was altered.
            let text = s.as_borrowed().ok_or(invalid)?;
            // The target digest is keyed too: each key opens with its own. A state that
            // fails under the current key (tampered, or sealed before a rotation) is tried
            // under the previous one while that is accepted.
            let opened = config.verification_keys(now).find_map(|key| {
                let mut hex = [0u8; 16];
                let target = digest_hex(target_digest(key, target), &mut hex);
                crate::token::seal::open(key, method.as_str(), target, text, now).ok()
            });
            Some(opened.ok_or(invalid)?)
        }
    };
    Ok(crate::model::input::InputContext { responses, state })
}

/// Keyed digest of a request target (raw JSON string text) for sealing. Without
/// `input-required` nothing is sealed and nothing reads the digest a call slot keeps: 0,
/// so that SipHash is not linked for it (about 0.7 KiB of flash on RV32, #21).
pub(super) fn target_digest(key: &crate::token::mac::SecretKey, target: &str) -> u64 {
    #[cfg(feature = "input-required")]
    return crate::token::mac::siphash24(key, target.as_bytes());
    #[cfg(not(feature = "input-required"))]
    {
        let _ = (key, target);
        0
    }
}

/// A digest as 16 lowercase hex digits.
#[cfg(feature = "input-required")]
pub(super) fn digest_hex(digest: u64, buf: &mut [u8; 16]) -> &str {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in buf.iter_mut().enumerate() {
        let shift = 60 - 4 * i as u32;
        *b = HEX
            .get(((digest >> shift) & 0xF) as usize)
            .copied()
            .unwrap_or(b'0');
    }
    core::str::from_utf8(buf).unwrap_or("")
}

/// A call's target as its result envelope needs it: the keyed digest (kept by a deferred
/// call's slot) and the scratch the seal spells it in, written only when state is sealed.
pub(super) struct Target {
    /// [`target_digest`] of the target (0 without `input-required`).
    pub(super) digest: u64,
    hex: [u8; 16],
}

impl Target {
    /// The target named by `raw` (a raw JSON string's text: a tool or prompt name, a URI).
    #[inline]
    pub(super) fn of(key: &crate::token::mac::SecretKey, raw: &str) -> Self {
        Self::digest(target_digest(key, raw))
    }

    /// A target with this digest (0: a call without one, `completion/complete`).
    #[inline]
    pub(super) const fn digest(digest: u64) -> Self {
        Self {
            digest,
            hex: [0; 16],
        }
    }
}

impl<'a> super::Session<'a> {
    /// The envelope of a request's call result: [`Self::call_envelope`] with the request's
    /// version and capabilities and `target`'s digest.
    #[inline]
    pub(super) fn target_envelope<'s>(
        &'s self,
        ctx: super::Ctx<'_>,
        cacheable: bool,
        method: crate::wire::Method,
        target: &'s mut Target,
    ) -> crate::model::common::Envelope<'s> {
        let digest = target.digest;
        self.call_envelope(
            ctx.version,
            cacheable,
            method,
            digest,
            ctx.caps,
            &mut target.hex,
        )
    }

    /// The envelope of a call's results, sealing state for `method` with the target digest.
    pub(super) fn call_envelope<'s>(
        &'s self,
        version: crate::wire::version::ProtocolVersion,
        cacheable: bool,
        method: crate::wire::Method,
        digest: u64,
        caps: crate::model::common::ClientCaps,
        hex: &'s mut [u8; 16],
    ) -> crate::model::common::Envelope<'s> {
        #[cfg_attr(not(feature = "input-required"), allow(unused_mut))]
        let mut env = self.envelope(version, cacheable);
        #[cfg(feature = "input-required")]
        if version.features().result_type {
            env.seal = Some(crate::model::common::SealCtx {
                key: &self.config.key,
                method: method.as_str(),
                target: digest_hex(digest, hex),
                expires_at_ms: self.now_ms.saturating_add(self.config.state_ttl_ms),
                caps,
            });
        }
        #[cfg(not(feature = "input-required"))]
        let _ = (method, digest, caps, hex);
        env
    }
}

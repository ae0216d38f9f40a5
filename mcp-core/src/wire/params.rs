//! Borrowed views of request parameters and of the request `_meta`, each read in one pass.

use crate::wire::json::RawJson;

/// `_meta` key of the 2026-07-28 protocol version.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the 2026-07-28 client capabilities.
pub const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the 2026-07-28 client identity (an `Implementation`, sent by clients).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the 2026-07-28 per-request log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server identity on 2026-07-28 results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging `subscriptions/listen` output.
pub const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// A placeholder key for members a build does not read (only a `"\u0000"` member could
/// match it, and what it matches is never used).
const NONE: &str = "\u{0}";

/// The first value of each of `keys` among an object's members, in one pass (names compare
/// after unescaping, and the first occurrence wins, as with [`RawJson::get`]).
#[inline(always)]
pub fn pick<'i, const N: usize>(
    object: Option<RawJson<'i>>,
    keys: [&str; N],
) -> [Option<RawJson<'i>>; N] {
    let mut found = [None; N];
    pick_into(object, &keys, &mut found);
    found
}

/// [`pick`] into `found` (one instance for every `N`, and no array moved: on
/// microcontrollers a move of the arrays is a call to `memcpy`).
#[inline(never)]
fn pick_into<'i>(object: Option<RawJson<'i>>, keys: &[&str], found: &mut [Option<RawJson<'i>>]) {
    for (k, v) in object.and_then(|o| o.members()).into_iter().flatten() {
        if let Some(slot) = keys
            .iter()
            .position(|key| k.eq_str(key))
            .and_then(|i| found.get_mut(i))
        {
            if slot.is_none() {
                *slot = Some(v);
            }
        }
    }
}

/// The request `_meta` members the server reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Meta<'i> {
    /// `_meta` itself.
    pub raw: Option<RawJson<'i>>,
    /// `io.modelcontextprotocol/protocolVersion`
    pub version: Option<RawJson<'i>>,
    /// `io.modelcontextprotocol/clientCapabilities`
    pub caps: Option<RawJson<'i>>,
    /// `io.modelcontextprotocol/logLevel`
    pub log_level: Option<RawJson<'i>>,
    /// `progressToken`
    pub progress: Option<RawJson<'i>>,
}

/// The parameters of any request, read in one pass over `params` and one over `_meta`
/// (instead of one lookup each, which would skip `arguments` every time).
#[derive(Clone, Copy, Debug, Default)]
pub struct Params<'i> {
    /// `params` itself (an object), if present.
    pub raw: Option<RawJson<'i>>,
    /// `name` (tools/call, prompts/get)
    pub name: Option<RawJson<'i>>,
    /// `uri` (resources/*)
    pub uri: Option<RawJson<'i>>,
    /// `arguments` (tools/call, prompts/get)
    pub arguments: Option<RawJson<'i>>,
    /// `cursor` (lists)
    pub cursor: Option<RawJson<'i>>,
    /// `inputResponses` (2026-07-28 retries)
    pub input_responses: Option<RawJson<'i>>,
    /// `requestState` (2026-07-28 retries)
    pub request_state: Option<RawJson<'i>>,
    /// `_meta`
    pub meta: Meta<'i>,
}

impl<'i> Params<'i> {
    /// Reads `params` (which must be an object or absent).
    pub fn read(params: Option<RawJson<'i>>) -> Self {
        let [name, uri, arguments, cursor, input_responses, request_state, meta] = pick(
            params,
            [
                "name",
                // Keys a build cannot use are never looked for (an impossible key name).
                if cfg!(feature = "resources") {
                    "uri"
                } else {
                    NONE
                },
                "arguments",
                "cursor",
                if cfg!(feature = "input-required") {
                    "inputResponses"
                } else {
                    NONE
                },
                if cfg!(feature = "input-required") {
                    "requestState"
                } else {
                    NONE
                },
                "_meta",
            ],
        );
        // Seven keys like the `params` pass, so both share one instance of `pick` (code
        // size on microcontrollers); the three spare keys are unused.
        let [version, caps, log_level, progress, ..] = pick(
            meta,
            [
                META_VERSION,
                META_CAPS,
                META_LOG_LEVEL,
                "progressToken",
                NONE,
                NONE,
                NONE,
            ],
        );
        Params {
            raw: params,
            name,
            uri,
            arguments,
            cursor,
            input_responses,
            request_state,
            meta: Meta {
                raw: meta,
                version,
                caps,
                log_level,
                progress,
            },
        }
    }

    /// Any other member of `params`.
    pub fn get(&self, key: &str) -> Option<RawJson<'i>> {
        self.raw.and_then(|p| p.get(key))
    }
}

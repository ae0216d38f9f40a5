//! One list engine for tools, prompts, resources and resource templates: stateless cursors
//! that name their list kind (a tools cursor is refused by `prompts/list`), one epoch per
//! list (a change makes its cursors stale), `ttlMs`/`cacheScope` in 2026-07-28, and pages
//! that end early when the next item would not fit the output buffer.
//!
//! Without the `pagination` feature every list is answered whole, in one page: no cursor
//! is minted or verified (the keyed MAC is not linked), a request carrying a `cursor` is
//! answered -32602 "Invalid cursor" (no cursor of this server exists), and a list larger
//! than the output buffer is answered -32603 "Response exceeds the output buffer" (with
//! `data.required`) by the dispatcher's overflow check.

use super::faults::Fault;
#[cfg(feature = "pagination")]
use super::SHORT;
use super::{Ctx, Reply, Session};
use crate::model::common::DefinitionError;
use crate::model::common::ResultType;
use crate::model::handler::ServerHandler;
use crate::token::cursor::ListKind;
#[cfg(feature = "pagination")]
use crate::token::cursor::{self, CursorError};
use crate::wire::json::JsonWriter;
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::version::ProtocolVersion;
use crate::wire::Params;

/// Every list kind, in `list_bit` order.
pub(super) const KINDS: [ListKind; 4] = [
    ListKind::Tools,
    ListKind::Prompts,
    ListKind::Resources,
    ListKind::ResourceTemplates,
];

/// Index of a kind in `KINDS` (and in the session's epochs).
pub(super) fn kind_index(kind: ListKind) -> usize {
    KINDS.iter().position(|k| *k == kind).unwrap_or(0)
}

/// The result member holding the items of a list.
fn items_key(kind: ListKind) -> &'static str {
    match kind {
        #[cfg(feature = "prompts")]
        ListKind::Prompts => "prompts",
        #[cfg(feature = "resources")]
        ListKind::Resources => "resources",
        #[cfg(feature = "resources")]
        ListKind::ResourceTemplates => "resourceTemplates",
        // Lists a build leaves out are empty and never listed.
        _ => "tools",
    }
}

/// The legacy notification announcing a change of a list.
pub(super) fn changed_method(kind: ListKind) -> &'static str {
    match kind {
        #[cfg(feature = "prompts")]
        ListKind::Prompts => "notifications/prompts/list_changed",
        #[cfg(feature = "resources")]
        ListKind::Resources | ListKind::ResourceTemplates => "notifications/resources/list_changed",
        // Lists a build leaves out never change.
        _ => "notifications/tools/list_changed",
    }
}

/// Number of items of a list the server offers.
fn list_len<S: ServerHandler + ?Sized>(server: &mut S, kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => server.tools().map_or(0, |t| t.len()),
        #[cfg(feature = "prompts")]
        ListKind::Prompts => server.prompts().map_or(0, |p| p.len()),
        #[cfg(feature = "resources")]
        ListKind::Resources => server.resources().map_or(0, |r| r.len()),
        #[cfg(feature = "resources")]
        ListKind::ResourceTemplates => server.resources().map_or(0, |r| r.templates_len()),
        #[allow(unreachable_patterns)]
        _ => 0,
    }
}

/// Validates and writes item `i` of a list; `None` past the end.
fn write_item<S: ServerHandler + ?Sized>(
    server: &mut S,
    kind: ListKind,
    i: usize,
    w: &mut JsonWriter<'_>,
    version: ProtocolVersion,
) -> Option<Result<(), DefinitionError>> {
    macro_rules! item {
        ($def:expr) => {{
            let def = $def?;
            Some(def.validate().map(|()| def.write(w, version)))
        }};
    }
    match kind {
        ListKind::Tools => item!(server.tools()?.get(i)),
        #[cfg(feature = "prompts")]
        ListKind::Prompts => item!(server.prompts()?.get(i)),
        #[cfg(feature = "resources")]
        ListKind::Resources => item!(server.resources()?.get(i)),
        #[cfg(feature = "resources")]
        ListKind::ResourceTemplates => item!(server.resources()?.template(i)),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

impl Session<'_> {
    /// The page position a request's `cursor` continues from (0 without one).
    #[cfg(feature = "pagination")]
    fn cursor_offset<'i>(
        &self,
        kind: ListKind,
        p: &Params<'i>,
        total: usize,
    ) -> Result<usize, Fault<'i>> {
        let cursor = match p.cursor {
            None => return Ok(0),
            Some(c) if c.is_null() => return Ok(0),
            Some(c) => c,
        };
        let invalid = Fault::new(code::INVALID_PARAMS, "Invalid cursor");
        let s = cursor.as_string().ok_or(invalid)?;
        let mut buf = [0u8; SHORT];
        let text = s.text_in(&mut buf).unwrap_or("");
        let keys = self.config.verification_keys(self.now_ms);
        let pos = match cursor::decode_any(keys, kind, text.as_bytes()) {
            Ok(pos) => pos,
            Err(CursorError::WrongList) => {
                return Err(Fault::new(code::INVALID_PARAMS, "Cursor of another list"))
            }
            Err(_) => return Err(invalid),
        };
        if Some(&pos.epoch) != self.epochs.get(kind_index(kind)) {
            return Err(Fault::new(
                code::INVALID_PARAMS,
                "Stale cursor: the list changed, list again from the start",
            ));
        }
        let offset = pos.offset as usize;
        if offset == 0 || offset >= total {
            return Err(invalid);
        }
        Ok(offset)
    }

    /// Without `pagination` no cursor is ever handed out, so any `cursor` but `null` is
    /// invalid: -32602, as the specification asks for an invalid cursor.
    #[cfg(not(feature = "pagination"))]
    fn cursor_offset<'i>(
        &self,
        _kind: ListKind,
        p: &Params<'i>,
        _total: usize,
    ) -> Result<usize, Fault<'i>> {
        match p.cursor {
            Some(c) if !c.is_null() => Err(Fault::new(code::INVALID_PARAMS, "Invalid cursor")),
            _ => Ok(0),
        }
    }

    /// Answers `tools/list`, `prompts/list`, `resources/list` or
    /// `resources/templates/list`.
    pub(super) fn list<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        kind: ListKind,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        let total = list_len(server, kind);
        let offset = self.cursor_offset(kind, p, total)?;
        // Without `pagination` the page is the whole list: it cannot end early (there is
        // no cursor to continue from), so an overflow is the dispatcher's -32603.
        #[cfg(feature = "pagination")]
        let page = usize::from(self.config.page_size.max(1));
        #[cfg(not(feature = "pagination"))]
        let page = usize::MAX;
        // Room kept for `nextCursor`, the modern trailer and the closing braces.
        #[cfg(feature = "pagination")]
        let reserve = 96
            + if ctx.version.is_modern() {
                160 + self.info.name.len() + self.info.version.len()
            } else {
                0
            };
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key(items_key(kind));
        w.begin_array();
        let mut next = offset;
        while next < total && next - offset < page {
            #[cfg(feature = "pagination")]
            let before = w.checkpoint();
            match write_item(server, kind, next, w, ctx.version) {
                None => break,
                Some(Err(_)) => {
                    return Err(Fault::new(
                        code::INTERNAL_ERROR,
                        "Invalid list item (see its validate())",
                    ))
                }
                Some(Ok(())) => {}
            }
            #[cfg(feature = "pagination")]
            if w.len().saturating_add(reserve) > w.capacity() && next > offset {
                w.rewind(before);
                break;
            }
            next += 1;
        }
        w.end_array();
        #[cfg(feature = "pagination")]
        if next < total {
            let epoch = self.epochs.get(kind_index(kind)).copied().unwrap_or(0);
            let offset = u32::try_from(next).unwrap_or(u32::MAX);
            let mut cursor = cursor::Cursor::BLANK;
            cursor::encode_into(&self.config.key, kind, epoch, offset, &mut cursor);
            w.key("nextCursor");
            w.string(cursor.as_str());
        }
        self.envelope(ctx.version, true)
            .trailer(w, ResultType::Complete);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }
}

//! Support for the code `#[tools]` (mcp-macros) generates. Not a public API: names and
//! signatures may change with the macro.
//!
//! The helpers are not generic, so each exists once in a binary however many tools use it
//! (code size on microcontrollers).

use core::fmt;

use crate::model::tools::ToolResult;
use crate::typed::{ArgError, Rejected};
use crate::wire::json::RawJson;

/// The `inputSchema` of a tool without an arguments parameter.
pub const NO_ARGS_SCHEMA: &str = r#"{"type":"object","additionalProperties":false}"#;

/// The parser matching [`NO_ARGS_SCHEMA`]: an object without members.
#[allow(clippy::result_large_err)] // as `ToolArgs::parse`
pub fn no_args(args: RawJson<'_>) -> Result<(), ArgError<'_>> {
    let mut error = ArgError::blank();
    no_args_into(args, &mut error).map_err(|_| error)
}

/// [`no_args`] as [`ToolArgs::parse_into`](crate::typed::ToolArgs::parse_into): the
/// derived parsers' member reader with no members declared (code size).
pub fn no_args_into<'i>(args: RawJson<'i>, error: &mut ArgError<'i>) -> Result<(), Rejected> {
    crate::typed::collect_members(args, &[], &mut [], error)
}

/// Answers a call whose arguments were refused: an `isError` result naming the tool and
/// the offending argument (``Invalid arguments for tool add: argument `a`: must be a
/// number``). Written without `core::fmt` (see [`ArgError::write_message`]), so a
/// firmware serving `#[tools]` does not link it.
#[inline(never)]
pub fn invalid_args(result: &mut ToolResult<'_, '_>, tool: &str, error: &ArgError<'_>) {
    result.error();
    if !result.open() {
        return;
    }
    let w = &mut *result.w;
    w.begin_object();
    w.key("type");
    w.string("text");
    w.key("text");
    // In string mode `raw` escapes what it writes as string content.
    w.begin_string_value();
    w.raw("Invalid arguments for tool ");
    w.raw(tool);
    w.raw(": ");
    error.write_message(&mut |piece| w.raw(piece));
    w.end_string_value();
    w.end_object();
}

/// Answers a call whose method returned `Err(error)`: an `isError` text block.
#[inline(never)]
pub fn failed(result: &mut ToolResult<'_, '_>, error: &dyn fmt::Display) {
    result.fail(format_args!("{error}"));
}

/// Answers a call to an index the tool table does not have (not reachable through
/// `ToolSet`: the session only calls tools it found).
#[inline(never)]
pub fn unknown_tool(result: &mut ToolResult<'_, '_>) {
    result.error().text("Unknown tool");
}

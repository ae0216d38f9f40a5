//! The 2026-07-28 Streamable HTTP request headers that must agree with the body, checked
//! once for every HTTP transport (mcp-tokio's on hyper, mcp-embedded's on httparse). A
//! transport hands over its headers through [`Headers`] (no copies) and the body as the
//! session reads it ([`peek`](crate::wire::peek)), so that a header is compared with exactly
//! what the session acts on, and a body the session refuses ([`Peek::Malformed`]) is
//! answered by the session alone. Nothing is allocated and nothing is decoded into a buffer
//! (a `=?base64?…?=` value is compared as it decodes), so there is no limit of its own: the
//! HTTP parser's bound on a head is the only one.
//!
//! Every refusal is answered **HTTP [`STATUS`] (400) with JSON-RPC error [`CODE`] (-32020,
//! HeaderMismatch)**, the request's `id` echoed, and the row's message:
//!
//! | check | [`HeaderError`] | message |
//! |---|---|---|
//! | `Mcp-Method` is sent | [`MissingMethod`](HeaderError::MissingMethod) | `Header mismatch: missing Mcp-Method header` |
//! | `Mcp-Method` = `method` | [`MethodMismatch`](HeaderError::MethodMismatch) | `Header mismatch: Mcp-Method header does not match the body's method` |
//! | `MCP-Protocol-Version` = `params._meta["io.modelcontextprotocol/protocolVersion"]` (when the body names one) | [`VersionMismatch`](HeaderError::VersionMismatch) | `Header mismatch: MCP-Protocol-Version header does not match the body's protocolVersion` |
//! | `Mcp-Name` is sent when the method names a target (`tools/call`, `prompts/get`: `params.name`; `resources/read`: `params.uri`; the tasks extension's `tasks/*`: `params.taskId`) | [`MissingName`](HeaderError::MissingName) | `Header mismatch: missing Mcp-Name header` |
//! | `Mcp-Name` = that target | [`NameMismatch`](HeaderError::NameMismatch) | `Header mismatch: Mcp-Name header does not match the body's name or uri` |
//! | `Mcp-Param-<Name>` is sent for an argument marked `x-mcp-header: <Name>` that is present and not `null` | [`MissingParam`](HeaderError::MissingParam) | `Header mismatch: missing Mcp-Param header for an x-mcp-header argument` |
//! | `Mcp-Param-<Name>` is not sent without its argument | [`ParamWithoutArgument`](HeaderError::ParamWithoutArgument) | `Header mismatch: Mcp-Param header without its argument` |
//! | `Mcp-Param-<Name>` = the argument (integers numerically) | [`ParamMismatch`](HeaderError::ParamMismatch) | `Header mismatch: Mcp-Param header does not match its argument` |
//! | none of these headers is sent twice | [`Repeated`](HeaderError::Repeated) | `Header mismatch: a header that may appear once was repeated` |
//! | their values are visible ASCII (SP, HTAB inside) | [`NotText`](HeaderError::NotText) | `Header mismatch: a header value is not visible ASCII` |
//! | a `=?base64?…?=` value is standard, padded, canonical base64 | [`BadBase64`](HeaderError::BadBase64) | `Header mismatch: a =?base64?...?= header value is not valid base64` |
//!
//! Header names compare ignoring ASCII case. Values are trimmed of optional white space
//! (SP, HTAB) and compare with the body like this:
//!
//! | header value | body value | equal when |
//! |---|---|---|
//! | `=?base64?` + base64 + `?=` | any | its decoded bytes are (standard alphabet, padded, canonical: bits after the last byte zero) |
//! | anything else | any | the text is |
//! | | a JSON string | the string's decoded UTF-8 bytes, exactly (case matters) |
//! | | a JSON integer (`-`, digits) | the same number: sign and digits, leading zeros ignored (`007` is `7`, `-0` is `0`) |
//! | | any other JSON value | its JSON text (`true`, `1.5`) |
//!
//! Only requests are checked: a notification
//! or response carries nothing the session routes by, and a batch is no 2026-07-28 message.
//! Methods only the legacy era serves (`resources/subscribe`) name no target: the session
//! refuses them. The `x-mcp-header` marks are read with [`marks::param_headers`]; a schema
//! whose marks break its rules declares nothing (clients exclude such a tool).
//!
//! ```
//! use mcp_rs_core::wire::headers::{check_request, HeaderError};
//! use mcp_rs_core::wire::json::Limits;
//! use mcp_rs_core::wire::peek::peek;
//!
//! let body = peek(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}"#, Limits::default());
//! let sent: &[(&str, &str)] = &[("mcp-method", "tools/call"), ("MCP-NAME", " add ")];
//! assert_eq!(check_request(sent, &body), Ok(()));
//! let sent: &[(&str, &str)] = &[("Mcp-Method", "tools/call"), ("Mcp-Name", "=?base64?c3Vi?=")];
//! let refused = check_request(sent, &body).unwrap_err();
//! assert_eq!(refused.error, HeaderError::NameMismatch);
//! assert_eq!(refused.error.message(), "Header mismatch: Mcp-Name header does not match the body's name or uri");
//! ```

pub mod marks;
mod value;

use core::fmt;

use crate::wire::json::{JsonStr, Limits, RawJson};
use crate::wire::jsonrpc::code;
use crate::wire::method::{Eras, Method, Target};
use crate::wire::peek::{Peek, Request};

use marks::{param_headers, HeaderMark, PREFIX};
use value::Value;

/// The revision whose requests carry these headers (and their own version).
pub const MODERN: &str = "2026-07-28";

/// The HTTP status of every refusal.
pub const STATUS: u16 = 400;

/// The JSON-RPC error code of every refusal (HeaderMismatch).
pub const CODE: i32 = code::HEADER_MISMATCH;

/// A request's headers as the transport holds them, read in place.
pub trait Headers {
    /// Every header of the request in the order received: its name (any ASCII case) and
    /// its value as sent (untrimmed).
    fn each(&self) -> impl Iterator<Item = (&[u8], &[u8])>;
}

/// `(name, value)` pairs, as tests and simple transports hold them.
impl Headers for [(&str, &str)] {
    fn each(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()))
    }
}

/// Why a request's headers are refused: one row of the [module table](self) each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderError {
    /// No `Mcp-Method` header.
    MissingMethod,
    /// `Mcp-Method` is not the body's `method`.
    MethodMismatch,
    /// `MCP-Protocol-Version` is not the body's `_meta` protocol version.
    VersionMismatch,
    /// No `Mcp-Name` header on a request whose method names a target.
    MissingName,
    /// `Mcp-Name` is not the body's `params.name`, `params.uri` or `params.taskId`.
    NameMismatch,
    /// No `Mcp-Param-<Name>` header for a marked argument.
    MissingParam,
    /// A `Mcp-Param-<Name>` header whose argument is absent or `null`.
    ParamWithoutArgument,
    /// A `Mcp-Param-<Name>` header that is not its argument.
    ParamMismatch,
    /// One of these headers sent more than once.
    Repeated,
    /// A value that is not visible ASCII.
    NotText,
    /// A `=?base64?…?=` value that is not valid base64.
    BadBase64,
}

impl HeaderError {
    /// The error message of the reply (the [module table](self)'s last column).
    pub const fn message(self) -> &'static str {
        match self {
            HeaderError::MissingMethod => "Header mismatch: missing Mcp-Method header",
            HeaderError::MethodMismatch => {
                "Header mismatch: Mcp-Method header does not match the body's method"
            }
            HeaderError::VersionMismatch => {
                "Header mismatch: MCP-Protocol-Version header does not match the body's protocolVersion"
            }
            HeaderError::MissingName => "Header mismatch: missing Mcp-Name header",
            HeaderError::NameMismatch => {
                "Header mismatch: Mcp-Name header does not match the body's name or uri"
            }
            HeaderError::MissingParam => {
                "Header mismatch: missing Mcp-Param header for an x-mcp-header argument"
            }
            HeaderError::ParamWithoutArgument => {
                "Header mismatch: Mcp-Param header without its argument"
            }
            HeaderError::ParamMismatch => {
                "Header mismatch: Mcp-Param header does not match its argument"
            }
            HeaderError::Repeated => "Header mismatch: a header that may appear once was repeated",
            HeaderError::NotText => "Header mismatch: a header value is not visible ASCII",
            HeaderError::BadBase64 => {
                "Header mismatch: a =?base64?...?= header value is not valid base64"
            }
        }
    }
}

/// The header a [`Refusal`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field<'a> {
    /// `MCP-Protocol-Version`.
    Version,
    /// `Mcp-Method`.
    Method,
    /// `Mcp-Name`.
    Name,
    /// `Mcp-Param-<Name>`, with the name as the tool's schema declares it.
    Param(&'a str),
}

impl fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Version => f.write_str("MCP-Protocol-Version"),
            Field::Method => f.write_str("Mcp-Method"),
            Field::Name => f.write_str("Mcp-Name"),
            Field::Param(name) => write!(f, "{PREFIX}{name}"),
        }
    }
}

/// A refused request: what is wrong, and with which header. Answer it with [`STATUS`],
/// [`CODE`] and [`HeaderError::message`] (heap-free) or this `Display` (which names a
/// `Mcp-Param-*` header, or the header a generic row is about).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal<'a> {
    /// The row of the [module table](self).
    pub error: HeaderError,
    /// The header it is about.
    pub field: Field<'a>,
}

impl fmt::Display for Refusal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.error.message())?;
        let generic = matches!(
            self.error,
            HeaderError::Repeated | HeaderError::NotText | HeaderError::BadBase64
        );
        if generic || matches!(self.field, Field::Param(_)) {
            write!(f, " ({})", self.field)?;
        }
        Ok(())
    }
}

/// Whether the request declares the stateless revision: its (first) `MCP-Protocol-Version`
/// header, optional white space trimmed, is [`MODERN`].
pub fn declares_modern<H: Headers + ?Sized>(headers: &H) -> bool {
    headers
        .each()
        .find(|(n, _)| n.eq_ignore_ascii_case(b"mcp-protocol-version"))
        .is_some_and(|(_, v)| value::trim(v) == MODERN.as_bytes())
}

/// The tool a `tools/call` request or notification names (`params.name`), as the session
/// reads it.
pub fn called_tool<'i>(body: &Peek<'i>) -> Option<JsonStr<'i>> {
    match body {
        Peek::Request(r) | Peek::Notification(r) if r.method() == Some(Method::ToolsCall) => {
            r.target
        }
        _ => None,
    }
}

/// The value of the header named `prefix` + `name` (ASCII case ignored) that may be sent
/// once: `Ok(None)` when absent.
fn single<'h, H: Headers + ?Sized>(
    headers: &'h H,
    prefix: &str,
    name: &str,
) -> Result<Option<&'h [u8]>, HeaderError> {
    let named = |n: &[u8]| {
        n.len() == prefix.len() + name.len()
            && n.get(..prefix.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()))
            && n.get(prefix.len()..)
                .is_some_and(|r| r.eq_ignore_ascii_case(name.as_bytes()))
    };
    let mut all = headers.each().filter(|(n, _)| named(n));
    let first = all.next().map(|(_, v)| v);
    if all.next().is_some() {
        return Err(HeaderError::Repeated);
    }
    Ok(first)
}

/// [`single`] read as a [`Value`], refusals naming `field`.
fn read<'h, 'a, H: Headers + ?Sized>(
    headers: &'h H,
    prefix: &str,
    name: &str,
    field: Field<'a>,
) -> Result<Option<Value<'h>>, Refusal<'a>> {
    let refuse = |error| Refusal { error, field };
    single(headers, prefix, name)
        .map_err(refuse)?
        .map(|raw| Value::read(raw).map_err(refuse))
        .transpose()
}

/// A 2026-07-28 request's `Mcp-Method`, `MCP-Protocol-Version` and `Mcp-Name` against its
/// body, [`peek`](crate::wire::peek::peek)ed with the session's depth bound. `Err` is the
/// first disagreement (rows 1 to 5 of the [module table](self), and 9 to 11 for these
/// headers).
pub fn check_request<H: Headers + ?Sized>(
    headers: &H,
    body: &Peek<'_>,
) -> Result<(), Refusal<'static>> {
    let Peek::Request(request) = body else {
        return Ok(());
    };
    let refuse = |error, field| Err(Refusal { error, field });
    match read(headers, "mcp-method", "", Field::Method)? {
        None => return refuse(HeaderError::MissingMethod, Field::Method),
        Some(m) if !m.matches_str(request.method) => {
            return refuse(HeaderError::MethodMismatch, Field::Method)
        }
        Some(_) => {}
    }
    let version = read(headers, "mcp-protocol-version", "", Field::Version)?;
    if let (Some(sent), Some(body)) = (version, request.version) {
        if !sent.matches_str(body) {
            return refuse(HeaderError::VersionMismatch, Field::Version);
        }
    }
    // The method table says which parameter names the target.
    let named = request
        .known
        .filter(|row| row.eras != Eras::Legacy)
        .is_some_and(|row| matches!(row.target, Target::Name | Target::Uri | Target::TaskId));
    if !named {
        return Ok(());
    }
    match (read(headers, "mcp-name", "", Field::Name)?, request.target) {
        (None, _) => refuse(HeaderError::MissingName, Field::Name),
        (Some(h), Some(b)) if h.matches_str(b) => Ok(()),
        (Some(_), _) => refuse(HeaderError::NameMismatch, Field::Name),
    }
}

/// SEP-2243: a `tools/call` request of the tool whose `inputSchema` is `input_schema`
/// (find it with [`called_tool`]) carries each argument marked `x-mcp-header` in its
/// `Mcp-Param-<Name>` header too (rows 6 to 11 of the [module table](self)). The arguments
/// are those the session reads ([`Request::arguments`], the first of duplicate members), so
/// that a duplicated argument cannot show the header one value and the tool another.
pub fn check_params<'s, H: Headers + ?Sized>(
    headers: &H,
    body: &Peek<'_>,
    input_schema: RawJson<'s>,
) -> Result<(), Refusal<'s>> {
    let Peek::Request(call) = body else {
        return Ok(());
    };
    if call.method() != Some(Method::ToolsCall) {
        return Ok(());
    }
    // A schema whose marks break the rules declares nothing a client would send.
    let Ok(mut marks) = param_headers(input_schema) else {
        return Ok(());
    };
    marks.try_for_each(|mark| check_param(headers, call, mark))
}

/// [`check_params`] of the tool `input_schema` is the text of: parsed with `limits` (the
/// session's depth bound); a schema that does not parse declares nothing. A schema whose
/// text cannot hold a mark ([`marks::may_mark`]: most tools' schemas) is neither parsed
/// nor walked.
pub fn check_params_text<'s, H: Headers + ?Sized>(
    headers: &H,
    body: &Peek<'_>,
    input_schema: &'s str,
    limits: Limits,
) -> Result<(), Refusal<'s>> {
    if !marks::may_mark(input_schema.as_bytes()) {
        return Ok(());
    }
    match crate::wire::json::parse(input_schema.as_bytes(), limits) {
        Ok(schema) => check_params(headers, body, schema),
        Err(_) => Ok(()),
    }
}

fn check_param<'s, H: Headers + ?Sized>(
    headers: &H,
    call: &Request<'_>,
    mark: HeaderMark<'s>,
) -> Result<(), Refusal<'s>> {
    // A mark is an HTTP token (no escapes), so its raw text is its name.
    let name = mark.header.raw();
    let field = Field::Param(name);
    let refuse = |error| Err(Refusal { error, field });
    let argument = call
        .arguments
        .and_then(|a| a.members())
        .and_then(|mut m| {
            // A property without escapes (all but odd schemas) compares decoded; one with
            // escapes compares as written.
            m.find(|(k, _)| match mark.property.as_borrowed() {
                Some(p) => k.eq_str(p),
                None => *k == mark.property,
            })
        })
        .map(|(_, v)| v)
        .filter(|v| !v.is_null());
    match (argument, read(headers, PREFIX, name, field)?) {
        (None, None) => Ok(()),
        (Some(_), None) => refuse(HeaderError::MissingParam),
        (None, Some(_)) => refuse(HeaderError::ParamWithoutArgument),
        (Some(v), Some(h)) if h.matches(v) => Ok(()),
        (Some(_), Some(_)) => refuse(HeaderError::ParamMismatch),
    }
}

#[cfg(test)]
mod tests;

//! Typed prompt arguments: the traits `#[derive(PromptArgs)]` implements, written by hand
//! just as well.
//!
//! | trait | what it gives | used for |
//! |---|---|---|
//! | [`PromptArgs`] | `ARGUMENTS` (the declared [`PromptArgument`]s) and a borrowing `parse` of the `arguments` object that accepts exactly those | `Prompt::arguments`, and the arguments of `prompts/get` |
//! | [`PromptArgValue`] | one argument's value from its string, and whether it may be absent | the field types of a `PromptArgs` struct |
//!
//! MCP prompt arguments are strings. Value types: [`JsonStr`] (zero-copy, escapes decoded
//! on demand), `String` (feature `alloc`), unit enums deriving `PromptArgs` (a string from a
//! fixed set), and `Option` of any of them (an argument that is not required).
//!
//! A failed parse is an [`ArgError`] naming the argument; [`PromptResult::invalid_arguments`]
//! turns it into the -32602 error the session itself answers for a missing required
//! argument or a non-string value.
//!
//! [`PromptResult::invalid_arguments`]: crate::model::prompts::PromptResult::invalid_arguments

use crate::model::prompts::PromptArgument;
use crate::typed::{ArgError, PathSegment, Problem};
use crate::wire::json::{JsonStr, RawJson};

/// The arguments of a prompt: their declarations and the parser of the `arguments` object.
///
/// Implementations keep the two in step: `parse` accepts an object exactly when it has
/// every required argument of `ARGUMENTS`, no other member, and only string values.
pub trait PromptArgs<'i>: Sized {
    /// The declared arguments, in order (`Prompt::arguments`).
    const ARGUMENTS: &'static [PromptArgument<'static>];
    /// Parses the `arguments` object of `prompts/get` (`{}` when absent), borrowing from it.
    #[allow(clippy::result_large_err)] // the path is kept inline: no allocation
    fn parse(arguments: RawJson<'i>) -> Result<Self, ArgError<'i>>;
}

/// The value of one prompt argument, made from its string.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt argument type",
    label = "not a prompt argument type",
    note = "prompt arguments are strings: use `JsonStr<'_>`, `String` (feature `alloc`) or a unit enum deriving `PromptArgs`, or an `Option` of one of them"
)]
pub trait PromptArgValue<'i>: Sized {
    /// Whether the argument must be present (`false` for `Option`).
    const REQUIRED: bool = true;
    /// The allowed values, for a value from a fixed set (empty: any string). Useful for
    /// `completion/complete`.
    const CHOICES: &'static [&'static str] = &[];
    /// The value from the argument's string.
    fn from_arg(value: JsonStr<'i>) -> Result<Self, Problem<'i>>;
    /// The value when the argument is absent (`None`: it is required).
    fn absent() -> Option<Self> {
        None
    }
}

impl<'i> PromptArgValue<'i> for JsonStr<'i> {
    fn from_arg(value: JsonStr<'i>) -> Result<Self, Problem<'i>> {
        Ok(value)
    }
}

#[cfg(feature = "alloc")]
impl<'i> PromptArgValue<'i> for alloc::string::String {
    fn from_arg(value: JsonStr<'i>) -> Result<Self, Problem<'i>> {
        Ok(value.chars().collect())
    }
}

impl<'i, T: PromptArgValue<'i>> PromptArgValue<'i> for Option<T> {
    const REQUIRED: bool = false;
    const CHOICES: &'static [&'static str] = T::CHOICES;
    fn from_arg(value: JsonStr<'i>) -> Result<Self, Problem<'i>> {
        T::from_arg(value).map(Some)
    }
    fn absent() -> Option<Self> {
        Some(None)
    }
}

/// Collects the string values of the members named in `names` (generated code): an
/// unknown member, a repeated one or a non-string value is an error.
#[doc(hidden)]
#[allow(clippy::result_large_err)]
pub fn __collect<'i, const N: usize>(
    arguments: RawJson<'i>,
    names: &[&'static str; N],
) -> Result<[Option<JsonStr<'i>>; N], ArgError<'i>> {
    let mut out = [None; N];
    let members = arguments
        .members()
        .ok_or(ArgError::new(Problem::NotAnObject))?;
    for (key, value) in members {
        let Some(i) = names.iter().position(|n| key.eq_str(n)) else {
            return Err(ArgError::new(Problem::Unknown(key)));
        };
        let (Some(slot), Some(&name)) = (out.get_mut(i), names.get(i)) else {
            continue;
        };
        let at = PathSegment::Key(name);
        if slot.is_some() {
            return Err(ArgError::new(Problem::Duplicate).within(at));
        }
        let text = value
            .as_string()
            .ok_or(ArgError::new(Problem::Type("a string")).within(at))?;
        *slot = Some(text);
    }
    Ok(out)
}

/// One field from its collected value (generated code).
#[doc(hidden)]
#[allow(clippy::result_large_err)]
pub fn __field<'i, T: PromptArgValue<'i>>(
    name: &'static str,
    value: Option<JsonStr<'i>>,
) -> Result<T, ArgError<'i>> {
    let at = PathSegment::Key(name);
    match value {
        Some(v) => T::from_arg(v).map_err(|p| ArgError::new(p).within(at)),
        None => T::absent().ok_or(ArgError::new(Problem::Missing).within(at)),
    }
}

/// The value of a unit enum's variant named by `value` (generated code).
#[doc(hidden)]
pub fn __choice<'i>(
    value: JsonStr<'i>,
    choices: &[&'static str],
    allowed: &'static str,
) -> Result<usize, Problem<'i>> {
    choices
        .iter()
        .position(|c| value.eq_str(c))
        .ok_or(Problem::NotInEnum(allowed))
}

impl crate::model::prompts::PromptResult<'_, '_> {
    /// Rejects the request's arguments: the session answers -32602 naming the argument,
    /// as it does itself for a missing required argument or a non-string value (`Missing
    /// required argument: name`, `Unknown argument: name`, ...). Anything written is
    /// discarded.
    pub fn invalid_arguments(&mut self, error: &ArgError<'_>) {
        let message = match error.problem {
            Problem::NotAnObject => "Prompt arguments must be an object",
            Problem::Missing => "Missing required argument",
            Problem::Unknown(_) => "Unknown argument",
            Problem::Duplicate => "Duplicate argument",
            Problem::Type(_) => "Prompt argument values must be strings",
            _ => "Invalid argument value",
        };
        match (error.problem, error.path().first()) {
            (Problem::Unknown(name), _) => self.reject_argument(message, &mut name.chars()),
            (_, Some(PathSegment::Key(name))) => self.reject_argument(message, &mut name.chars()),
            _ => self.reject_argument(message, &mut "".chars()),
        }
    }
}

//! The numbers of `notifications/progress`: [`ProgressValue`], so integer progress is written
//! as an integer, without linking float formatting.
//!
//! [`Session::progress`](super::Session::progress) is generic over the value type: `f64`
//! (and `f32`) values go through [`JsonWriter::f64`] (shortest round-trip form, which pulls
//! in core's float formatting, about 11 KiB of flash on Cortex-M), integer values through
//! [`JsonWriter::u64`] / [`JsonWriter::i64`]. A firmware that only counts steps calls it
//! with `u32`s and links no float formatting for it.
//!
//! ```text
//! session.progress(token, 2u32, Some(5u32), None, &mut out)
//!   -> {"jsonrpc":"2.0","method":"notifications/progress",
//!       "params":{"progressToken":"t","progress":2,"total":5}}
//! session.progress(token, 0.5, Some(1.0), None, &mut out)
//!   -> ... "progress":0.5,"total":1.0 ...
//! ```

use crate::wire::json::JsonWriter;

mod sealed {
    pub trait Sealed {}
}

/// A number `notifications/progress` can carry as `progress` or `total`: `u8`..`u64`,
/// `usize`, `i32`, `i64` (written as integers) and `f32`, `f64` (written as floats; a
/// non-finite `total` is left out, a non-finite `progress` is refused). Sealed.
///
/// The session compares successive values as `f64` to check that progress increases, so
/// integers above 2^53 may compare equal to their neighbours.
pub trait ProgressValue: Copy + sealed::Sealed {
    /// The value as `f64`, for the increasing check.
    #[doc(hidden)]
    fn as_f64(self) -> f64;
    /// Writes the value as a JSON number.
    #[doc(hidden)]
    fn write(self, w: &mut JsonWriter<'_>);
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl ProgressValue for $t {
            #[allow(clippy::cast_precision_loss)]
            fn as_f64(self) -> f64 {
                self as f64
            }
            fn write(self, w: &mut JsonWriter<'_>) {
                w.u64(self as u64);
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, usize);

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl ProgressValue for $t {
            #[allow(clippy::cast_precision_loss)]
            fn as_f64(self) -> f64 {
                self as f64
            }
            fn write(self, w: &mut JsonWriter<'_>) {
                w.i64(i64::from(self));
            }
        }
    )*};
}
signed!(i32, i64);

impl sealed::Sealed for f64 {}
impl ProgressValue for f64 {
    fn as_f64(self) -> f64 {
        self
    }
    fn write(self, w: &mut JsonWriter<'_>) {
        w.f64(self);
    }
}

impl sealed::Sealed for f32 {}
impl ProgressValue for f32 {
    fn as_f64(self) -> f64 {
        f64::from(self)
    }
    fn write(self, w: &mut JsonWriter<'_>) {
        w.f64(f64::from(self));
    }
}

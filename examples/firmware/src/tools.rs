//! The firmware's tools: `calculate`, `roll_dice`, `tell_fortune` and the device-style
//! `read_temperature` (simulated sensor), `set_led` (the board's user LEDs) and `uptime_ms`.
//!
//! Declared with mcp-macros: `#[tools]` builds the tool table, the dispatch and the
//! `ToolSet` (no index constants), `#[derive(ToolArgs)]` the input schemas and
//! `#[derive(ToolOutput)]` the output schemas and the writers of `structuredContent`.
//! Arguments are read by the derived parsers, as the README teaches: `#[tools]` calls
//! `CalculateArgs`'s parser (and so on) and answers a refusal with an `isError` result
//! naming the argument (``argument `notation`: must be a string``). They cost about 0.5
//! KiB of flash more than hand-written readers of the same arguments (#21: 32,704 B against
//! 32,204 B on `mps2-an386`), within the 32,768 B budget.
//!
//! Every call runs inline, so the runner answers it in the same turn. No floating point
//! anywhere: `calculate` works in fixed-point decimal ([`crate::decimal`]), which keeps the
//! image far below its flash budget (float parsing and printing alone would cost about 25
//! KiB). That is also why no argument is a primitive number type (the derived integer
//! parsers read `2.0` and `1e3` through `f64`): numbers are [`Decimal`] and [`Led`].

use mcp_rs_core::typed::{
    ArgError, ArgValue, OutputValue, Problem, Rejected, SchemaText, ToolOutput,
};
use mcp_rs_core::wire::json::{JsonWriter, Kind, RawJson};
use mcp_rs_core::{tools, ToolAnnotations, ToolArgs, ToolOutput, ToolResult};

use crate::dice::{self, Dice};
use crate::{board, decimal};

/// Pure computation: reads nothing, changes nothing, same answer every time.
const PURE: ToolAnnotations<'static> = ToolAnnotations {
    title: None,
    read_only_hint: Some(true),
    destructive_hint: Some(false),
    idempotent_hint: Some(true),
    open_world_hint: Some(false),
};

/// Reads state or randomness: changes nothing, but answers differ between calls.
const READS: ToolAnnotations<'static> = ToolAnnotations {
    idempotent_hint: Some(false),
    ..PURE
};

// ---- argument and output types ----------------------------------------------------------

/// A JSON number in fixed-point decimal (millionths, [`crate::decimal`]): any number is
/// accepted and rounded to six fractional digits; magnitudes from 9.2e12 up are refused.
#[derive(Clone, Copy)]
struct Decimal(i64);

impl<'i> ArgValue<'i> for Decimal {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"number""#);
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        if v.kind() != Kind::Number {
            return Err(error.set(Problem::Type("a number")));
        }
        decimal::parse(v.as_str(), false)
            .map(Decimal)
            .ok_or_else(|| error.set(Problem::Invalid("must be below 9.2e12 in magnitude")))
    }
}

impl OutputValue for Decimal {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"number""#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        let mut buf = [0u8; decimal::MAX_LEN];
        w.raw_value(decimal::format(self.0, &mut buf));
    }
}

/// One of the two user LEDs: an integer, 0 or 1 (`1.0` and `1e0` too, as JSON Schema
/// counts them integers).
#[derive(Clone, Copy)]
struct Led(u32);

impl<'i> ArgValue<'i> for Led {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"integer","minimum":0,"maximum":1"#);
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        if v.kind() != Kind::Number {
            return Err(error.set(Problem::Type("an integer")));
        }
        match decimal::parse(v.as_str(), true) {
            Some(0) => Ok(Led(0)),
            Some(decimal::ONE) => Ok(Led(1)),
            _ => Err(error.set(Problem::Invalid("must be 0 or 1"))),
        }
    }
}

/// Dice notation `NdS`, `NdS+M` or `NdS-M`: the calculator's schema (the bytes its derive
/// writes for `#[arg(pattern, examples)]`), checked by [`crate::dice`] rather than by a
/// compiled `pattern` (the same language, without linking the pattern matcher); a refused
/// notation is an `isError` result naming the argument and the problem.
struct Notation(Dice);

impl<'i> ArgValue<'i> for Notation {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(concat!(
        r#""type":"string","#,
        r#""description":"Dice notation NdS, NdS+M or NdS-M, e.g. 2d6+3, d20, 4d8-1","#,
        r#""examples":["2d6+3","d20","4d8-1"],"#,
        r#""pattern":"^\\s*[0-9]*[dD][0-9]+\\s*([+-]\\s*[0-9]+)?\\s*$""#,
    ));
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        let text = v
            .as_string()
            .ok_or_else(|| error.set(Problem::Type("a string")))?;
        dice::parse(text.chars())
            .map(Notation)
            .map_err(|why| error.set(Problem::Invalid(why)))
    }
}

/// Arithmetic operations of `calculate`.
#[derive(Clone, Copy, ToolArgs)]
#[arg(rename_all = "lowercase")]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
}

/// Arguments of `calculate`.
#[derive(ToolArgs)]
struct CalculateArgs {
    operation: Operation,
    a: Decimal,
    b: Decimal,
}

/// Output of `calculate`.
#[derive(ToolOutput)]
struct Calculated {
    result: Decimal,
}

/// Arguments of `roll_dice`.
#[derive(ToolArgs)]
struct DiceArgs {
    notation: Notation,
}

/// One die's value, 1-1000.
#[derive(Clone, Copy)]
struct Roll(u16);

impl OutputValue for Roll {
    const SCHEMA_BODY: SchemaText =
        SchemaText::Text(r#""type":"integer","minimum":1,"maximum":1000"#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.u64(u64::from(self.0));
    }
}

/// A signed integer in output, printed by [`decimal::format`] (which `calculate` links
/// anyway) rather than by a second integer printer.
#[derive(Clone, Copy)]
struct Int(i32);

impl OutputValue for Int {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"integer""#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        Decimal(i64::from(self.0) * decimal::ONE).write_value(w);
    }
}

/// Output of `roll_dice`.
#[derive(ToolOutput)]
struct Rolled<'a> {
    rolls: &'a [Roll],
    #[arg(minimum = -1000, maximum = 1000)]
    modifier: Int,
    total: Int,
}

/// Fortune categories.
#[derive(Clone, Copy, ToolArgs)]
#[arg(rename_all = "lowercase")]
enum Category {
    Love,
    Career,
    Health,
    Wealth,
    General,
}

/// Arguments of `tell_fortune`.
#[derive(ToolArgs)]
struct FortuneArgs {
    #[arg(default = "general")]
    category: Category,
}

/// Temperature units.
#[derive(Clone, Copy, ToolArgs, ToolOutput)]
#[arg(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Arguments of `read_temperature`.
#[derive(ToolArgs)]
struct TemperatureArgs {
    #[arg(default = "celsius")]
    unit: Unit,
}

/// Output of `read_temperature`.
#[derive(ToolOutput)]
struct Temperature {
    temperature: Decimal,
    unit: Unit,
}

/// Arguments of `set_led`.
#[derive(ToolArgs)]
struct LedArgs {
    led: Led,
    on: bool,
}

/// Both LEDs' states, LED 0 first.
struct LedStates([bool; 2]);

impl OutputValue for LedStates {
    const SCHEMA_BODY: SchemaText =
        SchemaText::Text(r#""type":"array","items":{"type":"boolean"},"minItems":2,"maxItems":2"#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        self.0.write_value(w);
    }
}

/// Output of `set_led`.
#[derive(ToolOutput)]
struct Leds {
    leds: LedStates,
}

/// Milliseconds (the derive would give `u64` its full range as `maximum`).
struct Millis(u64);

impl OutputValue for Millis {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"integer","minimum":0"#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.u64(self.0);
    }
}

/// Output of `uptime_ms`.
#[derive(ToolOutput)]
struct Uptime {
    uptime_ms: Millis,
}

const FORTUNES: [[&str; 2]; 5] = [
    [
        "A kind word sent today returns twofold.",
        "Someone is thinking of you right now.",
    ],
    [
        "Your next commit fixes more than it breaks.",
        "A small task done well opens a large door.",
    ],
    [
        "Drink water; your future self says thanks.",
        "A walk clears what the screen clouds.",
    ],
    [
        "Saved cycles are earned cycles.",
        "Fortune favours the well-budgeted.",
    ],
    [
        "The interrupt you await is already pending.",
        "Every newline is a fresh start.",
    ],
];

/// xorshift32, seeded from the cycle counter at the first call (the client's timing).
struct Prng(u32);

impl Prng {
    fn next(&mut self) -> u32 {
        if self.0 == 0 {
            self.0 = board::cycles() ^ 0x9E37_79B9;
            if self.0 == 0 {
                self.0 = 1;
            }
        }
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-22 for n <= 1000).
    fn below(&mut self, n: u32) -> u32 {
        ((u64::from(self.next()) * u64::from(n)) >> 32) as u32
    }
}

/// The firmware's tool set.
pub struct DeviceTools {
    rng: Prng,
}

impl DeviceTools {
    /// Tools with an unseeded PRNG (seeded at its first use).
    pub const fn new() -> Self {
        DeviceTools { rng: Prng(0) }
    }
}

/// In `tools/list` order.
#[tools]
impl DeviceTools {
    /// a <operation> b in decimal fixed point: six fractional digits (rounded half away
    /// from zero), magnitudes below 9.2e12.
    #[tool(
        title = "Calculate",
        annotations = PURE,
        output_schema = <Calculated as ToolOutput>::SCHEMA
    )]
    fn calculate(&mut self, args: CalculateArgs, result: &mut ToolResult<'_, '_>) {
        let CalculateArgs { operation, a, b } = args;
        let (a, b) = (a.0, b.0);
        let value = match operation {
            Operation::Add => a.checked_add(b),
            Operation::Subtract => a.checked_sub(b),
            Operation::Multiply => decimal::mul(a, b),
            Operation::Divide if b == 0 => {
                result.error().text("division by zero");
                return;
            }
            Operation::Divide => decimal::div(a, b),
        };
        match value {
            Some(value) => result.structured(&Calculated {
                result: Decimal(value),
            }),
            None => {
                result
                    .error()
                    .text("the result is out of range (|x| < 9.2e12)");
            }
        }
    }

    /// Rolls dice in NdS+M notation (1-100 dice, 2-1000 sides, modifier -1000 to +1000),
    /// e.g. 2d6+3 or d20: every roll and the total.
    #[tool(
        title = "Roll dice",
        annotations = READS,
        output_schema = <Rolled<'static> as ToolOutput>::SCHEMA
    )]
    fn roll_dice(&mut self, args: DiceArgs, result: &mut ToolResult<'_, '_>) {
        let DiceArgs {
            notation:
                Notation(Dice {
                    count,
                    sides,
                    modifier,
                }),
        } = args;
        let mut rolls = [Roll(0); 100];
        let rolls = rolls.get_mut(..count as usize).unwrap_or_default();
        let mut total = modifier;
        for r in rolls.iter_mut() {
            let value = self.rng.below(sides) + 1;
            *r = Roll(value as u16);
            total += value as i32;
        }
        result.structured(&Rolled {
            rolls,
            modifier: Int(modifier),
            total: Int(total),
        });
    }

    /// Tells a (random, purely for fun) fortune.
    #[tool(
        title = "Tell fortune",
        annotations = READS
    )]
    fn tell_fortune(&mut self, args: FortuneArgs, result: &mut ToolResult<'_, '_>) {
        let FortuneArgs { category } = args;
        // One of the category's two (a pattern rather than an index: `below(2)` is 0 or 1,
        // but the compiler cannot tell, and an index would link a panic and its message).
        let [first, second] = FORTUNES[category as usize];
        result.text(if self.rng.below(2) == 0 {
            first
        } else {
            second
        });
    }

    /// The board's temperature (simulated: a slow drift plus noise).
    #[tool(
        title = "Read temperature",
        annotations = READS,
        output_schema = <Temperature as ToolOutput>::SCHEMA
    )]
    fn read_temperature(&mut self, args: TemperatureArgs, result: &mut ToolResult<'_, '_>) {
        let TemperatureArgs { unit } = args;
        // A slow triangle wave between 20.0 and 24.0 C over two minutes, plus +-0.2 noise,
        // in tenths of a degree.
        // 32-bit arithmetic throughout: 64-bit division would link a 1 KiB runtime routine.
        // No `/` either: the Cortex-M0 has no divide instruction (a 0.4 KiB routine).
        let phase =
            decimal::divmod(decimal::divmod(board::uptime_ms(), 1500 * 80).1, 1500).0 as i32; // 0..80
        let wave = if phase < 40 { phase } else { 80 - phase };
        let noise = self.rng.below(5) as i32 - 2;
        let tenths_c = 200 + wave + noise;
        let tenths = match unit {
            Unit::Celsius => tenths_c,
            // `tenths_c` is positive (at least 198).
            Unit::Fahrenheit => decimal::divmod((tenths_c * 9 + 2) as u64, 5).0 as i32 + 320,
        };
        result.structured(&Temperature {
            temperature: Decimal(i64::from(tenths) * (decimal::ONE / 10)),
            unit,
        });
    }

    /// Switches user LED 0 or 1 on or off; returns both LEDs' states.
    // Changes device state, but only to the requested value: not read-only, not
    // destructive (the previous state is restored by another call), idempotent.
    #[tool(
        title = "Set LED",
        read_only = false,
        destructive = false,
        idempotent,
        open_world = false,
        output_schema = <Leds as ToolOutput>::SCHEMA
    )]
    fn set_led(&mut self, args: LedArgs, result: &mut ToolResult<'_, '_>) {
        let LedArgs { led, on } = args;
        let bit = 1u32 << led.0;
        let state = board::leds::get();
        board::leds::set(if on { state | bit } else { state & !bit });
        let state = board::leds::get();
        result.structured(&Leds {
            leds: LedStates([state & 1 != 0, state & 2 != 0]),
        });
    }

    /// Milliseconds since boot (SysTick).
    #[tool(
        title = "Uptime",
        annotations = READS,
        output_schema = <Uptime as ToolOutput>::SCHEMA
    )]
    fn uptime_ms(&mut self, result: &mut ToolResult<'_, '_>) {
        result.structured(&Uptime {
            uptime_ms: Millis(board::uptime_ms()),
        });
    }
}

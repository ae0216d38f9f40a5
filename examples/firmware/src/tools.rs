//! The firmware's tools: `calculate`, `roll_dice`, `tell_fortune` and the device-style
//! `read_temperature` (simulated sensor), `set_led` (the board's user LEDs) and `uptime_ms`.
//!
//! Arguments are read from `mcp-core`'s zero-copy JSON views; every call runs inline, so
//! the runner answers it in the same turn. No floating point anywhere: `calculate` works
//! in fixed-point decimal ([`crate::decimal`]), which keeps the image far below its flash
//! budget (float parsing and printing alone would cost about 25 KiB).

use mcp_core::json::{JsonWriter, RawJson, StrPart};
use mcp_core::{CallRequest, Dispatch, Tool, ToolAnnotations, ToolResult, ToolSet};

use crate::{clock, decimal};

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

const CALCULATE: usize = 0;
const ROLL_DICE: usize = 1;
const TELL_FORTUNE: usize = 2;
const READ_TEMPERATURE: usize = 3;
const SET_LED: usize = 4;
const UPTIME_MS: usize = 5;

/// The tool definitions, in `tools/list` order.
pub static TOOLS: [Tool<'static>; 6] = [
    Tool {
        description: Some(
            "Applies add, subtract, multiply or divide to a and b in decimal fixed point: six \
             fractional digits (rounded half away from zero), magnitudes below 9.2e12.",
        ),
        output_schema: Some(r#"{"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}"#),
        annotations: Some(ToolAnnotations { title: Some("Calculate"), ..PURE }),
        ..Tool::new(
            "calculate",
            r#"{"type":"object","properties":{"operation":{"type":"string","enum":["add","subtract","multiply","divide"]},"a":{"type":"number"},"b":{"type":"number"}},"required":["operation","a","b"],"additionalProperties":false}"#,
        )
    },
    Tool {
        description: Some("Rolls `count` dice with `sides` sides each (a seeded PRNG on the device)."),
        output_schema: Some(
            r#"{"type":"object","properties":{"rolls":{"type":"array","items":{"type":"integer"}},"total":{"type":"integer"}},"required":["rolls","total"]}"#,
        ),
        annotations: Some(ToolAnnotations { title: Some("Roll dice"), ..READS }),
        ..Tool::new(
            "roll_dice",
            r#"{"type":"object","properties":{"sides":{"type":"integer","minimum":2,"maximum":1000,"default":6},"count":{"type":"integer","minimum":1,"maximum":20,"default":1}},"additionalProperties":false}"#,
        )
    },
    Tool {
        description: Some("Tells a (random, purely for fun) fortune."),
        annotations: Some(ToolAnnotations { title: Some("Tell fortune"), ..READS }),
        ..Tool::new(
            "tell_fortune",
            r#"{"type":"object","properties":{"category":{"type":"string","enum":["love","career","health","wealth","general"],"default":"general"}},"additionalProperties":false}"#,
        )
    },
    Tool {
        description: Some("Reads the board's temperature sensor (simulated: drifts slowly with uptime, plus noise)."),
        output_schema: Some(
            r#"{"type":"object","properties":{"temperature":{"type":"number"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["temperature","unit"]}"#,
        ),
        annotations: Some(ToolAnnotations { title: Some("Read temperature"), ..READS }),
        ..Tool::new(
            "read_temperature",
            r#"{"type":"object","properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"],"default":"celsius"}},"additionalProperties":false}"#,
        )
    },
    Tool {
        description: Some("Switches one of the board's two user LEDs on or off; returns both LED states."),
        output_schema: Some(
            r#"{"type":"object","properties":{"leds":{"type":"array","items":{"type":"boolean"},"minItems":2,"maxItems":2}},"required":["leds"]}"#,
        ),
        // Changes device state, but only to the requested value: not read-only, not
        // destructive (the previous state is restored by another call), idempotent.
        annotations: Some(ToolAnnotations {
            title: Some("Set LED"),
            read_only_hint: Some(false),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        }),
        ..Tool::new(
            "set_led",
            r#"{"type":"object","properties":{"led":{"type":"integer","minimum":0,"maximum":1},"on":{"type":"boolean"}},"required":["led","on"],"additionalProperties":false}"#,
        )
    },
    Tool {
        description: Some("Milliseconds since the device booted (from SysTick)."),
        output_schema: Some(r#"{"type":"object","properties":{"uptime_ms":{"type":"integer","minimum":0}},"required":["uptime_ms"]}"#),
        annotations: Some(ToolAnnotations { title: Some("Uptime"), ..READS }),
        ..Tool::new("uptime_ms", r#"{"type":"object","additionalProperties":false}"#)
    },
];

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

/// The board's two user LEDs: the FPGA I/O block's LED register (`0x4002_8000`, bits 0-1).
mod leds {
    const LED0: usize = 0x4002_8000;

    pub fn get() -> u32 {
        // SAFETY: LED0 of the mps2 FPGA I/O block: a valid, aligned 32-bit MMIO register.
        unsafe { core::ptr::read_volatile(LED0 as *const u32) }
    }
    pub fn set(value: u32) {
        // SAFETY: as for `get`.
        unsafe { core::ptr::write_volatile(LED0 as *mut u32, value) }
    }
}

/// xorshift32, seeded from the cycle counter at the first call (the client's timing).
struct Prng(u32);

impl Prng {
    fn next(&mut self) -> u32 {
        if self.0 == 0 {
            self.0 = clock::cycles() ^ 0x9E37_79B9;
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

    fn calculate(
        &mut self,
        args: RawJson<'_>,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<(), ArgError> {
        only(args, &["operation", "a", "b"])?;
        let operation = choice(
            args,
            "operation",
            &["add", "subtract", "multiply", "divide"],
            None,
        )?;
        let a = number(args, "a")?;
        let b = number(args, "b")?;
        let value = match operation {
            0 => a.checked_add(b),
            1 => a.checked_sub(b),
            2 => decimal::mul(a, b),
            _ if b == 0 => {
                result.error().text("division by zero");
                return Ok(());
            }
            _ => decimal::div(a, b),
        };
        let Some(value) = value else {
            result
                .error()
                .text("the result is out of range (|x| < 9.2e12)");
            return Ok(());
        };
        let mut buf = [0u8; decimal::MAX_LEN];
        let text = decimal::format(value, &mut buf);
        result.structured_with(|w: &mut JsonWriter<'_>| {
            w.begin_object();
            w.key("result");
            w.raw_value(text);
            w.end_object();
        });
        Ok(())
    }

    fn roll_dice(
        &mut self,
        args: RawJson<'_>,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<(), ArgError> {
        only(args, &["sides", "count"])?;
        let sides = integer(args, "sides", Some(6), 2, 1000)? as u32;
        let count = integer(args, "count", Some(1), 1, 20)? as usize;
        let mut rolls = [0u16; 20];
        let rolls = &mut rolls[..count];
        for r in rolls.iter_mut() {
            *r = self.rng.below(sides) as u16 + 1;
        }
        let total: u32 = rolls.iter().map(|&r| u32::from(r)).sum();
        let rolls = &*rolls;
        result.structured_with(|w: &mut JsonWriter<'_>| {
            w.begin_object();
            w.key("rolls");
            w.begin_array();
            for &r in rolls {
                w.u64(u64::from(r));
            }
            w.end_array();
            w.key("total");
            w.u64(u64::from(total));
            w.end_object();
        });
        Ok(())
    }

    fn tell_fortune(
        &mut self,
        args: RawJson<'_>,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<(), ArgError> {
        only(args, &["category"])?;
        let category = choice(
            args,
            "category",
            &["love", "career", "health", "wealth", "general"],
            Some(4),
        )?;
        let pick = self.rng.below(2) as usize;
        result.text(FORTUNES[category][pick]);
        Ok(())
    }

    fn read_temperature(
        &mut self,
        args: RawJson<'_>,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<(), ArgError> {
        only(args, &["unit"])?;
        let fahrenheit = choice(args, "unit", &["celsius", "fahrenheit"], Some(0))? == 1;
        // A slow triangle wave between 20.0 and 24.0 C over two minutes, plus +-0.2 noise,
        // in tenths of a degree.
        // 32-bit arithmetic throughout: 64-bit division would link a 1 KiB runtime routine.
        let phase = (decimal::divmod(clock::uptime_ms(), 1500 * 80).1 as u32 / 1500) as i32; // 0..80
        let wave = if phase < 40 { phase } else { 80 - phase };
        let noise = self.rng.below(5) as i32 - 2;
        let tenths_c = 200 + wave + noise;
        let (tenths, unit) = match fahrenheit {
            false => (tenths_c, "celsius"),
            true => ((tenths_c * 9 + 2) / 5 + 320, "fahrenheit"),
        };
        let mut buf = [0u8; decimal::MAX_LEN];
        let text = decimal::format(i64::from(tenths) * (decimal::ONE / 10), &mut buf);
        result.structured_with(|w: &mut JsonWriter<'_>| {
            w.begin_object();
            w.key("temperature");
            w.raw_value(text);
            w.key("unit");
            w.string(unit);
            w.end_object();
        });
        Ok(())
    }

    fn set_led(
        &mut self,
        args: RawJson<'_>,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<(), ArgError> {
        only(args, &["led", "on"])?;
        let led = integer(args, "led", None, 0, 1)?;
        let on = args
            .get("on")
            .ok_or(ArgError::missing("on"))?
            .as_bool()
            .ok_or(ArgError::new("on", "a boolean"))?;
        let bit = 1u32 << led;
        let state = leds::get();
        leds::set(if on { state | bit } else { state & !bit });
        let state = leds::get();
        result.structured_with(|w: &mut JsonWriter<'_>| {
            w.begin_object();
            w.key("leds");
            w.begin_array();
            w.bool(state & 1 != 0);
            w.bool(state & 2 != 0);
            w.end_array();
            w.end_object();
        });
        Ok(())
    }

    fn uptime_ms(
        &mut self,
        args: RawJson<'_>,
        result: &mut ToolResult<'_, '_>,
    ) -> Result<(), ArgError> {
        only(args, &[])?;
        let ms = clock::uptime_ms();
        result.structured_with(|w: &mut JsonWriter<'_>| {
            w.begin_object();
            w.key("uptime_ms");
            w.u64(ms);
            w.end_object();
        });
        Ok(())
    }
}

impl ToolSet for DeviceTools {
    fn len(&self) -> usize {
        TOOLS.len()
    }

    fn get(&self, index: usize) -> Option<Tool<'_>> {
        TOOLS.get(index).copied()
    }

    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        let args = request.args();
        let outcome = match request.tool_index() {
            CALCULATE => self.calculate(args, result),
            ROLL_DICE => self.roll_dice(args, result),
            TELL_FORTUNE => self.tell_fortune(args, result),
            READ_TEMPERATURE => self.read_temperature(args, result),
            SET_LED => self.set_led(args, result),
            UPTIME_MS => self.uptime_ms(args, result),
            _ => Err(ArgError::new("name", "a known tool")),
        };
        if let Err(e) = outcome {
            result.error().text_parts(&[
                StrPart::Text("invalid arguments: `"),
                StrPart::Text(e.key),
                StrPart::Text("` must be "),
                StrPart::Text(e.expected),
            ]);
        }
        Dispatch::Done
    }
}

/// An argument that does not match the input schema (reported as an `isError` result).
struct ArgError {
    key: &'static str,
    expected: &'static str,
}

impl ArgError {
    const fn new(key: &'static str, expected: &'static str) -> Self {
        ArgError { key, expected }
    }
    const fn missing(key: &'static str) -> Self {
        ArgError {
            key,
            expected: "present",
        }
    }
}

/// `additionalProperties: false`: every key of `args` is one of `allowed`.
fn only(args: RawJson<'_>, allowed: &'static [&'static str]) -> Result<(), ArgError> {
    let members = args
        .members()
        .ok_or(ArgError::new("arguments", "an object"))?;
    for (key, _) in members {
        if !allowed.iter().any(|a| key.eq_str(a)) {
            return Err(ArgError::new("arguments", "free of unknown keys"));
        }
    }
    Ok(())
}

/// An integer in `min..=max`, or `default` when absent.
fn integer(
    args: RawJson<'_>,
    key: &'static str,
    default: Option<i64>,
    min: i64,
    max: i64,
) -> Result<i64, ArgError> {
    let value = match (args.get(key), default) {
        (None, Some(d)) => return Ok(d),
        (None, None) => return Err(ArgError::missing(key)),
        (Some(v), _) => v.as_i64(),
    };
    value
        .filter(|v| (min..=max).contains(v))
        .ok_or(ArgError::new(key, "an integer in range"))
}

/// The index of a string in `options`, or `default` when absent.
fn choice(
    args: RawJson<'_>,
    key: &'static str,
    options: &[&str],
    default: Option<usize>,
) -> Result<usize, ArgError> {
    let Some(value) = args.get(key) else {
        return default.ok_or(ArgError::missing(key));
    };
    value
        .as_string()
        .and_then(|s| options.iter().position(|o| s.eq_str(o)))
        .ok_or(ArgError::new(key, "one of the listed values"))
}

/// A number in fixed-point decimal.
fn number(args: RawJson<'_>, key: &'static str) -> Result<i64, ArgError> {
    let value = args.get(key).ok_or(ArgError::missing(key))?;
    match value.kind() {
        mcp_core::json::Kind::Number => {
            decimal::parse(value.as_str()).ok_or(ArgError::new(key, "below 9.2e12 in magnitude"))
        }
        _ => Err(ArgError::new(key, "a number")),
    }
}

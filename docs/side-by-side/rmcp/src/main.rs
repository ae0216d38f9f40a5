//! The calculator's four seed tools written with rmcp (=3.11.0): the same names, arguments,
//! schemas' required properties and enums, annotations and structured output. Only the
//! definitions and argument/output types: the handlers' bodies (dice parsing, fortunes)
//! are elided exactly as in the mcp-rs column.
use rmcp::{
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    tool, tool_handler, tool_router, Json, ServerHandler,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    /// The first addend
    pub number1: f64,
    /// The second addend
    pub number2: f64,
}

#[derive(Serialize, JsonSchema)]
pub struct AddOutput {
    /// number1 + number2
    pub sum: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalculateArgs {
    /// The operation to apply
    pub operation: Operation,
    /// The left operand
    pub a: f64,
    /// The right operand
    pub b: f64,
}

#[derive(Serialize, JsonSchema)]
pub struct CalculateOutput {
    /// a <operation> b
    pub result: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiceArgs {
    /// Dice notation NdS, NdS+M or NdS-M, e.g. 2d6+3, d20, 4d8-1
    #[schemars(regex(pattern = r"^\s*[0-9]*[dD][0-9]+\s*([+-]\s*[0-9]+)?\s*$"))]
    pub notation: String,
}

#[derive(Serialize, JsonSchema)]
pub struct DiceOutput {
    /// Each die, in order
    #[schemars(length(min = 1, max = 100))]
    pub rolls: Vec<u16>,
    /// Added to the sum of the rolls
    #[schemars(range(min = -1000, max = 1000))]
    pub modifier: i32,
    /// Sum of the rolls plus the modifier
    pub total: i64,
}

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Love,
    Career,
    Health,
    Wealth,
    General,
}

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mood {
    Optimistic,
    #[default]
    Mysterious,
    Cautious,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FortuneArgs {
    /// What the fortune is about
    pub category: Category,
    /// The tone of the fortune
    #[serde(default)]
    pub mood: Option<Mood>,
}

#[derive(Serialize, JsonSchema)]
pub struct FortuneOutput {
    pub category: Category,
    pub mood: Mood,
    pub fortune: String,
}

#[derive(Clone)]
pub struct Calculator {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Calculator {
    pub fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    #[tool(
        name = "add_numbers",
        title = "Add numbers",
        description = "Adds two numbers and returns their sum.",
        annotations(title = "Add numbers", read_only_hint = true, destructive_hint = false,
                    idempotent_hint = true, open_world_hint = false)
    )]
    fn add_numbers(&self, Parameters(args): Parameters<AddArgs>) -> Result<Json<AddOutput>, String> {
        let sum = args.number1 + args.number2;
        if !sum.is_finite() {
            return Err("the sum is too large to represent".into());
        }
        Ok(Json(AddOutput { sum }))
    }

    #[tool(
        name = "calculate",
        title = "Calculate",
        description = "Applies a basic arithmetic operation (add, subtract, multiply, divide) to a and b. Dividing by zero is reported as a tool error.",
        annotations(title = "Calculate", read_only_hint = true, destructive_hint = false,
                    idempotent_hint = true, open_world_hint = false)
    )]
    fn calculate(&self, Parameters(args): Parameters<CalculateArgs>) -> Result<Json<CalculateOutput>, String> {
        let result = match args.operation {
            Operation::Add => args.a + args.b,
            Operation::Subtract => args.a - args.b,
            Operation::Multiply => args.a * args.b,
            Operation::Divide if args.b == 0.0 => return Err("Division by zero".into()),
            Operation::Divide => args.a / args.b,
        };
        Ok(Json(CalculateOutput { result }))
    }

    #[tool(
        name = "roll_dice",
        title = "Roll dice",
        description = "Rolls dice in tabletop notation NdS+M: N dice (1-100, default 1) with S sides (2-1000) and an optional modifier M (-1000 to +1000), e.g. 2d6+3, d20, 4d8-1. Returns every roll and the total.",
        annotations(title = "Roll dice", read_only_hint = true, destructive_hint = false,
                    idempotent_hint = false, open_world_hint = false)
    )]
    fn roll_dice(&self, Parameters(args): Parameters<DiceArgs>) -> Result<Json<DiceOutput>, String> {
        let _ = args.notation; // parsing and rolling elided (as in the mcp-rs column)
        Ok(Json(DiceOutput { rolls: vec![1], modifier: 0, total: 1 }))
    }

    #[tool(
        name = "tell_fortune",
        title = "Tell fortune",
        description = "Tells a (random, purely for fun) fortune for a life category, in the requested mood.",
        annotations(title = "Tell fortune", read_only_hint = true, destructive_hint = false,
                    idempotent_hint = false, open_world_hint = false)
    )]
    fn tell_fortune(&self, Parameters(args): Parameters<FortuneArgs>) -> Json<FortuneOutput> {
        let mood = args.mood.unwrap_or_default();
        Json(FortuneOutput { category: args.category, mood, fortune: String::new() })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Calculator {}

fn main() {
    let c = Calculator::new();
    for t in c.tool_router.list_all() {
        println!("{}", serde_json::to_string(&t).unwrap());
    }
}

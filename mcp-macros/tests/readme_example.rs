//! The mcp-macros example of docs/macros.md, compiled and called.

use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::{tools, ToolArgs, ToolOutput};

#[derive(ToolArgs)]
#[arg(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(ToolArgs)]
struct ConvertArgs<'i> {
    /// The temperature to convert
    #[arg(minimum = -273.15)]
    value: f64,
    /// Target unit
    to: Unit,
    /// A label echoed back
    #[arg(max_length = 32)]
    label: Option<JsonStr<'i>>,
}

#[derive(ToolOutput)]
struct Converted {
    value: f64,
}

struct Thermo;

#[tools]
impl Thermo {
    /// Converts a temperature.
    #[tool(title = "Convert", read_only, idempotent)]
    fn convert(&self, args: ConvertArgs<'_>) -> Converted {
        let _ = args.label;
        let value = match args.to {
            Unit::Celsius => (args.value - 32.0) / 1.8,
            Unit::Fahrenheit => args.value * 1.8 + 32.0,
        };
        Converted { value }
    }
}

#[test]
fn readme_example_schema_and_errors() {
    let tool = Thermo::TOOLS[0];
    assert_eq!(tool.name, "convert");
    assert_eq!(tool.description, Some("Converts a temperature."));
    let schema: serde_json::Value = serde_json::from_str(tool.input_schema).unwrap();
    assert_eq!(
        schema["properties"]["to"]["enum"],
        serde_json::json!(["celsius", "fahrenheit"])
    );
    assert_eq!(schema["required"], serde_json::json!(["value", "to"]));
    let args =
        mcp_rs_core::wire::json::parse(br#"{"value":-300,"to":"celsius"}"#, Default::default())
            .unwrap();
    let err = <ConvertArgs<'_> as mcp_rs_core::typed::ToolArgs<'_>>::parse(args)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "argument `value`: must be at least -273.15"
    );
}

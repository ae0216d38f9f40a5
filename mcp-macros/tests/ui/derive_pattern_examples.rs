use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct NoMatch<'a> {
    #[arg(pattern = r"^\d+d\d+$", examples = ["2d6", "d20"])]
    dice: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct TooLong<'a> {
    #[arg(max_length = 3, examples = ["abcd"])]
    code: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct NotAString<'a> {
    #[arg(pattern = "^[0-9]+$", examples = [12])]
    digits: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct BadDefault<'a> {
    #[arg(pattern = "^(red|green)$", default = "blue")]
    color: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct OutOfRange {
    #[arg(maximum = 10, examples = [5, 11])]
    count: u8,
}

#[derive(ToolArgs)]
struct NotAnArray<'a> {
    #[arg(examples = "d20")]
    dice: JsonStr<'a>,
}

fn main() {}

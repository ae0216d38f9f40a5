use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Lookahead<'a> {
    #[arg(pattern = "^(?=a)b")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Lookbehind<'a> {
    #[arg(pattern = "(?<!x)y")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Backreference<'a> {
    #[arg(pattern = r"(a)\1")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct WordBoundary<'a> {
    #[arg(pattern = r"\bword\b")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Property<'a> {
    #[arg(pattern = r"^\p{L}+$")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Flags<'a> {
    #[arg(pattern = "(?i:abc)")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Unbalanced<'a> {
    #[arg(pattern = "^(abc")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Bounds<'a> {
    #[arg(pattern = "a{3,2}")]
    name: JsonStr<'a>,
}

fn main() {}

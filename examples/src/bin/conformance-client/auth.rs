pub async fn run(
    url: &str,
    scenario: &str,
    context: Option<&serde_json::Value>,
) -> Result<(), String> {
    Err("not built here".into())
}

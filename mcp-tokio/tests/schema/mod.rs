//! Validation of emitted messages against the official JSON Schema of a revision: the
//! copies vendored in `mcp-core/tests/spec` (or `$MCP_SPEC_DIR`), so that a plain clone
//! runs every test.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};

/// The schema document of `revision`, read once.
fn schema(revision: &str) -> Value {
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Value>>> = OnceLock::new();
    let mut schemas = SCHEMAS.get_or_init(Default::default).lock().unwrap();
    schemas
        .entry(revision.to_owned())
        .or_insert_with(|| {
            let dir = std::env::var_os("MCP_SPEC_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-core/tests/spec")
                });
            let path = dir.join(revision).join("schema.json");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            serde_json::from_str(&text).expect("the schema is JSON")
        })
        .clone()
}

/// Asserts that `value` is a valid `def` (a name under `$defs`) of `revision`'s schema.
pub(crate) fn validate(revision: &str, def: &str, value: &Value) {
    let root = schema(revision);
    assert!(root["$defs"].get(def).is_some(), "no definition {def}");
    let mut wrapper = json!({ "$ref": format!("#/$defs/{def}") });
    wrapper["$schema"] = root["$schema"].clone();
    wrapper["$defs"] = root["$defs"].clone();
    let validator = jsonschema::validator_for(&wrapper).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("  at {}: {e}", e.instance_path().as_str()))
        .collect();
    assert!(
        errors.is_empty(),
        "[{revision}] not a valid {def}:\n{}\n{value:#}",
        errors.join("\n")
    );
}

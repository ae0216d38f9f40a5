//! The skills extension (SEP-2640): capability declaration, `skills/list`, `skills/get`
//! and `resources/directory/read`, in both eras, every frame schema-checked by the pair.

mod pair;

use mcp_rs_core::model::skills::{Skill, SkillFile, SkillResources};
use pair::{error_code, initialize, modern, request, Pair, INITIALIZED, MODERN};
use serde_json::{json, Value};

const D1: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const D2: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

static PDF_FILES: [SkillFile<'static>; 5] = [
    SkillFile {
        uri: "skill://acme/pdf-tools/SKILL.md",
        digest: D1,
        size: 120,
    },
    SkillFile {
        uri: "skill://acme/pdf-tools/references/forms.md",
        digest: D2,
        size: 7,
    },
    SkillFile {
        uri: "skill://acme/pdf-tools/scripts/extract.py",
        digest: D2,
        size: 30,
    },
    SkillFile {
        uri: "skill://acme/pdf-tools/references/deep/x.md",
        digest: D1,
        size: 1,
    },
    SkillFile {
        uri: "skill://acme/pdf-tools/README.txt",
        digest: D1,
        size: 5,
    },
];

static SKILLS: [Skill<'static>; 2] = [
    Skill {
        uri: "skill://acme/pdf-tools/SKILL.md",
        frontmatter: r#"{"name":"pdf-tools","description":"Work with PDFs","metadata":{"tier":"1"}}"#,
        resources: SkillResources::Files(&PDF_FILES),
    },
    Skill {
        uri: "skill://acme/notes/SKILL.md",
        frontmatter: r#"{"name":"notes","description":"Take notes"}"#,
        resources: SkillResources::Dynamic,
    },
];

static BAD_FILES: [SkillFile<'static>; 1] = [SkillFile {
    uri: "skill://acme/bad/SKILL.md",
    digest: "sha256:ABC",
    size: 1,
}];
static BAD: [Skill<'static>; 1] = [Skill {
    uri: "skill://acme/bad/SKILL.md",
    frontmatter: r#"{"name":"bad","description":"x"}"#,
    resources: SkillResources::Files(&BAD_FILES),
}];

const EXT: &str = "io.modelcontextprotocol/skills";

fn pdf_entry() -> Value {
    json!({
        "uri": "skill://acme/pdf-tools/SKILL.md",
        "frontmatter": {"name": "pdf-tools", "description": "Work with PDFs", "metadata": {"tier": "1"}},
        "resources": [
            {"uri": "skill://acme/pdf-tools/SKILL.md", "digest": D1, "size": 120},
            {"uri": "skill://acme/pdf-tools/references/forms.md", "digest": D2, "size": 7},
            {"uri": "skill://acme/pdf-tools/scripts/extract.py", "digest": D2, "size": 30},
            {"uri": "skill://acme/pdf-tools/references/deep/x.md", "digest": D1, "size": 1},
            {"uri": "skill://acme/pdf-tools/README.txt", "digest": D1, "size": 5},
        ]
    })
}

fn notes_entry() -> Value {
    json!({
        "uri": "skill://acme/notes/SKILL.md",
        "frontmatter": {"name": "notes", "description": "Take notes"},
        "resources": "dynamic"
    })
}

/// A full server (resources included) with the skills, initialized at 2025-11-25.
fn legacy() -> Pair {
    let mut p = Pair::full();
    p.ext.skills = Some(&SKILLS);
    p.send(&initialize(0, "2025-11-25"));
    p.send(INITIALIZED);
    p
}

fn modern_pair() -> Pair {
    let mut p = Pair::full();
    p.ext.skills = Some(&SKILLS);
    p
}

#[test]
fn the_extension_is_declared_inline_in_both_eras() {
    let mut p = Pair::full();
    p.ext.skills = Some(&SKILLS);
    let init = p.ask(&initialize(0, "2025-11-25"));
    assert_eq!(
        init["result"]["capabilities"]["extensions"],
        json!({ EXT: {"directoryRead": true} })
    );
    let disc = modern_pair().ask(&modern(json!(1), "server/discover", json!({})));
    assert_eq!(
        disc["result"]["capabilities"]["extensions"],
        json!({ EXT: {"directoryRead": true} })
    );
    assert!(disc["result"]["capabilities"]["resources"].is_object());
}

#[test]
fn without_skills_or_without_resources_nothing_is_declared_or_served() {
    // No skills: no `extensions`, the methods are unknown.
    let mut p = Pair::full();
    let init = p.ask(&initialize(0, "2025-11-25"));
    assert!(init["result"]["capabilities"].get("extensions").is_none());
    p.send(INITIALIZED);
    let r = p.ask(&request(json!(1), "skills/list", json!({})));
    assert_eq!(error_code(&r), -32601);
    // Skills but no resources to read their files with: the same.
    let mut p = Pair::new();
    p.ext.skills = Some(&SKILLS);
    let disc = p.ask(&modern(json!(1), "server/discover", json!({})));
    assert!(disc["result"]["capabilities"].get("extensions").is_none());
    for m in ["skills/list", "skills/get", "resources/directory/read"] {
        let r = p.ask(&modern(
            json!(2),
            m,
            json!({"uri": "skill://acme/notes/SKILL.md"}),
        ));
        assert_eq!(error_code(&r), -32601, "{m}: {r}");
    }
}

#[test]
fn skills_list_sends_every_entry_with_cache_attributes_in_2026() {
    let mut p = legacy();
    let r = p.ask(&request(json!(1), "skills/list", json!({})));
    assert_eq!(r["result"]["skills"], json!([pdf_entry(), notes_entry()]));
    assert!(r["result"].get("nextCursor").is_none());
    assert!(r["result"].get("ttlMs").is_none());

    let mut p = modern_pair();
    let r = p.ask(&modern(json!(1), "skills/list", json!({})));
    assert_eq!(r["result"]["skills"], json!([pdf_entry(), notes_entry()]));
    assert!(r["result"]["ttlMs"].is_u64(), "{r}");
    assert!(r["result"]["cacheScope"].is_string(), "{r}");
    // No cursor is ever minted: any cursor is invalid; null means none.
    let r = p.ask(&modern(json!(2), "skills/list", json!({"cursor": "abc"})));
    assert_eq!(error_code(&r), -32602);
    let r = p.ask(&modern(json!(3), "skills/list", json!({"cursor": null})));
    assert_eq!(r["result"]["skills"].as_array().map(Vec::len), Some(2));
}

#[test]
fn skills_get_echoes_one_entry_and_refuses_unknown_uris() {
    let mut p = legacy();
    let r = p.ask(&request(
        json!(1),
        "skills/get",
        json!({"uri": "skill://acme/notes/SKILL.md"}),
    ));
    assert_eq!(r["result"]["skill"], notes_entry());
    assert!(r["result"].get("nextCursor").is_none());

    let r = p.ask(&request(
        json!(2),
        "skills/get",
        json!({"uri": "skill://nope/x/SKILL.md"}),
    ));
    assert_eq!(error_code(&r), -32602);
    assert_eq!(r["error"]["data"]["uri"], "skill://nope/x/SKILL.md");
    let r = p.ask(&request(json!(3), "skills/get", json!({})));
    assert_eq!(error_code(&r), -32602);

    let mut p = modern_pair();
    let r = p.ask(&modern(
        json!(1),
        "skills/get",
        json!({"uri": "skill://acme/pdf-tools/SKILL.md"}),
    ));
    assert_eq!(r["result"]["skill"], pdf_entry());
    assert!(r["result"]["ttlMs"].is_u64() && r["result"]["cacheScope"].is_string());
}

/// `resources/directory/read` children, each checked against the revision's `Resource`.
fn children(p: &mut Pair, uri: &str) -> Value {
    let r = p.ask(&request(
        json!(9),
        "resources/directory/read",
        json!({ "uri": uri }),
    ));
    let list = r["result"]["resources"].clone();
    for c in list
        .as_array()
        .unwrap_or_else(|| panic!("no resources: {r}"))
    {
        pair::harness::validate_def("2025-11-25", "Resource", c).expect("a Resource");
    }
    list
}

#[test]
fn directory_read_lists_direct_children_with_subdirectories_once() {
    let mut p = legacy();
    let want = json!([
        {"uri": "skill://acme/pdf-tools/SKILL.md", "name": "SKILL.md", "size": 120},
        {"uri": "skill://acme/pdf-tools/references", "name": "references", "mimeType": "inode/directory"},
        {"uri": "skill://acme/pdf-tools/scripts", "name": "scripts", "mimeType": "inode/directory"},
        {"uri": "skill://acme/pdf-tools/README.txt", "name": "README.txt", "size": 5},
    ]);
    assert_eq!(children(&mut p, "skill://acme/pdf-tools"), want);
    assert_eq!(children(&mut p, "skill://acme/pdf-tools/"), want);
    assert_eq!(
        children(&mut p, "skill://acme/pdf-tools/references"),
        json!([
            {"uri": "skill://acme/pdf-tools/references/forms.md", "name": "forms.md", "size": 7},
            {"uri": "skill://acme/pdf-tools/references/deep", "name": "deep", "mimeType": "inode/directory"},
        ])
    );
    // The authority level is a directory too (of skill directories).
    assert_eq!(
        children(&mut p, "skill://acme"),
        json!([{"uri": "skill://acme/pdf-tools", "name": "pdf-tools", "mimeType": "inode/directory"}])
    );
}

#[test]
fn directory_read_refuses_files_and_unserved_uris() {
    let mut p = modern_pair();
    for uri in [
        "skill://acme/pdf-tools/SKILL.md",
        "skill://acme/pdf-tools/scr",
        "skill://acme/notes",
        "skill://other",
        "",
    ] {
        let r = p.ask(&modern(
            json!(1),
            "resources/directory/read",
            json!({ "uri": uri }),
        ));
        assert_eq!(error_code(&r), -32602, "{uri}: {r}");
        if !uri.is_empty() {
            assert_eq!(r["error"]["data"]["uri"], uri);
        }
    }
    let r = p.ask(&modern(json!(2), "resources/directory/read", json!({})));
    assert_eq!(error_code(&r), -32602);
    let r = p.ask(&modern(
        json!(3),
        "resources/directory/read",
        json!({"uri": "skill://acme/pdf-tools"}),
    ));
    assert_eq!(r["result"]["resources"].as_array().map(Vec::len), Some(4));
    assert!(r["result"]["ttlMs"].is_u64());
    let _ = MODERN;
}

#[test]
fn an_invalid_entry_is_an_internal_error_not_a_bad_frame() {
    let mut p = Pair::full();
    p.ext.skills = Some(&BAD);
    let r = p.ask(&modern(json!(1), "skills/list", json!({})));
    assert_eq!(error_code(&r), -32603);
    let r = p.ask(&modern(
        json!(2),
        "skills/get",
        json!({"uri": "skill://acme/bad/SKILL.md"}),
    ));
    assert_eq!(error_code(&r), -32603);
}

#[test]
fn a_listing_larger_than_the_output_buffer_says_how_many_bytes_it_needed() {
    let config = mcp_rs_core::Config::new(mcp_rs_core::SecretKey([0x5a; 16]));
    let mut p = Pair::with(config, 0, 512);
    p.enable_full();
    p.ext.skills = Some(&SKILLS);
    let r = p.ask(&modern(json!(1), "skills/list", json!({})));
    assert_eq!(error_code(&r), -32603);
    let needed = r["error"]["data"]["required"].as_u64().unwrap_or(0);
    assert!(needed > 512, "{r}");
}

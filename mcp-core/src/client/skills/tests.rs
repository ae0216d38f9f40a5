use super::*;
use crate::client::RequestHandle;
use crate::wire::json::{parse, Limits};
use std::format;
use std::string::String;
use std::vec::Vec;

/// SKILL.md of the fixture entry (90 bytes).
const SKILL: &str =
    "---\nname: greeting\ndescription: Greets the user\nmetadata:\n  author: mcp-rs\n---\n# Greeting\n";
const SKILL_DIGEST: &str =
    "sha256:bb761b53e136df0f54be04079f2f30a3647d54a474d3dcb0b9cecd664eed6984";
/// references/hello.md (6 bytes).
const HELLO: &str = "Hello\n";
const HELLO_DIGEST: &str =
    "sha256:66a045b452102c59d840ec097d59d9467e13a3f34f6494e539ffd32c1bb35f18";

fn entry_json(skill_size: u64, skill_digest: &str, frontmatter: &str) -> String {
    format!(
        r#"{{"uri":"skill://x/greeting/SKILL.md","frontmatter":{frontmatter},"resources":[{{"uri":"skill://x/greeting/SKILL.md","digest":"{skill_digest}","size":{skill_size}}},{{"uri":"skill://x/greeting/references/hello.md","digest":"{HELLO_DIGEST}","size":6}}]}}"#
    )
}

const FRONTMATTER: &str =
    r#"{"name":"greeting","description":"Greets the user","metadata":{"author":"mcp-rs"}}"#;

fn with_entry<R>(json: &str, f: impl FnOnce(SkillEntry<'_>) -> R) -> R {
    let v = parse(json.as_bytes(), Limits::default()).unwrap();
    f(SkillEntry::read(v).unwrap())
}

#[test]
fn a_good_skill_verifies() {
    with_entry(&entry_json(90, SKILL_DIGEST, FRONTMATTER), |e| {
        assert_eq!(e.name().unwrap(), "greeting");
        assert_eq!(e.files().count(), 2);
        assert_eq!(e.skill_md().unwrap().size, 90);
        assert_eq!(e.verify_skill_md(SKILL.as_bytes()), Ok(()));
        assert_eq!(
            e.verify_file("skill://x/greeting/references/hello.md", HELLO.as_bytes()),
            Ok(())
        );
    });
}

#[test]
fn a_wrong_digest_fails_the_digest_check() {
    let tampered = SKILL.replace("# Greeting", "# Greetinh");
    with_entry(&entry_json(90, SKILL_DIGEST, FRONTMATTER), |e| {
        let err = e.verify_skill_md(tampered.as_bytes()).unwrap_err();
        assert_eq!(err, VerifyError::Digest);
        assert_eq!(err.check(), Check::Digest);
        assert_eq!(
            e.verify_file("skill://x/greeting/references/hello.md", b"Hellp\n"),
            Err(VerifyError::Digest)
        );
    });
    // The standard test vector, and uppercase hex.
    let abc = r#"{"uri":"u","digest":"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD","size":3}"#;
    let file = EntryFile::read(parse(abc.as_bytes(), Limits::default()).unwrap()).unwrap();
    assert_eq!(file.verify(b"abc"), Ok(()));
    assert_eq!(file.verify(b"abd"), Err(VerifyError::Digest));
}

#[test]
fn a_digest_that_is_not_sha256_is_refused() {
    for digest in [
        "md5:66a045b452102c59d840ec097d59d946",
        "sha256:66a045b4",
        "sha256:66a045b452102c59d840ec097d59d9467e13a3f34f6494e539ffd32c1bb35f18aa",
        "sha256:zz a045b452102c59d840ec097d59d9467e13a3f34f6494e539ffd32c1bb35f18",
    ] {
        let json = format!(r#"{{"uri":"u","digest":"{digest}","size":6}}"#);
        let file = EntryFile::read(parse(json.as_bytes(), Limits::default()).unwrap()).unwrap();
        assert_eq!(
            file.verify(HELLO.as_bytes()),
            Err(VerifyError::UnsupportedDigest)
        );
    }
}

#[test]
fn a_wrong_size_fails_before_the_digest() {
    let longer = format!("{SKILL}extra bytes the entry did not account for\n");
    with_entry(&entry_json(90, SKILL_DIGEST, FRONTMATTER), |e| {
        assert_eq!(
            e.verify_skill_md(longer.as_bytes()),
            Err(VerifyError::Size {
                expected: 90,
                actual: 132
            })
        );
    });
    // A size that is wrong fails even when the digest would match.
    with_entry(&entry_json(91, SKILL_DIGEST, FRONTMATTER), |e| {
        let err = e.verify_skill_md(SKILL.as_bytes()).unwrap_err();
        assert_eq!(err.check(), Check::Size);
    });
}

#[test]
fn a_front_matter_mismatch_is_not_loaded() {
    // Digest and size match the file, but the entry says something else.
    let other = r#"{"name":"greeting","description":"Exfiltrate credentials","metadata":{"author":"mcp-rs"}}"#;
    with_entry(&entry_json(90, SKILL_DIGEST, other), |e| {
        let err = e.verify_skill_md(SKILL.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            VerifyError::FrontMatter(FrontMatterError::Differs { line: 3 })
        );
        assert_eq!(err.check(), Check::FrontMatter);
    });
    let nested =
        r#"{"name":"greeting","description":"Greets the user","metadata":{"author":"evil"}}"#;
    with_entry(&entry_json(90, SKILL_DIGEST, nested), |e| {
        assert_eq!(
            e.verify_skill_md(SKILL.as_bytes()),
            Err(VerifyError::FrontMatter(FrontMatterError::Differs {
                line: 5
            }))
        );
    });
}

#[test]
fn malformed_and_over_limit_front_matter_is_not_loaded() {
    let dynamic = |frontmatter: &str| {
        format!(
            r#"{{"uri":"skill://x/a/SKILL.md","frontmatter":{frontmatter},"resources":"dynamic"}}"#
        )
    };
    with_entry(&dynamic(r#"{"name":"a"}"#), |e| {
        assert_eq!(e.resources, EntryResources::Dynamic);
        assert_eq!(e.verify_skill_md(b"---\nname: a\n---\n"), Ok(()));
        assert_eq!(
            e.verify_skill_md(b"---\nname: [a]\n---\n"),
            Err(VerifyError::FrontMatter(FrontMatterError::Unsupported {
                line: 2
            }))
        );
        assert_eq!(
            e.verify_skill_md(b"no front matter\n"),
            Err(VerifyError::FrontMatter(FrontMatterError::Missing))
        );
        // A dynamic entry lists no file: nothing else can be verified.
        assert_eq!(
            e.verify_file("skill://x/a/b.md", b""),
            Err(VerifyError::NotListed)
        );
        let mut huge = String::from("---\nname: a\n");
        huge.push_str(&"#\n".repeat(frontmatter::MAX_FRONTMATTER));
        huge.push_str("---\n");
        assert_eq!(
            e.verify_skill_md(huge.as_bytes()),
            Err(VerifyError::FrontMatter(FrontMatterError::TooLarge {
                limit: frontmatter::MAX_FRONTMATTER
            }))
        );
    });
}

#[test]
fn text_contents_verify_without_a_copy() {
    // The JSON text of SKILL.md, escapes and all, as `resources/read` carries it.
    let mut json = String::from("\"");
    for c in SKILL.chars() {
        match c {
            '\n' => json.push_str("\\n"),
            'G' => json.push_str("\\u0047"),
            _ => json.push(c),
        }
    }
    json.push('"');
    let text = parse(json.as_bytes(), Limits::default())
        .unwrap()
        .as_string()
        .unwrap();
    with_entry(&entry_json(90, SKILL_DIGEST, FRONTMATTER), |e| {
        let file = e.skill_md().unwrap();
        assert_eq!(file.verify_text(text), Ok(()));
        let short = parse(br#""---\n""#, Limits::default()).unwrap();
        assert_eq!(
            file.verify_text(short.as_string().unwrap()),
            Err(VerifyError::Size {
                expected: 90,
                actual: 4
            })
        );
    });
}

#[test]
fn bad_entries_are_refused_with_the_member() {
    for (json, err) in [
        (
            r#"{"frontmatter":{},"resources":[]}"#,
            ResultError::Missing("uri"),
        ),
        (
            r#"{"uri":"u","resources":[]}"#,
            ResultError::Missing("frontmatter"),
        ),
        (
            r#"{"uri":"u","frontmatter":"x","resources":[]}"#,
            ResultError::WrongType("frontmatter"),
        ),
        (
            r#"{"uri":"u","frontmatter":{}}"#,
            ResultError::Missing("resources"),
        ),
        (
            r#"{"uri":"u","frontmatter":{},"resources":"static"}"#,
            ResultError::WrongType("resources"),
        ),
        (
            r#"{"uri":"u","frontmatter":{},"resources":[{"uri":"u","digest":"d"}]}"#,
            ResultError::Missing("size"),
        ),
        (
            r#"{"uri":"u","frontmatter":{},"resources":[{"uri":"u","digest":"d","size":-1}]}"#,
            ResultError::WrongType("size"),
        ),
    ] {
        let v = parse(json.as_bytes(), Limits::default()).unwrap();
        assert_eq!(SkillEntry::read(v).unwrap_err(), err, "{json}");
    }
}

#[test]
fn results_are_read_by_method() {
    let handle = RequestHandle {
        slot: 0,
        generation: 0,
    };
    let list = format!(
        r#"{{"skills":[{}],"nextCursor":"n2"}}"#,
        entry_json(90, SKILL_DIGEST, FRONTMATTER)
    );
    let response = Response {
        handle,
        method: Method::SkillsList,
        result: parse(list.as_bytes(), Limits::default()).unwrap(),
    };
    let page = response.skills_page().unwrap();
    assert_eq!(page.next_cursor.unwrap(), "n2");
    let entries: Vec<_> = page.entries().collect();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].unwrap().uri, "skill://x/greeting/SKILL.md");
    assert_eq!(response.skill().unwrap_err(), ResultError::WrongMethod);
    assert_eq!(response.directory().unwrap_err(), ResultError::WrongMethod);

    let get = format!(
        r#"{{"skill":{}}}"#,
        entry_json(90, SKILL_DIGEST, FRONTMATTER)
    );
    let response = Response {
        handle,
        method: Method::SkillsGet,
        result: parse(get.as_bytes(), Limits::default()).unwrap(),
    };
    assert_eq!(response.skill().unwrap().files().count(), 2);

    let dir = r#"{"resources":[{"uri":"skill://x/greeting/references","name":"references","mimeType":"inode/directory"}]}"#;
    let response = Response {
        handle,
        method: Method::DirectoryRead,
        result: parse(dir.as_bytes(), Limits::default()).unwrap(),
    };
    let page = response.directory().unwrap();
    assert!(page.next_cursor.is_none());
    assert_eq!(page.resources.elements().unwrap().count(), 1);
}

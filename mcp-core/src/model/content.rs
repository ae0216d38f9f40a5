//! Content blocks shared by tool results, prompt messages and sampling: text, image, audio,
//! resource links and embedded resources, with per-revision downgrades.

use crate::wire::json::{JsonWriter, StrPart};
use crate::wire::version::ProtocolVersion;

/// An icon (2025-11-25+): `src` is an `https:` or `data:` URI.
#[derive(Clone, Copy, Debug, Default)]
pub struct Icon<'a> {
    /// The URI.
    pub src: &'a str,
    /// MIME type, e.g. `image/png`.
    pub mime_type: Option<&'a str>,
    /// Sizes such as `"48x48"` or `"any"`.
    pub sizes: &'a [&'a str],
    /// `Some("light")` or `Some("dark")`.
    pub theme: Option<&'a str>,
}

/// `audience` entries of [`Annotations`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The end user.
    User,
    /// The model.
    Assistant,
}

/// Annotations on a content block.
#[derive(Clone, Copy, Debug, Default)]
pub struct Annotations<'a> {
    /// Who the content is for.
    pub audience: &'a [Role],
    /// Importance from 0 (least) to 1 (most).
    pub priority: Option<f64>,
    /// ISO 8601 timestamp (2025-06-18+).
    pub last_modified: Option<&'a str>,
}

/// A resource link (2025-06-18+; earlier revisions get a text block naming the URI).
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceLink<'a> {
    /// The URI.
    pub uri: &'a str,
    /// Programmatic name.
    pub name: &'a str,
    /// Display title.
    pub title: Option<&'a str>,
    /// Description.
    pub description: Option<&'a str>,
    /// MIME type.
    pub mime_type: Option<&'a str>,
    /// Size in bytes.
    pub size: Option<u64>,
}

/// One content block.
#[derive(Clone, Copy, Debug)]
pub enum Content<'a> {
    /// Plain text.
    Text(&'a str),
    /// An image: base64 data and MIME type.
    Image {
        /// Base64-encoded bytes.
        data: &'a str,
        /// MIME type, e.g. `image/png`.
        mime_type: &'a str,
    },
    /// Audio (2025-03-26+; earlier revisions get a text placeholder).
    Audio {
        /// Base64-encoded bytes.
        data: &'a str,
        /// MIME type, e.g. `audio/wav`.
        mime_type: &'a str,
    },
    /// A link to a resource.
    ResourceLink(ResourceLink<'a>),
    /// An embedded text resource.
    EmbeddedText {
        /// Resource URI.
        uri: &'a str,
        /// MIME type.
        mime_type: Option<&'a str>,
        /// The text.
        text: &'a str,
    },
    /// An embedded binary resource.
    EmbeddedBlob {
        /// Resource URI.
        uri: &'a str,
        /// MIME type.
        mime_type: Option<&'a str>,
        /// Base64-encoded bytes.
        blob: &'a str,
    },
}

pub(crate) fn write_icons(w: &mut JsonWriter<'_>, icons: &[Icon<'_>]) {
    w.begin_array();
    for icon in icons {
        w.begin_object();
        w.key("src");
        w.string(icon.src);
        if let Some(m) = icon.mime_type {
            w.key("mimeType");
            w.string(m);
        }
        if !icon.sizes.is_empty() {
            w.key("sizes");
            w.begin_array();
            for s in icon.sizes {
                w.string(s);
            }
            w.end_array();
        }
        if let Some(t) = icon.theme {
            w.key("theme");
            w.string(t);
        }
        w.end_object();
    }
    w.end_array();
}

/// Writes one content block for `version`. Blocks the revision lacks are downgraded to a
/// text block (audio before 2025-03-26, resource links before 2025-06-18); fields it lacks
/// are left out.
pub(crate) fn write_content(
    w: &mut JsonWriter<'_>,
    version: ProtocolVersion,
    content: &Content<'_>,
    annotations: Option<&Annotations<'_>>,
    meta: Option<&str>,
) {
    let f = version.features();
    w.begin_object();
    w.key("type");
    match *content {
        Content::Text(text) => {
            w.string("text");
            w.key("text");
            w.string(text);
        }
        Content::Image { data, mime_type } => {
            w.string("image");
            w.key("data");
            w.string(data);
            w.key("mimeType");
            w.string(mime_type);
        }
        Content::Audio { data, mime_type } if f.audio => {
            w.string("audio");
            w.key("data");
            w.string(data);
            w.key("mimeType");
            w.string(mime_type);
        }
        Content::Audio { mime_type, .. } => {
            w.string("text");
            w.key("text");
            w.string_parts(&[
                StrPart::Text("["),
                StrPart::Text(mime_type),
                StrPart::Text(" audio omitted: protocol "),
                StrPart::Text(version.as_str()),
                StrPart::Text(" has no audio content]"),
            ]);
        }
        Content::ResourceLink(link) if f.resource_link => {
            w.string("resource_link");
            w.key("uri");
            w.string(link.uri);
            w.key("name");
            w.string(link.name);
            if let Some(t) = link.title {
                w.key("title");
                w.string(t);
            }
            if let Some(d) = link.description {
                w.key("description");
                w.string(d);
            }
            if let Some(m) = link.mime_type {
                w.key("mimeType");
                w.string(m);
            }
            if let Some(s) = link.size {
                w.key("size");
                w.u64(s);
            }
        }
        Content::ResourceLink(link) => {
            w.string("text");
            w.key("text");
            w.string_parts(&[
                StrPart::Text("Resource: "),
                StrPart::Text(link.name),
                StrPart::Text(" <"),
                StrPart::Text(link.uri),
                StrPart::Text(">"),
            ]);
        }
        Content::EmbeddedText {
            uri,
            mime_type,
            text,
        } => {
            write_embedded(w, uri, mime_type, ("text", text));
        }
        Content::EmbeddedBlob {
            uri,
            mime_type,
            blob,
        } => {
            write_embedded(w, uri, mime_type, ("blob", blob));
        }
    }
    if let Some(a) = annotations {
        w.key("annotations");
        write_annotations(w, version, a);
    }
    if let (true, Some(m)) = (f.titles_and_meta, meta) {
        w.key("_meta");
        w.raw_value(m);
    }
    w.end_object();
}

fn write_embedded(w: &mut JsonWriter<'_>, uri: &str, mime_type: Option<&str>, body: (&str, &str)) {
    w.string("resource");
    w.key("resource");
    w.begin_object();
    w.key("uri");
    w.string(uri);
    if let Some(m) = mime_type {
        w.key("mimeType");
        w.string(m);
    }
    w.key(body.0);
    w.string(body.1);
    w.end_object();
}

/// Writes an `Annotations` object for `version`.
pub(crate) fn write_annotations(
    w: &mut JsonWriter<'_>,
    version: ProtocolVersion,
    a: &Annotations<'_>,
) {
    let f = version.features();
    w.begin_object();
    if !a.audience.is_empty() {
        w.key("audience");
        w.begin_array();
        for r in a.audience {
            w.string(match r {
                Role::User => "user",
                Role::Assistant => "assistant",
            });
        }
        w.end_array();
    }
    // Priority is a number from 0 to 1; anything else is left out.
    if let Some(p) = a.priority.filter(|p| (0.0..=1.0).contains(p)) {
        w.key("priority");
        w.f64(p);
    }
    if let (true, Some(lm)) = (f.titles_and_meta, a.last_modified) {
        w.key("lastModified");
        w.string(lm);
    }
    w.end_object();
}

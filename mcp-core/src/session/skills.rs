//! The skills extension (SEP-2640): `skills/list`, `skills/get` and
//! `resources/directory/read`.
//!
//! `skills/list` sends every entry in one page (entries are atomic and a server has few):
//! a listing larger than the output buffer is answered -32603 "Response exceeds the output
//! buffer" with the bytes it needed, and a `cursor` (never minted) is -32602.

use super::faults::{Detail, Fault};
use super::{Ctx, Reply, Session};
use crate::model::common::ResultType;
use crate::model::handler::ServerHandler;
use crate::model::skills::{self, SkillSet};
use crate::wire::json::{JsonStr, JsonWriter};
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::Params;

/// Longest escaped URI `resources/directory/read` decodes.
const URI_BUF: usize = 512;

fn uri_param<'i>(p: &Params<'i>) -> Result<JsonStr<'i>, Fault<'i>> {
    p.uri.and_then(|u| u.as_string()).ok_or(Fault::new(
        code::INVALID_PARAMS,
        "params.uri must be a string",
    ))
}

fn invalid_entry<'i>() -> Fault<'i> {
    Fault::new(
        code::INTERNAL_ERROR,
        "Invalid skill entry (see Skill::validate())",
    )
}

fn skill_set<S: ServerHandler + ?Sized>(server: &mut S) -> Result<&dyn SkillSet, Fault<'static>> {
    server
        .skills()
        .ok_or(Fault::new(code::METHOD_NOT_FOUND, "Method not found"))
}

impl Session<'_> {
    /// `skills/list`: every entry, one page.
    pub(super) fn skills_list<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        if p.cursor.is_some_and(|c| !c.is_null()) {
            return Err(Fault::new(code::INVALID_PARAMS, "Invalid cursor"));
        }
        let env = self.envelope(ctx.version, true);
        let set = skill_set(server)?;
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("skills");
        w.begin_array();
        for i in 0..set.len() {
            let Some(skill) = set.get(i) else { break };
            skill.validate().map_err(|_| invalid_entry())?;
            skill.write(w);
        }
        w.end_array();
        env.trailer(w, ResultType::Complete);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    /// `skills/get`: the entry of one skill by its `uri`; -32602 with `data.uri` for a URI
    /// that names no skill.
    pub(super) fn skills_get<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        let uri = uri_param(p)?;
        let env = self.envelope(ctx.version, true);
        let set = skill_set(server)?;
        let Some(skill) = set.find(uri).and_then(|i| set.get(i)) else {
            return Err(Fault::new(code::INVALID_PARAMS, "Skill not found").with(Detail::Uri(uri)));
        };
        skill.validate().map_err(|_| invalid_entry())?;
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("skill");
        skill.write(w);
        env.trailer(w, ResultType::Complete);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    /// `resources/directory/read`: the direct children of a directory the skills' manifests
    /// contain (files with their size, subdirectories as `inode/directory`), one page;
    /// -32602 with `data.uri` for any other URI (a file, or nothing served).
    pub(super) fn directory_read<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        let uri = uri_param(p)?;
        if p.cursor.is_some_and(|c| !c.is_null()) {
            return Err(Fault::new(code::INVALID_PARAMS, "Invalid cursor"));
        }
        let env = self.envelope(ctx.version, true);
        let set = skill_set(server)?;
        if !set.directory_read() {
            return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found"));
        }
        let not_dir = || {
            Fault::new(code::INVALID_PARAMS, "Not a directory of this server")
                .with(Detail::Uri(uri))
        };
        let mut buf = [0u8; URI_BUF];
        let dir = super::target_text(uri, &mut buf).ok_or_else(not_dir)?;
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("resources");
        w.begin_array();
        let found = skills::for_each_child(set, dir, |child, is_dir| {
            w.begin_object();
            w.key("uri");
            w.string(child.uri);
            w.key("name");
            w.string(child.name);
            if is_dir {
                w.key("mimeType");
                w.string(skills::DIRECTORY_MIME);
            }
            if let Some(size) = child.size {
                w.key("size");
                w.u64(size);
            }
            w.end_object();
        });
        if !found {
            return Err(not_dir());
        }
        w.end_array();
        env.trailer(w, ResultType::Complete);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }
}

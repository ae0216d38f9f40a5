//! The application's other commands on a session: progress and log notifications,
//! server-to-client requests (`Session::request`), time passing (`handle_timeout`), list
//! changes and resource updates.

use super::drain::Cancels;
use super::grammar::LEVELS;
use super::model::{changed_method, list_bit, Kind, Model, Out};
use super::runner::Runner;
use super::server::{ELICIT_PARAMS, RESOURCES, SAMPLING_PARAMS};
use super::MODERN;
use mcp_rs_core::{CallError, CallToken, ClientMethod, ListKind, LogLevel, Route};
use serde_json::Value;

impl Runner<'_, '_> {
    pub(super) fn progress(
        &mut self,
        pick: u8,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        let Some(token) = self.pick(pick) else { return };
        let res = self
            .session
            .progress(token, progress, total, message, &mut self.out);
        self.dead_call(token, &res);
        let t = self.m.tokens[&token].clone();
        match res {
            Ok(Some(tx)) => {
                assert!(
                    t.live && t.wants_progress != Some(false),
                    "progress sent for {t:?}"
                );
                assert!(progress > t.last_progress && progress.is_finite());
                let (v, _) = self.m.frame(&self.out[..tx.len]);
                self.m.nurse_notification(&v, total);
                assert_eq!(
                    v.pointer("/params/progress")
                        .and_then(Value::as_f64)
                        .map(f64::to_bits),
                    Some(progress.to_bits())
                );
                self.m.record(v, t.rev.clone(), None);
                let t = self.m.tokens.get_mut(&token).unwrap();
                t.last_progress = progress;
                t.wants_progress = Some(true);
            }
            Ok(None) => {
                if t.live {
                    self.m.tokens.get_mut(&token).unwrap().wants_progress = Some(false);
                }
            }
            Err(CallError::ProgressNotIncreasing) => {
                assert!(t.live && t.wants_progress != Some(false));
                assert!(
                    !(progress > t.last_progress && progress.is_finite()),
                    "{progress} after {}",
                    t.last_progress
                );
            }
            Err(CallError::UnknownCall) => {}
            Err(CallError::BufferTooSmall { required }) => assert!(required > self.out.len()),
            Err(e) => panic!("progress: {e:?}"),
        }
        self.drain(Cancels::Known(&[]));
    }

    pub(super) fn log(&mut self, pick: Option<u8>, level: u8, logger: Option<&str>, data: &str) {
        let token = match pick {
            Some(p) => match self.pick(p) {
                Some(t) => Some(t),
                None => return,
            },
            None => None,
        };
        let lv = LogLevel::from_wire(LEVELS[usize::from(level) % 8]).unwrap();
        let res = self.session.log(token, lv, logger, data, &mut self.out);
        if let Some(t) = token {
            let st = &self.m.tokens[&t];
            match &res {
                Ok(Some(_)) => assert!(
                    st.live && st.kind != Kind::Listen,
                    "log for a call not in flight"
                ),
                Ok(None) => {}
                Err(CallError::UnknownCall) => assert!(
                    !st.live || st.kind == Kind::Listen,
                    "live call reported unknown"
                ),
                Err(e) => panic!("log: {e:?}"),
            }
        }
        if let Ok(Some(tx)) = res {
            assert_eq!(tx.route, token.map_or(Route::Session, Route::Call));
            let (v, _) = self.m.frame(&self.out[..tx.len]);
            self.m.nurse_notification(&v, None);
            assert_eq!(
                v.pointer("/params/level").and_then(Value::as_str),
                Some(lv.as_str())
            );
            assert_eq!(
                v.pointer("/params/data").and_then(Value::as_str),
                Some(data)
            );
            let rev = match token {
                Some(t) => self.m.tokens[&t].rev.clone(),
                None => Model::legacy_rev(&self.session),
            };
            self.m.record(v, rev, None);
        }
        self.drain(Cancels::Known(&[]));
    }

    /// `Session::request` from a call: sent (with a fresh, unique id) exactly when the
    /// call is a live legacy call whose client declared the capability (in a revision
    /// that has the method) and has no request waiting; refused with the documented
    /// error otherwise.
    pub(super) fn request(&mut self, pick: u8, method: u8, timeout: u16, bad: bool) {
        let Some(token) = self.pick(pick) else { return };
        let (cm, params) = match method % 3 {
            0 => (ClientMethod::CreateMessage, SAMPLING_PARAMS),
            1 => (ClientMethod::Elicit, ELICIT_PARAMS),
            _ => (ClientMethod::ListRoots, "{}"),
        };
        let params = if bad { "{\"a\":\n1}" } else { params };
        let timeout = u64::from(timeout);
        let res = self
            .session
            .request(token, cm, params, timeout, &mut self.out);
        let t = self.m.tokens[&token].clone();
        let expected = if !t.live || t.kind == Kind::Listen {
            Err(CallError::UnknownCall)
        } else if t.rev == MODERN {
            Err(CallError::Stateless)
        } else if !t.caps.contains(cm.capability())
            // Elicitation exists from 2025-06-18 (revisions compare as dates).
            || (cm == ClientMethod::Elicit && t.rev.as_str() < "2025-06-18")
        {
            Err(CallError::ClientCapability)
        } else if t.out.is_some() {
            Err(CallError::RequestPending)
        } else if bad {
            Err(CallError::InvalidParams)
        } else {
            Ok(())
        };
        match (res, expected) {
            (Ok(Some(tx)), Ok(())) => {
                assert_eq!(tx.route, Route::Call(token));
                let (v, _) = self.m.frame(&self.out[..tx.len]);
                assert_eq!(v.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
                assert_eq!(v.get("method").and_then(Value::as_str), Some(cm.as_str()));
                let want: Value = serde_json::from_str(params).expect("params");
                assert_eq!(v.get("params"), Some(&want), "request params: {v}");
                let id = v
                    .get("id")
                    .and_then(Value::as_u64)
                    .and_then(|i| u32::try_from(i).ok())
                    .filter(|&i| i != 0)
                    .unwrap_or_else(|| panic!("server-to-client request id: {v}"));
                assert!(
                    self.m.out_seen.insert(id),
                    "server-to-client request id {id} reused: {v}"
                );
                self.m.tokens.get_mut(&token).unwrap().out = Some(Out {
                    id,
                    deadline: self.m.now + timeout,
                    delivered: false,
                });
                self.m.report.out_requests += 1;
                self.m.record(v, t.rev.clone(), None);
            }
            (Ok(None), _) => assert!(t.cancelled && !t.live, "request: Ok(None) for {t:?}"),
            (Err(e), Err(want)) => assert_eq!(e, want, "request refused for {t:?}"),
            (r, want) => panic!("request for {t:?}: {r:?}, expected {want:?}"),
        }
        self.drain(Cancels::Known(&[]));
    }

    /// Time passes: requests past their deadline are cancelled and reported.
    pub(super) fn advance(&mut self, ms: u16, far: bool) {
        let step = u64::from(ms) + if far { self.m.ttl + 1 } else { 0 };
        self.m.now += step;
        self.model_expire();
        self.session.handle_timeout(self.m.now);
        self.drain(Cancels::Known(&[]));
    }

    /// A list changed: each live listen stream that opted in gets exactly one
    /// notification, tagged with its id (legacy sessions get theirs on the session).
    pub(super) fn list_changed(&mut self, kind: ListKind) {
        let (bit, method) = (list_bit(kind), changed_method(kind));
        let mut owed: Vec<(CallToken, &'static str)> = self
            .m
            .tokens
            .iter()
            .filter(|(_, t)| t.live && t.kind == Kind::Listen && t.listen & bit != 0)
            .map(|(k, _)| (*k, method))
            .collect();
        self.m.listen_owed.append(&mut owed);
        self.session.list_changed(kind);
        self.drain(Cancels::Known(&[]));
    }

    pub(super) fn resource_updated(&mut self, k: u8) {
        let uris = [
            RESOURCES[0].0,
            RESOURCES[3].0,
            "test://x/%F0%9F%98%80",
            "test://x/a?b=c&d=%22",
        ];
        let uri = uris[usize::from(k) % uris.len()];
        match self.session.resource_updated(uri, &mut self.out) {
            Ok(Some(tx)) => {
                assert!(self.session.negotiated_version().is_some());
                assert_eq!(tx.route, Route::Session);
                let (v, _) = self.m.frame(&self.out[..tx.len]);
                assert_eq!(
                    v.get("method").and_then(Value::as_str),
                    Some("notifications/resources/updated")
                );
                assert_eq!(v.pointer("/params/uri").and_then(Value::as_str), Some(uri));
                let rev = Model::legacy_rev(&self.session);
                self.m.record(v, rev, None);
            }
            Ok(None) => assert!(self.session.negotiated_version().is_none()),
            Err(e) => assert!(e.required > self.out.len()),
        }
        self.drain(Cancels::Known(&[]));
    }
}

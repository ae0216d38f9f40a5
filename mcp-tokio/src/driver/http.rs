//! The drive loop of one Streamable HTTP session (or stateless request).

use mcp_rs_core::pump::Pump;
use mcp_rs_core::Session;
use tokio::sync::mpsc;

use super::{next_command, sleep_until_ms, Connection};
use crate::clock::now_ms;
use crate::error::Error;
use crate::state::Shared;

impl Connection<'_, tokio::io::Sink> {
    /// The drive loop of one HTTP session: `first` is handled at once, further bodies
    /// arrive from the HTTP layer on `inbound` (none for a stateless request), each with the
    /// sink its frames go to ([`crate::http::routes`]). Ends on `Close`, shutdown, or when
    /// the HTTP layer has dropped its sender (or gave none) and nothing is open any more (a
    /// stateless request served, an idle session forgotten). A call whose response's client
    /// went away is cancelled. Its frames are counted against `budget` while queued or kept.
    ///
    /// A stateless request whose answer is ready once `first` is handled (a synchronous
    /// tool, a list, a read) completes within the first poll, before any timer or `select!`
    /// is set up: the HTTP layer polls this future once in place and spawns it only when
    /// it is still pending.
    pub(crate) async fn run_http(
        shared: &Shared,
        first: Option<crate::routes::Post>,
        mut inbound: Option<mpsc::Receiver<crate::routes::Inbound>>,
        budget: Option<crate::budget::Budget>,
    ) -> Result<(), Error> {
        use crate::routes::{Inbound, Routes};
        let info = shared.info.core();
        let mut session = Session::with_growing_slots(
            &info,
            shared.session_config(),
            shared.limits.max_calls.max(1),
        );
        let (mut conn, mut signals) = Connection::new(shared, tokio::io::sink());
        conn.routes = Some(Routes::new(budget));
        if let Some(first) = first {
            conn.post(&mut session, first, None)?;
            conn.give_back();
        }
        let mut open = inbound.is_some();
        // Created when the loop first waits (a request answered at once never needs it).
        let mut sweep: Option<tokio::time::Interval> = None;
        loop {
            conn.hand_over_commands(&mut signals);
            let idle = conn.routes.as_ref().is_none_or(Routes::idle);
            if !open && idle && conn.running.is_empty() {
                break;
            }
            if conn.routes.as_ref().is_some_and(Routes::overflowed) {
                tracing::debug!("an HTTP+SSE client does not read its stream: its session ends");
                break;
            }
            let sweep = sweep.get_or_insert_with(|| {
                let mut i = tokio::time::interval(std::time::Duration::from_millis(500));
                i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                i
            });
            let request_deadline = session.poll_timeout();
            tokio::select! {
                biased;
                () = async { let _ = signals.stop.wait_for(|s| *s).await; } => {
                    conn.close_listens(&mut session)?;
                    break;
                }
                Some(cmd) = next_command(&mut signals.commands), if signals.commands.is_some() => conn.commands(&mut session, cmd, &mut signals)?,
                Ok(()) = signals.tools.changed() => conn.tools_changed(&mut session)?,
                Ok(()) = signals.lists.changed() => conn.lists_changed(&mut session, &mut signals)?,
                () = super::task_change(&mut signals.tasks), if signals.tasks.is_some() => conn.tasks_changed(&mut session)?,
                () = sleep_until_ms(request_deadline), if request_deadline.is_some() => {
                    session.handle_timeout(now_ms());
                    conn.drain(&mut session)?;
                }
                msg = async { inbound.as_mut()?.recv().await }, if open => match msg {
                    Some(Inbound::Post(p, to)) => conn.post(&mut session, p, Some(to))?,
                    Some(Inbound::Listen(sink)) => {
                        if let Some(r) = &mut conn.routes {
                            r.listen(sink);
                        }
                    }
                    Some(Inbound::Resume { last_event_id, sink, resumed }) => {
                        let ok = conn.routes.as_mut().is_some_and(|r| r.resume(&last_event_id, sink));
                        let _ = resumed.send(ok);
                    }
                    Some(Inbound::Stream(sink)) => {
                        if let Some(r) = &mut conn.routes {
                            r.single(sink);
                        }
                    }
                    Some(Inbound::Close) => break,
                    None => open = false,
                },
                _ = sweep.tick(), if !idle => conn.cancel_abandoned(&mut session)?,
            }
            conn.give_back();
        }
        for (_, r) in conn.running.drain() {
            r.abort.abort();
        }
        Ok(())
    }

    /// Handles one POST body: its frames go to `to`'s sink, and its outcome, which tells the
    /// HTTP layer how to answer, to `to`'s oneshot. Without `to` (the first POST, handled
    /// while the HTTP layer polls the loop in place) both are handed over on this thread
    /// ([`crate::routes::hand_over`]).
    fn post(
        &mut self,
        session: &mut Session<'_>,
        post: crate::routes::Post,
        to: Option<crate::routes::Channel>,
    ) -> Result<(), Error> {
        let version = session.negotiated_version();
        let (sink, told) = match to {
            Some(c) => (Some(c.sink), Some(c.outcome)),
            None => (None, None),
        };
        if let Some(r) = &mut self.routes {
            r.begin(sink, version);
        }
        // Handlers see who sent the body: request views through `adapter_data`, the tasks
        // of deferred calls through their `Context`.
        let principal = post.principal.as_ref();
        let mut pump = Pump::message(&post.body, now_ms());
        if let Some(p) = principal {
            pump = pump.with_data(&**p);
        }
        self.exchange(session, pump, principal)?;
        let version = session.negotiated_version();
        if let Some(r) = &mut self.routes {
            match (r.end(version), told) {
                ((outcome, _), Some(told)) => {
                    let _ = told.send(outcome);
                }
                ((outcome, Some(answer)), None) => crate::routes::hand_over(outcome, answer),
                ((_, None), None) => {}
            }
        }
        Ok(())
    }

    /// Shutdown: every open `subscriptions/listen` stream gets its closing response
    /// (`resultType: complete`) before the session ends.
    fn close_listens(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.lend();
        let open = self
            .routes
            .as_ref()
            .map(crate::routes::Routes::open_calls)
            .unwrap_or_default();
        for token in open {
            if let Ok(Some(tx)) = session.close_subscription(token, &mut self.out) {
                self.send(tx)?;
                self.ended(token);
            }
        }
        Ok(())
    }

    /// Cancels the calls and listen streams whose HTTP response has no reader any more.
    fn cancel_abandoned(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.lend();
        let gone = self
            .routes
            .as_ref()
            .map(crate::routes::Routes::abandoned)
            .unwrap_or_default();
        for token in gone {
            if let Some(r) = self.running.remove(&token) {
                let _ = r.cancel.send(true);
                r.abort.abort();
            }
            // Frees the core's slot; the frame it writes has nowhere to go.
            if session.close_subscription(token, &mut self.out).is_err() {
                let code = mcp_rs_core::wire::jsonrpc::code::INTERNAL_ERROR;
                let _ = session.fail(token, code, "The client went away", &mut self.out);
            }
            self.ended(token);
        }
        self.drain(session)
    }
}

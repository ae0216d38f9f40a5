//! The response mode of a POST, and the bounded gathering of a JSON answer.
//!
//! The mode is decided from the request before it runs: a client whose `Accept` lacks
//! `text/event-stream` gets `application/json`. The transport requires clients to accept
//! both (2025-03-26 … 2026-07-28: "The client MUST include an `Accept` header, listing both
//! `application/json` and `text/event-stream`"), so such a client gets what one JSON object
//! can carry and nothing is held for what it cannot:
//!
//! - a request that is a stream and nothing else (`subscriptions/listen`) is refused at once
//!   with 406 and a JSON-RPC error ([`needs_stream`]);
//! - any other request waits for its answer, and the frames sent before it (progress, logs,
//!   requests to the client) are dropped as they arrive instead of being buffered: the
//!   answer is all the client asked to receive. Responses kept until the POST's calls end
//!   are bounded in count ([`routes::SINK_FRAMES`]) and bytes
//!   ([`super::HttpConfig::max_json_answer`]); beyond either the POST gets 500 with a
//!   JSON-RPC error ([`Gathered::TooLarge`]), and its calls see their client gone.

use mcp_rs_core::wire::jsonrpc::{frame_kind, FrameKind};
use mcp_rs_core::wire::method::Method;
use mcp_rs_core::wire::peek::Peek;
use tokio::sync::mpsc;

use crate::routes::{self, Event};

/// What came of gathering a response's frames.
pub(super) enum Gathered {
    /// Every frame, in order (in JSON mode: the responses only).
    Frames(Vec<Event>),
    /// A frame did not fit the memory budget: the stream was closed.
    OverBudget,
    /// The frames kept passed the count or byte bound.
    TooLarge,
}

/// Whether the request can only be answered as a stream (`subscriptions/listen`).
pub(super) fn needs_stream(peeked: &Peek<'_>) -> bool {
    matches!(peeked, Peek::Request(r) if r.method() == Some(Method::Listen))
}

/// [`gather`] of the frames a response got while its request was handled in place
/// ([`routes::Answer::Held`]), kept in `frames` itself.
pub(super) fn gather_held(mut frames: Vec<Event>, streams: bool, max_bytes: usize) -> Gathered {
    let mut kept = 0;
    let mut bytes = 0usize;
    for i in 0..frames.len() {
        let e = &frames[i];
        if e.stream == routes::OVER_BUDGET {
            return Gathered::OverBudget;
        }
        if e.data.is_empty() || (!streams && interim(&e.data)) {
            continue;
        }
        bytes = bytes.saturating_add(e.data.len());
        if kept >= routes::SINK_FRAMES || bytes > max_bytes {
            tracing::debug!(bytes, "a JSON answer passed its bound");
            return Gathered::TooLarge;
        }
        frames.swap(kept, i);
        kept += 1;
    }
    frames.truncate(kept);
    Gathered::Frames(frames)
}

/// A notification or a request to the client: not part of a JSON-only answer.
fn interim(frame: &[u8]) -> bool {
    matches!(
        frame_kind(frame),
        FrameKind::Notification | FrameKind::Request
    )
}

/// The frames of a response until its sink closes. With `streams` false (the client takes
/// JSON only) notifications and requests to the client are dropped as they arrive; what is
/// kept is bounded by [`routes::SINK_FRAMES`] frames and `max_bytes`.
pub(super) async fn gather(
    frames: &mut mpsc::Receiver<Event>,
    streams: bool,
    max_bytes: usize,
) -> Gathered {
    let mut kept = Vec::new();
    let mut bytes = 0usize;
    let mut dropped = 0usize;
    while let Some(e) = frames.recv().await {
        if e.stream == routes::OVER_BUDGET {
            return Gathered::OverBudget;
        }
        if e.data.is_empty() {
            continue; // priming: not part of a JSON answer
        }
        if !streams && interim(&e.data) {
            dropped += 1;
            continue;
        }
        bytes = bytes.saturating_add(e.data.len());
        if kept.len() >= routes::SINK_FRAMES || bytes > max_bytes {
            tracing::debug!(bytes, "a JSON answer passed its bound");
            return Gathered::TooLarge;
        }
        kept.push(e);
    }
    if dropped > 0 {
        tracing::debug!(
            dropped,
            "frames a JSON-only client cannot receive were dropped"
        );
    }
    Gathered::Frames(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn event(data: &'static str) -> Event {
        Event::uncounted(0, 1, Bytes::from_static(data.as_bytes()))
    }

    const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
    const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

    #[tokio::test]
    async fn json_mode_drops_interim_frames_and_bounds_what_it_keeps() {
        let (tx, mut rx) = mpsc::channel(routes::SINK_FRAMES);
        for _ in 0..200 {
            tx.try_send(event(PROGRESS)).unwrap();
        }
        tx.try_send(event(ANSWER)).unwrap();
        drop(tx);
        match gather(&mut rx, false, ANSWER.len()).await {
            Gathered::Frames(kept) => assert_eq!(kept.len(), 1),
            _ => panic!("the answer alone is kept"),
        }

        let (tx, mut rx) = mpsc::channel(routes::SINK_FRAMES);
        tx.try_send(event(PROGRESS)).unwrap();
        tx.try_send(event(ANSWER)).unwrap();
        drop(tx);
        match gather(&mut rx, true, 1 << 20).await {
            Gathered::Frames(kept) => assert_eq!(kept.len(), 2, "a stream keeps everything"),
            _ => panic!("within bounds"),
        }

        let (tx, mut rx) = mpsc::channel(routes::SINK_FRAMES);
        tx.try_send(event(ANSWER)).unwrap();
        tx.try_send(event(ANSWER)).unwrap();
        drop(tx);
        assert!(matches!(
            gather(&mut rx, false, ANSWER.len() + 1).await,
            Gathered::TooLarge
        ));

        let (tx, mut rx) = mpsc::channel(routes::SINK_FRAMES);
        tx.try_send(Event::uncounted(routes::OVER_BUDGET, 0, Bytes::new()))
            .unwrap();
        assert!(matches!(
            gather(&mut rx, false, 1 << 20).await,
            Gathered::OverBudget
        ));
    }

    #[test]
    fn held_frames_are_gathered_as_channelled_ones() {
        let mut frames: Vec<Event> = (0..200).map(|_| event(PROGRESS)).collect();
        frames.insert(0, Event::uncounted(0, 0, Bytes::new()));
        frames.push(event(ANSWER));
        match gather_held(frames.clone(), false, ANSWER.len()) {
            Gathered::Frames(kept) => {
                assert_eq!(kept.len(), 1);
                assert_eq!(&kept[0].data[..], ANSWER.as_bytes());
            }
            _ => panic!("the answer alone is kept"),
        }
        match gather_held(frames, true, 1 << 20) {
            Gathered::Frames(kept) => {
                assert_eq!(kept.len(), 201, "a stream keeps everything but the priming");
                assert_eq!(&kept[200].data[..], ANSWER.as_bytes());
            }
            _ => panic!("within bounds"),
        }
        let two = vec![event(ANSWER), event(ANSWER)];
        assert!(matches!(
            gather_held(two, false, ANSWER.len() + 1),
            Gathered::TooLarge
        ));
        let over = vec![
            event(ANSWER),
            Event::uncounted(routes::OVER_BUDGET, 0, Bytes::new()),
        ];
        assert!(matches!(
            gather_held(over, false, 1 << 20),
            Gathered::OverBudget
        ));
    }
}

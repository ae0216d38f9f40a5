//! [`TaskTable`]: `N` task slots of `R` payload bytes, caller-owned, no heap.

use super::{TaskError, TaskId, TaskStatus, TaskStore, TaskView, ID_LEN};
use crate::token::mac::{siphash24, SecretKey};
use crate::wire::json::{self, JsonWriter, RawJson};

/// One slot. `buf[..len]` is the status's payload (result, error or pending
/// `inputRequests`); while `input_required`, `buf[len..len + answered]` holds the answered
/// responses as object members (`"key":value,...`), for the tool to take.
#[derive(Clone, Copy)]
struct Slot<const R: usize> {
    live: bool,
    id: [u8; ID_LEN],
    status: TaskStatus,
    created_ms: u64,
    updated_ms: u64,
    len: usize,
    answered: usize,
    buf: [u8; R],
}

impl<const R: usize> Slot<R> {
    const EMPTY: Self = Slot {
        live: false,
        id: [0; ID_LEN],
        status: TaskStatus::Working,
        created_ms: 0,
        updated_ms: 0,
        len: 0,
        answered: 0,
        buf: [0; R],
    };

    fn payload(&self) -> Option<RawJson<'_>> {
        if self.len == 0 {
            return None;
        }
        let text = core::str::from_utf8(self.buf.get(..self.len)?).ok()?;
        // Only JSON objects checked on the way in are stored.
        Some(RawJson::__trusted(text))
    }

    fn set(&mut self, status: TaskStatus, payload: &[u8], now_ms: u64) -> Result<(), TaskError> {
        if self.status.is_terminal() {
            return Err(TaskError::Terminal);
        }
        let dst = self
            .buf
            .get_mut(..payload.len())
            .ok_or(TaskError::TooLarge {
                needed: payload.len(),
                capacity: R,
            })?;
        dst.copy_from_slice(payload);
        self.len = payload.len();
        self.answered = 0;
        self.status = status;
        self.updated_ms = now_ms;
        Ok(())
    }
}

/// A fixed table of `N` tasks with `R` bytes each for a task's result, error or pending
/// input requests (a result larger than `R` fails the task with -32603 and the size it
/// needed). RAM: about `N * (R + 80)` bytes.
///
/// Expiry is lazy: every operation first frees the slots whose `ttlMs` has passed at the
/// time given to it; a slot is never reused before then, so a full table refuses new tasks
/// ([`TaskError::Full`]) rather than dropping live ones.
pub struct TaskTable<const N: usize, const R: usize> {
    slots: [Slot<R>; N],
    key: SecretKey,
    counter: u64,
    ttl_ms: u32,
    poll_interval_ms: u32,
}

impl<const N: usize, const R: usize> core::fmt::Debug for TaskTable<N, R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskTable")
            .field("capacity", &N)
            .field("live", &self.slots.iter().filter(|s| s.live).count())
            .finish()
    }
}

impl<const N: usize, const R: usize> TaskTable<N, R> {
    /// An empty table. `key` makes task ids unguessable: a random secret (the session's
    /// cursor key will do; ids are not sealed with it, only derived). Tasks get
    /// [`DEFAULT_TTL_MS`](super::DEFAULT_TTL_MS) and
    /// [`DEFAULT_POLL_INTERVAL_MS`](super::DEFAULT_POLL_INTERVAL_MS).
    pub const fn new(key: SecretKey) -> Self {
        TaskTable {
            slots: [Slot::EMPTY; N],
            key,
            counter: 0,
            ttl_ms: super::DEFAULT_TTL_MS,
            poll_interval_ms: super::DEFAULT_POLL_INTERVAL_MS,
        }
    }

    /// Sets the `ttlMs` (at least 1) and `pollIntervalMs` (at least 1) of new tasks.
    pub const fn with_timing(mut self, ttl_ms: u32, poll_interval_ms: u32) -> Self {
        self.ttl_ms = if ttl_ms == 0 { 1 } else { ttl_ms };
        self.poll_interval_ms = if poll_interval_ms == 0 {
            1
        } else {
            poll_interval_ms
        };
        self
    }

    /// Live tasks at `now_ms`.
    pub fn live(&mut self, now_ms: u64) -> usize {
        self.expire(now_ms);
        self.slots.iter().filter(|s| s.live).count()
    }

    /// Frees the slots whose TTL has passed at `now_ms`.
    pub fn expire(&mut self, now_ms: u64) {
        let ttl = u64::from(self.ttl_ms);
        for s in self.slots.iter_mut() {
            if s.live && now_ms >= s.created_ms.saturating_add(ttl) {
                s.live = false;
            }
        }
    }

    fn find(&mut self, id: &str, now_ms: u64) -> Result<&mut Slot<R>, TaskError> {
        self.expire(now_ms);
        self.slots
            .iter_mut()
            .find(|s| s.live && crate::token::mac::ct_eq(&s.id, id.as_bytes()))
            .ok_or(TaskError::Unknown)
    }
}

/// Checks that `text` is one JSON object on one line (it is written into frames verbatim).
fn check_object(text: &str) -> Result<(), TaskError> {
    json::check_embedded(text, true).map_err(|_| TaskError::Invalid)
}

/// `buf.copy_within(src, dst)` for `dst <= src.start`, as a forward byte loop: slices are
/// short, and `copy_within` pulls in `memmove` (1.5 KiB of flash on Cortex-M).
fn shift_left(buf: &mut [u8], src: core::ops::Range<usize>, dst: usize) {
    for (k, i) in src.enumerate() {
        if let Some(&b) = buf.get(i) {
            if let Some(d) = buf.get_mut(dst + k) {
                *d = b;
            }
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The byte range of the member whose key is `key` (raw, as escaped) in the object
/// `obj`, with one adjacent comma, so that removing it leaves a valid object.
fn member_range(obj: &str, key: &str) -> Option<(usize, usize)> {
    let base = obj.as_ptr() as usize;
    let b = obj.as_bytes();
    let (k, v) = RawJson::__trusted(obj)
        .members()?
        .find(|(k, _)| k.raw() == key)?;
    // The key's opening quote, and the end of the value.
    let start = (k.raw().as_ptr() as usize)
        .checked_sub(base)?
        .checked_sub(1)?;
    let end = (v.as_str().as_ptr() as usize).checked_sub(base)? + v.as_str().len();
    let after = skip_ws(b, end);
    if b.get(after) == Some(&b',') {
        return Some((start, skip_ws(b, after + 1)));
    }
    // The last member: take the comma before it, if any.
    let mut i = start;
    while i > 0 && b.get(i - 1).is_some_and(|c| c.is_ascii_whitespace()) {
        i -= 1;
    }
    if i > 0 && b.get(i - 1) == Some(&b',') {
        return Some((i - 1, end));
    }
    Some((start, end))
}

impl<const N: usize, const R: usize> TaskStore for TaskTable<N, R> {
    fn ask(&mut self, id: &str, requests: &str, now_ms: u64) -> Result<(), TaskError> {
        check_object(requests)?;
        self.find(id, now_ms)?
            .set(TaskStatus::InputRequired, requests.as_bytes(), now_ms)
    }

    fn take_responses<'o>(
        &mut self,
        id: &str,
        out: &'o mut [u8],
        now_ms: u64,
    ) -> Result<Option<&'o str>, TaskError> {
        let slot = self.find(id, now_ms)?;
        if slot.answered == 0 {
            return Ok(None);
        }
        let from = slot.len;
        let src = slot
            .buf
            .get(from..from + slot.answered)
            .ok_or(TaskError::Invalid)?;
        let capacity = out.len();
        let dst = out.get_mut(..src.len()).ok_or(TaskError::TooLarge {
            needed: src.len(),
            capacity,
        })?;
        dst.copy_from_slice(src);
        slot.answered = 0;
        core::str::from_utf8(dst)
            .map(Some)
            .map_err(|_| TaskError::Invalid)
    }

    fn is_cancelled(&mut self, id: &str, now_ms: u64) -> bool {
        self.find(id, now_ms)
            .is_ok_and(|s| s.status == TaskStatus::Cancelled)
    }

    fn create(&mut self, now_ms: u64) -> Result<TaskId, TaskError> {
        self.expire(now_ms);
        let key = self.key;
        self.counter = self.counter.wrapping_add(1);
        let counter = self.counter;
        let slot = self
            .slots
            .iter_mut()
            .find(|s| !s.live)
            .ok_or(TaskError::Full { capacity: N })?;
        let mut id = [0u8; ID_LEN];
        for (half, out) in id.chunks_mut(16).enumerate() {
            let mut msg = [0u8; 9];
            msg[..8].copy_from_slice(&counter.to_le_bytes());
            msg[8] = half as u8;
            let h = siphash24(&key, &msg);
            for (i, b) in out.iter_mut().enumerate() {
                let nibble = (h >> (60 - 4 * i)) & 0xf;
                *b = b"0123456789abcdef"[nibble as usize];
            }
        }
        // Field by field: the payload buffer is not copied.
        slot.live = true;
        slot.id = id;
        slot.status = TaskStatus::Working;
        slot.created_ms = now_ms;
        slot.updated_ms = now_ms;
        slot.len = 0;
        slot.answered = 0;
        Ok(TaskId(id))
    }

    fn view(&mut self, id: &str, now_ms: u64) -> Option<TaskView<'_>> {
        let (ttl_ms, poll_interval_ms) = (self.ttl_ms, self.poll_interval_ms);
        let slot = self.find(id, now_ms).ok()?;
        Some(TaskView {
            id: core::str::from_utf8(&slot.id).unwrap_or(""),
            status: slot.status,
            created_ms: slot.created_ms,
            updated_ms: slot.updated_ms,
            ttl_ms,
            poll_interval_ms,
            payload: slot.payload(),
        })
    }

    fn answer(&mut self, id: &str, responses: RawJson<'_>, now_ms: u64) -> Result<(), TaskError> {
        let slot = self.find(id, now_ms)?;
        if slot.status != TaskStatus::InputRequired {
            return Ok(()); // Nothing pending: the responses are stale; acknowledged.
        }
        let members = responses.members().ok_or(TaskError::Invalid)?;
        for (k, v) in members {
            let key = k.raw();
            let requests = core::str::from_utf8(slot.buf.get(..slot.len).unwrap_or_default())
                .map_err(|_| TaskError::Invalid)?;
            let Some((from, to)) = member_range(requests, key) else {
                continue; // Not pending (unknown or already answered): ignored.
            };
            // `"key":value` after the responses so far, with a comma between them.
            let sep = usize::from(slot.answered > 0);
            let entry = sep + key.len() + 3 + v.as_str().len();
            let end = slot.len + slot.answered;
            if end - (to - from) + entry > R {
                return Err(TaskError::TooLarge {
                    needed: end - (to - from) + entry,
                    capacity: R,
                });
            }
            shift_left(&mut slot.buf, to..end, from);
            slot.len -= to - from;
            let mut at = end - (to - from);
            for part in [
                if sep == 1 { "," } else { "" },
                "\"",
                key,
                "\":",
                v.as_str(),
            ] {
                if let Some(dst) = slot.buf.get_mut(at..at + part.len()) {
                    dst.copy_from_slice(part.as_bytes());
                }
                at += part.len();
            }
            slot.answered = at - slot.len;
            slot.updated_ms = now_ms;
        }
        // Nothing pending any more: the tool runs again.
        let pending = core::str::from_utf8(slot.buf.get(..slot.len).unwrap_or_default())
            .ok()
            .and_then(|t| RawJson::__trusted(t).members())
            .is_some_and(|mut m| m.next().is_some());
        if !pending {
            let answered = slot.answered;
            shift_left(&mut slot.buf, slot.len..slot.len + answered, 0);
            slot.len = 0;
            slot.status = TaskStatus::Working;
        }
        Ok(())
    }

    fn cancel(&mut self, id: &str, now_ms: u64) -> Result<(), TaskError> {
        let slot = self.find(id, now_ms)?;
        if !slot.status.is_terminal() {
            slot.status = TaskStatus::Cancelled;
            slot.len = 0;
            slot.answered = 0;
            slot.updated_ms = now_ms;
        }
        Ok(())
    }

    fn complete(&mut self, id: &str, result: &str, now_ms: u64) -> Result<(), TaskError> {
        check_object(result)?;
        let slot = self.find(id, now_ms)?;
        match slot.set(TaskStatus::Completed, result.as_bytes(), now_ms) {
            Err(TaskError::TooLarge { needed, capacity }) => {
                // The task still ends, visibly: failed with the size the result needed.
                let code = crate::wire::jsonrpc::code::INTERNAL_ERROR;
                let mut err = [0u8; 96];
                let n = write_error(&mut err, code, "Result exceeds the task slot", Some(needed));
                if slot
                    .set(TaskStatus::Failed, err.get(..n).unwrap_or_default(), now_ms)
                    .is_err()
                {
                    // A slot too small even for that: the code alone.
                    let n = write_error(&mut err, code, "Task failed", None);
                    slot.set(TaskStatus::Failed, err.get(..n).unwrap_or_default(), now_ms)?;
                }
                Err(TaskError::TooLarge { needed, capacity })
            }
            other => other,
        }
    }

    fn remove(&mut self, id: &str) {
        for s in self.slots.iter_mut() {
            if s.live && crate::token::mac::ct_eq(&s.id, id.as_bytes()) {
                s.live = false;
            }
        }
    }

    fn fail(&mut self, id: &str, code: i32, message: &str, now_ms: u64) -> Result<(), TaskError> {
        let slot = self.find(id, now_ms)?;
        if slot.status.is_terminal() {
            return Err(TaskError::Terminal);
        }
        let n = write_error(&mut slot.buf, code, message, None);
        if n == 0 {
            // The message does not fit: keep the code with a fixed message.
            let n = write_error(&mut slot.buf, code, "Task failed", None);
            slot.len = n;
        } else {
            slot.len = n;
        }
        slot.answered = 0;
        slot.status = TaskStatus::Failed;
        slot.updated_ms = now_ms;
        Ok(())
    }
}

/// Writes `{"code":..,"message":..,"data":{"required":n}?}` into `out`; 0 if it does not fit.
fn write_error(out: &mut [u8], code: i32, message: &str, required: Option<usize>) -> usize {
    let mut w = JsonWriter::new(out);
    w.begin_object();
    w.key("code");
    w.i64(i64::from(code));
    w.key("message");
    w.string(message);
    if let Some(n) = required {
        w.key("data");
        w.begin_object();
        w.key("required");
        w.u64(n as u64);
        w.end_object();
    }
    w.end_object();
    w.finish().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: SecretKey = SecretKey([7; 16]);

    fn status<const N: usize, const R: usize>(t: &mut TaskTable<N, R>, id: &str) -> TaskStatus {
        t.view(id, 0)
            .map(|v| v.status)
            .unwrap_or(TaskStatus::Failed)
    }

    #[test]
    fn ids_are_distinct_hex_and_keyed() {
        let mut a = TaskTable::<4, 64>::new(KEY);
        let mut b = TaskTable::<4, 64>::new(SecretKey([8; 16]));
        let x = a.create(0).unwrap();
        let y = a.create(0).unwrap();
        let z = b.create(0).unwrap();
        assert_ne!(x, y);
        assert_ne!(x, z, "another key gives other ids");
        assert_eq!(x.as_str().len(), ID_LEN);
        assert!(x.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn full_table_then_expiry_frees_slots() {
        let mut t = TaskTable::<2, 64>::new(KEY).with_timing(1000, 100);
        let a = t.create(0).unwrap();
        t.create(10).unwrap();
        assert_eq!(t.create(20), Err(TaskError::Full { capacity: 2 }));
        // Not before its TTL...
        assert!(t.view(a.as_str(), 999).is_some());
        // ...and gone after it.
        assert!(t.view(a.as_str(), 1000).is_none());
        assert!(t.create(1000).is_ok());
        assert_eq!(t.live(1000), 2);
        assert_eq!(t.live(5000), 0);
    }

    #[test]
    fn complete_keeps_the_result_until_expiry() {
        let mut t = TaskTable::<1, 64>::new(KEY);
        let id = t.create(5).unwrap();
        assert_eq!(status(&mut t, id.as_str()), TaskStatus::Working);
        t.complete(id.as_str(), r#"{"content":[]}"#, 9).unwrap();
        let v = t.view(id.as_str(), 10).unwrap();
        assert_eq!(v.status, TaskStatus::Completed);
        assert_eq!(v.payload.unwrap().as_str(), r#"{"content":[]}"#);
        assert_eq!((v.created_ms, v.updated_ms), (5, 9));
        // Read twice: still there.
        assert!(t.view(id.as_str(), 11).is_some());
        // Terminal: no further change, cancel is an idempotent no-op.
        assert_eq!(
            t.fail(id.as_str(), -32603, "x", 12),
            Err(TaskError::Terminal)
        );
        t.cancel(id.as_str(), 12).unwrap();
        assert_eq!(status(&mut t, id.as_str()), TaskStatus::Completed);
    }

    #[test]
    fn oversized_result_fails_the_task_with_the_size() {
        let mut t = TaskTable::<1, 96>::new(KEY);
        let id = t.create(0).unwrap();
        let big = r#"{"content":[{"type":"text","text":"0123456789012345678901234567890123456789012345678901234567890123456789"}]}"#;
        assert_eq!(
            t.complete(id.as_str(), big, 1),
            Err(TaskError::TooLarge {
                needed: big.len(),
                capacity: 96
            })
        );
        let v = t.view(id.as_str(), 2).unwrap();
        assert_eq!(v.status, TaskStatus::Failed);
        let err = v.payload.unwrap();
        assert_eq!(err.get("code").unwrap().as_i64(), Some(-32603));
        assert_eq!(
            err.get("data").unwrap().get("required").unwrap().as_u64(),
            Some(big.len() as u64)
        );
    }

    #[test]
    fn a_slot_too_small_for_the_size_detail_keeps_the_code() {
        let mut t = TaskTable::<1, 48>::new(KEY);
        let id = t.create(0).unwrap();
        let big =
            r#"{"content":[{"type":"text","text":"0123456789012345678901234567890123456789"}]}"#;
        assert!(t.complete(id.as_str(), big, 1).is_err());
        let v = t.view(id.as_str(), 2).unwrap();
        assert_eq!(v.status, TaskStatus::Failed);
        assert_eq!(
            v.payload.unwrap().as_str(),
            r#"{"code":-32603,"message":"Task failed"}"#
        );
    }

    #[test]
    fn invalid_payloads_and_unknown_ids() {
        let mut t = TaskTable::<1, 64>::new(KEY);
        let id = t.create(0).unwrap();
        assert_eq!(t.complete(id.as_str(), "[1]", 1), Err(TaskError::Invalid));
        assert_eq!(t.complete(id.as_str(), "{", 1), Err(TaskError::Invalid));
        assert_eq!(t.cancel("nope", 1), Err(TaskError::Unknown));
        assert_eq!(
            t.answer("nope", RawJson::__trusted("{}"), 1),
            Err(TaskError::Unknown)
        );
    }

    #[test]
    fn cancel_a_running_task() {
        let mut t = TaskTable::<1, 64>::new(KEY);
        let id = t.create(0).unwrap();
        t.cancel(id.as_str(), 3).unwrap();
        assert!(t.is_cancelled(id.as_str(), 4));
        // A late completion does not resurrect it.
        assert_eq!(t.complete(id.as_str(), "{}", 5), Err(TaskError::Terminal));
        assert!(t.view(id.as_str(), 6).unwrap().payload.is_none());
    }

    #[test]
    fn partial_answers_then_resume() {
        let mut t = TaskTable::<1, 256>::new(KEY);
        let id = t.create(0).unwrap();
        let id = id.as_str();
        t.ask(
            id,
            r#"{"a":{"method":"elicitation/create","params":{}},"b":{"method":"elicitation/create","params":{}}}"#,
            1,
        )
        .unwrap();
        assert_eq!(status(&mut t, id), TaskStatus::InputRequired);
        // An unknown key is ignored; `b` is answered.
        t.answer(
            id,
            RawJson::__trusted(r#"{"zz":1,"b":{"action":"accept"}}"#),
            2,
        )
        .unwrap();
        let v = t.view(id, 3).unwrap();
        assert_eq!(v.status, TaskStatus::InputRequired);
        let pending = v.payload.unwrap();
        assert!(pending.get("a").is_some());
        assert!(pending.get("b").is_none());
        let mut out = [0u8; 64];
        assert_eq!(
            t.take_responses(id, &mut out, 3).unwrap(),
            Some(r#""b":{"action":"accept"}"#)
        );
        // The last one: working again, `inputRequests` gone, the response kept.
        t.answer(id, RawJson::__trusted(r#"{"a":{"action":"decline"}}"#), 4)
            .unwrap();
        let v = t.view(id, 5).unwrap();
        assert_eq!(v.status, TaskStatus::Working);
        assert!(v.payload.is_none());
        let mut out = [0u8; 64];
        assert_eq!(
            t.take_responses(id, &mut out, 5).unwrap(),
            Some(r#""a":{"action":"decline"}"#)
        );
        let mut out = [0u8; 64];
        assert_eq!(t.take_responses(id, &mut out, 5).unwrap(), None);
    }

    #[test]
    fn answers_that_do_not_fit_are_refused() {
        let mut t = TaskTable::<1, 40>::new(KEY);
        let id = t.create(0).unwrap();
        t.ask(id.as_str(), r#"{"a":{"method":"m"}}"#, 1).unwrap();
        let long = r#"{"a":{"action":"accept","content":{"x":"0123456789"}}}"#;
        assert!(matches!(
            t.answer(id.as_str(), RawJson::__trusted(long), 2),
            Err(TaskError::TooLarge { capacity: 40, .. })
        ));
        // Nothing changed.
        assert_eq!(status(&mut t, id.as_str()), TaskStatus::InputRequired);
    }

    #[test]
    fn member_ranges() {
        let o = r#"{"a":1, "b":[2], "c":{}}"#;
        let cut = |k: &str| {
            let (f, t) = member_range(o, k).unwrap();
            let mut s = std::string::String::from(&o[..f]);
            s.push_str(&o[t..]);
            s
        };
        assert_eq!(cut("a"), r#"{"b":[2], "c":{}}"#);
        assert_eq!(cut("b"), r#"{"a":1, "c":{}}"#);
        assert_eq!(cut("c"), r#"{"a":1, "b":[2]}"#);
        assert_eq!(member_range(o, "d"), None);
        let one = r#"{"a":1}"#;
        assert_eq!(member_range(one, "a"), Some((1, 6)));
    }
}

//! The client against hostile and slow servers: one that floods it with requests (`ping`) and
//! never reads the answers, one that stops reading while the client writes, one that
//! trickles a line, one that sends over-long lines, and one that floods notifications for a
//! consumer that does not keep up. Every buffer is bounded and no write or read can hold the
//! client forever. Each test is bounded in time (`tokio::time::timeout` around everything).

use std::future::Future;
use std::time::{Duration, Instant};

use mcp_rs_tokio::client::{
    CallOptions, Client, ClientError, ClientOptions, Era, Notification, Progress, MAX_QUEUED_LINES,
    MAX_QUEUED_NOTIFICATIONS,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpSocket;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Every test ends within this, whatever the client does.
const TEST_LIMIT: Duration = Duration::from_secs(20);

/// Runs a test body with [`TEST_LIMIT`].
async fn bounded<T>(body: impl Future<Output = T>) -> T {
    tokio::time::timeout(TEST_LIMIT, body)
        .await
        .expect("the test did not finish in time: the client hung")
}

/// A `server/discover` result for the 2026-07-28 era.
static DISCOVERED: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
        "resultType": "complete", "cacheScope": "public"})
});

/// The server side of one scripted connection on a loopback TCP socket.
struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Conn {
    /// The next message from the client.
    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).await.expect("read a line");
        assert!(n > 0, "the client closed the connection");
        serde_json::from_str(&line).expect("the client sends JSON")
    }

    async fn send(&mut self, msg: Value) {
        let line = format!("{msg}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// Answers the legacy handshake.
    async fn handshake(&mut self) {
        let init = self.recv().await;
        assert_eq!(init["method"], "initialize");
        self.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "0"}
        }}))
        .await;
        let initialized = self.recv().await;
        assert_eq!(initialized["method"], "notifications/initialized");
    }

    /// Reads (and throws away) everything until the client's side ends; returns whether it
    /// ended within `limit`.
    async fn drain_until_closed(&mut self, limit: Duration) -> bool {
        let mut buf = vec![0u8; 1 << 20];
        tokio::time::timeout(limit, async {
            loop {
                match self.reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await
        .is_ok()
    }
}

/// A scripted server for one connection: it answers the handshake, then runs `script`.
/// Its receive buffer is small, so a server that stops reading stalls the client's writes
/// after a few MiB (loopback autotuning would otherwise absorb tens of MiB).
async fn scripted<F, Fut, T>(script: F) -> (std::net::SocketAddr, JoinHandle<T>)
where
    F: FnOnce(Conn) -> Fut + Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(64 << 10).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        stream.set_nodelay(true).unwrap();
        let (r, w) = stream.into_split();
        let mut conn = Conn {
            reader: BufReader::new(r),
            writer: w,
        };
        conn.handshake().await;
        script(conn).await
    });
    (addr, task)
}

fn options() -> ClientOptions {
    ClientOptions {
        write_timeout: Duration::from_millis(300),
        line_timeout: Duration::from_millis(300),
        ..ClientOptions::default()
    }
}

/// A `tools/call` whose request line is `mib` MiB long.
fn big_arguments(mib: usize) -> Value {
    json!({"blob": "x".repeat(mib << 20)})
}

/// A later call fails at once with [`ClientError::Closed`].
async fn later_calls_fail_fast(client: &Client) {
    let started = Instant::now();
    let err = client.ping().await.unwrap_err();
    assert!(matches!(err, ClientError::Closed), "{err:?}");
    let err = client.list_tools().await.unwrap_err();
    assert!(matches!(err, ClientError::Closed), "{err:?}");
    assert!(started.elapsed() < Duration::from_millis(100));
}

// ---- writes ------------------------------------------------------------------------------

#[tokio::test]
async fn a_server_that_never_reads_cannot_grow_the_client_queue() {
    bounded(async {
        let (client_side, server_side) = tokio::io::duplex(4096);
        let (cr, cw) = tokio::io::split(client_side);
        let (sr, mut sw) = tokio::io::split(server_side);
        // Modern era: the server answers `server/discover`, then never reads again. No
        // write timeout: the queue bound alone must end it.
        let options = ClientOptions {
            write_timeout: Duration::from_secs(3600),
            ..ClientOptions::with_era(Era::Modern)
        };
        let answer = async {
            let mut sr = BufReader::new(sr);
            let mut line = String::new();
            sr.read_line(&mut line).await.unwrap();
            let discover: Value = serde_json::from_str(&line).unwrap();
            let result =
                json!({"jsonrpc": "2.0", "id": discover["id"], "result": DISCOVERED.clone()});
            sw.write_all(format!("{result}\n").as_bytes())
                .await
                .unwrap();
            sr
        };
        let (client, _never_read) = tokio::join!(Client::from_io_with(cr, cw, options), answer);
        let client = client.expect("discovered");
        let flood = tokio::spawn(async move {
            for id in 0..(MAX_QUEUED_LINES * 3) {
                let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
                if sw.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
            sw
        });
        let closed = tokio::time::timeout(Duration::from_secs(10), async {
            while !client.is_closed() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(
            closed.is_ok(),
            "the client gave up on a server that never reads"
        );
        // Requests now fail at once instead of queueing.
        later_calls_fail_fast(&client).await;
        flood.abort();
    })
    .await;
}

#[tokio::test]
async fn pings_with_huge_ids_are_answered_without_an_id_and_cannot_grow_the_client() {
    // The core keeps an id of at most MAX_ID_LEN bytes to echo: a server request with a
    // longer one is answered -32600 without an id, so 1 MiB ids cannot pile up in the client.
    const PINGS: usize = 8;
    bounded(async {
        let (addr, server) = scripted(|mut conn| async move {
            let request = conn.recv().await;
            let id = "i".repeat(1 << 20);
            for n in 0..PINGS {
                conn.send(json!({"jsonrpc": "2.0", "id": format!("{id}{n}"), "method": "ping"}))
                    .await;
            }
            conn.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}))
                .await;
            let mut answers = Vec::new();
            for _ in 0..PINGS {
                answers.push(conn.recv().await);
            }
            // What the client writes next is its next request.
            let next = conn.recv().await;
            conn.send(json!({"jsonrpc": "2.0", "id": next["id"], "result": {}}))
                .await;
            (answers, next)
        })
        .await;
        let client = Client::connect_tcp_with(addr, ClientOptions::default())
            .await
            .unwrap();
        client.ping().await.unwrap();
        // The connection kept working: the second ping was answered.
        client.ping().await.unwrap();
        let (answers, next) = server.await.unwrap();
        for answer in &answers {
            assert!(answer.get("id").is_none(), "{answer}");
            assert_eq!(answer["error"]["code"], -32600, "{answer}");
        }
        assert_eq!(next["method"], "ping", "{next}");
    })
    .await;
}

#[tokio::test]
async fn a_server_that_stops_reading_is_closed_within_the_write_timeout() {
    bounded(async {
        let (read_tx, read_rx) = oneshot::channel::<()>();
        let (addr, server) = scripted(|mut conn| async move {
            // Reads nothing after the handshake until told to; then the client's side must
            // be closed.
            let _ = read_rx.await;
            conn.drain_until_closed(Duration::from_secs(5)).await
        })
        .await;
        let client = Client::connect_tcp_with(addr, options()).await.unwrap();
        let started = Instant::now();
        // 16 MiB: far more than the socket buffers hold.
        let err = client
            .call_tool("echo", big_arguments(16))
            .await
            .unwrap_err();
        let elapsed = started.elapsed();
        assert!(
            matches!(err, ClientError::WriteTimeout(t) if t == Duration::from_millis(300)),
            "{err:?}"
        );
        // The request timeout is 60 s: only the write timeout can have ended the call. The
        // bound leaves room for writing 16 MiB in a debug build on a loaded machine (it took
        // over 5 s with two cores shared by several builds).
        assert!(
            elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(15),
            "{elapsed:?}"
        );
        assert!(client.is_closed());
        later_calls_fail_fast(&client).await;
        let _ = read_tx.send(());
        assert!(
            server.await.unwrap(),
            "the client did not close its side of the connection"
        );
    })
    .await;
}

#[tokio::test]
async fn close_returns_promptly_when_the_server_never_reads() {
    bounded(async {
        let (_keep_tx, keep_rx) = oneshot::channel::<()>();
        let (addr, _server) = scripted(|conn| async move {
            let _ = keep_rx.await;
            drop(conn);
        })
        .await;
        // Without the write timeout, close would wait the whole close_timeout (30 s) for
        // the queued request to be written.
        let options = ClientOptions {
            close_timeout: Duration::from_secs(30),
            ..options()
        };
        let client = Client::connect_tcp_with(addr, options).await.unwrap();
        let call = client.call_tool_with("echo", big_arguments(16), CallOptions::new());
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = Instant::now();
        let status = client.close().await.unwrap();
        let elapsed = started.elapsed();
        assert!(status.is_none(), "no child");
        assert!(elapsed < Duration::from_secs(3), "close took {elapsed:?}");
        let err = call.await.unwrap_err();
        assert!(matches!(err, ClientError::WriteTimeout(_)), "{err:?}");
    })
    .await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_child_that_never_reads_its_stdin_cannot_hang_the_client() {
    bounded(async {
        // The child answers `server/discover`, then never reads stdin: the pipe (64 KiB)
        // fills and the write stalls.
        let mut command = tokio::process::Command::new("sh");
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": DISCOVERED.clone()});
        command
            .arg("-c")
            .arg(format!("read line; echo '{answer}'; sleep 60"));
        let options = ClientOptions {
            era: Era::Modern,
            close_timeout: Duration::from_millis(200),
            ..options()
        };
        let client = Client::spawn_with(command, options).await.unwrap();
        let started = Instant::now();
        let err = client
            .call_tool("echo", big_arguments(1))
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::WriteTimeout(_)), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        later_calls_fail_fast(&client).await;
        // The child does not exit when its stdin closes: it is killed after close_timeout.
        let started = Instant::now();
        let status = client.close().await.unwrap().expect("a child");
        assert!(!status.success(), "killed: {status:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
    })
    .await;
}

// ---- lines -------------------------------------------------------------------------------

#[tokio::test]
async fn a_server_that_trickles_a_line_is_closed_within_the_line_timeout() {
    bounded(async {
        let (addr, server) = scripted(|mut conn| async move {
            let request = conn.recv().await;
            // The answer, one byte every 20 ms: each read makes progress, but the line needs
            // several seconds, far beyond the 300 ms line timeout.
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                "tools": [], "padding": "p".repeat(200)
            }});
            let line = format!("{answer}\n");
            for byte in line.as_bytes() {
                if conn.writer.write_all(&[*byte]).await.is_err() {
                    return Err("the client closed the connection");
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok("the whole line was written")
        })
        .await;
        let client = Client::connect_tcp_with(addr, options()).await.unwrap();
        let started = Instant::now();
        let err = client.list_tools().await.unwrap_err();
        let elapsed = started.elapsed();
        assert!(
            matches!(err, ClientError::LineTimeout(t) if t == Duration::from_millis(300)),
            "{err:?}"
        );
        assert!(
            elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(2),
            "{elapsed:?}"
        );
        assert!(client.is_closed());
        later_calls_fail_fast(&client).await;
        // The server notices: its trickle fails long before the end of the line.
        assert_eq!(
            server.await.unwrap(),
            Err("the client closed the connection")
        );
    })
    .await;
}

#[tokio::test]
async fn pauses_between_lines_and_lines_quicker_than_the_line_timeout_are_fine() {
    bounded(async {
        let (addr, _server) = scripted(|mut conn| async move {
            let request = conn.recv().await;
            // Nothing for twice the line timeout (between lines: not limited), then the
            // answer in two halves 150 ms apart (within the 300 ms line timeout).
            tokio::time::sleep(Duration::from_millis(600)).await;
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {}});
            let line = format!("{answer}\n");
            let (a, b) = line.as_bytes().split_at(line.len() / 2);
            conn.writer.write_all(a).await.unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
            conn.writer.write_all(b).await.unwrap();
            // Two answers, each 200 ms in the making, where one write ends the first and
            // starts the second: 400 ms of lines in a row, each within the line timeout.
            let (first, second) = (conn.recv().await, conn.recv().await);
            let mut both = String::new();
            for request in [first, second] {
                let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {}});
                both.push_str(&format!("{answer}\n"));
            }
            let bytes = both.as_bytes();
            let (cut1, cut2) = (bytes.len() / 4, bytes.len() * 3 / 4);
            for (i, part) in [&bytes[..cut1], &bytes[cut1..cut2], &bytes[cut2..]]
                .into_iter()
                .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                conn.writer.write_all(part).await.unwrap();
            }
            let _ = conn.recv().await; // Keep the connection until the client goes.
        })
        .await;
        let client = Client::connect_tcp_with(addr, options()).await.unwrap();
        client.ping().await.unwrap();
        let (a, b) = tokio::join!(client.ping(), client.ping());
        a.unwrap();
        b.unwrap();
        assert!(!client.is_closed());
    })
    .await;
}

#[tokio::test]
async fn an_over_long_line_fails_pending_requests_and_the_connection_goes_on() {
    bounded(async {
        let (addr, _server) = scripted(|mut conn| async move {
            let request = conn.recv().await;
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                "tools": [], "padding": "p".repeat(4096)
            }});
            conn.send(answer).await;
            let request = conn.recv().await;
            conn.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}))
                .await;
            let _ = conn.recv().await; // Keep the connection until the client goes.
        })
        .await;
        let options = ClientOptions {
            max_line: 1024,
            ..options()
        };
        let client = Client::connect_tcp_with(addr, options).await.unwrap();
        let err = client.list_tools().await.unwrap_err();
        assert!(
            matches!(err, ClientError::Oversized { limit: 1024 }),
            "{err:?}"
        );
        // The line was discarded; the next one is read as usual.
        client.ping().await.unwrap();
        assert!(!client.is_closed());
    })
    .await;
}

#[tokio::test]
async fn an_over_long_line_that_never_ends_is_closed_within_the_line_timeout() {
    bounded(async {
        let (addr, _server) = scripted(|mut conn| async move {
            let _request = conn.recv().await;
            // 4 KiB of a line (over the 1 KiB limit) and then nothing, ever.
            conn.writer.write_all(&[b'x'; 4096]).await.unwrap();
            let _ = conn.recv().await;
        })
        .await;
        let options = ClientOptions {
            max_line: 1024,
            ..options()
        };
        let client = Client::connect_tcp_with(addr, options).await.unwrap();
        // The request fails as soon as the line passes the limit...
        let err = client.list_tools().await.unwrap_err();
        assert!(
            matches!(err, ClientError::Oversized { limit: 1024 }),
            "{err:?}"
        );
        // ...and the line the client is discarding must still end within the line timeout.
        let started = Instant::now();
        while !client.is_closed() {
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "the discarded line held the connection"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        later_calls_fail_fast(&client).await;
    })
    .await;
}

// ---- notifications -------------------------------------------------------------------------

#[tokio::test]
async fn notifications_for_a_consumer_that_does_not_read_are_bounded_and_counted() {
    const SENT: usize = 3 * MAX_QUEUED_NOTIFICATIONS;
    bounded(async {
        let (addr, _server) = scripted(|mut conn| async move {
            let request = conn.recv().await;
            for n in 0..SENT {
                conn.send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": n}}))
                    .await;
            }
            // The answer comes after every notification.
            conn.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}))
                .await;
            let _ = conn.recv().await;
        })
        .await;
        let client = Client::connect_tcp_with(addr, options()).await.unwrap();
        let mut notes = client.notifications();
        client.ping().await.unwrap();
        let mut received = Vec::new();
        while let Ok(note) = notes.try_recv() {
            let Notification::Log { data, .. } = note else {
                panic!("{note:?}");
            };
            received.push(data.as_u64().unwrap());
        }
        // The first ones are kept, in order; the rest were dropped and counted.
        let kept: Vec<u64> = (0..MAX_QUEUED_NOTIFICATIONS as u64).collect();
        assert_eq!(received, kept);
        assert_eq!(
            client.dropped_notifications(),
            (SENT - MAX_QUEUED_NOTIFICATIONS) as u64
        );
        assert!(!client.is_closed());
    })
    .await;
}

#[tokio::test]
async fn progress_into_a_full_bounded_channel_is_dropped_and_counted() {
    bounded(async {
        let (addr, _server) = scripted(|mut conn| async move {
            let request = conn.recv().await;
            let token = request["params"]["_meta"]["progressToken"].clone();
            assert!(!token.is_null(), "{request}");
            for n in 1..=10 {
                conn.send(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": n}}))
                    .await;
            }
            conn.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                "content": [{"type": "text", "text": "done"}]
            }}))
            .await;
            let _ = conn.recv().await;
        })
        .await;
        let client = Client::connect_tcp_with(addr, options()).await.unwrap();
        let (tx, mut progress) = mpsc::channel::<Progress>(4);
        let result = client
            .call_tool_with("count", json!({}), CallOptions::new().with_progress(tx))
            .await
            .unwrap();
        assert_eq!(result.text(), "done");
        let mut seen = Vec::new();
        while let Ok(p) = progress.try_recv() {
            seen.push(p.progress);
        }
        assert_eq!(seen, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(client.dropped_notifications(), 6);
    })
    .await;
}

// ---- Streamable HTTP -----------------------------------------------------------------------

/// A raw HTTP/1.1 server for one request: reads it, then answers with `content_type` and a
/// chunked body that starts with `head` and goes on with 64 KiB chunks of `p` (ending with
/// `tail` only after `cap` bytes, for a client without the limit). Returns how many bytes it
/// wrote and whether a write failed (the client hung up).
#[cfg(feature = "http")]
async fn endless_http_answer(
    content_type: &'static str,
    head: &'static str,
    tail: &'static str,
    cap: usize,
) -> (String, JoinHandle<(usize, bool)>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (r, mut w) = stream.into_split();
        let mut r = BufReader::new(r);
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            r.read_line(&mut line).await.unwrap();
            let line = line.trim_end().to_ascii_lowercase();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        r.read_exact(&mut body).await.unwrap();
        let request: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(request["method"], "initialize");
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{head}\r\n",
            head.len()
        );
        if w.write_all(answer.as_bytes()).await.is_err() {
            return (0, true);
        }
        let chunk = format!("{:x}\r\n{}\r\n", 64 << 10, "p".repeat(64 << 10));
        let mut written = 0;
        while written < cap {
            if w.write_all(chunk.as_bytes()).await.is_err() {
                return (written, true);
            }
            written += 64 << 10;
        }
        // The failing case: end the body so the client is not stuck forever.
        let end = format!("{:x}\r\n{tail}\r\n0\r\n\r\n", tail.len());
        let _ = w.write_all(end.as_bytes()).await;
        (written, false)
    });
    (url, task)
}

#[cfg(feature = "http")]
async fn check_endless_http_answer(
    content_type: &'static str,
    head: &'static str,
    tail: &'static str,
) {
    const CAP: usize = 256 << 20;
    bounded(async {
        let (url, server) = endless_http_answer(content_type, head, tail, CAP).await;
        let options = ClientOptions {
            max_line: 1 << 20,
            ..ClientOptions::default()
        };
        let started = Instant::now();
        let err = Client::connect_http_with(&url, options).await.unwrap_err();
        // The request timeout is 60 s: the limit ended the handshake, long before that.
        assert!(started.elapsed() < Duration::from_secs(5));
        let ClientError::Protocol { code, message, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(*code, -32603);
        assert!(message.contains("1048576-byte limit"), "{message}");
        // The client stopped reading the body and hung up.
        let (written, hung_up) = server.await.unwrap();
        assert!(hung_up && written < CAP, "{written} bytes written");
    })
    .await;
}

#[cfg(feature = "http")]
#[tokio::test]
async fn an_endless_json_response_body_is_not_buffered() {
    check_endless_http_answer(
        "application/json",
        r#"{"jsonrpc":"2.0","id":1,"result":{"padding":""#,
        r#""}}"#,
    )
    .await;
}

#[cfg(feature = "http")]
#[tokio::test]
async fn an_endless_sse_event_is_not_buffered() {
    check_endless_http_answer(
        "text/event-stream",
        r#"data: {"jsonrpc":"2.0","id":1,"result":{"padding":""#,
        "\"}}\n\n",
    )
    .await;
}

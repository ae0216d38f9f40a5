//! The client against a hostile server: one that floods it with requests (`ping`) and never
//! reads the answers. The client's queue is bounded: it gives up on the connection instead
//! of growing without limit.

use std::time::Duration;

use mcp_tokio::client::{Client, ClientOptions, Era, MAX_QUEUED_LINES};
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn a_server_that_never_reads_cannot_grow_the_client_queue() {
    let (client_side, server_side) = tokio::io::duplex(4096);
    let (cr, cw) = tokio::io::split(client_side);
    let (_never_read, mut sw) = tokio::io::split(server_side);
    // Modern era: no handshake, so the flood starts at once.
    let client = Client::from_io_with(cr, cw, ClientOptions::with_era(Era::Modern))
        .await
        .expect("no handshake in 2026-07-28");
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
    assert!(client.ping().await.is_err());
    flood.abort();
}

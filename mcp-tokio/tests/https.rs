//! The client over `https://` (feature `tls`): mcp-tokio's server behind a TLS front with a
//! self-signed certificate for `localhost`. The client connects only when it trusts that
//! certificate (`ClientOptions::with_root_certificate`); otherwise the connect fails naming
//! the certificate, never falling back to plain HTTP.
#![cfg(feature = "tls")]

use std::sync::Arc;

use mcp_rs_tokio::client::{Client, ClientOptions, Era};
use mcp_rs_tokio::{Handler, Server, ServerInfo, ToolDef, Tools};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;

const OBJECT: &str = r#"{"type":"object"}"#;

/// Starts the server on plain HTTP and a TLS front that forwards every connection to it;
/// returns the `https://localhost:PORT/mcp` URL and the certificate (DER).
async fn tls_server() -> (String, Vec<u8>) {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("echo", OBJECT),
        Handler::sync(|call, r| {
            r.text(call.args().as_str());
        }),
    );
    let info = ServerInfo {
        name: "https-test".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools);
    let plain = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let backend = plain.local_addr().unwrap();
    tokio::spawn(async move { server.serve_http(plain).await.unwrap() });

    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let der = cert.cert.der().to_vec();
    let key = rustls::pki_types::PrivateKeyDer::try_from(cert.key_pair.serialize_der()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone().into()], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let front = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = front.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = front.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return; // a client that does not trust us hangs up here
                };
                let Ok(mut plain) = TcpStream::connect(backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    (format!("https://localhost:{port}/mcp"), der)
}

#[tokio::test]
async fn both_eras_over_https_with_a_trusted_certificate() {
    let (url, der) = tls_server().await;
    for era in [Era::legacy(), Era::Modern] {
        let options = ClientOptions::with_era(era.clone()).with_root_certificate(der.clone());
        let client = Client::connect_http_with(&url, options).await.unwrap();
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "echo");
        let r = client
            .call_tool("echo", json!({"over": "tls"}))
            .await
            .unwrap();
        assert_eq!(r.text(), r#"{"over":"tls"}"#, "{era:?}");
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn an_untrusted_certificate_fails_the_connect() {
    let (url, _) = tls_server().await;
    let err = Client::connect_http_with(&url, ClientOptions::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("certificate") || err.contains("UnknownIssuer"),
        "{err}"
    );
}

#[tokio::test]
async fn a_root_that_is_not_der_is_refused() {
    let (url, _) = tls_server().await;
    let options = ClientOptions::default().with_root_certificate(b"not a certificate".to_vec());
    let err = Client::connect_http_with(&url, options)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("root certificate"), "{err}");
}

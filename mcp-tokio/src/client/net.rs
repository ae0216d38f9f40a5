//! The one HTTP client of the client side: Streamable HTTP and OAuth requests go through
//! it. `http://` always; `https://` with the `tls` feature (rustls with ring; the system's
//! root certificates, plus any the application adds with
//! `ClientOptions::with_root_certificate`). HTTP/1.1, connections pooled per host.

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;

/// What requests are sent through: a body is one buffer.
#[cfg(feature = "tls")]
pub(crate) type HttpClient = HyperClient<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;
/// What requests are sent through: a body is one buffer.
#[cfg(not(feature = "tls"))]
pub(crate) type HttpClient = HyperClient<HttpConnector, Full<Bytes>>;

/// Why an HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NetError {
    /// The system's root certificates could not be read.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    #[error("cannot load the system's root certificates: {0}")]
    Roots(String),
    /// A root certificate the application added is not a usable DER certificate.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    #[error("invalid root certificate: {0}")]
    BadRoot(String),
}

/// A new client: `http://` and, with the `tls` feature, `https://` URLs, trusting the
/// system's roots and `extra_roots` (DER certificates; ignored without `tls`).
pub(crate) fn http_client(extra_roots: &[Vec<u8>]) -> Result<HttpClient, NetError> {
    let builder = HyperClient::builder(TokioExecutor::new());
    #[cfg(feature = "tls")]
    {
        let connector = if extra_roots.is_empty() {
            hyper_rustls::HttpsConnectorBuilder::new()
                .with_native_roots()
                .map_err(|e| NetError::Roots(e.to_string()))?
        } else {
            hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls_config(extra_roots)?)
        };
        Ok(builder.build(connector.https_or_http().enable_http1().build()))
    }
    #[cfg(not(feature = "tls"))]
    {
        let _ = extra_roots;
        Ok(builder.build_http())
    }
}

/// A rustls configuration trusting the system's roots (those that load) and `extra`.
#[cfg(feature = "tls")]
fn tls_config(extra: &[Vec<u8>]) -> Result<rustls::ClientConfig, NetError> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    // A system store that cannot be read at all is fine here: the caller named its roots.
    roots.add_parsable_certificates(native.certs);
    for der in extra {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| NetError::BadRoot(e.to_string()))?;
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| NetError::BadRoot(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// Whether this build can reach `scheme` URLs.
pub(crate) fn supports_scheme(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http")
        || (cfg!(feature = "tls") && scheme.eq_ignore_ascii_case("https"))
}

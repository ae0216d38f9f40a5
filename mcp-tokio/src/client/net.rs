//! The one HTTP client of the client side: Streamable HTTP and OAuth requests go through
//! it. `http://` always; `https://` with the `tls` feature (rustls with ring, the system's
//! root certificates). HTTP/1.1, connections pooled per host.

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
}

/// A new client: `http://` and, with the `tls` feature, `https://` URLs.
pub(crate) fn http_client() -> Result<HttpClient, NetError> {
    let builder = HyperClient::builder(TokioExecutor::new());
    #[cfg(feature = "tls")]
    {
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|e| NetError::Roots(e.to_string()))?;
        Ok(builder.build(connector.https_or_http().enable_http1().build()))
    }
    #[cfg(not(feature = "tls"))]
    {
        Ok(builder.build_http())
    }
}

/// Whether this build can reach `scheme` URLs.
pub(crate) fn supports_scheme(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http")
        || (cfg!(feature = "tls") && scheme.eq_ignore_ascii_case("https"))
}

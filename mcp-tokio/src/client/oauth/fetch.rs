//! The HTTP requests of the OAuth flow: bounded in time and size, redirects not followed.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use hyper::{Method, Request};

use super::OAuthError;
use crate::client::net::{self, HttpClient};

/// An answer, read whole.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) location: Option<String>,
    /// The `DPoP-Nonce` header (RFC 9449 §8), if any.
    pub(crate) dpop_nonce: Option<String>,
    pub(crate) body: Bytes,
}

/// Sends the OAuth flow's requests.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: HttpClient,
    timeout: Duration,
    max_body: usize,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    pub(crate) fn new(timeout: Duration, max_body: usize) -> Result<Self, OAuthError> {
        let client = net::http_client(&[]).map_err(|e| OAuthError::Http {
            url: String::new(),
            reason: e.to_string(),
        })?;
        Ok(Fetcher {
            client,
            timeout,
            max_body,
        })
    }

    /// GET `url` (JSON expected).
    pub(crate) async fn get(&self, url: &url::Url) -> Result<Reply, OAuthError> {
        let req = Request::builder()
            .method(Method::GET)
            .uri(url.as_str())
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()));
        self.send(url, req).await
    }

    /// POST a form (`application/x-www-form-urlencoded`), with an `Authorization` header and
    /// a `DPoP` proof if given.
    pub(crate) async fn post_form(
        &self,
        url: &url::Url,
        form: String,
        authorization: Option<String>,
        dpop: Option<String>,
    ) -> Result<Reply, OAuthError> {
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(url.as_str())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(value) = authorization {
            let value = HeaderValue::from_str(&value).map_err(|_| OAuthError::Http {
                url: url.to_string(),
                reason: "the client credentials do not fit in a header".into(),
            })?;
            req = req.header(AUTHORIZATION, value);
        }
        if let Some(proof) = dpop {
            let value = HeaderValue::from_str(&proof).map_err(|_| OAuthError::Http {
                url: url.to_string(),
                reason: "the DPoP proof does not fit in a header".into(),
            })?;
            req = req.header("dpop", value);
        }
        self.send(url, req.body(Full::new(Bytes::from(form)))).await
    }

    /// POST JSON.
    pub(crate) async fn post_json(
        &self,
        url: &url::Url,
        body: Vec<u8>,
    ) -> Result<Reply, OAuthError> {
        let req = Request::builder()
            .method(Method::POST)
            .uri(url.as_str())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)));
        self.send(url, req).await
    }

    async fn send(
        &self,
        url: &url::Url,
        req: Result<Request<Full<Bytes>>, hyper::http::Error>,
    ) -> Result<Reply, OAuthError> {
        let fail = |reason: String| OAuthError::Http {
            url: url.to_string(),
            reason,
        };
        if !net::supports_scheme(url.scheme()) {
            return Err(OAuthError::Url {
                url: url.to_string(),
                reason: "this build cannot reach this scheme (https needs the `tls` feature)"
                    .into(),
            });
        }
        let req = req.map_err(|e| fail(format!("cannot build the request: {e}")))?;
        let exchange = async {
            let response = self
                .client
                .request(req)
                .await
                .map_err(|e| fail(e.to_string()))?;
            let status = response.status().as_u16();
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let dpop_nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = Limited::new(response.into_body(), self.max_body)
                .collect()
                .await
                .map_err(|e| {
                    fail(format!(
                        "the answer could not be read or exceeds {} bytes: {e}",
                        self.max_body
                    ))
                })?
                .to_bytes();
            Ok(Reply {
                status,
                location,
                dpop_nonce,
                body,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| fail(format!("no answer within {:?}", self.timeout)))?
    }
}

impl Reply {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON `T`.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(
        &self,
        url: &url::Url,
    ) -> Result<T, OAuthError> {
        serde_json::from_slice(&self.body).map_err(|e| OAuthError::Http {
            url: url.to_string(),
            reason: format!("not the expected JSON: {e}"),
        })
    }
}

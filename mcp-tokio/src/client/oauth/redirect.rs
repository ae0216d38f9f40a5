//! The user's part of the flow: the authorization URL goes to the user (a browser), the
//! authorization server redirects back with a code. [`RedirectHandler`] is that step;
//! [`HeadlessRedirect`] does it without a user, for servers that redirect at once.

use std::time::Duration;

use url::Url;

use super::discovery::ServerMetadata;
use super::fetch::Fetcher;
use super::{OAuthError, Secret};
use crate::client::auth::BoxFuture;

/// What the authorization server sent back to the redirect URI (OAuth 2.1 §4.1.2).
#[derive(Clone, Debug)]
pub struct AuthorizationResponse {
    /// The authorization code.
    pub code: Secret,
    /// The `state` echoed back; must equal the one sent.
    pub state: Option<String>,
    /// The issuer (RFC 9207), if sent; must equal the authorization server's.
    pub iss: Option<String>,
}

impl AuthorizationResponse {
    /// Reads the redirect the authorization server sent: the callback URL with `code`,
    /// `state` and `iss` in its query, or an OAuth `error` (which becomes
    /// [`OAuthError::Server`]).
    pub fn from_callback_url(callback: &str) -> Result<AuthorizationResponse, OAuthError> {
        let url = Url::parse(callback).map_err(|e| OAuthError::Url {
            url: String::from("(the callback URL)"),
            reason: e.to_string(),
        })?;
        let (mut code, mut state, mut iss, mut error, mut description) =
            (None, None, None, None, None);
        for (k, v) in url.query_pairs() {
            let slot = match k.as_ref() {
                "code" => &mut code,
                "state" => &mut state,
                "iss" => &mut iss,
                "error" => &mut error,
                "error_description" => &mut description,
                _ => continue,
            };
            if slot.is_some() {
                return Err(OAuthError::AuthorizationResponse(format!(
                    "{k} appears twice"
                )));
            }
            *slot = Some(v.into_owned());
        }
        if let Some(error) = error {
            return Err(OAuthError::Server {
                endpoint: "authorization",
                error,
                description,
            });
        }
        let code = code.ok_or_else(|| OAuthError::AuthorizationResponse("no code".into()))?;
        Ok(AuthorizationResponse {
            code: Secret(code),
            state,
            iss,
        })
    }

    /// Checks `iss` (RFC 9207 §2.4): when present it must equal the authorization server's
    /// issuer exactly (a simple string comparison, no URL normalization: `https://as/` is
    /// not `https://as`); when absent, the server must not have advertised
    /// `authorization_response_iss_parameter_supported`.
    pub fn check_issuer(&self, server: &ServerMetadata) -> Result<(), OAuthError> {
        match self.iss.as_deref() {
            Some(iss) if iss != server.issuer => Err(OAuthError::AuthorizationResponse(format!(
                "iss {iss:?} is not the issuer {:?}",
                server.issuer
            ))),
            None if server.authorization_response_iss_parameter_supported => {
                Err(OAuthError::AuthorizationResponse(
                    "iss is missing though the server advertises it".into(),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// Takes the user through authorization: shows them `authorization_url` (a browser) and
/// returns what the authorization server redirected to [`redirect_uri`](Self::redirect_uri)
/// with. Waiting for the user is the handler's to bound.
pub trait RedirectHandler: Send + Sync + std::fmt::Debug + 'static {
    /// The redirect URI registered for this client (e.g. `http://127.0.0.1:8976/callback`).
    fn redirect_uri(&self) -> &str;

    /// Runs the authorization step for `authorization_url`.
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a Url,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>>;
}

/// How long [`HeadlessRedirect`] waits for the authorization endpoint's answer.
pub const HEADLESS_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest body [`HeadlessRedirect`] reads with the authorization endpoint's answer.
pub const HEADLESS_MAX_BODY: usize = 64 * 1024;

/// For authorization servers that redirect at once (test servers, consent given
/// beforehand): GETs the authorization URL, does not follow the redirect, and reads the
/// answer from its `Location`. Anything but a redirect to [`redirect_uri`](RedirectHandler::redirect_uri)
/// is an error.
#[derive(Debug)]
pub struct HeadlessRedirect {
    redirect_uri: String,
    fetcher: Fetcher,
}

impl HeadlessRedirect {
    /// A handler that registers and expects `redirect_uri`.
    pub fn new(redirect_uri: impl Into<String>) -> Result<HeadlessRedirect, OAuthError> {
        Ok(HeadlessRedirect {
            redirect_uri: redirect_uri.into(),
            fetcher: Fetcher::new(HEADLESS_TIMEOUT, HEADLESS_MAX_BODY)?,
        })
    }
}

impl RedirectHandler for HeadlessRedirect {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a Url,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async move {
            let reply = self.fetcher.get(authorization_url).await?;
            if !(300..400).contains(&reply.status) {
                return Err(OAuthError::Redirect(format!(
                    "the authorization endpoint answered HTTP {} instead of a redirect",
                    reply.status
                )));
            }
            let location = reply
                .location
                .ok_or_else(|| OAuthError::Redirect("a redirect without Location".into()))?;
            let base = Url::parse(&self.redirect_uri).map_err(|e| OAuthError::Url {
                url: self.redirect_uri.clone(),
                reason: e.to_string(),
            })?;
            let target = base
                .join(&location)
                .map_err(|e| OAuthError::Redirect(e.to_string()))?;
            let mut bare = target.clone();
            bare.set_query(None);
            bare.set_fragment(None);
            if bare.as_str() != base.as_str() {
                return Err(OAuthError::Redirect(
                    "the authorization server redirected elsewhere than the redirect URI".into(),
                ));
            }
            AuthorizationResponse::from_callback_url(target.as_str())
        })
    }
}

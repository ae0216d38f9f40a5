//! Who made the HTTP request being served ([`Principal`], re-exported as
//! `http::auth::Principal`), and how a drive loop makes it current for the handlers it runs.
//! A leaf: nothing here depends on the rest of this crate.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

/// Who made a request: the identity and grants an
/// [`Authorizer`](crate::http::auth::Authorizer) found in its token.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// The subject (`sub`): the user, or the client acting on its own behalf.
    pub subject: String,
    /// The issuer (`iss`) that vouched for the subject, if known. Subjects are unique per
    /// issuer only, so sessions are bound to both.
    pub issuer: Option<String>,
    /// The OAuth client the token was issued to (`client_id` or `azp`), if known.
    pub client_id: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the token expires (seconds since the UNIX epoch), if known.
    pub expires_at: Option<u64>,
    /// Every claim of the token (or every field of an introspection answer).
    pub claims: serde_json::Map<String, Value>,
}

impl Principal {
    /// A principal with only a subject.
    pub fn new(subject: impl Into<String>) -> Self {
        Principal {
            subject: subject.into(),
            ..Default::default()
        }
    }

    /// Sets the issuer.
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the granted scopes.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the OAuth client id.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the expiry (seconds since the UNIX epoch).
    pub fn with_expiry(mut self, expires_at: u64) -> Self {
        self.expires_at = Some(expires_at);
        self
    }

    /// Sets the claims.
    pub fn with_claims(mut self, claims: serde_json::Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Whether `other` is the same identity (same issuer and subject): a legacy session
    /// accepts requests only from the identity that created it, whatever the token.
    pub fn same_identity(&self, other: &Principal) -> bool {
        self.subject == other.subject && self.issuer == other.issuer
    }

    /// The principal of the HTTP request being served, inside a handler: a sync tool, the
    /// task of an async tool or prompt (the principal of the request that started the call),
    /// a resource or prompt provider. `None` without authorization, on other transports, and
    /// outside handlers (a task the handler spawns itself does not inherit it: clone the
    /// `Arc` into it).
    pub fn current() -> Option<Arc<Principal>> {
        TASK_PRINCIPAL
            .try_with(Clone::clone)
            .ok()
            .flatten()
            .or_else(|| CURRENT.with(|c| c.borrow().clone()))
    }
}

tokio::task_local! {
    /// The principal of the request that started a call, in its task.
    static TASK_PRINCIPAL: Option<Arc<Principal>>;
}

thread_local! {
    /// The principal of the request whose body a drive loop is handling (a synchronous
    /// stretch: never held across an `await`).
    static CURRENT: std::cell::RefCell<Option<Arc<Principal>>> = const { std::cell::RefCell::new(None) };
}

/// Restores the previous [`CURRENT`] when dropped.
pub(crate) struct Entered(Option<Arc<Principal>>);

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// Makes `principal` current on this thread until the guard drops. Only for synchronous
/// work: the guard must not be held across an `await`.
pub(crate) fn enter(principal: Option<Arc<Principal>>) -> Entered {
    Entered(CURRENT.with(|c| c.replace(principal)))
}

/// A call's task keeps the principal that was current when it was spawned.
pub(crate) fn inherit<F: Future>(task: F) -> impl Future<Output = F::Output> {
    match CURRENT.with(|c| c.borrow().clone()) {
        None => futures::future::Either::Left(task),
        Some(p) => futures::future::Either::Right(TASK_PRINCIPAL.scope(Some(p), task)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_principal() {
        assert!(Principal::current().is_none());
        let p = Arc::new(Principal::new("alice"));
        {
            let _g = enter(Some(p.clone()));
            assert_eq!(Principal::current().unwrap().subject, "alice");
            {
                let _inner = enter(None);
                assert!(Principal::current().is_none());
            }
            assert_eq!(Principal::current().unwrap().subject, "alice");
        }
        assert!(Principal::current().is_none());
    }
}

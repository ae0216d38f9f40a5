//! Who made the HTTP request being served ([`Principal`], also at `http::auth::Principal`).
//! The drive loop hands it to the core with each body ([`Pump::with_data`]), so handlers
//! read it from what they are given: an inline handler from its request view
//! (`request.adapter_data::<Principal>()`), a task from its
//! [`Context::principal`](crate::Context::principal). No thread-local or task-local state.
//! A leaf: nothing here depends on the rest of this crate.
//!
//! [`Pump::with_data`]: mcp_rs_core::pump::Pump::with_data

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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_scopes() {
        let a = Principal::new("alice")
            .with_issuer("https://issuer")
            .with_scopes(["read"]);
        assert!(a.has_scope("read") && !a.has_scope("write"));
        assert!(a.same_identity(&Principal::new("alice").with_issuer("https://issuer")));
        assert!(!a.same_identity(&Principal::new("alice")));
    }
}

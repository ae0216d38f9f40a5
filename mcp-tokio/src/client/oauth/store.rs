//! Where tokens and client registrations are kept between requests (and, with a store of
//! the application's, between runs). [`MemoryStore`] keeps them for the process's life.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use super::registration::ClientCredentials;
use super::{OAuthError, Secret};
use crate::client::auth::BoxFuture;

/// Tokens for one protected resource, from one authorization server.
#[derive(Clone, Debug)]
pub struct StoredToken {
    /// The access token.
    pub access_token: Secret,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<Secret>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes granted (or asked for, if the server did not say).
    pub scope: Option<String>,
    /// The issuer that issued it: a token is never sent after the resource moved to
    /// another authorization server.
    pub issuer: String,
}

/// Keeps tokens (per MCP server URL) and client registrations (per issuer).
pub trait TokenStore: Send + Sync + std::fmt::Debug + 'static {
    /// The token for the server at `server_url`, if any.
    fn load_token<'a>(
        &'a self,
        server_url: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredToken>, OAuthError>>;
    /// Keeps `token` for the server at `server_url` (`None` forgets it).
    fn save_token<'a>(
        &'a self,
        server_url: &'a str,
        token: Option<StoredToken>,
    ) -> BoxFuture<'a, Result<(), OAuthError>>;
    /// The client registered at `issuer`, if any.
    fn load_client<'a>(
        &'a self,
        issuer: &'a str,
    ) -> BoxFuture<'a, Result<Option<ClientCredentials>, OAuthError>>;
    /// Keeps the client registered at `issuer`.
    fn save_client<'a>(
        &'a self,
        issuer: &'a str,
        client: ClientCredentials,
    ) -> BoxFuture<'a, Result<(), OAuthError>>;
}

/// Keeps everything in memory, for the life of the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    tokens: Mutex<HashMap<String, StoredToken>>,
    clients: Mutex<HashMap<String, ClientCredentials>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

fn poisoned<T>(_: T) -> OAuthError {
    OAuthError::Store("a lock holder panicked".into())
}

impl TokenStore for MemoryStore {
    fn load_token<'a>(
        &'a self,
        server_url: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredToken>, OAuthError>> {
        Box::pin(async move {
            Ok(self
                .tokens
                .lock()
                .map_err(poisoned)?
                .get(server_url)
                .cloned())
        })
    }

    fn save_token<'a>(
        &'a self,
        server_url: &'a str,
        token: Option<StoredToken>,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(async move {
            let mut tokens = self.tokens.lock().map_err(poisoned)?;
            match token {
                Some(t) => tokens.insert(server_url.to_owned(), t),
                None => tokens.remove(server_url),
            };
            Ok(())
        })
    }

    fn load_client<'a>(
        &'a self,
        issuer: &'a str,
    ) -> BoxFuture<'a, Result<Option<ClientCredentials>, OAuthError>> {
        Box::pin(async move { Ok(self.clients.lock().map_err(poisoned)?.get(issuer).cloned()) })
    }

    fn save_client<'a>(
        &'a self,
        issuer: &'a str,
        client: ClientCredentials,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(async move {
            self.clients
                .lock()
                .map_err(poisoned)?
                .insert(issuer.to_owned(), client);
            Ok(())
        })
    }
}

//! [`OAuthAuthorizer`]: the flow behind the transport's [`Authorizer`] seam.
//!
//! | the server answers | the authorizer |
//! |---|---|
//! | 401 | reads the challenge, fetches the protected-resource metadata (checking its `resource`), then the authorization server's (checking its `issuer`); refreshes the token if it has a refresh token from that same server (not when the refused token, itself refreshed, has not expired: that grant is gone); otherwise runs the authorization-code flow with the scope of the challenge (or the metadata's `scopes_supported`), or without a user the mode's grant: client credentials, the JWT-bearer grant with the [`AssertionSource`]'s JWT, or the enterprise IdP's token exchange then the JWT-bearer grant with the ID-JAG |
//! | 403 `insufficient_scope` | runs the flow again for the union of the granted and the challenged scopes, unless the granted ones already cover the challenge or [`OAuthConfig::with_max_step_ups`] is reached (then the request fails with the 403) |
//! | 403 otherwise | nothing: the request fails |
//!
//! A server without protected-resource metadata (the 2025-03-26 revision) is taken to be
//! its own authorization server (its origin); without authorization-server metadata there
//! either, the default endpoints `/authorize`, `/token` and `/register` are used.
//!
//! Challenges are handled one at a time; one that waited while another obtained a token
//! (concurrent requests refused together) retries with that token instead of authorizing
//! again, unless it is a step-up the new token does not cover.
//!
//! When the metadata names another authorization server than the one the current token
//! came from (the server moved), the token is dropped and the client registers anew
//! there: credentials are never carried from one authorization server to another.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::Mutex;
use url::Url;

use super::bearer_grant::{self, AssertionSource, AssertionTarget, JWT_BEARER_GRANT};
use super::challenge::BearerChallenge;
use super::discovery::{self, parse_endpoint, ResourceMetadata, ServerMetadata};
use super::dpop::{DpopKey, NonceFor};
use super::enterprise::EnterpriseIdp;
use super::fetch::Fetcher;
use super::pkce::{self, Pkce};
use super::redirect::RedirectHandler;
use super::registration::{self, ClientCredentials, ClientMetadata, TokenEndpointAuth};
use super::store::{MemoryStore, StoredToken, TokenStore};
use super::token::{TokenRequest, TokenResponse};
use super::{scope, OAuthError};
use crate::client::auth::{AuthError, Authorizer, BoxFuture, Challenge};

/// Default of [`OAuthConfig::with_max_step_ups`].
pub const DEFAULT_MAX_STEP_UPS: u32 = 8;

/// A token this close to its expiry is refreshed before it is sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// A grant that presents a JWT instead of sending a user through a redirect.
#[derive(Clone, Debug)]
enum AssertionGrant {
    /// The workload's (or any) JWT, straight to the authorization server (RFC 7523 §2.1).
    JwtBearer(Arc<dyn AssertionSource>),
    /// The user's ID token exchanged at the IdP for an ID-JAG first (SEP-990).
    Enterprise(Arc<EnterpriseIdp>),
}

/// How the [`OAuthAuthorizer`] identifies itself and where it keeps what it obtains.
#[derive(Debug)]
pub struct OAuthConfig {
    /// `None`: the client-credentials grant, or `assertion`'s (no user, no redirect).
    redirect: Option<Arc<dyn RedirectHandler>>,
    /// The JWT-bearer grant or enterprise-managed authorization, with `redirect` `None`.
    assertion: Option<AssertionGrant>,
    store: Arc<dyn TokenStore>,
    client_name: String,
    pre_registered: Option<(ClientCredentials, Option<String>)>,
    client_metadata_url: Option<String>,
    offline_access: bool,
    max_step_ups: u32,
    request_timeout: Duration,
    max_response_bytes: usize,
    server_url: Option<String>,
    dpop: bool,
}

impl OAuthConfig {
    /// Defaults: an in-memory store, dynamic registration as `mcp-rs client`, refresh tokens
    /// asked for (`offline_access` when the authorization server lists it), 10 s and 256 KiB
    /// per request.
    pub fn new(redirect: impl RedirectHandler) -> OAuthConfig {
        OAuthConfig::with_redirect(Some(Arc::new(redirect)))
    }

    /// A machine-to-machine client (the OAuth client-credentials extension,
    /// `io.modelcontextprotocol/oauth-client-credentials`): no user and no redirect; on a 401
    /// the token comes straight from the token endpoint for `credentials`, with the same
    /// discovery, scope selection and `resource` as the authorization-code flow.
    pub fn client_credentials(credentials: ClientCredentials) -> OAuthConfig {
        let mut config = OAuthConfig::with_redirect(None);
        config.pre_registered = Some((credentials, None));
        config.offline_access = false;
        config
    }

    /// Workload identity federation (SEP-1933, extension `io.modelcontextprotocol/auth/wif`)
    /// or any JWT-bearer client: on a 401 the JWT `assertion` gives is presented to the
    /// token endpoint with the JWT-bearer grant (RFC 7523 §2.1; see
    /// [`bearer_grant`]), `client` identifying the client (`client_id`
    /// alone for a public client; its authentication as with
    /// [`client_credentials`](Self::client_credentials)). Discovery, scopes and `resource`
    /// as in the other flows. The authorization server's error (`invalid_grant`, …) is the
    /// caller's, with no retry and no other grant tried. A token about to expire is
    /// refreshed with its refresh token if one came, else obtained anew with a fresh
    /// assertion.
    pub fn jwt_bearer(client: ClientCredentials, assertion: impl AssertionSource) -> OAuthConfig {
        let mut config = OAuthConfig::client_credentials(client);
        config.assertion = Some(AssertionGrant::JwtBearer(Arc::new(assertion)));
        config
    }

    /// Enterprise-managed authorization (SEP-990, extension
    /// `io.modelcontextprotocol/enterprise-managed-authorization`; see
    /// [`enterprise`](super::enterprise)): on a 401 the user's ID token is exchanged at
    /// `idp` for an ID-JAG addressed to the authorization server (its issuer from
    /// discovery) and the MCP server (its resource), which is then presented with the
    /// JWT-bearer grant, authenticated as `client` (the method chosen from the
    /// authorization server's metadata). A token about to expire is obtained anew the same
    /// way (ID-JAGs are short-lived and never kept), unless a refresh token came with it.
    pub fn enterprise(client: ClientCredentials, idp: EnterpriseIdp) -> OAuthConfig {
        let mut config = OAuthConfig::client_credentials(client);
        config.assertion = Some(AssertionGrant::Enterprise(Arc::new(idp)));
        config
    }

    fn with_redirect(redirect: Option<Arc<dyn RedirectHandler>>) -> OAuthConfig {
        OAuthConfig {
            redirect,
            assertion: None,
            store: Arc::new(MemoryStore::new()),
            client_name: "mcp-rs client".into(),
            pre_registered: None,
            client_metadata_url: None,
            offline_access: true,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            request_timeout: Duration::from_secs(10),
            max_response_bytes: 256 * 1024,
            server_url: None,
            dpop: false,
        }
    }

    /// Keeps tokens and registrations in `store`.
    pub fn with_store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The `client_name` registered.
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Pre-registered credentials, used with the authorization server `issuer` (or with
    /// any, if `None`) instead of registering.
    pub fn with_client(mut self, credentials: ClientCredentials, issuer: Option<String>) -> Self {
        self.pre_registered = Some((credentials, issuer));
        self
    }

    /// The URL of this client's Client ID Metadata Document: used as the client id with
    /// authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Whether to ask for refresh tokens (`offline_access`, the `refresh_token` grant).
    pub fn with_offline_access(mut self, wanted: bool) -> Self {
        self.offline_access = wanted;
        self
    }

    /// Most re-authorizations for a wider scope (403 `insufficient_scope`) over the
    /// authorizer's life.
    pub fn with_max_step_ups(mut self, max: u32) -> Self {
        self.max_step_ups = max;
        self
    }

    /// Timeout of each metadata, registration and token request.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Largest response body read from a metadata, registration or token endpoint.
    pub fn with_max_response_bytes(mut self, max: usize) -> Self {
        self.max_response_bytes = max;
        self
    }

    /// DPoP (RFC 9449, SEP-1932; see [`dpop`](super::dpop)): bind tokens to a key generated
    /// for this authorizer and prove its possession on every request. Off by default;
    /// [`OAuthAuthorizer::new`] refuses it without the `oauth-dpop` feature.
    pub fn with_dpop(mut self, enabled: bool) -> Self {
        self.dpop = enabled;
        self
    }

    /// The MCP server's URL, so that a token already in the store is sent from the first
    /// request on (otherwise the first 401 tells it).
    pub fn with_server_url(mut self, url: impl Into<String>) -> Self {
        self.server_url = Some(url.into());
        self
    }
}

/// What the last successful flow established, for refreshing.
#[derive(Debug)]
struct Grant {
    resource: String,
    server: ServerMetadata,
    client: ClientCredentials,
}

#[derive(Debug, Default)]
struct State {
    server_url: Option<String>,
    token: Option<StoredToken>,
    grant: Option<Grant>,
    step_ups: u32,
    /// Whether the current token came from a refresh: one that is refused before it
    /// expired is not refreshed again (the grant itself is gone), the user is asked anew.
    from_refresh: bool,
    /// When the current token was obtained: a challenge that was waiting for the lock
    /// meanwhile (concurrent requests refused together) retries with it instead of
    /// authorizing again.
    obtained: Option<Instant>,
}

/// OAuth 2.1 authorization for the MCP client's Streamable HTTP transport (see the
/// [module](super) documentation). One authorizer serves one MCP server.
#[derive(Debug)]
pub struct OAuthAuthorizer {
    config: OAuthConfig,
    fetcher: Fetcher,
    state: Mutex<State>,
    dpop: Option<DpopKey>,
}

impl OAuthAuthorizer {
    /// An authorizer with `config`.
    pub fn new(config: OAuthConfig) -> Result<OAuthAuthorizer, OAuthError> {
        let fetcher = Fetcher::new(config.request_timeout, config.max_response_bytes)?;
        let state = State {
            server_url: config.server_url.clone(),
            ..State::default()
        };
        let dpop = if config.dpop {
            Some(DpopKey::generate()?)
        } else {
            None
        };
        Ok(OAuthAuthorizer {
            config,
            fetcher,
            state: Mutex::new(state),
            dpop,
        })
    }

    async fn header(&self) -> Result<Option<String>, OAuthError> {
        let scheme = if self.dpop.is_some() {
            "DPoP"
        } else {
            "Bearer"
        };
        Ok(self
            .access_token()
            .await?
            .map(|t| format!("{scheme} {}", t.expose())))
    }

    /// The headers of a `method` request to `url`: `Authorization`, and with DPoP a fresh
    /// proof bound to the request and the token.
    async fn headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>, OAuthError> {
        let Some(token) = self.access_token().await? else {
            return Ok(Vec::new());
        };
        let Some(key) = &self.dpop else {
            let value = format!("Bearer {}", token.expose());
            return Ok(vec![("authorization".to_owned(), value)]);
        };
        let proof = key.proof(method, url, Some(token.expose()), NonceFor::Resource)?;
        Ok(vec![
            (
                "authorization".to_owned(),
                format!("DPoP {}", token.expose()),
            ),
            ("dpop".to_owned(), proof),
        ])
    }

    /// The access token to send, refreshed first when it is about to expire.
    async fn access_token(&self) -> Result<Option<super::Secret>, OAuthError> {
        let mut st = self.state.lock().await;
        if st.token.is_none() {
            if let Some(url) = st.server_url.clone() {
                st.token = self.config.store.load_token(&url).await?;
            }
        }
        let expiring = st.token.as_ref().is_some_and(|t| {
            t.refresh_token.is_some()
                && t.expires_at
                    .is_some_and(|at| at <= SystemTime::now() + EXPIRY_MARGIN)
        });
        if expiring {
            if let Err(e) = self.refresh(&mut st).await {
                tracing::debug!(error = %e, "refreshing the expiring token failed");
            }
        }
        if self.config.assertion.is_some() && renewal_due(&st) {
            if let Some(grant) = st.grant.take() {
                // Obtained anew from a fresh assertion; a refusal is the caller's (the
                // expiring token is dropped, nothing is retried).
                let scope = st.token.as_ref().and_then(|t| t.scope.clone());
                let resource = grant.resource.clone();
                if let Err(e) = self
                    .assertion_grant(&mut st, &resource, grant.server, grant.client, scope)
                    .await
                {
                    st.token = None;
                    return Err(e);
                }
            }
        }
        Ok(st.token.as_ref().map(|t| t.access_token.clone()))
    }

    /// Refreshes with the current grant; on success the new token is kept.
    async fn refresh(&self, st: &mut State) -> Result<(), OAuthError> {
        let (Some(token), Some(grant)) = (&st.token, &st.grant) else {
            return Err(OAuthError::TokenResponse("nothing to refresh".into()));
        };
        let Some(refresh_token) = &token.refresh_token else {
            return Err(OAuthError::TokenResponse("no refresh token".into()));
        };
        if token.issuer != grant.server.issuer {
            return Err(OAuthError::TokenResponse(
                "the token is from another issuer".into(),
            ));
        }
        let request = TokenRequest {
            server: &grant.server,
            client: &grant.client,
            resource: &grant.resource,
            dpop: self.dpop.as_ref(),
        };
        let fresh = request.refresh(&self.fetcher, refresh_token, None).await?;
        let scope = token.scope.clone();
        let keep_refresh = token.refresh_token.clone();
        let issuer = grant.server.issuer.clone();
        self.keep(st, fresh, scope, keep_refresh, issuer).await;
        st.from_refresh = true;
        Ok(())
    }

    /// Stores a token response.
    async fn keep(
        &self,
        st: &mut State,
        fresh: TokenResponse,
        asked_scope: Option<String>,
        old_refresh: Option<super::Secret>,
        issuer: String,
    ) {
        let stored = StoredToken {
            access_token: fresh.access_token,
            refresh_token: fresh.refresh_token.or(old_refresh),
            expires_at: fresh
                .expires_in
                .and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s))),
            scope: fresh.scope.or(asked_scope),
            issuer,
        };
        if let Some(url) = &st.server_url {
            if let Err(e) = self
                .config
                .store
                .save_token(url, Some(stored.clone()))
                .await
            {
                tracing::warn!(error = %e, "the token store failed");
            }
        }
        st.token = Some(stored);
        st.obtained = Some(Instant::now());
    }

    async fn handle(&self, challenge: Challenge<'_>) -> Result<bool, OAuthError> {
        let bearer = challenge
            .www_authenticate
            .and_then(BearerChallenge::parse)
            .unwrap_or_default();
        if let (Some(key), Some(nonce)) = (&self.dpop, challenge.dpop_nonce) {
            let fresh = key.set_nonce(NonceFor::Resource, nonce);
            if bearer.error.as_deref() == Some("use_dpop_nonce") {
                // Retry with the new nonce; the same nonce refused again: give up.
                tracing::debug!(retry = fresh, "the MCP server asked for a DPoP nonce");
                return Ok(fresh);
            }
        }
        let step_up = challenge.status == 403;
        if step_up && !bearer.insufficient_scope() {
            return Ok(false);
        }
        let server = Url::parse(challenge.resource).map_err(|e| OAuthError::Url {
            url: challenge.resource.to_owned(),
            reason: e.to_string(),
        })?;
        let arrived = Instant::now();
        let mut st = self.state.lock().await;
        st.server_url = Some(challenge.resource.to_owned());
        if st.obtained.is_some_and(|at| at > arrived) {
            let granted = st.token.as_ref().and_then(|t| t.scope.as_deref());
            if !step_up || scope::covers(granted, bearer.scope.as_deref()) {
                tracing::debug!(
                    "a new token arrived while this challenge waited: retrying with it"
                );
                return Ok(true);
            }
        }

        let (prm, legacy) = self
            .resource_metadata(&server, bearer.resource_metadata.as_deref())
            .await?;
        let Some(issuer) = prm.authorization_servers.first().cloned() else {
            return Err(OAuthError::Metadata(
                "the protected-resource metadata names no authorization server".into(),
            ));
        };
        if st.token.as_ref().is_some_and(|t| t.issuer != issuer) {
            tracing::info!(issuer = %issuer, "the resource moved to another authorization server; starting over there");
            st.token = None;
            st.grant = None;
            if let Err(e) = self.config.store.save_token(challenge.resource, None).await {
                tracing::warn!(error = %e, "the token store failed");
            }
        }
        let meta = match discovery::fetch_server_metadata(&self.fetcher, &issuer).await {
            Err(OAuthError::Status { .. }) if legacy => legacy_endpoints(&issuer),
            other => other?,
        };
        let granted = st.token.as_ref().and_then(|t| t.scope.clone());

        let wanted = if step_up {
            if scope::covers(granted.as_deref(), bearer.scope.as_deref()) {
                tracing::info!("insufficient_scope for scopes already granted: not asking again");
                return Ok(false);
            }
            if st.step_ups >= self.config.max_step_ups {
                tracing::info!(max = self.config.max_step_ups, "step-up limit reached");
                return Ok(false);
            }
            st.step_ups += 1;
            scope::union(granted.as_deref(), bearer.scope.as_deref())
        } else {
            let expired = st
                .token
                .as_ref()
                .and_then(|t| t.expires_at)
                .is_some_and(|at| at <= SystemTime::now());
            let refreshable = st.token.as_ref().is_some_and(|t| t.refresh_token.is_some());
            if refreshable && (expired || !st.from_refresh) {
                st.grant = Some(Grant {
                    resource: prm.resource.clone(),
                    server: meta.clone(),
                    client: match &st.grant {
                        Some(g) => g.client.clone(),
                        None => self.client_for(&issuer, &meta).await?,
                    },
                });
                match self.refresh(&mut st).await {
                    Ok(()) => return Ok(true),
                    Err(e) => tracing::debug!(error = %e, "refresh failed; authorizing anew"),
                }
            }
            let selected = scope::select(bearer.scope.as_deref(), prm.scopes_supported.as_deref());
            match &st.token {
                Some(_) => scope::union(granted.as_deref(), selected.as_deref()),
                None => selected,
            }
        };
        let wanted = if self.config.offline_access {
            scope::with_offline_access(wanted, meta.scopes_supported.as_deref())
        } else {
            wanted
        };
        self.authorize(&mut st, &prm, meta, wanted).await?;
        Ok(true)
    }

    /// The protected-resource metadata; without any (a server of the 2025-03-26 revision),
    /// the server's origin is taken as its authorization server (and `true` says so).
    async fn resource_metadata(
        &self,
        server: &Url,
        from_challenge: Option<&str>,
    ) -> Result<(ResourceMetadata, bool), OAuthError> {
        match discovery::fetch_resource_metadata(&self.fetcher, server, from_challenge).await {
            Err(OAuthError::Status { .. }) if from_challenge.is_none() => {
                let origin = server.origin().ascii_serialization();
                tracing::debug!(issuer = %origin, "no protected-resource metadata: trying the server's origin");
                let mut resource = server.clone();
                resource.set_fragment(None);
                let prm = ResourceMetadata {
                    resource: resource.to_string(),
                    authorization_servers: vec![origin],
                    scopes_supported: None,
                };
                Ok((prm, true))
            }
            other => other.map(|prm| (prm, false)),
        }
    }

    /// The client id to use at `issuer`: pre-registered, stored, a metadata document URL, or
    /// registered now.
    async fn client_for(
        &self,
        issuer: &str,
        meta: &ServerMetadata,
    ) -> Result<ClientCredentials, OAuthError> {
        let methods = meta.token_endpoint_auth_methods_supported.as_deref();
        if let Some((creds, for_issuer)) = &self.config.pre_registered {
            if for_issuer.as_deref().is_none_or(|i| i == issuer) {
                let mut creds = creds.clone();
                if creds.assertion_key.is_none() {
                    creds.auth = TokenEndpointAuth::choose(methods, creds.client_secret.is_some());
                }
                return Ok(creds);
            }
        }
        if let Some(creds) = self.config.store.load_client(issuer).await? {
            return Ok(creds);
        }
        if meta.client_id_metadata_document_supported {
            if let Some(url) = &self.config.client_metadata_url {
                return Ok(ClientCredentials {
                    client_id: url.clone(),
                    client_secret: None,
                    auth: TokenEndpointAuth::None,
                    assertion_key: None,
                });
            }
        }
        let Some(redirect) = &self.config.redirect else {
            return Err(OAuthError::NoRegistration {
                issuer: issuer.to_owned(),
            });
        };
        let redirect_uri = redirect.redirect_uri().to_owned();
        let mut grant_types = vec!["authorization_code".to_owned()];
        if self.config.offline_access {
            grant_types.push("refresh_token".to_owned());
        }
        let metadata = ClientMetadata {
            client_name: self.config.client_name.clone(),
            application_type: registration::application_type(&redirect_uri).to_owned(),
            redirect_uris: vec![redirect_uri],
            grant_types,
            response_types: vec!["code".to_owned()],
            token_endpoint_auth_method: TokenEndpointAuth::choose(methods, true)
                .as_str()
                .to_owned(),
            scope: None,
        };
        let creds = registration::register(&self.fetcher, meta, &metadata).await?;
        tracing::info!(issuer = %issuer, client_id = %creds.client_id, "registered");
        self.config.store.save_client(issuer, creds.clone()).await?;
        Ok(creds)
    }

    /// The authorization-code flow with PKCE for `wanted` scopes.
    async fn authorize(
        &self,
        st: &mut State,
        prm: &ResourceMetadata,
        meta: ServerMetadata,
        wanted: Option<String>,
    ) -> Result<(), OAuthError> {
        let client = self.client_for(&meta.issuer, &meta).await?;
        let Some(redirect) = &self.config.redirect else {
            if self.config.assertion.is_some() {
                return self
                    .assertion_grant(st, &prm.resource, meta, client, wanted)
                    .await;
            }
            return self.client_credentials(st, prm, meta, client, wanted).await;
        };
        if !meta.supports_s256() {
            return Err(OAuthError::PkceUnsupported);
        }
        let pkce = Pkce::generate()?;
        let state = pkce::random_token()?;
        let redirect_uri = redirect.redirect_uri();
        let mut url = parse_endpoint(&meta.authorization_endpoint)?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("code_challenge", pkce.challenge())
                .append_pair("code_challenge_method", pkce::METHOD)
                .append_pair("state", &state);
            if let Some(s) = &wanted {
                q.append_pair("scope", s);
            }
            q.append_pair("resource", &prm.resource);
        }
        tracing::info!(issuer = %meta.issuer, scope = wanted.as_deref().unwrap_or(""), "authorizing");
        let answer = redirect.authorize(&url).await?;
        if answer.state.as_deref() != Some(state.as_str()) {
            return Err(OAuthError::AuthorizationResponse(
                "state does not match".into(),
            ));
        }
        answer.check_issuer(&meta)?;
        let request = TokenRequest {
            server: &meta,
            client: &client,
            resource: &prm.resource,
            dpop: self.dpop.as_ref(),
        };
        let fresh = request
            .code(&self.fetcher, &answer.code, pkce.verifier(), redirect_uri)
            .await?;
        let issuer = meta.issuer.clone();
        st.grant = Some(Grant {
            resource: prm.resource.clone(),
            server: meta,
            client,
        });
        self.keep(st, fresh, wanted, None, issuer).await;
        st.from_refresh = false;
        Ok(())
    }
}

/// Whether a token without a (working) refresh token is to be obtained anew before it is
/// sent: it has expired, or expires within [`EXPIRY_MARGIN`] and is not itself that young
/// (a server that issues tokens shorter-lived than the margin would otherwise be asked at
/// every request).
fn renewal_due(st: &State) -> bool {
    let Some(at) = st.token.as_ref().and_then(|t| t.expires_at) else {
        return false;
    };
    let now = SystemTime::now();
    let old = st.obtained.is_none_or(|o| o.elapsed() >= EXPIRY_MARGIN);
    at <= now || (at <= now + EXPIRY_MARGIN && old)
}

/// A 2025-03-26 server without any metadata: the default endpoints at its origin
/// (`/authorize`, `/token`, `/register`); that revision required PKCE S256 of every server.
fn legacy_endpoints(origin: &str) -> ServerMetadata {
    tracing::debug!(issuer = %origin, "no authorization-server metadata: the default endpoints");
    ServerMetadata {
        issuer: origin.to_owned(),
        authorization_endpoint: format!("{origin}/authorize"),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        scopes_supported: None,
        grant_types_supported: None,
        code_challenge_methods_supported: Some(vec![pkce::METHOD.to_owned()]),
        token_endpoint_auth_methods_supported: None,
        client_id_metadata_document_supported: false,
        authorization_response_iss_parameter_supported: false,
    }
}

impl OAuthAuthorizer {
    /// The client-credentials grant: the token endpoint, directly.
    async fn client_credentials(
        &self,
        st: &mut State,
        prm: &ResourceMetadata,
        meta: ServerMetadata,
        client: ClientCredentials,
        wanted: Option<String>,
    ) -> Result<(), OAuthError> {
        tracing::info!(issuer = %meta.issuer, scope = wanted.as_deref().unwrap_or(""), "client credentials grant");
        let request = TokenRequest {
            server: &meta,
            client: &client,
            resource: &prm.resource,
            dpop: self.dpop.as_ref(),
        };
        let fresh = request
            .client_credentials(&self.fetcher, wanted.as_deref())
            .await?;
        let issuer = meta.issuer.clone();
        st.grant = Some(Grant {
            resource: prm.resource.clone(),
            server: meta,
            client,
        });
        self.keep(st, fresh, wanted, None, issuer).await;
        st.from_refresh = false;
        Ok(())
    }
}

impl OAuthAuthorizer {
    /// The JWT-bearer grant with the configured [`AssertionGrant`]'s JWT (for enterprise
    /// authorization, an ID-JAG obtained first).
    async fn assertion_grant(
        &self,
        st: &mut State,
        resource: &str,
        meta: ServerMetadata,
        client: ClientCredentials,
        wanted: Option<String>,
    ) -> Result<(), OAuthError> {
        let Some(grant) = &self.config.assertion else {
            return Err(OAuthError::Unsupported("no assertion is configured".into()));
        };
        if let Some(types) = &meta.grant_types_supported {
            if !types.iter().any(|t| t == JWT_BEARER_GRANT) {
                return Err(OAuthError::Unsupported(format!(
                    "{} does not list the JWT-bearer grant in grant_types_supported",
                    meta.issuer
                )));
            }
        }
        let target = AssertionTarget {
            issuer: meta.issuer.clone(),
            resource: resource.to_owned(),
            scope: wanted.clone(),
        };
        let assertion = match grant {
            AssertionGrant::JwtBearer(source) => {
                bearer_grant::obtain(source.as_ref(), &target).await?
            }
            AssertionGrant::Enterprise(idp) => idp.id_jag(&self.fetcher, &target).await?,
        };
        tracing::info!(issuer = %meta.issuer, scope = wanted.as_deref().unwrap_or(""), "JWT-bearer grant");
        let request = TokenRequest {
            server: &meta,
            client: &client,
            resource,
            dpop: self.dpop.as_ref(),
        };
        let fresh = request
            .jwt_bearer(&self.fetcher, &assertion, wanted.as_deref())
            .await?;
        let issuer = meta.issuer.clone();
        st.grant = Some(Grant {
            resource: resource.to_owned(),
            server: meta,
            client,
        });
        self.keep(st, fresh, wanted, None, issuer).await;
        st.from_refresh = false;
        Ok(())
    }

    /// What [`Authorizer::challenge`] does, with the error typed: the transport sees only
    /// its text ([`AuthError`]); a caller that drives the authorizer itself (to obtain a
    /// token before connecting, or to tell an `invalid_grant` from a network failure)
    /// matches on the [`OAuthError`].
    pub async fn respond(&self, challenge: Challenge<'_>) -> Result<bool, OAuthError> {
        self.handle(challenge).await
    }
}

impl Authorizer for OAuthAuthorizer {
    fn authorization(&self) -> BoxFuture<'_, Result<Option<String>, AuthError>> {
        Box::pin(async move { self.header().await.map_err(|e| AuthError(e.to_string())) })
    }

    fn request_headers<'a>(
        &'a self,
        method: &'a str,
        url: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, AuthError>> {
        Box::pin(async move {
            self.headers(method, url)
                .await
                .map_err(|e| AuthError(e.to_string()))
        })
    }

    fn challenge<'a>(&'a self, challenge: Challenge<'a>) -> BoxFuture<'a, Result<bool, AuthError>> {
        Box::pin(async move {
            self.handle(challenge).await.map_err(|e| {
                tracing::warn!(error = %e, "authorization failed");
                AuthError(e.to_string())
            })
        })
    }
}

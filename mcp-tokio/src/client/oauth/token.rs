//! The token endpoint: an authorization code (with its PKCE verifier) or a refresh token
//! for an access token (OAuth 2.1 §3.2, §4.1.3, §4.3), with the RFC 8707 `resource`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Deserialize;
use url::form_urlencoded;

use super::assertion;
use super::discovery::{parse_endpoint, ServerMetadata};
use super::dpop::{DpopKey, NonceFor};
use super::fetch::Fetcher;
use super::registration::{ClientCredentials, TokenEndpointAuth};
use super::{OAuthError, Secret};

/// A successful token response (RFC 6749 §5.1), the fields read.
#[derive(Clone, Debug, Deserialize)]
pub struct TokenResponse {
    /// The access token.
    pub access_token: Secret,
    /// `Bearer` (compared case-insensitively), or `DPoP` when the request carried a DPoP
    /// proof; other types are refused.
    pub token_type: String,
    /// Lifetime in seconds.
    #[serde(default)]
    pub expires_in: Option<u64>,
    /// A refresh token, if issued.
    #[serde(default)]
    pub refresh_token: Option<Secret>,
    /// The granted scopes, if they differ from those asked for (or always, by some servers).
    #[serde(default)]
    pub scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// What a token request carries besides the grant.
pub(crate) struct TokenRequest<'a> {
    pub(crate) server: &'a ServerMetadata,
    pub(crate) client: &'a ClientCredentials,
    pub(crate) resource: &'a str,
    /// The DPoP key, when tokens are to be bound to it.
    pub(crate) dpop: Option<&'a DpopKey>,
}

/// `application/x-www-form-urlencoded` of a component for HTTP Basic (RFC 6749 §2.3.1).
fn form_component(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

impl TokenRequest<'_> {
    /// Exchanges an authorization code.
    pub(crate) async fn code(
        &self,
        fetcher: &Fetcher,
        code: &Secret,
        verifier: &Secret,
        redirect_uri: &str,
    ) -> Result<TokenResponse, OAuthError> {
        let params = [
            ("grant_type", "authorization_code"),
            ("code", code.expose()),
            ("code_verifier", verifier.expose()),
            ("redirect_uri", redirect_uri),
        ];
        self.send(fetcher, &params).await
    }

    /// Uses a refresh token (with the scope originally granted, if given).
    pub(crate) async fn refresh(
        &self,
        fetcher: &Fetcher,
        refresh_token: &Secret,
        scope: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        let mut params = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.expose()),
        ];
        if let Some(s) = scope {
            params.push(("scope", s));
        }
        self.send(fetcher, &params).await
    }

    /// The client-credentials grant (no user involved).
    pub(crate) async fn client_credentials(
        &self,
        fetcher: &Fetcher,
        scope: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        let mut params = vec![("grant_type", "client_credentials")];
        if let Some(s) = scope {
            params.push(("scope", s));
        }
        self.send(fetcher, &params).await
    }

    async fn send(
        &self,
        fetcher: &Fetcher,
        grant: &[(&str, &str)],
    ) -> Result<TokenResponse, OAuthError> {
        let url = parse_endpoint(&self.server.token_endpoint)?;
        // With DPoP, one retry: after a `use_dpop_nonce` refusal carrying a new nonce.
        let mut attempts = 0;
        let reply = loop {
            attempts += 1;
            // Built per attempt: a client assertion's `jti` must not repeat.
            let (form, authorization) = self.form(grant)?;
            let proof = match self.dpop {
                Some(key) => {
                    Some(key.proof("POST", url.as_str(), None, NonceFor::AuthorizationServer)?)
                }
                None => None,
            };
            let reply = fetcher.post_form(&url, form, authorization, proof).await?;
            let (Some(key), Some(nonce)) = (self.dpop, reply.dpop_nonce.as_deref()) else {
                break reply;
            };
            let fresh = key.set_nonce(NonceFor::AuthorizationServer, nonce);
            let wants_nonce = reply.status == 400
                && reply
                    .json::<ErrorBody>(&url)
                    .is_ok_and(|e| e.error == "use_dpop_nonce");
            if !(wants_nonce && fresh && attempts < 2) {
                break reply;
            }
            tracing::debug!("the token endpoint asked for a DPoP nonce: retrying with it");
        };
        if !reply.ok() {
            return Err(match reply.json::<ErrorBody>(&url) {
                Ok(e) => OAuthError::Server {
                    endpoint: "token",
                    error: e.error,
                    description: e.error_description,
                },
                Err(_) => OAuthError::Status {
                    url: url.to_string(),
                    status: reply.status,
                },
            });
        }
        let token: TokenResponse = reply.json(&url)?;
        let dpop_bound = self.dpop.is_some() && token.token_type.eq_ignore_ascii_case("dpop");
        if !token.token_type.eq_ignore_ascii_case("bearer") && !dpop_bound {
            return Err(OAuthError::TokenResponse(format!(
                "token type {:?} is not supported (Bearer, and DPoP when DPoP is on)",
                token.token_type
            )));
        }
        if token.access_token.expose().is_empty() {
            return Err(OAuthError::TokenResponse("an empty access token".into()));
        }
        Ok(token)
    }

    /// The form body (grant, `resource`, client authentication) and the `Authorization`
    /// header, if the client authenticates with HTTP Basic.
    fn form(&self, grant: &[(&str, &str)]) -> Result<(String, Option<String>), OAuthError> {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.extend_pairs(grant.iter().copied());
        form.append_pair("resource", self.resource);
        let client = self.client;
        let secret = client.client_secret.as_ref().map(Secret::expose);
        let authorization = match (client.auth, secret) {
            (TokenEndpointAuth::ClientSecretBasic, Some(secret)) => {
                let pair = format!(
                    "{}:{}",
                    form_component(&client.client_id),
                    form_component(secret)
                );
                Some(format!("Basic {}", STANDARD.encode(pair)))
            }
            (TokenEndpointAuth::ClientSecretPost, Some(secret)) => {
                form.append_pair("client_id", &client.client_id);
                form.append_pair("client_secret", secret);
                None
            }
            (TokenEndpointAuth::PrivateKeyJwt, _) => {
                let key = client.assertion_key.as_ref().ok_or_else(|| {
                    OAuthError::Unsupported("private_key_jwt without a private key".into())
                })?;
                let jwt = assertion::sign(key, &client.client_id, &self.server.issuer)?;
                form.append_pair("client_id", &client.client_id);
                form.append_pair("client_assertion_type", assertion::ASSERTION_TYPE);
                form.append_pair("client_assertion", &jwt);
                None
            }
            _ => {
                form.append_pair("client_id", &client.client_id);
                None
            }
        };
        Ok((form.finish(), authorization))
    }
}

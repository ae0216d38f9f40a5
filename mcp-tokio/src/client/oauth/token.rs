//! The token endpoint: an authorization code (with its PKCE verifier), a refresh token,
//! client credentials or a JWT assertion (RFC 7523 §2.1) for an access token (OAuth 2.1
//! §3.2, §4.1.3, §4.3), with the RFC 8707 `resource`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Deserialize;
use url::form_urlencoded;

use super::assertion;
use super::bearer_grant::JWT_BEARER_GRANT;
use super::discovery::{parse_endpoint, ServerMetadata};
use super::dpop::{DpopKey, NonceFor};
use super::fetch::{Fetcher, Reply};
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

/// The error of a refused request to `endpoint`: the OAuth error (RFC 6749 §5.2) when the
/// body is one, else the status.
pub(crate) fn refusal(reply: &Reply, url: &url::Url, endpoint: &'static str) -> OAuthError {
    match reply.json::<ErrorBody>(url) {
        Ok(e) => OAuthError::Server {
            endpoint,
            error: e.error,
            description: e.error_description,
        },
        Err(_) => OAuthError::Status {
            url: url.to_string(),
            status: reply.status,
        },
    }
}

/// What a token request carries besides the grant.
pub(crate) struct TokenRequest<'a> {
    pub(crate) server: &'a ServerMetadata,
    pub(crate) client: &'a ClientCredentials,
    pub(crate) resource: &'a str,
    /// The DPoP key, when tokens are to be bound to it.
    pub(crate) dpop: Option<&'a DpopKey>,
}

/// The grant parameters of a JWT-bearer token request (RFC 7523 §2.1).
fn jwt_bearer_grant<'a>(assertion: &'a Secret, scope: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut params = vec![
        ("grant_type", JWT_BEARER_GRANT),
        ("assertion", assertion.expose()),
    ];
    if let Some(s) = scope {
        params.push(("scope", s));
    }
    params
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

    /// The JWT-bearer authorization grant (RFC 7523 §2.1): `assertion` (a workload's JWT,
    /// or an ID-JAG from an enterprise identity provider) for an access token. An error
    /// answer is returned as it came (no retry, no other grant).
    pub(crate) async fn jwt_bearer(
        &self,
        fetcher: &Fetcher,
        assertion: &Secret,
        scope: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        self.send(fetcher, &jwt_bearer_grant(assertion, scope))
            .await
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
            return Err(refusal(&reply, &url, "token"));
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
        let authorization = authenticate(&mut form, self.client, &self.server.issuer)?;
        Ok((form.finish(), authorization))
    }
}

/// Client authentication for a token request (RFC 6749 §2.3, RFC 7523 §2.2): appended to
/// `form`, or the `Authorization` header (HTTP Basic) returned. `audience` is the `aud` of a
/// `private_key_jwt` assertion (the authorization server's issuer).
pub(crate) fn authenticate(
    form: &mut form_urlencoded::Serializer<'_, String>,
    client: &ClientCredentials,
    audience: &str,
) -> Result<Option<String>, OAuthError> {
    let secret = client.client_secret.as_ref().map(Secret::expose);
    Ok(match (client.auth, secret) {
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
            let jwt = assertion::sign(key, &client.client_id, audience)?;
            form.append_pair("client_id", &client.client_id);
            form.append_pair("client_assertion_type", assertion::ASSERTION_TYPE);
            form.append_pair("client_assertion", &jwt);
            None
        }
        _ => {
            form.append_pair("client_id", &client.client_id);
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ServerMetadata {
        ServerMetadata {
            issuer: "https://as.example".into(),
            authorization_endpoint: "https://as.example/authorize".into(),
            token_endpoint: "https://as.example/token".into(),
            registration_endpoint: None,
            scopes_supported: None,
            grant_types_supported: None,
            code_challenge_methods_supported: None,
            token_endpoint_auth_methods_supported: None,
            client_id_metadata_document_supported: false,
            authorization_response_iss_parameter_supported: false,
        }
    }

    #[test]
    fn the_jwt_bearer_form_is_rfc_7523() {
        let server = server();
        let public = ClientCredentials::new("workload", None);
        let request = TokenRequest {
            server: &server,
            client: &public,
            resource: "https://mcp.example/mcp",
            dpop: None,
        };
        let jwt = Secret::new("eyJ.e30.sig-_");
        let (form, auth) = request.form(&jwt_bearer_grant(&jwt, Some("a b"))).unwrap();
        assert_eq!(
            form,
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer\
             &assertion=eyJ.e30.sig-_\
             &scope=a+b\
             &resource=https%3A%2F%2Fmcp.example%2Fmcp\
             &client_id=workload"
        );
        assert_eq!(auth, None);

        // A confidential client (as after an ID-JAG exchange): HTTP Basic, id and secret
        // form-encoded first (RFC 6749 §2.3.1); no scope asked.
        let confidential = ClientCredentials::new("mcp client", Some("p@ss:word".into()));
        let request = TokenRequest {
            client: &confidential,
            ..request
        };
        let (form, auth) = request.form(&jwt_bearer_grant(&jwt, None)).unwrap();
        assert!(
            !form.contains("client_id") && !form.contains("scope"),
            "{form}"
        );
        let basic = STANDARD.encode("mcp+client:p%40ss%3Aword");
        assert_eq!(auth, Some(format!("Basic {basic}")));
    }
}

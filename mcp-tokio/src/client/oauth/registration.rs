//! A client id at the authorization server: pre-registered credentials, a Client ID
//! Metadata Document URL (when the server advertises
//! `client_id_metadata_document_supported`), or dynamic registration (RFC 7591), in that
//! order. How the client authenticates at the token endpoint follows from the server's
//! metadata or the registration's answer.

use serde::{Deserialize, Serialize};

use super::discovery::{parse_endpoint, ServerMetadata};
use super::fetch::Fetcher;
use super::{OAuthError, Secret};

/// How the client authenticates at the token endpoint (RFC 7591 §2
/// `token_endpoint_auth_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A public client: `client_id` in the body, no secret.
    None,
    /// A JWT signed with the client's private key (RFC 7523 §2.2; feature `oauth-jwt`).
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuth::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuth::ClientSecretPost => "client_secret_post",
            TokenEndpointAuth::None => "none",
            TokenEndpointAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method for a registered name, if it is one this client implements.
    pub fn from_name(name: &str) -> Option<TokenEndpointAuth> {
        match name {
            "client_secret_basic" => Some(TokenEndpointAuth::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuth::ClientSecretPost),
            "none" => Some(TokenEndpointAuth::None),
            "private_key_jwt" => Some(TokenEndpointAuth::PrivateKeyJwt),
            _ => None,
        }
    }

    /// The method to use with the server's `token_endpoint_auth_methods_supported`
    /// (absent: `client_secret_basic`, RFC 8414 §2). With a secret: Basic, then post, then
    /// none, whichever the server lists first in that order; without: `none`.
    pub fn choose(supported: Option<&[String]>, has_secret: bool) -> TokenEndpointAuth {
        let listed = |m: TokenEndpointAuth| match supported {
            None => m == TokenEndpointAuth::ClientSecretBasic,
            Some(list) => list.iter().any(|s| s == m.as_str()),
        };
        if has_secret {
            for m in [
                TokenEndpointAuth::ClientSecretBasic,
                TokenEndpointAuth::ClientSecretPost,
            ] {
                if listed(m) {
                    return m;
                }
            }
        }
        TokenEndpointAuth::None
    }
}

/// A client id at one authorization server, with its secret and authentication method.
#[derive(Clone, Debug)]
pub struct ClientCredentials {
    /// The client id (a URL for a Client ID Metadata Document).
    pub client_id: String,
    /// The secret, for a confidential client.
    pub client_secret: Option<Secret>,
    /// How to authenticate at the token endpoint.
    pub auth: TokenEndpointAuth,
    /// The private key for [`TokenEndpointAuth::PrivateKeyJwt`].
    pub assertion_key: Option<AssertionKey>,
}

/// A client's private key for `private_key_jwt` authentication: PEM (PKCS#8) and the JWS
/// algorithm (`ES256`, `ES384` or `EdDSA`). `Debug` does not show the key.
#[derive(Clone)]
pub struct AssertionKey {
    /// The key, PEM.
    pub pem: Secret,
    /// The JWS algorithm name.
    pub algorithm: String,
}

impl std::fmt::Debug for AssertionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssertionKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// Pre-registered credentials; the method is chosen from the server's metadata when the
    /// flow starts.
    pub fn new(client_id: impl Into<String>, client_secret: Option<String>) -> ClientCredentials {
        let client_secret = client_secret.map(Secret);
        let auth = if client_secret.is_some() {
            TokenEndpointAuth::ClientSecretBasic
        } else {
            TokenEndpointAuth::None
        };
        ClientCredentials {
            client_id: client_id.into(),
            client_secret,
            auth,
            assertion_key: None,
        }
    }

    /// Pre-registered credentials that authenticate with a JWT signed by `pem` (PKCS#8)
    /// with `algorithm` (`ES256`, `ES384`, `EdDSA`): `private_key_jwt`, feature `oauth-jwt`.
    pub fn with_private_key_jwt(
        client_id: impl Into<String>,
        pem: impl Into<String>,
        algorithm: impl Into<String>,
    ) -> ClientCredentials {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: None,
            auth: TokenEndpointAuth::PrivateKeyJwt,
            assertion_key: Some(AssertionKey {
                pem: Secret(pem.into()),
                algorithm: algorithm.into(),
            }),
        }
    }
}

/// The RFC 7591 client metadata sent when registering.
#[derive(Clone, Debug, Serialize)]
pub struct ClientMetadata {
    /// Shown to the user at consent.
    pub client_name: String,
    /// The redirect URIs.
    pub redirect_uris: Vec<String>,
    /// `authorization_code`, plus `refresh_token` when refresh tokens are wanted.
    pub grant_types: Vec<String>,
    /// `code`.
    pub response_types: Vec<String>,
    /// The authentication method asked for.
    pub token_endpoint_auth_method: String,
    /// `native` (a redirect to the local machine) or `web` (SEP-837).
    pub application_type: String,
    /// The scopes the client may ask for, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// The registration endpoint's answer (RFC 7591 §3.2.1), the fields read.
#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<Secret>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// Whether `redirect_uri` points at this machine (`native` application type) or elsewhere.
pub fn application_type(redirect_uri: &str) -> &'static str {
    let local = url::Url::parse(redirect_uri)
        .ok()
        .is_some_and(|u| match u.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => true, // a private-use scheme (`com.example.app:/cb`)
        });
    if local {
        "native"
    } else {
        "web"
    }
}

/// Registers at the server's registration endpoint (RFC 7591).
pub(crate) async fn register(
    fetcher: &Fetcher,
    server: &ServerMetadata,
    metadata: &ClientMetadata,
) -> Result<ClientCredentials, OAuthError> {
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(OAuthError::NoRegistration {
            issuer: server.issuer.clone(),
        });
    };
    let url = parse_endpoint(endpoint)?;
    let body = serde_json::to_vec(metadata).map_err(|e| OAuthError::Metadata(e.to_string()))?;
    let reply = fetcher.post_json(&url, body).await?;
    if !reply.ok() {
        return Err(match reply.json::<ErrorBody>(&url) {
            Ok(e) => OAuthError::Server {
                endpoint: "registration",
                error: e.error,
                description: e.error_description,
            },
            Err(_) => OAuthError::Status {
                url: url.to_string(),
                status: reply.status,
            },
        });
    }
    let got: Registered = reply.json(&url)?;
    let has_secret = got.client_secret.is_some();
    let auth = got
        .token_endpoint_auth_method
        .as_deref()
        .and_then(TokenEndpointAuth::from_name)
        .filter(|m| has_secret || *m == TokenEndpointAuth::None)
        .unwrap_or_else(|| {
            TokenEndpointAuth::choose(
                server.token_endpoint_auth_methods_supported.as_deref(),
                has_secret,
            )
        });
    Ok(ClientCredentials {
        client_id: got.client_id,
        client_secret: got.client_secret,
        auth,
        assertion_key: None,
    })
}

//! Enterprise-managed authorization (SEP-990, extension
//! `io.modelcontextprotocol/enterprise-managed-authorization`): the user signed in to the
//! enterprise's identity provider (IdP) once; for each MCP server, the client exchanges the
//! user's ID token at the IdP for an Identity Assertion JWT Authorization Grant (ID-JAG)
//! naming the server's authorization server and the resource (RFC 8693 token exchange),
//! then presents the ID-JAG to that authorization server with the JWT-bearer grant
//! (RFC 7523 §2.1, [`bearer_grant`]). The enterprise's policy decides
//! at the IdP; no browser, no consent screen.
//!
//! | step | request | parameters |
//! |---|---|---|
//! | ID token → ID-JAG | POST to the IdP's token endpoint, authenticated as the IdP client | `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`, `audience` = the authorization server's issuer (from its metadata), `resource` = the MCP server (from its protected-resource metadata), `scope` (if any), `subject_token` = the ID token, `subject_token_type=urn:ietf:params:oauth:token-type:id_token` |
//! | ID-JAG → access token | POST to the authorization server's token endpoint, authenticated as the MCP client (the method from its metadata) | `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, `assertion` = the ID-JAG, `scope`, `resource` |
//!
//! ID-JAGs are short-lived and used once: none is kept. When the access token expires (or
//! the server refuses it) both steps run again, with the ID token the source gives then
//! (its refresh is the application's: the user's sign-in at the IdP).

use std::sync::Arc;

use serde::Deserialize;
use url::form_urlencoded;

use super::bearer_grant::{self, AssertionSource, AssertionTarget};
use super::discovery::parse_endpoint;
use super::fetch::Fetcher;
use super::registration::ClientCredentials;
use super::token::{authenticate, refusal};
use super::{OAuthError, Secret};

/// The `grant_type` of the token exchange (RFC 8693 §2.1).
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an Identity Assertion JWT Authorization Grant.
pub const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The enterprise identity provider: where ID-JAGs are issued, as which client, and the
/// user's ID token. `Debug` shows no secret.
#[derive(Clone, Debug)]
pub struct EnterpriseIdp {
    token_endpoint: String,
    client: ClientCredentials,
    id_token: Arc<dyn AssertionSource>,
}

impl EnterpriseIdp {
    /// The IdP's token endpoint, this client's registration there (`client_id`, with a
    /// secret for a confidential client: HTTP Basic unless `client.auth` says otherwise;
    /// `private_key_jwt` assertions are addressed to the token endpoint) and the user's ID
    /// token (a [`Secret`] or any [`AssertionSource`], asked at every exchange).
    pub fn new(
        token_endpoint: impl Into<String>,
        client: ClientCredentials,
        id_token: impl AssertionSource,
    ) -> EnterpriseIdp {
        EnterpriseIdp {
            token_endpoint: token_endpoint.into(),
            client,
            id_token: Arc::new(id_token),
        }
    }

    /// The ID-JAG for `target` (its issuer is the `audience`, its resource the `resource`).
    pub(crate) async fn id_jag(
        &self,
        fetcher: &Fetcher,
        target: &AssertionTarget,
    ) -> Result<Secret, OAuthError> {
        let url = parse_endpoint(&self.token_endpoint)?;
        let id_token = bearer_grant::obtain(self.id_token.as_ref(), target).await?;
        let (form, authorization) = exchange_form(&self.client, &id_token, target, url.as_str())?;
        tracing::info!(idp = %url, audience = %target.issuer, "exchanging the ID token for an ID-JAG");
        let reply = fetcher.post_form(&url, form, authorization, None).await?;
        if !reply.ok() {
            return Err(refusal(&reply, &url, "token exchange"));
        }
        let got: Exchanged = reply.json(&url)?;
        if got.issued_token_type.as_deref() != Some(ID_JAG_TYPE) {
            return Err(OAuthError::TokenResponse(format!(
                "the token exchange issued {:?}, not an ID-JAG ({ID_JAG_TYPE})",
                got.issued_token_type.unwrap_or_default()
            )));
        }
        if got.access_token.expose().trim().is_empty() {
            return Err(OAuthError::TokenResponse(
                "the token exchange issued an empty ID-JAG".into(),
            ));
        }
        Ok(got.access_token)
    }
}

/// The token exchange's answer (RFC 8693 §2.2.1), the fields read. `token_type` is `N_A`
/// for an ID-JAG (not an access token) and is not checked.
#[derive(Deserialize)]
struct Exchanged {
    access_token: Secret,
    #[serde(default)]
    issued_token_type: Option<String>,
}

/// The form of the token exchange and the `Authorization` header, if the IdP client
/// authenticates with HTTP Basic.
fn exchange_form(
    client: &ClientCredentials,
    id_token: &Secret,
    target: &AssertionTarget,
    token_endpoint: &str,
) -> Result<(String, Option<String>), OAuthError> {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", TOKEN_EXCHANGE_GRANT)
        .append_pair("requested_token_type", ID_JAG_TYPE)
        .append_pair("audience", &target.issuer)
        .append_pair("resource", &target.resource);
    if let Some(scope) = &target.scope {
        form.append_pair("scope", scope);
    }
    form.append_pair("subject_token", id_token.expose())
        .append_pair("subject_token_type", ID_TOKEN_TYPE);
    let authorization = authenticate(&mut form, client, token_endpoint)?;
    Ok((form.finish(), authorization))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(scope: Option<&str>) -> AssertionTarget {
        AssertionTarget {
            issuer: "https://as.example/".into(),
            resource: "https://mcp.example/mcp".into(),
            scope: scope.map(str::to_owned),
        }
    }

    #[test]
    fn the_exchange_form_is_rfc_8693() {
        let public = ClientCredentials::new("idp client", None);
        let (form, auth) = exchange_form(
            &public,
            &Secret::new("id.tok+en"),
            &target(Some("a b")),
            "x",
        )
        .unwrap();
        assert_eq!(
            form,
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange\
             &requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aid-jag\
             &audience=https%3A%2F%2Fas.example%2F\
             &resource=https%3A%2F%2Fmcp.example%2Fmcp\
             &scope=a+b\
             &subject_token=id.tok%2Ben\
             &subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aid_token\
             &client_id=idp+client"
        );
        assert_eq!(auth, None);

        // A confidential IdP client: HTTP Basic of the form-encoded id and secret, no
        // client_id in the body; no scope.
        let confidential = ClientCredentials::new("idp:c", Some("s&cret".into()));
        let (form, auth) =
            exchange_form(&confidential, &Secret::new("t"), &target(None), "x").unwrap();
        assert!(
            !form.contains("client_id") && !form.contains("scope"),
            "{form}"
        );
        assert_eq!(auth.as_deref(), Some("Basic aWRwJTNBYzpzJTI2Y3JldA=="));
    }
}

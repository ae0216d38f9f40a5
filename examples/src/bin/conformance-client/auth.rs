//! The conformance suite's OAuth client scenarios (`auth/*`): an [`OAuthAuthorizer`] that
//! registers dynamically, by Client ID Metadata Document, or with the pre-registered
//! credentials the scenario hands over in `MCP_CONFORMANCE_CONTEXT`; the mock authorization
//! server redirects at once, so [`HeadlessRedirect`] reads the code from its `Location`.
//! Without a user: the client-credentials grant (`auth/client-credentials-*`), the
//! JWT-bearer grant with the workload's JWT (`auth/wif-*`, context `client_id`,
//! `valid_jwt`) and enterprise-managed authorization (`auth/enterprise-managed-authorization`,
//! context `client_id`, `client_secret`, `idp_client_id`, `idp_id_token`,
//! `idp_token_endpoint`).

use mcp_rs_tokio::client::oauth::{
    ClientCredentials, EnterpriseIdp, HeadlessRedirect, OAuthAuthorizer, OAuthConfig, Secret,
};
use mcp_rs_tokio::client::{Client, ClientOptions, Era};
use serde_json::{json, Value};

/// Where the mock authorization server sends the user back; nothing listens there, the
/// redirect is read from the `Location` header.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The Client ID Metadata Document URL the suite expects (`auth/basic-cimd`).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The protocol era the suite asks for (`MCP_CONFORMANCE_PROTOCOL_VERSION`).
fn era() -> Result<Era, String> {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok("2026-07-28") => Ok(Era::Modern),
        Ok(v @ ("2025-11-25" | "2025-06-18")) => Ok(Era::Legacy {
            version: v.to_owned(),
        }),
        Err(_) => Ok(Era::legacy()),
        Ok(other) => Err(format!("unsupported protocol version {other}")),
    }
}

/// Runs one `auth/*` scenario against the server at `url`: authorize, list the tools, call
/// the first one, close.
// `pub`: the signature the conformance client's main.rs calls, whichever main.rs it is.
#[allow(unreachable_pub)]
pub async fn run(url: &str, scenario: &str, context: Option<&Value>) -> Result<(), String> {
    let text = |k: &str| {
        context
            .and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let config = if scenario.starts_with("auth/wif-") {
        // Workload identity federation (SEP-1933): the workload's JWT with the JWT-bearer
        // grant, as a public client.
        let client_id = text("client_id").ok_or("the scenario gave no client_id")?;
        let jwt = text("valid_jwt").ok_or("the scenario gave no valid_jwt")?;
        OAuthConfig::jwt_bearer(ClientCredentials::new(client_id, None), Secret::new(jwt))
    } else if scenario == "auth/enterprise-managed-authorization" {
        // SEP-990: the ID token for an ID-JAG at the IdP, the ID-JAG for a token at the
        // authorization server with the MCP client's credentials.
        let need = |k: &str| text(k).ok_or(format!("the scenario gave no {k}"));
        let idp = EnterpriseIdp::new(
            need("idp_token_endpoint")?,
            ClientCredentials::new(need("idp_client_id")?, text("idp_client_secret")),
            Secret::new(need("idp_id_token")?),
        );
        let client = ClientCredentials::new(need("client_id")?, text("client_secret"));
        OAuthConfig::enterprise(client, idp)
    } else if scenario.starts_with("auth/client-credentials-") {
        let client_id = text("client_id").ok_or("the scenario gave no client_id")?;
        let credentials = match text("private_key_pem") {
            Some(pem) => {
                let algorithm = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
                ClientCredentials::with_private_key_jwt(client_id, pem, algorithm)
            }
            None => ClientCredentials::new(client_id, text("client_secret")),
        };
        OAuthConfig::client_credentials(credentials)
    } else {
        let redirect = HeadlessRedirect::new(REDIRECT_URI).map_err(|e| e.to_string())?;
        let mut config = OAuthConfig::new(redirect)
            .with_client_name("mcp-rs conformance client")
            .with_client_metadata_url(CLIENT_METADATA_URL);
        if let Some(client_id) = text("client_id") {
            let issuer = text("issuer");
            let credentials = ClientCredentials::new(client_id, text("client_secret"));
            config = config.with_client(credentials, issuer);
        }
        config
    };
    // The DPoP extension scenarios (`auth/dpop`, `auth/dpop-nonce`), or a context that asks
    // for it.
    let dpop = scenario.starts_with("auth/dpop")
        || context
            .and_then(|c| c.get("dpop"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
    let config = config.with_dpop(dpop);
    let authorizer = OAuthAuthorizer::new(config).map_err(|e| e.to_string())?;
    let options = ClientOptions::with_era(era()?).with_authorizer(authorizer);
    let client = Client::connect_http_with(url, options)
        .await
        .map_err(|e| format!("{scenario}: connect: {e}"))?;
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("{scenario}: tools/list: {e}"))?;
    if let Some(tool) = tools.first() {
        client
            .call_tool(&tool.name, json!({}))
            .await
            .map_err(|e| format!("{scenario}: tools/call {}: {e}", tool.name))?;
    }
    client
        .close()
        .await
        .map_err(|e| format!("{scenario}: close: {e}"))?;
    Ok(())
}

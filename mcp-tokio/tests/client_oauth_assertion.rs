//! The OAuth client without a user, against the in-process authorization server and
//! enterprise IdP of `common/oauth_server.rs`: the JWT-bearer grant (RFC 7523 §2.1,
//! SEP-1933 workload identity federation) and enterprise-managed authorization (SEP-990:
//! RFC 8693 exchange for an ID-JAG, then the JWT-bearer grant). The conformance suite's
//! `auth/wif-jwt-bearer` and `auth/enterprise-managed-authorization` are the real peers
//! (`scripts/test-conformance.sh`).

#![cfg(feature = "oauth")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_rs_tokio::client::auth::{Authorizer, Challenge};
use mcp_rs_tokio::client::oauth::{
    assertion_fn, ClientCredentials, EnterpriseIdp, FileAssertion, OAuthAuthorizer, OAuthConfig,
    OAuthError, Secret,
};

#[path = "common/oauth_server.rs"]
mod oauth_server;
use oauth_server::{mock, Quirks, ID_JAG};

fn unauthorized(server: &str) -> Challenge<'_> {
    Challenge {
        status: 401,
        www_authenticate: None,
        resource: server,
        dpop_nonce: None,
    }
}

/// The form and the `Authorization` header of a logged request.
fn form_of(entry: &str) -> (HashMap<String, String>, Option<String>) {
    let (body, auth) = match entry.split_once(" [") {
        Some((body, auth)) => (body, Some(auth.trim_end_matches(']').to_owned())),
        None => (entry, None),
    };
    let form = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    (form, auth)
}

fn posts(log: &Arc<Mutex<Vec<(String, String)>>>, path: &str) -> Vec<String> {
    let line = format!("POST {path}");
    log.lock()
        .unwrap()
        .iter()
        .filter(|(l, _)| *l == line)
        .map(|(_, body)| body.clone())
        .collect()
}

fn params(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

#[tokio::test]
async fn the_jwt_bearer_grant_presents_the_workload_jwt() {
    let (base, log) = mock(Quirks::default()).await;
    let server = format!("{base}/mcp");
    let jwt = "eyJhbGciOiJFUzI1NiJ9.workload.sig";
    let config =
        OAuthConfig::jwt_bearer(ClientCredentials::new("workload", None), Secret::new(jwt));
    let auth = OAuthAuthorizer::new(config).unwrap();
    assert!(auth.challenge(unauthorized(&server)).await.unwrap());

    // No user, no registration: discovery, then one token request with exactly these
    // parameters (a public client: client_id in the body, no Authorization header).
    let lines: Vec<String> = log.lock().unwrap().iter().map(|(l, _)| l.clone()).collect();
    assert_eq!(
        lines,
        [
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server",
            "POST /token",
        ]
    );
    let (form, authorization) = form_of(&posts(&log, "/token")[0]);
    assert_eq!(
        form,
        params(&[
            ("grant_type", JWT_BEARER),
            ("assertion", jwt),
            ("scope", "a b"),
            ("resource", &server),
            ("client_id", "workload"),
        ])
    );
    assert_eq!(authorization, None);
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok1")
    );
    assert!(!format!("{auth:?}").contains(jwt));
}

#[tokio::test]
async fn a_refused_assertion_is_surfaced_without_a_second_request() {
    let (base, log) = mock(Quirks::default()).await;
    let server = format!("{base}/mcp");
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    let source = assertion_fn(move |target| {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            // The source learns whom the JWT is for.
            assert!(target.resource.ends_with("/mcp"));
            Ok(Secret::new("rejected"))
        }
    });
    let config = OAuthConfig::jwt_bearer(ClientCredentials::new("workload", None), source);
    let auth = OAuthAuthorizer::new(config).unwrap();
    match auth.respond(unauthorized(&server)).await {
        Err(OAuthError::Server {
            endpoint: "token",
            error,
            description,
        }) => {
            assert_eq!(error, "invalid_grant");
            assert_eq!(
                description.as_deref(),
                Some("assertion audience is invalid")
            );
        }
        other => panic!("expected invalid_grant, got {other:?}"),
    }
    assert_eq!(posts(&log, "/token").len(), 1, "retried or fell back");
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(auth.authorization().await.unwrap(), None);

    // Through the transport's seam the request fails with the OAuth error's text.
    let err = auth.challenge(unauthorized(&server)).await.unwrap_err();
    assert!(err.0.contains("invalid_grant"), "{}", err.0);
    assert_eq!(posts(&log, "/token").len(), 2);
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .all(|(l, _)| !l.starts_with("GET /authorize") && !l.starts_with("POST /register")));
}

#[tokio::test]
async fn the_jwt_bearer_grant_needs_the_server_to_list_it() {
    let (base, log) = mock(Quirks {
        no_jwt_bearer: true,
        ..Quirks::default()
    })
    .await;
    let server = format!("{base}/mcp");
    let config = OAuthConfig::jwt_bearer(ClientCredentials::new("w", None), Secret::new("j"));
    let auth = OAuthAuthorizer::new(config).unwrap();
    assert!(matches!(
        auth.respond(unauthorized(&server)).await,
        Err(OAuthError::Unsupported(_))
    ));
    assert!(posts(&log, "/token").is_empty());
}

#[tokio::test]
async fn a_rotated_workload_token_is_read_again_when_the_token_expires() {
    let (base, log) = mock(Quirks {
        short_lived: true,
        ..Quirks::default()
    })
    .await;
    let server = format!("{base}/mcp");
    let dir = std::env::temp_dir().join(format!("mcp-rs-wif-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("token");
    std::fs::write(&path, "jwt-1\n").unwrap();
    let config = OAuthConfig::jwt_bearer(
        ClientCredentials::new("workload", None),
        FileAssertion::new(&path),
    );
    let auth = OAuthAuthorizer::new(config).unwrap();
    assert!(auth.challenge(unauthorized(&server)).await.unwrap());
    // The kubelet rotated the token; the access token (no refresh token) has expired: the
    // next request obtains a new one with the new JWT.
    std::fs::write(&path, "jwt-2").unwrap();
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok2")
    );
    let sent: Vec<String> = posts(&log, "/token")
        .iter()
        .map(|b| form_of(b).0["assertion"].clone())
        .collect();
    assert_eq!(sent, ["jwt-1", "jwt-2"]);

    // A token file that is gone: the error is the caller's, the expired token dropped.
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(auth.authorization().await.is_err());
    assert_eq!(posts(&log, "/token").len(), 2);
}

fn enterprise_authorizer(base: &str, id_token: &str) -> OAuthAuthorizer {
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        ClientCredentials::new("idp-client", None),
        Secret::new(id_token),
    );
    let client = ClientCredentials::new("mcp-client", Some("mcp secret".into()));
    OAuthAuthorizer::new(OAuthConfig::enterprise(client, idp)).unwrap()
}

#[tokio::test]
async fn enterprise_authorization_exchanges_the_id_token_then_presents_the_id_jag() {
    use base64::Engine;

    let (base, log) = mock(Quirks {
        basic_only: true,
        ..Quirks::default()
    })
    .await;
    let server = format!("{base}/mcp");
    let auth = enterprise_authorizer(&base, "the-id-token");
    assert!(auth.challenge(unauthorized(&server)).await.unwrap());

    let lines: Vec<String> = log.lock().unwrap().iter().map(|(l, _)| l.clone()).collect();
    assert_eq!(
        lines,
        [
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server",
            "POST /idp/token",
            "POST /token",
        ]
    );
    // RFC 8693 at the IdP: the ID token for an ID-JAG addressed to the authorization
    // server (its issuer) and the MCP server (its resource), as the public IdP client.
    let (exchange, idp_auth) = form_of(&posts(&log, "/idp/token")[0]);
    assert_eq!(
        exchange,
        params(&[
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange"
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag"
            ),
            ("audience", &base),
            ("resource", &server),
            ("scope", "a b"),
            ("subject_token", "the-id-token"),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token"
            ),
            ("client_id", "idp-client"),
        ])
    );
    assert_eq!(idp_auth, None);
    // RFC 7523 at the authorization server: the ID-JAG, client_secret_basic (what the
    // metadata lists) with the id and secret form-encoded.
    let (grant, as_auth) = form_of(&posts(&log, "/token")[0]);
    assert_eq!(
        grant,
        params(&[
            ("grant_type", JWT_BEARER),
            ("assertion", ID_JAG),
            ("scope", "a b"),
            ("resource", &server),
        ])
    );
    let basic = base64::engine::general_purpose::STANDARD.encode("mcp-client:mcp+secret");
    assert_eq!(as_auth, Some(format!("Basic {basic}")));
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok1")
    );
    let debug = format!("{auth:?}");
    assert!(!debug.contains("the-id-token") && !debug.contains("mcp secret"));
}

#[tokio::test]
async fn enterprise_tokens_are_renewed_with_a_new_exchange_and_refusals_surface() {
    let (base, log) = mock(Quirks {
        short_lived: true,
        ..Quirks::default()
    })
    .await;
    let server = format!("{base}/mcp");
    let auth = enterprise_authorizer(&base, "the-id-token");
    assert!(auth.challenge(unauthorized(&server)).await.unwrap());
    // Expired and no refresh token: both steps again.
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok2")
    );
    assert_eq!(posts(&log, "/idp/token").len(), 2);
    assert_eq!(posts(&log, "/token").len(), 2);
    // client_secret_post where the metadata lists only that.
    let (grant, as_auth) = form_of(&posts(&log, "/token")[1]);
    assert_eq!(grant["client_id"], "mcp-client");
    assert_eq!(grant["client_secret"], "mcp secret");
    assert_eq!(as_auth, None);

    // The IdP refuses the ID token: its error, and nothing sent to the authorization
    // server.
    let (base, log) = mock(Quirks::default()).await;
    let server = format!("{base}/mcp");
    let auth = enterprise_authorizer(&base, "revoked");
    match auth.respond(unauthorized(&server)).await {
        Err(OAuthError::Server {
            endpoint: "token exchange",
            error,
            ..
        }) => assert_eq!(error, "invalid_grant"),
        other => panic!("expected the IdP's invalid_grant, got {other:?}"),
    }
    assert_eq!(posts(&log, "/idp/token").len(), 1);
    assert!(posts(&log, "/token").is_empty());
}

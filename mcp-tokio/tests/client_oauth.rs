//! The OAuth client's pieces (`client::oauth`): challenge parsing, metadata URLs, PKCE,
//! scope selection, the `iss` and resource checks; and the whole authorizer against a small
//! in-process authorization server (the conformance suite's auth scenarios are the real
//! peer: `scripts/test-conformance.sh`).

#![cfg(feature = "oauth")]

use mcp_rs_tokio::client::auth::{Authorizer, Challenge};
use mcp_rs_tokio::client::oauth::challenge::BearerChallenge;
use mcp_rs_tokio::client::oauth::discovery::{
    check_resource, resource_metadata_urls, server_metadata_urls, ServerMetadata,
};
use mcp_rs_tokio::client::oauth::pkce::{self, Pkce};
use mcp_rs_tokio::client::oauth::{
    scope, AuthorizationResponse, ClientCredentials, HeadlessRedirect, OAuthAuthorizer,
    OAuthConfig, OAuthError, Secret, TokenEndpointAuth,
};
use serde_json::json;
use url::Url;

#[path = "common/oauth_server.rs"]
mod oauth_server;
use oauth_server::{claims_of, mock, Quirks};

#[test]
fn bearer_challenges_are_parsed() {
    let c = BearerChallenge::parse(
        r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp""#,
    )
    .unwrap();
    assert!(c.insufficient_scope());
    assert_eq!(c.scope.as_deref(), Some("mcp:read mcp:write"));
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://h/.well-known/oauth-protected-resource/mcp")
    );

    // Case-insensitive scheme and names, token values, escapes, other challenges around it.
    let c = BearerChallenge::parse(
        r#"Basic realm="a, b", DPoP algs="ES256", bearer Scope=files, error_description="say \"no\"""#,
    )
    .unwrap();
    assert_eq!(c.scope.as_deref(), Some("files"));
    assert_eq!(c.error_description.as_deref(), Some(r#"say "no""#));
    assert_eq!(c.resource_metadata, None);

    // A token68 before the Bearer challenge; a bare Bearer.
    let c = BearerChallenge::parse("Negotiate abc+/==, Bearer realm=x").unwrap();
    assert_eq!(c, BearerChallenge::default());
    assert_eq!(
        BearerChallenge::parse("Bearer"),
        Some(BearerChallenge::default())
    );

    // No Bearer challenge, garbage, an unterminated quote, too long.
    assert_eq!(BearerChallenge::parse(r#"Basic realm="x""#), None);
    assert_eq!(BearerChallenge::parse(""), None);
    assert_eq!(BearerChallenge::parse("=,=,\"\"\\"), None);
    let c = BearerChallenge::parse(r#"Bearer scope="a", error="unterminated"#).unwrap();
    assert_eq!(c.scope.as_deref(), Some("a"));
    assert_eq!(c.error, None);
    let long = format!("Bearer scope=\"{}\"", "a".repeat(9000));
    assert_eq!(BearerChallenge::parse(&long), None);
}

fn urls(list: Vec<Url>) -> Vec<String> {
    list.into_iter().map(String::from).collect()
}

#[test]
fn metadata_urls_follow_the_spec_order() {
    let server = Url::parse("https://h:8443/mcp/?x=1").unwrap();
    assert_eq!(
        urls(resource_metadata_urls(&server)),
        [
            "https://h:8443/.well-known/oauth-protected-resource/mcp",
            "https://h:8443/.well-known/oauth-protected-resource",
        ]
    );
    let root = Url::parse("https://h/").unwrap();
    assert_eq!(
        urls(resource_metadata_urls(&root)),
        ["https://h/.well-known/oauth-protected-resource"]
    );

    let issuer = Url::parse("https://as.example/tenant1").unwrap();
    assert_eq!(
        urls(server_metadata_urls(&issuer)),
        [
            "https://as.example/.well-known/oauth-authorization-server/tenant1",
            "https://as.example/.well-known/openid-configuration/tenant1",
            "https://as.example/tenant1/.well-known/openid-configuration",
        ]
    );
    let issuer = Url::parse("https://as.example").unwrap();
    assert_eq!(
        urls(server_metadata_urls(&issuer)),
        [
            "https://as.example/.well-known/oauth-authorization-server",
            "https://as.example/.well-known/openid-configuration",
        ]
    );
}

#[test]
fn the_resource_must_be_the_server_or_a_parent() {
    let server = Url::parse("https://h/api/mcp").unwrap();
    for ok in [
        "https://h/api/mcp",
        "https://h/api/mcp/",
        "https://h/api",
        "https://h",
        "https://H/",
    ] {
        assert!(check_resource(&server, ok).is_ok(), "{ok}");
    }
    for bad in [
        "https://evil.example.com/api/mcp",
        "http://h/api/mcp",
        "https://h:444/api/mcp",
        "https://h/ap",
        "https://h/api/mcp/more",
        "https://h/api/mcp#f",
        "not a url",
    ] {
        assert!(
            matches!(
                check_resource(&server, bad),
                Err(OAuthError::ResourceMismatch { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn pkce_is_s256() {
    // RFC 7636 Appendix B.
    let p = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
    assert_eq!(p.challenge(), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    assert_eq!(pkce::METHOD, "S256");
    let a = Pkce::generate().unwrap();
    let b = Pkce::generate().unwrap();
    assert_eq!(a.verifier().expose().len(), 43);
    assert_ne!(a.verifier(), b.verifier());
    assert_eq!(a.challenge(), pkce::s256(a.verifier().expose()));
    // Secrets stay out of Debug output.
    assert!(!format!("{a:?}").contains(a.verifier().expose()));
    assert_eq!(format!("{:?}", Secret::new("hunter2")), "Secret(…)");
}

#[test]
fn scopes_are_selected_in_order() {
    let supported = vec!["a".to_owned(), "b".to_owned()];
    assert_eq!(
        scope::select(Some("x y"), Some(&supported)).as_deref(),
        Some("x y")
    );
    assert_eq!(
        scope::select(None, Some(&supported)).as_deref(),
        Some("a b")
    );
    assert_eq!(
        scope::select(Some("  "), Some(&supported)).as_deref(),
        Some("a b")
    );
    assert_eq!(scope::select(None, None), None);
    assert_eq!(scope::select(None, Some(&[])), None);

    assert_eq!(
        scope::union(Some("a b"), Some("b c")).as_deref(),
        Some("a b c")
    );
    assert_eq!(scope::union(None, None), None);
    assert!(scope::covers(Some("a b c"), Some("c a")));
    assert!(!scope::covers(Some("a"), Some("a b")));
    assert!(scope::covers(None, None));

    let with_offline = vec!["a".to_owned(), "offline_access".to_owned()];
    assert_eq!(
        scope::with_offline_access(Some("a".into()), Some(&with_offline)).as_deref(),
        Some("a offline_access")
    );
    assert_eq!(
        scope::with_offline_access(Some("a".into()), Some(&supported)).as_deref(),
        Some("a")
    );
    assert_eq!(scope::with_offline_access(None, Some(&with_offline)), None);
}

#[test]
fn token_endpoint_auth_follows_the_metadata() {
    let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let choose = TokenEndpointAuth::choose;
    assert_eq!(choose(None, true), TokenEndpointAuth::ClientSecretBasic);
    assert_eq!(choose(None, false), TokenEndpointAuth::None);
    let post = list(&["client_secret_post"]);
    assert_eq!(
        choose(Some(&post), true),
        TokenEndpointAuth::ClientSecretPost
    );
    let both = list(&["none", "client_secret_basic"]);
    assert_eq!(
        choose(Some(&both), true),
        TokenEndpointAuth::ClientSecretBasic
    );
    let none = list(&["none"]);
    assert_eq!(choose(Some(&none), true), TokenEndpointAuth::None);
    let jwt = list(&["private_key_jwt"]);
    assert_eq!(choose(Some(&jwt), false), TokenEndpointAuth::None);
}

fn metadata(iss_supported: bool) -> ServerMetadata {
    serde_json::from_value(json!({
        "issuer": "https://as.example",
        "authorization_endpoint": "https://as.example/authorize",
        "token_endpoint": "https://as.example/token",
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": iss_supported,
    }))
    .unwrap()
}

#[test]
fn iss_is_compared_exactly() {
    let answer = |q: &str| {
        AuthorizationResponse::from_callback_url(&format!("http://localhost/cb?code=c&state=s{q}"))
            .unwrap()
    };
    let advertised = metadata(true);
    let silent = metadata(false);
    assert!(answer("&iss=https%3A%2F%2Fas.example")
        .check_issuer(&advertised)
        .is_ok());
    assert!(answer("&iss=https%3A%2F%2Fas.example")
        .check_issuer(&silent)
        .is_ok());
    assert!(answer("").check_issuer(&silent).is_ok());
    // Required when advertised; compared even when not; no normalization.
    assert!(answer("").check_issuer(&advertised).is_err());
    assert!(answer("&iss=https%3A%2F%2Fevil.example")
        .check_issuer(&silent)
        .is_err());
    assert!(answer("&iss=https%3A%2F%2Fas.example%2F")
        .check_issuer(&advertised)
        .is_err());
    assert!(answer("&iss=HTTPS%3A%2F%2Fas.example")
        .check_issuer(&advertised)
        .is_err());

    // The callback itself: an OAuth error, a missing code, a repeated parameter.
    let err =
        AuthorizationResponse::from_callback_url("http://localhost/cb?error=access_denied&state=s");
    assert!(matches!(err, Err(OAuthError::Server { ref error, .. }) if error == "access_denied"));
    assert!(AuthorizationResponse::from_callback_url("http://localhost/cb?state=s").is_err());
    assert!(AuthorizationResponse::from_callback_url("http://localhost/cb?code=a&code=b").is_err());
    let ok = answer("");
    assert_eq!(ok.code.expose(), "c");
    assert_eq!(ok.state.as_deref(), Some("s"));
}

#[test]
fn pkce_is_required() {
    let mut m = metadata(false);
    assert!(m.supports_s256());
    m.code_challenge_methods_supported = Some(vec!["plain".into()]);
    assert!(!m.supports_s256());
    m.code_challenge_methods_supported = None;
    assert!(!m.supports_s256());
}

// --- the whole flow against an in-process authorization server (common/oauth_server.rs) --

fn authorizer() -> OAuthAuthorizer {
    let redirect = HeadlessRedirect::new("http://127.0.0.1:1/callback").unwrap();
    OAuthAuthorizer::new(OAuthConfig::new(redirect)).unwrap()
}

fn query_of(entry: &str) -> std::collections::HashMap<String, String> {
    let target = entry.split(' ').nth(1).unwrap();
    Url::parse(&format!("http://x{target}"))
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

#[tokio::test]
async fn the_flow_registers_authorizes_steps_up_and_refreshes() {
    let (base, log) = mock(Quirks::default()).await;
    let server = format!("{base}/mcp");
    let auth = authorizer();
    assert_eq!(auth.authorization().await.unwrap(), None);

    // 401 without a resource_metadata: the path-aware well-known URL; scopes_supported.
    let ok = auth
        .challenge(Challenge {
            status: 401,
            www_authenticate: Some("Bearer"),
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap();
    assert!(ok);
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok1")
    );
    let entries = log.lock().unwrap().clone();
    let paths: Vec<&str> = entries
        .iter()
        .map(|(l, _)| l.split('?').next().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server",
            "POST /register",
            "GET /authorize",
            "POST /token",
        ]
    );
    let register: serde_json::Value = serde_json::from_str(&entries[2].1).unwrap();
    assert_eq!(register["application_type"], "native");
    assert_eq!(register["token_endpoint_auth_method"], "client_secret_post");
    assert_eq!(
        register["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    let q = query_of(&entries[3].0);
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["client_id"], "cid");
    assert_eq!(q["scope"], "a b offline_access");
    assert_eq!(q["resource"], server);
    let token = &entries[4].1;
    assert!(token.contains("grant_type=authorization_code"), "{token}");
    assert!(token.contains("client_secret=csecret"), "{token}");
    assert!(token.contains("code_verifier="), "{token}");
    assert!(token.contains(&format!(
        "resource={}",
        url::form_urlencoded::byte_serialize(server.as_bytes()).collect::<String>()
    )));

    // 403 insufficient_scope for a new scope: a second authorization for the union.
    let rm = format!("Bearer error=\"insufficient_scope\", scope=\"c\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
    assert!(auth
        .challenge(Challenge {
            status: 403,
            www_authenticate: Some(&rm),
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap());
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok2")
    );
    let entries = log.lock().unwrap().clone();
    let authorize = entries
        .iter()
        .rev()
        .find(|(l, _)| l.starts_with("GET /authorize"))
        .unwrap();
    assert_eq!(query_of(&authorize.0)["scope"], "a b offline_access c");

    // 403 for a scope already granted: not asked again; 403 without insufficient_scope: no.
    let again = "Bearer error=\"insufficient_scope\", scope=\"a\"";
    assert!(!auth
        .challenge(Challenge {
            status: 403,
            www_authenticate: Some(again),
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap());
    assert!(!auth
        .challenge(Challenge {
            status: 403,
            www_authenticate: None,
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap());

    // 401 with a refresh token: refreshed, not re-authorized.
    let before = log.lock().unwrap().len();
    assert!(auth
        .challenge(Challenge {
            status: 401,
            www_authenticate: Some("Bearer"),
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap());
    let entries = log.lock().unwrap().clone();
    assert!(entries[before..]
        .iter()
        .all(|(l, _)| !l.starts_with("GET /authorize")));
    assert!(entries
        .last()
        .unwrap()
        .1
        .contains("grant_type=refresh_token"));
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok3")
    );

    // Debug output of the authorizer shows no secret.
    let debug = format!("{auth:?}");
    for secret in ["tok3", "refresh-1", "csecret", "the-code"] {
        assert!(!debug.contains(secret), "{secret} in {debug}");
    }
}

#[tokio::test]
async fn pre_registered_credentials_use_the_advertised_method() {
    let (base, log) = mock(Quirks::default()).await;
    let server = format!("{base}/mcp");
    let redirect = HeadlessRedirect::new("http://127.0.0.1:1/callback").unwrap();
    let config = OAuthConfig::new(redirect).with_client(
        ClientCredentials::new("pre", Some("s3cret".into())),
        Some(base.clone()),
    );
    let auth = OAuthAuthorizer::new(config).unwrap();
    assert!(auth
        .challenge(Challenge {
            status: 401,
            www_authenticate: None,
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap());
    let entries = log.lock().unwrap().clone();
    assert!(entries
        .iter()
        .all(|(l, _)| !l.starts_with("POST /register")));
    let token = &entries.last().unwrap().1;
    assert!(
        token.contains("client_id=pre") && token.contains("client_secret=s3cret"),
        "{token}"
    );
}

#[tokio::test]
async fn bad_servers_are_refused_before_the_code_is_used() {
    for (quirks, what) in [
        (
            Quirks {
                wrong_metadata_issuer: true,
                ..Quirks::default()
            },
            "issuer",
        ),
        (
            Quirks {
                wrong_iss: true,
                ..Quirks::default()
            },
            "iss",
        ),
        (
            Quirks {
                no_s256: true,
                ..Quirks::default()
            },
            "S256",
        ),
    ] {
        let (base, log) = mock(quirks).await;
        let server = format!("{base}/mcp");
        let auth = authorizer();
        let err = auth
            .challenge(Challenge {
                status: 401,
                www_authenticate: None,
                resource: &server,
                dpop_nonce: None,
            })
            .await
            .unwrap_err();
        assert!(err.0.contains(what), "{what}: {}", err.0);
        let entries = log.lock().unwrap().clone();
        assert!(
            entries.iter().all(|(l, _)| !l.starts_with("POST /token")),
            "{what}"
        );
        assert_eq!(auth.authorization().await.unwrap(), None);
    }
}

#[tokio::test]
async fn a_mismatched_resource_stops_the_flow() {
    let (base, log) = mock(Quirks::default()).await;
    // The metadata names {base}/mcp; the server is elsewhere on the same host.
    let server = format!("{base}/other");
    let rm =
        format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
    let err = authorizer()
        .challenge(Challenge {
            status: 401,
            www_authenticate: Some(&rm),
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap_err();
    assert!(
        err.0.contains("protected-resource metadata is for"),
        "{}",
        err.0
    );
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn concurrent_refusals_authorize_once() {
    let (base, log) = mock(Quirks::default()).await;
    let server = format!("{base}/mcp");
    let auth = authorizer();
    let challenge = || Challenge {
        status: 401,
        www_authenticate: Some("Bearer"),
        resource: &server,
        dpop_nonce: None,
    };
    let (a, b, c) = tokio::join!(
        auth.challenge(challenge()),
        auth.challenge(challenge()),
        auth.challenge(challenge())
    );
    assert!(a.unwrap() && b.unwrap() && c.unwrap());
    let entries = log.lock().unwrap().clone();
    let authorizations = entries
        .iter()
        .filter(|(l, _)| l.starts_with("GET /authorize"))
        .count();
    assert_eq!(authorizations, 1);
    assert_eq!(
        auth.authorization().await.unwrap().as_deref(),
        Some("Bearer tok1")
    );
}

#[cfg(feature = "oauth-jwt")]
#[tokio::test]
async fn client_credentials_with_private_key_jwt() {
    use jsonwebtoken::{Algorithm, DecodingKey, Validation};

    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/auth");
    let private = std::fs::read_to_string(format!("{fixtures}/ec.key.pem")).unwrap();
    let public = std::fs::read(format!("{fixtures}/ec.pub.pem")).unwrap();
    let (base, log) = mock(Quirks::default()).await;
    let server = format!("{base}/mcp");
    let credentials = ClientCredentials::with_private_key_jwt("machine", private, "ES256");
    let auth = OAuthAuthorizer::new(OAuthConfig::client_credentials(credentials)).unwrap();
    assert!(auth
        .challenge(Challenge {
            status: 401,
            www_authenticate: None,
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap());
    let entries = log.lock().unwrap().clone();
    assert!(entries
        .iter()
        .all(|(l, _)| !l.starts_with("GET /authorize")));
    let form: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(entries.last().unwrap().1.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(
        form["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[base.as_str()]);
    validation.set_issuer(&["machine"]);
    let claims = jsonwebtoken::decode::<serde_json::Value>(
        &form["client_assertion"],
        &DecodingKey::from_ec_pem(&public).unwrap(),
        &validation,
    )
    .unwrap()
    .claims;
    assert_eq!(claims["sub"], "machine");
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 32));
    assert!(!format!("{auth:?}").contains("PRIVATE KEY"));

    // RSA keys are refused (signing with the `rsa` crate is not offered).
    let rsa = std::fs::read_to_string(format!("{fixtures}/rsa.key.pem")).unwrap();
    let credentials = ClientCredentials::with_private_key_jwt("machine", rsa, "RS256");
    let auth = OAuthAuthorizer::new(OAuthConfig::client_credentials(credentials)).unwrap();
    let err = auth
        .challenge(Challenge {
            status: 401,
            www_authenticate: None,
            resource: &server,
            dpop_nonce: None,
        })
        .await
        .unwrap_err();
    assert!(err.0.contains("unsupported"), "{}", err.0);
}

#[tokio::test]
async fn the_headless_redirect_takes_only_a_redirect_to_its_uri() {
    use mcp_rs_tokio::client::oauth::RedirectHandler;

    let (base, _log) = mock(Quirks::default()).await;
    let authorize = |redirect_uri: &str| {
        let mut url = Url::parse(&format!("{base}/authorize")).unwrap();
        url.query_pairs_mut()
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("state", "s1");
        url
    };
    let handler = HeadlessRedirect::new("http://127.0.0.1:1/callback").unwrap();
    let ok = handler
        .authorize(&authorize("http://127.0.0.1:1/callback"))
        .await
        .unwrap();
    assert_eq!(ok.code.expose(), "the-code");
    assert_eq!(ok.state.as_deref(), Some("s1"));
    assert_eq!(ok.iss.as_deref(), Some(base.as_str()));

    // A redirect elsewhere; an answer that is not a redirect.
    let elsewhere = handler
        .authorize(&authorize("http://127.0.0.1:2/callback"))
        .await;
    assert!(matches!(elsewhere, Err(OAuthError::Redirect(_))));
    let page = Url::parse(&format!("{base}/.well-known/oauth-protected-resource/mcp")).unwrap();
    assert!(matches!(
        handler.authorize(&page).await,
        Err(OAuthError::Redirect(_))
    ));
}

#[cfg(feature = "oauth-dpop")]
mod dpop {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use mcp_rs_tokio::client::oauth::dpop::{htu, DpopKey, NonceFor, MAX_NONCE_LEN};
    use sha2::{Digest, Sha256};

    fn header_of(jwt: &str) -> serde_json::Value {
        let part = jwt.split('.').next().unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    /// The proof's signature verifies with the key in its own header (ES256).
    fn verify(jwt: &str) {
        let jwk = &header_of(jwt)["jwk"];
        let key = jsonwebtoken::DecodingKey::from_ec_components(
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap(),
        )
        .unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        jsonwebtoken::decode::<serde_json::Value>(jwt, &key, &validation).unwrap();
    }

    #[test]
    fn a_proof_carries_htm_htu_iat_jti_and_ath_and_verifies() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof(
                "POST",
                "https://rs.example/mcp?x=1#f",
                Some("tok"),
                NonceFor::Resource,
            )
            .unwrap();
        verify(&proof);
        let header = header_of(&proof);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["kty"], "EC");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert!(
            header["jwk"].get("d").is_none(),
            "no private key in the header"
        );
        let claims = claims_of(&proof);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(claims["iat"].as_u64().unwrap().abs_diff(now) < 5);
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok"))
        );
        assert!(claims.get("nonce").is_none());
        // Fresh: another proof has another jti; a token request has no ath.
        let other = key
            .proof(
                "POST",
                "https://as.example/token",
                None,
                NonceFor::AuthorizationServer,
            )
            .unwrap();
        assert_ne!(claims_of(&other)["jti"], claims["jti"]);
        assert!(claims_of(&other).get("ath").is_none());
        assert!(!format!("{key:?}").contains(claims["jti"].as_str().unwrap()));
        assert_eq!(htu("https://a.example/p#x"), "https://a.example/p");
    }

    #[test]
    fn the_thumbprint_is_rfc_7638() {
        let key = DpopKey::generate().unwrap();
        let jwk = key.jwk();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        assert_eq!(
            key.thumbprint(),
            URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
        );
        assert_eq!(key.thumbprint().len(), 43);
        assert!(format!("{key:?}").contains(&key.thumbprint()));
    }

    #[test]
    fn nonces_are_kept_per_server_and_bounded() {
        let key = DpopKey::generate().unwrap();
        assert!(key.set_nonce(NonceFor::Resource, "n1"));
        assert!(
            !key.set_nonce(NonceFor::Resource, "n1"),
            "the same nonce: no retry"
        );
        assert!(!key.set_nonce(NonceFor::Resource, &"n".repeat(MAX_NONCE_LEN + 1)));
        assert!(!key.set_nonce(NonceFor::Resource, "bad nonce"));
        assert_eq!(key.nonce(NonceFor::Resource).as_deref(), Some("n1"));
        assert_eq!(key.nonce(NonceFor::AuthorizationServer), None);
        let proof = key
            .proof("GET", "https://rs/mcp", Some("t"), NonceFor::Resource)
            .unwrap();
        assert_eq!(claims_of(&proof)["nonce"], "n1");
    }

    #[tokio::test]
    async fn dpop_tokens_come_after_the_as_nonce_and_requests_retry_on_the_rs_nonce() {
        let (base, log) = mock(Quirks {
            dpop_nonce: true,
            ..Quirks::default()
        })
        .await;
        let server = format!("{base}/mcp");
        let redirect = HeadlessRedirect::new("http://127.0.0.1:1/callback").unwrap();
        let auth = OAuthAuthorizer::new(OAuthConfig::new(redirect).with_dpop(true)).unwrap();
        assert!(auth
            .request_headers("POST", &server)
            .await
            .unwrap()
            .is_empty());
        assert!(auth
            .challenge(Challenge {
                status: 401,
                www_authenticate: Some("DPoP"),
                resource: &server,
                dpop_nonce: None,
            })
            .await
            .unwrap());
        // The token endpoint: a proof, refused for its missing nonce, then one with it.
        let entries = log.lock().unwrap().clone();
        let proofs: Vec<&String> = entries
            .iter()
            .filter(|(l, _)| l == "DPOP /token")
            .map(|(_, p)| p)
            .collect();
        assert_eq!(proofs.len(), 2, "{entries:?}");
        assert!(claims_of(proofs[0]).get("nonce").is_none());
        assert_eq!(claims_of(proofs[1])["nonce"], "as-nonce");
        assert_eq!(claims_of(proofs[1])["htu"], format!("{base}/token"));
        verify(proofs[1]);

        // The MCP request: the DPoP scheme and a proof bound to the method, URL and token.
        let headers = auth.request_headers("POST", &server).await.unwrap();
        assert_eq!(
            headers[0],
            ("authorization".to_owned(), "DPoP tok1".to_owned())
        );
        assert_eq!(headers[1].0, "dpop");
        let claims = claims_of(&headers[1].1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], server);
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok1"))
        );

        // use_dpop_nonce from the MCP server: retry (once per new nonce) with it.
        let nonce_challenge = |nonce| Challenge {
            status: 401,
            www_authenticate: Some("DPoP error=\"use_dpop_nonce\""),
            resource: &server,
            dpop_nonce: Some(nonce),
        };
        assert!(auth.challenge(nonce_challenge("rs-nonce")).await.unwrap());
        let headers = auth.request_headers("GET", &server).await.unwrap();
        assert_eq!(claims_of(&headers[1].1)["nonce"], "rs-nonce");
        assert_eq!(claims_of(&headers[1].1)["htm"], "GET");
        assert!(!auth.challenge(nonce_challenge("rs-nonce")).await.unwrap());
        assert!(!format!("{auth:?}").contains("tok1"));
    }
}

#[test]
fn dpop_challenges_are_read_when_there_is_no_bearer_one() {
    let c =
        BearerChallenge::parse(r#"DPoP error="use_dpop_nonce", resource_metadata="https://h/m""#)
            .unwrap();
    assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
    assert_eq!(c.resource_metadata.as_deref(), Some("https://h/m"));
    let c = BearerChallenge::parse(r#"DPoP error="use_dpop_nonce", Bearer scope="s""#).unwrap();
    assert_eq!(c.error, None);
    assert_eq!(c.scope.as_deref(), Some("s"));
}

//! Which scopes to ask for (MCP scope selection strategy; SEP-2207 `offline_access`;
//! SEP-2350 union on re-authorization). Scopes are space-separated strings; order is kept,
//! duplicates dropped.

/// The scope that asks the authorization server for a refresh token.
pub const OFFLINE_ACCESS: &str = "offline_access";

/// The scopes of a first authorization: the challenge's `scope` if it has one, else the
/// protected-resource metadata's `scopes_supported`, else none (the parameter is omitted).
pub fn select(
    challenge_scope: Option<&str>,
    scopes_supported: Option<&[String]>,
) -> Option<String> {
    if let Some(s) = challenge_scope.filter(|s| !s.trim().is_empty()) {
        return join(split(s));
    }
    scopes_supported.and_then(|list| join(list.iter().map(String::as_str)))
}

/// `previous` and `more`, each scope once (a step-up keeps what was granted).
pub fn union(previous: Option<&str>, more: Option<&str>) -> Option<String> {
    join(split(previous.unwrap_or("")).chain(split(more.unwrap_or(""))))
}

/// Whether every scope of `wanted` is in `held`.
pub fn covers(held: Option<&str>, wanted: Option<&str>) -> bool {
    let held: Vec<&str> = split(held.unwrap_or("")).collect();
    split(wanted.unwrap_or("")).all(|s| held.contains(&s))
}

/// `scope` plus `offline_access` when the authorization server lists it in its
/// `scopes_supported` (and only then: SEP-2207) and other scopes are asked for.
pub fn with_offline_access(
    scope: Option<String>,
    as_scopes_supported: Option<&[String]>,
) -> Option<String> {
    let supported = as_scopes_supported.is_some_and(|l| l.iter().any(|s| s == OFFLINE_ACCESS));
    match scope {
        Some(s) if supported => union(Some(&s), Some(OFFLINE_ACCESS)),
        other => other,
    }
}

fn split(s: &str) -> impl Iterator<Item = &str> {
    s.split([' ', '\t']).filter(|p| !p.is_empty())
}

fn join<'a>(parts: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for p in parts {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    (!seen.is_empty()).then(|| seen.join(" "))
}

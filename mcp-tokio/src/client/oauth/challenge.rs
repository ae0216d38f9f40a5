//! The server's `WWW-Authenticate` header (RFC 9110 §11.6.1): the `Bearer` challenge's
//! parameters (RFC 6750 §3, RFC 9728 §5.1).

/// Longest `WWW-Authenticate` value parsed; a longer one is treated as absent.
pub const MAX_HEADER_LEN: usize = 8 * 1024;

/// The parameters of a `Bearer` challenge that the flow uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `resource_metadata`: where the protected-resource metadata is (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The `Bearer` challenge in a `WWW-Authenticate` value (which may hold several
    /// challenges, e.g. `Basic realm="x", Bearer scope="a"`), if there is one; without one,
    /// the `DPoP` challenge (RFC 9449 §7.1: the same parameters), if there is one. Parameter
    /// names and the scheme are matched case-insensitively; quoted values are unescaped.
    /// Malformed input ends the parse; whatever was read before it is kept.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        if header.len() > MAX_HEADER_LEN {
            return None;
        }
        let mut parser = Parser {
            s: header.as_bytes(),
            i: 0,
        };
        let mut found = None;
        let mut dpop = None;
        while let Some(scheme) = parser.scheme() {
            let params = parser.params();
            let target = if scheme.eq_ignore_ascii_case("bearer") {
                &mut found
            } else if scheme.eq_ignore_ascii_case("dpop") {
                &mut dpop
            } else {
                continue;
            };
            if target.is_none() {
                let mut c = BearerChallenge::default();
                for (name, value) in params {
                    let slot = match name.to_ascii_lowercase().as_str() {
                        "resource_metadata" => &mut c.resource_metadata,
                        "scope" => &mut c.scope,
                        "error" => &mut c.error,
                        "error_description" => &mut c.error_description,
                        _ => continue,
                    };
                    if slot.is_none() {
                        *slot = Some(value);
                    }
                }
                *target = Some(c);
            }
        }
        found.or(dpop)
    }

    /// Whether this is a 403's `insufficient_scope`.
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl Parser<'_> {
    fn skip(&mut self, commas: bool) {
        while let Some(&b) = self.s.get(self.i) {
            if b == b' ' || b == b'\t' || (commas && b == b',') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(|&b| tchar(b)) {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// The next challenge's scheme, or `None` at the end (or at garbage).
    fn scheme(&mut self) -> Option<String> {
        self.skip(true);
        self.token()
    }

    /// The challenge's `name=value` parameters; a token68 is skipped. Stops before the next
    /// challenge's scheme.
    fn params(&mut self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        loop {
            self.skip(true);
            let start = self.i;
            let Some(name) = self.token() else {
                // Not a parameter: a token68 (`abc/+==`) or garbage. Skip to the next comma.
                while self.s.get(self.i).is_some_and(|&b| b != b',') {
                    self.i += 1;
                }
                if self.i >= self.s.len() || self.i == start {
                    return out;
                }
                continue;
            };
            self.skip(false);
            if self.s.get(self.i) != Some(&b'=') {
                // A bare token: the next challenge's scheme.
                self.i = start;
                return out;
            }
            self.i += 1;
            // A value that is neither quoted nor a token (`abc==`, a token68) is skipped below.
            self.skip(false);
            let value = if self.s.get(self.i) == Some(&b'"') {
                self.i += 1;
                let mut v = Vec::new();
                loop {
                    match self.s.get(self.i) {
                        None => return out, // unterminated: malformed
                        Some(b'"') => {
                            self.i += 1;
                            break;
                        }
                        Some(b'\\') => {
                            if let Some(&c) = self.s.get(self.i + 1) {
                                v.push(c);
                            }
                            self.i += 2;
                        }
                        Some(&c) => {
                            v.push(c);
                            self.i += 1;
                        }
                    }
                }
                String::from_utf8_lossy(&v).into_owned()
            } else {
                match self.token() {
                    Some(v) => v,
                    None => {
                        while self.s.get(self.i).is_some_and(|&b| b != b',') {
                            self.i += 1;
                        }
                        continue;
                    }
                }
            };
            out.push((name, value));
        }
    }
}

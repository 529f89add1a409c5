//! The endpoint rule: which `baseUrl` a model (or any URL that may carry a key) may be called
//! at — an absolute `http(s)` URL with a host and no user info, plain `http` only to loopback
//! (`127.0.0.0/8`, `::1`, `localhost`) unless allowed — and the demo model's one address.
//! A village's templates (`village`) and the LLM client (`llm`, again before sending) both keep
//! it, so it sits on the ground floor below both.

/// How a template's endpoint is reached, when the rule allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointSecurity {
    /// `https`.
    Tls,
    /// Plain `http` to a loopback host.
    Loopback,
    /// Plain `http` to another host, allowed by `allowInsecureHttp` (warned).
    InsecureAllowed,
}

/// Why a template's `baseUrl` may not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointProblem {
    /// Not an absolute http(s) URL with a host.
    #[error("baseUrl {why}")]
    Invalid {
        /// What is wrong (never the URL's user info).
        why: String,
    },
    /// A `demo` template's `baseUrl` is not exactly `http://127.0.0.1:<port>/v1`
    /// ([`demo_port`]); code `ENDPOINT_INVALID`.
    #[error("baseUrl {why}")]
    Demo {
        /// What is wrong.
        why: String,
    },
    /// Plain `http` to a host that is not loopback, without `allowInsecureHttp`.
    #[error("baseUrl sends the API key in clear text to {host} (plain http)")]
    Insecure {
        /// The host.
        host: String,
    },
}

impl EndpointProblem {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invalid { .. } | Self::Demo { .. } => "ENDPOINT_INVALID",
            Self::Insecure { .. } => "ENDPOINT_INSECURE",
        }
    }
}

impl crate::error::Coded for EndpointProblem {
    fn code(&self) -> &'static str {
        Self::code(self)
    }
}

/// The endpoint rule on a URL (a template applies it, with its demo case, in
/// `ModelTemplate::endpoint_security`).
pub fn endpoint_security(
    base_url: &str,
    allow_insecure_http: bool,
) -> Result<EndpointSecurity, EndpointProblem> {
    let invalid = |why: &str| EndpointProblem::Invalid { why: why.into() };
    let url = reqwest::Url::parse(base_url.trim())
        .map_err(|_| invalid("is not an absolute URL (https://host/…)"))?;
    // The URL parser normalises the host: domains lower-cased, IPv4 in dotted form (`0x7f.1`
    // → `127.0.0.1`), IPv6 in brackets.
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| invalid("has no host"))?
        .to_owned();
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "holds a user name or password: keep credentials in the secret store, not in world.json",
        ));
    }
    match url.scheme() {
        "https" => Ok(EndpointSecurity::Tls),
        "http" if is_loopback(&host) => Ok(EndpointSecurity::Loopback),
        "http" if allow_insecure_http => Ok(EndpointSecurity::InsecureAllowed),
        "http" => Err(EndpointProblem::Insecure { host }),
        _ => Err(invalid(
            "must start with https:// (or http:// to this machine)",
        )),
    }
}

/// The one rule for a `demo` template's `baseUrl`, used by the endpoint rule (`check`, the LLM
/// client) and by the host's boot that starts the demo model: exactly
/// `http://127.0.0.1:<port 1..65535>/v1`, compared as written (no other spelling of the
/// address, no `localhost`, no other path, query or fragment). Gives the port.
pub fn demo_port(base_url: &str) -> Result<u16, EndpointProblem> {
    let port = base_url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/v1"))
        .and_then(|port| {
            let parsed = port.parse::<u16>().ok().filter(|p| *p != 0)?;
            (parsed.to_string() == port).then_some(parsed)
        });
    port.ok_or_else(|| EndpointProblem::Demo {
        why: format!("of a demo template must be {DEMO_BASE_URL_FORM} exactly (port 1-65535): the demo model listens only there and never leaves this machine"),
    })
}

/// The form [`demo_port`] accepts, for messages and fixes.
pub const DEMO_BASE_URL_FORM: &str = "http://127.0.0.1:<port>/v1";

/// The scheme, host and port of `base_url` when its host is this machine's loopback
/// (`http://127.0.0.1:8080`), for the places that must warn that it means another machine
/// elsewhere (a container).
pub fn loopback_origin(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url.trim()).ok()?;
    is_loopback(url.host_str()?).then(|| url.origin().ascii_serialization())
}

/// `localhost`, `127.0.0.0/8` or `::1` (a host as the URL parser normalised it).
fn is_loopback(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_rule() {
        use EndpointSecurity::*;
        let ok = |u: &str| endpoint_security(u, false);
        assert_eq!(ok("https://api.openai.com/v1"), Ok(Tls));
        for lo in [
            "http://127.0.0.1:11434/v1",
            "http://127.9.8.7/v1",
            "http://[::1]:8080/v1",
            "http://LOCALHOST:1234",
            "http://0x7f.1/v1",
        ] {
            assert_eq!(ok(lo), Ok(Loopback), "{lo}");
        }
        for bad in [
            "not a url",
            "file:///etc/passwd",
            "ftp://x/y",
            "",
            "http://",
            "/v1",
            "https://",
            "https://user:secret@api.example.com/v1",
            "https://sk-token@api.example.com/v1",
            "http://user:pw@127.0.0.1:8080/v1",
        ] {
            assert_eq!(
                ok(bad).map_err(|e| e.code()),
                Err("ENDPOINT_INVALID"),
                "{bad}"
            );
        }
        for lan in [
            "http://192.168.1.20:11434/v1",
            "http://localhost.evil.example/v1",
            "http://127.0.0.1.nip.io/v1",
            "http://[::2]/v1",
        ] {
            assert_eq!(
                ok(lan).map_err(|e| e.code()),
                Err("ENDPOINT_INSECURE"),
                "{lan}"
            );
            assert_eq!(endpoint_security(lan, true), Ok(InsecureAllowed), "{lan}");
        }
        let e = ok("http://user:pw@10.0.0.1/v1").unwrap_err();
        assert!(
            !e.to_string().contains("pw"),
            "no user info in the error: {e}"
        );
    }
}

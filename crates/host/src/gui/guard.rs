//! What every request to the GUI must show, checked before any route runs: a loopback `Host`
//! (against DNS rebinding; any port, so that an SSH tunnel works), the session cookie — got by
//! exchanging the launch token (`GET /?token=T` → 303 to `/` with an `HttpOnly;
//! SameSite=Strict` cookie of its own random value, named after the port; `gui`'s random token
//! works once) —, and on every `POST` an `Origin` equal to
//! `http://` + that `Host`. Secrets are compared as SHA-256 digests in constant time. Every
//! answer gets the security headers (a strict Content-Security-Policy among them).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::error::ApiError;

/// The session cookie's name.
pub const COOKIE: &str = "fuseforks_gui";

/// The policy of every answer: our own files only, nothing inline, no frames, no plugins.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The two secrets of one launch, as digests.
pub struct Keys {
    token: [u8; 32],
    session: [u8; 32],
    /// The cookie's value (sent at the exchange).
    session_value: String,
    /// The cookie's name: [`COOKIE`] and the port, so that two GUIs on this machine (whose
    /// cookies the browser scopes by host, not port) never overwrite each other's.
    cookie_name: String,
    /// The token works for one exchange only (`gui`'s random launch token, which may have
    /// been on a command line or in a history); else for every exchange (`serve
    /// --gui-port`'s secret `gui_token`).
    once: bool,
    spent: std::sync::atomic::AtomicBool,
}

impl Keys {
    /// Keys for the launch token `token` on `port`, and a fresh random session value.
    pub fn new(token: &str, port: u16, once: bool) -> Self {
        let session_value = random_secret();
        Self {
            token: digest(token),
            session: digest(&session_value),
            session_value,
            cookie_name: format!("{COOKIE}_{port}"),
            once,
            spent: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// 256 random bits as hex (two v4 UUIDs, 244 random bits: enough against guessing).
pub fn random_secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

fn same(shown: Option<&str>, expected: &[u8; 32]) -> bool {
    let Some(shown) = shown else {
        return false;
    };
    digest(shown).ct_eq(expected).into()
}

/// The guard, as axum middleware.
pub(super) async fn admit(State(keys): State<Arc<Keys>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let Some(host) = loopback_host(headers) else {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "GUI_HOST_FORBIDDEN",
            "Host must be a loopback name (127.0.0.1, localhost or [::1])",
        )
        .with_fix(
            "open the URL that fuseforks-cli printed, on this machine or through an SSH tunnel",
        )
        .into_response();
    };
    if request.method() == Method::GET
        && request.uri().path() == "/"
        && let Some(token) = query_token(request.uri().query())
    {
        return exchange(&keys, &token);
    }
    if !same(cookie(headers, &keys.cookie_name).as_deref(), &keys.session) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "GUI_UNAUTHORIZED",
            "this page needs the link with the token that fuseforks-cli printed",
        )
        .with_fix("open the URL from the first line fuseforks-cli gui printed (it holds ?token=…)")
        .into_response();
    }
    if request.method() != Method::GET
        && request.method() != Method::HEAD
        && !same_origin(headers, &host)
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "GUI_ORIGIN_FORBIDDEN",
            "a change must come from the GUI's own page (Origin must match Host)",
        )
        .into_response();
    }
    next.run(request).await
}

/// The token exchange: the right token gives the cookie and a redirect to `/` (so the token
/// leaves the address bar); a wrong one is 401.
fn exchange(keys: &Keys, token: &str) -> Response {
    use std::sync::atomic::Ordering;
    let token = percent_decode(token);
    if !same(Some(&token), &keys.token) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "GUI_UNAUTHORIZED",
            "the token in the link is not this launch's",
        )
        .with_fix("open the URL fuseforks-cli printed this time (each launch has its own token)")
        .into_response();
    }
    if keys.once && keys.spent.swap(true, Ordering::SeqCst) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "GUI_TOKEN_USED",
            "this launch's link was used already (it works once)",
        )
        .with_fix("use the browser tab it opened, or start fuseforks-cli gui again for a new link")
        .into_response();
    }
    let cookie = format!(
        "{}={}; HttpOnly; SameSite=Strict; Path=/",
        keys.cookie_name, keys.session_value
    );
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// The `Host` header when it names a loopback host (returned as sent, lower-cased).
fn loopback_host(headers: &HeaderMap) -> Option<String> {
    let mut all = headers.get_all(header::HOST).iter();
    let host = all.next()?.to_str().ok()?.to_ascii_lowercase();
    if all.next().is_some() {
        return None;
    }
    crate::door::authority_is_loopback(&host).then_some(host)
}

/// Exactly one `Origin`, equal to `http://<host>`.
fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    let mut all = headers.get_all(header::ORIGIN).iter();
    let (Some(origin), None) = (all.next(), all.next()) else {
        return false;
    };
    origin
        .to_str()
        .is_ok_and(|o| o.eq_ignore_ascii_case(&format!("http://{host}")))
}

/// `token=` of a query string (the first one).
fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .map(str::to_owned)
}

/// The session cookie's value, from any `Cookie` header.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    let prefix = format!("{name}=");
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(&prefix).map(str::to_owned))
}

/// `%XX` sequences decoded (a token with `&`, `+` or `%` written into a link), `+` kept.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
    while i < bytes.len() {
        match (bytes[i], hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
            (b'%', Some(h), Some(l)) => {
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Adds the security headers to an answer (API answers are never cached).
pub(super) async fn secure_headers(request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if api {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{percent_decode, query_token, same_origin};
    use axum::http::{HeaderMap, HeaderValue, header};

    #[test]
    fn the_origin_must_be_the_hosts_own() {
        let mut h = HeaderMap::new();
        assert!(!same_origin(&h, "127.0.0.1:5"), "absent");
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:5"),
        );
        assert!(same_origin(&h, "127.0.0.1:5"));
        assert!(!same_origin(&h, "127.0.0.1:6"));
        h.append(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:5"),
        );
        assert!(!same_origin(&h, "127.0.0.1:5"), "two");
        assert_eq!(query_token(Some("a=1&token=xyz")).as_deref(), Some("xyz"));
        assert_eq!(query_token(Some("tokens=1")), None);
        assert_eq!(percent_decode("a%26b%2Bc+d%zz"), "a&b+c+d%zz");
    }
}

//! Which proxy a model or MCP call takes: the environment's (`HTTPS_PROXY`, `HTTP_PROXY`,
//! `ALL_PROXY`, with `NO_PROXY`), read once when the client is built — and never one for a
//! loopback host, so a local server, Ollama or the demo model is reached directly even for a
//! user behind a company proxy (reqwest's own environment proxy has no such exemption).

/// Hosts that are never proxied, added to the environment's `NO_PROXY`.
const LOOPBACK: &str = "localhost,127.0.0.0/8,::1";

/// A proxy variable's value: the lower-case spelling first (as curl), then the upper-case
/// one; blank counts as unset.
fn var(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    [name.to_ascii_lowercase(), name.to_owned()]
        .iter()
        .filter_map(|n| env(n))
        .map(|v| v.trim().to_owned())
        .find(|v| !v.is_empty())
}

/// The `NO_PROXY` list in effect: the environment's plus loopback.
fn exempt(env: &dyn Fn(&str) -> Option<String>) -> Option<reqwest::NoProxy> {
    let list = match var(env, "NO_PROXY") {
        Some(user) => format!("{user},{LOOPBACK}"),
        None => LOOPBACK.to_owned(),
    };
    reqwest::NoProxy::from_string(&list)
}

/// `builder` with the environment's proxies, loopback exempt; no proxy at all when none is
/// set. A proxy URL that does not parse is skipped (as reqwest's own environment lookup does).
pub(crate) fn configure(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    configure_from(builder, &|name| std::env::var(name).ok())
}

fn configure_from(
    builder: reqwest::ClientBuilder,
    env: &dyn Fn(&str) -> Option<String>,
) -> reqwest::ClientBuilder {
    type Make = fn(String) -> reqwest::Result<reqwest::Proxy>;
    let kinds: [(&str, Make); 3] = [
        ("HTTPS_PROXY", |u| reqwest::Proxy::https(u)),
        ("HTTP_PROXY", |u| reqwest::Proxy::http(u)),
        ("ALL_PROXY", |u| reqwest::Proxy::all(u)),
    ];
    let mut builder = builder.no_proxy();
    for (name, make) in kinds {
        if let Some(Ok(proxy)) = var(env, name).map(make) {
            builder = builder.proxy(proxy.no_proxy(exempt(env)));
        }
    }
    builder
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A one-request HTTP server: the request line it saw.
    fn one_request(listener: TcpListener) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut rest = String::new();
            while reader.read_line(&mut rest).unwrap() > 2 {
                rest.clear();
            }
            let mut stream = stream;
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .unwrap();
            line.trim().to_owned()
        })
    }

    #[tokio::test]
    async fn a_remote_host_goes_through_the_proxy_and_loopback_never_does() {
        let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
        let direct = TcpListener::bind("127.0.0.1:0").unwrap();
        let direct_url = format!("http://{}/v1/models", direct.local_addr().unwrap());
        let env = move |name: &str| (name == "http_proxy").then(|| proxy_url.clone());
        let _ = rustls::crypto::ring::default_provider().install_default();
        let builder = reqwest::Client::builder().timeout(std::time::Duration::from_secs(5));
        let client = super::configure_from(builder, &env).build().unwrap();
        let seen_by_proxy = one_request(proxy);
        let seen_direct = one_request(direct);
        client
            .get("http://models.example.invalid/v1/models")
            .send()
            .await
            .unwrap();
        client.get(&direct_url).send().await.unwrap();
        assert_eq!(
            seen_by_proxy.join().unwrap(),
            "GET http://models.example.invalid/v1/models HTTP/1.1"
        );
        assert_eq!(seen_direct.join().unwrap(), "GET /v1/models HTTP/1.1");
    }
}

//! Where a request may come from (DNS rebinding, DESIGN §10): a browser's
//! `Origin`, or without one the `Host`, must be loopback or an origin the
//! server allows.

/// An origin as compared: lower case, no trailing slash.
pub(super) fn normalize_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Whether a request comes from where this server may be called from: its
/// `Origin` (a browser's page), or without one its `Host`, is loopback or
/// one of `allowed` (normalized origins). A request with neither is refused.
pub(super) fn origin_admitted(headers: &http::HeaderMap, allowed: &[String]) -> bool {
    if let Some(origin) = headers.get(http::header::ORIGIN) {
        let Ok(origin) = origin.to_str() else { return false };
        let origin = normalize_origin(origin);
        if allowed.contains(&origin) {
            return true;
        }
        return match origin.split_once("://") {
            Some(("http" | "https", authority)) => is_loopback(authority),
            _ => false,
        };
    }
    let Some(host) = headers.get(http::header::HOST).and_then(|h| h.to_str().ok()) else { return false };
    // Lower-cased only when it is not already (no copy on every request).
    let host = host.trim();
    let host: std::borrow::Cow<'_, str> = if host.bytes().any(|b| b.is_ascii_uppercase()) { host.to_ascii_lowercase().into() } else { host.into() };
    is_loopback(&host) || allowed.iter().any(|a| a.split_once("://").is_some_and(|(_, authority)| authority == host))
}

/// Whether an authority (`host[:port]`) names this machine's loopback.
fn is_loopback(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((host, port)) if port.is_empty() || port.strip_prefix(':').is_some_and(is_port) => host,
            _ => return false,
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => authority,
        },
    };
    // The common names first: parsing an address is most of this check's cost.
    matches!(host, "localhost" | "127.0.0.1" | "::1") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn is_port(text: &str) -> bool {
    !text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_loopback_or_listed_origins_are_admitted() {
        let allowed = vec![super::normalize_origin("https://App.example.com/")];
        let admitted = |origin: Option<&str>, host: Option<&str>| {
            let mut headers = http::HeaderMap::new();
            if let Some(origin) = origin {
                headers.insert(http::header::ORIGIN, origin.parse().unwrap());
            }
            if let Some(host) = host {
                headers.insert(http::header::HOST, host.parse().unwrap());
            }
            super::origin_admitted(&headers, &allowed)
        };
        for origin in ["http://localhost:3000", "http://127.0.0.1", "https://127.8.9.10:8443", "http://[::1]:80", "https://app.example.com"] {
            assert!(admitted(Some(origin), Some("evil.example")), "{origin}");
        }
        for origin in ["http://evil.example", "http://localhost.evil.example", "http://127.0.0.1.evil.example", "null", "file://", "http://localhost:x", "https://app.example.com:444"] {
            assert!(!admitted(Some(origin), Some("127.0.0.1:80")), "{origin}");
        }
        for host in ["127.0.0.1:8931", "127.0.0.1", "localhost", "[::1]:8931", "[::1]", "127.1.2.3:80", "app.example.com"] {
            assert!(admitted(None, Some(host)), "{host}");
        }
        for host in ["evil.example:8931", "10.0.0.1:80", "[::2]:80", "localhost:80:80", "127.0.0.1.evil.example", "::1"] {
            assert!(!admitted(None, Some(host)), "{host}");
        }
        assert!(!admitted(None, None), "neither Origin nor Host");
    }
}

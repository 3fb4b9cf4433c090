//! `web`: HTTP with `ureq`. This build speaks plain HTTP only (no TLS stack
//! is compiled in); an `https://` URL fails with a clear error.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use capspec::{CapError, CapResult, Run, capability};

use crate::generated::web as spec;
use crate::workspace::Workspace;

fn agent(timeout_ms: i64) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_millis(timeout_ms.max(1) as u64)))
        .http_status_as_error(false)
        .build()
        .new_agent()
}

fn http_error(url: &str, e: ureq::Error) -> CapError {
    CapError::new(format!("request to {url} failed: {e}"))
}

/// A response: status, headers, the body read (at most the limit), and
/// whether the body was cut at the limit.
type Response = (u16, BTreeMap<String, String>, Vec<u8>, bool);

/// GET `url`, reading at most `max` bytes of the body.
fn get(url: &str, headers: &BTreeMap<String, String>, max: usize, timeout_ms: i64) -> CapResult<Response> {
    let mut request = agent(timeout_ms).get(url);
    for (k, v) in headers {
        request = request.header(k, v);
    }
    let mut response = request.call().map_err(|e| http_error(url, e))?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let mut body = Vec::new();
    response.body_mut().as_reader().take(max as u64 + 1).read_to_end(&mut body)?;
    let truncated = body.len() > max;
    body.truncate(max);
    Ok((status, headers, body, truncated))
}

#[capability(spec::fetch_url)]
async fn fetch_url(_run: &Run, args: spec::fetch_url::Args) -> CapResult<spec::fetch_url::Output> {
    let (status, headers, body, truncated) = get(
        &args.url,
        &args.headers.unwrap_or_default(),
        args.max_bytes.max(1) as usize,
        args.timeout_ms,
    )?;
    Ok(spec::fetch_url::Response { status: i64::from(status), headers, body: String::from_utf8_lossy(&body).into_owned(), truncated })
}

#[capability(spec::extract_links)]
async fn extract_links(_run: &Run, args: spec::extract_links::Args) -> CapResult<spec::extract_links::Output> {
    let (_, _, body, _) = get(&args.url, &BTreeMap::new(), 10 * 1024 * 1024, 15_000)?;
    let html = String::from_utf8_lossy(&body);
    let anchor = regex_lite::Regex::new(r#"(?is)<a\s[^>]*?href\s*=\s*["']([^"']*)["'][^>]*>(.*?)</a>"#).expect("static regex");
    let tags = regex_lite::Regex::new(r"(?s)<[^>]*>").expect("static regex");
    let host = |u: &str| u.split("://").nth(1).map(|r| r.split(['/', '?', '#']).next().unwrap_or("").to_string());
    let own_host = host(&args.url);
    let links = anchor
        .captures_iter(&html)
        .map(|c| spec::extract_links::LinksItem {
            href: c[1].to_string(),
            text: tags.replace_all(&c[2], "").split_whitespace().collect::<Vec<_>>().join(" "),
        })
        .filter(|l| !args.same_host_only || host(&l.href).is_none() || host(&l.href) == own_host)
        .collect();
    Ok(spec::extract_links::Output { links })
}

#[capability(spec::download_file)]
async fn download_file(run: &Run, args: spec::download_file::Args) -> CapResult<spec::download_file::Output> {
    let ws = Workspace::of(run)?;
    let path = ws.resolve(&args.path)?;
    if path.exists() && !args.overwrite {
        return Err(CapError::new(format!("`{}` exists; pass overwrite: true to replace it", args.path)));
    }
    let (status, _, body, truncated) = get(&args.url, &BTreeMap::new(), 100 * 1024 * 1024, 60_000)?;
    if !(200..300).contains(&status) {
        return Err(CapError::new(format!("{} answered HTTP {status}; nothing was saved", args.url)));
    }
    if truncated {
        return Err(CapError::new(format!("{} is larger than 100 MiB; nothing was saved", args.url)));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, &body)?;
    Ok(spec::download_file::Output { bytes: body.len() as i64 })
}

#[capability(spec::post_webhook)]
async fn post_webhook(_run: &Run, args: spec::post_webhook::Args) -> CapResult<spec::post_webhook::Output> {
    use spec::post_webhook::ContentType;
    let (content_type, body) = match args.content_type {
        ContentType::ApplicationJson => ("application/json", serde_json::to_vec(&args.payload)?),
        ContentType::ApplicationXWwwFormUrlencoded => {
            let map = args.payload.as_object().ok_or_else(|| CapError::new("a form payload must be an object of strings"))?;
            let pairs: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(&v.as_str().map(String::from).unwrap_or_else(|| v.to_string()))))
                .collect();
            ("application/x-www-form-urlencoded", pairs.join("&").into_bytes())
        }
    };
    let response = agent(15_000).post(&args.url).header("content-type", content_type).send(&body[..]).map_err(|e| http_error(&args.url, e))?;
    Ok(spec::post_webhook::Output { status: i64::from(response.status().as_u16()) })
}

fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

//! The HTTP surface as an OAuth 2.1 resource server (DESIGN §13): RFC 9728
//! metadata, JWT access tokens checked against the issuer's keys, the
//! principal and its category scopes taken from the token.
//!
//! The signature is verified by `jsonwebtoken` (on ring, `jwt_ring.rs`); this module
//! only decides which key and which claims: asymmetric algorithms only, the
//! issuer exactly, the resource in `aud` (RFC 8707), `exp`/`nbf` with 60 s
//! of leeway, `sub` required.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

use crate::principal::{Principal, Scopes};
use crate::spec::Category;

/// How a server checks its callers' tokens (`--oauth-issuer`, `--resource`,
/// `--groups-claim`, `--jwks-file`).
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    /// The authorization server: tokens' `iss` must be exactly this.
    pub issuer: String,
    /// This server's URL as clients reach it: tokens' `aud` must hold it.
    pub resource: String,
    /// The claim listing the caller's groups.
    pub groups_claim: String,
    /// The issuer's keys from a file instead of its metadata's `jwks_uri`.
    pub jwks_file: Option<std::path::PathBuf>,
}

impl OAuthOptions {
    /// The groups claim unless `--groups-claim` says otherwise.
    pub const DEFAULT_GROUPS_CLAIM: &'static str = "groups";
}

/// Pages a person's browser visits on the HTTP surface beside MCP, behind
/// `--oauth-issuer`: a `per-user` upstream's browser step (DESIGN §12,
/// `capspec::upstream::Authorizer`). Served at [`BrowserPages::paths`],
/// before the Origin check: what admits a browser is what it carries.
pub trait BrowserPages: Send + Sync {
    /// The paths it answers.
    fn paths(&self) -> &'static [&'static str];
    /// Answer a GET of `path_and_query`; `issuer` is the team's issuer as
    /// this server trusts it (its keys check a sign-in's ID token).
    fn page<'a>(&'a self, path_and_query: &'a str, issuer: &'a ResourceServer) -> crate::gate::BoxFuture<'a, Page>;
}

/// A page of the browser step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The HTTP status.
    pub status: u16,
    /// Where to go next (a 302), if anywhere.
    pub location: Option<String>,
    /// Plain text for the person.
    pub text: String,
}

/// Where the RFC 9728 metadata is served (and at this path with the MCP
/// endpoint's path appended).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Leeway on `exp` and `nbf`, in seconds.
const LEEWAY: u64 = 60;
/// An unknown `kid` refetches the issuer's keys at most this often.
const REFETCH: Duration = Duration::from_secs(60);
/// Tokens whose checks passed, kept until they expire (at most this many).
const VERIFIED: usize = 4096;
/// How long fetching metadata or keys may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// A resource server: its metadata, the issuer's keys, and the tokens
/// already verified. Built once per server ([`ResourceServer::discover`]).
pub struct ResourceServer {
    options: OAuthOptions,
    /// `resource_metadata`, as `WWW-Authenticate` names it.
    metadata_url: String,
    /// The RFC 9728 document.
    metadata: String,
    keys: Mutex<Keys>,
    source: KeySource,
    verified: Mutex<HashMap<Arc<str>, Verified>>,
}

#[derive(Clone)]
struct Verified {
    principal: Principal,
    exp: u64,
}

enum KeySource {
    File,
    Remote { jwks_uri: String, client: reqwest::Client },
}

#[derive(Default)]
struct Keys {
    keys: Vec<Key>,
    fetched: Option<Instant>,
}

#[derive(Clone)]
struct Key {
    kid: Option<String>,
    alg: Option<Algorithm>,
    key: DecodingKey,
}

/// Why a request's token was refused (a 401).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token was sent.
    Missing,
    /// A token was sent and is not valid here; says why.
    Invalid(String),
}

impl ResourceServer {
    /// Check the options, find the issuer's keys (its RFC 8414 or OpenID
    /// metadata's `jwks_uri`, or the `--jwks-file`) and fetch them.
    pub async fn discover(options: OAuthOptions) -> Result<ResourceServer, String> {
        // jsonwebtoken's process-wide cryptography: ring, unless the host
        // installed a provider of its own first.
        let _ = jsonwebtoken::crypto::CryptoProvider::install_default(&super::jwt_ring::PROVIDER);
        let issuer = url(&options.issuer, "--oauth-issuer")?;
        if issuer.scheme() != "https" && !loopback(&issuer) {
            return Err(format!("the issuer `{}` must be https:// (only a loopback issuer may be http://)", options.issuer));
        }
        let resource = url(&options.resource, "--resource")?;
        let metadata_url = metadata_url(&resource);
        let scopes: Vec<&str> = Category::ALL.iter().map(|c| c.scope()).collect();
        let metadata = json!({
            "resource": options.resource,
            "authorization_servers": [options.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        })
        .to_string();
        let (keys, source) = match &options.jwks_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the JWKS file `{}`: {e}", path.display()))?;
                let keys = parse_jwks(&text).map_err(|e| format!("the JWKS file `{}`: {e}", path.display()))?;
                (keys, KeySource::File)
            }
            None => {
                crate::tls::ensure_provider();
                let client = reqwest::Client::builder().timeout(FETCH_TIMEOUT).build().map_err(|e| format!("cannot build an HTTP client: {e}"))?;
                let jwks_uri = jwks_uri(&client, &issuer, &options.issuer).await?;
                let text = fetch(&client, &jwks_uri).await?;
                let keys = parse_jwks(&text).map_err(|e| format!("the issuer's keys at {jwks_uri}: {e}"))?;
                (keys, KeySource::Remote { jwks_uri, client })
            }
        };
        Ok(ResourceServer {
            options,
            metadata_url,
            metadata,
            keys: Mutex::new(Keys { keys, fetched: Some(Instant::now()) }),
            source,
            verified: Mutex::new(HashMap::new()),
        })
    }

    /// The RFC 9728 document.
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    /// Where the RFC 9728 document is (`WWW-Authenticate`'s `resource_metadata`).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The principal a request's `Authorization` value admits, or why not.
    pub async fn admit(&self, authorization: Option<&[u8]>) -> Result<Principal, Refusal> {
        let Some(value) = authorization else { return Err(Refusal::Missing) };
        let value = std::str::from_utf8(value).map_err(|_| Refusal::Invalid("the Authorization header is not text".into()))?;
        let token = match value.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => token.trim(),
            _ => return Err(Refusal::Missing),
        };
        let now = now();
        if let Some(verified) = self.verified.lock().expect("not poisoned").get(token) {
            if now <= verified.exp.saturating_add(LEEWAY) {
                return Ok(verified.principal.clone());
            }
        }
        let (principal, exp) = self.verify(token).await.map_err(Refusal::Invalid)?;
        let mut verified = self.verified.lock().expect("not poisoned");
        if verified.len() >= VERIFIED {
            verified.retain(|_, v| now <= v.exp.saturating_add(LEEWAY));
            if verified.len() >= VERIFIED {
                verified.clear();
            }
        }
        verified.insert(Arc::from(token), Verified { principal: principal.clone(), exp });
        Ok(principal)
    }

    async fn verify(&self, token: &str) -> Result<(Principal, u64), String> {
        let claims = self.decode(token, &self.options.resource).await?;
        let sub = claims.get("sub").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or("the token's `sub` is not a string")?;
        let exp = claims.get("exp").and_then(Value::as_u64).unwrap_or(0);
        let groups = strings(claims.get(&self.options.groups_claim));
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(scope), _) | (None, Some(scope)) => strings(Some(scope)),
            (None, None) => Vec::new(),
        };
        let scopes = Scopes::of(scopes.iter().map(String::as_str));
        Ok((Principal::with_groups(sub, groups).with_scopes(scopes), exp))
    }

    /// The claims of `token`, a JWT of the issuer's for `audience`, once its
    /// signature (an asymmetric algorithm, one of the issuer's keys), `iss`,
    /// `aud`, `exp` and `nbf` hold and it has a `sub`.
    async fn decode(&self, token: &str, audience: &str) -> Result<serde_json::Map<String, Value>, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| format!("the token is not a JWT ({e})"))?;
        if matches!(header.alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) {
            return Err(format!("the token is signed with {:?}; only asymmetric algorithms are accepted", header.alg));
        }
        let key = match self.key(header.kid.as_deref(), header.alg) {
            Some(key) => key,
            None if self.refetch().await => self.key(header.kid.as_deref(), header.alg).ok_or_else(|| unknown_key(header.kid.as_deref()))?,
            None => return Err(unknown_key(header.kid.as_deref())),
        };
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.options.issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        Ok(jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key, &validation).map_err(|e| refusal(&e))?.claims)
    }

    /// The `sub` of an ID token the issuer gave the sign-in client
    /// `client_id` (OpenID Connect Core §3.1.3.7): checked as an access
    /// token is, with `aud` the client and `nonce` the one the sign-in sent.
    pub async fn verify_id_token(&self, token: &str, client_id: &str, nonce: &str) -> Result<String, String> {
        let claims = self.decode(token, client_id).await?;
        if claims.get("nonce").and_then(Value::as_str) != Some(nonce) {
            return Err("the ID token's `nonce` is not the one this sign-in sent".into());
        }
        claims.get("sub").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string).ok_or_else(|| "the ID token's `sub` is not a string".into())
    }

    /// The issuer (`--oauth-issuer`).
    pub fn issuer(&self) -> &str {
        &self.options.issuer
    }

    /// This server's URL (`--resource`).
    pub fn resource(&self) -> &str {
        &self.options.resource
    }

    /// The issuer's metadata (RFC 8414, else OpenID Connect Discovery),
    /// fetched now: its endpoints, for signing a browser in.
    pub async fn issuer_metadata(&self) -> Result<Value, String> {
        let client = match &self.source {
            KeySource::Remote { client, .. } => client.clone(),
            KeySource::File => {
                crate::tls::ensure_provider();
                reqwest::Client::builder().timeout(FETCH_TIMEOUT).build().map_err(|e| format!("cannot build an HTTP client: {e}"))?
            }
        };
        let issuer = url(&self.options.issuer, "--oauth-issuer")?;
        issuer_metadata(&client, &issuer, &self.options.issuer).await.map(|(_, metadata)| metadata)
    }

    /// The key for `kid` (or the only key, without one) usable with `alg`.
    fn key(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let keys = self.keys.lock().expect("not poisoned");
        let fits = |k: &&Key| k.alg.is_none_or(|a| a == alg) && k.key.family() == alg.family();
        match kid {
            Some(kid) => keys.keys.iter().filter(|k| k.kid.as_deref() == Some(kid)).find(fits).map(|k| k.key.clone()),
            None => {
                let mut fitting = keys.keys.iter().filter(fits);
                match (fitting.next(), fitting.next()) {
                    (Some(only), None) => Some(only.key.clone()),
                    _ => None,
                }
            }
        }
    }

    /// Fetch the issuer's keys again, unless they were fetched within the
    /// last minute; whether the keys were fetched.
    async fn refetch(&self) -> bool {
        let KeySource::Remote { jwks_uri, client } = &self.source else { return false };
        {
            let mut keys = self.keys.lock().expect("not poisoned");
            if keys.fetched.is_some_and(|at| at.elapsed() < REFETCH) {
                return false;
            }
            // Claimed: concurrent requests with unknown keys do not fetch too.
            keys.fetched = Some(Instant::now());
        }
        match fetch(client, jwks_uri).await.and_then(|text| parse_jwks(&text)) {
            Ok(fetched) => {
                self.keys.lock().expect("not poisoned").keys = fetched;
                true
            }
            Err(_) => false,
        }
    }
}

fn unknown_key(kid: Option<&str>) -> String {
    match kid {
        Some(kid) => format!("the token's key `{kid}` is not one of the issuer's"),
        None => "the token names no key (`kid`) and the issuer has more than one".to_string(),
    }
}

/// What a failed check says, in terms of the token.
fn refusal(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)".into(),
        ErrorKind::InvalidAudience => "the token is for another resource (`aud`)".into(),
        ErrorKind::InvalidIssuer => "the token is from another issuer (`iss`)".into(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}`"),
        _ => format!("the token is not valid ({error})"),
    }
}

/// A claim holding strings: an array of them, or one space-separated string.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(text)) => text.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn url(text: &str, flag: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(text).map_err(|e| format!("{flag} `{text}` is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!("{flag} `{text}` is not an http:// or https:// URL"));
    }
    Ok(parsed)
}

fn loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// RFC 9728 §3.1: the well-known path inserted between the resource's
/// origin and its path.
fn metadata_url(resource: &reqwest::Url) -> String {
    format!("{}{}{}", resource.origin().ascii_serialization(), METADATA_PATH, resource.path().trim_end_matches('/'))
}

/// The issuer's `jwks_uri`: from its RFC 8414 metadata, else its OpenID
/// configuration, whose `issuer` must be the issuer exactly.
async fn jwks_uri(client: &reqwest::Client, issuer: &reqwest::Url, expected: &str) -> Result<String, String> {
    let (at, metadata) = issuer_metadata(client, issuer, expected).await?;
    match metadata.get("jwks_uri").and_then(Value::as_str) {
        Some(uri) => Ok(uri.to_string()),
        None => Err(format!("the issuer's metadata at {at} has no `jwks_uri`")),
    }
}

/// The issuer's metadata and where it was found: its RFC 8414 metadata,
/// else its OpenID configuration, whose `issuer` must be the issuer exactly.
async fn issuer_metadata(client: &reqwest::Client, issuer: &reqwest::Url, expected: &str) -> Result<(String, Value), String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    let mut tried: Vec<String> = Vec::new();
    for (at, candidate) in candidates.iter().enumerate() {
        if candidates[..at].contains(candidate) {
            continue;
        }
        match fetch(client, candidate).await {
            Ok(text) => {
                let metadata: Value = serde_json::from_str(&text).map_err(|e| format!("the issuer's metadata at {candidate} is not JSON: {e}"))?;
                let found = metadata.get("issuer").and_then(Value::as_str);
                if found != Some(expected) {
                    return Err(format!("the metadata at {candidate} names the issuer {found:?}, not `{expected}`"));
                }
                return Ok((candidate.clone(), metadata));
            }
            Err(e) => tried.push(e),
        }
    }
    Err(format!("found no metadata for the issuer `{expected}`: {}", tried.join("; ")))
}

async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, String> {
    let response = client.get(url).header("accept", "application/json").send().await.map_err(|e| format!("cannot fetch {url}: {}", causes(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url} answered {status}"));
    }
    response.text().await.map_err(|e| format!("cannot read {url}: {e}"))
}

/// An error with its causes, outermost first.
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// The public signing keys of a JWKS document; keys for encryption, keys
/// of types this server cannot verify with and HMAC keys are left out.
fn parse_jwks(text: &str) -> Result<Vec<Key>, String> {
    let document: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Some(keys) = document.get("keys").and_then(Value::as_array) else { return Err("no `keys` array".into()) };
    let mut usable = Vec::new();
    for raw in keys {
        if raw.get("use").and_then(Value::as_str).is_some_and(|u| u != "sig") || raw.get("kty").and_then(Value::as_str) == Some("oct") {
            continue;
        }
        let Ok(jwk) = serde_json::from_value::<jsonwebtoken::jwk::Jwk>(raw.clone()) else { continue };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else { continue };
        let alg = raw.get("alg").and_then(Value::as_str).and_then(|a| a.parse::<Algorithm>().ok());
        usable.push(Key { kid: jwk.common.key_id.clone(), alg, key });
    }
    if usable.is_empty() {
        return Err("no public signing key this server can verify with".into());
    }
    Ok(usable)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_metadata_path_goes_between_origin_and_path() {
        let url = |text: &str| reqwest::Url::parse(text).unwrap();
        assert_eq!(super::metadata_url(&url("http://127.0.0.1:8931/mcp")), "http://127.0.0.1:8931/.well-known/oauth-protected-resource/mcp");
        assert_eq!(super::metadata_url(&url("https://tools.example.com/")), "https://tools.example.com/.well-known/oauth-protected-resource");
    }

    #[test]
    fn scope_and_group_claims_are_lists_or_spaced_strings() {
        let strings = |v: serde_json::Value| super::strings(Some(&v));
        assert_eq!(strings(serde_json::json!("capspec:read  capspec:write")), ["capspec:read", "capspec:write"]);
        assert_eq!(strings(serde_json::json!(["support", 3, "admins"])), ["support", "admins"]);
        assert!(strings(serde_json::json!({"a": 1})).is_empty());
    }

    #[test]
    fn hmac_and_encryption_keys_are_not_signing_keys() {
        let only_secret = r#"{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"s"}]}"#;
        assert!(super::parse_jwks(only_secret).is_err());
        assert!(super::parse_jwks("{}").is_err());
    }
}

//! The key behind every `requestState` a 2026-07-28 server seals: one
//! secret (`--state-key-file`, shared by the instances behind one load
//! balancer; else random per process), from which HKDF-SHA-256 derives a
//! key per purpose, so no state sealed for one purpose opens for another:
//!
//! - an approval of one tool call: HMAC-SHA-256 (rmcp's `RequestStateCodec`);
//! - a suspended action's journal: XChaCha20-Poly1305, encrypted because it
//!   carries the results of the action's calls;
//! - the audit log's keyed hashes (HMAC-SHA-256), and the vault's sealed
//!   per-user upstream credentials (XChaCha20-Poly1305), in the serve store;
//! - the ticket of a per-user upstream's browser step (XChaCha20-Poly1305):
//!   whom it is for, which upstream and elicitation, until when.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rmcp::model::RequestStateCodec;

/// How long an `input_required` answer may take, unless the key says otherwise.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// HKDF's salt: names the scheme, so the same secret used elsewhere derives other keys.
const SALT: &[u8] = b"capspec requestState key v1";
/// The purposes keys are derived for.
const APPROVAL_KEY: &[u8] = b"capspec approval state: HMAC-SHA-256";
const ACTION_KEY: &[u8] = b"capspec action state: XChaCha20-Poly1305";
const AUDIT_KEY: &[u8] = b"capspec audit log: HMAC-SHA-256";
const VAULT_KEY: &[u8] = b"capspec upstream credentials: XChaCha20-Poly1305";
const TICKET_KEY: &[u8] = b"capspec upstream ticket: XChaCha20-Poly1305";
/// A sealed ticket starts with this, then URL-safe base64 of nonce ‖ ciphertext.
const TICKET_PREFIX: &str = "ct1.";
/// The `state` of a browser's sign-in at the team issuer (the browser
/// step's first leg) starts with this; it is sealed under the ticket key,
/// bound to this purpose, so neither a ticket nor an action state opens as one.
const SIGN_IN_PREFIX: &str = "cl1.";
const SIGN_IN_PURPOSE: &[u8] = b"capspec upstream sign-in state";
/// The longest a ticket stays valid (DESIGN §12).
pub const TICKET_TTL: Duration = Duration::from_secs(600);
/// A sealed action state starts with this, then URL-safe base64 of nonce ‖ ciphertext.
#[cfg_attr(not(feature = "quickjs"), allow(dead_code))]
const ACTION_PREFIX: &str = "cs1.";
const NONCE_BYTES: usize = 24;

/// The key that seals `requestState`, and how long a sealed state stays
/// valid ([`STATE_TTL`] unless set).
#[derive(Clone)]
pub struct StateKey {
    approval: Arc<RequestStateCodec>,
    #[cfg_attr(not(feature = "quickjs"), allow(dead_code))]
    action: Arc<XChaCha20Poly1305>,
    audit: [u8; 32],
    vault: [u8; 32],
    ticket: Arc<XChaCha20Poly1305>,
    ttl: Duration,
}

/// The ticket of a per-user upstream's browser step (DESIGN §12): the
/// principal it was made for, the upstream they are asked to authorize,
/// the elicitation that asked, and when it expires. Sealed, it is the
/// `ticket` of capspec's own `/oauth/upstream/start` URL; its `id` makes it
/// usable once (the serve store remembers the ids used).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ticket {
    /// Random, unique to this ticket.
    pub id: String,
    /// Who is asked: the ID token's `sub` at the team issuer must be this.
    pub principal: String,
    /// The upstream (`[upstream.NAME]`) they are asked to authorize.
    pub upstream: String,
    /// The elicitation that asked (`elicitationId`).
    pub elicitation: String,
    /// Seconds since the Unix epoch after which it is refused.
    pub expires: u64,
}

/// Why a ticket is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TicketRefused {
    /// Not a ticket this key sealed (forged, altered, another key).
    NotOurs,
    /// Sealed here, and past its expiry.
    Expired,
}

impl std::fmt::Display for TicketRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TicketRefused::NotOurs => "this link is not one capspec made (or it was altered, or made with another state key)",
            TicketRefused::Expired => "this link has expired: call the tool again for a new one",
        })
    }
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// The fewest bytes a key may have.
    pub const MIN_BYTES: usize = 32;

    /// A key from these bytes (at least [`StateKey::MIN_BYTES`]): every
    /// byte counts, whatever its value.
    pub fn new(secret: impl AsRef<[u8]>) -> Result<StateKey, String> {
        let secret = secret.as_ref();
        if secret.len() < StateKey::MIN_BYTES {
            return Err(format!("a state key needs at least {} bytes, this one has {}", StateKey::MIN_BYTES, secret.len()));
        }
        let hkdf = hkdf::Hkdf::<sha2::Sha256>::new(Some(SALT), secret);
        let derive = |purpose: &[u8]| {
            let mut key = [0u8; 32];
            hkdf.expand(purpose, &mut key).expect("32 bytes is a valid HKDF-SHA-256 output length");
            key
        };
        let approval = RequestStateCodec::try_new(derive(APPROVAL_KEY).to_vec()).map_err(|e| e.to_string())?;
        let action = XChaCha20Poly1305::new_from_slice(&derive(ACTION_KEY)).expect("the derived key has the cipher's length");
        Ok(StateKey { approval: Arc::new(approval), action: Arc::new(action), audit: derive(AUDIT_KEY), vault: derive(VAULT_KEY), ticket: Arc::new(XChaCha20Poly1305::new_from_slice(&derive(TICKET_KEY)).expect("the derived key has the cipher's length")), ttl: STATE_TTL })
    }

    /// The key in `file` (`--state-key-file`): exactly the bytes it holds,
    /// at least 32 (a trailing newline is one of them). Make one with
    /// `head -c 32 /dev/urandom > FILE`.
    pub fn read_file(file: &std::path::Path) -> Result<StateKey, String> {
        let bytes = std::fs::read(file).map_err(|e| format!("cannot read the state key file `{}`: {e}", file.display()))?;
        StateKey::new(bytes).map_err(|e| format!("the state key file `{}`: {e}", file.display()))
    }

    /// The key the audit log's keyed hashes of arguments and results are
    /// made with (DESIGN §15): derived for that purpose alone, so the same
    /// file gives the same key on every instance and after a restart.
    pub fn audit_key(&self) -> [u8; 32] {
        self.audit
    }

    /// The key per-user upstream credentials are sealed with in the serve
    /// store's vault (DESIGN §12): derived for that purpose alone, so every
    /// instance given the same file opens what another sealed.
    pub fn vault_key(&self) -> [u8; 32] {
        self.vault
    }

    /// How long a ticket issued now stays valid: the state TTL, at most
    /// ten minutes. The link's wording says this.
    pub fn ticket_ttl(&self) -> Duration {
        self.ttl.min(TICKET_TTL)
    }

    /// A new ticket asking `principal` to authorize `upstream` for
    /// `elicitation`, valid for the state TTL but never beyond
    /// [`TICKET_TTL`], sealed: the `ticket` query parameter.
    pub fn issue_ticket(&self, principal: &str, upstream: &str, elicitation: &str, now: u64) -> (Ticket, String) {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).expect("the system has a random source");
        let ttl = self.ticket_ttl().as_secs();
        let ticket = Ticket {
            id: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id),
            principal: principal.to_string(),
            upstream: upstream.to_string(),
            elicitation: elicitation.to_string(),
            expires: now + ttl,
        };
        let sealed = seal(&self.ticket, &serde_json::to_vec(&ticket).expect("JSON serializes"), TICKET_KEY);
        (ticket, format!("{TICKET_PREFIX}{sealed}"))
    }

    /// The ticket `sealed` carries, when this key sealed it and it has not
    /// expired at `now`. Whether it was used already is the store's to say.
    pub fn open_ticket(&self, sealed: &str, now: u64) -> Result<Ticket, TicketRefused> {
        let plaintext = sealed.strip_prefix(TICKET_PREFIX).and_then(|s| open(&self.ticket, s, TICKET_KEY)).ok_or(TicketRefused::NotOurs)?;
        let ticket: Ticket = serde_json::from_slice(&plaintext).map_err(|_| TicketRefused::NotOurs)?;
        if now > ticket.expires {
            return Err(TicketRefused::Expired);
        }
        Ok(ticket)
    }

    /// Seal the `state` of a browser step's sign-in at the team issuer
    /// (what it must remember across the redirect: the ticket, the PKCE
    /// verifier, the nonce).
    pub fn seal_sign_in(&self, plaintext: &[u8]) -> String {
        format!("{SIGN_IN_PREFIX}{}", seal(&self.ticket, plaintext, SIGN_IN_PURPOSE))
    }

    /// What [`StateKey::seal_sign_in`] sealed with this key; `None` for any
    /// other text (forged, altered, another key or purpose).
    pub fn open_sign_in(&self, sealed: &str) -> Option<Vec<u8>> {
        open(&self.ticket, sealed.strip_prefix(SIGN_IN_PREFIX)?, SIGN_IN_PURPOSE)
    }

    /// States sealed with this key expire after `ttl` (at least a second).
    pub fn with_ttl(self, ttl: Duration) -> StateKey {
        StateKey { ttl: ttl.max(Duration::from_secs(1)), ..self }
    }

    /// A random key, for one process.
    pub fn random() -> StateKey {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the system has a random source");
        StateKey::new(key).expect("32 bytes is long enough")
    }

    /// How long a sealed state stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The codec of approval states.
    pub(super) fn approval(&self) -> &RequestStateCodec {
        &self.approval
    }

    /// Encrypt and authenticate `plaintext`, bound to `purpose`.
    #[cfg(feature = "quickjs")]
    pub(super) fn seal_action(&self, plaintext: &[u8], purpose: &[u8]) -> String {
        format!("{ACTION_PREFIX}{}", seal(&self.action, plaintext, purpose))
    }

    /// The plaintext of a state [`StateKey::seal_action`] sealed for
    /// `purpose` with this key; `None` when it is not one (forged, altered,
    /// another key or purpose).
    #[cfg(feature = "quickjs")]
    pub(super) fn open_action(&self, state: &str, purpose: &[u8]) -> Option<Vec<u8>> {
        open(&self.action, state.strip_prefix(ACTION_PREFIX)?, purpose)
    }
}

/// URL-safe base64 of a fresh nonce ‖ `plaintext` encrypted under `cipher`, bound to `aad`.
fn seal(cipher: &XChaCha20Poly1305, plaintext: &[u8], aad: &[u8]) -> String {
    let mut nonce = [0u8; NONCE_BYTES];
    getrandom::fill(&mut nonce).expect("the system has a random source");
    let sealed = cipher.encrypt(&XNonce::from(nonce), Payload { msg: plaintext, aad }).expect("encryption of a bounded message does not fail");
    let mut bytes = nonce.to_vec();
    bytes.extend_from_slice(&sealed);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What [`seal`] sealed with `cipher` and `aad`; `None` for anything else.
fn open(cipher: &XChaCha20Poly1305, text: &str, aad: &[u8]) -> Option<Vec<u8>> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?;
    if bytes.len() < NONCE_BYTES {
        return None;
    }
    let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
    let nonce: [u8; NONCE_BYTES] = nonce.try_into().ok()?;
    cipher.decrypt(&XNonce::from(nonce), Payload { msg: sealed, aad }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_of_the_key_counts() {
        // Two keys that differ only in bytes that are not valid UTF-8 (a
        // lossy text reading would make both U+FFFD) seal differently.
        let a: Vec<u8> = (0..32).map(|i| 0x80 + i).collect();
        let mut b = a.clone();
        b[5] = 0xfe;
        let (a, b) = (StateKey::new(&a).unwrap(), StateKey::new(&b).unwrap());
        let sealed = a.seal_action(b"journal", b"p");
        assert_eq!(a.open_action(&sealed, b"p").as_deref(), Some(&b"journal"[..]));
        assert_eq!(b.open_action(&sealed, b"p"), None, "another key does not open it");
        assert_eq!(a.open_action(&sealed, b"q"), None, "another purpose does not open it");
        // Whitespace is part of the key, not trimmed away.
        let spaced = StateKey::new([b"k".repeat(32), b"\n".to_vec()].concat()).unwrap();
        let plain = StateKey::new(b"k".repeat(32)).unwrap();
        assert_eq!(plain.open_action(&spaced.seal_action(b"x", b"p"), b"p"), None);
        assert!(StateKey::new(b"short").unwrap_err().contains("at least 32 bytes"));
    }

    #[test]
    fn a_ticket_names_whom_it_asks_expires_and_opens_only_as_a_ticket_of_this_key() {
        let key = StateKey::new([3u8; 32]).unwrap();
        let (ticket, sealed) = key.issue_ticket("alice", "tracker", "el-1", 1_000);
        assert!(sealed.starts_with(TICKET_PREFIX), "{sealed}");
        assert!(!sealed.contains("alice") && !sealed.contains("tracker"), "sealed, not readable: {sealed}");
        assert_eq!((ticket.principal.as_str(), ticket.upstream.as_str(), ticket.elicitation.as_str(), ticket.expires), ("alice", "tracker", "el-1", 1_600));
        assert_eq!(key.open_ticket(&sealed, 1_600), Ok(ticket.clone()));
        assert_eq!(key.open_ticket(&sealed, 1_601), Err(TicketRefused::Expired));
        // Never longer than ten minutes, shorter with a shorter state TTL.
        let brief = key.clone().with_ttl(Duration::from_secs(30));
        assert_eq!(brief.issue_ticket("alice", "tracker", "el-2", 1_000).0.expires, 1_030);
        let long = key.clone().with_ttl(Duration::from_secs(3_600));
        assert_eq!(long.issue_ticket("alice", "tracker", "el-3", 1_000).0.expires, 1_600);
        // Each ticket is its own.
        assert_ne!(key.issue_ticket("alice", "tracker", "el-1", 1_000).0.id, ticket.id);
        // Another key, an altered ticket, or an action state under the
        // same key do not open as a ticket; a ticket does not open as an action.
        assert_eq!(StateKey::new([4u8; 32]).unwrap().open_ticket(&sealed, 1_000), Err(TicketRefused::NotOurs));
        let mut altered = sealed.clone().into_bytes();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(key.open_ticket(std::str::from_utf8(&altered).unwrap(), 1_000), Err(TicketRefused::NotOurs));
        let action = key.seal_action(&serde_json::to_vec(&ticket).unwrap(), TICKET_KEY);
        assert_eq!(key.open_ticket(&action.replacen(ACTION_PREFIX, TICKET_PREFIX, 1), 1_000), Err(TicketRefused::NotOurs));
        assert_eq!(key.open_action(&sealed.replacen(TICKET_PREFIX, ACTION_PREFIX, 1), TICKET_KEY), None);
    }

    #[test]
    fn altered_states_do_not_open() {
        let key = StateKey::random();
        let sealed = key.seal_action(b"{\"j\":{}}", b"p");
        assert!(sealed.starts_with(ACTION_PREFIX));
        let mut altered = sealed.clone().into_bytes();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(key.open_action(std::str::from_utf8(&altered).unwrap(), b"p"), None);
        assert_eq!(key.open_action("cs1.!!!", b"p"), None);
        assert_eq!(key.open_action("rs2.AAAA", b"p"), None);
        assert_ne!(key.seal_action(b"same", b"p"), key.seal_action(b"same", b"p"), "a fresh nonce each time");
    }
}

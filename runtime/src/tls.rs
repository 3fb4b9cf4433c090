//! The process's rustls provider, chosen in one place.
//!
//! Every HTTPS client of the runtime (an issuer's keys, an upstream server,
//! its authorization server, the OTLP exporter) is reqwest's or tonic's on
//! rustls, and takes the process-wide provider. capspec enables one rustls
//! provider, `ring`, so rustls names it from its own features; a host that
//! installed a provider before (`CryptoProvider::install_default`) keeps
//! its own. A host whose build enables a second provider too (aws-lc-rs,
//! reqwest's default) must install one itself first: rustls then refuses
//! to guess, and says so.

use std::sync::Once;

/// Install the process's rustls provider unless one is installed already.
/// Call it before building an HTTPS client.
pub(crate) fn ensure_provider() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // `ClientConfig::builder` installs the provider the crate features
        // name when none is installed (rustls's documented way to pick it).
        let _ = rustls::ClientConfig::builder();
    });
}

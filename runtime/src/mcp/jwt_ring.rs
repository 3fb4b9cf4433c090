//! jsonwebtoken's cryptography on ring, the library rustls already builds
//! for this crate's https:// clients. jsonwebtoken keeps its algorithms
//! behind a `CryptoProvider`; ring verifies an RS256 access token in a
//! fraction of the time RustCrypto's `rsa` takes (BENCHMARKS 'Behind OAuth'),
//! and a resource server verifies one for every new token it sees. Nothing
//! here is cryptography: each algorithm maps to ring's own.
//!
//! The provider is complete (signing too), because it is the process's:
//! a host that signs tokens of its own after serving starts keeps working.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind, Result};
use jsonwebtoken::jwk::{EllipticCurve, ThumbprintHash};
use jsonwebtoken::signature::{self, Signer, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::rand::SystemRandom;
use ring::signature::{self as sig, KeyPair};
use ring::{digest, hmac};

/// The provider `ResourceServer::discover` installs, unless the host
/// installed one of its own first.
pub static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: signer,
    verifier_factory: verifier,
    key_utils: KeyUtils {
        rsa_pub_components_from_private_key: rsa_components,
        rsa_pub_components_from_public_key: |_| Err(ErrorKind::InvalidRsaKey("ring reads no RSA public key from DER; give the key as a JWK's n and e".into()).into()),
        ec_pub_components_from_private_key: ec_components,
        ed_pub_components_from_private_key: ed_component,
        compute_digest,
    },
};

fn signer(alg: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    if key.family() != alg.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    Ok(Box::new(Sign { alg: *alg, key: key.clone() }))
}

fn verifier(alg: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    if key.family() != alg.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    Ok(Box::new(Verify { alg: *alg, key: key.clone() }))
}

struct Verify {
    alg: Algorithm,
    key: DecodingKey,
}

impl Verifier<Vec<u8>> for Verify {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        let checked = match (self.key.kind(), hmac_algorithm(self.alg), rsa_parameters(self.alg)) {
            (DecodingKeyKind::SecretOrDer(secret), Some(h), _) => hmac::verify(&hmac::Key::new(h, secret), message, signature),
            (DecodingKeyKind::RsaModulusExponent { n, e }, _, Some(parameters)) => sig::RsaPublicKeyComponents { n, e }.verify(parameters, message, signature),
            (DecodingKeyKind::SecretOrDer(der), None, _) => sig::UnparsedPublicKey::new(verification(self.alg).ok_or_else(signature::Error::new)?, der).verify(message, signature),
            _ => return Err(signature::Error::new()),
        };
        checked.map_err(failed)
    }
}

impl JwtVerifier for Verify {
    fn algorithm(&self) -> Algorithm {
        self.alg
    }
}

struct Sign {
    alg: Algorithm,
    key: EncodingKey,
}

impl Signer<Vec<u8>> for Sign {
    fn try_sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, signature::Error> {
        let der = self.key.as_bytes();
        if let Some(h) = hmac_algorithm(self.alg) {
            return Ok(hmac::sign(&hmac::Key::new(h, der), message).as_ref().to_vec());
        }
        let rng = SystemRandom::new();
        Ok(match self.alg {
            Algorithm::RS256 | Algorithm::RS384 | Algorithm::RS512 | Algorithm::PS256 | Algorithm::PS384 | Algorithm::PS512 => {
                let pair = rsa_pair(der).map_err(failed)?;
                let mut out = vec![0; pair.public().modulus_len()];
                pair.sign(rsa_encoding(self.alg), &rng, message, &mut out).map_err(failed)?;
                out
            }
            Algorithm::ES256 | Algorithm::ES384 => sig::EcdsaKeyPair::from_pkcs8(ecdsa_signing(self.alg), der, &rng).map_err(failed)?.sign(&rng, message).map_err(failed)?.as_ref().to_vec(),
            Algorithm::EdDSA => sig::Ed25519KeyPair::from_pkcs8_maybe_unchecked(der).map_err(failed)?.sign(message).as_ref().to_vec(),
            _ => return Err(signature::Error::new()),
        })
    }
}

/// ring's errors say nothing more than that it failed; jsonwebtoken's
/// caller turns this into `InvalidSignature`.
fn failed<E>(_: E) -> signature::Error {
    signature::Error::new()
}

impl JwtSigner for Sign {
    fn algorithm(&self) -> Algorithm {
        self.alg
    }
}

fn hmac_algorithm(alg: Algorithm) -> Option<hmac::Algorithm> {
    match alg {
        Algorithm::HS256 => Some(hmac::HMAC_SHA256),
        Algorithm::HS384 => Some(hmac::HMAC_SHA384),
        Algorithm::HS512 => Some(hmac::HMAC_SHA512),
        _ => None,
    }
}

fn rsa_parameters(alg: Algorithm) -> Option<&'static sig::RsaParameters> {
    Some(match alg {
        Algorithm::RS256 => &sig::RSA_PKCS1_2048_8192_SHA256,
        Algorithm::RS384 => &sig::RSA_PKCS1_2048_8192_SHA384,
        Algorithm::RS512 => &sig::RSA_PKCS1_2048_8192_SHA512,
        Algorithm::PS256 => &sig::RSA_PSS_2048_8192_SHA256,
        Algorithm::PS384 => &sig::RSA_PSS_2048_8192_SHA384,
        Algorithm::PS512 => &sig::RSA_PSS_2048_8192_SHA512,
        _ => return None,
    })
}

/// The verification of a key held as DER or as a point (EC, EdDSA, RSA).
fn verification(alg: Algorithm) -> Option<&'static dyn sig::VerificationAlgorithm> {
    match alg {
        Algorithm::ES256 => Some(&sig::ECDSA_P256_SHA256_FIXED),
        Algorithm::ES384 => Some(&sig::ECDSA_P384_SHA384_FIXED),
        Algorithm::EdDSA => Some(&sig::ED25519),
        other => rsa_parameters(other).map(|p| p as &dyn sig::VerificationAlgorithm),
    }
}

fn rsa_encoding(alg: Algorithm) -> &'static dyn sig::RsaEncoding {
    match alg {
        Algorithm::RS384 => &sig::RSA_PKCS1_SHA384,
        Algorithm::RS512 => &sig::RSA_PKCS1_SHA512,
        Algorithm::PS256 => &sig::RSA_PSS_SHA256,
        Algorithm::PS384 => &sig::RSA_PSS_SHA384,
        Algorithm::PS512 => &sig::RSA_PSS_SHA512,
        _ => &sig::RSA_PKCS1_SHA256,
    }
}

fn ecdsa_signing(alg: Algorithm) -> &'static sig::EcdsaSigningAlgorithm {
    match alg {
        Algorithm::ES384 => &sig::ECDSA_P384_SHA384_FIXED_SIGNING,
        _ => &sig::ECDSA_P256_SHA256_FIXED_SIGNING,
    }
}

/// An RSA private key as PKCS#1 (what a PEM's `RSA PRIVATE KEY` holds) or PKCS#8.
fn rsa_pair(der: &[u8]) -> std::result::Result<sig::RsaKeyPair, ring::error::KeyRejected> {
    sig::RsaKeyPair::from_der(der).or_else(|_| sig::RsaKeyPair::from_pkcs8(der))
}

fn rsa_components(der: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let pair = rsa_pair(der).map_err(|e| Error::from(ErrorKind::InvalidRsaKey(e.to_string())))?;
    let public = sig::RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
    Ok((public.n, public.e))
}

fn ec_components(der: &[u8], alg: Algorithm) -> Result<(EllipticCurve, Vec<u8>, Vec<u8>)> {
    let (curve, half) = match alg {
        Algorithm::ES256 => (EllipticCurve::P256, 32),
        Algorithm::ES384 => (EllipticCurve::P384, 48),
        _ => return Err(ErrorKind::InvalidEcdsaKey.into()),
    };
    let pair = sig::EcdsaKeyPair::from_pkcs8(ecdsa_signing(alg), der, &SystemRandom::new()).map_err(|_| Error::from(ErrorKind::InvalidEcdsaKey))?;
    match pair.public_key().as_ref().split_first() {
        Some((4, point)) if point.len() == 2 * half => Ok((curve, point[..half].to_vec(), point[half..].to_vec())),
        _ => Err(ErrorKind::InvalidEcdsaKey.into()),
    }
}

fn ed_component(der: &[u8], curve: &EllipticCurve) -> Result<Vec<u8>> {
    if *curve != EllipticCurve::Ed25519 {
        return Err(ErrorKind::InvalidAlgorithm.into());
    }
    let pair = sig::Ed25519KeyPair::from_pkcs8_maybe_unchecked(der).map_err(|_| Error::from(ErrorKind::InvalidEddsaKey))?;
    Ok(pair.public_key().as_ref().to_vec())
}

fn compute_digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>> {
    let algorithm = match hash {
        ThumbprintHash::SHA256 => &digest::SHA256,
        ThumbprintHash::SHA384 => &digest::SHA384,
        ThumbprintHash::SHA512 => &digest::SHA512,
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    Ok(digest::digest(algorithm, data).as_ref().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family signs and verifies through the provider, and a flipped
    /// bit or the wrong key fails: the mapping to ring's algorithms holds.
    #[test]
    fn each_family_round_trips_and_refuses_a_forgery() {
        let rsa = include_bytes!("../../../tests/fixtures/oauth/rsa.pem");
        let rsa_public = include_bytes!("../../../tests/fixtures/oauth/rsa.pub.pem");
        let stranger = include_bytes!("../../../tests/fixtures/oauth/stranger.pem");
        let ec = include_bytes!("../../../tests/fixtures/oauth/ec.pem");
        // The issuer's keys as the server reads them: JWKs, RSA as n and e, EC as a point.
        let jwks: serde_json::Value = serde_json::from_str(include_str!("../../../tests/fixtures/oauth/jwks.json")).unwrap();
        let jwk = |i: usize| DecodingKey::from_jwk(&serde_json::from_value(jwks["keys"][i].clone()).unwrap()).unwrap();
        // The key utilities agree with the JWKS: the same n, and the same x.
        let (n, _) = rsa_components(EncodingKey::from_rsa_pem(rsa).unwrap().as_bytes()).unwrap();
        assert!(matches!(jwk(0).kind(), DecodingKeyKind::RsaModulusExponent { n: from_jwk, .. } if *from_jwk == n));
        let (_, x, _) = ec_components(EncodingKey::from_ec_pem(ec).unwrap().as_bytes(), Algorithm::ES256).unwrap();
        assert!(matches!(jwk(1).kind(), DecodingKeyKind::SecretOrDer(point) if point[1..33] == x[..]));
        let cases: Vec<(Algorithm, EncodingKey, DecodingKey)> = vec![
            (Algorithm::RS256, EncodingKey::from_rsa_pem(rsa).unwrap(), jwk(0)),
            (Algorithm::RS256, EncodingKey::from_rsa_pem(rsa).unwrap(), DecodingKey::from_rsa_pem(rsa_public).unwrap()),
            (Algorithm::RS512, EncodingKey::from_rsa_pem(rsa).unwrap(), jwk(0)),
            (Algorithm::PS256, EncodingKey::from_rsa_pem(rsa).unwrap(), jwk(0)),
            (Algorithm::ES256, EncodingKey::from_ec_pem(ec).unwrap(), jwk(1)),
            (Algorithm::HS256, EncodingKey::from_secret(b"shared").unwrap(), DecodingKey::from_secret(b"shared").unwrap()),
        ];
        for (alg, signing, checking) in cases {
            let signature = (PROVIDER.signer_factory)(&alg, &signing).unwrap().try_sign(b"header.claims").unwrap();
            let verify = (PROVIDER.verifier_factory)(&alg, &checking).unwrap();
            assert!(verify.verify(b"header.claims", &signature).is_ok(), "{alg:?} verifies its own signature");
            assert!(verify.verify(b"header.claimz", &signature).is_err(), "{alg:?} refuses another message");
        }
        let other = (PROVIDER.signer_factory)(&Algorithm::RS256, &EncodingKey::from_rsa_pem(stranger).unwrap()).unwrap().try_sign(b"header.claims").unwrap();
        let verify = (PROVIDER.verifier_factory)(&Algorithm::RS256, &DecodingKey::from_rsa_pem(rsa_public).unwrap()).unwrap();
        assert!(verify.verify(b"header.claims", &other).is_err(), "another key's signature is refused");
        assert!((PROVIDER.verifier_factory)(&Algorithm::ES256, &DecodingKey::from_rsa_pem(rsa_public).unwrap()).is_err(), "a key of another family is refused");
    }
}

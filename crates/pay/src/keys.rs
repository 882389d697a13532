//! RSA keys as the providers hand them out, and SHA256withRSA (PKCS #1 v1.5) signatures, which
//! both WeChat Pay v3 and Alipay's RSA2 use.
//!
//! Accepted forms: PEM (PKCS #8, PKCS #1, SubjectPublicKeyInfo, or an X.509 certificate such as
//! a WeChat Pay platform certificate) and the bare Base64 DER that Alipay's key tool prints.

use crate::{PayError, Result};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::pkcs1v15::{Signature, SigningKey, VerifyingKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::signature::{SignatureEncoding, Signer, Verifier};
use rsa::{RsaPrivateKey, RsaPublicKey};
use sha2::Sha256;

pub use rsa::{RsaPrivateKey as PrivateKey, RsaPublicKey as PublicKey};

fn bare_der(text: &str) -> Option<Vec<u8>> {
    let compact: String = text.split_whitespace().collect();
    STANDARD.decode(compact).ok()
}

/// A merchant's private key: PKCS #8 or PKCS #1, PEM or bare Base64.
pub fn private_key(text: &str) -> Result<RsaPrivateKey> {
    let text = text.trim();
    let key = if text.starts_with("-----BEGIN RSA PRIVATE KEY") {
        RsaPrivateKey::from_pkcs1_pem(text).ok()
    } else if text.starts_with("-----BEGIN") {
        RsaPrivateKey::from_pkcs8_pem(text).ok()
    } else {
        bare_der(text).and_then(|der| {
            RsaPrivateKey::from_pkcs8_der(&der)
                .or_else(|_| RsaPrivateKey::from_pkcs1_der(&der))
                .ok()
        })
    };
    key.ok_or_else(|| PayError::BadKey("私钥应为 PEM 或 Base64 编码的 PKCS#8 / PKCS#1".into()))
}

/// A provider's public key: SubjectPublicKeyInfo or PKCS #1, PEM or bare Base64, or the key
/// of an X.509 certificate in PEM.
pub fn public_key(text: &str) -> Result<RsaPublicKey> {
    let text = text.trim();
    let key = if text.starts_with("-----BEGIN CERTIFICATE") {
        certificate_key(text)
    } else if text.starts_with("-----BEGIN RSA PUBLIC KEY") {
        RsaPublicKey::from_pkcs1_pem(text).ok()
    } else if text.starts_with("-----BEGIN") {
        RsaPublicKey::from_public_key_pem(text).ok()
    } else {
        bare_der(text).and_then(|der| {
            RsaPublicKey::from_public_key_der(&der)
                .or_else(|_| RsaPublicKey::from_pkcs1_der(&der))
                .ok()
        })
    };
    key.ok_or_else(|| PayError::BadKey("公钥应为 PEM、Base64 或 X.509 证书".into()))
}

fn certificate_key(pem: &str) -> Option<RsaPublicKey> {
    use x509_cert::Certificate;
    use x509_cert::der::{DecodePem, Encode};
    let certificate = Certificate::from_pem(pem.as_bytes()).ok()?;
    let der = certificate
        .tbs_certificate
        .subject_public_key_info
        .to_der()
        .ok()?;
    RsaPublicKey::from_public_key_der(&der).ok()
}

/// The serial number of an X.509 certificate in PEM, as WeChat Pay writes it in
/// `Wechatpay-Serial` (upper-case hexadecimal, no separators).
pub fn certificate_serial(pem: &str) -> Result<String> {
    use x509_cert::Certificate;
    use x509_cert::der::DecodePem;
    let certificate = Certificate::from_pem(pem.trim().as_bytes())
        .map_err(|_| PayError::BadKey("证书应为 PEM 格式的 X.509 证书".into()))?;
    let serial = certificate.tbs_certificate.serial_number.as_bytes();
    // DER keeps a leading zero byte on serials whose high bit is set; WeChat Pay does not.
    let serial = match serial {
        [0, rest @ ..] if !rest.is_empty() => rest,
        all => all,
    };
    Ok(serial.iter().map(|b| format!("{b:02X}")).collect())
}

/// Base64 SHA256withRSA signature of `message`.
pub fn sign(key: &RsaPrivateKey, message: &[u8]) -> String {
    let signer = SigningKey::<Sha256>::new(key.clone());
    STANDARD.encode(signer.sign(message).to_bytes())
}

/// Checks a Base64 SHA256withRSA signature of `message`.
pub fn verify(key: &RsaPublicKey, message: &[u8], signature_b64: &str) -> Result<()> {
    let bytes = STANDARD
        .decode(signature_b64.trim())
        .map_err(|_| PayError::BadSignature)?;
    let signature = Signature::try_from(bytes.as_slice()).map_err(|_| PayError::BadSignature)?;
    VerifyingKey::<Sha256>::new(key.clone())
        .verify(message, &signature)
        .map_err(|_| PayError::BadSignature)
}

/// A random string of letters and digits (request nonces).
pub fn nonce(len: usize) -> String {
    use rand::Rng;
    use rand::distributions::Alphanumeric;
    rand::rngs::OsRng
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// A new 2048-bit key pair (the sandbox's own keys).
pub fn generate() -> Result<(RsaPrivateKey, RsaPublicKey)> {
    let key = RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048)
        .map_err(|e| PayError::BadKey(e.to_string()))?;
    let public = key.to_public_key();
    Ok((key, public))
}

/// PEM texts of a key pair (PKCS #8 private, SubjectPublicKeyInfo public).
pub fn to_pem(key: &RsaPrivateKey) -> Result<(String, String)> {
    use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
    let private = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| PayError::BadKey(e.to_string()))?;
    let public = key
        .to_public_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| PayError::BadKey(e.to_string()))?;
    Ok((private.to_string(), public))
}

//! WeChat Pay API v3: the `Authorization` header of our requests (WECHATPAY2-SHA256-RSA2048),
//! the signature of its answers and notifications (checked with a platform certificate or the
//! WeChat Pay public key, several at once during a migration, inside a ±5 minute window, with
//! the `WECHATPAY/SIGNTEST/` probes refused), the AEAD_AES_256_GCM resource of a notification,
//! and the transaction it carries.

use crate::{PaidNotice, PayError, Result, keys};
use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// Seconds a signed answer or notification may be away from our clock.
pub const TIMESTAMP_WINDOW_S: i64 = 300;
/// The prefix of WeChat Pay's signature probes: answered as a failure, never as genuine.
pub const SIGN_TEST_PREFIX: &str = "WECHATPAY/SIGNTEST/";
/// The notification `event_type` of a successful payment.
pub const EVENT_PAID: &str = "TRANSACTION.SUCCESS";

/// The merchant's identity and keys.
#[derive(Clone)]
pub struct Merchant {
    pub mchid: String,
    pub appid: String,
    /// Serial number of the merchant API certificate whose key signs our requests.
    pub serial_no: String,
    pub key: keys::PrivateKey,
    /// The APIv3 key (32 ASCII characters) that decrypts notification resources.
    pub api_v3_key: String,
}

/// The keys WeChat Pay signs with, by serial: platform certificates (their serial numbers) and
/// the WeChat Pay public key (`PUB_KEY_ID_…`). Both kinds may be held during a migration.
#[derive(Clone, Default)]
pub struct Verifiers {
    keys: Vec<(String, keys::PublicKey)>,
}

impl Verifiers {
    pub fn add(&mut self, serial: &str, key: keys::PublicKey) {
        self.keys.push((serial.trim().to_string(), key));
    }

    fn get(&self, serial: &str) -> Option<&keys::PublicKey> {
        self.keys
            .iter()
            .find(|(s, _)| s.eq_ignore_ascii_case(serial.trim()))
            .map(|(_, k)| k)
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The signature headers of an answer or notification (`Wechatpay-Timestamp`,
/// `Wechatpay-Nonce`, `Wechatpay-Signature`, `Wechatpay-Serial`).
#[derive(Debug, Clone, Default)]
pub struct SignedHeaders {
    pub timestamp: String,
    pub nonce: String,
    pub signature: String,
    pub serial: String,
}

/// The string WeChat Pay signs: each part followed by a newline.
fn message(parts: &[&str]) -> String {
    parts.iter().map(|p| format!("{p}\n")).collect()
}

/// The `Authorization` header of a request: `method` and `path_and_query` as sent
/// (`/v3/pay/transactions/native`), `body` empty for GET.
pub fn authorization(
    merchant: &Merchant,
    method: &str,
    path_and_query: &str,
    body: &str,
    timestamp: i64,
    nonce: &str,
) -> String {
    let timestamp = timestamp.to_string();
    let signature = keys::sign(
        &merchant.key,
        message(&[method, path_and_query, &timestamp, nonce, body]).as_bytes(),
    );
    format!(
        "WECHATPAY2-SHA256-RSA2048 mchid=\"{}\",nonce_str=\"{nonce}\",signature=\"{signature}\",timestamp=\"{timestamp}\",serial_no=\"{}\"",
        merchant.mchid, merchant.serial_no
    )
}

/// Signs an answer or notification as WeChat Pay does (the sandbox's side).
pub fn sign_message(key: &keys::PrivateKey, timestamp: i64, nonce: &str, body: &str) -> String {
    keys::sign(
        key,
        message(&[&timestamp.to_string(), nonce, body]).as_bytes(),
    )
}

/// Checks the signature of an answer or notification at `now_s` (Unix seconds).
pub fn verify(
    verifiers: &Verifiers,
    headers: &SignedHeaders,
    body: &[u8],
    now_s: i64,
) -> Result<()> {
    if headers.signature.starts_with(SIGN_TEST_PREFIX) {
        return Err(PayError::SignTest);
    }
    let timestamp: i64 = headers
        .timestamp
        .trim()
        .parse()
        .map_err(|_| PayError::Malformed("Wechatpay-Timestamp".into()))?;
    if (now_s - timestamp).abs() > TIMESTAMP_WINDOW_S {
        return Err(PayError::StaleTimestamp);
    }
    let key = verifiers
        .get(&headers.serial)
        .ok_or_else(|| PayError::UnknownSerial(headers.serial.chars().take(64).collect()))?;
    let body = std::str::from_utf8(body).map_err(|_| PayError::Malformed("body".into()))?;
    keys::verify(
        key,
        message(&[headers.timestamp.trim(), &headers.nonce, body]).as_bytes(),
        &headers.signature,
    )
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Resource {
    pub algorithm: String,
    pub ciphertext: String,
    #[serde(default)]
    pub associated_data: String,
    pub nonce: String,
    #[serde(default)]
    pub original_type: String,
}

/// A notification's body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Notification {
    pub id: String,
    #[serde(default)]
    pub create_time: String,
    #[serde(default)]
    pub resource_type: String,
    pub event_type: String,
    #[serde(default)]
    pub summary: String,
    pub resource: Resource,
}

/// Decrypts a notification's resource with the APIv3 key.
pub fn decrypt(api_v3_key: &str, resource: &Resource) -> Result<Vec<u8>> {
    if resource.algorithm != "AEAD_AES_256_GCM" {
        return Err(PayError::Malformed(format!(
            "algorithm {}",
            resource.algorithm.chars().take(32).collect::<String>()
        )));
    }
    let cipher = Aes256Gcm::new_from_slice(api_v3_key.as_bytes())
        .map_err(|_| PayError::BadKey("APIv3 密钥应为 32 个字符".into()))?;
    if resource.nonce.len() != 12 {
        return Err(PayError::Decrypt);
    }
    let ciphertext = STANDARD
        .decode(resource.ciphertext.trim())
        .map_err(|_| PayError::Decrypt)?;
    cipher
        .decrypt(
            Nonce::from_slice(resource.nonce.as_bytes()),
            Payload {
                msg: &ciphertext,
                aad: resource.associated_data.as_bytes(),
            },
        )
        .map_err(|_| PayError::Decrypt)
}

/// Encrypts a resource as WeChat Pay does (the sandbox's side); `nonce` is 12 characters.
pub fn encrypt(
    api_v3_key: &str,
    associated_data: &str,
    nonce: &str,
    plaintext: &[u8],
) -> Result<Resource> {
    let cipher = Aes256Gcm::new_from_slice(api_v3_key.as_bytes())
        .map_err(|_| PayError::BadKey("APIv3 密钥应为 32 个字符".into()))?;
    if nonce.len() != 12 {
        return Err(PayError::Malformed("nonce".into()));
    }
    let ciphertext = cipher
        .encrypt(
            Nonce::from_slice(nonce.as_bytes()),
            Payload {
                msg: plaintext,
                aad: associated_data.as_bytes(),
            },
        )
        .map_err(|_| PayError::Decrypt)?;
    Ok(Resource {
        algorithm: "AEAD_AES_256_GCM".into(),
        ciphertext: STANDARD.encode(ciphertext),
        associated_data: associated_data.into(),
        nonce: nonce.into(),
        original_type: "transaction".into(),
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Amount {
    /// Fen.
    pub total: i64,
    #[serde(default)]
    pub currency: String,
}

/// A transaction, as a notification's resource and the order query both carry it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Transaction {
    pub appid: String,
    pub mchid: String,
    pub out_trade_no: String,
    #[serde(default)]
    pub transaction_id: String,
    /// SUCCESS, NOTPAY, CLOSED, REFUND, USERPAYING, PAYERROR, …
    pub trade_state: String,
    #[serde(default)]
    pub amount: Option<Amount>,
}

impl Transaction {
    /// The payment this transaction confirms, if it is paid and ours.
    pub fn paid(&self, merchant: &Merchant, event_id: &str) -> Result<Option<PaidNotice>> {
        if self.mchid != merchant.mchid || self.appid != merchant.appid {
            return Err(PayError::WrongMerchant);
        }
        if self.trade_state != "SUCCESS" {
            return Ok(None);
        }
        let amount = self
            .amount
            .as_ref()
            .ok_or_else(|| PayError::Malformed("amount".into()))?;
        if amount.currency != "CNY" && !amount.currency.is_empty() {
            return Err(PayError::BadAmount(
                amount.currency.chars().take(8).collect(),
            ));
        }
        Ok(Some(PaidNotice {
            event_id: event_id.to_string(),
            out_trade_no: self.out_trade_no.clone(),
            provider_trade_no: self.transaction_id.clone(),
            amount_fen: amount.total,
        }))
    }
}

/// Everything a payment notification must pass: signature (window, probe, serial), envelope,
/// event type, decryption, merchant and app. `Ok(None)` for a genuine notification that does not
/// say "paid" (nothing to do but acknowledge it).
pub fn read_notification(
    merchant: &Merchant,
    verifiers: &Verifiers,
    headers: &SignedHeaders,
    body: &[u8],
    now_s: i64,
) -> Result<Option<PaidNotice>> {
    Ok(
        match read_any_notification(merchant, verifiers, headers, body, now_s)? {
            Some(Notice::Paid(paid)) => Some(paid),
            _ => None,
        },
    )
}

/// A refund's outcome as a refund notification (`REFUND.SUCCESS`, `REFUND.ABNORMAL`,
/// `REFUND.CLOSED`) tells it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct RefundNotice {
    pub mchid: String,
    pub out_trade_no: String,
    /// Our refund number.
    pub out_refund_no: String,
    /// WeChat Pay's refund number.
    pub refund_id: String,
    /// SUCCESS, CLOSED or ABNORMAL.
    pub refund_status: String,
}

impl RefundNotice {
    pub fn succeeded(&self) -> bool {
        self.refund_status == "SUCCESS"
    }
}

/// What a genuine notification says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    Paid(PaidNotice),
    Refund(RefundNotice),
}

/// A payment or refund notification, through every check of `read_notification` (a refund's
/// merchant must be ours too). `Ok(None)`: genuine, nothing to do.
pub fn read_any_notification(
    merchant: &Merchant,
    verifiers: &Verifiers,
    headers: &SignedHeaders,
    body: &[u8],
    now_s: i64,
) -> Result<Option<Notice>> {
    verify(verifiers, headers, body, now_s)?;
    let notification: Notification =
        serde_json::from_slice(body).map_err(|e| PayError::Malformed(e.to_string()))?;
    let refund = notification.event_type.starts_with("REFUND.");
    if notification.event_type != EVENT_PAID && !refund {
        return Ok(None);
    }
    let plain = decrypt(&merchant.api_v3_key, &notification.resource)?;
    if refund {
        let notice: RefundNotice =
            serde_json::from_slice(&plain).map_err(|e| PayError::Malformed(e.to_string()))?;
        if notice.mchid != merchant.mchid {
            return Err(PayError::WrongMerchant);
        }
        return Ok(Some(Notice::Refund(notice)));
    }
    let transaction: Transaction =
        serde_json::from_slice(&plain).map_err(|e| PayError::Malformed(e.to_string()))?;
    Ok(transaction
        .paid(merchant, &notification.id)?
        .map(Notice::Paid))
}

/// What an order at WeChat Pay says: what is bought, our number, the amount, where its
/// notification goes and when it expires.
#[derive(Debug, Clone, Copy)]
pub struct OrderTerms<'a> {
    pub description: &'a str,
    pub out_trade_no: &'a str,
    pub amount_fen: i64,
    pub notify_url: &'a str,
    pub time_expire_rfc3339: &'a str,
}

/// The body of a Native order (`POST /v3/pay/transactions/native`).
pub fn native_order_body(merchant: &Merchant, terms: &OrderTerms) -> String {
    order_body(merchant, terms).to_string()
}

/// The body of an H5 order (`POST /v3/pay/transactions/h5`), paid in a phone's browser:
/// WeChat Pay wants the payer's IP address and the kind of page.
pub fn h5_order_body(merchant: &Merchant, terms: &OrderTerms, payer_ip: &str) -> String {
    let mut body = order_body(merchant, terms);
    body["scene_info"] = serde_json::json!({
        "payer_client_ip": payer_ip,
        "h5_info": {"type": "Wap"},
    });
    body.to_string()
}

fn order_body(merchant: &Merchant, terms: &OrderTerms) -> serde_json::Value {
    serde_json::json!({
        "appid": merchant.appid,
        "mchid": merchant.mchid,
        "description": terms.description.chars().take(127).collect::<String>(),
        "out_trade_no": terms.out_trade_no,
        "time_expire": terms.time_expire_rfc3339,
        "notify_url": terms.notify_url,
        "amount": {"total": terms.amount_fen, "currency": "CNY"},
    })
}

//! The message formats of the payment providers Wenjian speaks — WeChat Pay API v3 and the
//! Alipay OpenAPI — as pure functions: request signatures, notification verification, resource
//! decryption and exact amounts. No HTTP server and no SQL: the server decides what a verified
//! notice means for an order; this crate only says whether a message is genuine and what it says.
//! The sandbox uses the same functions with keys it generates, so it speaks the same protocol.

pub mod alipay;
pub mod amount;
pub mod keys;
pub mod wechat;

/// Why a message was refused. Every variant has a stable code for logs and API answers.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayError {
    #[error("密钥无法读取：{0}")]
    BadKey(String),
    #[error("签名验证失败")]
    BadSignature,
    #[error("签名时间戳超出 5 分钟窗口")]
    StaleTimestamp,
    #[error("微信支付签名探测请求（WECHATPAY/SIGNTEST）")]
    SignTest,
    #[error("未知的平台证书或公钥序列号：{0}")]
    UnknownSerial(String),
    #[error("通知内容解密失败")]
    Decrypt,
    #[error("消息格式不正确：{0}")]
    Malformed(String),
    #[error("金额格式不正确：{0}")]
    BadAmount(String),
    #[error("商户号或应用号与本站配置不符")]
    WrongMerchant,
}

impl PayError {
    pub fn code(&self) -> &'static str {
        match self {
            PayError::BadKey(_) => "pay_bad_key",
            PayError::BadSignature => "pay_bad_signature",
            PayError::StaleTimestamp => "pay_stale_timestamp",
            PayError::SignTest => "pay_sign_test",
            PayError::UnknownSerial(_) => "pay_unknown_serial",
            PayError::Decrypt => "pay_decrypt_failed",
            PayError::Malformed(_) => "pay_malformed",
            PayError::BadAmount(_) => "pay_bad_amount",
            PayError::WrongMerchant => "pay_wrong_merchant",
        }
    }
}

pub type Result<T> = std::result::Result<T, PayError>;

/// A payment a provider confirmed, after every check passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaidNotice {
    /// The notification's own id (WeChat `id`, Alipay `notify_id`).
    pub event_id: String,
    pub out_trade_no: String,
    /// The provider's trade number (WeChat `transaction_id`, Alipay `trade_no`).
    pub provider_trade_no: String,
    pub amount_fen: i64,
}

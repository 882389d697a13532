//! Alipay OpenAPI (RSA2): the signed parameters of our requests (`alipay.trade.precreate`,
//! `alipay.trade.page.pay`, `alipay.trade.wap.pay`, `query`, `close`, `refund`), the signature of
//! its answers, and its asynchronous notifications — signature, `app_id`, `seller_id`,
//! `trade_status` and `total_amount` (read exactly) all checked. The reply to a notification
//! that was handled is exactly `success`.

use crate::{PaidNotice, PayError, Result, amount, keys};
use serde_json::value::RawValue;
use std::collections::HashMap;

/// What Alipay must read back, exactly, once a notification is handled.
pub const NOTIFY_REPLY: &str = "success";

/// The application's identity and keys.
#[derive(Clone)]
pub struct App {
    pub app_id: String,
    /// The merchant's PID (`seller_id` in notifications); checked when set.
    pub seller_id: Option<String>,
    pub key: keys::PrivateKey,
    /// Alipay's public key for this application.
    pub alipay_public_key: keys::PublicKey,
}

/// The string Alipay signs: the parameters with a value, but not those in `exclude`, sorted by
/// name, as `name=value` joined with `&` (values as they are, not URL-encoded).
pub fn signing_content(params: &[(String, String)], exclude: &[&str]) -> String {
    let mut kept: Vec<&(String, String)> = params
        .iter()
        .filter(|(k, v)| !v.is_empty() && !exclude.contains(&k.as_str()))
        .collect();
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    kept.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The parameters of a request to the gateway, signed (`sign` added). `timestamp` is
/// "yyyy-MM-dd HH:mm:ss" in China Standard Time.
pub fn request_params(
    app: &App,
    method: &str,
    biz_content: &serde_json::Value,
    notify_url: Option<&str>,
    timestamp: &str,
) -> Vec<(String, String)> {
    let extra: Vec<(&str, &str)> = notify_url.map(|u| ("notify_url", u)).into_iter().collect();
    signed_params(app, method, biz_content, &extra, timestamp)
}

/// The signed parameters of a payment page (`alipay.trade.wap.pay` on a phone,
/// `alipay.trade.page.pay` on a computer): the browser is sent to the gateway with them as the
/// query string, pays there, and comes back to `return_url`; the notification still decides.
pub fn page_pay_url(
    app: &App,
    gateway: &str,
    method: &str,
    biz_content: &serde_json::Value,
    notify_url: &str,
    return_url: &str,
    timestamp: &str,
) -> String {
    let params = signed_params(
        app,
        method,
        biz_content,
        &[("notify_url", notify_url), ("return_url", return_url)],
        timestamp,
    );
    let query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&params)
        .finish();
    // A gateway configured with a query of its own (`…gateway.do?charset=utf-8`) keeps it.
    let joiner = if gateway.contains('?') { '&' } else { '?' };
    format!("{gateway}{joiner}{query}")
}

/// Request parameters with `extra` ones (notify_url, return_url) among those signed.
pub fn signed_params(
    app: &App,
    method: &str,
    biz_content: &serde_json::Value,
    extra: &[(&str, &str)],
    timestamp: &str,
) -> Vec<(String, String)> {
    let mut params: Vec<(String, String)> = vec![
        ("app_id".into(), app.app_id.clone()),
        ("method".into(), method.into()),
        ("format".into(), "JSON".into()),
        ("charset".into(), "utf-8".into()),
        ("sign_type".into(), "RSA2".into()),
        ("timestamp".into(), timestamp.into()),
        ("version".into(), "1.0".into()),
        ("biz_content".into(), biz_content.to_string()),
    ];
    for (name, value) in extra {
        params.push((name.to_string(), value.to_string()));
    }
    let signature = keys::sign(&app.key, signing_content(&params, &["sign"]).as_bytes());
    params.push(("sign".into(), signature));
    params
}

/// Checks a request's signature as the gateway does (the sandbox's side).
pub fn verify_request(public_key: &keys::PublicKey, params: &[(String, String)]) -> Result<()> {
    let signature = field(params, "sign").ok_or(PayError::BadSignature)?;
    keys::verify(
        public_key,
        signing_content(params, &["sign"]).as_bytes(),
        signature,
    )
}

fn field<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Signs notification parameters as Alipay does (the sandbox's side): `sign_type` and `sign`
/// are added, the signature covering the others.
pub fn sign_notify(key: &keys::PrivateKey, params: &mut Vec<(String, String)>) {
    params.retain(|(k, _)| k != "sign" && k != "sign_type");
    let signature = keys::sign(key, signing_content(params, &[]).as_bytes());
    params.push(("sign_type".into(), "RSA2".into()));
    params.push(("sign".into(), signature));
}

/// Everything an asynchronous notification must pass: the RSA2 signature over every
/// parameter but `sign` and `sign_type`, our `app_id` and `seller_id`, and an exact amount.
/// `Ok(None)` for a genuine notification that does not say "paid" (WAIT_BUYER_PAY,
/// TRADE_CLOSED): nothing to do but acknowledge it.
pub fn read_notify(app: &App, params: &[(String, String)]) -> Result<Option<PaidNotice>> {
    let signature = field(params, "sign").ok_or(PayError::BadSignature)?;
    if field(params, "sign_type").is_some_and(|t| t != "RSA2") {
        return Err(PayError::BadSignature);
    }
    keys::verify(
        &app.alipay_public_key,
        signing_content(params, &["sign", "sign_type"]).as_bytes(),
        signature,
    )?;
    let need = |name: &str| {
        field(params, name)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| PayError::Malformed(name.to_string()))
    };
    if need("app_id")? != app.app_id {
        return Err(PayError::WrongMerchant);
    }
    if let Some(seller) = &app.seller_id
        && field(params, "seller_id") != Some(seller.as_str())
    {
        return Err(PayError::WrongMerchant);
    }
    if !matches!(need("trade_status")?, "TRADE_SUCCESS" | "TRADE_FINISHED") {
        return Ok(None);
    }
    Ok(Some(PaidNotice {
        event_id: need("notify_id")?.to_string(),
        out_trade_no: need("out_trade_no")?.to_string(),
        provider_trade_no: need("trade_no")?.to_string(),
        amount_fen: amount::parse_yuan(need("total_amount")?)?,
    }))
}

/// The `…_response` object of a gateway answer, after its signature (over that object's exact
/// text) was checked. `method` is the request's (`alipay.trade.precreate`).
pub fn read_response(app: &App, method: &str, body: &str) -> Result<serde_json::Value> {
    let outer: HashMap<String, Box<RawValue>> =
        serde_json::from_str(body).map_err(|e| PayError::Malformed(e.to_string()))?;
    let name = format!("{}_response", method.replace('.', "_"));
    let response = outer
        .get(&name)
        .ok_or_else(|| PayError::Malformed(name.clone()))?;
    let signature: String = outer
        .get("sign")
        .and_then(|s| serde_json::from_str(s.get()).ok())
        .ok_or(PayError::BadSignature)?;
    keys::verify(
        &app.alipay_public_key,
        response.get().as_bytes(),
        &signature,
    )?;
    serde_json::from_str(response.get()).map_err(|e| PayError::Malformed(e.to_string()))
}

/// A gateway answer as Alipay writes it (the sandbox's side): the response object and its
/// signature.
pub fn signed_response(
    key: &keys::PrivateKey,
    method: &str,
    response: &serde_json::Value,
) -> String {
    let text = response.to_string();
    let signature = keys::sign(key, text.as_bytes());
    format!(
        "{{\"{}_response\":{text},\"sign\":{}}}",
        method.replace('.', "_"),
        serde_json::Value::String(signature)
    )
}

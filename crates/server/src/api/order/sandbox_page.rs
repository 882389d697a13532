//! The sandbox's phone page: what a student's phone shows after scanning the QR code of an
//! order while `payment = "sandbox"` — the amount, a 确认支付 button, and switches that make the
//! provider's notification arrive twice, late, never, or forged. Not served otherwise.

use crate::payments::sandbox::{PaidOnPhone, PaySwitches};
use crate::state::AppState;
use axum::Form;
use axum::body::Bytes;
use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Redirect, Response};

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        r#"<!doctype html><html lang="zh-CN"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>{title}</title>
<style>
body{{margin:0;font-family:system-ui,"Noto Sans CJK SC","PingFang SC",sans-serif;background:#f5f6f8;color:#1f2329}}
.banner{{background:#fff3cd;color:#8a5a00;padding:10px 16px;font-size:14px;border-bottom:1px solid #f0d98c}}
.card{{background:#fff;margin:16px;border-radius:12px;padding:20px;box-shadow:0 1px 3px rgba(0,0,0,.06)}}
.amount{{font-size:34px;font-weight:600;margin:8px 0}}
.muted{{color:#646a73;font-size:14px}}
button{{width:100%;padding:14px;border:0;border-radius:8px;font-size:17px;color:#fff;margin-top:16px}}
.wechat{{background:#07c160}} .alipay{{background:#1677ff}}
details{{margin-top:16px;font-size:14px}} label{{display:block;margin:8px 0}}
</style></head><body>
<div class="banner">支付沙箱：这是模拟的支付页面，不会产生真实扣款。</div>{body}</body></html>"#
    ))
}

fn not_served() -> Response {
    (StatusCode::NOT_FOUND, "支付沙箱未开启").into_response()
}

/// The scheme, host and port of a web address.
fn origin(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.origin().ascii_serialization())
}

/// Where the phone goes back after paying: the order's Alipay `return_url` or WeChat H5's
/// `redirect_url` — only to the merchant's own site (the origin of its notify URL), as the
/// providers only send payers back to a merchant's registered domain.
fn back_link(url: Option<&str>, merchant: Option<&str>) -> String {
    let merchant = merchant.and_then(origin);
    match url.filter(|u| merchant.is_some() && origin(u) == merchant) {
        Some(url) => format!(
            r#"<p><a href="{}" data-testid="sandbox-return">返回商户页面</a></p>"#,
            escape(url)
        ),
        None => "<p>请回到电脑上的页面查看订单状态。</p>".to_string(),
    }
}

#[derive(serde::Deserialize)]
pub struct PageQuery {
    /// WeChat H5: where the payer returns after paying.
    #[serde(default)]
    redirect_url: Option<String>,
}

pub async fn show(
    State(state): State<AppState>,
    Path(no): Path<String>,
    Query(query): Query<PageQuery>,
) -> Response {
    let Some(sandbox) = state.payments.sandbox() else {
        return not_served();
    };
    let Some(order) = sandbox.describe(&no) else {
        return (
            StatusCode::NOT_FOUND,
            page(
                "订单不存在",
                r#"<div class="card">订单不存在或已失效。</div>"#,
            ),
        )
            .into_response();
    };
    let (channel, fen, description) = (order.channel, order.amount_fen, order.description);
    let class = channel.as_str();
    let back = query.redirect_url.unwrap_or_default();
    let state_line = if order.paid {
        "<p class=\"muted\">此订单已支付；再次确认只会重发支付通知。</p>"
    } else {
        ""
    };
    page(
        &format!("{} · 确认支付", channel.label()),
        &format!(
            r#"<div class="card"><div class="muted">{label} · 文鉴</div>
<div class="amount">¥{amount}</div><div>{description}</div>
<div class="muted">订单号 {no}</div>{state_line}
<form method="post"><input type="hidden" name="redirect_url" value="{back}"><button class="{class}" type="submit">确认支付</button>
<details><summary>沙箱开关（测试支付通知）</summary>
<label>通知发送次数 <select name="copies"><option value="1" selected>1 次</option><option value="2">2 次（重复通知）</option><option value="0">不发送（通知丢失）</option></select></label>
<label>延迟 <select name="delay_ms"><option value="0" selected>立即</option><option value="5000">5 秒</option></select></label>
<label><input type="checkbox" name="forged" value="true"> 伪造签名</label>
</details></form></div>"#,
            label = channel.label(),
            amount = pay::amount::format_yuan(fen),
            description = escape(&description),
            no = escape(&no),
            back = escape(&back),
        ),
    )
    .into_response()
}

#[derive(serde::Deserialize)]
pub struct SwitchForm {
    #[serde(default)]
    copies: Option<u32>,
    #[serde(default)]
    delay_ms: Option<u64>,
    #[serde(default)]
    forged: Option<String>,
    #[serde(default)]
    redirect_url: Option<String>,
}

pub async fn pay(
    State(state): State<AppState>,
    Path(no): Path<String>,
    Form(form): Form<SwitchForm>,
) -> Response {
    let Some(sandbox) = state.payments.sandbox() else {
        return not_served();
    };
    let switches = PaySwitches {
        copies: form.copies.unwrap_or(1),
        delay_ms: form.delay_ms.unwrap_or(0),
        forged: form.forged.as_deref() == Some("true"),
    };
    let described = sandbox.describe(&no);
    let merchant = described.as_ref().map(|o| o.notify_url.clone());
    let return_url = described
        .and_then(|o| o.return_url)
        .or(form.redirect_url.filter(|u| !u.is_empty()));
    let text = match sandbox.pay(&no, switches).await {
        PaidOnPhone::Paid { notify_statuses } => {
            let sent = if notify_statuses.is_empty() {
                "支付通知未发送（模拟通知丢失，网站的对账任务会查询到这笔支付）。".to_string()
            } else {
                format!(
                    "支付通知已发送 {} 次，网站应答 HTTP {}。",
                    notify_statuses.len(),
                    notify_statuses
                        .iter()
                        .map(u16::to_string)
                        .collect::<Vec<_>>()
                        .join("、")
                )
            };
            format!(
                r#"<div class="card"><div class="amount">支付成功</div><p class="muted">{sent}</p>{}</div>"#,
                back_link(return_url.as_deref(), merchant.as_deref())
            )
        }
        PaidOnPhone::Closed => r#"<div class="card">订单已关闭，无法支付。</div>"#.to_string(),
        PaidOnPhone::Unknown => r#"<div class="card">订单不存在或已失效。</div>"#.to_string(),
    };
    page("支付结果", &text).into_response()
}

/// WeChat Pay's gateway played over HTTP (`/sandbox/gateway/wechat/v3/…`), for a site
/// configured with `payment = "live"` that rehearses against this sandbox.
pub async fn wechat_gateway(
    State(state): State<AppState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(sandbox) = state.payments.sandbox() else {
        return not_served();
    };
    let path_and_query = uri.path_and_query().map_or("", |p| p.as_str());
    let Some(path) = path_and_query.strip_prefix("/sandbox/gateway/wechat") else {
        return not_served();
    };
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let body = String::from_utf8_lossy(&body);
    let base = crate::auth::public_base(&headers, &state);
    let (status, signed, answer) =
        sandbox.wechat_gateway(method.as_str(), path, authorization, &body, Some(&base));
    let mut response = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        answer,
    )
        .into_response();
    let out = response.headers_mut();
    for (name, value) in [
        ("Wechatpay-Timestamp", signed.timestamp),
        ("Wechatpay-Nonce", signed.nonce),
        ("Wechatpay-Signature", signed.signature),
        ("Wechatpay-Serial", signed.serial),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            out.insert(name, value);
        }
    }
    if status != 204 {
        out.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    response
}

fn pairs(bytes: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(bytes)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Alipay's gateway played over HTTP (`POST /sandbox/gateway/alipay`, a form).
pub async fn alipay_gateway(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let Some(sandbox) = state.payments.sandbox() else {
        return not_served();
    };
    // The SDKs put the common parameters in the address and the rest in the form; both count.
    let mut params = pairs(query.unwrap_or_default().as_bytes());
    params.extend(pairs(&body));
    let base = crate::auth::public_base(&headers, &state);
    (
        [(header::CONTENT_TYPE, "application/json;charset=utf-8")],
        sandbox.alipay_gateway(&params, Some(&base)),
    )
        .into_response()
}

/// Alipay's payment page (`GET /sandbox/gateway/alipay?method=alipay.trade.wap.pay&…`): the
/// browser arrives with our signed parameters and goes on to the phone page.
pub async fn alipay_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(sandbox) = state.payments.sandbox() else {
        return not_served();
    };
    let params = pairs(query.unwrap_or_default().as_bytes());
    let base = crate::auth::public_base(&headers, &state);
    match sandbox.alipay_page(&params, &base) {
        Ok(page) => Redirect::to(&page).into_response(),
        Err(why) => (
            StatusCode::BAD_REQUEST,
            page(
                "支付请求有误",
                &format!(
                    r#"<div class="card">支付宝（沙箱）无法处理该请求：{}</div>"#,
                    escape(&why)
                ),
            ),
        )
            .into_response(),
    }
}

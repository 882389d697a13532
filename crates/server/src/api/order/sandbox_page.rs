//! The sandbox's phone page: what a student's phone shows after scanning the QR code of an
//! order while `payment = "sandbox"` — the amount, a 确认支付 button, and switches that make the
//! provider's notification arrive twice, late, never, or forged. Not served otherwise.

use crate::payments::sandbox::{PaidOnPhone, PaySwitches};
use crate::state::AppState;
use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

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

pub async fn show(State(state): State<AppState>, Path(no): Path<String>) -> Response {
    let Some(sandbox) = state.payments.sandbox() else {
        return not_served();
    };
    let Some((channel, fen, description, paid)) = sandbox.describe(&no) else {
        return (
            StatusCode::NOT_FOUND,
            page(
                "订单不存在",
                r#"<div class="card">订单不存在或已失效。</div>"#,
            ),
        )
            .into_response();
    };
    let class = channel.as_str();
    let state_line = if paid {
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
<form method="post"><button class="{class}" type="submit">确认支付</button>
<details><summary>沙箱开关（测试支付通知）</summary>
<label>通知发送次数 <select name="copies"><option value="1" selected>1 次</option><option value="2">2 次（重复通知）</option><option value="0">不发送（通知丢失）</option></select></label>
<label>延迟 <select name="delay_ms"><option value="0" selected>立即</option><option value="5000">5 秒</option></select></label>
<label><input type="checkbox" name="forged" value="true"> 伪造签名</label>
</details></form></div>"#,
            label = channel.label(),
            amount = pay::amount::format_yuan(fen),
            description = escape(&description),
            no = escape(&no),
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
                r#"<div class="card"><div class="amount">支付成功</div><p class="muted">{sent}</p><p>请回到电脑上的页面查看订单状态。</p></div>"#
            )
        }
        PaidOnPhone::Closed => r#"<div class="card">订单已关闭，无法支付。</div>"#.to_string(),
        PaidOnPhone::Unknown => r#"<div class="card">订单不存在或已失效。</div>"#.to_string(),
    };
    page("支付结果", &text).into_response()
}

//! Online payment: opening an order at the provider (a QR code's content), reading its signed
//! notifications, and asking it about orders whose notification never came. The providers'
//! message formats are the `pay` crate's; what a verified notice does to an order is the
//! store's (`Store::record_payment`). With `payment = "off"` nothing here runs and the pages
//! say online payment is not configured; with `"sandbox"` the simulator in `sandbox` plays both
//! providers over their documented protocols.

pub mod sandbox;

use pay::{PaidNotice, PayError, alipay, wechat};
use std::sync::Arc;
use store::Order;

/// How an order is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    Wechat,
    Alipay,
}

impl Channel {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "wechat" => Some(Channel::Wechat),
            "alipay" => Some(Channel::Alipay),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Wechat => "wechat",
            Channel::Alipay => "alipay",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Channel::Wechat => "微信支付",
            Channel::Alipay => "支付宝",
        }
    }
}

/// Where our requests to a provider go: the providers' gateways over HTTPS (or another
/// Wenjian's sandbox, for a rehearsal), or the sandbox of this process, which answers the same
/// signed bytes a live gateway would get.
#[derive(Clone)]
enum Gateway {
    Sandbox(Arc<sandbox::Sandbox>),
    Live(Arc<LiveGateway>),
}

/// The providers' HTTP gateways.
struct LiveGateway {
    http: reqwest::Client,
    /// `https://api.mch.weixin.qq.com`.
    wechat_base: String,
    /// `https://openapi.alipay.com/gateway.do`.
    alipay_url: String,
}

/// Largest gateway answer read (theirs are a few hundred bytes).
const MAX_GATEWAY_ANSWER: usize = 256 * 1024;

impl LiveGateway {
    async fn wechat(
        &self,
        method: &str,
        path: &str,
        authorization: &str,
        body: &str,
    ) -> Result<(u16, wechat::SignedHeaders, String), ProviderError> {
        let url = format!("{}{path}", self.wechat_base.trim_end_matches('/'));
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| ProviderError(format!("请求方法无效：{e}")))?;
        let mut request = self
            .http
            .request(method, url)
            .header("Authorization", authorization)
            .header("Accept", "application/json");
        if !body.is_empty() {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let answer = request
            .send()
            .await
            .map_err(|e| ProviderError(format!("无法连接微信支付：{e}")))?;
        let status = answer.status().as_u16();
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        let headers = wechat::SignedHeaders {
            timestamp: header("Wechatpay-Timestamp"),
            nonce: header("Wechatpay-Nonce"),
            signature: header("Wechatpay-Signature"),
            serial: header("Wechatpay-Serial"),
        };
        let text = read_answer(answer, "微信支付").await?;
        Ok((status, headers, text))
    }

    async fn alipay(&self, params: &[(String, String)]) -> Result<String, ProviderError> {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        let answer = self
            .http
            .post(&self.alipay_url)
            .header(
                "Content-Type",
                "application/x-www-form-urlencoded;charset=utf-8",
            )
            .body(body)
            .send()
            .await
            .map_err(|e| ProviderError(format!("无法连接支付宝：{e}")))?;
        read_answer(answer, "支付宝").await
    }
}

/// A gateway's answer as text, refused when larger than any real answer.
async fn read_answer(
    mut answer: reqwest::Response,
    provider: &str,
) -> Result<String, ProviderError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = answer
        .chunk()
        .await
        .map_err(|e| ProviderError(format!("{provider}应答中断：{e}")))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_GATEWAY_ANSWER {
            return Err(ProviderError(format!("{provider}应答过长，已放弃")));
        }
    }
    String::from_utf8(bytes).map_err(|_| ProviderError(format!("{provider}应答不是 UTF-8 文本")))
}

/// The merchants of `payment = "live"`, read from their key files.
type LiveMerchants = (
    Option<(wechat::Merchant, wechat::Verifiers)>,
    Option<alipay::App>,
    LiveGateway,
);

/// A gateway's address: HTTPS, or plain HTTP only to this machine (a rehearsal sandbox).
fn gateway_address(url: &str, provider: &str) -> Result<String, String> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| format!("{provider}网关地址无效（{url}）：{e}"))?;
    let local = match parsed.host() {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if parsed.scheme() != "https" && !(parsed.scheme() == "http" && local) {
        return Err(format!(
            "{provider}网关地址必须是 https://（本机的演练沙箱除外）：{url}"
        ));
    }
    Ok(url.trim_end_matches('/').to_string())
}

fn live_merchants(config: &crate::Config) -> Result<LiveMerchants, String> {
    let read = |path: &std::path::Path, what: &str| {
        std::fs::read_to_string(path)
            .map_err(|e| format!("{what}（{}）无法读取：{e}", path.display()))
    };
    let mut wechat_side = None;
    let mut wechat_base = String::new();
    if let Some(w) = &config.wechat_pay {
        let key = pay::keys::private_key(&read(&w.private_key_file, "微信支付商户私钥")?)
            .map_err(|e| format!("微信支付商户私钥：{e}"))?;
        if w.api_v3_key.len() != 32 || !w.api_v3_key.is_ascii() {
            return Err("微信支付 APIv3 密钥应为 32 个字符".into());
        }
        let mut verifiers = wechat::Verifiers::default();
        for path in &w.platform_certificate_files {
            let pem = read(path, "微信支付平台证书")?;
            let serial = pay::keys::certificate_serial(&pem)
                .map_err(|e| format!("微信支付平台证书（{}）：{e}", path.display()))?;
            let public = pay::keys::public_key(&pem)
                .map_err(|e| format!("微信支付平台证书（{}）：{e}", path.display()))?;
            verifiers.add(&serial, public);
        }
        match (&w.public_key_file, &w.public_key_id) {
            (Some(path), Some(id)) => {
                let public = pay::keys::public_key(&read(path, "微信支付公钥")?)
                    .map_err(|e| format!("微信支付公钥：{e}"))?;
                verifiers.add(id, public);
            }
            (None, None) => {}
            _ => return Err("微信支付公钥需要同时配置 public_key_file 和 public_key_id".into()),
        }
        if verifiers.is_empty() {
            return Err(
                "微信支付需要平台证书（platform_certificate_files）或微信支付公钥（public_key_file、public_key_id）来验证应答和通知"
                    .into(),
            );
        }
        let merchant = wechat::Merchant {
            mchid: w.mchid.clone(),
            appid: w.appid.clone(),
            serial_no: w.merchant_serial_no.clone(),
            key,
            api_v3_key: w.api_v3_key.clone(),
        };
        wechat_side = Some((merchant, verifiers));
        wechat_base = gateway_address(&w.gateway, "微信支付")?;
    }
    let mut alipay_side = None;
    let mut alipay_url = String::new();
    if let Some(a) = &config.alipay {
        let key = pay::keys::private_key(&read(&a.private_key_file, "支付宝应用私钥")?)
            .map_err(|e| format!("支付宝应用私钥：{e}"))?;
        let public = pay::keys::public_key(&read(&a.alipay_public_key_file, "支付宝公钥")?)
            .map_err(|e| format!("支付宝公钥：{e}"))?;
        alipay_side = Some(alipay::App {
            app_id: a.app_id.clone(),
            seller_id: a.seller_id.clone(),
            key,
            alipay_public_key: public,
        });
        alipay_url = gateway_address(&a.gateway, "支付宝")?;
    }
    let http = reqwest::Client::builder()
        // A gateway answers; it never sends us elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(std::time::Duration::from_secs(5))
        .timeout(std::time::Duration::from_secs(20))
        .user_agent(concat!("wenjian/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("HTTP 客户端无法创建：{e}"))?;
    Ok((
        wechat_side,
        alipay_side,
        LiveGateway {
            http,
            wechat_base,
            alipay_url,
        },
    ))
}

/// The configured providers.
pub struct Payments {
    mode: String,
    wechat: Option<(wechat::Merchant, wechat::Verifiers)>,
    alipay: Option<alipay::App>,
    gateway: Option<Gateway>,
    /// Why online payment cannot run although configured (keys unreadable, say).
    broken: Option<String>,
}

/// Why a provider call failed, in words for the user.
#[derive(Debug)]
pub struct ProviderError(pub String);

/// An order as its provider knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderAtProvider {
    Paid(PaidNotice),
    /// Not paid (or never scanned); it may still be.
    Unpaid,
    /// Closed unpaid: it can no longer be paid.
    Closed,
}

/// A refund as its provider knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundState {
    /// The money went back (the provider's refund number).
    Succeeded(String),
    /// Accepted, not finished.
    Processing,
    /// Never made, or closed without paying: why.
    NotMade(String),
    /// WeChat Pay's ABNORMAL: the money left the merchant's account but could not reach the
    /// payer (a closed card); the merchant sends it on in 商户平台. Not ours to give up.
    Abnormal,
}

impl Payments {
    pub fn new(config: &crate::Config) -> Self {
        let mut payments = Payments {
            mode: config.payment.clone(),
            wechat: None,
            alipay: None,
            gateway: None,
            broken: None,
        };
        if config.payment == "sandbox" {
            match sandbox::Sandbox::open(&config.data_dir.join("sandbox")) {
                Ok(sandbox) => {
                    let sandbox = Arc::new(sandbox);
                    payments.wechat = Some(sandbox.wechat_merchant_side());
                    payments.alipay = Some(sandbox.alipay_app_side());
                    payments.gateway = Some(Gateway::Sandbox(sandbox));
                }
                Err(e) => payments.broken = Some(format!("支付沙箱无法启动：{e}")),
            }
        }
        if config.payment == "live" {
            match live_merchants(config) {
                Ok((wechat, alipay, gateway)) => {
                    payments.wechat = wechat;
                    payments.alipay = alipay;
                    payments.gateway = Some(Gateway::Live(Arc::new(gateway)));
                }
                Err(why) => {
                    tracing::error!(error = %why, "online payment cannot run");
                    payments.broken = Some(format!("在线支付配置有误，暂不可用：{why}"));
                }
            }
        }
        payments
    }

    /// `off`, `sandbox` or `live`.
    pub fn mode(&self) -> &str {
        &self.mode
    }

    pub fn is_sandbox(&self) -> bool {
        self.mode == "sandbox"
    }

    /// The channels that can take a payment now.
    pub fn channels(&self) -> Vec<Channel> {
        let mut out = Vec::new();
        if self.wechat.is_some() {
            out.push(Channel::Wechat);
        }
        if self.alipay.is_some() {
            out.push(Channel::Alipay);
        }
        out
    }

    /// Why online payment is unavailable, for the user; `None` when a channel works.
    pub fn unavailable(&self) -> Option<String> {
        if let Some(why) = &self.broken {
            return Some(why.clone());
        }
        self.channels().is_empty().then(|| {
            "本站尚未配置在线支付（微信支付、支付宝），目前只能使用账户余额支付；如需充值请联系管理员".to_string()
        })
    }

    /// The gateway our requests go to; why online payment is unavailable when there is none.
    fn gateway(&self) -> Result<&Gateway, ProviderError> {
        self.gateway.as_ref().ok_or_else(|| {
            ProviderError(
                self.unavailable()
                    .unwrap_or_else(|| "未配置在线支付".to_string()),
            )
        })
    }

    /// Our WeChat Pay merchant and the keys its answers are checked with.
    fn wechat_side(&self) -> Result<&(wechat::Merchant, wechat::Verifiers), ProviderError> {
        self.wechat
            .as_ref()
            .ok_or_else(|| ProviderError("本站未开通微信支付".into()))
    }

    /// Our Alipay application.
    fn alipay_side(&self) -> Result<&alipay::App, ProviderError> {
        self.alipay
            .as_ref()
            .ok_or_else(|| ProviderError("本站未开通支付宝".into()))
    }

    pub fn sandbox(&self) -> Option<&Arc<sandbox::Sandbox>> {
        match &self.gateway {
            Some(Gateway::Sandbox(s)) => Some(s),
            _ => None,
        }
    }

    /// Opens `order` at the provider of `channel`; returns what its QR code holds (WeChat's
    /// `code_url`, Alipay's `qr_code`). `notify_base` is where notifications must go.
    pub async fn open(
        &self,
        channel: Channel,
        order: &Order,
        notify_base: &str,
        expires_rfc3339: &str,
    ) -> Result<String, ProviderError> {
        let gateway = self.gateway()?;
        match channel {
            Channel::Wechat => {
                let (merchant, verifiers) = self.wechat_side()?;
                let notify_url = format!("{notify_base}/api/order/notify/wechat");
                let body = wechat::native_order_body(
                    merchant,
                    &wechat_terms(order, &notify_url, expires_rfc3339),
                );
                let path = "/v3/pay/transactions/native";
                let answer = wechat_call(gateway, merchant, verifiers, "POST", path, &body).await?;
                answer["code_url"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ProviderError("微信支付未返回二维码链接".into()))
            }
            Channel::Alipay => {
                let app = self.alipay_side()?;
                let biz = serde_json::json!({
                    "out_trade_no": order.out_trade_no,
                    "total_amount": pay::amount::format_yuan(order.amount_fen),
                    "subject": order.title,
                    // The QR code stops paying when the order expires here, not hours later.
                    "time_expire": china_time(order.expires_at),
                });
                let method = "alipay.trade.precreate";
                let answer = alipay_call(
                    gateway,
                    app,
                    method,
                    &biz,
                    Some(&format!("{notify_base}/api/order/notify/alipay")),
                )
                .await?;
                answer["qr_code"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ProviderError("支付宝未返回二维码".into()))
            }
        }
    }

    /// Opens `order` for paying in a phone's browser: WeChat Pay H5 (`h5_url`, with our
    /// `redirect_url`) or Alipay's wap.pay page (our signed parameters in its address). The
    /// answer is where the browser goes; `return_url` is where it comes back to.
    pub async fn open_on_phone(
        &self,
        channel: Channel,
        order: &Order,
        notify_base: &str,
        return_url: &str,
        payer_ip: &str,
    ) -> Result<String, ProviderError> {
        let gateway = self.gateway()?;
        match channel {
            Channel::Wechat => {
                let (merchant, verifiers) = self.wechat_side()?;
                let notify_url = format!("{notify_base}/api/order/notify/wechat");
                let expires = rfc3339_china(order.expires_at);
                let body = wechat::h5_order_body(
                    merchant,
                    &wechat_terms(order, &notify_url, &expires),
                    payer_ip,
                );
                let path = "/v3/pay/transactions/h5";
                let answer = wechat_call(gateway, merchant, verifiers, "POST", path, &body).await?;
                let h5_url = answer["h5_url"]
                    .as_str()
                    .ok_or_else(|| ProviderError("微信支付未返回 H5 支付链接".into()))?;
                let joiner = if h5_url.contains('?') { '&' } else { '?' };
                let back =
                    form_urlencoded::byte_serialize(return_url.as_bytes()).collect::<String>();
                Ok(format!("{h5_url}{joiner}redirect_url={back}"))
            }
            Channel::Alipay => self.alipay_page(order, notify_base, return_url, false),
        }
    }

    /// Alipay's cashier page for `order`: `alipay.trade.wap.pay` for a phone's browser, or
    /// `alipay.trade.page.pay` (`desktop`) for a computer's, which pays by signing in to Alipay
    /// on the web. The browser goes to the answer, our signed parameters in its query.
    pub fn alipay_page(
        &self,
        order: &Order,
        notify_base: &str,
        return_url: &str,
        desktop: bool,
    ) -> Result<String, ProviderError> {
        let gateway = self.gateway()?;
        let app = self.alipay_side()?;
        let mut biz = serde_json::json!({
            "out_trade_no": order.out_trade_no,
            "total_amount": pay::amount::format_yuan(order.amount_fen),
            "subject": order.title,
            "time_expire": china_time(order.expires_at),
        });
        let method = if desktop {
            biz["product_code"] = "FAST_INSTANT_TRADE_PAY".into();
            "alipay.trade.page.pay"
        } else {
            biz["product_code"] = "QUICK_WAP_WAY".into();
            biz["quit_url"] = return_url.into();
            "alipay.trade.wap.pay"
        };
        let gateway_url = match gateway {
            Gateway::Live(live) => live.alipay_url.clone(),
            // This site's own sandbox, reached by the payer's browser.
            Gateway::Sandbox(_) => format!("{notify_base}/sandbox/gateway/alipay"),
        };
        Ok(alipay::page_pay_url(
            app,
            &gateway_url,
            method,
            &biz,
            &format!("{notify_base}/api/order/notify/alipay"),
            return_url,
            &china_time(store::now_ms()),
        ))
    }

    /// Asks the provider whether `order` was paid (an order whose notification never came).
    pub async fn query(&self, order: &Order) -> Result<OrderAtProvider, ProviderError> {
        let gateway = self.gateway()?;
        let not_this = || ProviderError("服务商的查询结果不是这笔订单的".into());
        match Channel::parse(&order.channel) {
            Some(Channel::Wechat) => {
                let (merchant, verifiers) = self.wechat_side()?;
                let path = format!(
                    "/v3/pay/transactions/out-trade-no/{}?mchid={}",
                    order.out_trade_no, merchant.mchid
                );
                let answer = wechat_call(gateway, merchant, verifiers, "GET", &path, "").await?;
                let transaction: wechat::Transaction = serde_json::from_value(answer)
                    .map_err(|e| ProviderError(format!("微信支付查询结果无法读取：{e}")))?;
                if transaction.out_trade_no != order.out_trade_no {
                    return Err(not_this());
                }
                if matches!(transaction.trade_state.as_str(), "CLOSED" | "REVOKED") {
                    return Ok(OrderAtProvider::Closed);
                }
                let event = format!("query:{}", transaction.transaction_id);
                Ok(transaction
                    .paid(merchant, &event)
                    .map_err(|e| ProviderError(e.to_string()))?
                    .map_or(OrderAtProvider::Unpaid, OrderAtProvider::Paid))
            }
            Some(Channel::Alipay) => {
                let app = self.alipay_side()?;
                let biz = serde_json::json!({"out_trade_no": order.out_trade_no});
                let answer = alipay_answer(gateway, app, "alipay.trade.query", &biz, None).await?;
                // Alipay creates a precreated trade only when it is scanned.
                if answer["sub_code"] == "ACQ.TRADE_NOT_EXIST" {
                    return Ok(OrderAtProvider::Unpaid);
                }
                if answer["code"] != "10000" {
                    return Err(alipay_refusal(&answer));
                }
                if answer["out_trade_no"].as_str() != Some(order.out_trade_no.as_str()) {
                    return Err(not_this());
                }
                match answer["trade_status"].as_str() {
                    Some("TRADE_SUCCESS" | "TRADE_FINISHED") => {}
                    // Closed unpaid (expired there): Alipay's close would now refuse it.
                    Some("TRADE_CLOSED") => return Ok(OrderAtProvider::Closed),
                    _ => return Ok(OrderAtProvider::Unpaid),
                }
                let amount = answer["total_amount"].as_str().unwrap_or_default();
                let trade_no = answer["trade_no"].as_str().unwrap_or_default().to_string();
                Ok(OrderAtProvider::Paid(PaidNotice {
                    event_id: format!("query:{trade_no}"),
                    out_trade_no: order.out_trade_no.clone(),
                    provider_trade_no: trade_no,
                    amount_fen: pay::amount::parse_yuan(amount)
                        .map_err(|e| ProviderError(e.to_string()))?,
                }))
            }
            None => Err(ProviderError(format!("未知的支付渠道 {}", order.channel))),
        }
    }

    /// Asks the provider to give `amount_fen` of `order` back to the payer under our refund
    /// number. The providers take the same number twice as one refund, so asking again after
    /// a failure or a crash never pays twice. `Ok(Some(no))`: the money went back (the
    /// provider's refund number); `Ok(None)`: accepted and still being processed.
    ///
    /// `notify_base`: where WeChat Pay sends the refund's outcome (a refund it is still
    /// processing is otherwise confirmed by asking again).
    pub async fn refund(
        &self,
        order: &Order,
        refund_no: &str,
        amount_fen: i64,
        reason: &str,
        notify_base: Option<&str>,
    ) -> Result<Option<String>, ProviderError> {
        let gateway = self.gateway()?;
        match Channel::parse(&order.channel) {
            Some(Channel::Wechat) => {
                let (merchant, verifiers) = self.wechat_side()?;
                let mut body = serde_json::json!({
                    "out_trade_no": order.out_trade_no,
                    "out_refund_no": refund_no,
                    "reason": reason.chars().take(80).collect::<String>(),
                    "amount": {"refund": amount_fen, "total": order.amount_fen, "currency": "CNY"},
                });
                if let Some(base) = notify_base {
                    body["notify_url"] = format!("{base}/api/order/notify/wechat").into();
                }
                let body = body.to_string();
                let path = "/v3/refund/domestic/refunds";
                let answer = wechat_call(gateway, merchant, verifiers, "POST", path, &body).await?;
                wechat_refund_state(&answer)
            }
            Some(Channel::Alipay) => {
                let app = self.alipay_side()?;
                let biz = serde_json::json!({
                    "out_trade_no": order.out_trade_no,
                    "refund_amount": pay::amount::format_yuan(amount_fen),
                    "out_request_no": refund_no,
                    "refund_reason": reason.chars().take(80).collect::<String>(),
                });
                let answer = alipay_call(gateway, app, "alipay.trade.refund", &biz, None).await?;
                // Code 10000 is a refund done; the same request number again answers the same.
                let refunded =
                    pay::amount::parse_yuan(answer["refund_fee"].as_str().unwrap_or("0"))
                        .map_err(|e| ProviderError(format!("支付宝退款金额无法读取：{e}")))?;
                if refunded < amount_fen {
                    return Err(ProviderError(format!(
                        "支付宝退款金额不符：应退 {}，已退合计 {}",
                        pay::amount::format_yuan(amount_fen),
                        pay::amount::format_yuan(refunded)
                    )));
                }
                Ok(Some(
                    answer["trade_no"].as_str().unwrap_or_default().to_string(),
                ))
            }
            None => Err(ProviderError(format!("未知的支付渠道 {}", order.channel))),
        }
    }

    /// What the provider says of a refund we asked for, without asking for it again: before
    /// an operator gives a refund up, the provider must confirm it never paid it. Only a
    /// signed answer counts.
    pub async fn refund_state(
        &self,
        order: &Order,
        refund_no: &str,
    ) -> Result<RefundState, ProviderError> {
        let gateway = self.gateway()?;
        match Channel::parse(&order.channel) {
            Some(Channel::Wechat) => {
                let (merchant, verifiers) = self.wechat_side()?;
                let path = format!("/v3/refund/domestic/refunds/{refund_no}");
                let (status, headers, answer) =
                    wechat_send(gateway, merchant, "GET", &path, "").await?;
                wechat::verify(verifiers, &headers, answer.as_bytes(), now_s())
                    .map_err(|e| ProviderError(format!("微信支付应答验签失败：{e}")))?;
                let value: serde_json::Value = serde_json::from_str(&answer)
                    .map_err(|e| ProviderError(format!("微信支付应答无法读取：{e}")))?;
                if status == 200 && value["out_refund_no"].as_str() != Some(refund_no) {
                    return Err(ProviderError("服务商的退款查询结果不是这笔退款的".into()));
                }
                match (status, value["status"].as_str()) {
                    (200, Some("SUCCESS")) => Ok(RefundState::Succeeded(
                        value["refund_id"].as_str().unwrap_or_default().to_string(),
                    )),
                    (200, Some("PROCESSING")) => Ok(RefundState::Processing),
                    (200, Some("CLOSED")) => {
                        Ok(RefundState::NotMade("微信支付已关闭这笔退款".into()))
                    }
                    (200, Some("ABNORMAL")) => Ok(RefundState::Abnormal),
                    (404, _) if value["code"] == "RESOURCE_NOT_EXISTS" => {
                        Ok(RefundState::NotMade("微信支付没有这笔退款".into()))
                    }
                    _ => Err(ProviderError(format!(
                        "微信支付退款查询失败：{}",
                        value["message"].as_str().unwrap_or("未知状态")
                    ))),
                }
            }
            Some(Channel::Alipay) => {
                let app = self.alipay_side()?;
                let biz = serde_json::json!({
                    "out_trade_no": order.out_trade_no,
                    "out_request_no": refund_no,
                });
                let value = alipay_call(
                    gateway,
                    app,
                    "alipay.trade.fastpay.refund.query",
                    &biz,
                    None,
                )
                .await?;
                // Alipay answers 10000 either way; a refund it made carries its amount and
                // names the request.
                let found = value["refund_amount"]
                    .as_str()
                    .is_some_and(|a| !a.is_empty());
                if value["out_trade_no"].as_str() != Some(order.out_trade_no.as_str())
                    || (found && value["out_request_no"].as_str() != Some(refund_no))
                {
                    return Err(ProviderError("服务商的退款查询结果不是这笔退款的".into()));
                }
                match value["refund_status"].as_str() {
                    Some("REFUND_SUCCESS") => Ok(RefundState::Succeeded(
                        value["trade_no"].as_str().unwrap_or_default().to_string(),
                    )),
                    None if found => Ok(RefundState::Succeeded(
                        value["trade_no"].as_str().unwrap_or_default().to_string(),
                    )),
                    None => Ok(RefundState::NotMade("支付宝没有这笔退款".into())),
                    Some(other) => Err(ProviderError(format!("支付宝退款状态未知：{other}"))),
                }
            }
            None => Err(ProviderError(format!("未知的支付渠道 {}", order.channel))),
        }
    }

    /// Closes `order` at the provider, so it can no longer be paid.
    pub async fn close(&self, order: &Order) -> Result<(), ProviderError> {
        let gateway = self.gateway()?;
        match Channel::parse(&order.channel) {
            Some(Channel::Wechat) => {
                let (merchant, verifiers) = self.wechat_side()?;
                let path = format!(
                    "/v3/pay/transactions/out-trade-no/{}/close",
                    order.out_trade_no
                );
                let body = serde_json::json!({"mchid": merchant.mchid}).to_string();
                wechat_call(gateway, merchant, verifiers, "POST", &path, &body).await?;
                Ok(())
            }
            Some(Channel::Alipay) => {
                let app = self.alipay_side()?;
                let biz = serde_json::json!({"out_trade_no": order.out_trade_no});
                let answer = alipay_answer(gateway, app, "alipay.trade.close", &biz, None).await?;
                // An order nobody scanned was never created at Alipay: nothing to close.
                if answer["code"] == "10000" || answer["sub_code"] == "ACQ.TRADE_NOT_EXIST" {
                    Ok(())
                } else {
                    Err(alipay_refusal(&answer))
                }
            }
            None => Err(ProviderError(format!("未知的支付渠道 {}", order.channel))),
        }
    }

    /// Reads a WeChat Pay notification (a payment or a refund's end): `Ok(None)` when genuine
    /// but nothing to act on.
    pub fn read_wechat(
        &self,
        headers: &wechat::SignedHeaders,
        body: &[u8],
    ) -> Result<Option<wechat::Notice>, PayError> {
        let (merchant, verifiers) = self.wechat.as_ref().ok_or(PayError::WrongMerchant)?;
        wechat::read_any_notification(merchant, verifiers, headers, body, now_s())
    }

    /// Reads an Alipay notification: `Ok(None)` when genuine but not a payment.
    pub fn read_alipay(&self, params: &[(String, String)]) -> Result<Option<PaidNotice>, PayError> {
        let app = self.alipay.as_ref().ok_or(PayError::WrongMerchant)?;
        alipay::read_notify(app, params)
    }
}

/// Puts the configured packages into an empty catalogue (the first start); a catalogue the
/// operator has edited is left as it is.
pub async fn seed_packages(store: &store::Store, config: &crate::Config) -> anyhow::Result<()> {
    if !store.products(false).await?.is_empty() {
        return Ok(());
    }
    for (i, seed) in config.packages.iter().enumerate() {
        let kind = store::GrantKind::parse(&seed.grant_kind).ok_or_else(|| {
            anyhow::anyhow!(
                "套餐“{}”的 grant_kind 无效：{}（应为 check、aigc、rewrite_chars、paper 或 ppt）",
                seed.name,
                seed.grant_kind
            )
        })?;
        anyhow::ensure!(
            seed.price_fen > 0 && seed.grant_amount > 0 && seed.valid_days > 0,
            "套餐“{}”的价格、数量和有效天数都应大于 0",
            seed.name
        );
        store
            .create_product(&store::NewProduct {
                name: seed.name.clone(),
                description: seed.description.clone(),
                price_fen: seed.price_fen,
                grant_kind: kind,
                grant_amount: seed.grant_amount,
                valid_days: seed.valid_days,
                sort_order: i as i64,
            })
            .await?;
    }
    Ok(())
}

/// An order's terms as WeChat Pay reads them.
fn wechat_terms<'a>(
    order: &'a Order,
    notify_url: &'a str,
    expires_rfc3339: &'a str,
) -> wechat::OrderTerms<'a> {
    wechat::OrderTerms {
        description: &order.title,
        out_trade_no: &order.out_trade_no,
        amount_fen: order.amount_fen,
        notify_url,
        time_expire_rfc3339: expires_rfc3339,
    }
}

fn now_s() -> i64 {
    store::now_ms() / 1000
}

/// A WeChat Pay v3 request, signed; its answer as it came (status, signature headers, body).
async fn wechat_send(
    gateway: &Gateway,
    merchant: &wechat::Merchant,
    method: &str,
    path: &str,
    body: &str,
) -> Result<(u16, wechat::SignedHeaders, String), ProviderError> {
    let authorization =
        wechat::authorization(merchant, method, path, body, now_s(), &pay::keys::nonce(32));
    match gateway {
        Gateway::Sandbox(s) => Ok(s.wechat_gateway(method, path, &authorization, body, None)),
        Gateway::Live(live) => live.wechat(method, path, &authorization, body).await,
    }
}

/// A signed WeChat Pay v3 call; the answer's signature is checked before it is read.
async fn wechat_call(
    gateway: &Gateway,
    merchant: &wechat::Merchant,
    verifiers: &wechat::Verifiers,
    method: &str,
    path: &str,
    body: &str,
) -> Result<serde_json::Value, ProviderError> {
    let (status, headers, answer) = wechat_send(gateway, merchant, method, path, body).await?;
    if !(200..300).contains(&status) {
        // A refusal is only ever a failure, so its words are shown even when unsigned (the
        // gateway's own 401s are).
        let value: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
        return Err(ProviderError(format!(
            "微信支付拒绝了请求：{}",
            value["message"]
                .as_str()
                .map_or_else(|| format!("HTTP {status}"), str::to_string)
        )));
    }
    wechat::verify(verifiers, &headers, answer.as_bytes(), now_s())
        .map_err(|e| ProviderError(format!("微信支付应答验签失败：{e}")))?;
    if answer.is_empty() {
        // 204: done, nothing to say (closing an order).
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_str(&answer).map_err(|e| ProviderError(format!("微信支付应答无法读取：{e}")))
}

/// What WeChat Pay says of a refund: done (its `refund_id`), still processing, or refused.
fn wechat_refund_state(answer: &serde_json::Value) -> Result<Option<String>, ProviderError> {
    let id = answer["refund_id"].as_str().unwrap_or_default().to_string();
    match answer["status"].as_str() {
        Some("SUCCESS") => Ok(Some(id)),
        Some("PROCESSING") => Ok(None),
        Some("ABNORMAL") => Err(ProviderError(
            "微信支付退款异常（用户银行卡可能已注销或冻结），请在商户平台处理".into(),
        )),
        other => Err(ProviderError(format!(
            "微信支付退款未成功：{}",
            other.unwrap_or("未知状态")
        ))),
    }
}

/// A signed Alipay gateway call; the answer's signature is checked before it is read.
async fn alipay_call(
    gateway: &Gateway,
    app: &alipay::App,
    method: &str,
    biz: &serde_json::Value,
    notify_url: Option<&str>,
) -> Result<serde_json::Value, ProviderError> {
    let value = alipay_answer(gateway, app, method, biz, notify_url).await?;
    if value["code"].as_str() != Some("10000") {
        return Err(alipay_refusal(&value));
    }
    Ok(value)
}

/// A signed Alipay gateway call's verified answer, whatever its `code`.
async fn alipay_answer(
    gateway: &Gateway,
    app: &alipay::App,
    method: &str,
    biz: &serde_json::Value,
    notify_url: Option<&str>,
) -> Result<serde_json::Value, ProviderError> {
    let timestamp = china_time(store::now_ms());
    let params = alipay::request_params(app, method, biz, notify_url, &timestamp);
    let answer = match gateway {
        Gateway::Sandbox(s) => s.alipay_gateway(&params, None),
        Gateway::Live(live) => live.alipay(&params).await?,
    };
    alipay::read_response(app, method, &answer)
        .map_err(|e| ProviderError(format!("支付宝应答验签失败：{e}")))
}

fn alipay_refusal(value: &serde_json::Value) -> ProviderError {
    ProviderError(format!(
        "支付宝拒绝了请求：{}",
        value["sub_msg"]
            .as_str()
            .or(value["msg"].as_str())
            .unwrap_or("未知原因")
    ))
}

/// "yyyy-MM-dd HH:mm:ss" in China Standard Time (Alipay's `timestamp`).
pub fn china_time(ms: i64) -> String {
    in_china(ms, "%Y-%m-%d %H:%M:%S")
}

/// "2026-11-25T21:00:00+08:00" (WeChat Pay's `time_expire`).
pub fn rfc3339_china(ms: i64) -> String {
    in_china(ms, "%Y-%m-%dT%H:%M:%S%:z")
}

/// Both providers write China Standard Time, whatever zone the site shows.
fn in_china(ms: i64, format: &str) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_zoned_datetime(jiff::tz::TimeZone::fixed(jiff::tz::offset(8)))
        .strftime(format)
        .to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_are_written_in_china_standard_time() {
        // 2026-11-25 12:30:05 UTC.
        let ms = 1_795_609_805_000;
        assert_eq!(super::rfc3339_china(ms), "2026-11-25T20:30:05+08:00");
        assert_eq!(super::china_time(ms), "2026-11-25 20:30:05");
        assert_eq!(super::rfc3339_china(0), "1970-01-01T08:00:00+08:00");
    }
}

//! The payment sandbox: WeChat Pay and Alipay played by this process, over their documented
//! protocols, with keys it generated itself (kept under `<data_dir>/sandbox/keys.json`). It
//! checks the signature of every request we send it, answers signed, shows a phone page that
//! "scans and pays" (the QR code's content is that page's address), and then sends the
//! notification the provider would send — signed, and for WeChat Pay encrypted — to the
//! `notify_url` of the order. Switches on the phone page send it twice, late, not at all, or
//! forged, so that the exactly-once rules can be seen working. Never on by default; every
//! payment page says 沙箱 while it is on.

use pay::{alipay, keys, wechat};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

pub const MCHID: &str = "1900000001";
pub const APPID: &str = "wx0000000000sandbox";
pub const ALIPAY_APP_ID: &str = "2021000000000000";
pub const ALIPAY_SELLER_ID: &str = "2088000000000000";
/// The WeChat Pay public key id the sandbox signs with (public-key mode).
pub const WECHAT_KEY_ID: &str = "PUB_KEY_ID_0119000000012026112500000000000000";
pub const MERCHANT_SERIAL: &str = "5ANDB0X0000000000000000000000000000000000";

/// The keys of both sides, made once per data folder.
#[derive(Serialize, Deserialize)]
struct KeyFile {
    /// Our merchant key (signs our WeChat Pay requests).
    merchant: String,
    /// WeChat Pay's key (signs its answers and notifications).
    wechat: String,
    api_v3_key: String,
    /// Our Alipay application key.
    alipay_app: String,
    /// Alipay's key.
    alipay: String,
}

/// An order the sandbox was asked to open.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SandboxOrder {
    channel: super::Channel,
    amount_fen: i64,
    description: String,
    notify_url: String,
    /// Set once paid on the phone page.
    transaction_id: Option<String>,
    closed: bool,
    /// Where a phone payment page sends the payer back (Alipay `return_url`).
    #[serde(default)]
    return_url: Option<String>,
}

impl SandboxOrder {
    /// An order just opened, not paid.
    fn unpaid(
        channel: super::Channel,
        amount_fen: i64,
        description: &str,
        notify_url: String,
        return_url: Option<String>,
    ) -> Self {
        SandboxOrder {
            channel,
            amount_fen,
            description: description.to_string(),
            notify_url,
            transaction_id: None,
            closed: false,
            return_url,
        }
    }
}

/// What the phone page shows of an order.
pub struct OnPhone {
    pub channel: super::Channel,
    pub amount_fen: i64,
    pub description: String,
    pub paid: bool,
    pub return_url: Option<String>,
    /// Where the merchant hears of the payment (its site).
    pub notify_url: String,
}

/// A refund the sandbox made: under our refund number, of an order, an amount.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SandboxRefund {
    out_trade_no: String,
    amount_fen: i64,
    refund_id: String,
}

/// How the phone page pays: the notification sent `copies` times (0: lost), after
/// `delay_ms`, or forged (signed with a key the site does not trust).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct PaySwitches {
    pub copies: u32,
    pub delay_ms: u64,
    pub forged: bool,
}

impl Default for PaySwitches {
    fn default() -> Self {
        PaySwitches {
            copies: 1,
            delay_ms: 0,
            forged: false,
        }
    }
}

pub struct Sandbox {
    merchant: keys::PrivateKey,
    wechat: keys::PrivateKey,
    api_v3_key: String,
    alipay_app: keys::PrivateKey,
    alipay: keys::PrivateKey,
    orders: Mutex<HashMap<String, SandboxOrder>>,
    /// Refunds by our refund number.
    refunds: Mutex<HashMap<String, SandboxRefund>>,
    /// Where the orders and refunds are kept (`state.json`): a provider remembers its orders
    /// when we restart, and so does the sandbox.
    dir: std::path::PathBuf,
    http: reqwest::Client,
    /// WeChat Pay refunds answered `PROCESSING` and confirmed by a refund notification a moment
    /// later, as a bank that takes its time does (a switch for tests and demonstrations).
    refunds_later: std::sync::atomic::AtomicBool,
}

/// Orders remembered before the unpaid ones are forgotten at a start.
const MAX_REMEMBERED_ORDERS: usize = 10_000;

/// The sandbox's memory of orders and refunds, as kept on disk.
#[derive(Default, Serialize, Deserialize)]
struct SavedState {
    orders: HashMap<String, SandboxOrder>,
    refunds: HashMap<String, SandboxRefund>,
}

/// What happened on the phone page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaidOnPhone {
    /// Paid; the notification went out as asked, answered with these HTTP statuses.
    Paid {
        notify_statuses: Vec<u16>,
    },
    Unknown,
    Closed,
}

impl Sandbox {
    /// Reads the sandbox's keys from `dir`, making them the first time.
    pub fn open(dir: &Path) -> Result<Sandbox, String> {
        let path = dir.join("keys.json");
        let file: KeyFile = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| e.to_string())?,
            Err(_) => {
                let pem = || -> Result<String, String> {
                    let (key, _) = keys::generate().map_err(|e| e.to_string())?;
                    Ok(keys::to_pem(&key).map_err(|e| e.to_string())?.0)
                };
                let file = KeyFile {
                    merchant: pem()?,
                    wechat: pem()?,
                    api_v3_key: keys::nonce(32),
                    alipay_app: pem()?,
                    alipay: pem()?,
                };
                std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
                let text = serde_json::to_vec_pretty(&file).map_err(|e| e.to_string())?;
                // Written whole, then renamed: a process starting beside this one reads either
                // no file or a complete one.
                let partial = dir.join(format!("keys.json.{}", keys::nonce(8)));
                std::fs::write(&partial, text).map_err(|e| e.to_string())?;
                std::fs::rename(&partial, &path).map_err(|e| e.to_string())?;
                file
            }
        };
        let key = |pem: &str| keys::private_key(pem).map_err(|e| e.to_string());
        let state_file = dir.join("state.json");
        let mut saved: SavedState = match std::fs::read(&state_file) {
            Err(_) => SavedState::default(),
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                // Kept aside, never silently replaced: what the provider knew may matter.
                tracing::warn!(error = %e, "payment sandbox state unreadable: kept as state.json.bad");
                let _ = std::fs::rename(&state_file, dir.join("state.json.bad"));
                SavedState::default()
            }),
        };
        // Grown large (many abandoned orders), it forgets the unpaid ones, never a payment.
        if saved.orders.len() > MAX_REMEMBERED_ORDERS {
            saved.orders.retain(|_, o| o.transaction_id.is_some());
        }
        Ok(Sandbox {
            merchant: key(&file.merchant)?,
            wechat: key(&file.wechat)?,
            api_v3_key: file.api_v3_key,
            alipay_app: key(&file.alipay_app)?,
            alipay: key(&file.alipay)?,
            orders: Mutex::new(saved.orders),
            refunds: Mutex::new(saved.refunds),
            dir: dir.to_path_buf(),
            http: reqwest::Client::new(),
            refunds_later: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Writes the orders (as the caller holds them) and the refunds to `state.json`, whole, then
    /// renamed into place.
    fn persist(&self, orders: &HashMap<String, SandboxOrder>) {
        let refunds = self.refunds.lock().unwrap_or_else(|e| e.into_inner());
        let state = serde_json::json!({ "orders": orders, "refunds": &*refunds });
        let partial = self.dir.join(format!("state.json.{}", keys::nonce(8)));
        let written = std::fs::write(&partial, state.to_string())
            .and_then(|_| std::fs::rename(&partial, self.dir.join("state.json")));
        if let Err(e) = written {
            tracing::warn!(error = %e, "payment sandbox state not saved");
        }
    }

    /// Our side of WeChat Pay, as a merchant configured for the sandbox.
    pub fn wechat_merchant_side(&self) -> (wechat::Merchant, wechat::Verifiers) {
        let mut verifiers = wechat::Verifiers::default();
        verifiers.add(WECHAT_KEY_ID, self.wechat.to_public_key());
        (
            wechat::Merchant {
                mchid: MCHID.into(),
                appid: APPID.into(),
                serial_no: MERCHANT_SERIAL.into(),
                key: self.merchant.clone(),
                api_v3_key: self.api_v3_key.clone(),
            },
            verifiers,
        )
    }

    /// Our side of Alipay, as an application configured for the sandbox.
    pub fn alipay_app_side(&self) -> alipay::App {
        alipay::App {
            app_id: ALIPAY_APP_ID.into(),
            seller_id: Some(ALIPAY_SELLER_ID.into()),
            key: self.alipay_app.clone(),
            alipay_public_key: self.alipay.to_public_key(),
        }
    }

    fn wechat_answer(
        &self,
        status: u16,
        body: serde_json::Value,
    ) -> (u16, wechat::SignedHeaders, String) {
        let body = body.to_string();
        (status, self.signed_headers(&body), body)
    }

    /// WeChat Pay's signature headers over an answer's body.
    fn signed_headers(&self, body: &str) -> wechat::SignedHeaders {
        let timestamp = store::now_ms() / 1000;
        let nonce = keys::nonce(32);
        let signature = wechat::sign_message(&self.wechat, timestamp, &nonce, body);
        wechat::SignedHeaders {
            timestamp: timestamp.to_string(),
            nonce,
            signature,
            serial: WECHAT_KEY_ID.into(),
        }
    }

    /// WeChat Pay's gateway: checks our `Authorization` signature, then opens, queries or
    /// closes the order. Answers are signed with the platform key.
    ///
    /// `phone_base` is the address the payer's phone reaches this sandbox at (when it is
    /// called over HTTP); in process, it is the site's own, taken from the notify URL.
    pub fn wechat_gateway(
        &self,
        method: &str,
        path: &str,
        authorization: &str,
        body: &str,
        phone_base: Option<&str>,
    ) -> (u16, wechat::SignedHeaders, String) {
        let error = |status, code: &str, message: &str| {
            self.wechat_answer(
                status,
                serde_json::json!({"code": code, "message": message}),
            )
        };
        let Some(fields) = authorization.strip_prefix("WECHATPAY2-SHA256-RSA2048 ") else {
            return error(401, "SIGN_ERROR", "Authorization 格式错误");
        };
        let field = |name: &str| {
            fields
                .split(',')
                .find_map(|f| f.trim().strip_prefix(&format!("{name}=\"")))
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or_default()
                .to_string()
        };
        let signed = format!(
            "{method}\n{path}\n{}\n{}\n{body}\n",
            field("timestamp"),
            field("nonce_str")
        );
        if field("mchid") != MCHID
            || keys::verify(
                &self.merchant.to_public_key(),
                signed.as_bytes(),
                &field("signature"),
            )
            .is_err()
        {
            return error(401, "SIGN_ERROR", "签名错误");
        }
        let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        let h5 = path == "/v3/pay/transactions/h5";
        if method == "POST" && (path == "/v3/pay/transactions/native" || h5) {
            let Ok(order) = serde_json::from_str::<serde_json::Value>(body) else {
                return error(400, "PARAM_ERROR", "请求体不是 JSON");
            };
            let (Some(no), Some(total), Some(notify)) = (
                order["out_trade_no"].as_str(),
                order["amount"]["total"].as_i64(),
                order["notify_url"].as_str(),
            ) else {
                return error(
                    400,
                    "PARAM_ERROR",
                    "缺少 out_trade_no、amount.total 或 notify_url",
                );
            };
            if h5 && order["scene_info"]["payer_client_ip"].as_str().is_none() {
                return error(400, "PARAM_ERROR", "H5 支付缺少 scene_info.payer_client_ip");
            }
            if orders.get(no).is_some_and(|o| o.transaction_id.is_some()) {
                return error(400, "ORDERPAID", "该订单已支付");
            }
            orders.insert(
                no.to_string(),
                SandboxOrder::unpaid(
                    super::Channel::Wechat,
                    total,
                    order["description"].as_str().unwrap_or_default(),
                    notify.to_string(),
                    None,
                ),
            );
            self.persist(&orders);
            let page = format!("{}/sandbox/pay/{no}", phone_page_base(phone_base, notify));
            return if h5 {
                self.wechat_answer(200, serde_json::json!({"h5_url": format!("{page}?h5=1")}))
            } else {
                self.wechat_answer(200, serde_json::json!({"code_url": page}))
            };
        }
        if method == "POST"
            && let Some(no) = path
                .strip_prefix("/v3/pay/transactions/out-trade-no/")
                .and_then(|rest| rest.strip_suffix("/close"))
        {
            let Some(order) = orders.get_mut(no) else {
                return error(404, "ORDER_NOT_EXIST", "订单不存在");
            };
            if order.transaction_id.is_some() {
                return error(400, "ORDERPAID", "订单已支付，不能关闭");
            }
            order.closed = true;
            self.persist(&orders);
            // 204 carries no body; its signature covers the empty one.
            return (204, self.signed_headers(""), String::new());
        }
        if method == "GET"
            && let Some(rest) = path.strip_prefix("/v3/pay/transactions/out-trade-no/")
        {
            let no = rest.split('?').next().unwrap_or_default();
            let Some(order) = orders.get(no) else {
                return error(404, "ORDER_NOT_EXIST", "订单不存在");
            };
            return self.wechat_answer(200, self.transaction(no, order));
        }
        if method == "GET"
            && let Some(refund_no) = path.strip_prefix("/v3/refund/domestic/refunds/")
        {
            let refunds = self.refunds.lock().unwrap_or_else(|e| e.into_inner());
            return match refunds.get(refund_no) {
                Some(refund) => self.wechat_answer(
                    200,
                    serde_json::json!({
                        "refund_id": refund.refund_id, "out_refund_no": refund_no,
                        "out_trade_no": refund.out_trade_no, "status": "SUCCESS",
                        "amount": {"refund": refund.amount_fen, "currency": "CNY"},
                    }),
                ),
                None => error(404, "RESOURCE_NOT_EXISTS", "退款单不存在"),
            };
        }
        if method == "POST" && path == "/v3/refund/domestic/refunds" {
            let Ok(asked) = serde_json::from_str::<serde_json::Value>(body) else {
                return error(400, "PARAM_ERROR", "请求体不是 JSON");
            };
            let (Some(no), Some(refund_no), Some(amount)) = (
                asked["out_trade_no"].as_str(),
                asked["out_refund_no"].as_str(),
                asked["amount"]["refund"].as_i64(),
            ) else {
                return error(
                    400,
                    "PARAM_ERROR",
                    "缺少 out_trade_no、out_refund_no 或 amount.refund",
                );
            };
            let refunded = self.refund(&orders, no, refund_no, amount);
            self.persist(&orders);
            let later = self
                .refunds_later
                .load(std::sync::atomic::Ordering::Relaxed);
            return match refunded {
                Ok((refund, _)) => {
                    if let Some(notify) = asked["notify_url"].as_str() {
                        self.send_refund_notice(notify, no, refund_no, &refund.refund_id, later);
                    }
                    self.wechat_answer(
                        200,
                        serde_json::json!({
                            "refund_id": refund.refund_id, "out_refund_no": refund_no,
                            "out_trade_no": no, "status": if later { "PROCESSING" } else { "SUCCESS" },
                            "amount": {"refund": amount, "total": orders.get(no).map_or(0, |o| o.amount_fen), "currency": "CNY"},
                        }),
                    )
                }
                Err((code, message)) => error(400, code, &message),
            };
        }
        error(404, "NOT_FOUND", "沙箱不支持该接口")
    }

    /// Gives `amount_fen` of a paid order back under `refund_no`, once (the same number again
    /// answers the same refund). Returns the refund and the order's refunded total; an error
    /// is the provider's code and message.
    fn refund(
        &self,
        orders: &HashMap<String, SandboxOrder>,
        out_trade_no: &str,
        refund_no: &str,
        amount_fen: i64,
    ) -> Result<(SandboxRefund, i64), (&'static str, String)> {
        let mut refunds = self.refunds.lock().unwrap_or_else(|e| e.into_inner());
        let refunded = |refunds: &HashMap<String, SandboxRefund>| -> i64 {
            refunds
                .values()
                .filter(|r| r.out_trade_no == out_trade_no)
                .map(|r| r.amount_fen)
                .sum()
        };
        if let Some(earlier) = refunds.get(refund_no) {
            if earlier.out_trade_no != out_trade_no || earlier.amount_fen != amount_fen {
                return Err(("INVALID_REQUEST", "退款单号已用于另一笔退款".into()));
            }
            return Ok((earlier.clone(), refunded(&refunds)));
        }
        let Some(order) = orders.get(out_trade_no) else {
            return Err(("RESOURCE_NOT_EXISTS", "订单不存在".into()));
        };
        if order.transaction_id.is_none() {
            return Err(("INVALID_REQUEST", "订单未支付，不能退款".into()));
        }
        if amount_fen <= 0 || refunded(&refunds) + amount_fen > order.amount_fen {
            return Err(("INVALID_REQUEST", "退款金额超过订单可退金额".into()));
        }
        let refund = SandboxRefund {
            out_trade_no: out_trade_no.to_string(),
            amount_fen,
            refund_id: format!("50{}", keys::nonce(16)),
        };
        refunds.insert(refund_no.to_string(), refund.clone());
        Ok((refund, refunded(&refunds)))
    }

    fn transaction(&self, no: &str, order: &SandboxOrder) -> serde_json::Value {
        let state = match (&order.transaction_id, order.closed) {
            (Some(_), _) => "SUCCESS",
            (None, true) => "CLOSED",
            (None, false) => "NOTPAY",
        };
        serde_json::json!({
            "appid": APPID, "mchid": MCHID, "out_trade_no": no,
            "transaction_id": order.transaction_id.clone().unwrap_or_default(),
            "trade_type": "NATIVE", "trade_state": state,
            "amount": {"total": order.amount_fen, "currency": "CNY"},
        })
    }

    /// Alipay's gateway: checks our RSA2 signature, then precreates or queries the order.
    /// Answers are signed with Alipay's key.
    pub fn alipay_gateway(&self, params: &[(String, String)], phone_base: Option<&str>) -> String {
        let get = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let method = get("method");
        let answer =
            |value: serde_json::Value| alipay::signed_response(&self.alipay, &method, &value);
        if get("app_id") != ALIPAY_APP_ID
            || alipay::verify_request(&self.alipay_app.to_public_key(), params).is_err()
        {
            return answer(
                serde_json::json!({"code": "40002", "msg": "Invalid Arguments", "sub_code": "isv.invalid-signature", "sub_msg": "验签出错"}),
            );
        }
        let biz: serde_json::Value = serde_json::from_str(&get("biz_content")).unwrap_or_default();
        let no = biz["out_trade_no"].as_str().unwrap_or_default().to_string();
        let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        match method.as_str() {
            "alipay.trade.precreate" => {
                let Ok(fen) =
                    pay::amount::parse_yuan(biz["total_amount"].as_str().unwrap_or_default())
                else {
                    return answer(
                        serde_json::json!({"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.INVALID_PARAMETER", "sub_msg": "金额格式错误"}),
                    );
                };
                let notify = get("notify_url");
                let base = phone_page_base(phone_base, &notify);
                orders.insert(
                    no.clone(),
                    SandboxOrder::unpaid(
                        super::Channel::Alipay,
                        fen,
                        biz["subject"].as_str().unwrap_or_default(),
                        notify,
                        None,
                    ),
                );
                self.persist(&orders);
                answer(
                    serde_json::json!({"code": "10000", "msg": "Success", "out_trade_no": no, "qr_code": format!("{base}/sandbox/pay/{no}")}),
                )
            }
            "alipay.trade.fastpay.refund.query" => {
                let refund_no = biz["out_request_no"].as_str().unwrap_or_default();
                let refunds = self.refunds.lock().unwrap_or_else(|e| e.into_inner());
                match refunds.get(refund_no).filter(|r| r.out_trade_no == no) {
                    Some(refund) => answer(serde_json::json!({
                        "code": "10000", "msg": "Success", "out_trade_no": no,
                        "out_request_no": refund_no,
                        "trade_no": orders.get(&no).and_then(|o| o.transaction_id.clone()).unwrap_or_default(),
                        "refund_amount": pay::amount::format_yuan(refund.amount_fen),
                        "refund_status": "REFUND_SUCCESS",
                    })),
                    // Alipay answers a refund it never made with success and no refund data.
                    None => answer(
                        serde_json::json!({"code": "10000", "msg": "Success", "out_trade_no": no}),
                    ),
                }
            }
            "alipay.trade.close" => match orders.get_mut(&no) {
                // Only a trade waiting for payment can be closed; a closed one answers as a paid one.
                Some(order) if order.transaction_id.is_none() && !order.closed => {
                    order.closed = true;
                    self.persist(&orders);
                    answer(
                        serde_json::json!({"code": "10000", "msg": "Success", "out_trade_no": no}),
                    )
                }
                Some(_) => answer(
                    serde_json::json!({"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.TRADE_STATUS_ERROR", "sub_msg": "交易状态不合法"}),
                ),
                None => answer(
                    serde_json::json!({"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.TRADE_NOT_EXIST", "sub_msg": "交易不存在"}),
                ),
            },
            "alipay.trade.query" => match orders.get(&no) {
                Some(order) => {
                    let status = match (&order.transaction_id, order.closed) {
                        (Some(_), _) => "TRADE_SUCCESS",
                        (None, true) => "TRADE_CLOSED",
                        (None, false) => "WAIT_BUYER_PAY",
                    };
                    answer(
                        serde_json::json!({"code": "10000", "msg": "Success", "out_trade_no": no,
                        "trade_no": order.transaction_id.clone().unwrap_or_default(), "trade_status": status,
                        "total_amount": pay::amount::format_yuan(order.amount_fen)}),
                    )
                }
                None => answer(
                    serde_json::json!({"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.TRADE_NOT_EXIST", "sub_msg": "交易不存在"}),
                ),
            },
            "alipay.trade.refund" => {
                let Ok(fen) =
                    pay::amount::parse_yuan(biz["refund_amount"].as_str().unwrap_or_default())
                else {
                    return answer(
                        serde_json::json!({"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.INVALID_PARAMETER", "sub_msg": "退款金额格式错误"}),
                    );
                };
                let refund_no = biz["out_request_no"].as_str().unwrap_or_default();
                let refunded = self.refund(&orders, &no, refund_no, fen);
                self.persist(&orders);
                match refunded {
                    Ok((_, total)) => answer(serde_json::json!({
                        "code": "10000", "msg": "Success", "out_trade_no": no,
                        "trade_no": orders.get(&no).and_then(|o| o.transaction_id.clone()).unwrap_or_default(),
                        "refund_fee": pay::amount::format_yuan(total), "fund_change": "Y",
                    })),
                    Err((_, message)) => answer(
                        serde_json::json!({"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL", "sub_msg": message}),
                    ),
                }
            }
            _ => answer(
                serde_json::json!({"code": "40004", "msg": "Business Failed", "sub_msg": "沙箱不支持该接口"}),
            ),
        }
    }

    /// Alipay's payment page (`alipay.trade.wap.pay`, `alipay.trade.page.pay`), reached by the
    /// payer's browser with our signed parameters in the address: the order is opened and the
    /// browser goes on to the phone page (its address returned). A bad signature or request is
    /// the error page's words.
    pub fn alipay_page(
        &self,
        params: &[(String, String)],
        phone_base: &str,
    ) -> Result<String, String> {
        let get = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        if !matches!(
            get("method").as_str(),
            "alipay.trade.wap.pay" | "alipay.trade.page.pay"
        ) {
            return Err("沙箱不支持该接口".into());
        }
        if get("app_id") != ALIPAY_APP_ID
            || alipay::verify_request(&self.alipay_app.to_public_key(), params).is_err()
        {
            return Err("验签出错（isv.invalid-signature）".into());
        }
        let biz: serde_json::Value = serde_json::from_str(&get("biz_content")).unwrap_or_default();
        let no = biz["out_trade_no"].as_str().unwrap_or_default().to_string();
        let fen = pay::amount::parse_yuan(biz["total_amount"].as_str().unwrap_or_default())
            .map_err(|_| "金额格式错误".to_string())?;
        if no.is_empty() || get("notify_url").is_empty() {
            return Err("缺少 out_trade_no 或 notify_url".into());
        }
        let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        match orders.get_mut(&no) {
            // Opened again (or on another device's cashier): the same trade, coming back to
            // where this page says.
            Some(order) if order.amount_fen == fen => {
                if !get("return_url").is_empty() {
                    order.return_url = Some(get("return_url"));
                    self.persist(&orders);
                }
            }
            Some(_) => return Err("订单号已用于另一笔金额".into()),
            None => {
                orders.insert(
                    no.clone(),
                    SandboxOrder::unpaid(
                        super::Channel::Alipay,
                        fen,
                        biz["subject"].as_str().unwrap_or_default(),
                        get("notify_url"),
                        Some(get("return_url")).filter(|u| !u.is_empty()),
                    ),
                );
                self.persist(&orders);
            }
        }
        Ok(format!(
            "{}/sandbox/pay/{no}",
            phone_base.trim_end_matches('/')
        ))
    }

    /// Forgets an order, as a provider that lost it would (tests of what a refused call does).
    pub fn forget_for_tests(&self, out_trade_no: &str) {
        let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        orders.remove(out_trade_no);
        self.persist(&orders);
    }

    /// What the phone page shows of an order.
    pub fn describe(&self, out_trade_no: &str) -> Option<OnPhone> {
        let orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        orders.get(out_trade_no).map(|o| OnPhone {
            channel: o.channel,
            amount_fen: o.amount_fen,
            description: o.description.clone(),
            paid: o.transaction_id.is_some(),
            return_url: o.return_url.clone(),
            notify_url: o.notify_url.clone(),
        })
    }

    /// The phone pays: the order is marked paid at the provider, and its notification sent as
    /// `switches` say. A second payment of a paid order sends the notification again (as a
    /// provider's retry would), never a second payment.
    pub async fn pay(&self, out_trade_no: &str, switches: PaySwitches) -> PaidOnPhone {
        let (order, transaction_id) = {
            let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
            let Some(order) = orders.get_mut(out_trade_no) else {
                return PaidOnPhone::Unknown;
            };
            if order.closed {
                return PaidOnPhone::Closed;
            }
            let id = order
                .transaction_id
                .get_or_insert_with(|| format!("42000000{}{}", store::now_ms(), keys::nonce(6)))
                .clone();
            let order = order.clone();
            // Paid at the provider before any notification leaves: a crash of ours after this
            // finds the order paid when reconciling.
            self.persist(&orders);
            (order, id)
        };
        if switches.delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(
                switches.delay_ms.min(60_000),
            ))
            .await;
        }
        let event_id = format!("SANDBOX-EV-{}", keys::nonce(20));
        let mut statuses = Vec::new();
        for _ in 0..switches.copies.min(20) {
            let sent = match order.channel {
                super::Channel::Wechat => {
                    self.send_wechat(
                        out_trade_no,
                        &order,
                        &transaction_id,
                        &event_id,
                        switches.forged,
                    )
                    .await
                }
                super::Channel::Alipay => {
                    self.send_alipay(
                        out_trade_no,
                        &order,
                        &transaction_id,
                        &event_id,
                        switches.forged,
                    )
                    .await
                }
            };
            statuses.push(sent.unwrap_or(0));
        }
        PaidOnPhone::Paid {
            notify_statuses: statuses,
        }
    }

    /// Makes WeChat Pay refunds answer `PROCESSING`, confirmed by their notification a moment
    /// later (`false`: answered `SUCCESS` at once, the notification still sent).
    pub fn set_refunds_later(&self, later: bool) {
        self.refunds_later
            .store(later, std::sync::atomic::Ordering::Relaxed);
    }

    /// WeChat Pay's `REFUND.SUCCESS` notification of a refund, signed and encrypted, sent to
    /// `notify_url` (after a moment when `later`) from a task of its own.
    fn send_refund_notice(
        &self,
        notify_url: &str,
        out_trade_no: &str,
        refund_no: &str,
        refund_id: &str,
        later: bool,
    ) {
        let plain = serde_json::json!({
            "mchid": MCHID, "out_trade_no": out_trade_no, "out_refund_no": refund_no,
            "refund_id": refund_id, "refund_status": "SUCCESS",
            "success_time": super::rfc3339_china(store::now_ms()),
        })
        .to_string();
        let Ok(resource) = wechat::encrypt(
            &self.api_v3_key,
            "refund",
            &keys::nonce(12),
            plain.as_bytes(),
        ) else {
            return;
        };
        let body = serde_json::json!({
            "id": format!("SANDBOX-RF-{}", keys::nonce(20)),
            "create_time": super::rfc3339_china(store::now_ms()),
            "resource_type": "encrypt-resource", "event_type": "REFUND.SUCCESS",
            "summary": "退款成功", "resource": resource,
        })
        .to_string();
        let signed = self.signed_headers(&body);
        let request = self
            .http
            .post(notify_url)
            .header("Content-Type", "application/json")
            .header("Wechatpay-Timestamp", signed.timestamp)
            .header("Wechatpay-Nonce", signed.nonce)
            .header("Wechatpay-Signature", signed.signature)
            .header("Wechatpay-Serial", signed.serial)
            .body(body);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let wait = if later { 300 } else { 50 };
            tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
            if let Err(e) = request.send().await {
                tracing::warn!(error = %e, "sandbox refund notice not delivered");
            }
        });
    }

    /// Writes our side of both providers (the keys a merchant would download) into `dir` and
    /// returns the `wenjian.toml` lines of a site that pays through this sandbox over HTTP at
    /// `sandbox_base` — a rehearsal of `payment = "live"` without a merchant.
    pub fn merchant_files(&self, dir: &Path, sandbox_base: &str) -> Result<String, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let write = |name: &str, text: &str| -> Result<String, String> {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("{}：{e}", path.display()))?;
            Ok(path.display().to_string().replace('\\', "/"))
        };
        let pem = |key: &keys::PrivateKey| keys::to_pem(key).map_err(|e| e.to_string());
        let merchant = write("wechat_merchant_key.pem", &pem(&self.merchant)?.0)?;
        let wechat_public = write("wechat_pay_public_key.pem", &pem(&self.wechat)?.1)?;
        let app = write("alipay_app_key.pem", &pem(&self.alipay_app)?.0)?;
        let alipay_public = write("alipay_public_key.pem", &pem(&self.alipay)?.1)?;
        let base = sandbox_base.trim_end_matches('/');
        Ok(format!(
            r#"payment = "live"

[wechat_pay]
mchid = "{MCHID}"
appid = "{APPID}"
merchant_serial_no = "{MERCHANT_SERIAL}"
private_key_file = "{merchant}"
api_v3_key = "{api_v3_key}"
public_key_file = "{wechat_public}"
public_key_id = "{WECHAT_KEY_ID}"
gateway = "{base}/sandbox/gateway/wechat"

[alipay]
app_id = "{ALIPAY_APP_ID}"
seller_id = "{ALIPAY_SELLER_ID}"
private_key_file = "{app}"
alipay_public_key_file = "{alipay_public}"
gateway = "{base}/sandbox/gateway/alipay"
"#,
            api_v3_key = self.api_v3_key,
        ))
    }

    async fn send_wechat(
        &self,
        no: &str,
        order: &SandboxOrder,
        transaction_id: &str,
        event_id: &str,
        forged: bool,
    ) -> Option<u16> {
        let mut paid = order.clone();
        paid.transaction_id = Some(transaction_id.to_string());
        let plain = self.transaction(no, &paid).to_string();
        let resource = wechat::encrypt(
            &self.api_v3_key,
            "transaction",
            &keys::nonce(12),
            plain.as_bytes(),
        )
        .ok()?;
        let body = serde_json::json!({
            "id": event_id, "create_time": super::rfc3339_china(store::now_ms()),
            "resource_type": "encrypt-resource", "event_type": wechat::EVENT_PAID,
            "summary": "支付成功", "resource": resource,
        })
        .to_string();
        let timestamp = store::now_ms() / 1000;
        let nonce = keys::nonce(32);
        // A forger has everything but WeChat Pay's key: it signs with ours.
        let signer = if forged { &self.merchant } else { &self.wechat };
        let signature = wechat::sign_message(signer, timestamp, &nonce, &body);
        let res = self
            .http
            .post(&order.notify_url)
            .header("Content-Type", "application/json")
            .header("Wechatpay-Timestamp", timestamp.to_string())
            .header("Wechatpay-Nonce", nonce)
            .header("Wechatpay-Signature", signature)
            .header("Wechatpay-Serial", WECHAT_KEY_ID)
            .body(body)
            .send()
            .await
            .ok()?;
        Some(res.status().as_u16())
    }

    async fn send_alipay(
        &self,
        no: &str,
        order: &SandboxOrder,
        transaction_id: &str,
        event_id: &str,
        forged: bool,
    ) -> Option<u16> {
        let mut params: Vec<(String, String)> = [
            ("notify_time", super::china_time(store::now_ms())),
            ("notify_type", "trade_status_sync".into()),
            ("notify_id", event_id.into()),
            ("app_id", ALIPAY_APP_ID.into()),
            ("charset", "utf-8".into()),
            ("version", "1.0".into()),
            ("trade_no", transaction_id.into()),
            ("out_trade_no", no.into()),
            ("trade_status", "TRADE_SUCCESS".into()),
            ("total_amount", pay::amount::format_yuan(order.amount_fen)),
            ("seller_id", ALIPAY_SELLER_ID.into()),
            ("subject", order.description.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let signer = if forged {
            &self.alipay_app
        } else {
            &self.alipay
        };
        alipay::sign_notify(signer, &mut params);
        let res = self
            .http
            .post(&order.notify_url)
            .form(&params)
            .send()
            .await
            .ok()?;
        Some(res.status().as_u16())
    }
}

/// Where the phone page of an order is: the sandbox's address as the caller reached it, or
/// in process the site's own (the part of the notify URL before `/api/order/notify/`).
fn phone_page_base(phone_base: Option<&str>, notify_url: &str) -> String {
    match phone_base {
        Some(base) => base.trim_end_matches('/').to_string(),
        None => notify_url
            .split("/api/order/notify/")
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}

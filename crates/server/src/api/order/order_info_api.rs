//! `order_info_api`: an order for a package or a top-up, opened at the provider (its QR code),
//! followed until it is paid, and the user's orders.

use super::product_package_api::{grant_label, on_sale};
use crate::api::paper_task::{IdForm, ListForm};
use crate::auth::AuthUser;
use crate::config::TopUpTier;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::{Params, lenient};
use crate::payments::{Channel, rfc3339_china};
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use store::{NewOrder, Order, OrderKind};
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderView {
    pub id: i64,
    /// Our order number, as the provider and the user's bill show it.
    pub out_trade_no: String,
    /// `package`, `top_up` or `task`.
    pub kind: String,
    pub title: String,
    /// `wechat` or `alipay`.
    pub channel: String,
    /// What is paid, in fen.
    pub amount_fen: i64,
    /// Top-up: what the balance receives (bonus included), in fen.
    pub credit_fen: i64,
    /// Package: what it grants, in words.
    pub grant_label: Option<String>,
    pub grant_days: i64,
    /// Task: the task it pays for.
    pub task_id: Option<i64>,
    /// `pending`, `paid`, `closed` or `refunded`.
    pub status: String,
    /// What the QR code holds (WeChat `code_url`, Alipay `qr_code`), or for an order made on a
    /// phone (`scene = phone`) the provider's payment page to open; only while pending.
    pub pay_url: Option<String>,
    /// Refunded, counting refunds still being processed by the provider.
    pub refunded_fen: i64,
    /// Of `refundedFen`, what the provider has not confirmed yet (退款处理中).
    pub refund_pending_fen: i64,
    /// Unix milliseconds.
    pub created_at: i64,
    pub expires_at: i64,
    pub paid_at: Option<i64>,
    /// True while payments run in the sandbox (no real money moves).
    pub sandbox: bool,
}

pub fn view(state: &AppState, o: Order) -> OrderView {
    let pending = o.status == store::OrderStatus::Pending;
    OrderView {
        grant_label: o.grant_kind.map(|k| grant_label(k, o.grant_amount)),
        id: o.id,
        out_trade_no: o.out_trade_no,
        kind: o.kind.as_str().into(),
        title: o.title,
        channel: o.channel,
        amount_fen: o.amount_fen,
        credit_fen: o.credit_fen,
        grant_days: o.grant_days,
        task_id: o.task_id,
        status: o.status.as_str().into(),
        pay_url: o.pay_url.filter(|_| pending),
        refunded_fen: o.refunded_fen,
        refund_pending_fen: 0,
        created_at: o.created_at,
        expires_at: o.expires_at,
        paid_at: o.paid_at,
        sandbox: state.payments.is_sandbox(),
    }
}

/// Fills in what of each order's refunds the provider has not confirmed.
pub async fn with_pending_refunds(
    state: &AppState,
    mut views: Vec<OrderView>,
) -> Result<Vec<OrderView>, ApiError> {
    let refunded: Vec<i64> = views
        .iter()
        .filter(|v| v.refunded_fen > 0)
        .map(|v| v.id)
        .collect();
    if refunded.is_empty() {
        return Ok(views);
    }
    let pending = state.store.pending_refund_fen(&refunded).await?;
    for v in &mut views {
        v.refund_pending_fen = pending.get(&v.id).copied().unwrap_or(0);
    }
    Ok(views)
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentOptions {
    /// Channels that take payments now (`wechat`, `alipay`); empty when online payment is off.
    pub channels: Vec<String>,
    /// Why online payment is unavailable, for the page; absent when it works.
    pub unavailable: Option<String>,
    pub sandbox: bool,
    /// Top-up amounts and their bonuses.
    pub top_up_tiers: Vec<TopUpTier>,
    /// Custom top-up limits in fen (no bonus).
    pub top_up_min_fen: i64,
    pub top_up_max_fen: i64,
    /// Minutes an order can be paid.
    pub order_ttl_minutes: i64,
}

/// What the order pages offer: channels (or why there are none), top-up tiers and limits.
#[utoipa::path(post, path = "/api/order/order_info_api/options", tag = "order_info_api",
    responses((status = 200, body = inline(crate::envelope::Envelope<PaymentOptions>))))]
pub async fn options(State(state): State<AppState>) -> ApiResult<PaymentOptions> {
    let c = &state.config;
    let prices = crate::prices::Prices::current(&state).await?;
    Ok(Success(PaymentOptions {
        channels: state
            .payments
            .channels()
            .iter()
            .map(|c| c.as_str().to_string())
            .collect(),
        unavailable: state.payments.unavailable(),
        sandbox: state.payments.is_sandbox(),
        top_up_tiers: prices.top_up_tiers,
        top_up_min_fen: c.top_up_min_fen,
        top_up_max_fen: c.top_up_max_fen,
        order_ttl_minutes: c.order_ttl_minutes,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateOrderForm {
    /// `package`, `top_up`, or `task` (the shortfall of one task's price, paid by scanning).
    pub kind: String,
    /// The task whose price is short (kind `task`): the money goes to the balance and the
    /// page then submits the task from it.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub task_id: Option<i64>,
    /// The package (kind `package`).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub product_id: Option<i64>,
    /// What to pay in fen. Kind `top_up`: a tier's amount gets its bonus; another amount
    /// within the limits gets none. Kind `task`: what the balance lacks, up to the top-up
    /// maximum.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub amount_fen: Option<i64>,
    /// `wechat` or `alipay`.
    pub channel: String,
    /// `qr` (default): `payUrl` is what the QR code shows, for another device to scan.
    /// `phone`: the order is paid in this phone's browser — `payUrl` is WeChat Pay's H5 page or
    /// Alipay's wap.pay page, which come back to `returnUrl`.
    #[serde(default)]
    pub scene: Option<String>,
    /// Phone scene: where the provider's page sends the payer back (a path of this site, e.g.
    /// `/order/account`); default `/order/account`.
    #[serde(default)]
    pub return_url: Option<String>,
    /// Kind `task`: the submission the page makes once paid. The server makes it itself when
    /// the page has not within `paid_task_start_delay_seconds` (closed, say), so the task
    /// starts the moment it is paid either way.
    #[serde(default)]
    pub submit_after_paid: Option<super::paid_task::SubmitAfterPaid>,
}

fn payment_unavailable(message: String) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "payment_unavailable",
        message,
    )
}

/// Where providers must send notifications: the configured base, else this server's public
/// address as QR links use it (`auth::public_base`).
pub fn notify_base(state: &AppState, headers: &HeaderMap) -> String {
    configured_notify_base(state).unwrap_or_else(|| crate::auth::public_base(headers, state))
}

/// Where notifications go when no request tells this server's address (background work): the
/// configured base, else the public URL.
pub fn configured_notify_base(state: &AppState) -> Option<String> {
    state
        .config
        .payment_notify_base_url
        .as_ref()
        .or(state.config.public_url.as_ref())
        .map(|url| url.trim_end_matches('/').to_string())
}

/// Unpaid, unexpired orders one user may have at once.
const MAX_OPEN_ORDERS: i64 = 5;

/// Creates an order for a package or a top-up and opens it at the provider: the answer holds
/// what the QR code shows (`payUrl`), the amount and when it expires. Nothing is charged or
/// credited until the provider's signed notification (or our query) says it was paid.
#[utoipa::path(post, path = "/api/order/order_info_api/create_order", tag = "order_info_api", security(("bearer" = [])),
    request_body = CreateOrderForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<OrderView>)),
        (status = 400, description = "invalid_order_kind, invalid_channel, invalid_scene, invalid_return_url, invalid_submit_after_paid, top_up_amount_out_of_range, task_amount_out_of_range", body = crate::envelope::ErrorBody),
        (status = 404, description = "package_not_found, task_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "task_not_payable: the task is already queued or running", body = crate::envelope::ErrorBody),
        (status = 429, description = "too_many_open_orders: five unpaid orders are open already", body = crate::envelope::ErrorBody),
        (status = 502, description = "payment_provider_error: the provider refused or did not answer", body = crate::envelope::ErrorBody),
        (status = 503, description = "payment_unavailable: online payment is not configured", body = crate::envelope::ErrorBody),
    ))]
pub async fn create_order(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    client: crate::auth::ClientInfo,
    headers: HeaderMap,
    Params(form): Params<CreateOrderForm>,
) -> ApiResult<OrderView> {
    if let Some(why) = state.payments.unavailable() {
        return Err(payment_unavailable(why));
    }
    let on_phone = match form.scene.as_deref().map(str::trim) {
        None | Some("" | "qr") => false,
        Some("phone") => true,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_scene",
                "支付场景只能是扫码（qr）或手机网页（phone）",
            ));
        }
    };
    let return_path = return_path(form.return_url.as_deref())?;
    // Each open order is an order at the provider too, and one the reconciliation asks about:
    // a few unpaid at a time is what a person needs.
    let open = state
        .store
        .orders_of(session.user.id, MAX_OPEN_ORDERS + 1, 0)
        .await?
        .iter()
        .filter(|o| o.status == store::OrderStatus::Pending && o.expires_at > store::now_ms())
        .count() as i64;
    if open >= MAX_OPEN_ORDERS {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_open_orders",
            format!("您有 {open} 个待支付的订单，请先支付或等待它们过期后再下单"),
        ));
    }
    let channel = Channel::parse(form.channel.trim())
        .filter(|c| state.payments.channels().contains(c))
        .ok_or_else(|| {
            ApiError::bad_request("invalid_channel", "支付方式只能是微信支付或支付宝")
        })?;
    let config = &state.config;
    let product;
    let mut task_id = None;
    let mut submission = None;
    let (kind, title, amount_fen, credit_fen) = match OrderKind::parse(form.kind.trim()) {
        Some(OrderKind::Package) => {
            let id = form
                .product_id
                .ok_or_else(|| ApiError::bad_request("package_not_found", "请选择要购买的套餐"))?;
            product = Some(on_sale(&state, id).await?);
            let p = product.as_ref().expect("just set");
            (OrderKind::Package, p.name.clone(), p.price_fen, 0)
        }
        Some(OrderKind::TopUp) => {
            product = None;
            let fen = form.amount_fen.unwrap_or(0);
            let bonus = crate::prices::Prices::current(&state)
                .await?
                .top_up_tiers
                .iter()
                .find(|t| t.fen == fen)
                .map_or(0, |t| t.bonus_fen);
            if bonus == 0 && !(config.top_up_min_fen..=config.top_up_max_fen).contains(&fen) {
                return Err(ApiError::bad_request(
                    "top_up_amount_out_of_range",
                    format!(
                        "充值金额应在 {} 至 {} 元之间",
                        pay::amount::format_yuan(config.top_up_min_fen),
                        pay::amount::format_yuan(config.top_up_max_fen)
                    ),
                ));
            }
            (OrderKind::TopUp, "账户充值".to_string(), fen, fen + bonus)
        }
        Some(OrderKind::Task) => {
            product = None;
            let task = payable_task(&state, session.user.id, form.task_id).await?;
            let fen = form.amount_fen.unwrap_or(0);
            if !(1..=config.top_up_max_fen).contains(&fen) {
                return Err(ApiError::bad_request(
                    "task_amount_out_of_range",
                    format!(
                        "扫码支付金额应在 0.01 至 {} 元之间",
                        pay::amount::format_yuan(config.top_up_max_fen)
                    ),
                ));
            }
            task_id = Some(task.id);
            submission = form
                .submit_after_paid
                .clone()
                .map(|s| s.checked(task.id))
                .transpose()?;
            let title: String = format!("任务支付：{}", task.title)
                .chars()
                .take(40)
                .collect();
            (OrderKind::Task, title, fen, fen)
        }
        _ => {
            return Err(ApiError::bad_request(
                "invalid_order_kind",
                "订单类型只能是套餐（package）、充值（top_up）或任务支付（task）",
            ));
        }
    };
    let order = state
        .store
        .create_order(&NewOrder {
            user_id: session.user.id,
            kind,
            channel: channel.as_str(),
            title: &title,
            amount_fen,
            credit_fen,
            product: product.as_ref(),
            task_id,
            ttl_ms: config.order_ttl_minutes.max(1) * 60_000,
        })
        .await?;
    if let Some(submission) = &submission {
        state
            .store
            .set_order_submission(order.id, submission)
            .await?;
    }
    let notify_base = notify_base(&state, &headers);
    let opened = if on_phone {
        let back = format!(
            "{}{return_path}",
            crate::auth::public_base(&headers, &state)
        );
        state
            .payments
            .open_on_phone(channel, &order, &notify_base, &back, &client.ip)
            .await
    } else {
        state
            .payments
            .open(
                channel,
                &order,
                &notify_base,
                &rfc3339_china(order.expires_at),
            )
            .await
    };
    let pay_url = match opened {
        Ok(url) => url,
        Err(e) => {
            state.store.close_order(order.id).await?;
            tracing::warn!(order = %order.out_trade_no, error = %e.0, "provider refused an order");
            return Err(ApiError::new(
                StatusCode::BAD_GATEWAY,
                "payment_provider_error",
                format!("{}暂时无法下单：{}", channel.label(), e.0),
            ));
        }
    };
    state.store.set_order_pay_url(order.id, &pay_url).await?;
    let order = state.store.order(order.id, session.user.id).await?;
    Ok(Success(view(&state, order)))
}

/// Where a phone's payment page sends the payer back: a path of this site (never another
/// site, so an order cannot be made to send someone elsewhere), the order's page by default.
fn return_path(asked: Option<&str>) -> Result<String, ApiError> {
    let path = asked
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or("/order/account");
    let ours = path.starts_with('/')
        && !path.starts_with("//")
        && !path.contains('\\')
        && path.len() <= 500
        && !path.chars().any(char::is_control);
    if !ours {
        return Err(ApiError::bad_request(
            "invalid_return_url",
            "支付完成后的返回地址只能是本站的页面路径",
        ));
    }
    Ok(path.to_string())
}

#[derive(Debug, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PhonePayForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// Where the provider's page sends the payer back (a path of this site).
    #[serde(default)]
    pub return_url: Option<String>,
    /// Alipay only: the computer's cashier page (`alipay.trade.page.pay`, paying by signing in
    /// to Alipay on the web) instead of the phone's; answered, not kept (the order's QR code
    /// stays what the dialog shows).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub desktop: Option<bool>,
}

/// A fresh address of the provider's phone payment page for a pending order (WeChat Pay's
/// `h5_url` lasts five minutes, Alipay's signed wap.pay address carries its time): the dialog
/// asks for one when the payer opens the page later than that.
#[utoipa::path(post, path = "/api/order/order_info_api/phone_pay_url", tag = "order_info_api", security(("bearer" = [])),
    request_body = PhonePayForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<OrderView>)),
        (status = 400, description = "invalid_return_url, invalid_scene (desktop for WeChat Pay)", body = crate::envelope::ErrorBody),
        (status = 404, description = "order_not_found (also another user's)", body = crate::envelope::ErrorBody),
        (status = 409, description = "order_not_pending: paid, closed or expired", body = crate::envelope::ErrorBody),
        (status = 502, description = "payment_provider_error", body = crate::envelope::ErrorBody),
        (status = 503, description = "payment_unavailable", body = crate::envelope::ErrorBody),
    ))]
pub async fn phone_pay_url(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    client: crate::auth::ClientInfo,
    headers: HeaderMap,
    Params(form): Params<PhonePayForm>,
) -> ApiResult<OrderView> {
    if let Some(why) = state.payments.unavailable() {
        return Err(payment_unavailable(why));
    }
    let return_path = return_path(form.return_url.as_deref())?;
    let order = match state.store.order(form.id, session.user.id).await {
        Err(store::StoreError::NotFound) => {
            return Err(ApiError::not_found("order_not_found", "订单不存在"));
        }
        other => other?,
    };
    if order.status != store::OrderStatus::Pending || order.expires_at <= store::now_ms() {
        return Err(ApiError::conflict(
            "order_not_pending",
            "该订单已支付、已关闭或已过期，无需再打开支付页面",
        ));
    }
    let channel = Channel::parse(&order.channel)
        .ok_or_else(|| ApiError::bad_request("invalid_channel", "未知的支付渠道"))?;
    let back = format!(
        "{}{return_path}",
        crate::auth::public_base(&headers, &state)
    );
    if form.desktop == Some(true) {
        if channel != Channel::Alipay {
            return Err(ApiError::bad_request(
                "invalid_scene",
                "微信支付没有电脑网页收银台，请扫码支付",
            ));
        }
        let url = state
            .payments
            .alipay_page(&order, &notify_base(&state, &headers), &back, true)
            .map_err(|e| ApiError::new(StatusCode::BAD_GATEWAY, "payment_provider_error", e.0))?;
        let mut shown = view(&state, order);
        shown.pay_url = Some(url);
        return Ok(Success(shown));
    }
    let url = state
        .payments
        .open_on_phone(
            channel,
            &order,
            &notify_base(&state, &headers),
            &back,
            &client.ip,
        )
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::BAD_GATEWAY,
                "payment_provider_error",
                format!("{}暂时无法打开支付页面：{}", channel.label(), e.0),
            )
        })?;
    state.store.set_order_pay_url(order.id, &url).await?;
    let order = state.store.order(order.id, session.user.id).await?;
    Ok(Success(view(&state, order)))
}

/// 我已支付: asks the provider about the user's pending order now, instead of waiting for its
/// notification or the reconciler's next turn; a payment found is recorded like a
/// notification (once). One ask every 5 seconds per order.
#[utoipa::path(post, path = "/api/order/order_info_api/check_paid", tag = "order_info_api", security(("bearer" = [])),
    request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<OrderView>)),
        (status = 404, description = "order_not_found (also another user's)", body = crate::envelope::ErrorBody),
        (status = 429, description = "too_many_checks", body = crate::envelope::ErrorBody),
        (status = 502, description = "payment_provider_error: the provider could not be asked", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_paid(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<OrderView> {
    let order = match state.store.order(form.id, session.user.id).await {
        Err(store::StoreError::NotFound) => {
            return Err(ApiError::not_found("order_not_found", "订单不存在"));
        }
        other => other?,
    };
    if order.status == store::OrderStatus::Pending && state.payments.unavailable().is_none() {
        crate::rate_limit::check_paid_query(&state.store, order.id).await?;
        match state.payments.query(&order).await {
            Ok(crate::payments::OrderAtProvider::Paid(notice)) => {
                super::notify::record(&state, &order.channel, &notice).await?;
            }
            Ok(_) => {}
            Err(e) => {
                return Err(ApiError::new(
                    StatusCode::BAD_GATEWAY,
                    "payment_provider_error",
                    format!("暂时无法向支付服务商查询：{}", e.0),
                ));
            }
        }
    }
    let order = state.store.order(order.id, session.user.id).await?;
    let views = with_pending_refunds(&state, vec![view(&state, order)]).await?;
    Ok(Success(views.into_iter().next().expect("one order")))
}

/// The user's task that a scan may pay for: not queued or running now.
async fn payable_task(
    state: &AppState,
    user_id: i64,
    task_id: Option<i64>,
) -> Result<store::Task, ApiError> {
    let missing = || ApiError::not_found("task_not_found", "要支付的任务不存在或已删除");
    let task = match state
        .store
        .task(task_id.ok_or_else(missing)?, user_id)
        .await
    {
        Err(store::StoreError::NotFound) => return Err(missing()),
        other => other?,
    };
    if matches!(
        task.status,
        store::TaskStatus::Queued | store::TaskStatus::Running
    ) {
        return Err(ApiError::conflict(
            "task_not_payable",
            "该任务已在处理中，无需再支付",
        ));
    }
    Ok(task)
}

/// One of the user's orders; the page polls it until it is paid.
#[utoipa::path(post, path = "/api/order/order_info_api/load_by_id", tag = "order_info_api", security(("bearer" = [])),
    params(IdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<OrderView>)),
        (status = 404, description = "order_not_found (also another user's)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<OrderView> {
    match state.store.order(form.id, session.user.id).await {
        Ok(order) => {
            let views = with_pending_refunds(&state, vec![view(&state, order)]).await?;
            Ok(Success(views.into_iter().next().expect("one order")))
        }
        Err(store::StoreError::NotFound) => {
            Err(ApiError::not_found("order_not_found", "订单不存在"))
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderPage {
    pub list: Vec<OrderView>,
    pub page: i64,
    pub size: i64,
}

/// The user's orders, newest first.
#[utoipa::path(post, path = "/api/order/order_info_api/query_list", tag = "order_info_api", security(("bearer" = [])),
    params(ListForm),
    responses((status = 200, body = inline(crate::envelope::Envelope<OrderPage>))))]
pub async fn query_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ListForm>,
) -> ApiResult<OrderPage> {
    let page = form.page.unwrap_or(1).max(1);
    let size = form.size.unwrap_or(10).clamp(1, 100);
    let orders = state
        .store
        .orders_of(session.user.id, size, (page - 1) * size)
        .await?;
    let views = orders.into_iter().map(|o| view(&state, o)).collect();
    Ok(Success(OrderPage {
        list: with_pending_refunds(&state, views).await?,
        page,
        size,
    }))
}

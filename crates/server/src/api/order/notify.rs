//! The providers' payment notifications. Each is verified by the `pay` crate (signature, time
//! window, probes, merchant), then handed to the store, which pays the order once whatever
//! arrives how often. The provider hears "received" only after our transaction committed, so a
//! crash before the commit makes it send the notification again.

use crate::payments::OrderAtProvider;
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use pay::{PaidNotice, PayError, wechat};
use store::{PaymentNotice, PaymentOutcome};

/// What a verified notice did, logged; `Err` when it must be sent again (the store failed).
pub(crate) async fn record(
    state: &AppState,
    provider: &str,
    notice: &PaidNotice,
) -> Result<(), store::StoreError> {
    crate::crash_point("payment_commit");
    let outcome = state
        .store
        .record_payment(&PaymentNotice {
            provider,
            event_id: &notice.event_id,
            out_trade_no: &notice.out_trade_no,
            amount_fen: notice.amount_fen,
            provider_trade_no: &notice.provider_trade_no,
        })
        .await?;
    match &outcome {
        PaymentOutcome::Paid(order) => {
            tracing::info!(provider, order = %order.out_trade_no, fen = order.amount_fen, "order paid");
            if order.kind == store::OrderKind::Task {
                let delay =
                    std::time::Duration::from_secs(state.config.paid_task_start_delay_seconds);
                super::paid_task::start_later(state, order.clone(), delay);
            }
        }
        PaymentOutcome::AmountMismatch {
            expected_fen,
            got_fen,
        } => tracing::warn!(
            provider,
            order = %notice.out_trade_no,
            expected_fen,
            got_fen,
            "payment notice refused: amount differs from the order"
        ),
        PaymentOutcome::UnknownOrder => tracing::warn!(
            provider,
            order = %notice.out_trade_no,
            "payment notice for an order we never made"
        ),
        PaymentOutcome::AlreadyPaid(_) | PaymentOutcome::Duplicate => {}
    }
    crate::crash_point("payment_reply");
    Ok(())
}

fn wechat_fail(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(serde_json::json!({"code": "FAIL", "message": message})),
    )
        .into_response()
}

fn refused(provider: &str, e: &PayError) {
    tracing::warn!(provider, code = e.code(), error = %e, "payment notification refused");
}

/// WeChat Pay's notification: 204 once handled; 4xx for a message that is not genuine (logged);
/// 5xx when it must come again.
pub async fn wechat(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let signed = wechat::SignedHeaders {
        timestamp: header("Wechatpay-Timestamp"),
        nonce: header("Wechatpay-Nonce"),
        signature: header("Wechatpay-Signature"),
        serial: header("Wechatpay-Serial"),
    };
    match state.payments.read_wechat(&signed, &body) {
        Ok(Some(wechat::Notice::Refund(refund))) => {
            // A refund we do not know, or one already settled, changes nothing.
            let (provider_no, error) = if refund.succeeded() {
                (Some(refund.refund_id.as_str()), None)
            } else if refund.refund_status == "ABNORMAL" {
                // The money has left the merchant's account and waits at WeChat Pay for the
                // merchant to send it on (商户平台 → 异常退款): not for us to give up.
                (
                    None,
                    Some("微信支付通知：退款异常（用户银行卡可能已注销或冻结），钱已离开商户账户，请在商户平台处理异常退款".to_string()),
                )
            } else {
                (
                    None,
                    Some(format!(
                        "微信支付通知：退款已关闭（{}），钱未退回用户",
                        refund.refund_status
                    )),
                )
            };
            match state
                .store
                .settle_refund(
                    &refund.out_refund_no,
                    refund.succeeded(),
                    provider_no,
                    error.as_deref(),
                )
                .await
            {
                Ok(as_expected) => {
                    tracing::info!(refund = %refund.out_refund_no, status = %refund.refund_status, "refund notice");
                    settled(&state, &refund.out_refund_no, as_expected);
                    StatusCode::NO_CONTENT.into_response()
                }
                Err(e) => {
                    tracing::error!(error = %e, "refund notice not stored; WeChat Pay will send it again");
                    wechat_fail(StatusCode::INTERNAL_SERVER_ERROR, "暂时无法处理，请重发")
                }
            }
        }
        Ok(Some(wechat::Notice::Paid(notice))) => match record(&state, "wechat", &notice).await {
            Ok(()) => StatusCode::NO_CONTENT.into_response(),
            Err(e) => {
                tracing::error!(error = %e, "payment notice not stored; WeChat Pay will send it again");
                wechat_fail(StatusCode::INTERNAL_SERVER_ERROR, "暂时无法处理，请重发")
            }
        },
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => {
            refused("wechat", &e);
            let status = match e {
                PayError::BadSignature
                | PayError::SignTest
                | PayError::StaleTimestamp
                | PayError::UnknownSerial(_) => StatusCode::UNAUTHORIZED,
                _ => StatusCode::BAD_REQUEST,
            };
            wechat_fail(status, e.code())
        }
    }
}

/// Alipay's notification: exactly `success` once handled, anything else makes it send again.
pub async fn alipay(State(state): State<AppState>, body: Bytes) -> Response {
    let Ok(params) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&body) else {
        return (StatusCode::BAD_REQUEST, "fail").into_response();
    };
    match state.payments.read_alipay(&params) {
        Ok(Some(notice)) => match record(&state, "alipay", &notice).await {
            Ok(()) => pay::alipay::NOTIFY_REPLY.into_response(),
            Err(e) => {
                tracing::error!(error = %e, "payment notice not stored; Alipay will send it again");
                (StatusCode::INTERNAL_SERVER_ERROR, "fail").into_response()
            }
        },
        Ok(None) => pay::alipay::NOTIFY_REPLY.into_response(),
        Err(e) => {
            refused("alipay", &e);
            (StatusCode::BAD_REQUEST, "fail").into_response()
        }
    }
}

/// How long the reconciler leaves an unpaid order of `age_ms` before asking again: a third of
/// its age, between one minute and one hour. A 30-minute order is asked about some ten times,
/// not thirty, and one the provider cannot close stops costing a call a minute.
pub fn next_query_delay(age_ms: i64) -> i64 {
    (age_ms / 3).clamp(60_000, 3_600_000)
}

/// Asks the provider about pending orders whose notification never came: paid ones are
/// recorded like a notification; expired unpaid ones are closed at the provider and here.
/// Orders younger than `min_age_ms` are left to their notification. With `backoff`, an order
/// asked about recently is left until its next turn (`next_query_delay`); the operator's 立即对账
/// asks about every one. Returns how many were paid and closed.
pub async fn reconcile_once(
    state: &AppState,
    min_age_ms: i64,
    backoff: bool,
) -> Result<(usize, usize), store::StoreError> {
    if state.payments.unavailable().is_some() {
        return Ok((0, 0));
    }
    let now = store::now_ms();
    let (mut paid, mut closed) = (0, 0);
    // Every pending order, a page at a time (at most `RECONCILE_MAX` a round): many orders
    // left unpaid do not hide a paid one behind them.
    let mut orders = Vec::new();
    let mut after = 0;
    while orders.len() < RECONCILE_MAX {
        let due = if backoff { now } else { i64::MAX };
        let page = state
            .store
            .pending_orders_due(now - min_age_ms, after, 200, due)
            .await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        orders.extend(page);
    }
    let deadline = std::time::Instant::now() + ROUND_BUDGET;
    for order in orders {
        if std::time::Instant::now() > deadline {
            break;
        }
        let answer = state.payments.query(&order).await;
        if !matches!(answer, Ok(OrderAtProvider::Paid(_))) {
            let next = now + next_query_delay(now - order.created_at);
            state.store.defer_order_query(order.id, next).await?;
        }
        match answer {
            Ok(OrderAtProvider::Paid(notice)) => {
                record(state, &order.channel, &notice).await?;
                paid += 1;
            }
            // Closed at the provider (expired there, or by us before a crash): closed here.
            Ok(OrderAtProvider::Closed) => {
                if state.store.close_order(order.id).await? {
                    closed += 1;
                }
            }
            Ok(OrderAtProvider::Unpaid) if order.expires_at <= now => {
                if state.payments.close(&order).await.is_ok()
                    && state.store.close_order(order.id).await?
                {
                    closed += 1;
                }
            }
            Ok(OrderAtProvider::Unpaid) => {}
            Err(e) => {
                tracing::warn!(order = %order.out_trade_no, error = %e.0, "order query failed");
                // An expired order the provider cannot tell us about is closed here; should it
                // have been paid after all, its notification still pays it.
                if order.expires_at <= now && state.store.close_order(order.id).await? {
                    closed += 1;
                }
            }
        }
    }
    // Tasks paid by scanning whose page was closed before it could submit them (and whose
    // follow-up was lost, say to a restart).
    let delay_ms = (state.config.paid_task_start_delay_seconds as i64).saturating_mul(1000);
    for order in state
        .store
        .paid_orders_to_submit(now - delay_ms, 50)
        .await?
    {
        if std::time::Instant::now() > deadline {
            break;
        }
        super::paid_task::start(state, &order).await;
    }
    Ok((paid, closed))
}

/// Asks the providers again about refunds they have not confirmed (a failure, a refund still
/// processing, a crash between our write and the provider's answer). The providers take our
/// refund number twice as one refund, so nothing is paid back twice. Returns how many are now
/// confirmed.
pub async fn push_refunds(state: &AppState) -> Result<usize, store::StoreError> {
    if state.payments.unavailable().is_some() {
        return Ok(0);
    }
    let mut done = 0;
    let deadline = std::time::Instant::now() + ROUND_BUDGET;
    for refund in state.store.pending_refunds(50).await? {
        // Taken right before asking: an operator giving it up, another attempt or another node
        // meanwhile leaves it alone, and a round that ran long stops.
        if std::time::Instant::now() > deadline
            || !state.store.claim_refund_attempt(&refund.refund_no).await?
        {
            continue;
        }
        let order = state.store.order_by_id(refund.order_id).await?;
        match state
            .payments
            .refund(
                &order,
                &refund.refund_no,
                refund.amount_fen,
                &refund.reason,
                super::order_info_api::configured_notify_base(state).as_deref(),
            )
            .await
        {
            Ok(Some(provider_no)) => {
                settled(
                    state,
                    &refund.refund_no,
                    state
                        .store
                        .settle_refund(&refund.refund_no, true, Some(&provider_no), None)
                        .await?,
                );
                done += 1;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(refund = %refund.refund_no, error = %e.0, "refund not confirmed");
                state
                    .store
                    .settle_refund(&refund.refund_no, false, None, Some(&e.0))
                    .await?;
            }
        }
    }
    Ok(done)
}

/// Logs a provider's success that came after the refund was given up: the user has both the
/// money and what the refund had taken back, which an operator must sort out.
pub fn settled(_state: &AppState, refund_no: &str, as_expected: bool) {
    if !as_expected {
        tracing::error!(
            refund = %refund_no,
            "a provider made a refund after it was given up; the refund row says so for the operator"
        );
    }
}

/// How long one round of reconciliation or refund attempts may take before it stops (the rest
/// waits for the next round), so a gateway that hangs cannot hold the loop for hours.
const ROUND_BUDGET: std::time::Duration = std::time::Duration::from_secs(120);

/// Pending orders one reconciliation round asks the providers about.
const RECONCILE_MAX: usize = 5_000;

/// Orders younger than this are left to their notification.
pub const RECONCILE_AFTER_MS: i64 = 60_000;

/// How often the reconciler looks for orders and refunds whose turn has come (each order is
/// asked about on its own schedule, `next_query_delay`).
pub const RECONCILE_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Reconciles every `every` until `shutdown` turns true (in `wenjian serve`).
pub fn spawn_reconciler(
    state: AppState,
    every: std::time::Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match reconcile_once(&state, RECONCILE_AFTER_MS, true).await {
                Ok((0, 0)) => {}
                Ok((paid, closed)) => tracing::info!(paid, closed, "orders reconciled"),
                Err(e) => tracing::warn!(error = %e, "order reconciliation failed"),
            }
            match push_refunds(&state).await {
                Ok(0) => {}
                Ok(refunded) => tracing::info!(refunded, "refunds confirmed"),
                Err(e) => tracing::warn!(error = %e, "refunds not pushed"),
            }
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.wait_for(|stop| *stop) => break,
            }
        }
    })
}

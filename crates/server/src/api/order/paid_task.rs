//! A task paid by scanning starts when it is paid. Its page, seeing the order paid, submits it
//! from the balance at once; when the page was closed first, the server makes the same
//! submission itself: the one the page sent with the order (endpoint, form, the price its
//! dialog showed), as that user, with the balance confirmed as what pays. A price changed
//! meanwhile is refused like any confirmed submission (412), and the money waits in the balance.

use crate::auth::InternalCaller;
use crate::envelope::ApiError;
use crate::state::AppState;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde::{Deserialize, Serialize};
use tower::ServiceExt;
use utoipa::ToSchema;

/// The paid submissions a scan-to-pay order may carry.
const SUBMISSIONS: &[&str] = &[
    "/api/base/check_api/check_submit",
    "/api/base/paper_aigc_api/submit_check",
    "/api/base/paper_aigc_api/machine_submit",
    "/api/base/paper_machine_api/submit_check",
    "/api/base/paper_machine_api/machine_submit",
    "/api/base/machine_api/machine_submit",
    "/api/base/machine_api/machine_cnki_submit",
    "/api/base/ai_paper_info_api/commit_paper",
    "/api/base/ai_ppt_info_api/submit_by_id",
];

/// Largest form kept (a paper's edited outline is the biggest).
const MAX_FORM_BYTES: usize = 64 * 1024;

/// What the task's page would submit once paid.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmitAfterPaid {
    /// The submission endpoint, e.g. `/api/base/check_api/check_submit`.
    pub path: String,
    /// Its JSON form; its `id` must be the order's task.
    #[schema(value_type = Object)]
    pub body: serde_json::Value,
    /// The price in fen the page's dialog showed (sent as `X-Confirmed-Price`).
    pub price_fen: i64,
}

impl SubmitAfterPaid {
    /// Checked when the order is made: a known endpoint, a form of this task, a sane size.
    pub fn checked(self, task_id: i64) -> Result<String, ApiError> {
        let bad = |why: &str| {
            ApiError::bad_request(
                "invalid_submit_after_paid",
                format!("支付后自动提交的内容有误：{why}"),
            )
        };
        if !SUBMISSIONS.contains(&self.path.as_str()) {
            return Err(bad("不是可付费提交的接口"));
        }
        let id = match &self.body["id"] {
            serde_json::Value::Number(n) => n.as_i64(),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        if !self.body.is_object() || id != Some(task_id) {
            return Err(bad("表单应为对象，且 id 为本订单的任务"));
        }
        if self.price_fen < 0 {
            return Err(bad("价格不能为负"));
        }
        let text = serde_json::to_string(&self).map_err(ApiError::internal)?;
        if text.len() > MAX_FORM_BYTES {
            return Err(bad("内容过长"));
        }
        Ok(text)
    }
}

/// Makes a paid order's kept submission, once (whoever takes it first, on any node). Returns
/// the submission's HTTP status, or `None` when there was nothing to make.
pub async fn start(state: &AppState, order: &store::Order) -> Option<StatusCode> {
    let kept = match state.store.take_order_submission(order.id).await {
        Ok(Some(kept)) => kept,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(order = %order.out_trade_no, error = %e, "paid task's submission not read");
            return None;
        }
    };
    let Ok(submission) = serde_json::from_str::<SubmitAfterPaid>(&kept) else {
        return None;
    };
    if !SUBMISSIONS.contains(&submission.path.as_str()) {
        return None;
    }
    let user = state.store.user_by_id(order.user_id).await.ok()?;
    let caller = InternalCaller(store::SessionUser {
        session_id: 0,
        token_hash: String::new(),
        via: "payment".into(),
        signed_in_at: store::now_ms(),
        user,
    });
    let request = Request::post(&submission.path)
        .header("content-type", "application/json")
        .header("x-confirmed-payment", "balance")
        .header("x-confirmed-price", submission.price_fen.to_string())
        .extension(caller)
        .body(Body::from(submission.body.to_string()))
        .ok()?;
    let answer = crate::api::routes()
        .with_state(state.clone())
        .oneshot(request)
        .await
        .ok()?;
    let status = answer.status();
    if status.is_success() {
        tracing::info!(order = %order.out_trade_no, task = ?order.task_id, "task started when its payment arrived");
    } else {
        // Already submitted by its page (409), a price changed (412), …: the money is in the
        // balance and the task waits for its user, as before.
        let body = axum::body::to_bytes(answer.into_body(), 4096)
            .await
            .unwrap_or_default();
        tracing::info!(order = %order.out_trade_no, status = status.as_u16(),
            answer = %String::from_utf8_lossy(&body), "paid task not started by the server");
    }
    Some(status)
}

/// After a scan-to-pay order is paid: its page has `delay` to submit the task itself (it
/// polls every two seconds), then the server makes the submission if nobody did.
pub fn start_later(state: &AppState, order: store::Order, delay: std::time::Duration) {
    let state = state.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        start(&state, &order).await;
    });
}

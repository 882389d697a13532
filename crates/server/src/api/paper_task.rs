//! What the paper-task families (`check_api`, `paper_aigc_api`, later the rewriting families)
//! share: reading an upload or pasted text, pricing and charging a task in one transaction,
//! paging records, keeping and removing a task's files, and sending a report file.

use crate::auth::{ClientInfo, MaybeUser};
use crate::envelope::ApiError;
use crate::extraction::ExtractError;
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use store::{Charge, GrantCharge, GrantKind, Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PastedText {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub author: String,
    /// Pasted text; for a file use multipart/form-data with a `file` part.
    #[serde(default)]
    pub text: String,
}

/// An upload (multipart: `file`, `title`, `author`, or `text`) or JSON with `text`.
pub struct Upload {
    pub title: String,
    pub author: String,
    pub file_name: String,
    pub bytes: Vec<u8>,
}

/// Whether a request carries multipart/form-data (files), not JSON or a plain form.
pub fn is_multipart(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"))
}

pub async fn read_upload(state: &AppState, req: Request) -> Result<Upload, ApiError> {
    if !is_multipart(&req) {
        let Params(p) = Params::<PastedText>::from_request(req, state).await?;
        return Ok(Upload {
            title: p.title,
            author: plain_line(&p.author),
            file_name: String::new(),
            bytes: p.text.into_bytes(),
        });
    }
    let mut multipart = Multipart::from_request(req, state)
        .await
        .map_err(|_| ApiError::bad_request("bad_upload", "上传内容格式错误"))?;
    let mut upload = Upload {
        title: String::new(),
        author: String::new(),
        file_name: String::new(),
        bytes: vec![],
    };
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| upload_error(state, e))?
    {
        let name = field.name().unwrap_or("").to_string();
        match name.as_str() {
            "file" => {
                upload.file_name = field.file_name().unwrap_or("").to_string();
                upload.bytes = field
                    .bytes()
                    .await
                    .map_err(|e| upload_error(state, e))?
                    .to_vec();
            }
            "text" if upload.bytes.is_empty() => {
                upload.bytes = field
                    .bytes()
                    .await
                    .map_err(|e| upload_error(state, e))?
                    .to_vec()
            }
            "title" => upload.title = field.text().await.unwrap_or_default(),
            "author" => upload.author = plain_line(&field.text().await.unwrap_or_default()),
            _ => {}
        }
    }
    Ok(upload)
}

/// A multipart read that failed: too large (413), or malformed or cut off (400).
pub(crate) fn upload_error(
    state: &AppState,
    error: axum::extract::multipart::MultipartError,
) -> ApiError {
    if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return upload_too_large(state);
    }
    ApiError::bad_request("bad_upload", "上传内容格式错误或不完整，请重新上传")
}

fn upload_too_large(state: &AppState) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "file_too_large",
        format!(
            "上传失败：文件不能超过 {} MB",
            state.config.max_upload_bytes / (1024 * 1024)
        ),
    )
}

/// The text of an upload, within the configured size limits, read off the request path (see
/// `extraction`). `caller` is whose reading this is: one document at a time each.
pub async fn extract(
    state: &AppState,
    upload: &Upload,
    caller: &Caller,
) -> Result<docio::Extracted, ApiError> {
    extract_with_images(state, upload, caller, 0).await
}

/// `extract`, with the pictures of a .docx up to `image_bytes` in all (for slides).
pub async fn extract_with_images(
    state: &AppState,
    upload: &Upload,
    caller: &Caller,
    image_bytes: usize,
) -> Result<docio::Extracted, ApiError> {
    let limits = docio::Limits {
        max_bytes: state.config.max_upload_bytes,
        max_chars: state.config.max_paper_chars,
        image_bytes,
        ..docio::Limits::default()
    };
    state
        .extractor
        .extract(&caller.0, upload.bytes.clone(), &upload.file_name, limits)
        .await
        .map_err(|e| match e {
            ExtractError::Document(e) => {
                let status = if e.is_too_large() {
                    StatusCode::PAYLOAD_TOO_LARGE
                } else {
                    StatusCode::UNPROCESSABLE_ENTITY
                };
                ApiError::new(status, e.code(), e.to_string())
            }
            ExtractError::Busy => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "extraction_busy",
                e.to_string(),
            ),
            ExtractError::OnePerCaller => ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "extraction_in_progress",
                e.to_string(),
            ),
            ExtractError::Unavailable(detail) => {
                tracing::error!(%detail, "document reader unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "extraction_unavailable",
                    "文档解析服务暂不可用，请稍后重试或直接粘贴文本",
                )
            }
        })
}

/// Whose upload is being read: a signed-in user, or a visitor's address.
pub struct Caller(pub String);

impl Caller {
    pub fn user(id: i64) -> Self {
        Caller(format!("user:{id}"))
    }
}

/// The signed-in user, else the visitor's address, which may count only so many uploads an
/// hour (`anonymous_counts_per_hour`): reading a file costs a child process.
impl axum::extract::FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, ApiError> {
        if let MaybeUser(Some(session)) = MaybeUser::from_request_parts(parts, state).await? {
            return Ok(Caller::user(session.user.id));
        }
        let Ok(client) = ClientInfo::from_request_parts(parts, state).await;
        crate::rate_limit::check_visitor_counts(&state.store, &state.config, &client.ip).await?;
        Ok(Caller(format!("ip:{}", client.ip)))
    }
}

/// A title or name as one plain line: no control characters (NUL, line breaks), no invisible
/// or direction-changing format characters (which can make a title read as something else in
/// lists and reports), surrounding spaces trimmed.
pub fn plain_line(text: &str) -> String {
    text.chars()
        .filter(|&c| {
            !c.is_control()
                && !matches!(c,
                    '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
                    | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
        })
        .collect::<String>()
        .trim()
        .to_string()
}

/// The title given, else the title the document marks (a .docx paragraph in the Title style),
/// else the file name, else the first line of the text.
pub fn default_title(upload: &Upload, extracted: &docio::Extracted) -> String {
    let text = &extracted.text;
    for given in [Some(upload.title.as_str()), extracted.title.as_deref()]
        .into_iter()
        .flatten()
    {
        let title = plain_line(given);
        let title = title.trim();
        if !title.is_empty() {
            return title.chars().take(200).collect();
        }
    }
    let name = plain_line(&upload.file_name);
    let stem = name
        .rsplit_once('.')
        .map(|(s, _)| s)
        .unwrap_or(&name)
        .trim();
    if !stem.is_empty() {
        return stem.chars().take(200).collect();
    }
    let first = text
        .lines()
        .map(plain_line)
        .find(|l| !l.is_empty())
        .unwrap_or_else(|| "未命名论文".into());
    first.chars().take(40).collect()
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WordCount {
    /// Counted characters, by `rule`.
    pub chars: usize,
    pub rule: String,
    /// txt, docx or pdf.
    pub format: String,
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IdForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListForm {
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub page: Option<i64>,
    /// Page size (default 10, at most 100).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub size: Option<i64>,
    /// Only tasks in this status.
    #[serde(default)]
    pub status: Option<String>,
}

/// One page of a family's records.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecordPage<T> {
    pub records: Vec<T>,
    pub total: i64,
    pub page: i64,
    pub size: i64,
}

/// The user's tasks of `kind`, newest first, as records.
pub async fn list_records<T>(
    state: &AppState,
    user_id: i64,
    kind: &str,
    form: &ListForm,
    record: impl Fn(&Task) -> T,
) -> Result<RecordPage<T>, ApiError> {
    let page = form.page.unwrap_or(1).max(1);
    let size = form.size.unwrap_or(10).clamp(1, 100);
    let (tasks, total) = state
        .store
        .list_tasks(
            user_id,
            kind,
            status_filter(form.status.as_deref()),
            (page - 1).saturating_mul(size),
            size,
        )
        .await?;
    Ok(RecordPage {
        records: tasks.iter().map(record).collect(),
        total,
        page,
        size,
    })
}

/// A list's status parameter: empty or absent lists every status.
fn status_filter(status: Option<&str>) -> Option<TaskStatus> {
    status.filter(|s| !s.is_empty()).map(TaskStatus::parse)
}

/// The user's newest `limit` tasks of `kind` (in `form.status` when given).
pub async fn list_records_upto(
    state: &AppState,
    user_id: i64,
    kind: &str,
    status: Option<&str>,
    limit: i64,
) -> Result<Vec<Task>, ApiError> {
    Ok(state
        .store
        .list_tasks(user_id, kind, status_filter(status), 0, limit)
        .await?
        .0)
}

/// A user's task of `kind`; another user's, or another kind's, is `not_found`.
pub async fn owned_task(
    state: &AppState,
    id: i64,
    user_id: i64,
    kind: &str,
    not_found: fn() -> ApiError,
) -> Result<Task, ApiError> {
    let task = state
        .store
        .task(id, user_id)
        .await
        .map_err(|_| not_found())?;
    if task.kind != kind {
        return Err(not_found());
    }
    Ok(task)
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskCost {
    pub id: i64,
    pub chars: usize,
    pub rule: String,
    pub price_per_thousand_fen: i64,
    /// The price in fen when paid from the balance.
    pub price_fen: i64,
    /// What will pay: `free_check`, `package`, `balance`, or `insufficient`.
    pub pays_with: String,
    /// The user's packages of the kind that may pay for this task (absent when none is held).
    pub package: Option<PackagePayment>,
    pub free_checks: i64,
    pub balance_fen: i64,
    /// The longest paper (counted characters) a free check pays for, where free checks apply;
    /// a longer one is paid from the balance even when free checks remain.
    pub free_check_max_chars: Option<usize>,
}

/// What a package would take for a task, and what the user holds of that kind.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagePayment {
    /// `check`, `aigc`, `rewrite_chars`, `paper` or `ppt`.
    pub kind: String,
    /// What this task takes: uses, or characters for rewriting.
    pub units: i64,
    /// "次", "字" or "篇".
    pub unit: String,
    /// What remains over all live packages of the kind, before this task.
    pub remaining: i64,
    /// Whether they cover the task; when not, the balance pays in full.
    pub covers: bool,
    /// The packages' names, those expiring first first.
    pub names: Vec<String>,
    /// When the first of them expires (Unix ms).
    pub expires_at: i64,
    /// Why they do not pay although enough remains (a paper longer than they allow).
    pub note: Option<String>,
}

/// How a package pays for a task: one use per task, or one unit per counted character.
#[derive(Debug, Clone, Copy)]
pub enum PackageUnits {
    PerTask(GrantKind),
    PerChar(GrantKind),
}

impl PackageUnits {
    fn kind(self) -> GrantKind {
        match self {
            PackageUnits::PerTask(k) | PackageUnits::PerChar(k) => k,
        }
    }

    fn units(self, chars: usize) -> i64 {
        match self {
            PackageUnits::PerTask(_) => 1,
            PackageUnits::PerChar(_) => chars as i64,
        }
    }
}

/// How a task of `chars` characters is priced: per started 1,000 characters, at least one.
pub struct Tariff {
    /// Which per-thousand price applies (read from `Prices::current` at each quote).
    pub service: crate::prices::PerThousand,
    /// Whether the free checks (given at first QR login) may pay for it.
    pub free_checks_apply: bool,
    /// Which packages pay for it, before the balance.
    pub package: Option<PackageUnits>,
    pub rule: &'static str,
}

/// What the user's live packages of `units`' kind hold for a task of `chars` characters.
pub async fn package_payment(
    state: &AppState,
    user_id: i64,
    units: PackageUnits,
    chars: usize,
) -> Result<Option<PackagePayment>, ApiError> {
    let kind = units.kind();
    let grants: Vec<_> = state
        .store
        .active_grants(user_id, store::now_ms())
        .await?
        .into_iter()
        .filter(|g| g.kind == kind)
        .collect();
    let Some(first) = grants.first() else {
        return Ok(None);
    };
    let remaining = grants.iter().map(|g| g.remaining).sum::<i64>();
    let needed = units.units(chars);
    let mut names: Vec<String> = Vec::new();
    for g in &grants {
        if !names.contains(&g.title) {
            names.push(g.title.clone());
        }
    }
    Ok(Some(PackagePayment {
        kind: kind.as_str().into(),
        units: needed,
        unit: kind.unit().into(),
        remaining,
        covers: remaining >= needed,
        names,
        expires_at: first.expires_at,
        note: None,
    }))
}

pub async fn quote(
    state: &AppState,
    user_id: i64,
    id: i64,
    chars: usize,
    tariff: &Tariff,
) -> Result<TaskCost, ApiError> {
    let account = state.store.account(user_id).await?;
    let fen_per_thousand = crate::prices::Prices::current(state)
        .await?
        .per_thousand(tariff.service);
    let price_fen = (chars as u64).div_ceil(1000).max(1) as i64 * fen_per_thousand;
    let free_cap = state.config.free_check_max_chars;
    let mut package = match tariff.package {
        Some(units) => package_payment(state, user_id, units, chars).await?,
        None => None,
    };
    let most = state.config.package_task_max_chars;
    if let (Some(PackageUnits::PerTask(_)), Some(p)) = (tariff.package, package.as_mut())
        && chars > most
    {
        p.covers = false;
        p.note = Some(format!(
            "套餐每次适用于 {most} 字以内的论文，本文 {chars} 字由余额支付"
        ));
    }
    let pays_with = if tariff.free_checks_apply && account.free_checks > 0 && chars <= free_cap {
        "free_check"
    } else if package.as_ref().is_some_and(|p| p.covers) {
        "package"
    } else if account.balance_fen >= price_fen {
        "balance"
    } else {
        "insufficient"
    };
    Ok(TaskCost {
        id,
        chars,
        rule: tariff.rule.into(),
        price_per_thousand_fen: fen_per_thousand,
        price_fen,
        pays_with: pays_with.into(),
        package,
        free_checks: account.free_checks,
        balance_fen: account.balance_fen,
        free_check_max_chars: tariff.free_checks_apply.then_some(free_cap),
    })
}

/// The header a page sends with a submission: how the price dialog the user confirmed said the
/// task would be paid (`free_check`, `package` or `balance`). Like `If-Match`, it makes the
/// charge conditional: when something changed in between (the package used up elsewhere, the
/// last free check spent, a package bought), nothing is charged and the page asks again.
pub const CONFIRMED_PAYMENT_HEADER: &str = "x-confirmed-payment";

/// The price in fen the dialog showed, sent beside `X-Confirmed-Payment`: an operator may change
/// prices at any moment (console → 价格设置), and nobody is charged a price they did not see.
pub const CONFIRMED_PRICE_HEADER: &str = "x-confirmed-price";

/// What the user confirmed would pay, when the page said (older clients do not), and the price
/// they saw.
pub struct ConfirmedPayment(pub Option<String>, pub Option<i64>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ConfirmedPayment {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, ApiError> {
        let price = match parts.headers.get(CONFIRMED_PRICE_HEADER) {
            None => None,
            Some(value) => Some(
                value
                    .to_str()
                    .ok()
                    .and_then(|v| v.trim().parse::<i64>().ok())
                    .filter(|fen| *fen >= 0)
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "invalid_confirmed_price",
                            "X-Confirmed-Price 须为确认时显示的价格（分，非负整数）",
                        )
                    })?,
            ),
        };
        let Some(value) = parts.headers.get(CONFIRMED_PAYMENT_HEADER) else {
            return Ok(ConfirmedPayment(None, price));
        };
        match value.to_str().map(str::trim) {
            Ok(v @ ("free_check" | "package" | "balance")) => {
                Ok(ConfirmedPayment(Some(v.to_string()), price))
            }
            Ok("") => Ok(ConfirmedPayment(None, price)),
            _ => Err(ApiError::bad_request(
                "invalid_confirmed_payment",
                "X-Confirmed-Payment 只能是 free_check、package 或 balance",
            )),
        }
    }
}

impl ConfirmedPayment {
    /// Refuses (412 `payment_changed`, nothing charged) when `cost` would pay otherwise than the
    /// user confirmed. Too little to pay at all is left to the charge's own 402.
    pub fn check(&self, cost: &TaskCost) -> Result<(), ApiError> {
        // The balance pays a price the user did not see: the operator changed it meanwhile.
        if let Some(seen) = self.1
            && seen != cost.price_fen
            && matches!(cost.pays_with.as_str(), "balance" | "insufficient")
        {
            return Err(ApiError::new(
                StatusCode::PRECONDITION_FAILED,
                "payment_changed",
                format!(
                    "价格已调整：确认时为 {:.2} 元，现在为 {:.2} 元。未扣费，请重新确认后提交",
                    seen as f64 / 100.0,
                    cost.price_fen as f64 / 100.0
                ),
            ));
        }
        let Some(confirmed) = self.0.as_deref() else {
            return Ok(());
        };
        if confirmed == cost.pays_with || cost.pays_with == "insufficient" {
            return Ok(());
        }
        let said = |pays_with: &str| match pays_with {
            "free_check" => "使用免费查重次数".to_string(),
            "package" => "由套餐抵扣".to_string(),
            _ => format!("从账户余额支付 {:.2} 元", cost.price_fen as f64 / 100.0),
        };
        Err(ApiError::new(
            StatusCode::PRECONDITION_FAILED,
            "payment_changed",
            format!(
                "支付方式已变化：确认时本次将{}，现在将{}。未扣费，请重新确认后提交",
                said(confirmed),
                said(&cost.pays_with)
            ),
        ))
    }
}

/// Charges for a draft task as `cost` says and queues it, in one transaction. Not enough → 402
/// and nothing is charged; already submitted → 409.
pub async fn charge_and_queue(
    state: &AppState,
    task: &Task,
    cost: &TaskCost,
    service: &str,
) -> Result<Task, ApiError> {
    charge_and_queue_with(state, task, cost, service, Queueing::Submit(None)).await
}

/// A draft's first run (with the input chosen at submission, written with the charge), or an
/// ended task's new one (with the input that replaces its own).
pub enum Queueing {
    Submit(Option<String>),
    Rerun(Option<String>),
}

pub async fn charge_and_queue_with(
    state: &AppState,
    task: &Task,
    cost: &TaskCost,
    service: &str,
    queueing: Queueing,
) -> Result<Task, ApiError> {
    let by_package = cost
        .package
        .as_ref()
        .filter(|_| cost.pays_with == "package")
        .and_then(|p| Some((GrantKind::parse(&p.kind)?, p)));
    let charge = match cost.pays_with.as_str() {
        "free_check" => Charge {
            fen: 0,
            free_checks: 1,
            grant: None,
            reason: format!("{service}（免费次数）：{}", task.title),
        },
        "package" if by_package.is_some() => {
            let (kind, p) = by_package.expect("checked");
            Charge {
                fen: 0,
                free_checks: 0,
                grant: Some(GrantCharge {
                    kind,
                    units: p.units,
                }),
                reason: format!(
                    "{service}（套餐抵扣 {} {}）：{}",
                    p.units, p.unit, task.title
                ),
            }
        }
        _ => Charge {
            fen: cost.price_fen,
            free_checks: 0,
            grant: None,
            reason: format!("{service} {} 字：{}", cost.chars, task.title),
        },
    };
    let queued = match queueing {
        Queueing::Submit(None) => {
            state
                .store
                .submit_task(task.id, task.user_id, &task.kind, &charge, 3)
                .await
        }
        Queueing::Submit(Some(input)) => {
            state
                .store
                .submit_task_with_input(task.id, task.user_id, &task.kind, &charge, 3, &input)
                .await
        }
        Queueing::Rerun(input) => {
            state
                .store
                .rerun_task(
                    task.id,
                    task.user_id,
                    &task.kind,
                    &charge,
                    3,
                    input.as_deref(),
                )
                .await
        }
    };
    match queued {
        Err(store::StoreError::InsufficientFunds) if by_package.is_some() => Err(ApiError::new(
            StatusCode::PAYMENT_REQUIRED,
            "package_exhausted",
            "套餐余量已不足以支付本次任务（可能刚被另一任务用掉），请刷新后重新确认",
        )),
        Err(store::StoreError::InsufficientFunds) => Err(ApiError::new(
            StatusCode::PAYMENT_REQUIRED,
            "insufficient_balance",
            format!(
                "余额不足：本次需 {:.2} 元，当前余额 {:.2} 元",
                cost.price_fen as f64 / 100.0,
                cost.balance_fen as f64 / 100.0
            ),
        )),
        Err(store::StoreError::Conflict(_)) => {
            Err(ApiError::conflict("already_submitted", "该任务已提交"))
        }
        other => Ok(other?),
    }
}

/// The longest kept upload name, in characters (file systems take 255 bytes; CJK is 3 each).
const KEPT_NAME_CHARS: usize = 80;

/// The folder of a task's files in the file store: `<family>/<id>`.
fn task_folder(family: &str, id: i64) -> String {
    format!("{family}/{id}")
}

/// Keeps the original upload beside the task, for the report, for the rewritten paper's Word
/// file and for deletion. A failure is logged, not the user's: the task runs on the text
/// already read, and only the Word file in the upload's own form is lost.
pub async fn keep_upload(state: &AppState, family: &str, task_id: i64, upload: &Upload) {
    let Some(key) = kept_upload(family, task_id, &upload.file_name) else {
        return;
    };
    if let Err(e) = state.files.put(&key, &upload.bytes).await {
        tracing::warn!(task = task_id, error = %e, "original upload not kept");
    }
}

/// The key under which `keep_upload` keeps a task's upload named `file_name` (none for pasted
/// text): in the task's folder, under the name without path separators, a long name cut to
/// `KEPT_NAME_CHARS` with its extension kept (the full name stays in the task's input).
pub fn kept_upload(family: &str, task_id: i64, file_name: &str) -> Option<String> {
    let safe: Vec<char> = file_name
        .chars()
        .filter(|c| !matches!(c, '/' | '\\' | '\0'))
        .collect();
    let safe: String = if safe.len() > KEPT_NAME_CHARS {
        let dot = safe
            .iter()
            .rposition(|&c| c == '.')
            .filter(|&at| safe.len() - at <= 10)
            .unwrap_or(safe.len());
        let extension = &safe[dot..];
        safe[..KEPT_NAME_CHARS - extension.len()]
            .iter()
            .chain(extension)
            .collect()
    } else {
        safe.into_iter().collect()
    };
    let safe = match safe.as_str() {
        "" => return None,
        "." | ".." => format!("_{safe}"),
        _ => safe,
    };
    Some(format!("{}/{safe}", task_folder(family, task_id)))
}

/// Deletes a user's task (cancelled and refunded first when unfinished) and its files.
pub async fn delete_task(
    state: &AppState,
    family: &str,
    id: i64,
    user_id: i64,
) -> Result<(), ApiError> {
    state.store.delete_task(id, user_id).await?;
    if let Err(e) = state.files.remove_under(&task_folder(family, id)).await {
        tracing::warn!(task = id, error = %e, "files of a deleted task not removed");
    }
    Ok(())
}

/// A report file as a download; `name` is the Chinese file name, `ascii_name` its fallback.
pub fn attachment(content_type: &str, body: Vec<u8>, ascii_name: &str, name: &str) -> Response {
    let disposition = format!(
        "attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{}",
        percent_encode(name)
    );
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}

/// RFC 5987 encoding for a Chinese download name.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The report font, loaded once (off the async threads: it is tens of megabytes).
pub async fn pdf_font(state: &AppState) -> Result<report::PdfFont, ApiError> {
    let configured = state.config.report_font.clone();
    let loaded = state
        .pdf_font
        .get_or_init(|| async move {
            tokio::task::spawn_blocking(move || {
                report::PdfFont::discover(configured.as_deref())
                    .map_err(|e| (e.code(), e.to_string()))
            })
            .await
            .unwrap_or_else(|e| Err(("pdf_font_unusable", e.to_string())))
        })
        .await;
    loaded.clone().map_err(|(code, message)| {
        tracing::error!("{message}");
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, message)
    })
}

/// A report download's format: `pdf` (default) or `html`.
pub fn report_format(format: Option<&str>) -> Result<&'static str, ApiError> {
    match format.unwrap_or("pdf") {
        "pdf" => Ok("pdf"),
        "html" => Ok("html"),
        _ => Err(ApiError::bad_request(
            "invalid_format",
            "报告格式只能是 pdf 或 html",
        )),
    }
}

/// The payment state of a paid task (a detection, a rewrite): what it costs, what will pay, and
/// whether it is paid.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderState {
    pub id: i64,
    pub status: String,
    /// Charged and queued (or already run).
    pub paid: bool,
    /// What was charged, in fen (0 until paid; refunds reset nothing here, see the ledger).
    pub charged_fen: i64,
    /// What a package paid instead: uses, or characters for rewriting.
    pub charged_units: i64,
    /// The price of running it (again) now.
    pub cost: TaskCost,
    /// The latest order opened to pay this task by scanning (its shortfall), with its state:
    /// `pending` while the QR code can be paid, `paid` once the money is in the balance.
    pub scan_order: Option<crate::api::order::order_info_api::OrderView>,
}

impl OrderState {
    /// The task's payment state, with the scan-to-pay order it has.
    pub async fn of(state: &AppState, task: &Task, cost: TaskCost) -> Result<Self, ApiError> {
        let scan_order = state
            .store
            .latest_task_order(task.id, task.user_id)
            .await?
            .map(|o| crate::api::order::order_info_api::view(state, o));
        Ok(OrderState {
            id: task.id,
            status: task.status.as_str().into(),
            paid: task.status != TaskStatus::Pending
                && (task.charged_fen > 0 || task.charged_units > 0 || task.charged_free > 0),
            charged_fen: task.charged_fen,
            charged_units: task.charged_units,
            cost,
            scan_order,
        })
    }
}

/// The headings an upload marks, `(line, level)`, as the engines take them.
pub fn outline(extracted: &docio::Extracted) -> Vec<(usize, u8)> {
    extracted
        .headings
        .iter()
        .map(|h| (h.line, h.level))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_upload_keys_stay_short_and_inside_the_task_folder() {
        assert_eq!(kept_upload("check", 7, ""), None);
        assert_eq!(
            kept_upload("check", 7, "../论文.docx").as_deref(),
            Some("check/7/..论文.docx")
        );
        assert_eq!(
            kept_upload("check", 7, "..").as_deref(),
            Some("check/7/_..")
        );
        let long = format!("{}.docx", "长".repeat(300));
        let key = kept_upload("check", 7, &long).unwrap();
        assert!(key.ends_with(".docx"), "{key}");
        assert_eq!(
            key.trim_start_matches("check/7/").chars().count(),
            KEPT_NAME_CHARS
        );
        assert!(key.len() < 255);
    }

    #[test]
    fn the_title_typed_wins_then_the_documents_own_then_the_file_name() {
        let upload = |title: &str| Upload {
            title: title.into(),
            author: String::new(),
            file_name: "新建 Microsoft Word 文档.docx".into(),
            bytes: vec![],
        };
        let doc = |title: Option<&str>| docio::Extracted {
            text: "第一章 绪论\n正文。".into(),
            format: docio::Format::Docx,
            reader: "docx".into(),
            headings: vec![],
            title: title.map(String::from),
            tables: vec![],
            images: vec![],
        };
        let marked = doc(Some("县域供销社研究"));
        assert_eq!(default_title(&upload("我的论文"), &marked), "我的论文");
        assert_eq!(default_title(&upload(""), &marked), "县域供销社研究");
        assert_eq!(
            default_title(&upload(""), &doc(None)),
            "新建 Microsoft Word 文档"
        );
    }
}

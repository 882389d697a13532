//! `check_api`: the similarity-check journey — upload or paste (check_init), count and price,
//! submit (charged and queued in one transaction), follow progress, read and download the report.

use crate::api::check::task::{self as check_task, CheckInput};
use crate::api::paper_task::{
    self, Caller, IdForm, ListForm, PastedText, RecordPage, Tariff, TaskCost, WordCount,
    default_title, extract, read_upload,
};
use crate::auth::AuthUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use store::{Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

/// The character-counting rule, shown before payment.
pub const COUNTING_RULE: &str = "字数按除空白（空格、换行）以外的全部字符计算，含汉字、字母、数字与标点；目录与参考文献不计入检测字数。";

/// Counts the characters of an upload or pasted text without storing anything (visitors too).
#[utoipa::path(post, path = "/api/base/check_api/word_count", tag = "check_api",
    request_body(content = PastedText, description = "JSON with `text`, or multipart/form-data with a `file` part"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<WordCount>)),
        (status = 413, description = "file_too_large / too_many_characters", body = crate::envelope::ErrorBody),
        (status = 422, description = "unsupported_file_type / empty_document / garbled_text_layer / corrupt_file", body = crate::envelope::ErrorBody),
    ))]
pub async fn word_count(
    State(state): State<AppState>,
    caller: Caller,
    req: Request,
) -> ApiResult<WordCount> {
    let upload = read_upload(&state, req).await?;
    let extracted = extract(&state, &upload, &caller).await?;
    Ok(Success(WordCount {
        chars: simcheck::checked_chars(
            &extracted.text,
            &simcheck::CheckOptions {
                headings: paper_task::outline(&extracted),
                ..simcheck::CheckOptions::default()
            },
        ),
        rule: COUNTING_RULE.into(),
        format: extracted.format.name().into(),
    }))
}

/// A check task as the records list and detail pages show it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckRecord {
    pub id: i64,
    pub title: String,
    pub author: String,
    pub file_name: String,
    /// Counted characters (the number priced and reported).
    pub chars: usize,
    /// pending, queued, running, done, failed or cancelled.
    pub status: String,
    pub progress: i64,
    pub phase: String,
    /// 总文字复制比 in percent, once done.
    pub ratio_total: Option<f64>,
    pub ratio_excluding_quotes: Option<f64>,
    pub ratio_excluding_own: Option<f64>,
    pub ratio_max_single_source: Option<f64>,
    pub copied_chars: Option<usize>,
    /// Why it failed.
    pub error: Option<String>,
    pub charged_fen: i64,
    pub charged_free_checks: i64,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoredInput {
    #[serde(flatten)]
    check: Option<CheckInput>,
    #[serde(default)]
    author: String,
    #[serde(default)]
    file_name: String,
    #[serde(default)]
    chars: usize,
}

/// A check task as its records show it.
pub fn record_of(task: &Task) -> CheckRecord {
    record(task)
}

fn record(task: &Task) -> CheckRecord {
    let input: StoredInput = serde_json::from_str(&task.input).unwrap_or_default();
    let report: Option<serde_json::Value> = task
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    let figure = |k: &str| report.as_ref().and_then(|r| r[k].as_f64());
    CheckRecord {
        id: task.id,
        title: task.title.clone(),
        author: input.author,
        file_name: input.file_name,
        chars: report
            .as_ref()
            .and_then(|r| r["total_chars"].as_u64())
            .map(|v| v as usize)
            .unwrap_or(input.chars),
        status: task.status.as_str().into(),
        progress: task.progress,
        phase: task.phase.clone(),
        ratio_total: figure("ratio_total"),
        ratio_excluding_quotes: figure("ratio_excluding_quotes"),
        ratio_excluding_own: figure("ratio_excluding_own"),
        ratio_max_single_source: figure("ratio_max_single_source"),
        copied_chars: report
            .as_ref()
            .and_then(|r| r["copied_chars"].as_u64())
            .map(|v| v as usize),
        error: task.error.clone(),
        charged_fen: task.charged_fen,
        charged_free_checks: task.charged_free,
        created_at: task.created_at,
        finished_at: task.finished_at,
    }
}

/// A draft check of `text` (nothing charged yet); also how a rewritten paper is sent to a new
/// check.
pub async fn create_draft(
    state: &AppState,
    user_id: i64,
    title: &str,
    text: String,
    headings: Vec<(usize, u8)>,
    author: String,
    file_name: String,
) -> Result<Task, ApiError> {
    let check = CheckInput {
        text,
        min_span: 13,
        exclude_bibliography: true,
        owner: Some(user_id),
        add_to_private_library: false,
        title: title.to_string(),
        headings,
    };
    let chars = simcheck::checked_chars(&check.text, &check.options());
    let input = StoredInput {
        check: Some(check),
        author,
        file_name,
        chars,
    };
    Ok(state
        .store
        .create_task(
            user_id,
            check_task::KIND,
            title,
            &serde_json::to_string(&input).map_err(ApiError::internal)?,
        )
        .await?)
}

/// A finished check's text and report, for rewriting the paragraphs it flagged.
pub async fn finished_check(
    state: &AppState,
    id: i64,
    user_id: i64,
) -> Result<(Task, CheckInput, simcheck::Report), ApiError> {
    let (task, input) = pending_check(state, id, user_id).await?;
    let report: Option<simcheck::Report> = task
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    match (task.status, report, input.check) {
        (TaskStatus::Done, Some(report), Some(check)) => Ok((task, check, report)),
        _ => Err(ApiError::conflict(
            "check_not_finished",
            "该查重尚未完成，完成后才能按报告降重",
        )),
    }
}

/// Creates a draft check from an upload (.docx, .pdf, .txt) or pasted text; nothing is charged yet.
#[utoipa::path(post, path = "/api/base/check_api/check_init", tag = "check_api", security(("bearer" = [])),
    request_body(content = PastedText, description = "JSON with `title`, `author`, `text`, or multipart/form-data with `file`, `title`, `author`"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<CheckRecord>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 413, description = "file_too_large / too_many_characters", body = crate::envelope::ErrorBody),
        (status = 422, description = "unsupported_file_type / empty_document / garbled_text_layer / corrupt_file", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_init(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    req: Request,
) -> ApiResult<CheckRecord> {
    let upload = read_upload(&state, req).await?;
    let extracted = extract(&state, &upload, &Caller::user(session.user.id)).await?;
    let title = default_title(&upload, &extracted);
    let headings = paper_task::outline(&extracted);
    let task = create_draft(
        &state,
        session.user.id,
        &title,
        extracted.text,
        headings,
        upload.author.trim().chars().take(100).collect(),
        upload.file_name.clone(),
    )
    .await?;
    paper_task::keep_upload(&state, FILES, task.id, &upload).await;
    Ok(Success(record(&task)))
}

/// Where a check's files live, under the files folder.
pub const FILES: &str = "check";

/// How checks are priced: per started 1,000 characters; free checks pay first.
fn tariff() -> Tariff {
    Tariff {
        service: crate::prices::PerThousand::Check,
        free_checks_apply: true,
        package: Some(paper_task::PackageUnits::PerTask(store::GrantKind::Check)),
        rule: COUNTING_RULE,
    }
}

async fn pending_check(
    state: &AppState,
    id: i64,
    user_id: i64,
) -> Result<(Task, StoredInput), ApiError> {
    let task = paper_task::owned_task(state, id, user_id, check_task::KIND, not_found).await?;
    let input: StoredInput = serde_json::from_str(&task.input).map_err(ApiError::internal)?;
    Ok((task, input))
}

fn not_found() -> ApiError {
    ApiError::not_found("check_not_found", "查重记录不存在或已删除")
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CostForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// Priced as `check_submit` will count it: without the reference list (default true).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub exclude_bibliography: Option<bool>,
}

/// What the check costs and what will pay for it (a free check first, then the balance),
/// counted as the submission with the same `exclude_bibliography` will count it.
#[utoipa::path(post, path = "/api/base/check_api/check_cost", tag = "check_api", security(("bearer" = [])),
    params(CostForm), request_body = CostForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<TaskCost>)),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_cost(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<CostForm>,
) -> ApiResult<TaskCost> {
    let (task, input) = pending_check(&state, form.id, session.user.id).await?;
    let chars = submitted_chars(&input, form.exclude_bibliography);
    Ok(Success(
        paper_task::quote(&state, session.user.id, task.id, chars, &tariff()).await?,
    ))
}

/// The characters a submission with this `exclude_bibliography` checks and pays for.
fn submitted_chars(input: &StoredInput, exclude_bibliography: Option<bool>) -> usize {
    match &input.check {
        Some(check) => {
            let mut check = check.clone();
            check.exclude_bibliography = exclude_bibliography.unwrap_or(true);
            simcheck::checked_chars(&check.text, &check.options())
        }
        None => input.chars,
    }
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubmitForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// Leave the reference list out (default true).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub exclude_bibliography: Option<bool>,
    /// No longer used: the official report always counts matches of 13 characters or more (the
    /// rule printed on it), so a student cannot shape the report a teacher verifies. Longer
    /// minimums are report options of the on-screen view (`report_paragraphs.min_chars`),
    /// labelled 自定义视图. Accepted and ignored for older clients.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub min_span: Option<i64>,
    /// Keep this paper in the user's private library to compare later drafts (default false;
    /// nothing ever enters the public library this way).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub add_to_private_library: Option<bool>,
}

/// Charges (a free check, else the balance) and queues the check, in one transaction. Not enough → 402, nothing charged.
#[utoipa::path(post, path = "/api/base/check_api/check_submit", tag = "check_api", security(("bearer" = [])),
    params(SubmitForm, ("X-Confirmed-Payment" = Option<String>, Header, description = "What the confirmed price dialog said would pay: free_check, package or balance; the charge is refused (412) when that changed"), ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the dialog showed; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")), request_body = SubmitForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<CheckRecord>)),
        (status = 402, description = "insufficient_balance", body = crate::envelope::ErrorBody),
        (status = 412, description = "payment_changed: X-Confirmed-Payment no longer says what would pay; nothing charged", body = crate::envelope::ErrorBody),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "already_submitted", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<SubmitForm>,
) -> ApiResult<CheckRecord> {
    let user = session.user.id;
    let (task, mut input) = pending_check(&state, form.id, user).await?;
    if task.status != TaskStatus::Pending {
        return Err(ApiError::conflict("already_submitted", "该论文已提交检测"));
    }
    if let Some(check) = input.check.as_mut() {
        check.exclude_bibliography = form.exclude_bibliography.unwrap_or(true);
        check.min_span = simcheck::CheckOptions::default().min_span;
        check.add_to_private_library = form.add_to_private_library.unwrap_or(false);
        check.title = task.title.clone();
    }
    input.chars = submitted_chars(&input, form.exclude_bibliography);
    let input_json = serde_json::to_string(&input).map_err(ApiError::internal)?;
    let cost = paper_task::quote(&state, user, task.id, input.chars, &tariff()).await?;
    confirmed.check(&cost)?;
    let queueing = paper_task::Queueing::Submit(Some(input_json));
    let task =
        paper_task::charge_and_queue_with(&state, &task, &cost, "论文查重", queueing).await?;
    Ok(Success(record(&task)))
}

/// The user's checks, newest first.
#[utoipa::path(post, path = "/api/base/check_api/query_list", tag = "check_api", security(("bearer" = [])),
    params(ListForm), request_body = ListForm,
    responses((status = 200, body = inline(crate::envelope::Envelope<RecordPage<CheckRecord>>))))]
pub async fn query_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ListForm>,
) -> ApiResult<RecordPage<CheckRecord>> {
    Ok(Success(
        paper_task::list_records(&state, session.user.id, check_task::KIND, &form, record).await?,
    ))
}

/// One check: status, progress and, when done, the headline figures.
#[utoipa::path(post, path = "/api/base/check_api/load_by_id", tag = "check_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<CheckRecord>)),
        (status = 404, description = "check_not_found (also for another user's check)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<CheckRecord> {
    let (task, _) = pending_check(&state, form.id, session.user.id).await?;
    Ok(Success(record(&task)))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// Leave quoted and cited passages out of the figures (default false).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub exclude_quoted: Option<bool>,
    /// Leave matches with the author's own published work out (default false).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub exclude_own: Option<bool>,
    /// Leave out matches shorter than this many characters (default 0: keep all).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub min_chars: Option<i64>,
    /// Count common phrases (常用表述: wording many library documents share) in the ratios
    /// (default false: they are listed but not counted).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub count_common: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportDetail {
    pub record: CheckRecord,
    /// The checked text; span offsets are characters of it.
    pub text: String,
    /// The report under the chosen options: figures, sources, spans (start, end, source_id,
    /// source_start, source_end, source_text, class, chars), chapters, paragraphs.
    #[schema(value_type = Object)]
    pub report: serde_json::Value,
    /// `WJ20261122-000042`, printed on the report.
    pub report_number: String,
    /// The code that confirms this report on `/verify` (groups of four).
    pub verify_code: String,
    /// The paper was kept in the user's private library, as they chose at submission.
    pub private_library: bool,
    /// Whether any option changed the figures from the stored report: the page then shows a
    /// 自定义视图, not the official report.
    pub refigured: bool,
    /// The settings the official report was made under, one line each (printed on it too).
    pub settings: Vec<String>,
    /// The title as it was when the check finished (printed on the official report and shown
    /// by `/verify`); `record.title` is the record's name now.
    pub official_title: String,
}

/// The official report of a finished check: its snapshot, issued from now on.
async fn official_report(
    state: &AppState,
    task: &Task,
    input: &StoredInput,
) -> Result<(store::ReportSnapshot, crate::official::Summary), ApiError> {
    let (report, _) = stored_report(task)?;
    Ok(crate::official::issued(&state.store, task, || {
        crate::official::check_summary(task, input.check.as_ref(), &report)
    })
    .await?)
}

/// The report options in words, for a custom view (`None`: the official report).
fn custom_view(filter: &simcheck::ReportFilter) -> Option<String> {
    let mut parts = vec![];
    if filter.exclude_quoted {
        parts.push("排除引用".to_string());
    }
    if filter.exclude_own {
        parts.push("排除本人已发表文献".to_string());
    }
    if filter.min_chars > 0 {
        parts.push(format!("忽略少于 {} 字的匹配", filter.min_chars));
    }
    if filter.count_common {
        parts.push("常用表述计入复制比".to_string());
    }
    (!parts.is_empty()).then(|| parts.join("；"))
}

impl ReportForm {
    fn filter(&self) -> simcheck::ReportFilter {
        simcheck::ReportFilter {
            exclude_quoted: self.exclude_quoted.unwrap_or(false),
            exclude_own: self.exclude_own.unwrap_or(false),
            min_chars: self.min_chars.unwrap_or(0).clamp(0, 10_000) as usize,
            count_common: self.count_common.unwrap_or(false),
        }
    }
}

/// A finished check's stored report and whether the paper joined the private library.
fn stored_report(task: &Task) -> Result<(simcheck::Report, bool), ApiError> {
    let raw = match (&task.status, &task.result) {
        (TaskStatus::Done, Some(r)) => r,
        _ => {
            return Err(ApiError::conflict(
                "report_not_ready",
                "检测尚未完成，报告暂不可用",
            ));
        }
    };
    let value: serde_json::Value = serde_json::from_str(raw).map_err(ApiError::internal)?;
    let private = !value[check_task::PRIVATE_LIBRARY_DOC].is_null();
    let report = serde_json::from_value(value).map_err(ApiError::internal)?;
    Ok((report, private))
}

fn check_options(input: &StoredInput) -> simcheck::CheckOptions {
    input
        .check
        .as_ref()
        .map_or_else(simcheck::CheckOptions::default, CheckInput::options)
}

/// The report of a finished check with its text, for the highlighted full-text view; the
/// options (CNKI's report options) recompute the figures from the stored spans.
#[utoipa::path(get, path = "/api/base/check_api/report_paragraphs", tag = "check_api", security(("bearer" = [])),
    params(ReportForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ReportDetail>)),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "report_not_ready", body = crate::envelope::ErrorBody),
    ))]
pub async fn report_paragraphs(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ReportForm>,
) -> ApiResult<ReportDetail> {
    let (task, input) = pending_check(&state, form.id, session.user.id).await?;
    let (mut report, private_library) = stored_report(&task)?;
    let text = input
        .check
        .as_ref()
        .map(|c| c.text.clone())
        .unwrap_or_default();
    let filter = form.filter();
    let refigured = filter != simcheck::ReportFilter::default();
    if refigured {
        report = simcheck::refigure(&text, &report, &check_options(&input), &filter);
    }
    let (snapshot, summary) = official_report(&state, &task, &input).await?;
    Ok(Success(ReportDetail {
        record: record(&task),
        text,
        report: serde_json::to_value(&report).map_err(ApiError::internal)?,
        report_number: snapshot.report_number,
        verify_code: store::format_report_code(&snapshot.code),
        private_library,
        refigured,
        settings: summary.settings,
        official_title: snapshot.title,
    }))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DownloadForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// `pdf` (default) or `html`.
    #[serde(default)]
    pub format: Option<String>,
    /// Report options as in `report_paragraphs`: any of them makes the download a 自定义视图,
    /// labelled so, without a verification code.
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub exclude_quoted: Option<bool>,
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub exclude_own: Option<bool>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub min_chars: Option<i64>,
    /// Count common phrases (常用表述) in the ratios (default false).
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub count_common: Option<bool>,
}

/// The report as PDF (embedded CJK font, cover with report number and verification code) or as
/// a self-contained HTML page: the official report as snapshotted when the check finished (its
/// title and settings then), or with report options a 自定义视图 that says so and carries no
/// verification code.
#[utoipa::path(get, path = "/api/base/check_api/download_report", tag = "check_api", security(("bearer" = [])),
    params(DownloadForm),
    responses(
        (status = 200, description = "application/pdf or text/html report", content_type = "application/pdf"),
        (status = 400, description = "invalid_format", body = crate::envelope::ErrorBody),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "report_not_ready", body = crate::envelope::ErrorBody),
        (status = 503, description = "pdf_font_missing / pdf_font_unusable: the server has no CJK font", body = crate::envelope::ErrorBody),
    ))]
pub async fn download_report(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<DownloadForm>,
) -> Result<Response, ApiError> {
    let format = paper_task::report_format(form.format.as_deref())?;
    let (task, input) = pending_check(&state, form.id, session.user.id).await?;
    let (mut report, private_library) = stored_report(&task)?;
    let (snapshot, summary) = official_report(&state, &task, &input).await?;
    let text = input
        .check
        .as_ref()
        .map(|c| c.text.clone())
        .unwrap_or_default();
    let filter = ReportForm {
        id: form.id,
        exclude_quoted: form.exclude_quoted,
        exclude_own: form.exclude_own,
        min_chars: form.min_chars,
        count_common: form.count_common,
    }
    .filter();
    let verification = match custom_view(&filter) {
        Some(options) => {
            report = simcheck::refigure(&text, &report, &check_options(&input), &filter);
            report::Verification::CustomView { options }
        }
        None => {
            let code = store::format_report_code(&snapshot.code);
            report::Verification::Official {
                url: crate::auth::report_verify_url(&state, &code),
                code,
            }
        }
    };
    let custom = matches!(verification, report::Verification::CustomView { .. });
    let number = snapshot.report_number.clone();
    let doc = report::ReportDoc {
        number: number.clone(),
        verification,
        settings: summary.settings,
        title: snapshot.title.clone(),
        author: summary.author,
        checked_at_ms: snapshot.checked_at,
        clock: state.clock.clone(),
        text: &text,
        report: &report,
        private_library,
    };
    let (content_type, body) = if format == "html" {
        (
            "text/html; charset=utf-8",
            report::render_html(&doc).into_bytes(),
        )
    } else {
        let font = paper_task::pdf_font(&state).await?;
        let pdf = report::render_pdf(&doc, &font).map_err(|e| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.code(), e.to_string())
        })?;
        ("application/pdf", pdf)
    };
    let view = if custom { "-自定义视图" } else { "" };
    Ok(paper_task::attachment(
        content_type,
        body,
        &format!(
            "report-{number}{}.{format}",
            if custom { "-custom" } else { "" }
        ),
        &format!("文鉴查重报告-{number}{view}.{format}"),
    ))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VerifyForm {
    /// The verification code printed on the report (case, spaces and dashes do not matter).
    #[serde(default)]
    pub code: String,
}

/// What `/verify` shows: that the report is genuine, and its headline figures as printed on
/// it — never its text. A similarity check has the 复制比 figures, a detection `aiRate`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedReport {
    /// `check` (文字复制比检测) or `aigc` (AIGC检测).
    pub kind: String,
    pub report_number: String,
    /// The title as it was when the check finished.
    pub title: String,
    pub author: String,
    pub checked_at: i64,
    pub chars: usize,
    pub ratio_total: Option<f64>,
    pub ratio_excluding_quotes: Option<f64>,
    pub ratio_excluding_own: Option<f64>,
    pub ratio_max_single_source: Option<f64>,
    pub copied_chars: Option<usize>,
    pub source_count: Option<usize>,
    /// Percent of the judged characters in 高度疑似 paragraphs; `None` when too short to judge.
    pub ai_rate: Option<f64>,
    /// The settings the figures were made under, one line each.
    pub settings: Vec<String>,
    /// When the owner deleted the record; the report stays genuine.
    pub deleted_at: Option<i64>,
}

/// Confirms a report by its verification code (public; no login): the snapshot taken when the
/// check finished, whatever the record was renamed to since, and also after the owner deleted
/// it. Unknown codes are 404, and repeated misses from one address are slowed down (429).
#[utoipa::path(get, path = "/api/base/check_api/verify_report", tag = "check_api",
    params(VerifyForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<VerifiedReport>)),
        (status = 404, description = "report_not_found", body = crate::envelope::ErrorBody),
        (status = 429, description = "too_many_requests", body = crate::envelope::ErrorBody),
    ))]
pub async fn verify_report(
    State(state): State<AppState>,
    client: crate::auth::ClientInfo,
    Params(form): Params<VerifyForm>,
) -> ApiResult<VerifiedReport> {
    const KEY: &str = "#verify_report";
    if let Err(secs) = state.verify_limiter.check(&client.ip, KEY) {
        return Err(ApiError::too_many_requests(
            secs,
            format!("核验次数过多，请 {} 分钟后再试", secs.div_ceil(60)),
        ));
    }
    let found = match state.store.report_snapshot_by_code(&form.code).await? {
        Some(s) if s.summary.is_empty() => backfilled(&state, s).await?,
        other => other,
    };
    let Some(snapshot) = found else {
        state.verify_limiter.record_failure(&client.ip, KEY);
        return Err(ApiError::not_found(
            "report_not_found",
            "未找到该验证码对应的报告，请核对后重试",
        ));
    };
    let summary = crate::official::summary_of(&snapshot);
    let check = summary.check.as_ref();
    Ok(Success(VerifiedReport {
        kind: snapshot.kind,
        report_number: snapshot.report_number,
        title: snapshot.title,
        author: summary.author.clone(),
        checked_at: snapshot.checked_at,
        chars: summary.chars,
        ratio_total: check.map(|c| c.ratio_total),
        ratio_excluding_quotes: check.map(|c| c.ratio_excluding_quotes),
        ratio_excluding_own: check.map(|c| c.ratio_excluding_own),
        ratio_max_single_source: check.map(|c| c.ratio_max_single_source),
        copied_chars: check.map(|c| c.copied_chars),
        source_count: check.map(|c| c.source_count),
        ai_rate: summary.aigc.as_ref().and_then(|a| a.ai_rate),
        settings: summary.settings,
        deleted_at: snapshot.deleted_at,
    }))
}

/// A code issued before reports were snapshotted gets its snapshot from the record, while the
/// record still exists.
async fn backfilled(
    state: &AppState,
    snapshot: store::ReportSnapshot,
) -> Result<Option<store::ReportSnapshot>, ApiError> {
    let Ok(task) = state.store.task_by_id(snapshot.task_id).await else {
        return Ok(None);
    };
    let Ok((report, _)) = stored_report(&task) else {
        return Ok(None);
    };
    let input: StoredInput = serde_json::from_str(&task.input).unwrap_or_default();
    let summary = crate::official::check_summary(&task, input.check.as_ref(), &report);
    Ok(Some(
        crate::official::take(&state.store, &task, &summary).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TitleForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    pub title: String,
}

/// Renames a check (query and body).
#[utoipa::path(post, path = "/api/base/check_api/update_title", tag = "check_api", security(("bearer" = [])),
    params(TitleForm), request_body = TitleForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 400, description = "invalid_title", body = crate::envelope::ErrorBody),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn update_title(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<TitleForm>,
) -> ApiResult<bool> {
    let title = paper_task::plain_line(&form.title);
    let title = title.as_str();
    if title.is_empty() || title.chars().count() > 200 {
        return Err(ApiError::bad_request(
            "invalid_title",
            "标题不能为空，且不超过 200 个字",
        ));
    }
    pending_check(&state, form.id, session.user.id).await?;
    state
        .store
        .update_task_title(form.id, session.user.id, title)
        .await?;
    Ok(Success(true))
}

/// Deletes a check and its files; an unfinished one is cancelled and refunded first, and a paper
/// it kept in the user's private library is removed from it (by a queued job, within seconds).
#[utoipa::path(post, path = "/api/base/check_api/delete", tag = "check_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<bool> {
    let user = session.user.id;
    let (task, _) = pending_check(&state, form.id, user).await?;
    paper_task::delete_task(&state, FILES, form.id, user).await?;
    // A paper kept in the private library goes with its check.
    let kept = task
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
        .and_then(|r| r[check_task::PRIVATE_LIBRARY_DOC].as_u64());
    if let Some(doc) = kept {
        let input = check_task::ForgetInput { doc, owner: user };
        let input = serde_json::to_string(&input).map_err(ApiError::internal)?;
        let forget = state
            .store
            .create_task(user, check_task::FORGET_KIND, "移出私有比对库", &input)
            .await?;
        state
            .store
            .submit_task(
                forget.id,
                user,
                check_task::FORGET_KIND,
                &store::Charge::default(),
                5,
            )
            .await?;
    }
    Ok(Success(true))
}

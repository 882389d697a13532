//! `paper_aigc_api`: AI-text detection (AIGC检测) — upload or paste (machine_init), count and
//! price, pay and queue (submit_check), follow progress, read the paragraph results and download
//! the report. Shares the task, charging and download machinery of the check journey.

use crate::api::aigc::task::{self as aigc_task, AigcInput};
use crate::api::paper_task::{
    self, Caller, IdForm, ListForm, PastedText, Queueing, RecordPage, Tariff, WordCount,
    default_title, extract, read_upload,
};
use crate::auth::AuthUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::{Params, lenient};
use crate::state::AppState;
use aidetect::Detection;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use store::{Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

/// How detection counts characters, shown before payment.
pub const COUNTING_RULE: &str =
    "字数按除空白（空格、换行）以外的全部字符计算，含汉字、字母、数字与标点。";

/// Where a detection's files live, under the files folder.
pub const FILES: &str = "aigc";

fn tariff() -> Tariff {
    Tariff {
        service: crate::prices::PerThousand::Aigc,
        // The free checks given at first QR login are similarity checks only.
        free_checks_apply: false,
        package: Some(paper_task::PackageUnits::PerTask(store::GrantKind::Aigc)),
        rule: COUNTING_RULE,
    }
}

fn not_found() -> ApiError {
    ApiError::not_found("aigc_not_found", "AIGC 检测记录不存在或已删除")
}

/// 503 when the detection model is not installed: nothing is stored or charged.
fn require_model(state: &AppState) -> Result<(), ApiError> {
    match aigc_task::model_missing(&state.config.models_dir()) {
        Some(why) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "aigc_model_missing",
            why,
        )),
        None => Ok(()),
    }
}

/// A detection task as the records list and report pages show it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AigcRecord {
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
    /// AIGC 占比 in percent (characters of high-band paragraphs), once done; absent when the
    /// text was too short for a figure.
    pub ai_rate: Option<f64>,
    /// Probability (0–1) that the whole text is machine-written.
    pub probability: Option<f64>,
    /// Why there is no figure (e.g. 文本过短，结果不可靠).
    pub notice: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    pub charged_fen: i64,
    /// What a package paid instead: uses, or characters for rewriting.
    pub charged_units: i64,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

fn input_of(task: &Task) -> AigcInput {
    serde_json::from_str(&task.input).unwrap_or_default()
}

fn detection_of(task: &Task) -> Option<Detection> {
    task.result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
}

fn record(task: &Task) -> AigcRecord {
    let input = input_of(task);
    let detection = detection_of(task);
    AigcRecord {
        id: task.id,
        title: task.title.clone(),
        author: input.author,
        file_name: input.file_name,
        chars: detection.as_ref().map(|d| d.chars).unwrap_or(input.chars),
        status: task.status.as_str().into(),
        progress: task.progress,
        phase: task.phase.clone(),
        ai_rate: detection.as_ref().and_then(|d| d.ai_rate),
        probability: detection.as_ref().and_then(|d| d.probability),
        notice: detection.and_then(|d| d.notice),
        error: task.error.clone(),
        charged_fen: task.charged_fen,
        charged_units: task.charged_units,
        created_at: task.created_at,
        finished_at: task.finished_at,
    }
}

async fn owned(state: &AppState, id: i64, user_id: i64) -> Result<Task, ApiError> {
    paper_task::owned_task(state, id, user_id, aigc_task::KIND, not_found).await
}

/// A finished detection's text and result, for lowering the AI traces it found.
pub async fn detection_to_rewrite(
    state: &AppState,
    id: i64,
    user_id: i64,
) -> Result<(Task, String, Detection), ApiError> {
    let task = owned(state, id, user_id).await?;
    match (task.status, detection_of(&task)) {
        (TaskStatus::Done, Some(d)) => {
            let text = input_of(&task).text;
            Ok((task, text, d))
        }
        _ => Err(ApiError::conflict(
            "aigc_not_finished",
            "该 AIGC 检测尚未完成，完成后才能按报告降 AIGC",
        )),
    }
}

/// Counts the characters of an upload or pasted text as detection prices them (visitors too).
#[utoipa::path(post, path = "/api/base/paper_aigc_api/word_count", tag = "paper_aigc_api",
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
        chars: crate::api::aigc::task::paper_chars(
            &extracted.text,
            &paper_task::outline(&extracted),
        ),
        rule: COUNTING_RULE.into(),
        format: extracted.format.name().into(),
    }))
}

/// Creates a draft detection from an upload (.docx, .pdf, .txt) or pasted text; nothing is
/// charged yet. Texts under 200 characters are refused (no reliable figure), and 503 when this
/// server has no detection model.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/machine_init", tag = "paper_aigc_api", security(("bearer" = [])),
    request_body(content = PastedText, description = "JSON with `title`, `author`, `text`, or multipart/form-data with `file`, `title`, `author`"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<AigcRecord>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 413, description = "file_too_large / too_many_characters", body = crate::envelope::ErrorBody),
        (status = 422, description = "text_too_short (under 200 characters) / unsupported_file_type / empty_document / garbled_text_layer / corrupt_file", body = crate::envelope::ErrorBody),
        (status = 503, description = "aigc_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn machine_init(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    req: Request,
) -> ApiResult<AigcRecord> {
    require_model(&state)?;
    let upload = read_upload(&state, req).await?;
    let extracted = extract(&state, &upload, &Caller::user(session.user.id)).await?;
    let headings = paper_task::outline(&extracted);
    let chars = crate::api::aigc::task::paper_chars(&extracted.text, &headings);
    if chars < aidetect::MIN_CHARS {
        // A figure would mean little, so we do not take money for one.
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "text_too_short",
            format!(
                "文本只有 {chars} 字：少于 {} 字时检测结果不可靠，请提交更长的文本",
                aidetect::MIN_CHARS
            ),
        ));
    }
    let title = default_title(&upload, &extracted);
    let input = AigcInput {
        chars,
        headings,
        text: extracted.text,
        author: upload.author.trim().chars().take(100).collect(),
        file_name: upload.file_name.clone(),
    };
    let task = state
        .store
        .create_task(
            session.user.id,
            aigc_task::KIND,
            &title,
            &serde_json::to_string(&input).map_err(ApiError::internal)?,
        )
        .await?;
    paper_task::keep_upload(&state, FILES, task.id, &upload).await;
    Ok(Success(record(&task)))
}

/// The payment state of a detection task (spec: `check_order_id`).
#[utoipa::path(post, path = "/api/base/paper_aigc_api/check_order_id", tag = "paper_aigc_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<paper_task::OrderState>)),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_order_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<paper_task::OrderState> {
    let task = owned(&state, form.id, session.user.id).await?;
    let cost = paper_task::quote(
        &state,
        session.user.id,
        task.id,
        input_of(&task).chars,
        &tariff(),
    )
    .await?;
    Ok(Success(
        paper_task::OrderState::of(&state, &task, cost).await?,
    ))
}

/// Charges the balance and queues the detection, in one transaction. Not enough → 402, nothing
/// charged.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/submit_check", tag = "paper_aigc_api", security(("bearer" = [])),
    params(IdForm, ("X-Confirmed-Payment" = Option<String>, Header, description = "What the confirmed price dialog said would pay: free_check, package or balance; the charge is refused (412) when that changed"), ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the dialog showed; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<AigcRecord>)),
        (status = 402, description = "insufficient_balance", body = crate::envelope::ErrorBody),
        (status = 412, description = "payment_changed: X-Confirmed-Payment no longer says what would pay; nothing charged", body = crate::envelope::ErrorBody),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "already_submitted", body = crate::envelope::ErrorBody),
        (status = 503, description = "aigc_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn submit_check(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<IdForm>,
) -> ApiResult<AigcRecord> {
    pay_and_queue(
        &state,
        form.id,
        session.user.id,
        Queueing::Submit(None),
        &confirmed,
    )
    .await
}

/// Runs an ended detection again with the current model and calibration, charged like a new
/// one. Not enough → 402 and the earlier result stays.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/reload", tag = "paper_aigc_api", security(("bearer" = [])),
    params(IdForm, ("X-Confirmed-Payment" = Option<String>, Header, description = "What the confirmed price dialog said would pay: free_check, package or balance; the charge is refused (412) when that changed"), ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the dialog showed; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<AigcRecord>)),
        (status = 402, description = "insufficient_balance", body = crate::envelope::ErrorBody),
        (status = 412, description = "payment_changed: X-Confirmed-Payment no longer says what would pay; nothing charged", body = crate::envelope::ErrorBody),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "not_finished: still pending, queued or running", body = crate::envelope::ErrorBody),
        (status = 503, description = "aigc_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn reload(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<IdForm>,
) -> ApiResult<AigcRecord> {
    pay_and_queue(
        &state,
        form.id,
        session.user.id,
        Queueing::Rerun(None),
        &confirmed,
    )
    .await
}

/// Prices a detection, charges the balance and queues it (its first run, or again once ended).
async fn pay_and_queue(
    state: &AppState,
    id: i64,
    user_id: i64,
    queueing: Queueing,
    confirmed: &paper_task::ConfirmedPayment,
) -> ApiResult<AigcRecord> {
    require_model(state)?;
    let task = owned(state, id, user_id).await?;
    let service = match queueing {
        Queueing::Submit(_) if task.status != TaskStatus::Pending => {
            return Err(ApiError::conflict("already_submitted", "该文本已提交检测"));
        }
        Queueing::Rerun(_) if !task.status.is_final() => {
            return Err(ApiError::conflict(
                "not_finished",
                "该检测尚未结束，结束后才能重新检测",
            ));
        }
        Queueing::Submit(_) => "AIGC检测",
        Queueing::Rerun(_) => "AIGC重新检测",
    };
    let cost = paper_task::quote(state, user_id, task.id, input_of(&task).chars, &tariff()).await?;
    confirmed.check(&cost)?;
    let task = paper_task::charge_and_queue_with(state, &task, &cost, service, queueing).await?;
    Ok(Success(record(&task)))
}

/// The user's detections, newest first.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/query_list", tag = "paper_aigc_api", security(("bearer" = [])),
    params(ListForm), request_body = ListForm,
    responses((status = 200, body = inline(crate::envelope::Envelope<RecordPage<AigcRecord>>))))]
pub async fn query_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ListForm>,
) -> ApiResult<RecordPage<AigcRecord>> {
    Ok(Success(
        paper_task::list_records(&state, session.user.id, aigc_task::KIND, &form, record).await?,
    ))
}

/// One detection: status, progress and, when done, the headline figures.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/load_by_id", tag = "paper_aigc_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<AigcRecord>)),
        (status = 404, description = "aigc_not_found (also for another user's)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<AigcRecord> {
    Ok(Success(record(
        &owned(&state, form.id, session.user.id).await?,
    )))
}

/// One paragraph's result.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AigcParagraph {
    /// 0-based position among the judged paragraphs.
    pub index: usize,
    /// Character offsets into the text.
    pub start: usize,
    pub end: usize,
    pub chars: usize,
    /// Probability (0–1) that the paragraph is machine-written.
    pub probability: f64,
    /// high, medium or low.
    pub band: String,
    /// 高度疑似, 中度疑似 or 低风险.
    pub band_label: String,
    pub text: String,
}

/// The detection report: figures, bands and thresholds, every paragraph, and what produced it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AigcReport {
    pub record: AigcRecord,
    /// `WJ20261122-000042`, printed on the report.
    pub report_number: String,
    /// The code that confirms this report on `/verify` (groups of four).
    pub verify_code: String,
    /// The settings the report was made under, one line each (printed on it too).
    pub settings: Vec<String>,
    /// The checked text; paragraph offsets are characters of it.
    pub text: String,
    pub paragraphs: Vec<AigcParagraph>,
    /// Paragraphs from this probability are 高度疑似 (and count in the AI rate).
    pub high_threshold: f64,
    /// Paragraphs from this probability are 中度疑似.
    pub medium_threshold: f64,
    /// The bands and the AI rate, in words.
    pub band_rule: String,
    pub model: String,
    pub criterion: String,
    pub calibration: String,
    /// What detectors cannot know, on every report.
    pub note: String,
}

/// The official report of a finished detection: its snapshot, issued from now on.
async fn official_report(
    state: &AppState,
    task: &Task,
    d: &Detection,
) -> Result<(store::ReportSnapshot, crate::official::Summary), ApiError> {
    Ok(crate::official::issued(&state.store, task, || {
        crate::official::aigc_summary(task, d)
    })
    .await?)
}

fn finished_detection(task: &Task) -> Result<Detection, ApiError> {
    match (task.status, detection_of(task)) {
        (TaskStatus::Done, Some(d)) => Ok(d),
        _ => Err(ApiError::conflict(
            "report_not_ready",
            "检测尚未完成，报告暂不可用",
        )),
    }
}

fn paragraphs(text: &str, d: &Detection) -> Vec<AigcParagraph> {
    let chars: Vec<char> = text.chars().collect();
    d.paragraphs
        .iter()
        .enumerate()
        .map(|(index, p)| AigcParagraph {
            index,
            start: p.start,
            end: p.end,
            chars: p.chars,
            probability: p.probability,
            band: serde_json::to_value(p.band)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            band_label: p.band.label().into(),
            text: chars[p.start.min(chars.len())..p.end.min(chars.len())]
                .iter()
                .collect(),
        })
        .collect()
}

/// The full detection report (spec: `query_content_list`, the paragraph results).
#[utoipa::path(post, path = "/api/base/paper_aigc_api/query_content_list", tag = "paper_aigc_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<AigcReport>)),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "report_not_ready", body = crate::envelope::ErrorBody),
    ))]
pub async fn query_content_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<AigcReport> {
    let task = owned(&state, form.id, session.user.id).await?;
    let d = finished_detection(&task)?;
    let text = input_of(&task).text;
    let (snapshot, summary) = official_report(&state, &task, &d).await?;
    Ok(Success(AigcReport {
        record: record(&task),
        report_number: snapshot.report_number,
        verify_code: store::format_report_code(&snapshot.code),
        settings: summary.settings,
        paragraphs: paragraphs(&text, &d),
        text,
        high_threshold: d.high_threshold,
        medium_threshold: d.medium_threshold,
        band_rule: report::band_rule(&d),
        model: d.model,
        criterion: d.criterion,
        calibration: d.calibration,
        note: d.note,
    }))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ContentForm {
    /// The detection.
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// The paragraph's `index` in `query_content_list`.
    #[serde(deserialize_with = "lenient::i64")]
    pub index: i64,
}

/// One paragraph's result and text.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/load_content_by_id", tag = "paper_aigc_api", security(("bearer" = [])),
    params(ContentForm), request_body = ContentForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<AigcParagraph>)),
        (status = 404, description = "aigc_not_found / paragraph_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "report_not_ready", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_content_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ContentForm>,
) -> ApiResult<AigcParagraph> {
    let task = owned(&state, form.id, session.user.id).await?;
    let d = finished_detection(&task)?;
    paragraphs(&input_of(&task).text, &d)
        .into_iter()
        .nth(form.index.max(0) as usize)
        .filter(|_| form.index >= 0)
        .map(Success)
        .ok_or_else(|| ApiError::not_found("paragraph_not_found", "该段落不存在"))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DownloadForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// `pdf` (default) or `html`.
    #[serde(default)]
    pub format: Option<String>,
}

/// The detection report as PDF (embedded CJK font) or self-contained HTML.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/download_report", tag = "paper_aigc_api", security(("bearer" = [])),
    params(DownloadForm), request_body = DownloadForm,
    responses(
        (status = 200, description = "application/pdf or text/html report", content_type = "application/pdf"),
        (status = 400, description = "invalid_format", body = crate::envelope::ErrorBody),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "report_not_ready", body = crate::envelope::ErrorBody),
        (status = 503, description = "pdf_font_missing / pdf_font_unusable: the server has no CJK font", body = crate::envelope::ErrorBody),
    ))]
pub async fn download_report(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<DownloadForm>,
) -> Result<Response, ApiError> {
    let format = paper_task::report_format(form.format.as_deref())?;
    let task = owned(&state, form.id, session.user.id).await?;
    let d = finished_detection(&task)?;
    let input = input_of(&task);
    let (snapshot, summary) = official_report(&state, &task, &d).await?;
    let number = snapshot.report_number.clone();
    let code = store::format_report_code(&snapshot.code);
    let doc = report::AigcReportDoc {
        number: number.clone(),
        verification: report::Verification::Official {
            url: crate::auth::report_verify_url(&state, &code),
            code,
        },
        settings: summary.settings,
        title: snapshot.title.clone(),
        author: summary.author,
        checked_at_ms: snapshot.checked_at,
        clock: state.clock.clone(),
        text: &input.text,
        detection: &d,
    };
    let (content_type, body) = if format == "html" {
        (
            "text/html; charset=utf-8",
            report::render_aigc_html(&doc).into_bytes(),
        )
    } else {
        let font = paper_task::pdf_font(&state).await?;
        let pdf = report::render_aigc_pdf(&doc, &font).map_err(|e| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.code(), e.to_string())
        })?;
        ("application/pdf", pdf)
    };
    Ok(paper_task::attachment(
        content_type,
        body,
        &format!("aigc-report-{number}.{format}"),
        &format!("文鉴AIGC检测报告-{number}.{format}"),
    ))
}

/// Deletes a detection and its files; an unfinished one is cancelled and refunded first.
#[utoipa::path(post, path = "/api/base/paper_aigc_api/delete", tag = "paper_aigc_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<bool> {
    owned(&state, form.id, session.user.id).await?;
    paper_task::delete_task(&state, FILES, form.id, session.user.id).await?;
    Ok(Success(true))
}

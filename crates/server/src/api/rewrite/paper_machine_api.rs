//! `paper_machine_api`: rewriting a paper (降重 / 降AIGC) — from an upload or pasted text, or from
//! the paragraphs a check or a detection flagged; priced per 1,000 characters of the paragraphs
//! rewritten, paid from the balance, run as a durable task whose every paragraph is re-measured
//! by our own engines; then the comparison, the user's own accept/reject, the .docx, and a new
//! check of the rewritten paper. `machine_api/check_order_id` is its payment state.

use crate::api::paper_task::{
    self, Caller, IdForm, ListForm, PastedText, Queueing, RecordPage, Tariff, WordCount,
    default_title, extract, read_upload,
};
use crate::api::rewrite::task::{
    self as rewrite_task, LiveLine, RewriteInput, RewriteLine, RewriteResult,
};
use crate::auth::AuthUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::models::Feature;
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use rewrite::judged::ParagraphRewrite;
use rewrite::{Goal, Strength};
use serde::{Deserialize, Serialize};
use store::{Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

pub const COUNTING_RULE: &str = "按需改写段落的字数计费（除空白外的全部字符，含汉字、字母、数字与标点）；标题与不足 20 字的短行不改写、不计费；模型改写失败的段落按字数退回。";

/// Where rewriting tasks keep files (an uploaded paper), under the files folder.
pub const FILES: &str = "rewrite";

pub fn tariff() -> Tariff {
    Tariff {
        service: crate::prices::PerThousand::Rewrite,
        free_checks_apply: false,
        package: Some(paper_task::PackageUnits::PerChar(
            store::GrantKind::RewriteChars,
        )),
        rule: COUNTING_RULE,
    }
}

pub fn not_found() -> ApiError {
    ApiError::not_found("rewrite_not_found", "改写记录不存在或已删除")
}

/// 503 when no model can rewrite here (no endpoint configured and no local model): nothing is
/// stored or charged.
pub fn require_model(state: &AppState) -> Result<(), ApiError> {
    match state.models.unavailable(Feature::Rewrite) {
        Some(why) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "rewrite_model_missing",
            why,
        )),
        None => Ok(()),
    }
}

/// Which model rewrites on this server: `endpoint` (an OpenAI-compatible service the operator
/// configured with `llm_base_url` and `llm_model`), `local` (the small local Qwen2.5-0.5B: many
/// paragraphs fail the review and are refunded for the student to rewrite by hand) or `none`.
/// Every model's rewrites go through the same judges.
#[utoipa::path(get, path = "/api/base/paper_machine_api/engine", tag = "paper_machine_api",
    responses((status = 200, body = inline(crate::envelope::Envelope<crate::models::RewriteEngine>))))]
pub async fn engine(State(state): State<AppState>) -> ApiResult<crate::models::RewriteEngine> {
    Ok(Success(state.models.rewrite_engine()))
}

/// A rewriting task as the records and comparison pages show it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewriteRecord {
    pub id: i64,
    /// `rewrite` (a paper), `rewrite_paragraph` (paragraph rewriting) or `rewrite_smart`.
    pub kind: String,
    pub title: String,
    pub file_name: String,
    /// similarity, aigc or both.
    pub goal: String,
    pub goal_label: String,
    /// light, medium or strong.
    pub strength: String,
    pub frozen: Vec<String>,
    /// Counted characters of the paragraphs to rewrite (the number priced).
    pub chars: usize,
    /// Paragraphs to rewrite.
    pub paragraphs: usize,
    /// The check or detection it came from.
    pub source_task: Option<i64>,
    pub status: String,
    pub progress: i64,
    pub phase: String,
    pub error: Option<String>,
    /// What the task costs now (after any refund of failed paragraphs).
    pub charged_fen: i64,
    /// What a package paid instead: uses, or characters for rewriting.
    pub charged_units: i64,
    pub refunded_fen: i64,
    /// `provider:model` that wrote the rewrites, once done.
    pub model: Option<String>,
    /// Paragraphs whose rewrite the paper uses, once done.
    pub accepted: Option<usize>,
    /// Copy ratio of the rewritten paragraphs before and after (percent, weighted by
    /// characters; "after" counts the text the paper now uses).
    pub similarity_before: Option<f64>,
    pub similarity_after: Option<f64>,
    /// AI probability (0–1) of the same paragraphs before and after, weighted by characters.
    pub ai_before: Option<f64>,
    pub ai_after: Option<f64>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
    /// While running: each paragraph's current attempt as the model writes it.
    pub live: Vec<LiveLine>,
}

pub fn input_of(task: &Task) -> Option<RewriteInput> {
    serde_json::from_str(&task.input).ok()
}

pub fn result_of(task: &Task) -> Option<RewriteResult> {
    task.result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
}

/// Character-weighted means of a paragraph figure before and after, over the rewritten lines.
fn weighted(
    lines: &[RewriteLine],
    figure: impl Fn(&RewriteLine, &ParagraphRewrite) -> BeforeAfter,
) -> BeforeAfter {
    let (mut before, mut after, mut weight) = (0.0, 0.0, 0.0);
    for line in lines {
        if let Some(r) = &line.rewrite
            && let Some((b, a)) = figure(line, r)
        {
            let w = aidetect::counted_chars(&line.text) as f64;
            before += b * w;
            after += a * w;
            weight += w;
        }
    }
    (weight > 0.0).then(|| (before / weight, after / weight))
}

/// A figure before and after, when measured.
type BeforeAfter = Option<(f64, f64)>;

/// Whole-task figures: similarity and AI probability of the rewritten paragraphs, before and
/// as the paper now stands.
pub fn figures(result: &RewriteResult) -> (BeforeAfter, BeforeAfter) {
    let similarity = weighted(&result.lines, |line, r| {
        let after = if line.uses_rewrite() {
            r.similarity_after?
        } else {
            r.similarity_before
        };
        Some((r.similarity_before, after))
    });
    let ai = weighted(&result.lines, |line, r| {
        let before = r.ai_before?;
        let after = if line.uses_rewrite() {
            r.ai_after?
        } else {
            before
        };
        Some((before, after))
    });
    (similarity, ai)
}

pub fn record(task: &Task) -> RewriteRecord {
    let input = input_of(task);
    let result = result_of(task);
    let (similarity, ai) = result.as_ref().map(figures).unwrap_or((None, None));
    let goal = input.as_ref().map_or(Goal::Similarity, |i| i.goal);
    RewriteRecord {
        id: task.id,
        kind: task.kind.clone(),
        title: task.title.clone(),
        file_name: input
            .as_ref()
            .map(|i| i.file_name.clone())
            .unwrap_or_default(),
        goal: goal.as_str().into(),
        goal_label: goal.label().into(),
        strength: input
            .as_ref()
            .map_or(Strength::Medium, |i| i.strength)
            .as_str()
            .into(),
        frozen: input.as_ref().map(|i| i.frozen.clone()).unwrap_or_default(),
        chars: input.as_ref().map_or(0, |i| i.chars),
        paragraphs: input.as_ref().map_or(0, |i| i.paragraph_count()),
        source_task: input.as_ref().and_then(|i| i.source_task),
        status: task.status.as_str().into(),
        progress: task.progress,
        phase: task.phase.clone(),
        error: task.error.clone(),
        charged_fen: task.charged_fen,
        charged_units: task.charged_units,
        refunded_fen: result.as_ref().map_or(0, |r| r.refunded_fen),
        model: result.as_ref().map(|r| r.model.clone()),
        accepted: result
            .as_ref()
            .map(|r| r.lines.iter().filter(|l| l.uses_rewrite()).count()),
        similarity_before: similarity.map(|s| s.0),
        similarity_after: similarity.map(|s| s.1),
        ai_before: ai.map(|a| a.0),
        ai_after: ai.map(|a| a.1),
        created_at: task.created_at,
        finished_at: task.finished_at,
        live: match task.status {
            TaskStatus::Running => task
                .draft
                .as_deref()
                .and_then(|d| serde_json::from_str(d).ok())
                .unwrap_or_default(),
            _ => vec![],
        },
    }
}

/// A user's rewriting task of any kind (paper, paragraph, smart): they share the comparison,
/// choice, download and order calls.
pub async fn owned(state: &AppState, id: i64, user_id: i64) -> Result<Task, ApiError> {
    let task = state
        .store
        .task(id, user_id)
        .await
        .map_err(|_| not_found())?;
    if !rewrite_task::KINDS.contains(&task.kind.as_str()) {
        return Err(not_found());
    }
    Ok(task)
}

/// Stores a draft rewriting task of `kind` (nothing charged) after checking there is something
/// to rewrite.
pub async fn create_draft_of(
    state: &AppState,
    user_id: i64,
    kind: &str,
    title: &str,
    mut input: RewriteInput,
) -> Result<Task, ApiError> {
    input.chars = input.selected_chars();
    if input.chars == 0 {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "nothing_to_rewrite",
            "没有需要改写的段落（标题与不足 20 字的短行不改写）",
        ));
    }
    Ok(state
        .store
        .create_task(
            user_id,
            kind,
            title,
            &serde_json::to_string(&input).map_err(ApiError::internal)?,
        )
        .await?)
}

async fn create_draft(
    state: &AppState,
    user_id: i64,
    title: &str,
    input: RewriteInput,
) -> Result<Task, ApiError> {
    create_draft_of(state, user_id, rewrite_task::KIND, title, input).await
}

/// Counts what rewriting an upload or pasted text would be priced on (visitors too).
#[utoipa::path(post, path = "/api/base/paper_machine_api/word_count", tag = "paper_machine_api",
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
    let input = input_from(extracted, Goal::Similarity, Strength::Medium);
    Ok(Success(WordCount {
        chars: input.selected_chars(),
        rule: COUNTING_RULE.into(),
        format: input.file_name,
    }))
}

fn input_from(extracted: docio::Extracted, goal: Goal, strength: Strength) -> RewriteInput {
    RewriteInput {
        headings: paper_task::outline(&extracted),
        text: extracted.text,
        goal,
        strength,
        frozen: vec![],
        only: None,
        source_task: None,
        owner: None,
        file_name: extracted.format.name().into(),
        chars: 0,
        rerun: None,
    }
}

/// Creates a draft rewrite of a whole paper from an upload (.docx, .pdf, .txt) or pasted text;
/// every body paragraph is rewritten. The goal, strength and frozen terms are chosen at
/// `machine_submit`.
#[utoipa::path(post, path = "/api/base/paper_machine_api/machine_init", tag = "paper_machine_api", security(("bearer" = [])),
    request_body(content = PastedText, description = "JSON with `title`, `text`, or multipart/form-data with `file`, `title`"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 413, description = "file_too_large / too_many_characters", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite / unsupported_file_type / empty_document / garbled_text_layer / corrupt_file", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn machine_init(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    req: Request,
) -> ApiResult<RewriteRecord> {
    require_model(&state)?;
    let upload = read_upload(&state, req).await?;
    let extracted = extract(&state, &upload, &Caller::user(session.user.id)).await?;
    let title = default_title(&upload, &extracted);
    let mut input = input_from(extracted, Goal::Similarity, Strength::Medium);
    input.owner = Some(session.user.id);
    input.file_name = upload.file_name.clone();
    let task = create_draft(&state, session.user.id, &title, input).await?;
    paper_task::keep_upload(&state, FILES, task.id, &upload).await;
    Ok(Success(record(&task)))
}

/// A check or detection to rewrite from.
#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct FromTaskForm {
    /// The check (or, for `check_aigc_machine_submit`, the detection).
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// For `check_aigc_and_machine_submit`: the detection of the same paper, whose flagged
    /// paragraphs are rewritten too.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub aigc_id: Option<i64>,
}

/// Character ranges of the lines of `text`.
fn line_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = vec![];
    let mut start = 0;
    for line in text.split('\n') {
        let n = line.chars().count();
        out.push((start, start + n));
        start += n + 1;
    }
    out
}

/// The lines overlapping any of `ranges` (character offsets).
fn lines_touching(text: &str, ranges: impl Iterator<Item = (usize, usize)>) -> Vec<usize> {
    let lines = line_ranges(text);
    let mut hit = vec![false; lines.len()];
    for (s, e) in ranges {
        for (i, &(ls, le)) in lines.iter().enumerate() {
            if s < le && ls < e {
                hit[i] = true;
            }
        }
    }
    (0..lines.len()).filter(|&i| hit[i]).collect()
}

/// Lines with copied text (copies and light edits; quotations and suspected paraphrases are
/// not counted as copying).
fn flagged_by_check(text: &str, report: &simcheck::Report) -> Vec<usize> {
    lines_touching(
        text,
        report
            .spans
            .iter()
            .filter(|s| {
                matches!(
                    s.class,
                    simcheck::SpanClass::Copy | simcheck::SpanClass::LightEdit
                )
            })
            .map(|s| (s.start, s.end)),
    )
}

/// Lines of paragraphs in the high or medium band.
fn flagged_by_detection(text: &str, detection: &aidetect::Detection) -> Vec<usize> {
    lines_touching(
        text,
        detection
            .paragraphs
            .iter()
            .filter(|p| p.band != aidetect::Band::Low)
            .map(|p| (p.start, p.end)),
    )
}

async fn from_check(
    state: &AppState,
    user_id: i64,
    form: &FromTaskForm,
    goal: Goal,
) -> Result<Task, ApiError> {
    let (check, checked, report) =
        crate::api::check::check_api::finished_check(state, form.id, user_id).await?;
    let (text, headings) = (checked.text, checked.headings);
    let mut only = flagged_by_check(&text, &report);
    if let Some(aigc_id) = form.aigc_id {
        let (_, aigc_text, detection) =
            crate::api::aigc::paper_aigc_api::detection_to_rewrite(state, aigc_id, user_id).await?;
        if aigc_text != text {
            return Err(ApiError::bad_request(
                "different_paper",
                "查重与 AIGC 检测不是同一篇文本，不能合并改写",
            ));
        }
        only.extend(flagged_by_detection(&text, &detection));
        only.sort_unstable();
        only.dedup();
    }
    let input = RewriteInput {
        text,
        headings,
        goal,
        strength: Strength::Medium,
        frozen: vec![],
        only: Some(only),
        source_task: Some(check.id),
        owner: Some(user_id),
        file_name: String::new(),
        chars: 0,
        rerun: None,
    };
    create_draft(state, user_id, &check.title, input).await
}

/// Creates a draft that lowers the similarity of the paragraphs a finished check flagged (with
/// copied text). Pay with `machine_submit`.
#[utoipa::path(post, path = "/api/base/paper_machine_api/check_machine_submit", tag = "paper_machine_api", security(("bearer" = [])),
    params(FromTaskForm), request_body = FromTaskForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "check_not_finished", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite: the check found no copied paragraph", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_machine_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<FromTaskForm>,
) -> ApiResult<RewriteRecord> {
    require_model(&state)?;
    let task = from_check(&state, session.user.id, &form, Goal::Similarity).await?;
    Ok(Success(record(&task)))
}

/// Creates a draft that lowers both the similarity and the AI traces: the paragraphs the check
/// flagged, and those the detection `aigcId` flagged when given.
#[utoipa::path(post, path = "/api/base/paper_machine_api/check_aigc_and_machine_submit", tag = "paper_machine_api", security(("bearer" = [])),
    params(FromTaskForm), request_body = FromTaskForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 400, description = "different_paper", body = crate::envelope::ErrorBody),
        (status = 404, description = "check_not_found / aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "check_not_finished / aigc_not_finished", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_aigc_and_machine_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<FromTaskForm>,
) -> ApiResult<RewriteRecord> {
    require_model(&state)?;
    let task = from_check(&state, session.user.id, &form, Goal::Both).await?;
    Ok(Success(record(&task)))
}

/// A draft that lowers the AI traces of the paragraphs a finished detection put in the high or
/// medium band (also behind `paper_aigc_api/aigc_machine_submit` and `machine_submit`).
pub async fn from_detection(
    state: &AppState,
    user_id: i64,
    aigc_id: i64,
) -> Result<RewriteRecord, ApiError> {
    require_model(state)?;
    let (detection_task, text, detection) =
        crate::api::aigc::paper_aigc_api::detection_to_rewrite(state, aigc_id, user_id).await?;
    let input = RewriteInput {
        only: Some(flagged_by_detection(&text, &detection)),
        text,
        headings: vec![],
        goal: Goal::Aigc,
        strength: Strength::Medium,
        frozen: vec![],
        source_task: Some(detection_task.id),
        owner: Some(user_id),
        file_name: String::new(),
        chars: 0,
        rerun: None,
    };
    let task = create_draft(state, user_id, &detection_task.title, input).await?;
    Ok(record(&task))
}

/// Creates a draft that lowers the AI traces of the paragraphs a finished detection flagged.
#[utoipa::path(post, path = "/api/base/paper_machine_api/check_aigc_machine_submit", tag = "paper_machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "aigc_not_finished", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite: no paragraph in the high or medium band", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_aigc_machine_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<RewriteRecord> {
    Ok(Success(
        from_detection(&state, session.user.id, form.id).await?,
    ))
}

/// How to rewrite, chosen when paying.
#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct SubmitForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// similarity, aigc or both (default: as created).
    #[serde(default)]
    pub goal: Option<String>,
    /// light, medium or strong (default medium).
    #[serde(default)]
    pub strength: Option<String>,
    /// Terms to keep verbatim, separated by commas, 、 or new lines (at most 50).
    #[serde(default)]
    pub frozen: Option<String>,
}

pub fn parse_frozen(raw: &str) -> Result<Vec<String>, ApiError> {
    let terms: Vec<String> = raw
        .split([',', '，', '、', ';', '；', '\n'])
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    if terms.len() > 50 || terms.iter().any(|t| t.chars().count() > 50) {
        return Err(ApiError::bad_request(
            "too_many_frozen_terms",
            "保留术语最多 50 个，每个不超过 50 字",
        ));
    }
    Ok(terms)
}

/// Sets the goal, strength and frozen terms of a draft, then charges the balance and queues
/// it, in one transaction. Not enough → 402 and nothing is charged.
#[utoipa::path(post, path = "/api/base/paper_machine_api/machine_submit", tag = "paper_machine_api", security(("bearer" = [])),
    params(SubmitForm, ("X-Confirmed-Payment" = Option<String>, Header, description = "What the confirmed price dialog said would pay: free_check, package or balance; the charge is refused (412) when that changed"), ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the dialog showed; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")), request_body = SubmitForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 400, description = "invalid_goal / invalid_strength / too_many_frozen_terms", body = crate::envelope::ErrorBody),
        (status = 402, description = "insufficient_balance", body = crate::envelope::ErrorBody),
        (status = 412, description = "payment_changed: X-Confirmed-Payment no longer says what would pay; nothing charged", body = crate::envelope::ErrorBody),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "already_submitted", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn machine_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<SubmitForm>,
) -> ApiResult<RewriteRecord> {
    require_model(&state)?;
    let task = owned(&state, form.id, session.user.id).await?;
    if task.kind != rewrite_task::KIND {
        return Err(not_found());
    }
    Ok(Success(
        submit_draft(&state, session.user.id, task, &form, "降重改写", &confirmed).await?,
    ))
}

/// The goals a task of `kind` may be given.
pub fn goals_of(kind: &str) -> &'static [Goal] {
    if kind == rewrite_task::SMART_KIND {
        &[Goal::Polish, Goal::Expand, Goal::Shorten, Goal::Academic]
    } else {
        &[Goal::Similarity, Goal::Aigc, Goal::Both]
    }
}

/// Reads a goal a task of `kind` may be given.
pub fn parse_goal(kind: &str, name: &str) -> Result<Goal, ApiError> {
    let allowed = goals_of(kind);
    Goal::parse(name)
        .filter(|g| allowed.contains(g))
        .ok_or_else(|| {
            let names: Vec<&str> = allowed.iter().map(|g| g.as_str()).collect();
            ApiError::bad_request(
                "invalid_goal",
                format!("改写目标只能是 {}", names.join("、")),
            )
        })
}

/// The user's goal, strength and frozen terms, where given, on the input of a task of `kind`.
pub fn apply_choices(
    input: &mut RewriteInput,
    kind: &str,
    goal: Option<&str>,
    strength: Option<&str>,
    frozen: Option<&str>,
) -> Result<(), ApiError> {
    if let Some(goal) = goal.filter(|g| !g.is_empty()) {
        input.goal = parse_goal(kind, goal)?;
    }
    if let Some(strength) = strength.filter(|s| !s.is_empty()) {
        input.strength = Strength::parse(strength).ok_or_else(|| {
            ApiError::bad_request("invalid_strength", "改写强度只能是 light、medium 或 strong")
        })?;
    }
    if let Some(frozen) = frozen {
        input.frozen = parse_frozen(frozen)?;
    }
    Ok(())
}

/// Sets a draft's goal, strength and frozen terms as `form` says, then charges and queues it.
pub async fn submit_draft(
    state: &AppState,
    user_id: i64,
    task: Task,
    form: &SubmitForm,
    service: &str,
    confirmed: &paper_task::ConfirmedPayment,
) -> Result<RewriteRecord, ApiError> {
    require_model(state)?;
    if task.status != TaskStatus::Pending {
        return Err(ApiError::conflict("already_submitted", "该任务已提交"));
    }
    let mut input = input_of(&task).ok_or_else(not_found)?;
    apply_choices(
        &mut input,
        &task.kind,
        form.goal.as_deref(),
        form.strength.as_deref(),
        form.frozen.as_deref(),
    )?;
    let input_json = serde_json::to_string(&input).map_err(ApiError::internal)?;
    let cost = paper_task::quote(state, user_id, task.id, input.chars, &tariff()).await?;
    confirmed.check(&cost)?;
    let queueing = paper_task::Queueing::Submit(Some(input_json));
    // The ledger names what the student bought: a 降AIGC run is not a 降重.
    let service = match input.goal {
        Goal::Aigc => "降AIGC",
        Goal::Both => "降重 + 降AIGC",
        _ => service,
    };
    let task = paper_task::charge_and_queue_with(state, &task, &cost, service, queueing).await?;
    Ok(record(&task))
}

/// The payment state of a rewriting task (spec: `machine_api/check_order_id`); with `index`,
/// the price of running that one paragraph again.
#[utoipa::path(post, path = "/api/base/machine_api/check_order_id", tag = "machine_api", security(("bearer" = [])),
    params(ReloadForm), request_body = ReloadForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<paper_task::OrderState>)),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "not_finished (with index)", body = crate::envelope::ErrorBody),
        (status = 422, description = "line_not_rewritten (with index)", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_order_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ReloadForm>,
) -> ApiResult<paper_task::OrderState> {
    let task = owned(&state, form.id, session.user.id).await?;
    let chars = match form.index {
        Some(line) => rerun_input(&task, Some(line))?.selected_chars(),
        None => input_of(&task).map_or(0, |i| i.chars),
    };
    let cost = paper_task::quote(&state, session.user.id, task.id, chars, &tariff()).await?;
    Ok(Success(
        paper_task::OrderState::of(&state, &task, cost).await?,
    ))
}

/// The task's input for running it again: every paragraph, or `line` alone (which must be a
/// rewritten paragraph of a completed rewrite).
fn rerun_input(task: &Task, line: Option<i64>) -> Result<RewriteInput, ApiError> {
    let mut input = input_of(task).ok_or_else(not_found)?;
    input.rerun = match line {
        None => None,
        Some(line) => {
            let line = usize::try_from(line).unwrap_or(usize::MAX);
            let previous = result_of(task).ok_or_else(|| {
                ApiError::conflict("not_finished", "该改写未完成，无法单独重新改写某一段")
            })?;
            if previous.lines.get(line).is_none_or(|l| l.rewrite.is_none()) {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "line_not_rewritten",
                    "该段落不在改写范围内，无法单独重新改写",
                ));
            }
            Some(rewrite_task::LineRerun { line, previous })
        }
    };
    Ok(input)
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReloadForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// 0-based line of a rewritten paragraph to run again alone; absent: every paragraph.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub index: Option<i64>,
}

/// Runs an ended rewrite again, charged like a new one for the characters it rewrites: every
/// paragraph, or with `index` one paragraph alone (the others keep their outcome and choice).
#[utoipa::path(post, path = "/api/base/paper_machine_api/reload", tag = "paper_machine_api", security(("bearer" = [])),
    params(ReloadForm, ("X-Confirmed-Payment" = Option<String>, Header, description = "What the confirmed price dialog said would pay: free_check, package or balance; the charge is refused (412) when that changed"), ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the dialog showed; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")), request_body = ReloadForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 402, description = "insufficient_balance", body = crate::envelope::ErrorBody),
        (status = 412, description = "payment_changed: X-Confirmed-Payment no longer says what would pay; nothing charged", body = crate::envelope::ErrorBody),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "not_finished (one paragraph: the rewrite must have completed)", body = crate::envelope::ErrorBody),
        (status = 422, description = "line_not_rewritten", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn reload(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<ReloadForm>,
) -> ApiResult<RewriteRecord> {
    require_model(&state)?;
    let task = owned(&state, form.id, session.user.id).await?;
    if !task.status.is_final() {
        return Err(ApiError::conflict(
            "not_finished",
            "该改写尚未结束，结束后才能重新改写",
        ));
    }
    let input = rerun_input(&task, form.index)?;
    let chars = match form.index {
        Some(_) => input.selected_chars(),
        None => input.chars,
    };
    let new_input = serde_json::to_string(&input).map_err(ApiError::internal)?;
    let cost = paper_task::quote(&state, session.user.id, task.id, chars, &tariff()).await?;
    confirmed.check(&cost)?;
    let service = if form.index.is_some() {
        "重新改写一段"
    } else {
        "重新改写"
    };
    let task = paper_task::charge_and_queue_with(
        &state,
        &task,
        &cost,
        service,
        Queueing::Rerun(Some(new_input)),
    )
    .await?;
    Ok(Success(record(&task)))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RewriteListForm {
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub page: Option<i64>,
    /// Page size (default 10, at most 100).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub size: Option<i64>,
    /// Only tasks in this status.
    #[serde(default)]
    pub status: Option<String>,
    /// `similarity` (降重记录: 降重 and 降重 + 降AIGC) or `aigc` (降AIGC记录 / AI率降低记录:
    /// 降AIGC and 降重 + 降AIGC); empty: every paper rewrite.
    #[serde(default)]
    pub goal: Option<String>,
}

/// The most rewrites of one user a goal-filtered list looks through (newest first).
const GOAL_LIST_SCAN: i64 = 5_000;

/// The user's rewriting tasks, newest first; with `goal`, only that menu's kind.
#[utoipa::path(post, path = "/api/base/paper_machine_api/query_list", tag = "paper_machine_api", security(("bearer" = [])),
    params(RewriteListForm), request_body = RewriteListForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RecordPage<RewriteRecord>>)),
        (status = 400, description = "invalid_goal", body = crate::envelope::ErrorBody),
    ))]
pub async fn query_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<RewriteListForm>,
) -> ApiResult<RecordPage<RewriteRecord>> {
    let list = ListForm {
        page: form.page,
        size: form.size,
        status: form.status.clone(),
    };
    let wanted: &[Goal] = match form.goal.as_deref().unwrap_or("") {
        "" => {
            return Ok(Success(
                paper_task::list_records(
                    &state,
                    session.user.id,
                    rewrite_task::KIND,
                    &list,
                    record,
                )
                .await?,
            ));
        }
        "similarity" => &[Goal::Similarity, Goal::Both],
        "aigc" => &[Goal::Aigc, Goal::Both],
        _ => {
            return Err(ApiError::bad_request(
                "invalid_goal",
                "记录类型只能是 similarity 或 aigc",
            ));
        }
    };
    // The goal lives in the task's input: filtered here, over the user's newest rewrites.
    let page = paper_task::list_records_upto(
        &state,
        session.user.id,
        rewrite_task::KIND,
        form.status.as_deref(),
        GOAL_LIST_SCAN,
    )
    .await?;
    let matching: Vec<&Task> = page
        .iter()
        .filter(|t| input_of(t).is_some_and(|i| wanted.contains(&i.goal)))
        .collect();
    let (number, size) = (
        list.page.unwrap_or(1).max(1),
        list.size.unwrap_or(10).clamp(1, 100),
    );
    Ok(Success(RecordPage {
        total: matching.len() as i64,
        records: matching
            .iter()
            .skip(((number - 1) * size) as usize)
            .take(size as usize)
            .map(|t| record(t))
            .collect(),
        page: number,
        size,
    }))
}

/// One rewriting task: status, progress and, once done, its figures.
#[utoipa::path(post, path = "/api/base/paper_machine_api/load_by_id", tag = "paper_machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 404, description = "rewrite_not_found (also for another user's)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<RewriteRecord> {
    Ok(Success(record(
        &owned(&state, form.id, session.user.id).await?,
    )))
}

/// One line of the comparison.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparedLine {
    pub index: usize,
    /// The original text.
    pub text: String,
    pub heading: Option<u8>,
    /// The judged rewrite (rewritten lines only): `original`, `rewritten`, `accepted`,
    /// `reason`, `similarity_before`, `similarity_after`, `ai_before`, `ai_after`, `meaning`,
    /// `attempts`, `strength`, `model`, `usage`; `doubts` (each `{kind, label, detail}`, kind one
    /// of `terms` 术语被改, `fluency` 语句不通, `dropped` 漏译句子, `reversed` 意思相反, `copied`
    /// 与原文雷同: a doubted rewrite is not adopted by default and its characters are refunded)
    /// and `reading` (the review's figures: `key_terms`, `key_terms_kept`, `hard_items`,
    /// `hard_items_kept`, `non_words`, `new_english`, `surprisal_before`, `surprisal_after`,
    /// `sentences`, `sentences_covered`, `weakest_sentence`, `copied`).
    #[schema(value_type = Option<Object>)]
    pub rewrite: Option<ParagraphRewrite>,
    /// The user's decision (`null`: the measured verdict stands).
    pub choice: Option<bool>,
    /// Whether the rewritten paper uses the rewrite.
    pub uses_rewrite: bool,
}

/// The comparison: every line of the paper with its rewrite and measured figures.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewriteContent {
    pub record: RewriteRecord,
    /// The whole paper, when it came from a finished check: that check's 总文字复制比 and an
    /// estimate of it with the chosen rewrites (the paragraph figures cover only the rewritten
    /// paragraphs). A new check gives the real figure.
    pub paper: Option<PaperEstimate>,
    pub lines: Vec<ComparedLine>,
    pub prompt_version: String,
    /// The least meaning similarity a rewrite had to keep.
    pub meaning_min: f64,
    pub elapsed_ms: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaperEstimate {
    /// The check the paper came from.
    pub check_id: i64,
    /// That check's 总文字复制比 (percent).
    pub ratio_before: f64,
    /// The same paper with the rewrites now chosen: the check's copied characters less what
    /// each chosen rewrite measured off its paragraph, over the check's 检测字数 (percent).
    pub ratio_estimated: f64,
}

/// The whole-paper estimate for a rewrite of a checked paper; `None` for a pasted or uploaded
/// paper, or when the check is gone.
async fn paper_estimate(
    state: &AppState,
    task: &Task,
    result: &RewriteResult,
    user_id: i64,
) -> Option<PaperEstimate> {
    let check = state
        .store
        .task(input_of(task)?.source_task?, user_id)
        .await
        .ok()
        .filter(|t| t.kind == crate::api::check::task::KIND && t.status == TaskStatus::Done)?;
    let rec = crate::api::check::check_api::record_of(&check);
    let (ratio_before, copied) = (rec.ratio_total?, rec.copied_chars? as f64);
    let lowered: f64 = result
        .lines
        .iter()
        .filter(|l| l.uses_rewrite())
        .filter_map(|l| {
            let r = l.rewrite.as_ref()?;
            let drop = (r.similarity_before - r.similarity_after?).max(0.0);
            Some(drop / 100.0 * aidetect::counted_chars(&l.text) as f64)
        })
        .sum();
    Some(PaperEstimate {
        check_id: check.id,
        ratio_before,
        ratio_estimated: ((copied - lowered).max(0.0) * 100.0 / rec.chars.max(1) as f64)
            .min(ratio_before),
    })
}

pub fn compared(i: usize, line: &RewriteLine) -> ComparedLine {
    ComparedLine {
        index: i,
        text: line.text.clone(),
        heading: line.heading,
        rewrite: line.rewrite.clone(),
        choice: line.choice,
        uses_rewrite: line.uses_rewrite(),
    }
}

pub async fn finished(
    state: &AppState,
    id: i64,
    user_id: i64,
) -> Result<(Task, RewriteResult), ApiError> {
    let task = owned(state, id, user_id).await?;
    match result_of(&task) {
        Some(result) if task.status == TaskStatus::Done => Ok((task, result)),
        _ => Err(ApiError::conflict(
            "rewrite_not_finished",
            "改写尚未完成，请稍候",
        )),
    }
}

/// The comparison of a finished rewrite.
#[utoipa::path(post, path = "/api/base/paper_machine_api/query_content_list", tag = "paper_machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteContent>)),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "rewrite_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn query_content_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<RewriteContent> {
    let (task, result) = finished(&state, form.id, session.user.id).await?;
    Ok(Success(RewriteContent {
        record: record(&task),
        paper: paper_estimate(&state, &task, &result, session.user.id).await,
        lines: result
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| compared(i, l))
            .collect(),
        prompt_version: result.prompt_version,
        meaning_min: rewrite::judged::MEANING_MIN,
        elapsed_ms: result.elapsed_ms,
    }))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LineForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// 0-based line of the paper.
    #[serde(deserialize_with = "lenient::i64")]
    pub index: i64,
}

fn line_of(result: &RewriteResult, index: i64) -> Result<usize, ApiError> {
    usize::try_from(index)
        .ok()
        .filter(|&i| i < result.lines.len())
        .ok_or_else(|| ApiError::not_found("line_not_found", "没有这一段"))
}

/// One line of the comparison.
#[utoipa::path(post, path = "/api/base/paper_machine_api/load_content_by_id", tag = "paper_machine_api", security(("bearer" = [])),
    params(LineForm), request_body = LineForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ComparedLine>)),
        (status = 404, description = "rewrite_not_found / line_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "rewrite_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_content_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<LineForm>,
) -> ApiResult<ComparedLine> {
    let (_, result) = finished(&state, form.id, session.user.id).await?;
    let i = line_of(&result, form.index)?;
    Ok(Success(compared(i, &result.lines[i])))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChoiceForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    #[serde(deserialize_with = "lenient::i64")]
    pub index: i64,
    /// `true` uses the rewrite, `false` keeps the original, absent returns to the measured
    /// verdict.
    #[serde(default)]
    pub accepted: Option<bool>,
}

/// The user accepts or rejects one paragraph's rewrite (our addition to the spec's calls: the
/// comparison page's 采用 / 保留原文).
#[utoipa::path(post, path = "/api/base/paper_machine_api/choose", tag = "paper_machine_api", security(("bearer" = [])),
    params(ChoiceForm), request_body = ChoiceForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ComparedLine>)),
        (status = 404, description = "rewrite_not_found / line_not_found / nothing_to_choose (no rewrite for this line)", body = crate::envelope::ErrorBody),
        (status = 409, description = "rewrite_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn choose(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ChoiceForm>,
) -> ApiResult<ComparedLine> {
    let (task, mut result) = finished(&state, form.id, session.user.id).await?;
    let i = line_of(&result, form.index)?;
    if result.lines[i]
        .rewrite
        .as_ref()
        .is_none_or(|r| r.rewritten.is_none())
    {
        return Err(ApiError::not_found(
            "nothing_to_choose",
            "这一段没有可采用的改写",
        ));
    }
    result.lines[i].choice = form.accepted;
    state
        .store
        .update_task_result(
            task.id,
            session.user.id,
            &serde_json::to_string(&result).map_err(ApiError::internal)?,
        )
        .await?;
    Ok(Success(compared(i, &result.lines[i])))
}

/// The response header that says which Word file `download` sent.
pub const WORD_FORM_HEADER: &str = "x-wenjian-word-form";

/// The rewritten paper as .docx, each paragraph the text the comparison says the paper uses.
/// A paper uploaded as .docx (here, or for the check or detection the rewrite came from) comes
/// back as that same file with only the changed paragraphs' text replaced: styles, headings,
/// numbering, tables, images, footnotes, headers and footers stay as the student made them, and
/// the file is named after the upload (`论文.docx` → `论文（改写稿）.docx`). Pasted text and
/// .pdf / .txt uploads get a new document in thesis styles (宋体 小四, 1.5 lines, headings kept).
/// When the uploaded file is gone or no longer reads as the rewritten text, the new document is
/// sent instead and the header says why.
#[utoipa::path(post, path = "/api/base/paper_machine_api/download", tag = "paper_machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, description = "the .docx", content_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            headers(
                ("x-wenjian-word-form" = String, description = "`original`: the uploaded .docx with the new text; `clean`: a new document in thesis styles (pasted text, .pdf or .txt upload); `clean; fallback=CODE`: the uploaded .docx could not be used (`original_missing`, `document_mismatch`, `corrupt_file`, …) and a new document was sent"),
                ("content-disposition" = String, description = "attachment; the upload's name with （改写稿）, else the title's"),
            )),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "rewrite_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn download(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> Result<Response, ApiError> {
    let (task, result) = finished(&state, form.id, session.user.id).await?;
    let original = original_upload(&state, &task, session.user.id).await;
    let stem = original
        .as_ref()
        .map(|(name, _)| file_stem(name))
        .filter(|stem| !stem.is_empty())
        .unwrap_or_else(|| task.title.clone());
    let edited = match original {
        Some((file_name, key)) => {
            let lines: Vec<String> = result.lines.iter().map(|l| l.text.clone()).collect();
            let replacements: Vec<(usize, String)> = result
                .lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.final_text() != l.text)
                .map(|(i, l)| (i, l.final_text().to_string()))
                .collect();
            let limits = docio::Limits {
                max_bytes: state.config.max_upload_bytes,
                max_chars: state.config.max_paper_chars,
                ..docio::Limits::default()
            };
            match state.files.get(&key, limits.max_bytes).await {
                Ok(Some(bytes)) => tokio::task::spawn_blocking(move || {
                    edit_original(&bytes, &file_name, &lines, &replacements, &limits)
                })
                .await
                .map_err(ApiError::internal)?,
                _ => Err(Some("original_missing")),
            }
        }
        None => Err(None),
    };
    let (bytes, form_kept) = match edited {
        Ok(bytes) => (bytes, "original".to_string()),
        Err(why) => {
            if let Some(code) = why {
                tracing::warn!(
                    task = task.id,
                    reason = code,
                    "rewritten paper: the uploaded .docx was not used, a new document was written"
                );
            }
            let paragraphs: Vec<docio::OutParagraph> = result
                .lines
                .iter()
                .filter(|l| !l.text.trim().is_empty())
                .map(|l| docio::OutParagraph {
                    text: l.final_text().to_string(),
                    heading: l.heading,
                })
                .collect();
            let bytes = docio::write_docx(&paragraphs).map_err(ApiError::internal)?;
            let form = match why {
                Some(code) => format!("clean; fallback={code}"),
                None => "clean".to_string(),
            };
            (bytes, form)
        }
    };
    let mut response = paper_task::attachment(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        bytes,
        &format!("rewrite-{}.docx", task.id),
        &format!("{stem}（改写稿）.docx"),
    );
    if let Ok(value) = axum::http::HeaderValue::from_str(&form_kept) {
        response.headers_mut().insert(WORD_FORM_HEADER, value);
    }
    Ok(response)
}

/// An upload's name without its extension, as one plain line.
fn file_stem(file_name: &str) -> String {
    let name = paper_task::plain_line(file_name);
    let name = name.rsplit(['/', '\\']).next().unwrap_or_default();
    name.rsplit_once('.')
        .map_or(name, |(stem, _)| stem)
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// The paper a rewrite came from, as uploaded: its file name and its key in the file store. A rewrite of
/// an uploaded paper has its own; one made from a check's or a detection's report uses that
/// task's upload (the same text, read by the same reader). Pasted text has none.
async fn original_upload(state: &AppState, task: &Task, user_id: i64) -> Option<(String, String)> {
    let input = input_of(task)?;
    if !input.file_name.is_empty() {
        let key = paper_task::kept_upload(FILES, task.id, &input.file_name)?;
        return Some((input.file_name, key));
    }
    let source = state.store.task(input.source_task?, user_id).await.ok()?;
    let family = match source.kind.as_str() {
        crate::api::check::task::KIND => crate::api::check::check_api::FILES,
        crate::api::aigc::task::KIND => crate::api::aigc::paper_aigc_api::FILES,
        _ => return None,
    };
    let stored: serde_json::Value = serde_json::from_str(&source.input).ok()?;
    let name = stored["file_name"].as_str().filter(|n| !n.is_empty())?;
    let key = paper_task::kept_upload(family, source.id, name)?;
    Some((name.to_string(), key))
}

/// The uploaded file with the rewritten lines in place, or why not: `None` when it is not a
/// .docx (a .pdf or .txt upload), else the reason's code.
fn edit_original(
    bytes: &[u8],
    file_name: &str,
    lines: &[String],
    replacements: &[(usize, String)],
    limits: &docio::Limits,
) -> Result<Vec<u8>, Option<&'static str>> {
    match docio::detect(bytes, file_name) {
        Ok(docio::Format::Docx) => {}
        _ => return Err(None),
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    docio::replace_paragraph_texts(bytes, &lines, replacements, limits).map_err(|e| Some(e.code()))
}

/// Sends the rewritten paper to a new similarity check: a draft check of the text the paper now
/// uses (pay for it on the check pages).
#[utoipa::path(post, path = "/api/base/paper_machine_api/submit_check", tag = "paper_machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<crate::api::check::check_api::CheckRecord>)),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "rewrite_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn submit_check(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<crate::api::check::check_api::CheckRecord> {
    let (task, result) = finished(&state, form.id, session.user.id).await?;
    let check = crate::api::check::check_api::create_draft(
        &state,
        session.user.id,
        &format!("{}（改写稿）", task.title),
        result.final_text(),
        // The rewrite keeps every line where it was, so the paper's headings still apply.
        input_of(&task).map(|i| i.headings).unwrap_or_default(),
        String::new(),
        format!("rewrite-{}.docx", task.id),
    )
    .await?;
    Ok(Success(crate::api::check::check_api::record_of(&check)))
}

/// Deletes a rewriting task; an unfinished one is cancelled first, refunding the share of the
/// paid characters its streamed text had not yet shown.
#[utoipa::path(post, path = "/api/base/paper_machine_api/delete", tag = "paper_machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_map_to_their_lines() {
        let text = "第一行\n第二行文字\n\n第四行";
        assert_eq!(line_ranges(text), vec![(0, 3), (4, 9), (10, 10), (11, 14)]);
        assert_eq!(
            lines_touching(text, [(5, 6), (12, 13)].into_iter()),
            vec![1, 3]
        );
        assert!(lines_touching(text, std::iter::empty()).is_empty());
    }

    #[test]
    fn frozen_terms_split_on_chinese_and_latin_separators() {
        assert_eq!(
            parse_frozen("卷积神经网络，LSTM、 注意力机制\nBERT;").unwrap(),
            vec!["卷积神经网络", "LSTM", "注意力机制", "BERT"]
        );
        assert!(parse_frozen(&"术语,".repeat(51)).is_err());
    }
}

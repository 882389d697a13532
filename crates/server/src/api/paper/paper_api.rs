//! `ai_paper_info_api` and `paper_info_api`: AI paper generation (论文生成).
//!
//! `paper_submit` (毕业论文), `paper_xueshu_submit` (学术论文) and `generate_paper` start a
//! paper and plan its outline — free, at most `MAX_ACTIVE` at a time per user. The user edits
//! the outline and `commit_paper` charges the length tier's price and queues the writing; the
//! sections appear in `load_by_id` / `query_content_list` as they are written. A finished
//! paper's sections can be edited (`update_content`, with versions to go back to), emptied
//! (`delete_content`) or written again with an instruction (`reload`), and downloaded as a
//! Word thesis (`download`).

use super::task::{KIND, PaperDoc, PaperInput, RELOAD_KIND, ReloadInput, Stage, Writing};
use crate::api::paper_task::{self, IdForm, ListForm, Queueing, RecordPage, TaskCost};
use crate::api::site::sys_config_api;
use crate::auth::AuthUser;
use crate::config::PriceTier;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::models::Feature;
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use compose::generate::{self, PaperRequest};
use compose::outline::{self, Degree, Outline, PaperKind};
use compose::thesis::CoverFields;
use serde::{Deserialize, Serialize};
use store::{Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

/// Papers a user may have planned or written at one time (outline or writing in progress).
pub const MAX_ACTIVE: usize = 2;

/// Shown on every page of the journey and in the API.
pub const DISCLAIMER: &str = "本文由 AI 生成，仅供写作参考：请逐段阅读、核实引用与数据，并改写为自己的文字后再使用。许多高校将未声明的 AI 生成内容视为学术不端。";

/// The longest text of one section a user may save.
const MAX_SECTION_CHARS: usize = 20_000;

fn not_found() -> ApiError {
    ApiError::not_found("paper_not_found", "论文不存在或已删除")
}

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct PaperForm {
    /// An existing paper whose outline is planned again (its other fields are kept unless given).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub id: Option<i64>,
    #[serde(default)]
    pub title: String,
    /// Field or major (专业), e.g. 计算机科学与技术.
    #[serde(default, alias = "major")]
    pub field: String,
    /// `thesis` (毕业论文, default) or `article` (学术论文/期刊论文).
    #[serde(default)]
    pub kind: Option<String>,
    /// `associate` (专科), `bachelor` (本科, default) or `master` (硕士); Chinese names too.
    #[serde(default)]
    pub degree: Option<String>,
    /// Target length in characters (字), 1,000 to 50,000; default 8,000.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub words: Option<i64>,
    /// Keywords separated by commas, 、 or spaces.
    #[serde(default)]
    pub keywords: String,
    /// The user's own references, one GB/T 7714 line each (at most `MAX_OWN_REFERENCES`):
    /// offered, beside library records, to the sections they suit.
    #[serde(default)]
    pub references: String,
    /// The user's own outline (自拟大纲), one heading per line in any common numbering style,
    /// with optional "（约N字）" budgets: planned from it instead of by the model. Budgets are
    /// made to add up to `words`.
    #[serde(default)]
    pub outline: String,
}

/// The outline a form gives, if any, checked and scaled to the request's length.
fn form_outline(form: &PaperForm, request: &PaperRequest) -> Result<Option<Outline>, ApiError> {
    if form.outline.trim().is_empty() {
        return Ok(None);
    }
    super::files::given_outline(&form.outline, Some(request.words)).map(Some)
}

/// Most references a user may bring.
pub const MAX_OWN_REFERENCES: usize = 50;

/// Pasted GB/T 7714 lines as references; an unreadable line is refused with its number.
fn own_references(text: &str) -> Result<Vec<compose::gbt7714::Reference>, ApiError> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() > MAX_OWN_REFERENCES {
        return Err(ApiError::bad_request(
            "too_many_references",
            format!(
                "参考文献最多 {MAX_OWN_REFERENCES} 条，现有 {} 条",
                lines.len()
            ),
        ));
    }
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let line: String = line.chars().take(500).collect();
            compose::gbt7714::parse_line(&line).ok_or_else(|| {
                let head: String = line.chars().take(30).collect();
                ApiError::bad_request(
                    "reference_unreadable",
                    format!(
                        "第 {} 条参考文献无法识别：“{head}”。请按 GB/T 7714 格式填写，例如：张三. 论文题目[J]. 期刊名, 2020, 12(3): 45-50.",
                        i + 1
                    ),
                )
            })
        })
        .collect()
}

/// What the page shows about a paper.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaperRecord {
    pub id: i64,
    pub title: String,
    pub field: String,
    /// thesis or article.
    pub kind: String,
    pub degree: String,
    /// Target length (字).
    pub words: u32,
    /// `outline_generating`, `outline_ready`, `outline_failed`, `writing`, `done`, `failed`,
    /// or `cancelled`.
    pub state: String,
    /// The task's status (queued, running, done, failed, cancelled).
    pub status: String,
    pub progress: i64,
    pub phase: String,
    pub error: Option<String>,
    /// Characters written so far.
    pub chars: usize,
    pub sections_total: usize,
    pub sections_done: usize,
    /// Sections shorter than asked after every attempt.
    pub weak_sections: usize,
    /// What stays charged (the price less any refund).
    pub charged_fen: i64,
    /// What a package paid instead: uses, or characters for rewriting.
    pub charged_units: i64,
    /// Given back because the paper came out shorter than 85 % of the length paid for.
    pub refunded_fen: i64,
    pub model: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A paper with its outline, what is being written now, and its price.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaperDetail {
    pub record: PaperRecord,
    #[schema(value_type = Option<Object>)]
    pub outline: Option<Outline>,
    /// The records retrieved for the outline's sections (by id): each a real library record.
    pub offered: Vec<OfferedReference>,
    #[schema(value_type = Option<Object>)]
    pub writing: Option<Writing>,
    pub notices: Vec<String>,
    pub price: PaperPrice,
    pub disclaimer: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfferedReference {
    pub library_id: u64,
    pub formatted: String,
    /// One of the user's own references (not a library record).
    pub own: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaperPrice {
    pub words: u32,
    /// What committing charges now: the tier's price, less what an earlier attempt that
    /// failed or was stopped kept for the sections it delivered (the writing resumes after them).
    pub price_fen: i64,
    /// Kept from an earlier attempt (0 for a paper not yet committed).
    #[serde(default)]
    pub paid_fen: i64,
    pub balance_fen: i64,
    /// `package`, `balance` or `insufficient`.
    pub pays_with: String,
    /// The user's 论文生成 packages, when any is held.
    pub package: Option<paper_task::PackagePayment>,
    /// Every tier, so the form can show prices before a paper exists.
    pub tiers: Vec<PriceTier>,
}

/// The written paper, section by section.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaperContent {
    pub id: i64,
    pub title: String,
    pub state: String,
    pub sections: Vec<SectionView>,
    /// Headings of chapters and sections that have no text of their own, for the page to
    /// show the structure: (number, title, level).
    pub headings: Vec<HeadingView>,
    pub abstract_zh: String,
    pub abstract_en: String,
    pub keywords: Vec<String>,
    /// The keywords in English, printed under the Abstract as "Key words".
    pub keywords_en: Vec<String>,
    pub references: Vec<ReferenceView>,
    #[schema(value_type = Option<Object>)]
    pub writing: Option<Writing>,
    /// Sections being written again, newest first.
    pub reloads: Vec<ReloadView>,
    pub chars: usize,
    pub disclaimer: String,
}

/// One entry of the reference list, in citation order: a library record, GB/T 7714 formatted.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceView {
    pub number: usize,
    /// The library record, or (from 2^40) the user's own reference.
    pub library_id: u64,
    pub title: String,
    pub formatted: String,
    /// One of the user's own references (not a library record).
    pub own: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SectionView {
    pub index: usize,
    pub heading: String,
    pub level: usize,
    pub text: String,
    pub chars: usize,
    pub weak: bool,
    /// Library record ids cited, in order.
    pub cited: Vec<u64>,
    /// Citation marks the engine placed on sentences sharing a record's specific wording (the
    /// model used the record without marking it); the page asks the user to check them.
    pub placed_citations: usize,
    /// Earlier versions kept (restore one with `update_content` and `version`).
    pub versions: usize,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeadingView {
    pub number: String,
    pub title: String,
    pub level: usize,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReloadView {
    pub id: i64,
    pub index: usize,
    pub status: String,
    pub error: Option<String>,
}

fn input_of(task: &Task) -> Option<PaperInput> {
    serde_json::from_str(&task.input).ok()
}

/// The journey's state of a paper task.
fn state_of(task: &Task, input: Option<&PaperInput>) -> &'static str {
    let writing = input.is_some_and(|i| i.stage == Stage::Write);
    match (task.status, writing) {
        (TaskStatus::Pending | TaskStatus::Queued | TaskStatus::Running, false) => {
            "outline_generating"
        }
        (TaskStatus::Done, false) => "outline_ready",
        (TaskStatus::Failed, false) => "outline_failed",
        (TaskStatus::Pending | TaskStatus::Queued | TaskStatus::Running, true) => "writing",
        (TaskStatus::Done, true) => "done",
        (TaskStatus::Failed, true) => "failed",
        (TaskStatus::Cancelled, _) => "cancelled",
    }
}

fn record(task: &Task) -> PaperRecord {
    let input = input_of(task);
    let doc = PaperDoc::of_task(task);
    let request = input.as_ref().map(|i| i.request.clone());
    let outline = doc
        .as_ref()
        .map(|d| &d.draft.outline)
        .or(input.as_ref().and_then(|i| i.outline.as_ref()));
    PaperRecord {
        id: task.id,
        title: task.title.clone(),
        field: request
            .as_ref()
            .map(|r| r.field.clone())
            .unwrap_or_default(),
        kind: request
            .as_ref()
            .map(|r| kind_name(r.kind))
            .unwrap_or_default()
            .into(),
        degree: request
            .as_ref()
            .map(|r| r.degree.label())
            .unwrap_or_default()
            .into(),
        words: request.as_ref().map_or(0, |r| r.words),
        state: state_of(task, input.as_ref()).into(),
        status: task.status.as_str().into(),
        progress: task.progress,
        phase: task.phase.clone(),
        error: task.error.clone(),
        chars: doc
            .as_ref()
            .filter(|d| d.stage == Stage::Write)
            .map_or(0, |d| d.draft.chars()),
        sections_total: outline.map_or(0, |o| o.leaves().len()),
        sections_done: doc
            .as_ref()
            .filter(|d| d.stage == Stage::Write)
            .map_or(0, |d| d.draft.sections.len()),
        weak_sections: doc
            .as_ref()
            .map_or(0, |d| d.draft.sections.iter().filter(|s| s.weak).count()),
        charged_fen: task.charged_fen,
        charged_units: task.charged_units,
        refunded_fen: doc.as_ref().map_or(0, |d| d.refunded_fen),
        model: doc.map(|d| d.model).unwrap_or_default(),
        created_at: task.created_at,
        updated_at: task.updated_at,
    }
}

fn kind_name(kind: PaperKind) -> &'static str {
    match kind {
        PaperKind::Thesis => "thesis",
        PaperKind::Article => "article",
    }
}

pub(super) async fn owned(state: &AppState, id: i64, user_id: i64) -> Result<Task, ApiError> {
    paper_task::owned_task(state, id, user_id, KIND, not_found).await
}

/// The request a form asks for, checked; `base` fills what the form leaves out.
fn request_of(
    form: &PaperForm,
    fixed_kind: Option<PaperKind>,
    base: Option<&PaperRequest>,
) -> Result<PaperRequest, ApiError> {
    let bad = |e: generate::ComposeError| ApiError::bad_request(e.code(), e.to_string());
    let title_given = paper_task::plain_line(&form.title);
    let title = match (title_given.is_empty(), base) {
        (true, Some(b)) => b.title.clone(),
        _ => generate::check_title(&title_given).map_err(bad)?,
    };
    let field = paper_task::plain_line(&form.field);
    let field = match (field.is_empty(), base) {
        (true, Some(b)) => b.field.clone(),
        (true, None) => {
            return Err(ApiError::bad_request(
                "field_missing",
                "请填写专业或研究领域",
            ));
        }
        _ if field.chars().count() > 30 => {
            return Err(ApiError::bad_request(
                "field_too_long",
                "专业名称最多 30 个字",
            ));
        }
        _ => field,
    };
    let kind = match (fixed_kind, form.kind.as_deref().map(str::trim)) {
        (Some(k), _) => k,
        (None, None | Some("")) => base.map_or(PaperKind::Thesis, |b| b.kind),
        (None, Some(k)) => PaperKind::parse(k).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_kind",
                "论文类型只能是毕业论文（thesis）或学术论文（article）",
            )
        })?,
    };
    let degree = match form.degree.as_deref().map(str::trim) {
        None | Some("") => base.map_or(Degree::Bachelor, |b| b.degree),
        Some(d) => Degree::parse(d).ok_or_else(|| {
            ApiError::bad_request("invalid_degree", "学历层次只能是专科、本科或硕士")
        })?,
    };
    let words = match form.words {
        Some(w) => u32::try_from(w).unwrap_or(0),
        None => base.map_or(8_000, |b| b.words),
    };
    generate::check_words(words).map_err(bad)?;
    let keywords: Vec<String> = if form.keywords.trim().is_empty() {
        base.map(|b| b.keywords.clone()).unwrap_or_default()
    } else {
        form.keywords
            .split([',', '，', '、', ';', '；', ' '])
            .map(paper_task::plain_line)
            .filter(|k| !k.is_empty())
            .map(|k| k.chars().take(20).collect())
            .take(8)
            .collect()
    };
    let own_references = if form.references.trim().is_empty() {
        base.map(|b| b.own_references.clone()).unwrap_or_default()
    } else {
        own_references(&form.references)?
    };
    Ok(PaperRequest {
        title,
        field,
        kind,
        degree,
        words,
        keywords,
        own_references,
    })
}

pub(super) fn model_missing(state: &AppState) -> Result<(), ApiError> {
    match state.models.unavailable(Feature::Paper) {
        Some(why) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "paper_model_missing",
            why,
        )),
        None => Ok(()),
    }
}

/// Refuses a new outline while `MAX_ACTIVE` papers are being planned or written.
async fn check_active(state: &AppState, user_id: i64) -> Result<(), ApiError> {
    let mut active = 0;
    for status in ["queued", "running"] {
        active += paper_task::list_records_upto(state, user_id, KIND, Some(status), 10)
            .await?
            .len();
    }
    if active >= MAX_ACTIVE {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "paper_busy",
            format!("最多同时生成 {MAX_ACTIVE} 篇论文，请等当前论文完成后再试"),
        ));
    }
    Ok(())
}

/// The free cost of planning an outline.
fn free(id: i64, request: &PaperRequest) -> TaskCost {
    free_of(id, request.words as usize, "outline_free")
}

/// A free task's cost (outlines, section rewrites, the graduation package) under `rule`.
pub(super) fn free_of(id: i64, chars: usize, rule: &str) -> TaskCost {
    TaskCost {
        id,
        chars,
        rule: rule.into(),
        price_per_thousand_fen: 0,
        price_fen: 0,
        pays_with: "balance".into(),
        package: None,
        free_checks: 0,
        balance_fen: 0,
        free_check_max_chars: None,
    }
}

async fn start(
    state: &AppState,
    user_id: i64,
    form: &PaperForm,
    fixed_kind: Option<PaperKind>,
) -> Result<Task, ApiError> {
    if let Some(id) = form.id {
        model_missing(state)?;
        return replan(state, user_id, id, form, fixed_kind).await;
    }
    // What the form asks for is checked first: a kind the site does not offer is said so even
    // while no model can write.
    let request = request_of(form, fixed_kind, None)?;
    offered(state, &request).await?;
    model_missing(state)?;
    let outline = form_outline(form, &request)?;
    check_active(state, user_id).await?;
    let input = PaperInput {
        request: request.clone(),
        stage: Stage::Outline,
        outline,
    };
    let task = state
        .store
        .create_task(user_id, KIND, &request.title, &json(&input)?)
        .await?;
    paper_task::charge_and_queue(state, &task, &free(task.id, &request), "论文大纲").await
}

/// Plans the outline of an existing paper again (only before it is committed, or after its
/// outline failed).
async fn replan(
    state: &AppState,
    user_id: i64,
    id: i64,
    form: &PaperForm,
    fixed_kind: Option<PaperKind>,
) -> Result<Task, ApiError> {
    let task = owned(state, id, user_id).await?;
    let input = input_of(&task).ok_or_else(not_found)?;
    if !matches!(
        state_of(&task, Some(&input)),
        "outline_ready" | "outline_failed"
    ) {
        return Err(ApiError::conflict(
            "paper_not_replannable",
            "只有大纲已生成或生成失败、尚未开始写作的论文可以重新生成大纲",
        ));
    }
    check_active(state, user_id).await?;
    let request = request_of(form, fixed_kind, Some(&input.request))?;
    offered(state, &request).await?;
    let input = PaperInput {
        outline: form_outline(form, &request)?,
        request: request.clone(),
        stage: Stage::Outline,
    };
    if request.title != task.title {
        state
            .store
            .update_task_title(task.id, user_id, &request.title)
            .await?;
    }
    paper_task::charge_and_queue_with(
        state,
        &task,
        &free(task.id, &request),
        "论文大纲",
        Queueing::Rerun(Some(json(&input)?)),
    )
    .await
}

/// A paper of a kind and degree level the operator has not switched off.
async fn offered(state: &AppState, request: &PaperRequest) -> Result<(), ApiError> {
    let degree = match request.degree {
        Degree::Associate => "associate",
        Degree::Bachelor => "bachelor",
        Degree::Master => "master",
    };
    sys_config_api::check_paper_options(state, kind_name(request.kind), degree).await
}

fn json<T: Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(ApiError::internal)
}

async fn detail(state: &AppState, task: &Task) -> Result<PaperDetail, ApiError> {
    let input = input_of(task);
    let doc = PaperDoc::of_task(task);
    let outline = doc
        .as_ref()
        .map(|d| d.draft.outline.clone())
        .or_else(|| input.as_ref().and_then(|i| i.outline.clone()));
    let mut offered: Vec<OfferedReference> = doc
        .as_ref()
        .map(|d| {
            d.draft
                .catalog
                .values()
                .map(|c| OfferedReference {
                    library_id: c.id,
                    formatted: compose::gbt7714::format(&c.reference),
                    own: generate::is_own_reference(c.id),
                })
                .collect()
        })
        .unwrap_or_default();
    offered.sort_by_key(|r| r.library_id);
    let words = input.as_ref().map_or(8_000, |i| i.request.words);
    Ok(PaperDetail {
        record: record(task),
        outline,
        offered,
        writing: doc.as_ref().and_then(|d| d.writing.clone()),
        notices: doc.map(|d| d.notices).unwrap_or_default(),
        price: price(state, task.user_id, words, Some(task)).await?,
        disclaimer: DISCLAIMER.into(),
    })
}

/// What the paper's writing costs now; `task`, when it failed or was stopped, has already paid
/// for what it delivered.
async fn price(
    state: &AppState,
    user_id: i64,
    words: u32,
    task: Option<&Task>,
) -> Result<PaperPrice, ApiError> {
    let tiers = crate::prices::Prices::current(state).await?.paper_tiers;
    let ended = task.filter(|t| matches!(t.status, TaskStatus::Failed | TaskStatus::Cancelled));
    let paid_fen = ended.map_or(0, |t| t.charged_fen.max(0));
    // A package use kept by an earlier attempt pays for the rest of the writing.
    let paid_by_package = ended.is_some_and(|t| t.charged_units > 0);
    let full_fen = PriceTier::price_of(&tiers, words).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "paper_price_missing",
            "论文生成的价格尚未配置，请联系管理员",
        )
    })?;
    let price_fen = if paid_by_package {
        0
    } else {
        (full_fen - paid_fen).max(0)
    };
    let balance_fen = state.store.account(user_id).await?.balance_fen;
    let mut package = paper_task::package_payment(
        state,
        user_id,
        paper_task::PackageUnits::PerTask(store::GrantKind::Paper),
        words as usize,
    )
    .await?;
    let most = state.config.package_paper_max_words;
    if let Some(p) = package.as_mut().filter(|_| words > most) {
        p.covers = false;
        p.note = Some(format!(
            "论文生成套餐仅适用于 {most} 字以内的论文，本篇 {words} 字由余额支付"
        ));
    }
    let pays_with = if paid_by_package || price_fen == 0 {
        "balance"
    } else if package.as_ref().is_some_and(|p| p.covers) && paid_fen == 0 {
        "package"
    } else if balance_fen >= price_fen {
        "balance"
    } else {
        "insufficient"
    };
    Ok(PaperPrice {
        words,
        price_fen,
        paid_fen,
        balance_fen,
        pays_with: pays_with.into(),
        package,
        tiers,
    })
}

/// Starts a 毕业论文: plans its outline (free). The result's `state` moves from
/// `outline_generating` to `outline_ready`.
#[utoipa::path(post, path = "/api/base/paper_info_api/paper_submit", tag = "paper_info_api", security(("bearer" = [])),
    params(PaperForm), request_body = PaperForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PaperDetail>)),
        (status = 400, description = "title_invalid, field_missing, words_out_of_range, invalid_degree, option_disabled…", body = crate::envelope::ErrorBody),
        (status = 429, description = "paper_busy", body = crate::envelope::ErrorBody),
        (status = 503, description = "paper_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn paper_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<PaperForm>,
) -> ApiResult<PaperDetail> {
    let task = start(&state, session.user.id, &form, Some(PaperKind::Thesis)).await?;
    Ok(Success(detail(&state, &task).await?))
}

/// Starts a 学术论文 (journal article): as `paper_submit`.
#[utoipa::path(post, path = "/api/base/paper_info_api/paper_xueshu_submit", tag = "paper_info_api", security(("bearer" = [])),
    params(PaperForm), request_body = PaperForm,
    responses((status = 200, body = inline(crate::envelope::Envelope<PaperDetail>))))]
pub async fn paper_xueshu_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<PaperForm>,
) -> ApiResult<PaperDetail> {
    let task = start(&state, session.user.id, &form, Some(PaperKind::Article)).await?;
    Ok(Success(detail(&state, &task).await?))
}

/// Starts a paper of the form's `kind`, or (with `id`) plans an uncommitted paper's outline again.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/generate_paper", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(PaperForm), request_body = PaperForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PaperDetail>)),
        (status = 409, description = "paper_not_replannable", body = crate::envelope::ErrorBody),
    ))]
pub async fn generate_paper(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<PaperForm>,
) -> ApiResult<PaperDetail> {
    let task = start(&state, session.user.id, &form, None).await?;
    Ok(Success(detail(&state, &task).await?))
}

/// The user's papers, newest first.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/query_list", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(ListForm), request_body = ListForm,
    responses((status = 200, body = inline(crate::envelope::Envelope<RecordPage<PaperRecord>>))))]
pub async fn query_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ListForm>,
) -> ApiResult<RecordPage<PaperRecord>> {
    Ok(Success(
        paper_task::list_records(&state, session.user.id, KIND, &form, record).await?,
    ))
}

/// One paper: its state, outline, the records retrieved for it, the section being written,
/// and its price.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/load_by_id", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(IdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PaperDetail>)),
        (status = 404, description = "paper_not_found (also another user's)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<PaperDetail> {
    let task = owned(&state, form.id, session.user.id).await?;
    Ok(Success(detail(&state, &task).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct CommitForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// The outline as edited (chapters → children, each with `title` and `budget`); absent:
    /// the planned one. Budgets are scaled to sum to the target length.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub outline: Option<Outline>,
}

/// Commits the outline (as edited) and starts the writing: the length tier's price is charged
/// from the balance once; a failure refunds it.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/commit_paper", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(("X-Confirmed-Payment" = Option<String>, Header, description = "What the confirmed price dialog said would pay: free_check, package or balance; the charge is refused (412) when that changed"), ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the dialog showed; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")),
    request_body = CommitForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PaperDetail>)),
        (status = 400, description = "outline_empty, outline_too_many_sections, outline_empty_title…", body = crate::envelope::ErrorBody),
        (status = 402, description = "insufficient_balance", body = crate::envelope::ErrorBody),
        (status = 412, description = "payment_changed: X-Confirmed-Payment no longer says what would pay; nothing charged", body = crate::envelope::ErrorBody),
        (status = 409, description = "paper_not_committable", body = crate::envelope::ErrorBody),
    ))]
pub async fn commit_paper(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<CommitForm>,
) -> ApiResult<PaperDetail> {
    model_missing(&state)?;
    let user_id = session.user.id;
    let task = owned(&state, form.id, user_id).await?;
    let input = input_of(&task).ok_or_else(not_found)?;
    let planned = PaperDoc::of_task(&task).map(|d| d.draft.outline);
    let committable = match state_of(&task, Some(&input)) {
        "outline_ready" => true,
        // A failed or cancelled writing may be committed again (it resumes where it stopped).
        "failed" | "cancelled" => input.outline.is_some(),
        _ => false,
    };
    if !committable {
        return Err(ApiError::conflict(
            "paper_not_committable",
            "大纲尚未生成，或论文已在写作中或已完成",
        ));
    }
    let mut outline = form
        .outline
        .or(planned)
        .or(input.outline.clone())
        .ok_or_else(|| ApiError::bad_request("outline_empty", "大纲为空：至少需要一章"))?;
    let bad = |e: outline::OutlineError| ApiError::bad_request(e.code(), e.to_string());
    tidy_outline(&mut outline);
    let words = input.request.words;
    if outline.total_budget() == 0
        || outline.total_budget().abs_diff(u64::from(words)) * 10 > u64::from(words)
    {
        outline::allocate_budgets(&mut outline, words);
    }
    outline::validate(&outline, words).map_err(bad)?;
    let price = price(&state, user_id, words, Some(&task)).await?;
    let cost = TaskCost {
        id: task.id,
        chars: words as usize,
        rule: "paper_tier".into(),
        price_per_thousand_fen: 0,
        price_fen: price.price_fen,
        pays_with: price.pays_with.clone(),
        package: price.package.clone(),
        free_checks: 0,
        balance_fen: price.balance_fen,
        free_check_max_chars: None,
    };
    confirmed.check(&cost)?;
    let input = PaperInput {
        request: input.request,
        stage: Stage::Write,
        outline: Some(outline),
    };
    let task = paper_task::charge_and_queue_with(
        &state,
        &task,
        &cost,
        "论文生成",
        Queueing::Rerun(Some(json(&input)?)),
    )
    .await?;
    Ok(Success(detail(&state, &task).await?))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct OutlineForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// The outline as edited so far (chapters → children, each with `title` and `budget`).
    #[schema(value_type = Object)]
    pub outline: Outline,
}

/// Keeps the outline as edited so far, before it is committed: leaving the page or opening it
/// on another device loses nothing. Budgets need not add up yet (`commit_paper` checks them).
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/update_outline", tag = "ai_paper_info_api", security(("bearer" = [])),
    request_body = OutlineForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 400, description = "outline_empty, outline_too_many_sections, outline_title_too_long…", body = crate::envelope::ErrorBody),
        (status = 404, description = "paper_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "outline_not_editable, paper_changed", body = crate::envelope::ErrorBody),
    ))]
pub async fn update_outline(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<OutlineForm>,
) -> ApiResult<bool> {
    let task = owned(&state, form.id, session.user.id).await?;
    let input = input_of(&task).ok_or_else(not_found)?;
    let mut doc = PaperDoc::of_task(&task)
        .filter(|d| d.stage == Stage::Outline && state_of(&task, Some(&input)) == "outline_ready")
        .ok_or_else(|| ApiError::conflict("outline_not_editable", "大纲只能在确认写作之前修改"))?;
    let mut outline = form.outline;
    tidy_outline(&mut outline);
    super::files::check_structure(&outline)?;
    doc.draft.outline = outline;
    let read = task.result.as_deref().unwrap_or_default();
    let stored = state
        .store
        .replace_task_result(task.id, task.user_id, read, &json(&doc)?)
        .await?;
    if !stored {
        return Err(ApiError::conflict(
            "paper_changed",
            "大纲刚刚在别处被修改，请刷新后再改",
        ));
    }
    Ok(Success(true))
}

/// Titles trimmed to plain lines; the references retrieved stay with unchanged titles only
/// (a renamed section is searched again when the writing starts).
fn tidy_outline(outline: &mut Outline) {
    fn walk(nodes: &mut [compose::outline::Node]) {
        for node in nodes {
            node.title = outline::clean_title(&paper_task::plain_line(&node.title));
            walk(&mut node.children);
            if !node.children.is_empty() {
                node.budget = node.children.iter().map(|c| c.budget).sum();
            }
        }
    }
    walk(&mut outline.chapters);
}

fn content(task: &Task, reloads: Vec<ReloadView>) -> Result<PaperContent, ApiError> {
    let doc = PaperDoc::of_task(task)
        .filter(|d| d.stage == Stage::Write)
        .ok_or_else(|| ApiError::conflict("paper_not_written", "论文尚未开始写作：请先确认大纲"))?;
    let sections = doc
        .draft
        .sections
        .iter()
        .enumerate()
        .map(|(index, s)| SectionView {
            index,
            heading: s.heading.clone(),
            level: s.path.len(),
            text: s.text.clone(),
            chars: generate::counted_chars(&s.text),
            weak: s.weak,
            cited: s.cited.clone(),
            placed_citations: s.placed_citations,
            versions: doc.versions.get(&index).map_or(0, Vec::len),
        })
        .collect();
    let headings = doc
        .draft
        .outline
        .numbered_titles()
        .into_iter()
        .map(|(number, title, level)| HeadingView {
            number,
            title,
            level,
        })
        .collect();
    Ok(PaperContent {
        id: task.id,
        title: task.title.clone(),
        state: state_of(task, input_of(task).as_ref()).into(),
        sections,
        headings,
        abstract_zh: doc.draft.abstract_zh.clone(),
        abstract_en: doc.draft.abstract_en.clone(),
        keywords: doc.draft.keywords.clone(),
        keywords_en: doc.draft.keywords_en.clone(),
        references: doc
            .draft
            .references()
            .into_iter()
            .enumerate()
            .map(|(i, r)| ReferenceView {
                number: i + 1,
                own: generate::is_own_reference(r.library_id),
                library_id: r.library_id,
                title: r.title,
                formatted: r.formatted,
            })
            .collect(),
        writing: doc.writing.clone(),
        reloads,
        chars: doc.draft.chars(),
        disclaimer: DISCLAIMER.into(),
    })
}

/// The paper's sections being written again (newest first).
async fn reloads(
    state: &AppState,
    user_id: i64,
    paper_id: i64,
) -> Result<Vec<ReloadView>, ApiError> {
    let tasks = paper_task::list_records_upto(state, user_id, RELOAD_KIND, None, 50).await?;
    Ok(tasks
        .iter()
        .filter_map(|t| {
            let input: ReloadInput = serde_json::from_str(&t.input).ok()?;
            (input.paper_id == paper_id).then(|| ReloadView {
                id: t.id,
                index: input.index,
                status: t.status.as_str().into(),
                error: t.error.clone(),
            })
        })
        .take(10)
        .collect())
}

/// The paper's sections as written so far (also while it is being written), its abstract and
/// its references.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/query_content_list", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(IdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PaperContent>)),
        (status = 404, description = "paper_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "paper_not_written", body = crate::envelope::ErrorBody),
    ))]
pub async fn query_content_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<PaperContent> {
    let task = owned(&state, form.id, session.user.id).await?;
    let reloads = reloads(&state, session.user.id, task.id).await?;
    Ok(Success(content(&task, reloads)?))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SectionForm {
    /// The paper.
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// The section, 0-based in reading order (`SectionView.index`).
    #[serde(deserialize_with = "lenient::i64")]
    pub index: i64,
    /// `update_content`: the new text.
    #[serde(default)]
    pub text: Option<String>,
    /// `update_content`: restore this earlier version instead (0 = oldest kept).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub version: Option<i64>,
    /// `reload`: what to change (更学术, 扩写到800字, 加一个表格…); empty: write it again.
    #[serde(default)]
    pub instruction: Option<String>,
}

/// A finished paper, for editing.
async fn finished(state: &AppState, id: i64, user_id: i64) -> Result<(Task, PaperDoc), ApiError> {
    let task = owned(state, id, user_id).await?;
    let doc = PaperDoc::of_task(&task)
        .filter(|d| d.stage == Stage::Write && task.status == TaskStatus::Done)
        .ok_or_else(|| ApiError::conflict("paper_not_finished", "论文写完后才能修改单节内容"))?;
    Ok((task, doc))
}

fn section_index(doc: &PaperDoc, index: i64) -> Result<usize, ApiError> {
    usize::try_from(index)
        .ok()
        .filter(|&i| i < doc.draft.sections.len())
        .ok_or_else(|| ApiError::not_found("section_not_found", "该节不存在"))
}

/// Replaces a section's text (the earlier one kept as a version), or restores an earlier version.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/update_content", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(SectionForm), request_body = SectionForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PaperContent>)),
        (status = 400, description = "section_text_missing, section_too_long, version_not_found", body = crate::envelope::ErrorBody),
        (status = 404, description = "paper_not_found, section_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "paper_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn update_content(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<SectionForm>,
) -> ApiResult<PaperContent> {
    let user_id = session.user.id;
    let (task, mut doc) = finished(&state, form.id, user_id).await?;
    let index = section_index(&doc, form.index)?;
    let text = match (form.version, form.text) {
        (Some(v), _) => doc
            .versions
            .get(&index)
            .and_then(|vs| vs.get(usize::try_from(v).ok()?))
            .cloned()
            .ok_or_else(|| ApiError::bad_request("version_not_found", "没有这个历史版本"))?,
        (None, Some(text)) => {
            let text = text.replace("\r\n", "\n").trim().to_string();
            if text.chars().count() > MAX_SECTION_CHARS {
                return Err(ApiError::bad_request(
                    "section_too_long",
                    format!("一节最多 {MAX_SECTION_CHARS} 字"),
                ));
            }
            text
        }
        (None, None) => {
            return Err(ApiError::bad_request(
                "section_text_missing",
                "请提供新的正文（text）或要恢复的版本（version）",
            ));
        }
    };
    doc.replace_section(index, text);
    Ok(Success(save(&state, &task, &doc).await?))
}

/// Empties a section (its text kept as a version, so it can be restored).
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/delete_content", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(SectionForm),
    responses((status = 200, body = inline(crate::envelope::Envelope<PaperContent>))))]
pub async fn delete_content(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<SectionForm>,
) -> ApiResult<PaperContent> {
    let user_id = session.user.id;
    let (task, mut doc) = finished(&state, form.id, user_id).await?;
    let index = section_index(&doc, form.index)?;
    doc.replace_section(index, String::new());
    Ok(Success(save(&state, &task, &doc).await?))
}

/// Stores an edited paper and answers with its content as it now stands. The paper must still
/// be as `task` read it: an edit saved elsewhere meanwhile (another tab, a section rewrite that
/// just finished) is never overwritten.
async fn save(state: &AppState, task: &Task, doc: &PaperDoc) -> Result<PaperContent, ApiError> {
    let read = task.result.as_deref().unwrap_or_default();
    let stored = state
        .store
        .replace_task_result(task.id, task.user_id, read, &json(doc)?)
        .await?;
    if !stored {
        return Err(ApiError::conflict(
            "paper_changed",
            "论文刚刚在别处被修改（另一个窗口或刚完成的重写），本次修改未保存：请刷新后再改",
        ));
    }
    let task = owned(state, task.id, task.user_id).await?;
    content(&task, reloads(state, task.user_id, task.id).await?)
}

/// Writes a section again with an optional instruction, as a task (free; one at a time per
/// paper). The new text replaces the old, which is kept as a version.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/reload", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(SectionForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ReloadView>)),
        (status = 409, description = "paper_not_finished, reload_in_progress", body = crate::envelope::ErrorBody),
    ))]
pub async fn reload(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<SectionForm>,
) -> ApiResult<ReloadView> {
    model_missing(&state)?;
    let user_id = session.user.id;
    let (task, doc) = finished(&state, form.id, user_id).await?;
    let index = section_index(&doc, form.index)?;
    let instruction = form.instruction.unwrap_or_default().trim().to_string();
    if instruction.chars().count() > generate::MAX_INSTRUCTION_CHARS {
        return Err(ApiError::bad_request(
            "instruction_too_long",
            format!("修改要求最多 {} 字", generate::MAX_INSTRUCTION_CHARS),
        ));
    }
    let busy = reloads(&state, user_id, task.id)
        .await?
        .iter()
        .any(|r| matches!(r.status.as_str(), "queued" | "running"));
    if busy {
        return Err(ApiError::conflict(
            "reload_in_progress",
            "这篇论文已有一节正在重写，请等它完成",
        ));
    }
    let input = ReloadInput {
        paper_id: task.id,
        index,
        instruction,
    };
    let heading = doc.draft.sections[index].heading.clone();
    let reload = state
        .store
        .create_task(user_id, RELOAD_KIND, &heading, &json(&input)?)
        .await?;
    let reload =
        paper_task::charge_and_queue(&state, &reload, &free(reload.id, &doc.request), "重写单节")
            .await?;
    Ok(Success(ReloadView {
        id: reload.id,
        index,
        status: reload.status.as_str().into(),
        error: None,
    }))
}

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct DownloadForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    #[serde(default)]
    pub school: String,
    #[serde(default)]
    pub major: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub student_number: String,
    #[serde(default)]
    pub supervisor: String,
    #[serde(default)]
    pub date: String,
    #[serde(default)]
    pub acknowledgements: String,
    /// A document of the graduation package instead of the paper: `proposal` (开题报告),
    /// `task_book` (任务书) or `review` (文献综述), once written (`load_other_by_id`).
    #[serde(default)]
    pub other: Option<String>,
}

/// The finished paper as a Word thesis (.docx): cover with the fields given, abstracts, a
/// table of contents, numbered headings, references and acknowledgements.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/download", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(DownloadForm),
    responses(
        (status = 200, description = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        (status = 409, description = "paper_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn download(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<DownloadForm>,
) -> Result<Response, ApiError> {
    let (task, doc) = finished(&state, form.id, session.user.id).await?;
    let line = |s: &str| -> String { paper_task::plain_line(s).chars().take(60).collect() };
    let other = match form.other.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(asked) => {
            Some(super::package::finished_other(&state, session.user.id, task.id, asked).await?)
        }
    };
    let cover = CoverFields {
        cover: docio::thesis::Cover {
            title: String::new(),
            school: line(&form.school),
            major: {
                let major = line(&form.major);
                if major.is_empty() {
                    doc.request.field.clone()
                } else {
                    major
                }
            },
            name: line(&form.name),
            student_number: line(&form.student_number),
            supervisor: line(&form.supervisor),
            date: line(&form.date),
            kind_label: String::new(),
        },
        acknowledgements: form.acknowledgements.chars().take(2_000).collect(),
    };
    let name = match &other {
        Some(o) => format!("{}-{}.docx", task.title, o.other.label()),
        None => format!("{}.docx", task.title),
    };
    let bytes = tokio::task::spawn_blocking(move || match other {
        Some(o) => docio::thesis::write_thesis_docx(&compose::package::to_document(
            o.other,
            &o.request,
            &o.draft,
            &cover.cover,
        )),
        None => compose::thesis::to_docx(&doc.request, &doc.draft, &cover),
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?;
    Ok(paper_task::attachment(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        bytes,
        &format!("paper-{}.docx", task.id),
        &name,
    ))
}

/// Deletes a paper; one being written is cancelled first, refunding the share not yet written.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/delete", tag = "ai_paper_info_api", security(("bearer" = [])),
    params(IdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 404, description = "paper_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<bool> {
    owned(&state, form.id, session.user.id).await?;
    paper_task::delete_task(&state, KIND, form.id, session.user.id).await?;
    // Its graduation package goes with it.
    for (_, other) in super::package::package_tasks(&state, session.user.id, form.id).await? {
        paper_task::delete_task(
            &state,
            super::package::OTHER_KIND,
            other.id,
            session.user.id,
        )
        .await?;
    }
    Ok(Success(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_becomes_a_checked_request() {
        let form = PaperForm {
            title: "  基于深度学习的图像识别研究 ".into(),
            field: "计算机科学与技术".into(),
            degree: Some("硕士".into()),
            words: Some(10_000),
            keywords: "深度学习，图像识别、卷积神经网络".into(),
            ..PaperForm::default()
        };
        let r = request_of(&form, None, None).unwrap();
        assert_eq!(r.title, "基于深度学习的图像识别研究");
        assert_eq!(r.degree, Degree::Master);
        assert_eq!(r.kind, PaperKind::Thesis);
        assert_eq!(r.keywords, ["深度学习", "图像识别", "卷积神经网络"]);
        let code = |f: PaperForm| request_of(&f, None, None).unwrap_err().code;
        assert_eq!(
            code(PaperForm {
                title: "论".into(),
                ..PaperForm::default()
            }),
            "title_invalid"
        );
        assert_eq!(
            code(PaperForm {
                title: "论".repeat(300),
                ..PaperForm::default()
            }),
            "title_invalid"
        );
        assert_eq!(
            code(PaperForm {
                title: "有效的题目".into(),
                ..PaperForm::default()
            }),
            "field_missing"
        );
        assert_eq!(
            code(PaperForm {
                title: "有效的题目".into(),
                field: "法学".into(),
                words: Some(200_000),
                ..PaperForm::default()
            }),
            "words_out_of_range"
        );
        assert_eq!(
            code(PaperForm {
                title: "有效的题目".into(),
                field: "法学".into(),
                degree: Some("博士后".into()),
                ..PaperForm::default()
            }),
            "invalid_degree"
        );
        // Planning again keeps what the form leaves out.
        let again = request_of(&PaperForm::default(), None, Some(&r)).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn prices_follow_the_first_tier_long_enough() {
        let tiers = crate::Config::default().paper_price_tiers;
        assert_eq!(PriceTier::price_of(&tiers, 5_000), Some(2_990));
        assert_eq!(PriceTier::price_of(&tiers, 5_001), Some(3_990));
        assert_eq!(PriceTier::price_of(&tiers, 99_999), Some(17_990));
        assert_eq!(PriceTier::price_of(&[], 5_000), None);
    }
}

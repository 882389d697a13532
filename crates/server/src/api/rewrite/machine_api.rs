//! `machine_api`: rewriting pasted text rather than a paper — paragraph rewriting (`machine_cnki_*`:
//! lower similarity, AI traces or both, with a strength) and smart rewriting (`machine_*`: polish,
//! expand, shorten, academic tone). Each is a rewrite task like a paper's: priced per 1,000
//! characters, paid from the balance, every paragraph re-measured by our own engines, and the
//! attempt in progress streamed into the task's draft so the page shows it as it is written. The
//! comparison, choice and payment-state calls of `paper_machine_api` serve these tasks too.

use crate::api::paper_task::{self, IdForm, RecordPage, WordCount};
use crate::api::rewrite::paper_machine_api::{
    self, COUNTING_RULE, ComparedLine, RewriteRecord, SubmitForm, not_found, record, require_model,
};
use crate::api::rewrite::task::{self as rewrite_task, RewriteInput};
use crate::auth::{AuthUser, MaybeUser};
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::http::StatusCode;
use axum::response::Response;
use rewrite::{Goal, Strength};
use serde::{Deserialize, Serialize};
use store::TaskStatus;
use utoipa::{IntoParams, ToSchema};

/// Pasted text beyond this goes to the paper rewrite, which takes files and keeps headings.
pub const MAX_CHARS: usize = 5000;

/// Text to rewrite and how.
#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PasteForm {
    /// The text, one paragraph per line (at most 5,000 counted characters).
    #[serde(default)]
    pub text: String,
    /// A name for the record (default: the first words of the text).
    #[serde(default)]
    pub title: String,
    /// Paragraph rewriting: similarity (default), aigc or both. Smart rewriting: polish
    /// (default), expand, shorten or academic.
    #[serde(default)]
    pub goal: Option<String>,
    /// light, medium (default) or strong.
    #[serde(default)]
    pub strength: Option<String>,
    /// Terms to keep verbatim, separated by commas, 、 or new lines.
    #[serde(default)]
    pub frozen: Option<String>,
}

/// Paragraphs of pasted text: line breaks normalised, lines trimmed, blank lines dropped.
fn paragraphs_of(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The input of a rewrite of pasted paragraphs, with the default choices.
fn pasted(text: String) -> RewriteInput {
    RewriteInput {
        text,
        headings: vec![],
        goal: Goal::Similarity,
        strength: Strength::Medium,
        frozen: vec![],
        only: None,
        source_task: None,
        owner: None,
        file_name: String::new(),
        chars: 0,
        rerun: None,
    }
}

fn title_of(form: &PasteForm, text: &str) -> String {
    let given = crate::api::paper_task::plain_line(&form.title);
    if !given.is_empty() {
        return given.chars().take(100).collect();
    }
    let head: String = crate::api::paper_task::plain_line(text)
        .chars()
        .take(20)
        .collect();
    if text.chars().count() > 20 {
        format!("{head}…")
    } else {
        head
    }
}

/// Creates a draft of `kind` from pasted text; nothing is charged until it is submitted.
async fn init(
    state: &AppState,
    user_id: i64,
    kind: &str,
    form: PasteForm,
) -> Result<RewriteRecord, ApiError> {
    require_model(state)?;
    let text = paragraphs_of(&form.text);
    if text.is_empty() {
        return Err(ApiError::bad_request("empty_text", "请粘贴需要改写的文字"));
    }
    let chars = aidetect::counted_chars(&text);
    if chars > MAX_CHARS {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_many_characters",
            format!(
                "一次最多改写 {MAX_CHARS} 字（当前 {chars} 字）；整篇论文请使用「论文降重」上传文件"
            ),
        ));
    }
    let title = title_of(&form, &text);
    let mut input = pasted(text);
    input.goal = paper_machine_api::goals_of(kind)[0];
    input.owner = Some(user_id);
    paper_machine_api::apply_choices(
        &mut input,
        kind,
        form.goal.as_deref(),
        form.strength.as_deref(),
        form.frozen.as_deref(),
    )?;
    let task = paper_machine_api::create_draft_of(state, user_id, kind, &title, input).await?;
    Ok(record(&task))
}

/// Charges for and queues a draft of `kind`.
async fn submit(
    state: &AppState,
    user_id: i64,
    kind: &str,
    form: &SubmitForm,
    service: &str,
    confirmed: &paper_task::ConfirmedPayment,
) -> Result<RewriteRecord, ApiError> {
    require_model(state)?;
    let task = paper_machine_api::owned(state, form.id, user_id).await?;
    if task.kind != kind {
        return Err(not_found());
    }
    paper_machine_api::submit_draft(state, user_id, task, form, service, confirmed).await
}

/// Pasted text to count.
#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TextForm {
    #[serde(default)]
    pub text: String,
}

/// Counts what rewriting pasted text would be priced on (visitors too).
#[utoipa::path(post, path = "/api/base/machine_api/word_count", tag = "machine_api",
    params(TextForm), request_body = TextForm,
    responses((status = 200, body = inline(crate::envelope::Envelope<WordCount>))))]
pub async fn word_count(_who: MaybeUser, Params(form): Params<TextForm>) -> ApiResult<WordCount> {
    let input = pasted(paragraphs_of(&form.text));
    Ok(Success(WordCount {
        chars: input.selected_chars(),
        rule: COUNTING_RULE.into(),
        format: "txt".into(),
    }))
}

/// Paragraph rewriting (段落改写): a draft that lowers the similarity, the AI traces or both
/// of pasted paragraphs. Pay with `machine_cnki_submit`.
#[utoipa::path(post, path = "/api/base/machine_api/machine_cnki_init", tag = "machine_api", security(("bearer" = [])),
    params(PasteForm), request_body = PasteForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 400, description = "empty_text / invalid_goal / invalid_strength / too_many_frozen_terms", body = crate::envelope::ErrorBody),
        (status = 413, description = "too_many_characters (over 5,000)", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite (every line under 20 characters)", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn machine_cnki_init(
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<PasteForm>,
) -> ApiResult<RewriteRecord> {
    Ok(Success(
        init(&state, session.user.id, rewrite_task::PARAGRAPH_KIND, form).await?,
    ))
}

/// Smart rewriting (智能改写): a draft that polishes, expands, shortens or makes academic the
/// pasted paragraphs. Pay with `machine_submit`.
#[utoipa::path(post, path = "/api/base/machine_api/machine_init", tag = "machine_api", security(("bearer" = [])),
    params(PasteForm), request_body = PasteForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 400, description = "empty_text / invalid_goal / invalid_strength / too_many_frozen_terms", body = crate::envelope::ErrorBody),
        (status = 413, description = "too_many_characters (over 5,000)", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn machine_init(
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<PasteForm>,
) -> ApiResult<RewriteRecord> {
    Ok(Success(
        init(&state, session.user.id, rewrite_task::SMART_KIND, form).await?,
    ))
}

/// Charges the balance for a paragraph-rewriting draft and queues it (the goal, strength and
/// frozen terms may be changed here).
#[utoipa::path(post, path = "/api/base/machine_api/machine_cnki_submit", tag = "machine_api", security(("bearer" = [])),
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
pub async fn machine_cnki_submit(
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<SubmitForm>,
) -> ApiResult<RewriteRecord> {
    Ok(Success(
        submit(
            &state,
            session.user.id,
            rewrite_task::PARAGRAPH_KIND,
            &form,
            "段落改写",
            &confirmed,
        )
        .await?,
    ))
}

/// Charges the balance for a smart-rewriting draft and queues it.
#[utoipa::path(post, path = "/api/base/machine_api/machine_submit", tag = "machine_api", security(("bearer" = [])),
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
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<SubmitForm>,
) -> ApiResult<RewriteRecord> {
    Ok(Success(
        submit(
            &state,
            session.user.id,
            rewrite_task::SMART_KIND,
            &form,
            "智能改写",
            &confirmed,
        )
        .await?,
    ))
}

/// Which records to list.
#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MachineListForm {
    /// `cnki` (paragraph rewriting, default) or `smart`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub size: Option<i64>,
    #[serde(default)]
    pub status: Option<String>,
}

/// The user's paragraph or smart rewrites, newest first.
#[utoipa::path(post, path = "/api/base/machine_api/query_list", tag = "machine_api", security(("bearer" = [])),
    params(MachineListForm), request_body = MachineListForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RecordPage<RewriteRecord>>)),
        (status = 400, description = "invalid_type", body = crate::envelope::ErrorBody),
    ))]
pub async fn query_list(
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<MachineListForm>,
) -> ApiResult<RecordPage<RewriteRecord>> {
    let kind = match form.kind.as_deref().unwrap_or("cnki") {
        "cnki" | "" => rewrite_task::PARAGRAPH_KIND,
        "smart" => rewrite_task::SMART_KIND,
        _ => {
            return Err(ApiError::bad_request(
                "invalid_type",
                "记录类型只能是 cnki 或 smart",
            ));
        }
    };
    let list = paper_task::ListForm {
        page: form.page,
        size: form.size,
        status: form.status,
    };
    Ok(Success(
        paper_task::list_records(&state, session.user.id, kind, &list, record).await?,
    ))
}

/// A paragraph or smart rewrite: the record (with the text streaming in while it runs) and,
/// once done, every paragraph with its rewrite and measured figures.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDetail {
    pub record: RewriteRecord,
    /// The pasted paragraphs; `rewrite` filled once done.
    pub lines: Vec<ComparedLine>,
    /// The least meaning similarity a rewrite had to keep.
    pub meaning_min: f64,
}

/// One paragraph or smart rewrite (any rewrite kind of the user's).
#[utoipa::path(post, path = "/api/base/machine_api/load_by_id", tag = "machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<MachineDetail>)),
        (status = 404, description = "rewrite_not_found (also for another user's)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<MachineDetail> {
    let task = paper_machine_api::owned(&state, form.id, session.user.id).await?;
    let lines = match paper_machine_api::result_of(&task) {
        Some(result) if task.status == TaskStatus::Done => result
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| paper_machine_api::compared(i, l))
            .collect(),
        _ => paper_machine_api::input_of(&task)
            .map(|input| {
                input
                    .lines()
                    .iter()
                    .enumerate()
                    .map(|(i, text)| ComparedLine {
                        index: i,
                        text: text.to_string(),
                        heading: None,
                        rewrite: None,
                        choice: None,
                        uses_rewrite: false,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    Ok(Success(MachineDetail {
        record: record(&task),
        lines,
        meaning_min: rewrite::judged::MEANING_MIN,
    }))
}

/// Deletes a paragraph or smart rewrite; an unfinished one is cancelled first, refunding the
/// share of the paid characters its streamed text had not yet shown.
#[utoipa::path(post, path = "/api/base/machine_api/delete", tag = "machine_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn delete(
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<bool> {
    paper_machine_api::owned(&state, form.id, session.user.id).await?;
    paper_task::delete_task(&state, paper_machine_api::FILES, form.id, session.user.id).await?;
    Ok(Success(true))
}

fn percent(value: Option<f64>) -> String {
    value.map_or("—".into(), |v| format!("{v:.1}%"))
}

fn probability(value: Option<f64>) -> String {
    value.map_or("—".into(), |v| format!("{:.0}%", v * 100.0))
}

/// The rewrite report as .docx: for each paragraph the original, the rewrite, the measured
/// figures and the verdict, then the model and the rules it was judged by.
#[utoipa::path(get, path = "/api/base/machine_api/download_report", tag = "machine_api", security(("bearer" = [])),
    params(IdForm),
    responses(
        (status = 200, description = "the .docx", content_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        (status = 404, description = "rewrite_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "rewrite_not_finished", body = crate::envelope::ErrorBody),
    ))]
pub async fn download_report(
    axum::extract::State(state): axum::extract::State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> Result<Response, ApiError> {
    let (task, result) = paper_machine_api::finished(&state, form.id, session.user.id).await?;
    let heading = |text: String, level: u8| docio::OutParagraph {
        text,
        heading: Some(level),
    };
    let body = |text: String| docio::OutParagraph {
        text,
        heading: None,
    };
    let r = record(&task);
    let mut out = vec![
        heading(format!("{}（改写报告）", task.title), 1),
        body(format!(
            "改写目标：{}；强度：{}；模型：{}；提示词版本：{}",
            result.goal.label(),
            result.strength.as_str(),
            result.model,
            result.prompt_version
        )),
        body(format!(
            "采用改写 {} 段；复制比 {} → {}；AI 概率 {} → {}（均为文鉴引擎对改写前后文字的实测值）",
            r.accepted.unwrap_or(0),
            percent(r.similarity_before),
            percent(r.similarity_after),
            probability(r.ai_before),
            probability(r.ai_after)
        )),
    ];
    let mut n = 0;
    for line in &result.lines {
        let Some(judged) = &line.rewrite else {
            continue;
        };
        n += 1;
        out.push(heading(format!("第 {n} 段"), 2));
        out.push(body(format!("原文：{}", line.text)));
        out.push(body(format!(
            "改写：{}",
            judged.rewritten.as_deref().unwrap_or("（无可用改写）")
        )));
        out.push(body(format!(
            "复制比 {} → {}；AI 概率 {} → {}；语义相似度 {}；{}",
            percent(Some(judged.similarity_before)),
            percent(judged.similarity_after),
            probability(judged.ai_before),
            probability(judged.ai_after),
            judged.meaning.map_or("—".into(), |m| format!("{m:.2}")),
            if line.uses_rewrite() {
                "采用改写".to_string()
            } else {
                judged.reason.clone().unwrap_or_else(|| "保留原文".into())
            }
        )));
    }
    out.push(body(format!(
        "判定规则：改写须保留冻结术语、数字、公式与引用标注，语义相似度不低于 {:.2}；降重须使复制比至少下降五分之一；AI 检测结果可能有误，仅供参考。",
        rewrite::judged::MEANING_MIN
    )));
    let bytes = docio::write_docx(&out).map_err(ApiError::internal)?;
    Ok(paper_task::attachment(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        bytes,
        &format!("rewrite-report-{}.docx", task.id),
        &format!("{}（改写报告）.docx", task.title),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_text_becomes_trimmed_paragraphs() {
        assert_eq!(
            paragraphs_of("  第一段 \r\n\r\n\t第二段\r第三段\n\n"),
            "第一段\n第二段\n第三段"
        );
        assert_eq!(paragraphs_of(" \n\r\n "), "");
    }

    #[test]
    fn titles_default_to_the_first_words() {
        let form = PasteForm::default();
        assert_eq!(title_of(&form, "短文本"), "短文本");
        let long = "一".repeat(30);
        assert_eq!(title_of(&form, &long), format!("{}…", "一".repeat(20)));
        let named = PasteForm {
            title: " 我的段落 ".into(),
            ..PasteForm::default()
        };
        assert_eq!(title_of(&named, &long), "我的段落");
    }
}

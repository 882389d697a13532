//! The graduation package (`paper_info_api/load_other_by_id`): 开题报告, 任务书 and 文献综述,
//! each written from a finished paper by a task of its own (free with the paper, one per
//! document and paper at a time), stored after every part so a restart goes on from there, and
//! downloaded as a short Word document (`download` with `other`).

use super::paper_api::DISCLAIMER;
use super::task::{PaperDoc, Stage, compose_error};
use crate::api::paper_task;
use crate::auth::AuthUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::models::{Feature, ModelHub};
use crate::params::{Params, lenient};
use crate::state::AppState;
use crate::worker::{TaskContext, TaskError, TaskFuture, TaskHandler};
use axum::extract::State;
use compose::generate::{self, Draft, PaperRequest};
use compose::package::{self, OtherKind};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use store::{Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

pub const OTHER_KIND: &str = "paper_other";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OtherInput {
    pub paper_id: i64,
    pub other: OtherKind,
}

/// A package document as stored (in the task's draft while written, its result when done).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OtherDoc {
    pub other: OtherKind,
    pub request: PaperRequest,
    pub draft: Draft,
    #[serde(default)]
    pub model: String,
}

impl OtherDoc {
    pub fn of_task(task: &Task) -> Option<OtherDoc> {
        serde_json::from_str(task.result.as_deref().or(task.draft.as_deref())?).ok()
    }
}

pub struct OtherHandler {
    models: Arc<ModelHub>,
}

impl OtherHandler {
    pub fn new(models: Arc<ModelHub>) -> Self {
        OtherHandler { models }
    }

    async fn write(&self, ctx: TaskContext) -> Result<String, TaskError> {
        let input: OtherInput = serde_json::from_str(&ctx.input)
            .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
        let own = ctx
            .store
            .task_by_id(ctx.task_id)
            .await
            .map_err(|e| TaskError::retryable(format!("读取任务失败：{e}")))?;
        let resumed = own
            .draft
            .as_deref()
            .and_then(|d| serde_json::from_str::<OtherDoc>(d).ok())
            .filter(|d| d.other == input.other);
        let mut doc = match resumed {
            Some(doc) => doc,
            None => {
                let paper = ctx
                    .store
                    .task(input.paper_id, own.user_id)
                    .await
                    .map_err(|_| TaskError::permanent("论文已删除"))?;
                let written = PaperDoc::of_task(&paper)
                    .filter(|d| d.stage == Stage::Write && paper.status == TaskStatus::Done)
                    .ok_or_else(|| TaskError::permanent("论文尚未写完"))?;
                OtherDoc {
                    other: input.other,
                    draft: package::plan(input.other, &written.request, &written.draft),
                    request: written.request,
                    model: String::new(),
                }
            }
        };
        ctx.progress(2, "加载模型").await;
        let model = self
            .models
            .chat(Feature::Paper)
            .await
            .map_err(TaskError::permanent)?;
        doc.model = model.id();
        let total = doc.draft.outline.leaves().len().max(1);
        while doc.draft.remaining() > 0 {
            let index = doc.draft.sections.len();
            let heading = generate::leaf_heading(&doc.draft.outline, index);
            ctx.progress(
                5 + (index * 90 / total) as i64,
                &format!("正在撰写第 {}/{total} 部分：{heading}", index + 1),
            )
            .await;
            generate::write_next_section(model.as_ref(), &doc.request, &mut doc.draft, None)
                .await
                .map_err(compose_error)?;
            let json = to_json(&doc)?;
            // Nothing was charged, so nothing is delivered against a price.
            ctx.draft(&json, 0).await;
        }
        to_json(&doc)
    }
}

impl TaskHandler for OtherHandler {
    fn kind(&self) -> &'static str {
        OTHER_KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move { self.write(ctx).await.map(Into::into) })
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, TaskError> {
    serde_json::to_string(value).map_err(|e| TaskError::permanent(format!("结果无法保存：{e}")))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OtherForm {
    /// The paper.
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// `proposal` (开题报告), `task_book` (任务书) or `review` (文献综述): starts writing it when
    /// it has not been written (or its last try failed). Absent: only the package's state.
    #[serde(default)]
    pub other: Option<String>,
}

/// One document of the package.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtherView {
    /// `proposal`, `task_book` or `review`.
    pub other: String,
    pub label: String,
    /// `none` (not started), `queued`, `running`, `done`, `failed`.
    pub status: String,
    pub progress: i64,
    pub phase: String,
    pub error: Option<String>,
    /// The parts written so far: heading and text.
    pub parts: Vec<OtherPart>,
    /// GB/T 7714 entries: cited records in order, then the others it was offered.
    pub references: Vec<String>,
    pub chars: usize,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtherPart {
    pub heading: String,
    pub text: String,
    pub weak: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtherPackage {
    pub paper_id: i64,
    pub title: String,
    pub documents: Vec<OtherView>,
    pub disclaimer: String,
}

/// The package tasks of a paper, newest first.
pub(super) async fn package_tasks(
    state: &AppState,
    user_id: i64,
    paper_id: i64,
) -> Result<Vec<(OtherInput, Task)>, ApiError> {
    let tasks = paper_task::list_records_upto(state, user_id, OTHER_KIND, None, 200).await?;
    Ok(tasks
        .into_iter()
        .filter_map(|t| {
            let input: OtherInput = serde_json::from_str(&t.input).ok()?;
            (input.paper_id == paper_id).then_some((input, t))
        })
        .collect())
}

fn view(other: OtherKind, task: Option<&Task>) -> OtherView {
    let doc = task.and_then(OtherDoc::of_task);
    OtherView {
        other: other.code().into(),
        label: other.label().into(),
        status: task.map_or("none", |t| t.status.as_str()).into(),
        progress: task.map_or(0, |t| t.progress),
        phase: task.map(|t| t.phase.clone()).unwrap_or_default(),
        error: task.and_then(|t| t.error.clone()),
        parts: doc
            .as_ref()
            .map(|d| {
                d.draft
                    .sections
                    .iter()
                    .enumerate()
                    .map(|(i, s)| OtherPart {
                        // As the Word file numbers it: 一、引言.
                        heading: format!(
                            "{}、{}",
                            docio::thesis::chinese_number(i as u32 + 1),
                            d.draft
                                .outline
                                .chapters
                                .get(i)
                                .map_or(s.heading.as_str(), |c| c.title.as_str())
                        ),
                        text: s.text.clone(),
                        weak: s.weak,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        references: doc
            .as_ref()
            .map(|d| {
                package::listed_references(&d.draft)
                    .into_iter()
                    .map(|r| r.formatted)
                    .collect()
            })
            .unwrap_or_default(),
        chars: doc.map_or(0, |d| d.draft.chars()),
    }
}

/// The graduation package of a finished paper — 开题报告, 任务书, 文献综述 — with each
/// document's state and text; with `other`, starts writing that document (free).
#[utoipa::path(post, path = "/api/base/paper_info_api/load_other_by_id", tag = "paper_info_api", security(("bearer" = [])),
    params(OtherForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<OtherPackage>)),
        (status = 400, description = "invalid_other", body = crate::envelope::ErrorBody),
        (status = 404, description = "paper_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "paper_not_finished", body = crate::envelope::ErrorBody),
        (status = 503, description = "paper_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_other_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<OtherForm>,
) -> ApiResult<OtherPackage> {
    let user_id = session.user.id;
    let paper = super::paper_api::owned(&state, form.id, user_id).await?;
    let written = PaperDoc::of_task(&paper)
        .filter(|d| d.stage == Stage::Write && paper.status == TaskStatus::Done)
        .ok_or_else(|| {
            ApiError::conflict(
                "paper_not_finished",
                "论文写完后才能生成开题报告、任务书和文献综述",
            )
        })?;
    if let Some(asked) = form.other.as_deref().filter(|o| !o.trim().is_empty()) {
        let other = parse_other(asked)?;
        let tasks = package_tasks(&state, user_id, paper.id).await?;
        let latest = tasks.iter().find(|(i, _)| i.other == other).map(|(_, t)| t);
        let startable =
            latest.is_none_or(|t| matches!(t.status, TaskStatus::Failed | TaskStatus::Cancelled));
        if startable {
            super::paper_api::model_missing(&state)?;
            let input = OtherInput {
                paper_id: paper.id,
                other,
            };
            let json = serde_json::to_string(&input).map_err(ApiError::internal)?;
            let task = state
                .store
                .create_task(user_id, OTHER_KIND, other.label(), &json)
                .await?;
            let free = super::paper_api::free_of(
                task.id,
                other.words(written.request.degree) as usize,
                "paper_package_free",
            );
            paper_task::charge_and_queue(&state, &task, &free, other.label()).await?;
        }
    }
    let tasks = package_tasks(&state, user_id, paper.id).await?;
    let documents = OtherKind::ALL
        .into_iter()
        .map(|other| {
            let task = tasks.iter().find(|(i, _)| i.other == other).map(|(_, t)| t);
            view(other, task)
        })
        .collect();
    Ok(Success(OtherPackage {
        paper_id: paper.id,
        title: paper.title.clone(),
        documents,
        disclaimer: DISCLAIMER.into(),
    }))
}

fn parse_other(asked: &str) -> Result<OtherKind, ApiError> {
    OtherKind::parse(asked).ok_or_else(|| {
        ApiError::bad_request(
            "invalid_other",
            "文档类型只能是 proposal（开题报告）、task_book（任务书）或 review（文献综述）",
        )
    })
}

/// A finished package document of the paper, for download.
pub async fn finished_other(
    state: &AppState,
    user_id: i64,
    paper_id: i64,
    asked: &str,
) -> Result<OtherDoc, ApiError> {
    let other = parse_other(asked)?;
    package_tasks(state, user_id, paper_id)
        .await?
        .into_iter()
        .find(|(i, t)| i.other == other && t.status == TaskStatus::Done)
        .and_then(|(_, t)| OtherDoc::of_task(&t))
        .ok_or_else(|| {
            ApiError::conflict(
                "other_not_finished",
                format!("{}尚未生成完成", other.label()),
            )
        })
}

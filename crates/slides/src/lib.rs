//! slides (答辩PPT): a paper becomes a defence deck. Plain Rust, no HTTP or SQL.
//!
//! paper (docio's text and headings, or a typed outline) → plan (parts, slides, bullets drawn
//! from the paper, speaker notes timed to the talk) → layout (every frame's text measured with
//! the CJK font's metrics and set at a size that fits) → .pptx (OOXML parts written here).

pub mod condense;
pub mod deck;
pub mod fit;
mod metrics;
pub mod paper;
pub mod pptx;
pub mod svg;
pub mod template;

pub use deck::{Deck, DeckKind, DeckMeta, DeckRequest, Slide, SlideKind, plan};
pub use paper::Paper;
pub use template::{TEMPLATES, Template};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlidesError {
    #[error(
        "论文中没有识别到章节标题：请在 Word 中为各章标题设置“标题 1”“标题 2”样式（或使用“1 绪论”“1.1 研究背景”式编号）后重新上传"
    )]
    NoHeadings,
    #[error(
        "论文各章节下没有可以写进幻灯片的文字：请上传完整的论文，或在提纲的每个标题下写几句要点"
    )]
    NoContent,
    #[error("页数只能选择 10、15、20 或 30 页（收到 {asked} 页）")]
    SlideCount { asked: usize },
    #[error(
        "没有名为“{0}”的模板，可选：academic-blue、china-red、minimal-white、dark、green、school"
    )]
    UnknownTemplate(String),
    #[error("校徽图片无法使用：请上传 PNG 或 JPEG 格式、不超过 2 MB 的图片")]
    BadLogo,
    #[error("第 {slide} 页的文字在最小字号下仍放不下，已停止生成（{detail}）")]
    DoesNotFit { slide: usize, detail: String },
    #[error("生成演示文稿失败：{0}")]
    Write(String),
}

impl SlidesError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            SlidesError::NoHeadings => "paper_without_headings",
            SlidesError::NoContent => "paper_without_content",
            SlidesError::SlideCount { .. } => "invalid_slide_count",
            SlidesError::UnknownTemplate(_) => "unknown_template",
            SlidesError::BadLogo => "invalid_logo",
            SlidesError::DoesNotFit { .. } => "text_does_not_fit",
            SlidesError::Write(_) => "deck_write_failed",
        }
    }
}

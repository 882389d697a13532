//! `wenjian paper generate`: the paper generator without the server — outline, sections written
//! from it with references retrieved from the library, the abstract — printed and written as .docx.

use anyhow::Context;
use compose::generate::{self, Draft, ListedReference, PaperRequest, Progress};
use compose::outline::{Degree, Outline, PaperKind};
use serde::Serialize;
use server::Config;
use server::models::{Feature, ModelHub};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Args {
    pub title: String,
    pub field: String,
    pub words: u32,
    pub kind: String,
    pub degree: String,
    pub keywords: Vec<String>,
    pub out: Option<PathBuf>,
    pub json: bool,
}

#[derive(Serialize)]
struct Output<'a> {
    model: String,
    prompt_version: &'a str,
    outline: &'a Outline,
    sections: Vec<SectionOut<'a>>,
    abstract_zh: &'a str,
    abstract_en: &'a str,
    keywords: &'a [String],
    keywords_en: &'a [String],
    references: Vec<ListedReference>,
    /// Counted characters of the body.
    chars: usize,
    /// Citations the model wrote that named no offered record, removed.
    removed_citations: usize,
    /// Citations the engine placed on sentences that share an offered record's specific wording.
    placed_citations: usize,
    /// Sections still shorter than a third of their budget after every attempt.
    weak_sections: usize,
    minutes: f64,
}

#[derive(Serialize)]
struct SectionOut<'a> {
    heading: &'a str,
    text: &'a str,
}

pub fn request_of(args: &Args) -> anyhow::Result<PaperRequest> {
    let title = generate::check_title(&args.title).map_err(|e| anyhow::anyhow!("{e}"))?;
    let kind = PaperKind::parse(&args.kind).context("--kind 只能是 thesis 或 article")?;
    let degree =
        Degree::parse(&args.degree).context("--degree 只能是 associate、bachelor 或 master")?;
    generate::check_words(args.words).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(PaperRequest {
        title,
        field: args.field.trim().to_string(),
        kind,
        degree,
        words: args.words,
        keywords: args.keywords.clone(),
        own_references: vec![],
    })
}

pub async fn run<L: simcheck::Library + 'static>(
    config: &Config,
    library: Arc<L>,
    args: Args,
) -> anyhow::Result<()> {
    let request = request_of(&args)?;
    let hub = ModelHub::new(config);
    let model = hub.chat(Feature::Paper).await.map_err(anyhow::Error::msg)?;
    let encoder = hub.encoder().await.map_err(anyhow::Error::msg)?;
    let source = server::api::paper::retrieval::LibrarySource::new(
        library,
        encoder as Arc<dyn simcheck::SentenceEmbedder>,
        None,
        request.topic(),
        simcheck::related::topic_terms(&request.title, &request.keywords),
    );
    let json = args.json;
    let started = std::time::Instant::now();
    let report = move |p: Progress| {
        if json {
            return;
        }
        match p {
            Progress::Outline => eprintln!("正在拟定大纲……"),
            Progress::Section {
                done,
                total,
                heading,
            } => eprintln!("正在撰写 {}/{}：{heading}", done + 1, total),
            Progress::Abstract => eprintln!("正在撰写摘要……"),
        }
    };
    let draft: Draft = generate::generate(model.as_ref(), &source, &request, &report)
        .await
        .map_err(|e| anyhow::anyhow!("{e}（{}）", e.code()))?;
    if let Some(path) = &args.out {
        let bytes = compose::thesis::to_docx(&request, &draft, &Default::default())
            .context("无法生成 Word 文件")?;
        std::fs::write(path, bytes).with_context(|| format!("无法写入 {}", path.display()))?;
    }
    let out = Output {
        model: model.id(),
        prompt_version: generate::PROMPT_VERSION,
        outline: &draft.outline,
        sections: draft
            .sections
            .iter()
            .map(|s| SectionOut {
                heading: &s.heading,
                text: &s.text,
            })
            .collect(),
        abstract_zh: &draft.abstract_zh,
        abstract_en: &draft.abstract_en,
        keywords: &draft.keywords,
        keywords_en: &draft.keywords_en,
        references: draft.references(),
        chars: draft.chars(),
        removed_citations: draft.sections.iter().map(|s| s.removed_citations).sum(),
        placed_citations: draft.sections.iter().map(|s| s.placed_citations).sum(),
        weak_sections: draft.sections.iter().filter(|s| s.weak).count(),
        minutes: started.elapsed().as_secs_f64() / 60.0,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "《{}》（模型 {}，{} 字）",
        request.title, out.model, out.chars
    );
    println!("\n摘要：{}\n", out.abstract_zh);
    for (s, written) in out.sections.iter().zip(&draft.sections) {
        let note = if written.weak {
            "（本节偏短，模型未能写足）"
        } else {
            ""
        };
        println!("{}{note}\n{}\n", s.heading, s.text);
    }
    println!("参考文献");
    for (i, r) in out.references.iter().enumerate() {
        println!("[{}] {}", i + 1, r.formatted);
    }
    if let Some(path) = &args.out {
        println!("\n已写入 {}", path.display());
    }
    println!(
        "\n说明：这是写作草稿，须由本人阅读、核实并改写；许多高校把未声明的 AI 生成内容视为学术不端。"
    );
    Ok(())
}

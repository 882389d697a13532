//! `wenjian rewrite`: rewrites a paper's paragraphs with the configured model and prints every
//! paragraph's measured figures (the same judged loop as the web app's rewriting task).

use anyhow::{Context, bail};
use rewrite::judged::ParagraphRewrite;
use rewrite::{Goal, Strength};
use serde::Serialize;
use server::Config;
use server::models::ModelHub;
use std::path::Path;
use std::sync::Arc;

#[derive(Serialize)]
struct Output<'a> {
    model: String,
    goal: &'a str,
    strength: &'a str,
    prompt_version: &'a str,
    /// Seconds per 1,000 counted characters rewritten (judging included).
    seconds_per_thousand_chars: f64,
    paragraphs: Vec<Numbered>,
}

#[derive(Serialize)]
struct Numbered {
    line: usize,
    #[serde(flatten)]
    rewrite: ParagraphRewrite,
}

pub struct Args<'a> {
    pub file: &'a Path,
    pub goal: &'a str,
    pub strength: &'a str,
    pub frozen: Vec<String>,
    pub json: bool,
}

pub async fn run<L: simcheck::Library + 'static>(
    config: &Config,
    library: Arc<L>,
    args: Args<'_>,
) -> anyhow::Result<()> {
    let goal = Goal::parse(args.goal)
        .filter(|g| matches!(g, Goal::Similarity | Goal::Aigc | Goal::Both))
        .context("--goal 只能是 similarity、aigc 或 both")?;
    let strength =
        Strength::parse(args.strength).context("--strength 只能是 light、medium 或 strong")?;
    let text = crate::corpus::read_text_file(args.file)?;
    let input = server::api::rewrite::task::RewriteInput {
        text,
        headings: vec![],
        goal,
        strength,
        frozen: args.frozen.clone(),
        only: None,
        source_task: None,
        owner: None,
        file_name: String::new(),
        chars: 0,
        rerun: None,
    };
    let lines = input.lines();
    let selected = input.selected();
    if selected.is_empty() {
        bail!("没有需要改写的段落（不足 20 字的行不改写）");
    }
    let hub = ModelHub::new(config);
    let (model, judge, settings) = server::api::rewrite::task::judged_setup(
        &hub,
        library,
        simcheck::CheckOptions::default(),
        &input,
        config.rewrite_concurrency,
    )
    .await
    .map_err(anyhow::Error::msg)?;
    let paragraphs: Vec<String> = selected.iter().map(|&i| lines[i].to_string()).collect();
    let started = std::time::Instant::now();
    let json = args.json;
    let results = rewrite::judged::rewrite_all(
        model.as_ref(),
        &judge,
        &settings,
        &paragraphs,
        &|done, total| {
            if !json {
                eprintln!("已改写 {done}/{total} 段");
            }
        },
        None,
    )
    .await
    .map_err(anyhow::Error::msg)?;
    let chars: usize = paragraphs.iter().map(|p| aidetect::counted_chars(p)).sum();
    let out = Output {
        model: model.id(),
        goal: goal.as_str(),
        strength: strength.as_str(),
        prompt_version: rewrite::PROMPT_VERSION,
        seconds_per_thousand_chars: started.elapsed().as_secs_f64() * 1000.0 / chars.max(1) as f64,
        paragraphs: selected
            .iter()
            .zip(results)
            .map(|(&line, rewrite)| Numbered { line, rewrite })
            .collect(),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "文鉴改写（{}，模型 {}，提示词 {}）",
        goal.label(),
        out.model,
        out.prompt_version
    );
    let percent = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.1}%"));
    for p in &out.paragraphs {
        let r = &p.rewrite;
        println!(
            "\n段 {}：{}  复制比 {} → {}  AI {} → {}  语义 {}",
            p.line + 1,
            if r.accepted {
                "采用改写"
            } else {
                "保留原文"
            },
            percent(Some(r.similarity_before)),
            percent(r.similarity_after),
            percent(r.ai_before.map(|v| v * 100.0)),
            percent(r.ai_after.map(|v| v * 100.0)),
            r.meaning.map_or("—".into(), |m| format!("{m:.2}")),
        );
        println!("  原文：{}", r.original);
        if let Some(new) = &r.rewritten {
            println!("  改写：{new}");
        }
        if let Some(reason) = &r.reason {
            println!("  {reason}");
        }
    }
    println!(
        "\n用时：每千字 {:.1} 秒（含复测）",
        out.seconds_per_thousand_chars
    );
    Ok(())
}

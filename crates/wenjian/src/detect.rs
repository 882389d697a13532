//! `wenjian detect`: AI-text detection of a file, and fitting the detector's calibration.

use aidetect::eval;
use anyhow::bail;
use std::path::Path;

use server::models::{LOCAL_MODEL, ModelHub, OBSERVER_MODEL, installed};

fn load(models_dir: &Path, name: &str) -> anyhow::Result<llm::LocalScorer> {
    if !installed(models_dir, name) {
        bail!("未找到 AIGC 检测模型 {name}：请先运行 wenjian models fetch {name}");
    }
    llm::LocalScorer::load(&models_dir.join(name), name).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Detects `file` with the detector the server would use (the observer when installed and
/// `aigc_observer` is on) and prints the result (JSON with `--json`).
pub async fn run(config: &server::Config, file: &Path, json: bool) -> anyhow::Result<()> {
    let text = crate::corpus::read_text_file(file)?;
    let detector = ModelHub::new(config)
        .detector()
        .await
        .map_err(anyhow::Error::msg)?;
    let d = detector.detect(&text).map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&d)?);
        return Ok(());
    }
    println!("文鉴 AIGC 检测（模型 {}，校准 {}）", d.model, d.calibration);
    println!("检测字数：{} 字", d.chars);
    match (d.probability, d.ai_rate, &d.notice) {
        (_, _, Some(notice)) => println!("{notice}"),
        (Some(p), Some(rate), None) => {
            println!("AI 生成概率（全文）：{:.1}%", p * 100.0);
            println!("AIGC 占比（高度疑似段落字数 / 全文）：{rate:.1}%");
        }
        _ => println!("文本过短，结果不可靠"),
    }
    let chars: Vec<char> = text.chars().collect();
    for (i, p) in d.paragraphs.iter().enumerate() {
        let head: String = chars[p.start..p.end].iter().take(24).collect();
        println!(
            "  段 {:>3}  {:>5.1}%  {}  {head}…",
            i + 1,
            p.probability * 100.0,
            p.band.label()
        );
    }
    println!(
        "分级：≥{:.0}% 高度疑似，≥{:.0}% 中度疑似，其余低风险。{}",
        d.high_threshold * 100.0,
        d.medium_threshold * 100.0,
        d.note
    );
    Ok(())
}

/// `wenjian detect calibrate`: fits, prints the figures and writes the calibration to `out`
/// (for the pair of models with `pair`).
pub fn calibrate(models_dir: &Path, pair: bool, args: &eval::CalibrateArgs) -> anyhow::Result<()> {
    let scorer = load(models_dir, LOCAL_MODEL)?;
    let observer = if pair {
        Some(load(models_dir, OBSERVER_MODEL)?)
    } else {
        None
    };
    let bar = indicatif::ProgressBar::hidden();
    bar.set_style(
        indicatif::ProgressStyle::with_template("打分 {bar:30} {pos}/{len} 篇，剩余约 {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let (calibration, quality) =
        eval::calibrate_with(&scorer, observer.as_ref(), args, &mut |done, total| {
            if bar.is_hidden() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            }
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })?;
    bar.finish_and_clear();
    println!("{}", serde_json::to_string_pretty(&quality)?);
    std::fs::write(
        &args.out,
        serde_json::to_string_pretty(&calibration)? + "\n",
    )?;
    println!("校准参数已写入 {}", args.out.display());
    Ok(())
}

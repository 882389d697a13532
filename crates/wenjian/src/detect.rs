//! `wenjian detect`: AI-text detection of a file, and fitting the detector's calibration.

use aidetect::calibration::{auroc, tpr_at_fpr};
use aidetect::{Calibration, Features};
use anyhow::{Context, bail};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The scoring model detection uses.
pub const MODEL: &str = "qwen2.5-0.5b";

pub fn load_scorer(models_dir: &Path) -> anyhow::Result<llm::LocalScorer> {
    let dir = models_dir.join(MODEL);
    if !dir.join("model.gguf").exists() {
        bail!("未找到 AIGC 检测模型 {MODEL}：请先运行 wenjian models fetch {MODEL}");
    }
    llm::LocalScorer::load(&dir, MODEL).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Detects `file` and prints the result (JSON with `--json`).
pub fn run(models_dir: &Path, file: &Path, json: bool) -> anyhow::Result<()> {
    let text = crate::corpus::read_text_file(file)?;
    let calibration = aidetect::builtin_calibration();
    let scorer = load_scorer(models_dir)?;
    let d = aidetect::detect(&text, &scorer, &calibration).map_err(|e| anyhow::anyhow!("{e}"))?;
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

#[derive(serde::Deserialize)]
struct Labelled {
    text: String,
    label: u8,
}

/// A deterministic shuffle, so a calibration can be fitted again to the same numbers.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        items.swap(i, (seed >> 33) as usize % (i + 1));
    }
}

/// Scores `limit` texts of `data` (half of each label when it can), fits the calibration, prints
/// cross-validated figures and writes the calibration to `out`.
pub fn calibrate(models_dir: &Path, data: &Path, limit: usize, out: &Path) -> anyhow::Result<()> {
    let raw = std::fs::read(data).with_context(|| format!("无法读取 {}", data.display()))?;
    let sha = hex::encode(Sha256::digest(&raw));
    let mut rows: Vec<Labelled> = String::from_utf8_lossy(&raw)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("数据应为 JSON Lines：{\"text\", \"label\"}（1 = 机器生成）")?;
    rows.retain(|r| aidetect::counted_chars(&r.text) >= 50);
    shuffle(&mut rows, 20261122);
    let (machine, human): (Vec<Labelled>, Vec<Labelled>) =
        rows.into_iter().partition(|r| r.label == 1);
    let take = (limit / 2).min(machine.len()).min(human.len());
    let picked: Vec<Labelled> = machine
        .into_iter()
        .take(take)
        .chain(human.into_iter().take(take))
        .collect();
    let scorer = load_scorer(models_dir)?;
    let bar = indicatif::ProgressBar::new(picked.len() as u64);
    let mut samples: Vec<(Features, bool)> = vec![];
    for r in &picked {
        let tokens = scorer
            .score(&r.text, None)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if let Some(f) = aidetect::features_of(&r.text, &tokens, 0, r.text.chars().count()) {
            samples.push((f, r.label == 1));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    // Five-fold cross-validation: each text scored by a calibration fitted without it.
    let mut scores = vec![0.0; samples.len()];
    for fold in 0..5 {
        let train: Vec<(Features, bool)> = samples
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 5 != fold)
            .map(|(_, s)| *s)
            .collect();
        let cal = aidetect::fit(&train, MODEL, &sha, "cv");
        for (i, s) in samples.iter().enumerate().filter(|(i, _)| i % 5 == fold) {
            scores[i] = cal.probability(&s.0);
        }
    }
    let labels: Vec<bool> = samples.iter().map(|s| s.1).collect();
    let name = data.file_stem().and_then(|s| s.to_str()).unwrap_or("data");
    let version = format!("aigc-cal-1 ({MODEL}, {name}, {} texts)", samples.len());
    let calibration: Calibration = aidetect::fit(&samples, MODEL, &sha, &version);
    let report = serde_json::json!({
        "texts": samples.len(),
        "auroc_cv": auroc(&scores, &labels),
        "tpr_at_1pct_fpr_cv": tpr_at_fpr(&scores, &labels, 0.01),
        "tpr_at_5pct_fpr_cv": tpr_at_fpr(&scores, &labels, 0.05),
        "data_sha256": sha,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    std::fs::write(out, serde_json::to_string_pretty(&calibration)? + "\n")?;
    println!("校准参数已写入 {}", out.display());
    Ok(())
}

//! `wenjian detect`: AI-text detection of a file, and fitting the detector's calibration.

use aidetect::calibration::{auroc, tpr_at_fpr};
use aidetect::eval::{self, Labelled};
use aidetect::{Calibration, Features, TokenStats};
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

/// What `calibrate` reads and where it keeps its scores.
pub struct CalibrateArgs {
    /// The evaluation folder (`aigc/*.jsonl`, `corpus/csl-abstracts-*.json`) or one JSON Lines file.
    pub data: std::path::PathBuf,
    /// At most this many labelled texts (0: all).
    pub limit: usize,
    /// Human academic abstracts to use: the first half joins the training negatives, the second
    /// half is held out to measure false positives on formal academic prose.
    pub academic: usize,
    pub out: std::path::PathBuf,
    pub cache: std::path::PathBuf,
}

/// The labelled texts, the academic abstracts and the hash of every file read.
fn read_eval_data(data: &Path) -> anyhow::Result<(Vec<Labelled>, Vec<String>, String)> {
    let mut files: Vec<std::path::PathBuf> = vec![];
    if data.is_dir() {
        for sub in ["aigc", "corpus"] {
            let Ok(entries) = std::fs::read_dir(data.join(sub)) else {
                continue;
            };
            let mut found: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            found.sort();
            files.extend(found.into_iter().filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".jsonl") || (name.starts_with("csl-") && name.ends_with(".json"))
            }));
        }
    } else {
        files.push(data.to_path_buf());
    }
    let mut hash = Sha256::new();
    let (mut labelled, mut abstracts) = (vec![], vec![]);
    for f in &files {
        let raw =
            std::fs::read_to_string(f).with_context(|| format!("无法读取 {}", f.display()))?;
        hash.update(raw.as_bytes());
        if f.extension().is_some_and(|e| e == "jsonl") {
            labelled.extend(eval::read_labelled_jsonl(&raw).with_context(|| {
                format!(
                    "{} 应为 JSON Lines：{{\"text\", \"label\"}}（1 = 机器生成）",
                    f.display()
                )
            })?);
        } else {
            abstracts.extend(
                eval::read_csl_abstracts(&raw)
                    .with_context(|| format!("{} 不是 CSL 摘要文件", f.display()))?,
            );
        }
    }
    if labelled.is_empty() {
        bail!("{} 中没有带标签的文本（aigc/*.jsonl）", data.display());
    }
    Ok((labelled, abstracts, hex::encode(hash.finalize())))
}

/// Scores the texts not yet in the cache (with a progress bar) and returns every text's features.
fn features_of_all(
    scorer: &llm::LocalScorer,
    cache: &mut eval::StatsCache,
    texts: &[&str],
) -> anyhow::Result<Vec<Option<Features>>> {
    let missing = texts.iter().filter(|t| cache.get(t).is_none()).count();
    let bar = indicatif::ProgressBar::new(missing as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("打分 {bar:30} {pos}/{len} 篇，剩余约 {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut out = Vec::with_capacity(texts.len());
    for text in texts {
        let stats = cache.stats(text, |t| -> anyhow::Result<TokenStats> {
            let tokens = scorer.score(t, None).map_err(|e| anyhow::anyhow!("{e}"))?;
            bar.inc(1);
            Ok(TokenStats::of(&tokens, 0, t.chars().count()))
        })?;
        out.push(stats.features(text));
    }
    bar.finish_and_clear();
    Ok(out)
}

/// The figures a calibration run prints (and the quality benchmark reports).
#[derive(Debug, serde::Serialize)]
pub struct Quality {
    pub labelled_texts: usize,
    pub machine_texts: usize,
    pub academic_train: usize,
    pub academic_held_out: usize,
    /// Five-fold cross-validated, on the labelled texts.
    pub auroc_cv: f64,
    pub tpr_at_1pct_fpr_cv: f64,
    pub tpr_at_5pct_fpr_cv: f64,
    /// At the operating (high-band) threshold.
    pub high_threshold: f64,
    pub medium_threshold: f64,
    pub tpr_at_threshold_cv: f64,
    pub fpr_labelled_human_at_threshold_cv: f64,
    pub fpr_academic_train_at_threshold_cv: f64,
    /// Human academic abstracts never seen in fitting, judged by the shipped calibration.
    pub fpr_academic_held_out: f64,
    pub medium_or_high_academic_held_out: f64,
    pub data_sha256: String,
}

/// Fits the calibration on the labelled texts plus half of the academic abstracts, picks the
/// operating thresholds from cross-validated scores of the human texts, and measures the false
/// positives on the held-out abstracts.
pub fn calibrate_with(
    scorer: &llm::LocalScorer,
    args: &CalibrateArgs,
) -> anyhow::Result<(Calibration, Quality)> {
    let (mut labelled, mut abstracts, sha) = read_eval_data(&args.data)?;
    labelled.retain(|r| aidetect::counted_chars(&r.text) >= 50);
    eval::shuffle(&mut labelled, 20261122);
    if args.limit > 0 {
        labelled.truncate(args.limit);
    }
    abstracts.retain(|a| aidetect::counted_chars(a) >= 50);
    eval::shuffle(&mut abstracts, 20261123);
    abstracts.truncate(args.academic);
    let (train_abs, held_abs) = abstracts.split_at(abstracts.len() / 2);
    let mut cache = eval::StatsCache::open(&args.cache, &scorer.name)?;
    let texts: Vec<&str> = labelled
        .iter()
        .map(|r| r.text.as_str())
        .chain(train_abs.iter().map(String::as_str))
        .chain(held_abs.iter().map(String::as_str))
        .collect();
    let features = features_of_all(scorer, &mut cache, &texts)?;
    let (train_features, held_features) = features.split_at(labelled.len() + train_abs.len());
    // (features, machine, is academic abstract)
    let train: Vec<(Features, bool, bool)> = train_features
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let f = (*f)?;
            Some(match labelled.get(i) {
                Some(r) => (f, r.machine, false),
                None => (f, false, true),
            })
        })
        .collect();
    let samples: Vec<(Features, bool)> = train.iter().map(|s| (s.0, s.1)).collect();
    let oof = eval::cross_validated(&samples, 5);
    let pick = |want: &dyn Fn(&(Features, bool, bool)) -> bool| -> Vec<f64> {
        train
            .iter()
            .zip(&oof)
            .filter(|(s, _)| want(s))
            .map(|(_, p)| *p)
            .collect()
    };
    let labelled_scores = pick(&|s| !s.2);
    let labelled_labels: Vec<bool> = train.iter().filter(|s| !s.2).map(|s| s.1).collect();
    let human_scores = pick(&|s| !s.1);
    let academic_scores = pick(&|s| s.2);
    // The high band: at most 1 % of the human texts (QA answers and academic abstracts alike)
    // reach it in cross-validation, and never below an even chance.
    let high = eval::threshold_at_fpr(&human_scores, 0.01).max(0.5);
    let medium = eval::threshold_at_fpr(&human_scores, 0.10).clamp(0.2, high);
    let machine_scores = pick(&|s| s.1);
    let name = args
        .data
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("data");
    let version = format!(
        "aigc-cal-2 ({MODEL}, {name}: {} labelled + {} academic texts)",
        labelled_scores.len(),
        academic_scores.len()
    );
    let mut calibration = aidetect::fit(&samples, MODEL, &sha, &version);
    calibration.high_threshold = high;
    calibration.medium_threshold = medium;
    let held: Vec<f64> = held_features
        .iter()
        .flatten()
        .map(|f| calibration.probability(f))
        .collect();
    let quality = Quality {
        labelled_texts: labelled_scores.len(),
        machine_texts: machine_scores.len(),
        academic_train: academic_scores.len(),
        academic_held_out: held.len(),
        auroc_cv: auroc(&labelled_scores, &labelled_labels),
        tpr_at_1pct_fpr_cv: tpr_at_fpr(&labelled_scores, &labelled_labels, 0.01),
        tpr_at_5pct_fpr_cv: tpr_at_fpr(&labelled_scores, &labelled_labels, 0.05),
        high_threshold: high,
        medium_threshold: medium,
        tpr_at_threshold_cv: eval::rate_at_or_above(&machine_scores, high),
        fpr_labelled_human_at_threshold_cv: eval::rate_at_or_above(&pick(&|s| !s.1 && !s.2), high),
        fpr_academic_train_at_threshold_cv: eval::rate_at_or_above(&academic_scores, high),
        fpr_academic_held_out: eval::rate_at_or_above(&held, high),
        medium_or_high_academic_held_out: eval::rate_at_or_above(&held, medium),
        data_sha256: sha,
    };
    Ok((calibration, quality))
}

/// `wenjian detect calibrate`: fits, prints the figures and writes the calibration to `out`.
pub fn calibrate(models_dir: &Path, args: &CalibrateArgs) -> anyhow::Result<()> {
    let scorer = load_scorer(models_dir)?;
    let (calibration, quality) = calibrate_with(&scorer, args)?;
    println!("{}", serde_json::to_string_pretty(&quality)?);
    std::fs::write(
        &args.out,
        serde_json::to_string_pretty(&calibration)? + "\n",
    )?;
    println!("校准参数已写入 {}", args.out.display());
    Ok(())
}

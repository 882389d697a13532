//! Exploration dump for the AI-text detector: per text of the evaluation data, its per-token
//! scores and the mean hidden state of a few layers, as JSON Lines, so that candidate features
//! can be compared offline before one is built into `aidetect`. Appends, and skips texts already
//! in the file.
//!
//!   aidetect-dump OUT.jsonl [abstracts]

use std::collections::HashSet;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = args
        .get(1)
        .cloned()
        .unwrap_or("data/cache/aidetect-dump.jsonl".into());
    let abstracts: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(600);
    let Some(data) = wenjian_bench::eval_data_dir() else {
        eprintln!("skipped: evaluation data not found (set WENJIAN_EVAL_DATA)");
        return;
    };
    let Some(scorer) = wenjian_bench::detection_scorer() else {
        return;
    };
    let pool: Vec<usize> = vec![6, 12, 18, scorer.layers() - 1];
    let mut done: HashSet<String> = HashSet::new();
    if let Ok(raw) = std::fs::read_to_string(&out) {
        for l in raw.lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(l) {
                done.insert(v["text"].as_str().unwrap_or("").to_string());
            }
        }
    }
    let mut items: Vec<(String, String, String)> = vec![]; // text, generator, file
    let agt =
        std::fs::read_to_string(data.join("aigc/agt2025-zh-qa-shared.jsonl")).unwrap_or_default();
    for r in aidetect::eval::read_labelled_jsonl(&agt).unwrap() {
        items.push((r.text, r.generator, "agt".into()));
    }
    let all = aidetect::eval::read_eval_data(&data).unwrap();
    let mut abs = all.abstracts.clone();
    abs.retain(|a| aidetect::counted_chars(a) >= 50);
    aidetect::eval::shuffle(&mut abs, 20261123);
    abs.truncate(abstracts);
    for a in abs {
        items.push((a, "academic".into(), "csl".into()));
    }
    let hc3_limit: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(700);
    let hc3 =
        std::fs::read_to_string(data.join("aigc/hc3plus-zh-val-qa.jsonl")).unwrap_or_default();
    let mut hc3 = aidetect::eval::read_labelled_jsonl(&hc3).unwrap();
    hc3.retain(|r| aidetect::counted_chars(&r.text) >= 50);
    aidetect::eval::shuffle(&mut hc3, 20261122);
    for r in hc3.into_iter().take(hc3_limit) {
        items.push((r.text, r.generator, "hc3".into()));
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .unwrap();
    let started = std::time::Instant::now();
    let mut n = 0;
    let flat = std::env::var("DUMP_FLAT").is_ok();
    if flat {
        items.retain(|i| i.2 == "agt");
    }
    for (text, generator, source) in items {
        if done.contains(&text) || aidetect::counted_chars(&text) < 50 {
            continue;
        }
        // As the detector reads a text; with DUMP_FLAT every paragraph without any whitespace.
        let read = if flat {
            let chars: Vec<char> = text.chars().collect();
            let pieces: Vec<String> = aidetect::paragraphs(&text)
                .into_iter()
                .map(|(s, e)| chars[s..e].iter().filter(|c| !c.is_whitespace()).collect())
                .collect();
            pieces.join("\n")
        } else {
            text.clone()
        };
        let reading = llm::Reading {
            pool: &pool,
            ..Default::default()
        };
        let scored = match aidetect::eval::read_paragraphs(&scorer, reading, &read) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let toks: Vec<[f32; 4]> = scored
            .tokens
            .iter()
            .map(|t| [t.logprob, t.entropy, t.logprob_variance, t.rank as f32])
            .collect();
        let count = scored.tokens.len().max(1) as f32;
        let pools: Vec<Vec<f32>> = scored
            .hidden_sums
            .iter()
            .map(|s| s.iter().map(|v| (v / count * 1e4).round() / 1e4).collect())
            .collect();
        let spans: Vec<[usize; 2]> = scored.tokens.iter().map(|t| [t.start, t.end]).collect();
        let line = serde_json::json!({
            "text": text, "generator": generator, "source": source,
            "tokens": toks, "spans": spans, "layers": pool, "pools": pools,
        });
        writeln!(file, "{line}").unwrap();
        done.insert(text);
        n += 1;
        if n % 25 == 0 {
            eprintln!("{n} texts, {:.0} s", started.elapsed().as_secs_f64());
        }
    }
}

//! Sentence encoder speed: sentences and tokens per second of `UseEncoder::embed_batch`, on one
//! thread and through `paraphrase::embed_all` on every core, for 100, 1,000 and 10,000 real
//! sentences (CSL abstracts, cycled when the data holds fewer).
//!
//!   cargo run --release -p wenjian-bench --bin embed-speed -- [SIZES…]   (default 100 1000 10000)
//!
//! Prints one JSON object per size. Needs `wenjian models fetch usem3` and the evaluation data.

use std::time::Instant;

fn real_sentences() -> Option<Vec<String>> {
    let dir = wenjian_bench::eval_data_dir()?;
    let bytes = std::fs::read(dir.join("corpus/csl-abstracts-a.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let mut out = Vec::new();
    for rows in value.as_object()?.values() {
        for row in rows.as_array()? {
            let text = row["abstract"].as_str().unwrap_or("");
            let chars: Vec<char> = text.chars().collect();
            for (s, e) in simcheck::paraphrase::library_sentences(text) {
                out.push(chars[s..e].iter().collect());
            }
        }
    }
    Some(out)
}

fn main() {
    let sizes = wenjian_bench::numbers_from_args(&[100, 1_000, 10_000]);
    let Ok(encoder) = embed::UseEncoder::load(&wenjian_bench::models_dir().join("usem3")) else {
        eprintln!("skipped: usem3 not found (run `wenjian models fetch usem3`)");
        return;
    };
    let Some(pool) = real_sentences().filter(|p| !p.is_empty()) else {
        eprintln!("skipped: evaluation data not found");
        return;
    };
    for n in sizes {
        let sentences: Vec<String> = pool.iter().cycle().take(n).cloned().collect();
        let t = Instant::now();
        let tokens: usize = sentences
            .iter()
            .map(|s| encoder.tokenizer().encode(s).len())
            .sum();
        let tokenize = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for batch in sentences.chunks(32) {
            let batch: Vec<&str> = batch.iter().map(String::as_str).collect();
            std::hint::black_box(encoder.embed_batch(&batch));
        }
        let one = t.elapsed().as_secs_f64();
        let t = Instant::now();
        std::hint::black_box(simcheck::paraphrase::embed_all(&encoder, &sentences));
        let all = t.elapsed().as_secs_f64();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!(
            "{}",
            serde_json::json!({
                "bench": "embed-speed",
                "sentences": n,
                "tokens": tokens,
                "tokenize_ms": tokenize * 1000.0,
                "one_thread_ms": one * 1000.0,
                "one_thread_sentences_per_second": n as f64 / one,
                "one_thread_tokens_per_second": tokens as f64 / one,
                "threads": threads,
                "all_threads_ms": all * 1000.0,
                "all_threads_sentences_per_second": n as f64 / all,
            })
        );
    }
}

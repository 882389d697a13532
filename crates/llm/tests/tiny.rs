//! The Qwen2 forward on a tiny randomly initialised model written to a real GGUF file: shapes,
//! causality (a position never sees later tokens) and the token statistics.

use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{D, Device, Tensor};
use llm::qwen2::{Arithmetic, Qwen2, token_stats};
use proptest::prelude::*;

const VOCAB: usize = 64;
const HIDDEN: usize = 16;
const HEADS: usize = 4;
const KV_HEADS: usize = 2;
const FFN: usize = 32;
const LAYERS: usize = 2;

fn tiny_gguf(seed: u64) -> tempfile::NamedTempFile {
    let dev = Device::Cpu;
    let mut x = seed.wrapping_add(1);
    let mut rand = |shape: &[usize]| {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.8
            })
            .collect();
        QTensor::quantize(&Tensor::from_vec(v, shape, &dev).unwrap(), GgmlDType::F32).unwrap()
    };
    let head_dim = HIDDEN / HEADS;
    let mut tensors: Vec<(String, QTensor)> = vec![
        ("token_embd.weight".into(), rand(&[VOCAB, HIDDEN])),
        ("output_norm.weight".into(), rand(&[HIDDEN])),
    ];
    for i in 0..LAYERS {
        let p = format!("blk.{i}");
        for (n, shape) in [
            ("attn_q.weight", vec![HIDDEN, HIDDEN]),
            ("attn_k.weight", vec![KV_HEADS * head_dim, HIDDEN]),
            ("attn_v.weight", vec![KV_HEADS * head_dim, HIDDEN]),
            ("attn_q.bias", vec![HIDDEN]),
            ("attn_k.bias", vec![KV_HEADS * head_dim]),
            ("attn_v.bias", vec![KV_HEADS * head_dim]),
            ("attn_output.weight", vec![HIDDEN, HIDDEN]),
            ("attn_norm.weight", vec![HIDDEN]),
            ("ffn_norm.weight", vec![HIDDEN]),
            ("ffn_gate.weight", vec![FFN, HIDDEN]),
            ("ffn_up.weight", vec![FFN, HIDDEN]),
            ("ffn_down.weight", vec![HIDDEN, FFN]),
        ] {
            tensors.push((format!("{p}.{n}"), rand(&shape)));
        }
    }
    let meta = [
        (
            "general.architecture",
            gguf_file::Value::String("qwen2".into()),
        ),
        ("qwen2.block_count", gguf_file::Value::U32(LAYERS as u32)),
        (
            "qwen2.embedding_length",
            gguf_file::Value::U32(HIDDEN as u32),
        ),
        (
            "qwen2.attention.head_count",
            gguf_file::Value::U32(HEADS as u32),
        ),
        (
            "qwen2.attention.head_count_kv",
            gguf_file::Value::U32(KV_HEADS as u32),
        ),
        (
            "qwen2.attention.layer_norm_rms_epsilon",
            gguf_file::Value::F32(1e-6),
        ),
        ("qwen2.rope.freq_base", gguf_file::Value::F32(10_000.0)),
        ("qwen2.context_length", gguf_file::Value::U32(256)),
    ];
    let file = tempfile::NamedTempFile::new().unwrap();
    let meta_refs: Vec<(&str, &gguf_file::Value)> = meta.iter().map(|(k, v)| (*k, v)).collect();
    let tensor_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    gguf_file::write(&mut file.reopen().unwrap(), &meta_refs, &tensor_refs).unwrap();
    file
}

fn load(seed: u64) -> Qwen2 {
    let file = tiny_gguf(seed);
    Qwen2::from_gguf(&mut file.reopen().unwrap(), &Device::Cpu, Arithmetic::F32).unwrap()
}

#[test]
fn every_position_gets_logits_over_the_vocabulary() {
    let model = load(1);
    assert_eq!(model.vocab_size(), VOCAB);
    let logits = model.logits(&[1, 5, 9, 63, 0]).unwrap();
    assert_eq!(logits.dims(), &[5, VOCAB]);
    let v: Vec<Vec<f32>> = logits.to_vec2().unwrap();
    assert!(v.iter().flatten().all(|x| x.is_finite()));
    assert!(model.logits(&[]).is_err());
}

#[test]
fn statistics_agree_with_the_distribution() {
    let model = load(2);
    let tokens = [3u32, 7, 11, 2, 40, 41];
    let logits = model.logits(&tokens).unwrap();
    let stats = token_stats(&logits, &tokens).unwrap();
    assert_eq!(stats.logprob.len(), tokens.len() - 1);
    let logp: Vec<Vec<f32>> = candle_nn::ops::log_softmax(&logits, D::Minus1)
        .unwrap()
        .to_vec2()
        .unwrap();
    for i in 0..tokens.len() - 1 {
        let row = &logp[i];
        let want = row[tokens[i + 1] as usize];
        assert!((stats.logprob[i] - want).abs() < 1e-4);
        let better = row.iter().filter(|&&x| x > want).count() as u32;
        assert_eq!(stats.rank[i], better + 1);
        let entropy: f32 = -row.iter().map(|l| l.exp() * l).sum::<f32>();
        assert!((stats.entropy[i] - entropy).abs() < 1e-3);
        assert!(stats.entropy[i] >= 0.0 && stats.entropy[i] <= (VOCAB as f32).ln() + 1e-3);
        assert!(stats.logprob_variance[i] >= 0.0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Causality: the logits of a prefix do not change when tokens are appended.
    #[test]
    fn later_tokens_never_change_earlier_logits(
        prefix in proptest::collection::vec(0u32..VOCAB as u32, 1..12),
        suffix in proptest::collection::vec(0u32..VOCAB as u32, 1..12),
    ) {
        let model = load(3);
        let full: Vec<u32> = prefix.iter().chain(&suffix).copied().collect();
        let a: Vec<Vec<f32>> = model.logits(&prefix).unwrap().to_vec2().unwrap();
        let b: Vec<Vec<f32>> = model.logits(&full).unwrap().to_vec2().unwrap();
        for (ra, rb) in a.iter().zip(&b) {
            for (x, y) in ra.iter().zip(rb) {
                prop_assert!((x - y).abs() < 1e-3, "{x} vs {y}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Generation's cached forward agrees with the full forward: feeding a prompt and then
    /// tokens one or several at a time gives the logits the full pass gives at those positions.
    #[test]
    fn cached_decoding_matches_the_full_forward(
        prompt in proptest::collection::vec(0u32..VOCAB as u32, 1..10),
        rest in proptest::collection::vec(0u32..VOCAB as u32, 1..10),
        step in 1usize..4,
    ) {
        let model = load(4);
        let full: Vec<u32> = prompt.iter().chain(&rest).copied().collect();
        let want: Vec<Vec<f32>> = model.logits(&full).unwrap().to_vec2().unwrap();
        let mut cache = model.new_cache();
        let mut fed = 0;
        for piece in std::iter::once(&prompt[..]).chain(rest.chunks(step)) {
            let got: Vec<f32> = model.next_logits(piece, &mut cache).unwrap().to_vec1().unwrap();
            fed += piece.len();
            prop_assert_eq!(cache.len(), fed);
            for (x, y) in got.iter().zip(&want[fed - 1]) {
                prop_assert!((x - y).abs() < 1e-3, "{x} vs {y}");
            }
        }
        // Cut back to the prompt and fed other tokens, the cache gives what a full pass over
        // the prompt and those tokens gives (generation resumes a shared start this way).
        let other: Vec<u32> = rest.iter().map(|t| (t + 1) % VOCAB as u32).collect();
        cache.truncate(prompt.len());
        prop_assert_eq!(cache.len(), prompt.len());
        let got: Vec<f32> = model.next_logits(&other, &mut cache).unwrap().to_vec1().unwrap();
        let full: Vec<u32> = prompt.iter().chain(&other).copied().collect();
        let want: Vec<Vec<f32>> = model.logits(&full).unwrap().to_vec2().unwrap();
        for (x, y) in got.iter().zip(want.last().unwrap()) {
            prop_assert!((x - y).abs() < 1e-3, "{x} vs {y}");
        }
    }
}

/// The cache's buffers grow past their first size (64 positions) without losing a position.
#[test]
fn a_long_generation_outgrows_the_first_cache_buffer() {
    let model = load(5);
    let tokens: Vec<u32> = (0..200u32).map(|i| (i * 7 + 3) % VOCAB as u32).collect();
    let want: Vec<Vec<f32>> = model.logits(&tokens).unwrap().to_vec2().unwrap();
    let mut cache = model.new_cache();
    for piece in tokens.chunks(13) {
        let got: Vec<f32> = model
            .next_logits(piece, &mut cache)
            .unwrap()
            .to_vec1()
            .unwrap();
        for (x, y) in got.iter().zip(&want[cache.len() - 1]) {
            assert!((x - y).abs() < 1e-3, "at {}: {x} vs {y}", cache.len());
        }
    }
    assert_eq!(cache.len(), tokens.len());
}

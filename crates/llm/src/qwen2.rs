//! A quantized Qwen2 (GGUF) forward pass that returns the logits of every position, which
//! scoring needs (the usual generation forward keeps only the last one): one pass per chunk,
//! each chunk scored on its own. Generation feeds tokens through a key-value cache instead.

use candle_core::quantized::{GgmlDType, QMatMul, QTensor, gguf_file};
use candle_core::{D, DType, Device, Module, Tensor};
use std::io::{Read, Seek};

use crate::LlmError;

struct Attention {
    q: QMatMul,
    k: QMatMul,
    v: QMatMul,
    q_bias: Tensor,
    k_bias: Tensor,
    v_bias: Tensor,
    out: QMatMul,
}

struct Layer {
    attn_norm: Tensor,
    attn: Attention,
    ffn_norm: Tensor,
    gate: QMatMul,
    up: QMatMul,
    down: QMatMul,
}

/// Shape of the network, from the GGUF metadata.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Qwen2Config {
    pub layers: usize,
    pub hidden: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub rms_eps: f64,
    pub rope_theta: f32,
    pub context: usize,
}

pub struct Qwen2 {
    pub config: Qwen2Config,
    embeddings: Tensor,
    layers: Vec<Layer>,
    norm: Tensor,
    output: QMatMul,
    cos: Tensor,
    sin: Tensor,
    device: Device,
}

fn meta<'a>(content: &'a gguf_file::Content, key: &str) -> Result<&'a gguf_file::Value, LlmError> {
    content
        .metadata
        .get(key)
        .ok_or_else(|| LlmError::Model(format!("GGUF 缺少元数据 {key}")))
}

impl Qwen2 {
    pub fn from_gguf<R: Read + Seek>(reader: &mut R, device: &Device) -> Result<Qwen2, LlmError> {
        let content = gguf_file::Content::read(reader)?;
        let arch = meta(&content, "general.architecture")?.to_string()?.clone();
        if arch != "qwen2" {
            return Err(LlmError::Model(format!(
                "不支持的模型架构 {arch}（需要 qwen2）"
            )));
        }
        let u = |k: &str| -> Result<usize, LlmError> {
            Ok(meta(&content, &format!("qwen2.{k}"))?.to_u32()? as usize)
        };
        let config = Qwen2Config {
            layers: u("block_count")?,
            hidden: u("embedding_length")?,
            heads: u("attention.head_count")?,
            kv_heads: u("attention.head_count_kv")?,
            rms_eps: meta(&content, "qwen2.attention.layer_norm_rms_epsilon")?.to_f32()? as f64,
            rope_theta: meta(&content, "qwen2.rope.freq_base")
                .and_then(|v| Ok(v.to_f32()?))
                .unwrap_or(1_000_000.0),
            context: u("context_length").unwrap_or(32_768),
        };
        let mut tensor =
            |name: &str| -> Result<QTensor, LlmError> { Ok(content.tensor(reader, name, device)?) };
        let token_embd = tensor("token_embd.weight")?;
        let embeddings = token_embd.dequantize(device)?;
        let norm = tensor("output_norm.weight")?.dequantize(device)?;
        // Small Qwen2 models tie the output projection to the embeddings.
        let output = match tensor("output.weight") {
            Ok(t) => fast_qmatmul(t, device)?,
            Err(_) => fast_qmatmul(token_embd, device)?,
        };
        let mut layers = Vec::with_capacity(config.layers);
        for i in 0..config.layers {
            let p = format!("blk.{i}");
            let mut qmm = |n: &str| -> Result<QMatMul, LlmError> {
                fast_qmatmul(tensor(&format!("{p}.{n}.weight"))?, device)
            };
            let (q, k, v, out) = (
                qmm("attn_q")?,
                qmm("attn_k")?,
                qmm("attn_v")?,
                qmm("attn_output")?,
            );
            let (gate, up, down) = (qmm("ffn_gate")?, qmm("ffn_up")?, qmm("ffn_down")?);
            let mut vector = |n: &str| -> Result<Tensor, LlmError> {
                Ok(tensor(&format!("{p}.{n}"))?.dequantize(device)?)
            };
            let attn = Attention {
                q,
                k,
                v,
                out,
                q_bias: vector("attn_q.bias")?,
                k_bias: vector("attn_k.bias")?,
                v_bias: vector("attn_v.bias")?,
            };
            let (attn_norm, ffn_norm) = (vector("attn_norm.weight")?, vector("ffn_norm.weight")?);
            layers.push(Layer {
                attn,
                gate,
                up,
                down,
                attn_norm,
                ffn_norm,
            });
        }
        let head_dim = config.hidden / config.heads;
        let (cos, sin) = rope_tables(
            head_dim,
            config.context.min(8192),
            config.rope_theta,
            device,
        )?;
        Ok(Qwen2 {
            config,
            embeddings,
            layers,
            norm,
            output,
            cos,
            sin,
            device: device.clone(),
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.embeddings.dim(0).unwrap_or(0)
    }

    /// Longest chunk the rotary tables cover.
    pub fn max_positions(&self) -> usize {
        self.cos.dim(0).unwrap_or(0)
    }

    /// Logits of every position: `[tokens, vocab]`, row `t` predicting token `t + 1`.
    pub fn logits(&self, tokens: &[u32]) -> Result<Tensor, LlmError> {
        self.forward(tokens, None, false)
    }

    /// A cache for generation: keys and values of the positions fed so far.
    pub fn new_cache(&self) -> KvCache {
        KvCache {
            layers: (0..self.layers.len()).map(|_| None).collect(),
            len: 0,
        }
    }

    /// Feeds `tokens` after what `cache` holds and returns the logits predicting the token
    /// after them (`[vocab]`); the cache grows by `tokens`.
    pub fn next_logits(&self, tokens: &[u32], cache: &mut KvCache) -> Result<Tensor, LlmError> {
        Ok(self.forward(tokens, Some(cache), true)?.squeeze(0)?)
    }

    fn forward(
        &self,
        tokens: &[u32],
        mut cache: Option<&mut KvCache>,
        last_only: bool,
    ) -> Result<Tensor, LlmError> {
        let t = tokens.len();
        let past = cache.as_ref().map_or(0, |c| c.len);
        if t == 0 || past + t > self.max_positions() {
            return Err(LlmError::Input(format!(
                "每段需 1 到 {} 个词元，实际 {}",
                self.max_positions(),
                past + t
            )));
        }
        let c = self.config;
        let head_dim = c.hidden / c.heads;
        let ids = Tensor::new(tokens, &self.device)?;
        let mut x = self.embeddings.index_select(&ids, 0)?.unsqueeze(0)?; // [1, T, H]
        let mask = (t > 1)
            .then(|| causal_mask(t, past, &self.device))
            .transpose()?;
        let cos = self.cos.narrow(0, past, t)?;
        let sin = self.sin.narrow(0, past, t)?;
        let scale = 1.0 / (head_dim as f64).sqrt();
        for (i, layer) in self.layers.iter().enumerate() {
            let h = candle_nn::ops::rms_norm(&x, &layer.attn_norm, c.rms_eps as f32)?;
            let a = &layer.attn;
            let heads = |m: &QMatMul, bias: &Tensor, n: usize| -> Result<Tensor, LlmError> {
                Ok(m.forward(&h)?
                    .broadcast_add(bias)?
                    .reshape((1, t, n, head_dim))?
                    .transpose(1, 2)?
                    .contiguous()?)
            };
            let q = candle_nn::rotary_emb::rope(&heads(&a.q, &a.q_bias, c.heads)?, &cos, &sin)?;
            let mut k =
                candle_nn::rotary_emb::rope(&heads(&a.k, &a.k_bias, c.kv_heads)?, &cos, &sin)?;
            let mut v = heads(&a.v, &a.v_bias, c.kv_heads)?;
            if let Some(cache) = cache.as_deref_mut() {
                if let Some((pk, pv)) = &cache.layers[i] {
                    k = Tensor::cat(&[pk, &k], 2)?.contiguous()?;
                    v = Tensor::cat(&[pv, &v], 2)?.contiguous()?;
                }
                cache.layers[i] = Some((k.clone(), v.clone()));
            }
            let (k, v) = (
                repeat_kv(k, c.heads / c.kv_heads)?,
                repeat_kv(v, c.heads / c.kv_heads)?,
            );
            let mut att = (q.matmul(&k.t()?)? * scale)?;
            if let Some(mask) = &mask {
                att = att.broadcast_add(mask)?;
            }
            let att = candle_nn::ops::softmax_last_dim(&att)?;
            let y = att.matmul(&v)?.transpose(1, 2)?.reshape((1, t, c.hidden))?;
            x = (x + a.out.forward(&y)?)?;
            let h = candle_nn::ops::rms_norm(&x, &layer.ffn_norm, c.rms_eps as f32)?;
            let ff = (candle_nn::ops::silu(&layer.gate.forward(&h)?)? * layer.up.forward(&h)?)?;
            x = (x + layer.down.forward(&ff)?)?;
        }
        if let Some(cache) = cache {
            cache.len += t;
        }
        if last_only {
            // Generation needs only the next token: skip the vocabulary product elsewhere.
            x = x.narrow(1, t - 1, 1)?;
        }
        let x = candle_nn::ops::rms_norm(&x, &self.norm, c.rms_eps as f32)?;
        Ok(self.output.forward(&x)?.squeeze(0)?.to_dtype(DType::F32)?)
    }
}

/// Keys and values (after rotary embedding, before the grouped heads are repeated) of every
/// position fed so far, per layer.
pub struct KvCache {
    layers: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
}

impl KvCache {
    /// Positions fed so far.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A matrix for `QMatMul`. Block formats whose CPU kernel in candle is slow for the many-row
/// products of scoring (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: 12–15 GMAC/s here against 46 for f16
/// and 69 for Q4_K) are widened to f16, which is exact for them to within f16 rounding; the
/// K-quants stay as they are.
fn fast_qmatmul(t: QTensor, device: &Device) -> Result<QMatMul, LlmError> {
    let t = match t.dtype() {
        GgmlDType::Q4_0 | GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1 | GgmlDType::Q8_0 => {
            QTensor::quantize(&t.dequantize(device)?, GgmlDType::F32)?
        }
        _ => t,
    };
    Ok(QMatMul::from_qtensor(t)?)
}

fn repeat_kv(x: Tensor, n_rep: usize) -> candle_core::Result<Tensor> {
    if n_rep == 1 {
        return Ok(x);
    }
    let (b, kv, t, d) = x.dims4()?;
    x.unsqueeze(2)?
        .expand((b, kv, n_rep, t, d))?
        .reshape((b, kv * n_rep, t, d))
}

/// `[t, past + t]`: 0 where new position `i` may look (every cached position and the new ones
/// up to itself), −∞ at later positions.
fn causal_mask(t: usize, past: usize, device: &Device) -> candle_core::Result<Tensor> {
    let width = past + t;
    let mask: Vec<f32> = (0..t)
        .flat_map(|i| (0..width).map(move |j| if j > past + i { f32::NEG_INFINITY } else { 0.0 }))
        .collect();
    Tensor::from_slice(&mask, (t, width), device)
}

fn rope_tables(
    head_dim: usize,
    positions: usize,
    theta: f32,
    device: &Device,
) -> candle_core::Result<(Tensor, Tensor)> {
    let inv: Vec<f32> = (0..head_dim)
        .step_by(2)
        .map(|i| 1.0 / theta.powf(i as f32 / head_dim as f32))
        .collect();
    let inv = Tensor::from_vec(inv, (1, head_dim / 2), device)?;
    let pos = Tensor::arange(0u32, positions as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((positions, 1))?;
    let freqs = pos.matmul(&inv)?;
    Ok((freqs.cos()?, freqs.sin()?))
}

/// Per-position statistics of a chunk's logits against the tokens that actually follow.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenStats {
    /// log p(actual next token).
    pub logprob: Vec<f32>,
    /// 1-based rank of the actual token among all.
    pub rank: Vec<u32>,
    /// Entropy of the predicted distribution (nats).
    pub entropy: Vec<f32>,
    /// Variance of log p under the predicted distribution (Fast-DetectGPT's analytic variance).
    pub logprob_variance: Vec<f32>,
}

/// Statistics of one predicted distribution (a row of logits) against the token that followed.
fn row_stats(row: &[f32], actual: usize) -> (f32, u32, f32, f32) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = row.iter().map(|&x| ((x - max) as f64).exp()).sum();
    let log_z = max as f64 + sum.ln();
    // E[log p] and E[(log p)^2] under p, in one pass.
    let (mut m1, mut m2) = (0f64, 0f64);
    for &x in row {
        let lp = x as f64 - log_z;
        let p = lp.exp();
        m1 += p * lp;
        m2 += p * lp * lp;
    }
    let target = row.get(actual).copied().unwrap_or(f32::NEG_INFINITY);
    let rank = row.iter().filter(|&&x| x > target).count() as u32 + 1;
    (
        (target as f64 - log_z) as f32,
        rank,
        (-m1) as f32,
        (m2 - m1 * m1).max(0.0) as f32,
    )
}

/// Statistics for tokens `1..n` (token 0 has no context in its chunk). Rows are spread over the
/// available cores.
pub fn token_stats(logits: &Tensor, tokens: &[u32]) -> Result<TokenStats, LlmError> {
    let n = tokens.len();
    let mut stats = TokenStats {
        logprob: vec![],
        rank: vec![],
        entropy: vec![],
        logprob_variance: vec![],
    };
    if n < 2 {
        return Ok(stats);
    }
    let vocab = logits.dim(1)?;
    let flat: Vec<f32> = logits.narrow(0, 0, n - 1)?.flatten_all()?.to_vec1()?;
    // The same thread count as candle's matrix products (RAYON_NUM_THREADS, else every core).
    let threads = candle_core::utils::get_num_threads().clamp(1, n - 1);
    let per = (n - 1).div_ceil(threads);
    let rows: Vec<(f32, u32, f32, f32)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let flat = &flat;
                scope.spawn(move || {
                    (t * per..((t + 1) * per).min(n - 1))
                        .map(|i| {
                            row_stats(&flat[i * vocab..(i + 1) * vocab], tokens[i + 1] as usize)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for (logprob, rank, entropy, variance) in rows {
        stats.logprob.push(logprob);
        stats.rank.push(rank);
        stats.entropy.push(entropy);
        stats.logprob_variance.push(variance);
    }
    Ok(stats)
}

/// Cross-entropy of `observer`'s predictions under `performer`'s distribution, per position
/// (Binoculars' cross-perplexity term).
pub fn cross_entropy(
    performer: &Tensor,
    observer: &Tensor,
    n: usize,
) -> Result<Vec<f32>, LlmError> {
    if n < 2 {
        return Ok(vec![]);
    }
    let p = candle_nn::ops::softmax_last_dim(&performer.narrow(0, 0, n - 1)?)?;
    let logq = candle_nn::ops::log_softmax(&observer.narrow(0, 0, n - 1)?, D::Minus1)?;
    Ok((p * logq)?.sum(D::Minus1)?.neg()?.to_vec1()?)
}

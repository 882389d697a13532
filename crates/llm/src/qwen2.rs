//! A quantized Qwen2 (GGUF) forward pass that returns the logits of every position, which
//! scoring needs (the usual generation forward keeps only the last one): one pass per chunk,
//! each chunk scored on its own. Generation feeds tokens through a key-value cache instead.

use candle_core::quantized::{GgmlDType, QMatMul, QTensor, gguf_file};
use candle_core::{DType, Device, Module, Tensor};
use std::io::{Read, Seek};

use crate::LlmError;
use crate::int8::QuantLinear;

struct Attention {
    q: Linear,
    k: Linear,
    v: Linear,
    q_bias: Tensor,
    k_bias: Tensor,
    v_bias: Tensor,
    out: Linear,
}

struct Layer {
    attn_norm: Tensor,
    attn: Attention,
    ffn_norm: Tensor,
    gate: Linear,
    up: Linear,
    down: Linear,
}

/// How the layers stored in simple block formats (Q5_0, Q8_0, …) are multiplied. Scores differ
/// slightly between the two (mean log p by about 0.005 nats, per token by 0.065 on average),
/// so a calibration belongs to one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arithmetic {
    /// Weights widened to f32, f32 activations.
    F32,
    /// Each 32-value block of activations quantized to 8 bits as llama.cpp does, integer
    /// products (`int8`): faster on CPUs where the f32 product is at its peak. The shipped
    /// calibrations were fitted with it.
    #[default]
    Int8,
}

impl Arithmetic {
    /// The short name calibrations and score caches record.
    pub fn name(self) -> &'static str {
        match self {
            Arithmetic::F32 => "f32",
            Arithmetic::Int8 => "int8",
        }
    }
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
    output: Linear,
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
    pub fn from_gguf<R: Read + Seek>(
        reader: &mut R,
        device: &Device,
        arithmetic: Arithmetic,
    ) -> Result<Qwen2, LlmError> {
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
            Ok(t) => fast_qmatmul(t, device, arithmetic)?,
            Err(_) => fast_qmatmul(token_embd, device, arithmetic)?,
        };
        let mut layers = Vec::with_capacity(config.layers);
        for i in 0..config.layers {
            let p = format!("blk.{i}");
            let mut qmm = |n: &str| -> Result<Linear, LlmError> {
                fast_qmatmul(tensor(&format!("{p}.{n}.weight"))?, device, arithmetic)
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
        self.project(&self.hidden(tokens)?)
    }

    /// The final hidden state of every position (`[tokens, hidden]`, normalised), for
    /// `project` to turn into logits: the scorer projects only the rows it scores, and a pair of
    /// models each their own.
    pub fn hidden(&self, tokens: &[u32]) -> Result<Tensor, LlmError> {
        self.forward(tokens, None, false, &[]).map(|(h, _)| h)
    }

    /// `hidden`, and the residual stream after each layer in `taps` (0-based, in increasing
    /// order), each row scaled to unit root-mean-square (`[tokens, hidden]` each): what a probe
    /// on the model's intermediate representation reads.
    pub fn hidden_tapped(
        &self,
        tokens: &[u32],
        taps: &[usize],
    ) -> Result<(Tensor, Vec<Tensor>), LlmError> {
        if let Some(&bad) = taps.iter().find(|&&l| l >= self.layers.len()) {
            return Err(LlmError::Input(format!(
                "模型只有 {} 层，无法读取第 {bad} 层",
                self.layers.len()
            )));
        }
        self.forward(tokens, None, false, taps)
    }

    /// Number of transformer layers.
    pub fn layer_count(&self) -> usize {
        self.layers.len()
    }

    /// Logits (`[rows, vocab]`) of hidden states (`[rows, hidden]`).
    pub fn project(&self, hidden: &Tensor) -> Result<Tensor, LlmError> {
        Ok(self.output.forward(hidden)?.to_dtype(DType::F32)?)
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
        Ok(self
            .project(&self.forward(tokens, Some(cache), true, &[])?.0)?
            .squeeze(0)?)
    }

    fn forward(
        &self,
        tokens: &[u32],
        mut cache: Option<&mut KvCache>,
        last_only: bool,
        taps: &[usize],
    ) -> Result<(Tensor, Vec<Tensor>), LlmError> {
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
        let cos = self.cos.narrow(0, past, t)?;
        let sin = self.sin.narrow(0, past, t)?;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let mut tapped = Vec::with_capacity(taps.len());
        for (i, layer) in self.layers.iter().enumerate() {
            let h = candle_nn::ops::rms_norm(&x, &layer.attn_norm, c.rms_eps as f32)?;
            let a = &layer.attn;
            let heads = |m: &Linear, bias: &Tensor, n: usize| -> Result<Tensor, LlmError> {
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
                (k, v) = cache.append(i, past, &k, &v)?;
            }
            // Grouped-query attention without repeating the keys and values per head: the
            // heads sharing a key-value head are stacked as rows of one product (`[1, kv_heads,
            // group · t, head_dim]`). Repeating them copied the whole cache six times per layer
            // and per generated token, which made generation slow down with the prompt's length.
            let group = c.heads / c.kv_heads;
            let q = q.reshape((1, c.kv_heads, group * t, head_dim))?;
            let att = causal_softmax(&q.matmul(&k.t()?)?, scale as f32, past)?;
            let y = att
                .matmul(&v)?
                .reshape((1, c.heads, t, head_dim))?
                .transpose(1, 2)?
                .reshape((1, t, c.hidden))?;
            x = (x + a.out.forward(&y)?)?;
            let h = candle_nn::ops::rms_norm(&x, &layer.ffn_norm, c.rms_eps as f32)?;
            let ff = (candle_nn::ops::silu(&layer.gate.forward(&h)?)? * layer.up.forward(&h)?)?;
            x = (x + layer.down.forward(&ff)?)?;
            if taps.contains(&i) {
                let rms = x.sqr()?.mean_keepdim(2)?.sqrt()?;
                tapped.push(x.broadcast_div(&(rms + 1e-6)?)?.squeeze(0)?);
            }
        }
        if let Some(cache) = cache {
            cache.len += t;
        }
        if last_only {
            // Generation needs only the next token: skip the vocabulary product elsewhere.
            x = x.narrow(1, t - 1, 1)?;
        }
        let last = candle_nn::ops::rms_norm(&x, &self.norm, c.rms_eps as f32)?.squeeze(0)?;
        Ok((last, tapped))
    }
}

/// Keys and values (after rotary embedding) of every position fed so far, per layer, in buffers
/// (`[1, kv_heads, capacity, head_dim]`) that grow by doubling: appending a token writes one row
/// instead of copying every position before it.
pub struct KvCache {
    layers: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
}

/// Positions the first buffer holds.
const CACHE_START: usize = 64;

impl KvCache {
    /// Writes layer `layer`'s keys and values of the new positions (`[1, kv_heads, t,
    /// head_dim]`, contiguous) after the `past` ones and returns views of all `past + t`.
    fn append(
        &mut self,
        layer: usize,
        past: usize,
        k: &Tensor,
        v: &Tensor,
    ) -> Result<(Tensor, Tensor), LlmError> {
        let (_, _, t, _) = k.dims4()?;
        let needed = past + t;
        let capacity = self.layers[layer]
            .as_ref()
            .map_or(0, |(kb, _)| kb.dim(2).unwrap_or(0));
        if needed > capacity {
            let grown = needed.max(capacity * 2).max(CACHE_START);
            let widen = |old: Option<&Tensor>, new: &Tensor| -> Result<Tensor, LlmError> {
                let (b, heads, _, d) = new.dims4()?;
                let buffer = Tensor::zeros((b, heads, grown, d), new.dtype(), new.device())?;
                if let Some(old) = old.filter(|_| past > 0) {
                    buffer.slice_set(&old.narrow(2, 0, past)?.contiguous()?, 2, 0)?;
                }
                Ok(buffer)
            };
            let old = self.layers[layer].take();
            let kb = widen(old.as_ref().map(|(kb, _)| kb), k)?;
            let vb = widen(old.as_ref().map(|(_, vb)| vb), v)?;
            self.layers[layer] = Some((kb, vb));
        }
        let Some((kb, vb)) = &self.layers[layer] else {
            return Err(LlmError::Input("缓存未分配".into()));
        };
        kb.slice_set(&k.contiguous()?, 2, past)?;
        vb.slice_set(&v.contiguous()?, 2, past)?;
        Ok((kb.narrow(2, 0, needed)?, vb.narrow(2, 0, needed)?))
    }

    /// Forgets every position from `len` on (the buffers stay, to be written over).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Positions fed so far.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A weight matrix and the fastest product this CPU has for its format.
enum Linear {
    Candle(QMatMul),
    Int8(QuantLinear),
}

impl Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor, LlmError> {
        match self {
            Linear::Candle(m) => Ok(m.forward(x)?),
            Linear::Int8(m) => m.forward(x),
        }
    }
}

/// The product for a GGUF matrix. The K-quants keep candle's kernels. The simple block formats,
/// whose candle kernels are slow for many-row products (12–15 GMAC/s against 69 for Q4_K),
/// are widened to f32 (exact to within f32 rounding), or with `Arithmetic::Int8` Q5_0 and
/// Q8_0 (the 896-wide layers and the output layer of Qwen2.5-0.5B Q4_K_M) run on the integer
/// kernel of `int8`.
fn fast_qmatmul(t: QTensor, device: &Device, arithmetic: Arithmetic) -> Result<Linear, LlmError> {
    if arithmetic == Arithmetic::Int8 && QuantLinear::handles(t.dtype()) {
        return Ok(Linear::Int8(QuantLinear::from_qtensor(&t, device)?));
    }
    let t = match t.dtype() {
        GgmlDType::Q4_0 | GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1 | GgmlDType::Q8_0 => {
            QTensor::quantize(&t.dequantize(device)?, GgmlDType::F32)?
        }
        _ => t,
    };
    Ok(Linear::Candle(QMatMul::from_qtensor(t)?))
}

/// Softmax of each row of `scores · scale` (`[.., group · t, past + t]`), row `i` (new position
/// `i % t`) over the columns it may look at (every cached position and the new ones up to itself);
/// later columns get 0. One pass with the vectorised `exp` instead of a mask add, a scaling
/// and candle's softmax (three passes over the scores, and libm's `exp`).
fn causal_softmax(scores: &Tensor, scale: f32, past: usize) -> Result<Tensor, LlmError> {
    let dims = scores.dims().to_vec();
    // Each group of `t` rows holds the new positions in order (grouped heads stack their rows).
    let (t, width) = match dims[..] {
        [.., rows, width] if width > past && rows % (width - past) == 0 => (width - past, width),
        _ => {
            return Err(LlmError::Input(format!(
                "注意力分数形状 {dims:?} 与已缓存的 {past} 个位置不符"
            )));
        }
    };
    let mut out = vec![0f32; scores.elem_count()];
    with_rows(scores, |flat| {
        let rows = flat.len() / width;
        let threads = candle_core::utils::get_num_threads().clamp(1, rows.max(1));
        let per = rows.div_ceil(threads) * width;
        std::thread::scope(|scope| {
            for (c, (src, dst)) in flat.chunks(per).zip(out.chunks_mut(per)).enumerate() {
                scope.spawn(move || {
                    let rows = src.chunks_exact(width).zip(dst.chunks_exact_mut(width));
                    for (r, (x, y)) in rows.enumerate() {
                        let seen = past + (c * per / width + r) % t + 1;
                        softmax_row(&x[..seen], scale, &mut y[..seen]);
                    }
                });
            }
        });
    })?;
    Ok(Tensor::from_vec(out, dims, scores.device())?)
}

/// `y = softmax(x · scale)` for `scale > 0`.
fn softmax_row(x: &[f32], scale: f32, y: &mut [f32]) {
    let max = max_of(x);
    for (y, &x) in y.iter_mut().zip(x) {
        *y = exp_nonpositive((x - max) * scale);
    }
    let mut lanes = [0f32; LANES];
    let chunks = y.chunks_exact(LANES);
    let rest: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for i in 0..LANES {
            lanes[i] += c[i];
        }
    }
    let inverse = 1.0 / (lanes.iter().sum::<f32>() + rest);
    for y in y.iter_mut() {
        *y *= inverse;
    }
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
#[derive(Debug, Clone, PartialEq, Default)]
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

/// Lanes of the accumulators below: one AVX2 register of f32.
const LANES: usize = 8;
/// Elements summed in f32 before the partial sums move to f64 (keeps a 152k-word sum exact to
/// about 1e-6 without giving up vector arithmetic).
const BLOCK: usize = 1024;

/// e^x for x ≤ 0 (x below −87 gives about 1e-38), within 2 ulp: reduction by ln 2 (Cody–Waite)
/// and a degree-6 polynomial, free of branches and library calls so that loops over it
/// vectorise. Scoring takes one exponential per vocabulary word per token, which made libm's
/// double-precision `exp` a tenth of the scoring time.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    // Adding 1.5·2^23 rounds to an integer that sits in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let x = x.max(-87.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let exponent = (t.to_bits().wrapping_sub(ROUND.to_bits()) as i32 + 127) << 23;
    let p = 1.0
        + r * (1.0
            + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r / 720.0)))));
    p * f32::from_bits(exponent as u32)
}

fn max_of(row: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = row.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            lanes[i] = if c[i] > lanes[i] { c[i] } else { lanes[i] };
        }
    }
    rest.iter()
        .chain(lanes.iter())
        .fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m })
}

/// Σ e^d, Σ e^d·d and Σ e^d·d² over d = x − max, and how many x exceed `target`, in one pass.
fn moments(row: &[f32], max: f32, target: f32) -> ([f64; 3], usize) {
    let mut sums = [0f64; 3];
    let mut above = 0usize;
    for block in row.chunks(BLOCK) {
        let (mut s0, mut s1, mut s2) = ([0f32; LANES], [0f32; LANES], [0f32; LANES]);
        let mut count = [0u32; LANES];
        let chunks = block.chunks_exact(LANES);
        let rest = chunks.remainder();
        for c in chunks {
            for i in 0..LANES {
                let d = c[i] - max;
                let e = exp_nonpositive(d);
                s0[i] += e;
                s1[i] += e * d;
                s2[i] += e * d * d;
                count[i] += (c[i] > target) as u32;
            }
        }
        for &x in rest {
            let d = x - max;
            let e = exp_nonpositive(d);
            s0[0] += e;
            s1[0] += e * d;
            s2[0] += e * d * d;
            count[0] += (x > target) as u32;
        }
        for (sum, lanes) in sums.iter_mut().zip([s0, s1, s2]) {
            *sum += lanes.iter().map(|&v| v as f64).sum::<f64>();
        }
        above += count.iter().map(|&c| c as usize).sum::<usize>();
    }
    (sums, above)
}

/// Statistics of one predicted distribution (a row of logits) against the token that followed:
/// (log p, rank, entropy, variance of log p). With d = logit − max and S_k = Σ e^d·d^k,
/// log p = d_actual − ln S_0, entropy = ln S_0 − S_1/S_0, variance = S_2/S_0 − (S_1/S_0)².
fn row_stats(row: &[f32], actual: usize) -> (f32, u32, f32, f32) {
    let max = max_of(row);
    let target = row.get(actual).copied().unwrap_or(f32::NEG_INFINITY);
    let ([s0, s1, s2], above) = moments(row, max, target);
    let log_s0 = s0.ln();
    let mean = s1 / s0;
    (
        ((target - max) as f64 - log_s0) as f32,
        above as u32 + 1,
        (log_s0 - mean) as f32,
        (s2 / s0 - mean * mean).max(0.0) as f32,
    )
}

/// The rows of a CPU tensor of f32 as one slice, without copying when it is contiguous.
pub fn with_rows<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R, LlmError> {
    let t = t.contiguous()?;
    let (storage, layout) = t.storage_and_layout();
    let candle_core::Storage::Cpu(cpu) = &*storage else {
        return Err(LlmError::Input("只支持在 CPU 上打分".into()));
    };
    let all = cpu.as_slice::<f32>()?;
    let (from, to) = layout
        .contiguous_offsets()
        .ok_or_else(|| LlmError::Input("张量不连续".into()))?;
    Ok(f(&all[from..to]))
}

/// `f(row index)` for rows `0..n`, spread over the cores that candle's matrix products use
/// (RAYON_NUM_THREADS, else every core).
fn par_rows<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if n == 0 {
        return vec![];
    }
    let threads = candle_core::utils::get_num_threads().clamp(1, n);
    let per = n.div_ceil(threads);
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || (t * per..((t + 1) * per).min(n)).map(f).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Statistics of each row of `logits` (`[rows, vocab]`) against `next[row]`, the token that
/// followed that position.
pub fn row_block_stats(logits: &Tensor, next: &[u32]) -> Result<TokenStats, LlmError> {
    let vocab = logits.dim(1)?;
    let rows = next.len().min(logits.dim(0)?);
    let per_row = with_rows(logits, |flat| {
        par_rows(rows, |i| {
            row_stats(&flat[i * vocab..(i + 1) * vocab], next[i] as usize)
        })
    })?;
    let mut stats = TokenStats::default();
    for (logprob, rank, entropy, variance) in per_row {
        stats.logprob.push(logprob);
        stats.rank.push(rank);
        stats.entropy.push(entropy);
        stats.logprob_variance.push(variance);
    }
    Ok(stats)
}

/// Statistics for tokens `1..n` of a chunk from its logits (token 0 has no context in its chunk).
pub fn token_stats(logits: &Tensor, tokens: &[u32]) -> Result<TokenStats, LlmError> {
    if tokens.len() < 2 {
        return Ok(TokenStats::default());
    }
    row_block_stats(logits, &tokens[1..])
}

/// Binoculars' terms for one position: the cross-entropy of `observer`'s prediction under
/// `performer`'s distribution, −Σ p·log q, and the observer's log-probability of the token that
/// followed. With a = performer − max, b = observer − max:
/// −Σ p·log q = ln Σe^b − Σ e^a·b / Σ e^a.
fn pair_row(performer: &[f32], observer: &[f32], actual: usize) -> (f32, f32) {
    let (ma, mb) = (max_of(performer), max_of(observer));
    let (mut sa, mut sb, mut sab) = (0f64, 0f64, 0f64);
    for (pa, pb) in performer.chunks(BLOCK).zip(observer.chunks(BLOCK)) {
        let (mut a0, mut b0, mut ab) = ([0f32; LANES], [0f32; LANES], [0f32; LANES]);
        let (ca, cb) = (pa.chunks_exact(LANES), pb.chunks_exact(LANES));
        let rest = ca.remainder().iter().zip(cb.remainder());
        for (x, y) in ca.zip(cb) {
            for i in 0..LANES {
                let ea = exp_nonpositive(x[i] - ma);
                let db = y[i] - mb;
                a0[i] += ea;
                b0[i] += exp_nonpositive(db);
                ab[i] += ea * db;
            }
        }
        for (&x, &y) in rest {
            let ea = exp_nonpositive(x - ma);
            a0[0] += ea;
            b0[0] += exp_nonpositive(y - mb);
            ab[0] += ea * (y - mb);
        }
        sa += a0.iter().map(|&v| v as f64).sum::<f64>();
        sb += b0.iter().map(|&v| v as f64).sum::<f64>();
        sab += ab.iter().map(|&v| v as f64).sum::<f64>();
    }
    let log_sb = sb.ln();
    let target = observer.get(actual).copied().unwrap_or(f32::NEG_INFINITY);
    (
        (log_sb - sab / sa) as f32,
        ((target - mb) as f64 - log_sb) as f32,
    )
}

/// For each row: (cross-entropy of the observer under the performer, the observer's log p of
/// `next[row]`). Both logits are `[rows, vocab]` over one vocabulary.
pub fn pair_block_stats(
    performer: &Tensor,
    observer: &Tensor,
    next: &[u32],
) -> Result<Vec<(f32, f32)>, LlmError> {
    let vocab = performer.dim(1)?;
    if observer.dim(1)? != vocab {
        return Err(LlmError::Input(format!(
            "两个模型的词表大小不同（{vocab} 与 {}）",
            observer.dim(1)?
        )));
    }
    let rows = next.len().min(performer.dim(0)?).min(observer.dim(0)?);
    with_rows(performer, |a| {
        with_rows(observer, |b| {
            par_rows(rows, |i| {
                let r = i * vocab..(i + 1) * vocab;
                pair_row(&a[r.clone()], &b[r], next[i] as usize)
            })
        })
    })?
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook computation in double precision, for comparison.
    fn naive_stats(row: &[f32], actual: usize) -> (f64, u32, f64, f64) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let z = max
            + row
                .iter()
                .map(|&x| (x as f64 - max).exp())
                .sum::<f64>()
                .ln();
        let lp: Vec<f64> = row.iter().map(|&x| x as f64 - z).collect();
        let m1: f64 = lp.iter().map(|l| l.exp() * l).sum();
        let m2: f64 = lp.iter().map(|l| l.exp() * l * l).sum();
        let rank = row.iter().filter(|&&x| x > row[actual]).count() as u32 + 1;
        (lp[actual], rank, -m1, m2 - m1 * m1)
    }

    #[test]
    fn causal_softmax_sees_only_earlier_positions() {
        let (t, past) = (3usize, 2usize);
        let scores: Vec<f32> = (0..2 * t * (past + t))
            .map(|i| (i % 7) as f32 - 3.0)
            .collect();
        let tensor = Tensor::from_vec(scores.clone(), (1, 2, t, past + t), &Device::Cpu).unwrap();
        let got: Vec<f32> = causal_softmax(&tensor, 0.5, past)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        for (row, (x, y)) in scores
            .chunks(past + t)
            .zip(got.chunks(past + t))
            .enumerate()
        {
            let seen = past + row % t + 1;
            let z: f64 = x[..seen].iter().map(|&v| (v as f64 * 0.5).exp()).sum();
            for j in 0..past + t {
                let want = if j < seen {
                    (x[j] as f64 * 0.5).exp() / z
                } else {
                    0.0
                };
                assert!(
                    (y[j] as f64 - want).abs() < 1e-6,
                    "row {row} col {j}: {} vs {want}",
                    y[j]
                );
            }
        }
        assert!(causal_softmax(&tensor, 0.5, 1).is_err());
        // Grouped heads stacked as rows of one matrix: the same rows, the same answer.
        let stacked = tensor.reshape((1, 1, 2 * t, past + t)).unwrap();
        let again: Vec<f32> = causal_softmax(&stacked, 0.5, past)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        assert_eq!(again, got);
    }

    #[test]
    fn the_fast_exponential_is_within_a_few_ulp() {
        for i in 0..=200_000 {
            let x = -(i as f32) * 87.0 / 200_000.0;
            let (got, want) = (exp_nonpositive(x) as f64, (x as f64).exp());
            assert!(
                (got - want).abs() <= want * 3e-7,
                "exp({x}) = {got}, want {want}"
            );
        }
        assert!(exp_nonpositive(-1e9) < 1e-37);
        assert_eq!(exp_nonpositive(0.0), 1.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any vocabulary size (multiples of the lanes or not) and any spread of logits.
        #[test]
        fn row_statistics_match_the_textbook(
            row in prop::collection::vec(-30f32..30.0, 1..3000),
            pick in any::<prop::sample::Index>(),
        ) {
            let actual = pick.index(row.len());
            let (lp, rank, h, var) = row_stats(&row, actual);
            let (wlp, wrank, wh, wvar) = naive_stats(&row, actual);
            prop_assert!((lp as f64 - wlp).abs() < 1e-4 * (1.0 + wlp.abs()));
            prop_assert_eq!(rank, wrank);
            prop_assert!((h as f64 - wh).abs() < 1e-4 * (1.0 + wh.abs()));
            prop_assert!((var as f64 - wvar).abs() < 1e-3 * (1.0 + wvar.abs()));
        }

        #[test]
        fn pair_terms_match_the_textbook(
            rows in prop::collection::vec((-20f32..20.0, -20f32..20.0), 1..3000),
            pick in any::<prop::sample::Index>(),
        ) {
            let (a, b): (Vec<f32>, Vec<f32>) = rows.into_iter().unzip();
            let actual = pick.index(a.len());
            let (cross, observer_lp) = pair_row(&a, &b, actual);
            let softmax = |r: &[f32]| -> Vec<f64> {
                let z: f64 = r.iter().map(|&x| (x as f64).exp()).sum();
                r.iter().map(|&x| (x as f64).exp() / z).collect()
            };
            let (p, q) = (softmax(&a), softmax(&b));
            let want: f64 = -p.iter().zip(&q).map(|(p, q)| p * q.ln()).sum::<f64>();
            prop_assert!((cross as f64 - want).abs() < 1e-4 * (1.0 + want.abs()));
            prop_assert!((observer_lp as f64 - q[actual].ln()).abs() < 1e-4 * (1.0 + q[actual].ln().abs()));
        }
    }
}

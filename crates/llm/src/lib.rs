//! llm: language models. The local provider loads a quantized Qwen2 GGUF with candle and scores
//! text token by token (for AI-text detection) and generates it (`generate`, the local chat
//! provider); `chat` is the gateway for generation, with an
//! OpenAI-compatible client (the outbound HTTP of the model call is the one thing it speaks;
//! it knows nothing of our API or SQL).

pub mod chat;
pub mod generate;
pub mod int8;
pub mod prompts;
pub mod qwen2;

use candle_core::{Device, Tensor};
pub use qwen2::Arithmetic;
use qwen2::{Qwen2, TokenStats};
use std::path::Path;
use tokenizers::Tokenizer;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("模型文件不可用：{0}")]
    Model(String),
    #[error("输入无效：{0}")]
    Input(String),
    #[error("模型计算失败：{0}")]
    Compute(#[from] candle_core::Error),
    #[error("模型文件读取失败：{0}")]
    Io(#[from] std::io::Error),
}

/// Tokens scored in one forward pass; longer texts are cut into windows of this many, each
/// starting with `CONTEXT` tokens of the previous window for context.
pub const WINDOW: usize = 512;
pub const CONTEXT: usize = 32;

/// One token of the text with its scores. Offsets are characters of the text.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredToken {
    pub start: usize,
    pub end: usize,
    pub logprob: f32,
    pub rank: u32,
    pub entropy: f32,
    pub logprob_variance: f32,
    /// Cross-entropy of a second model's prediction under this one's (Binoculars), when scored
    /// with a pair.
    pub cross_entropy: Option<f32>,
    /// The second model's log p of this token, when scored with a pair.
    pub observer_logprob: Option<f32>,
    /// The probe's reading of this token's hidden state (`Probe`), when scored with one.
    pub probe: Option<f32>,
}

/// A linear read-out of one layer's hidden states (unit root-mean-square rows): each scored
/// token gets `weights · h`. Averaged over a stretch it equals the read-out of the stretch's
/// mean hidden state, which is what a probe is fitted on.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Probe {
    pub layer: usize,
    pub weights: Vec<f32>,
}

/// What scoring reads from the model beside the token scores.
#[derive(Clone, Copy, Default)]
pub struct Reading<'a> {
    /// A second model of the same tokenizer (Binoculars terms).
    pub observer: Option<&'a LocalScorer>,
    /// Layers whose hidden states are summed over the scored tokens (fitting a probe).
    pub pool: &'a [usize],
    pub probe: Option<&'a Probe>,
}

/// The scored tokens, and per pooled layer the sum of their hidden states.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub tokens: Vec<ScoredToken>,
    pub hidden_sums: Vec<Vec<f32>>,
}

/// A text as token ids, with each token's character range.
#[derive(Debug, Clone, PartialEq)]
pub struct Tokens {
    pub ids: Vec<u32>,
    pub offsets: Vec<(usize, usize)>,
}

/// A GGUF model and its tokenizer, ready to score text and to generate it (`generate`).
pub struct LocalScorer {
    pub name: String,
    /// How its block-format layers multiply; a calibration fits scores of one arithmetic.
    pub arithmetic: Arithmetic,
    model: Qwen2,
    tokenizer: Tokenizer,
    /// Tokens with Latin letters and their text, gathered on first use (the copy guard bars
    /// those a Chinese source does not contain).
    latin: std::sync::OnceLock<Vec<(u32, String)>>,
    /// Tokens by their text's first character, gathered on first use (the copy guard bars by
    /// characters).
    pieces: std::sync::OnceLock<std::sync::Arc<generate::Pieces>>,
    /// Tokens with a Chinese character, gathered on first use (an English source's guard bars
    /// them).
    chinese: std::sync::OnceLock<Vec<u32>>,
    /// Tokens with a character of a script such as kana or Cyrillic, and their text, gathered on
    /// first use (a guard bars those its source does not use).
    foreign: std::sync::OnceLock<Vec<(u32, String)>>,
    /// The last generation's tokens and their keys and values, for the next prompt that starts
    /// the same way (`generate`).
    last_prompt: std::sync::Mutex<Option<generate::FedTokens>>,
}

impl LocalScorer {
    /// `model.gguf` and `tokenizer.json` from `dir`, with the arithmetic the shipped
    /// calibrations were fitted with.
    pub fn load(dir: &Path, name: &str) -> Result<LocalScorer, LlmError> {
        Self::load_with(dir, name, Arithmetic::default())
    }

    /// `load` with a chosen arithmetic (`Arithmetic`).
    pub fn load_with(
        dir: &Path,
        name: &str,
        arithmetic: Arithmetic,
    ) -> Result<LocalScorer, LlmError> {
        let gguf = dir.join("model.gguf");
        let mut file = std::fs::File::open(&gguf)
            .map_err(|e| LlmError::Model(format!("{}：{e}", gguf.display())))?;
        let model = Qwen2::from_gguf(&mut file, &Device::Cpu, arithmetic)?;
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"))?;
        Ok(LocalScorer {
            name: name.to_string(),
            arithmetic,
            model,
            tokenizer,
            latin: std::sync::OnceLock::new(),
            pieces: std::sync::OnceLock::new(),
            chinese: std::sync::OnceLock::new(),
            foreign: std::sync::OnceLock::new(),
            last_prompt: Default::default(),
        })
    }

    /// Number of transformer layers (a probe reads one of them).
    pub fn layers(&self) -> usize {
        self.model.layer_count()
    }

    /// The id of one vocabulary entry (special tokens included), when the vocabulary has it.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.tokenizer.token_to_id(token)
    }

    /// Token ids with their character ranges in `text`.
    pub fn tokenize(&self, text: &str) -> Result<Tokens, LlmError> {
        let enc = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| LlmError::Input(e.to_string()))?;
        // Byte offsets → character offsets.
        let mut char_at = vec![0usize; text.len() + 1];
        let mut c = 0;
        for (b, ch) in text.char_indices() {
            for slot in char_at.iter_mut().skip(b).take(ch.len_utf8()) {
                *slot = c;
            }
            c += 1;
        }
        char_at[text.len()] = c;
        let offsets = enc
            .get_offsets()
            .iter()
            .map(|&(s, e)| (char_at[s.min(text.len())], char_at[e.min(text.len())]))
            .collect();
        Ok(Tokens {
            ids: enc.get_ids().to_vec(),
            offsets,
        })
    }

    /// Scores every token of `text` but the first; with `observer`, also the Binoculars
    /// cross-entropy between the two models (they must share the tokenizer).
    pub fn score(
        &self,
        text: &str,
        observer: Option<&LocalScorer>,
    ) -> Result<Vec<ScoredToken>, LlmError> {
        self.score_reporting(text, observer, &mut |_, _| {})
    }

    /// `score`, telling `progress(tokens scored, tokens in all)` after every window.
    pub fn score_reporting(
        &self,
        text: &str,
        observer: Option<&LocalScorer>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Vec<ScoredToken>, LlmError> {
        let reading = Reading {
            observer,
            ..Reading::default()
        };
        Ok(self.read(text, reading, progress)?.tokens)
    }

    /// Scores every token of `text` but the first, with what `reading` asks for beside.
    pub fn read(
        &self,
        text: &str,
        reading: Reading,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Scored, LlmError> {
        let Reading {
            observer,
            pool,
            probe,
        } = reading;
        let mut taps: Vec<usize> = pool.iter().copied().chain(probe.map(|p| p.layer)).collect();
        taps.sort_unstable();
        taps.dedup();
        let probe_weights = probe
            .map(|p| Tensor::from_slice(&p.weights, (p.weights.len(), 1), &Device::Cpu))
            .transpose()?;
        let Tokens { ids, offsets } = self.tokenize(text)?;
        let mut out = Vec::with_capacity(ids.len());
        let mut hidden_sums: Vec<Vec<f32>> = vec![vec![0.0; self.model.config.hidden]; pool.len()];
        let mut next = 1; // the first token has nothing before it to be predicted from
        while next < ids.len() {
            let from = next.saturating_sub(CONTEXT);
            let to = (from + WINDOW).min(ids.len());
            let chunk = &ids[from..to];
            let (hidden, tapped) = self.model.hidden_tapped(chunk, &taps)?;
            let observed = observer.map(|o| o.model.hidden(chunk)).transpose()?;
            // Row r predicts chunk token r + 1; rows before `next - from - 1` were only context.
            // All of a window's rows go through the output layer in one product: the matrix
            // library packs the 152k-word output weight on every call, so fewer, larger calls
            // are faster (a window's logits are at most 311 MB).
            let first = next - from - 1;
            let rows = chunk.len() - 1 - first;
            let following = &chunk[first + 1..];
            let logits = self.model.project(&hidden.narrow(0, first, rows)?)?;
            let stats: TokenStats = qwen2::row_block_stats(&logits, following)?;
            let pair = match (observer, &observed) {
                (Some(o), Some(h)) => Some(qwen2::pair_block_stats(
                    &logits,
                    &o.model.project(&h.narrow(0, first, rows)?)?,
                    following,
                )?),
                _ => None,
            };
            // The hidden state at a scored token's own position (row `first + 1 + i`).
            let at_tokens = |layer: usize| -> Result<Tensor, LlmError> {
                let k = taps.iter().position(|&l| l == layer).unwrap_or(0);
                Ok(tapped[k].narrow(0, first + 1, rows)?)
            };
            for (sum, &layer) in hidden_sums.iter_mut().zip(pool) {
                let window: Vec<f32> = at_tokens(layer)?.sum(0)?.to_vec1()?;
                for (s, w) in sum.iter_mut().zip(window) {
                    *s += w;
                }
            }
            let probed: Option<Vec<f32>> = match (probe, &probe_weights) {
                (Some(p), Some(w)) => {
                    Some(at_tokens(p.layer)?.matmul(w)?.flatten_all()?.to_vec1()?)
                }
                _ => None,
            };
            for i in 0..stats.logprob.len() {
                let tok = next + i;
                out.push(ScoredToken {
                    start: offsets[tok].0,
                    end: offsets[tok].1,
                    logprob: stats.logprob[i],
                    rank: stats.rank[i],
                    entropy: stats.entropy[i],
                    logprob_variance: stats.logprob_variance[i],
                    cross_entropy: pair.as_ref().map(|p| p[i].0),
                    observer_logprob: pair.as_ref().map(|p| p[i].1),
                    probe: probed.as_ref().map(|p| p[i]),
                });
            }
            next = to;
            progress(next, ids.len());
        }
        Ok(Scored {
            tokens: out,
            hidden_sums,
        })
    }
}

pub fn load_tokenizer(path: &Path) -> Result<Tokenizer, LlmError> {
    Tokenizer::from_file(path).map_err(|e| LlmError::Model(format!("{}：{e}", path.display())))
}

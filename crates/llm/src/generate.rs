//! Text generation with the local model: Qwen's chat template, sampling (temperature, nucleus, a
//! light repetition penalty), the model's stop tokens, and the text handed out as it forms. The
//! prompt is fed once through a key-value cache, then one token at a time.

use crate::chat::{
    BoxFuture, ChatError, ChatModel, ChatReply, ChatRequest, CopyGuard, Message, Role, Usage,
};
use crate::{LlmError, LocalScorer};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How the next token is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 draws the most likely token every time.
    pub temperature: f32,
    /// Nucleus: only the most likely tokens whose probabilities sum to this are drawn from.
    pub top_p: f32,
    /// Divides the logits of tokens generated lately (small models loop without it).
    pub repeat_penalty: f32,
    pub seed: u64,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.7,
            top_p: 0.9,
            repeat_penalty: 1.1,
            seed: 42,
        }
    }
}

/// Generated tokens looked back on by the repetition penalty.
const PENALTY_WINDOW: usize = 64;

/// A `CopyGuard` in token ids: for each source token, where it occurs; and which tokens may
/// never be barred.
pub struct Blocking {
    source: Vec<u32>,
    exempt: std::collections::HashSet<u32>,
    probability: f32,
    /// How many of the answer's last tokens must repeat the source (`CopyGuard::run`).
    run: usize,
    /// Barred at every step: Latin words a Chinese source does not use (small models drift into
    /// English when their Chinese wording is barred); every Chinese token for an English source;
    /// for any source, tokens of a script it does not use (`foreign_barred`).
    always: Vec<u32>,
    /// Such words as tokens without a space before them: barred unless the answer ends inside a
    /// capitalised Latin word, which they may continue ("Hy" + "brid") rather than start one.
    glued: Vec<u32>,
    /// The guard by characters (`CopyGuard::chars`), when asked for.
    text_run: Option<TextRun>,
}

/// Tokens whose text starts with a Chinese character, by that character, each with its text:
/// what could continue a run of source characters.
pub struct Pieces(std::collections::HashMap<char, Vec<Piece>>);

/// A token and its text.
type Piece = (u32, Box<[char]>);

impl Pieces {
    fn new(pieces: impl IntoIterator<Item = (u32, String)>) -> Pieces {
        let mut index: std::collections::HashMap<char, Vec<Piece>> = Default::default();
        for (id, text) in pieces {
            let chars: Box<[char]> = text.chars().collect();
            match chars.first() {
                Some(&c) if is_chinese(c) && !chars.contains(&'\u{FFFD}') => {
                    index.entry(c).or_default().push((id, chars))
                }
                _ => {}
            }
        }
        Pieces(index)
    }
}

/// The copy guard by characters: the source, which of its characters belong to a kept term,
/// and the run after which its next characters are barred.
struct TextRun {
    source: Vec<char>,
    kept: Vec<bool>,
    chars: usize,
    pieces: std::sync::Arc<Pieces>,
}

impl TextRun {
    fn new(guard: &CopyGuard, pieces: std::sync::Arc<Pieces>) -> TextRun {
        let source: Vec<char> = guard.source.chars().collect();
        let mut kept = vec![false; source.len()];
        for term in &guard.keep {
            let term: Vec<char> = term.chars().collect();
            if term.is_empty() || term.len() > source.len() {
                continue;
            }
            for start in 0..=source.len() - term.len() {
                if source[start..start + term.len()] == term[..] {
                    kept[start..start + term.len()].fill(true);
                }
            }
        }
        TextRun {
            source,
            kept,
            chars: guard.chars,
            pieces,
        }
    }

    /// The tokens that would continue a run of `chars` source characters at the end of
    /// `answer`. Punctuation, digits and Latin letters, and kept terms, are never barred, but a
    /// run goes on through them.
    fn barred(&self, answer: &str) -> Vec<u32> {
        let mut tail: Vec<char> = answer.chars().rev().take(self.chars).collect();
        if self.chars == 0 || tail.len() < self.chars {
            return Vec::new();
        }
        tail.reverse();
        let mut barred = Vec::new();
        for next in self.chars..self.source.len() {
            if self.source[next - self.chars..next] != tail[..] || self.kept[next] {
                continue;
            }
            let ahead = &self.source[next..];
            for (id, piece) in self.pieces.0.get(&ahead[0]).into_iter().flatten() {
                let shared = piece.len().min(ahead.len());
                if piece[..shared] == ahead[..shared] {
                    barred.push(*id);
                }
            }
        }
        barred
    }
}

impl Blocking {
    /// Whether `id` is barred at every step, wherever generation stands.
    pub fn bars_always(&self, id: u32) -> bool {
        self.always.contains(&id)
    }

    /// The Latin words barred after the answer's `text`: `always`, and `glued` unless the
    /// text ends inside a name (a run of Latin letters and digits opening with a capital:
    /// "Hy", "Word2"). A lowercase start ("co" + "llected") is the drift the bar is for.
    fn barred_after(&self, text: &str) -> impl Iterator<Item = &u32> {
        let tail = text
            .rsplit(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .unwrap_or_default();
        let in_a_name = tail.starts_with(|c: char| c.is_ascii_uppercase());
        let glued: &[u32] = if in_a_name { &[] } else { &self.glued };
        self.always.iter().chain(glued)
    }

    /// The tokens barred after the answer so far (`out`, whose complete text is `text`): by
    /// tokens and, when asked for, by characters.
    fn barred(&self, out: &[u32], text: &str, rng: &mut Rng) -> Vec<u32> {
        let mut barred = self.barred_tokens(out, rng);
        if let Some(run) = &self.text_run {
            let by_text = run.barred(text);
            // One draw for the step: a run is stopped or it is not, whatever its split.
            if !by_text.is_empty() && rng.next_f32() < self.probability {
                barred.extend(by_text);
            }
        }
        barred
    }

    /// The token that followed each occurrence in the source of the answer's last `run`
    /// tokens, each with the guard's probability.
    fn barred_tokens(&self, out: &[u32], rng: &mut Rng) -> Vec<u32> {
        let run = self.run.max(1);
        if out.len() < run {
            return Vec::new();
        }
        let recent = &out[out.len() - run..];
        self.source
            .windows(run + 1)
            .filter(|w| &w[..run] == recent && !self.exempt.contains(&w[run]))
            .map(|w| w[run])
            .filter(|_| rng.next_f32() < self.probability)
            .collect()
    }
}

fn is_chinese(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

fn has_chinese(text: &str) -> bool {
    text.chars().any(is_chinese)
}

/// Whether `c` belongs to a script a Chinese thesis does not use: kana, Hangul, Cyrillic and the
/// other alphabets of Asia and Europe. Greek stays (β-内酰胺酶, μg).
fn is_foreign_script(c: char) -> bool {
    matches!(c as u32,
        0x0400..=0x058F // Cyrillic, Armenian
        | 0x0590..=0x077F // Hebrew, Arabic, Syriac
        | 0x0900..=0x0FFF // the Indic scripts, Thai, Lao, Tibetan
        | 0x10A0..=0x11FF // Georgian, Hangul Jamo
        | 0x3040..=0x30FF // hiragana, katakana
        | 0x3130..=0x318F // Hangul compatibility Jamo
        | 0x31F0..=0x31FF // katakana extensions
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xFF65..=0xFF9F // half-width katakana
    )
}

/// The tokens (`foreign`: id and text, each with a character of `is_foreign_script`) barred for
/// `source`: those with such a character the source does not have. Barred from a Chinese word,
/// the local model wrote it in another script: "阿莫西林/舒巴タン" (run H), "牛ноп子" (run D).
fn foreign_barred(foreign: &[(u32, String)], source: &str) -> Vec<u32> {
    let used: std::collections::HashSet<char> =
        source.chars().filter(|&c| is_foreign_script(c)).collect();
    foreign
        .iter()
        .filter(|(_, text)| {
            text.chars()
                .any(|c| is_foreign_script(c) && !used.contains(&c))
        })
        .map(|(id, _)| *id)
        .collect()
}

/// Whether a guard's source is English: Latin letters and no Chinese character. An answer to
/// it keeps to English.
fn is_english(text: &str) -> bool {
    !has_chinese(text) && text.chars().any(|c| c.is_ascii_alphabetic())
}

#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub text: String,
    pub prompt_tokens: usize,
    /// The prompt's first tokens whose keys and values the last generation had computed.
    pub reused_tokens: usize,
    pub completion_tokens: usize,
    /// `stop` when the model ended its answer, `length` when `max_tokens` cut it.
    pub finish_reason: &'static str,
}

/// Qwen's chat template (ChatML), ending with the opened assistant turn.
pub fn chat_prompt(messages: &[Message]) -> String {
    let mut prompt = String::new();
    for m in messages {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        prompt.push_str(&format!("<|im_start|>{role}\n{}<|im_end|>\n", m.content));
    }
    prompt.push_str("<|im_start|>assistant\n");
    prompt
}

/// splitmix64: a small, seedable generator, enough for drawing tokens.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The next token from `logits`, after the penalty on `recent`.
fn draw(logits: &mut [f32], recent: &[u32], sampling: &Sampling, rng: &mut Rng) -> u32 {
    if sampling.repeat_penalty > 1.0 {
        // Once per distinct token, as llama.cpp does: per occurrence, a character the text uses
        // often (对, 的) was pushed down as a power of the penalty and dropped where it belongs
        // ("外汉语" for 对外汉语).
        let mut distinct = recent.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        for t in distinct {
            if let Some(l) = logits.get_mut(t as usize) {
                *l = if *l > 0.0 {
                    *l / sampling.repeat_penalty
                } else {
                    *l * sampling.repeat_penalty
                };
            }
        }
    }
    let best = logits
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    if sampling.temperature <= 0.0 {
        return best as u32;
    }
    let max = logits[best];
    let mut probs: Vec<(usize, f32)> = logits
        .iter()
        .enumerate()
        .map(|(i, &l)| (i, ((l - max) / sampling.temperature).exp()))
        .filter(|(_, p)| *p > 1e-7)
        .collect();
    probs.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f32 = probs.iter().map(|p| p.1).sum();
    let mut kept = 0.0;
    let mut cut = probs.len();
    for (n, (_, p)) in probs.iter().enumerate() {
        kept += p / total;
        if kept >= sampling.top_p {
            cut = n + 1;
            break;
        }
    }
    probs.truncate(cut.max(1));
    let mass: f32 = probs.iter().map(|p| p.1).sum();
    let mut target = rng.next_f32() * mass;
    for &(i, p) in &probs {
        if target < p {
            return i as u32;
        }
        target -= p;
    }
    probs[0].0 as u32
}

/// The Latin tokens (`latin`: id and text) `guard` bars at every step, for a Chinese source:
/// small models drift into English when their Chinese wording is barred. A rewrite (`run` ≤ 1)
/// may use no Latin word its source does not use. A writer may (names and acronyms: Python,
/// CNN), but not an ordinary English word of three letters or more that neither the records nor
/// the kept terms use — read on the bench where a record's term was barred mid-way: "氟康唑粘附凝
/// gel", "卡莫氟固体 lipid纳米粒". Returned as (always, glued): the writer's words whose token has
/// no space before it may be the end of a name ("Hy" + "brid" came out "Hybrd IDS" when barred)
/// or of an identifier ("Python" + "_script"), so they are barred only where they would not
/// continue one (`Blocking::glued`); glued to Chinese ("古汉语_sentence") they are barred.
fn always_barred(latin: &[(u32, String)], guard: &CopyGuard) -> (Vec<u32>, Vec<u32>) {
    if !has_chinese(&guard.source) {
        return (vec![], vec![]);
    }
    if guard.run <= 1 {
        let always = latin
            .iter()
            .filter(|(_, text)| !guard.source.contains(text.trim()))
            .map(|(id, _)| *id)
            .collect();
        return (always, vec![]);
    }
    let used = latin_words(&format!("{} {}", guard.source, guard.keep.join(" ")));
    let (mut always, mut glued) = (vec![], vec![]);
    for (id, text) in latin {
        // "_sentence" and "-types" are words too: the model glues them to Chinese.
        let word = text.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        if word.len() >= 3 && word.chars().all(|c| c.is_ascii_lowercase()) && !used.contains(word) {
            if text.starts_with(char::is_whitespace) {
                always.push(*id);
            } else {
                glued.push(*id);
            }
        }
    }
    (always, glued)
}

/// The distinct Latin words (runs of letters and digits) of `text`, lowercased and joined by
/// spaces: what a token's word is looked up in. Short whatever the text's length, so a guard over
/// a whole paper costs no more than one over a snippet.
fn latin_words(text: &str) -> String {
    let mut seen = std::collections::BTreeSet::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        if word.chars().any(|c| c.is_ascii_alphabetic()) {
            seen.insert(word.to_ascii_lowercase());
        }
    }
    seen.into_iter().collect::<Vec<_>>().join(" ")
}

/// Tokens fed to the model and the cache holding their keys and values.
pub(crate) struct FedTokens {
    tokens: Vec<u32>,
    cache: crate::qwen2::KvCache,
}

/// The least shared start worth resuming from: shorter ones are as quick to evaluate again.
const MIN_REUSED_TOKENS: usize = 16;

impl LocalScorer {
    /// The last generation's cache cut to the start it shares with `prompt` (at least one of the
    /// prompt's tokens is left to evaluate, for the logits after it), or a new cache. The paper
    /// writer's prompts for one paper share their instructions and outline, a rewrite's its
    /// instructions: measured in bench `generate-speed`. Taken, not shared: a generation running
    /// at the same time starts from nothing.
    fn resume(&self, prompt: &[u32]) -> FedTokens {
        let last = self.last_prompt().take();
        if let Some(mut fed) = last {
            let shared = fed
                .tokens
                .iter()
                .zip(prompt)
                .take_while(|(a, b)| a == b)
                .count()
                .min(prompt.len() - 1);
            if shared >= MIN_REUSED_TOKENS {
                fed.tokens.truncate(shared);
                fed.cache.truncate(shared);
                return fed;
            }
        }
        FedTokens {
            tokens: vec![],
            cache: self.model.new_cache(),
        }
    }

    /// The last generation's tokens and cache (a panic elsewhere leaves them usable).
    fn last_prompt(&self) -> std::sync::MutexGuard<'_, Option<FedTokens>> {
        self.last_prompt.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drops the last generation's cache: the next prompt is evaluated from its first token (a
    /// benchmark's cold start; the memory back while the model waits).
    pub fn forget_last_prompt(&self) {
        *self.last_prompt() = None;
    }

    /// Every token and its text, the guard's lists are gathered from. Special tokens decode to
    /// nothing here, so the end-of-turn token is never barred.
    fn vocabulary(&self) -> impl Iterator<Item = (u32, String)> + '_ {
        (0..self.tokenizer.get_vocab_size(true) as u32)
            .filter_map(|id| Some((id, self.tokenizer.decode(&[id], true).ok()?)))
    }

    /// The token form of `guard`.
    pub fn blocking(&self, guard: &CopyGuard) -> Result<Blocking, LlmError> {
        let source = self.tokenize(&guard.source)?.ids;
        let mut exempt = std::collections::HashSet::new();
        for item in &guard.keep {
            exempt.extend(self.tokenize(item)?.ids);
        }
        for &id in &source {
            let piece = self.tokenizer.decode(&[id], false).unwrap_or_default();
            if !has_chinese(&piece) {
                exempt.insert(id);
            }
        }
        let (mut always, glued) = if is_english(&guard.source) {
            let chinese = self.chinese.get_or_init(|| {
                self.vocabulary()
                    .filter(|(_, text)| has_chinese(text))
                    .map(|(id, _)| id)
                    .collect()
            });
            (chinese.clone(), vec![])
        } else {
            let latin = self.latin.get_or_init(|| {
                self.vocabulary()
                    .filter(|(_, text)| text.chars().any(|c| c.is_ascii_alphabetic()))
                    .collect()
            });
            always_barred(latin, guard)
        };
        let foreign = self.foreign.get_or_init(|| {
            self.vocabulary()
                .filter(|(_, text)| text.chars().any(is_foreign_script))
                .collect()
        });
        always.extend(foreign_barred(foreign, &guard.source));
        let text_run = (guard.chars > 0).then(|| {
            let pieces = self
                .pieces
                .get_or_init(|| std::sync::Arc::new(Pieces::new(self.vocabulary())));
            TextRun::new(guard, pieces.clone())
        });
        Ok(Blocking {
            source,
            exempt,
            probability: guard.probability,
            run: guard.run,
            always,
            glued,
            text_run,
        })
    }

    /// Continues `prompt` (special tokens such as `<|im_start|>` are understood) for at most
    /// `max_tokens`, until the model's end-of-turn token. `on_text` receives the text as it
    /// forms, in pieces of whole characters; returning `false` stops generation there.
    pub fn generate(
        &self,
        prompt: &str,
        max_tokens: usize,
        sampling: &Sampling,
        blocking: Option<&Blocking>,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, LlmError> {
        let ids = self.tokenize(prompt)?.ids;
        let room = self.model.max_positions().saturating_sub(ids.len());
        if ids.is_empty() || room == 0 {
            return Err(LlmError::Input(format!(
                "提示过长：{} 个词元，模型最多 {}",
                ids.len(),
                self.model.max_positions()
            )));
        }
        let stops: Vec<u32> = ["<|im_end|>", "<|endoftext|>"]
            .iter()
            .filter_map(|t| self.tokenizer.token_to_id(t))
            .collect();
        let mut rng = Rng(sampling.seed);
        let started = std::time::Instant::now();
        let mut fed = self.resume(&ids);
        let reused = fed.tokens.len();
        let mut logits: Vec<f32> = self
            .model
            .next_logits(&ids[reused..], &mut fed.cache)?
            .to_vec1()?;
        fed.tokens.extend_from_slice(&ids[reused..]);
        let prompt_seconds = started.elapsed().as_secs_f64();
        let mut out: Vec<u32> = vec![];
        let mut text = String::new();
        let mut finish_reason = "length";
        while out.len() < max_tokens.min(room) {
            if let Some(b) = blocking {
                for &t in b.barred_after(&text) {
                    if let Some(l) = logits.get_mut(t as usize) {
                        *l = f32::NEG_INFINITY;
                    }
                }
            }
            if let Some(b) = blocking {
                for t in b.barred(&out, &text, &mut rng) {
                    if let Some(l) = logits.get_mut(t as usize) {
                        *l = f32::NEG_INFINITY;
                    }
                }
            }
            let recent = &out[out.len().saturating_sub(PENALTY_WINDOW)..];
            let next = draw(&mut logits, recent, sampling, &mut rng);
            if stops.contains(&next) {
                finish_reason = "stop";
                break;
            }
            out.push(next);
            // Decode the whole answer each time: a character may span several tokens, so only
            // a complete prefix is handed out.
            let decoded = self
                .tokenizer
                .decode(&out, true)
                .map_err(|e| LlmError::Input(e.to_string()))?;
            if !decoded.ends_with('\u{FFFD}') && decoded.len() > text.len() {
                let fresh = decoded.get(text.len()..).unwrap_or_default().to_string();
                text = decoded;
                if !fresh.is_empty() && !on_text(&fresh) {
                    finish_reason = "stop";
                    break;
                }
            }
            if out.len() >= max_tokens.min(room) {
                break;
            }
            logits = self.model.next_logits(&[next], &mut fed.cache)?.to_vec1()?;
            fed.tokens.push(next);
        }
        *self.last_prompt() = Some(fed);
        // Where a slow paper's time goes: the prompt's evaluation or the answer's tokens.
        tracing::debug!(
            prompt_tokens = ids.len(),
            reused_tokens = reused,
            prompt_seconds,
            answer_tokens = out.len(),
            answer_seconds = started.elapsed().as_secs_f64() - prompt_seconds,
            guarded = blocking.is_some(),
            finish_reason,
            "local generation"
        );
        Ok(Generated {
            text,
            prompt_tokens: ids.len(),
            reused_tokens: reused,
            completion_tokens: out.len(),
            finish_reason,
        })
    }
}

/// The local model as a chat provider: generation runs on a blocking thread, its text streamed
/// back to the caller's future.
pub struct LocalChat {
    model: Arc<LocalScorer>,
    /// Each call draws with its own seed, so a retry is not the same answer again.
    calls: AtomicU64,
}

impl LocalChat {
    pub fn new(model: Arc<LocalScorer>) -> Self {
        LocalChat {
            model,
            calls: AtomicU64::new(0),
        }
    }
}

impl ChatModel for LocalChat {
    fn is_local(&self) -> bool {
        true
    }

    fn id(&self) -> String {
        format!("local:{}", self.model.name)
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: Option<&'a (dyn Fn(&str) + Send + Sync)>,
    ) -> BoxFuture<'a, Result<ChatReply, ChatError>> {
        Box::pin(async move {
            let prompt = chat_prompt(&request.messages);
            let sampling = Sampling {
                temperature: request.temperature,
                seed: 42 + self.calls.fetch_add(1, Ordering::Relaxed),
                ..Sampling::default()
            };
            let max_tokens = request.max_tokens.unwrap_or(1024) as usize;
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
            let model = self.model.clone();
            // A dropped receiver (the caller went away) stops generation at the next token.
            let guard = request.copy_guard.clone();
            let job = tokio::task::spawn_blocking(move || {
                let blocking = guard.map(|g| model.blocking(&g)).transpose()?;
                model.generate(
                    &prompt,
                    max_tokens,
                    &sampling,
                    blocking.as_ref(),
                    &mut |piece| tx.send(piece.to_string()).is_ok(),
                )
            });
            while let Some(piece) = rx.recv().await {
                if let Some(f) = on_delta {
                    f(&piece);
                }
            }
            let generated = job
                .await
                .map_err(|e| ChatError::Unreachable(format!("本地模型中断：{e}")))?
                .map_err(|e| ChatError::Rejected {
                    status: 400,
                    message: e.to_string(),
                })?;
            Ok(ChatReply {
                text: generated.text,
                model: self.model.name.clone(),
                usage: Usage {
                    prompt_tokens: generated.prompt_tokens as u64,
                    completion_tokens: generated.completion_tokens as u64,
                },
                finish_reason: Some(generated.finish_reason.to_string()),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_opens_the_assistant_turn() {
        let p = chat_prompt(&[Message::system("规则"), Message::user("段落")]);
        assert_eq!(
            p,
            "<|im_start|>system\n规则<|im_end|>\n<|im_start|>user\n段落<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn zero_temperature_takes_the_most_likely_token() {
        let mut rng = Rng(1);
        let sampling = Sampling {
            temperature: 0.0,
            ..Sampling::default()
        };
        assert_eq!(draw(&mut [0.1, 3.0, 2.0], &[], &sampling, &mut rng), 1);
        // The penalty can move the choice away from a token just generated.
        let sampling = Sampling {
            temperature: 0.0,
            repeat_penalty: 2.0,
            ..Sampling::default()
        };
        assert_eq!(draw(&mut [0.1, 3.0, 2.0], &[1], &sampling, &mut rng), 2);
        // A token generated often is penalised once, like one generated once: 3.0 / 2 > 1.4.
        assert_eq!(
            draw(&mut [0.1, 3.0, 1.4], &[1, 1, 1, 1], &sampling, &mut rng),
            1
        );
    }

    #[test]
    fn blocking_bars_what_followed_in_the_source_but_never_exempt_tokens() {
        let b = Blocking {
            source: vec![1, 2, 3, 1, 4, 5],
            exempt: [4].into_iter().collect(),
            probability: 1.0,
            run: 1,
            always: vec![],
            glued: vec![],
            text_run: None,
        };
        let mut rng = Rng(3);
        assert_eq!(b.barred_tokens(&[7, 1], &mut rng), vec![2]);
        assert_eq!(b.barred_tokens(&[2], &mut rng), vec![3]);
        assert!(b.barred_tokens(&[5], &mut rng).is_empty());
        assert!(b.barred_tokens(&[9], &mut rng).is_empty());
        assert!(b.barred_tokens(&[], &mut rng).is_empty());
        // A writer's guard: only a run of two source tokens bars what followed them.
        let runs = Blocking {
            run: 2,
            source: vec![1, 2, 3, 1, 4, 5],
            exempt: Default::default(),
            probability: 1.0,
            always: vec![],
            glued: vec![],
            text_run: None,
        };
        assert!(runs.barred_tokens(&[9, 1], &mut rng).is_empty());
        assert_eq!(runs.barred_tokens(&[1, 2], &mut rng), vec![3]);
        assert_eq!(runs.barred_tokens(&[3, 1], &mut rng), vec![4]);
        let never = Blocking {
            probability: 0.0,
            ..b
        };
        assert!(never.barred_tokens(&[1], &mut rng).is_empty());
        assert!(has_chinese("研究") && !has_chinese("95.2%") && !has_chinese("，"));
        assert!(is_english(&CopyGuard::english_only().source));
        assert!(!is_english("95.2%，") && !is_english("采用HPLC法"));
    }

    #[test]
    fn a_writer_is_kept_from_english_words_nobody_used_and_a_rewrite_from_any() {
        let latin: Vec<(u32, String)> = [
            (1, " gel"),
            (2, "lipid"),
            (3, " Python"),
            (4, "CNN"),
            (5, " ml"),
            (6, " hplc"),
            (7, "bert"),
            (8, "_sentence"),
            (9, "-types"),
            (10, "_HPLC"),
            (11, "brid"),
            (12, " HPLC"),
        ]
        .map(|(id, t)| (id, t.to_string()))
        .into();
        let writer = CopyGuard {
            source: "采用HPLC法测定，流动相为乙腈，流速1.0 ml/min。".into(),
            keep: vec!["BERT模型".into()],
            probability: 0.8,
            run: 10,
            chars: 10,
        };
        // Ordinary words barred; names, acronyms, short units and the records' or kept terms
        // (whatever their case) allowed. Without a space before it, a word is barred only
        // where it would start one.
        let (always, glued) = always_barred(&latin, &writer);
        assert_eq!((&always[..], &glued[..]), (&[1][..], &[2, 8, 9, 11][..]));
        let blocking = Blocking {
            source: vec![],
            exempt: Default::default(),
            probability: 0.8,
            run: 10,
            always,
            glued,
            text_run: None,
        };
        let barred = |text: &str| blocking.barred_after(text).copied().collect::<Vec<_>>();
        assert_eq!(barred("固体脂质"), [1, 2, 8, 9, 11]);
        assert_eq!(barred("古汉语"), [1, 2, 8, 9, 11]);
        assert_eq!(barred("混合型Hy"), [1]);
        assert_eq!(barred("对 co"), [1, 2, 8, 9, 11]);
        let rewrite = CopyGuard {
            run: 1,
            ..writer.clone()
        };
        assert_eq!(
            always_barred(&latin, &rewrite),
            (vec![1, 2, 3, 4, 6, 7, 8, 9, 10, 11], vec![])
        );
        let english = CopyGuard {
            source: "The mobile phase was acetonitrile.".into(),
            ..writer
        };
        assert_eq!(always_barred(&latin, &english), (vec![], vec![]));
    }

    #[test]
    fn tokens_of_a_script_the_source_does_not_use_are_barred() {
        let foreign: Vec<(u32, String)> = [(1, "タン"), (2, "но"), (3, "한국"), (4, "の")]
            .map(|(id, t)| (id, t.to_string()))
            .into();
        assert_eq!(
            foreign_barred(&foreign, "阿莫西林/舒巴坦，β-内酰胺酶"),
            [1, 2, 3, 4]
        );
        // A source that uses a script keeps the tokens made of its characters.
        assert_eq!(foreign_barred(&foreign, "日本語の文献"), [1, 2, 3]);
        assert!(!"β-内酰胺酶 μg".chars().any(is_foreign_script));
    }

    #[test]
    fn a_run_of_source_characters_is_stopped_however_it_is_split_into_tokens() {
        let pieces = std::sync::Arc::new(Pieces::new(
            [
                (1, "市场"),
                (2, "市"),
                (3, "场结构"),
                (4, "结构"),
                (5, "结"),
                (6, "结果"),
                (7, "。"),
                (8, "本文"),
                (9, "本"),
            ]
            .map(|(id, t)| (id, t.to_string())),
        ));
        let guard = CopyGuard {
            source: "没有考虑到市场结构的影响。本文从市场结构的角度出发".into(),
            keep: vec!["角度".into()],
            probability: 1.0,
            run: 6,
            chars: 4,
        };
        let run = TextRun::new(&guard, pieces);
        // Too short a run bars nothing.
        assert!(run.barred("考虑市场").is_empty());
        // "考虑到市场" continues with "结构": every token agreeing with it is barred, whatever
        // it covers; "结果" leaves the source and stays.
        let mut barred = run.barred("我们考虑到市场");
        barred.sort();
        assert_eq!(barred, vec![4, 5]);
        // Punctuation is never barred, but the run goes on through it.
        assert!(run.barred("结构的影响").is_empty());
        assert_eq!(run.barred("构的影响。"), vec![8, 9]);
        // A kept term's characters are never barred.
        assert!(run.barred("结构的角").is_empty());
        // Nor is anything after text the source does not hold.
        assert!(run.barred("文从市场化").is_empty());
    }

    #[test]
    fn sampling_stays_within_the_nucleus() {
        let sampling = Sampling {
            temperature: 1.0,
            top_p: 0.5,
            ..Sampling::default()
        };
        let mut rng = Rng(7);
        for _ in 0..200 {
            // Token 0 holds far more than half the mass: the nucleus is token 0 alone.
            assert_eq!(draw(&mut [5.0, 1.0, 1.0, 0.5], &[], &sampling, &mut rng), 0);
        }
        let sampling = Sampling {
            top_p: 1.0,
            ..sampling
        };
        let drawn: std::collections::HashSet<u32> = (0..400)
            .map(|_| draw(&mut [1.0, 1.0, 1.0, 1.0], &[], &sampling, &mut rng))
            .collect();
        assert_eq!(drawn.len(), 4);
    }
}

//! The judged rewrite loop. Every paragraph is rewritten by a chat model, then measured by our
//! own engines (copy ratio against the library, AI probability, meaning kept, protected items
//! kept) and accepted, tried again with a stronger instruction, or kept as it was with the
//! reason. Nothing here trusts the model's word: a paragraph counts as improved only when the
//! measured figures say so.

use crate::review::{self, Doubt, Measured, Reading, Reviewer, Thresholds};
use crate::thesaurus::{self, Thesaurus};
use crate::{Goal, Strength, missing_items, request};
use futures_util::StreamExt;
use llm::chat::{BoxFuture, ChatModel, Usage};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Our engines, as the loop sees them (the server and the command line give the real ones).
pub trait Judge: Send + Sync {
    /// Percent of `text`'s characters that match the library (simcheck's copy ratio).
    fn similarity<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<f64, String>>;
    /// Calibrated probability that `text` is machine-written; `None` when too short to judge.
    fn ai_probability<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<f64>, String>>;
    /// How closely `rewritten` keeps the meaning of `original`: 0–1 (sentence-embedding cosine).
    fn meaning<'a>(
        &'a self,
        original: &'a str,
        rewritten: &'a str,
    ) -> BoxFuture<'a, Result<f64, String>>;
    /// Per-token surprisal (nats) of `text` under the fluency model; `None` without one.
    fn surprisal<'a>(&'a self, _text: &'a str) -> BoxFuture<'a, Result<Option<Vec<f32>>, String>> {
        Box::pin(async { Ok(None) })
    }
    /// Unit sentence vectors of `sentences`, in order; `None` without an encoder (the review then
    /// aligns sentences by shared characters).
    fn sentence_vectors<'a>(
        &'a self,
        _sentences: Vec<String>,
    ) -> BoxFuture<'a, Result<Option<Vec<Vec<f32>>>, String>> {
        Box::pin(async { Ok(None) })
    }
}

/// What a rewrite run is asked to do.
#[derive(Debug, Clone)]
pub struct Settings {
    pub goal: Goal,
    pub strength: Strength,
    /// Terms the user listed to keep verbatim.
    pub frozen: Vec<String>,
    /// Rewrites tried per paragraph before the original is kept.
    pub attempts: usize,
    /// The least meaning similarity a rewrite must keep.
    pub meaning_min: f64,
    /// An AI probability below this already reads as human (the detector's medium threshold):
    /// a rewrite that stays below it is not asked to go lower still.
    pub ai_target: f64,
    /// Paragraphs rewritten at the same time.
    pub concurrency: usize,
    /// Synonym substitution for similarity rewrites: tried alone first at light strength, and
    /// on a model's rewrite whose copy ratio did not fall enough.
    pub thesaurus: Option<Arc<Thesaurus>>,
    /// The true synonyms the review accepts in place of a key term (Cilin, whichever model
    /// rewrites: every model is judged the same way).
    pub synonyms: Option<Arc<Thesaurus>>,
    /// What the teacher's review (`review`) requires of a rewrite.
    pub thresholds: Thresholds,
    /// Ask the model for one sentence at a time, each with the locked spans it holds, and keep
    /// a sentence's own wording when its rewrite lost one (`rewrite_by_sentence`).
    pub by_sentence: bool,
}

/// The least sentence-embedding cosine between a paragraph and its rewrite, measured on the
/// rewrites of `bench/…/rewrite-quality` (see docs/rewrite.md).
pub const MEANING_MIN: f64 = 0.75;

/// The least relative fall of a paragraph's copy ratio for a similarity rewrite to count.
pub const MIN_RELATIVE_DROP: f64 = 0.2;

impl Settings {
    pub fn new(goal: Goal, strength: Strength) -> Self {
        Settings {
            goal,
            strength,
            frozen: vec![],
            attempts: 3,
            meaning_min: MEANING_MIN,
            ai_target: 0.36,
            concurrency: 2,
            thesaurus: None,
            synonyms: None,
            thresholds: Thresholds::default(),
            by_sentence: false,
        }
    }
}

/// One paragraph's outcome, with every figure measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParagraphRewrite {
    pub original: String,
    /// The rewrite judged (the best one tried when none was accepted); `None` when the model
    /// gave nothing usable.
    pub rewritten: Option<String>,
    /// Whether the measured figures accepted `rewritten`. The paper keeps `original` otherwise.
    pub accepted: bool,
    /// Why the original was kept, in words for the user.
    pub reason: Option<String>,
    pub similarity_before: f64,
    pub similarity_after: Option<f64>,
    pub ai_before: Option<f64>,
    pub ai_after: Option<f64>,
    pub meaning: Option<f64>,
    /// Rewrites tried.
    pub attempts: usize,
    /// The strength of the rewrite judged.
    pub strength: Strength,
    pub model: String,
    pub usage: Usage,
    /// Why the review does not trust `rewritten` (术语被改, 语句不通, 漏译句子, 意思相反, 与原文雷同);
    /// a doubted rewrite is never adopted by default.
    #[serde(default)]
    pub doubts: Vec<Doubt>,
    /// What the review measured of `rewritten`.
    #[serde(default)]
    pub reading: Option<Reading>,
}

impl ParagraphRewrite {
    /// The text the rewritten paper uses for this paragraph.
    pub fn chosen(&self) -> &str {
        match (&self.rewritten, self.accepted) {
            (Some(r), true) => r,
            _ => &self.original,
        }
    }

    /// Whether the model failed outright (nothing to judge): such a paragraph is not charged.
    pub fn failed(&self) -> bool {
        self.rewritten.is_none()
    }
}

/// A candidate's figures and why it falls short (empty when it is accepted).
#[derive(Clone)]
struct Verdict {
    similarity: f64,
    ai: Option<f64>,
    meaning: f64,
    /// The goal not met or a protected item lost.
    faults: Vec<String>,
    /// What the review doubts.
    doubts: Vec<Doubt>,
    reading: Reading,
}

impl Verdict {
    fn accepted(&self) -> bool {
        self.faults.is_empty() && self.doubts.is_empty()
    }

    /// Every reason the candidate is not used, in words for the user.
    fn reasons(&self) -> Vec<String> {
        let mut out = self.faults.clone();
        out.extend(
            self.doubts
                .iter()
                .map(|d| format!("{}：{}", d.label, d.detail)),
        );
        out
    }

    /// Fewer faults first, then a lower copy ratio and AI probability, then closer meaning.
    fn better_than(&self, other: &Verdict) -> bool {
        let key = |v: &Verdict| {
            (
                v.faults.len() + v.doubts.len(),
                (v.similarity * 100.0) as i64 + (v.ai.unwrap_or(0.0) * 100.0) as i64,
                -(v.meaning * 1000.0) as i64,
            )
        };
        key(self) < key(other)
    }
}

/// Strips what small models wrap answers in: a label line, quotes, code fences, and the notes
/// they append after the paragraph (our paragraphs are one line, so a rewrite is too).
pub fn clean_answer(answer: &str) -> String {
    let text = strip_wrapping(answer);
    let first_line = text.lines().map(str::trim).find(|l| !l.is_empty());
    strip_wrapping(first_line.unwrap_or_default())
}

fn strip_wrapping(answer: &str) -> String {
    let mut text = answer.trim();
    loop {
        let before = text;
        for fence in ["```markdown", "```text", "```"] {
            if let Some(rest) = text.strip_prefix(fence) {
                text = rest.trim_end_matches('`').trim();
            }
        }
        for label in [
            "改写后：",
            "改写后的段落：",
            "改写结果：",
            "改写：",
            "输出：",
        ] {
            if let Some(rest) = text.strip_prefix(label) {
                text = rest.trim();
            }
        }
        let quoted = |s: &str, open: char, close: char| s.starts_with(open) && s.ends_with(close);
        if text.chars().count() > 2 && (quoted(text, '“', '”') || quoted(text, '"', '"')) {
            let mut chars = text.chars();
            chars.next();
            chars.next_back();
            text = chars.as_str().trim();
        }
        if text == before {
            return text.to_string();
        }
    }
}

/// The original paragraph's figures, measured once.
struct Before {
    similarity: f64,
    ai: Option<f64>,
    surprisal: Option<Vec<f32>>,
}

/// The teacher's review of `candidate`, with the models' measures (surprisal, sentence vectors).
async fn review_candidate(
    judge: &dyn Judge,
    settings: &Settings,
    original: &str,
    candidate: &str,
    before: &Before,
) -> Result<review::Review, String> {
    let surprisal = judge.surprisal(candidate).await?;
    let mut texts = review::sentences(original);
    texts.extend(review::counterpart_spans(candidate));
    let vectors = judge.sentence_vectors(texts.clone()).await?;
    let table: Option<std::collections::HashMap<&str, &[f32]>> = vectors.as_ref().map(|v| {
        texts
            .iter()
            .map(String::as_str)
            .zip(v.iter().map(Vec::as_slice))
            .collect()
    });
    let cosine = |a: &str, b: &str| -> f64 {
        match table.as_ref().and_then(|t| Some((t.get(a)?, t.get(b)?))) {
            Some((x, y)) => x.iter().zip(y.iter()).map(|(p, q)| (p * q) as f64).sum(),
            None => 0.0,
        }
    };
    let reviewer = Reviewer {
        thresholds: settings.thresholds,
        thesaurus: settings.synonyms.as_deref(),
        frozen: &settings.frozen,
        wants_new_wording: matches!(settings.goal, Goal::Similarity | Goal::Both),
    };
    let measured = Measured {
        surprisal_before: before.surprisal.as_deref(),
        surprisal_after: surprisal.as_deref(),
        sentence_similarity: table
            .is_some()
            .then_some(&cosine as &dyn Fn(&str, &str) -> f64),
    };
    Ok(reviewer.review(original, candidate, &measured))
}

async fn measure(
    judge: &dyn Judge,
    settings: &Settings,
    original: &str,
    candidate: &str,
    before: &Before,
) -> Result<Verdict, String> {
    let similarity = judge.similarity(candidate).await?;
    let ai = judge.ai_probability(candidate).await?;
    let meaning = judge.meaning(original, candidate).await?;
    let review = review_candidate(judge, settings, original, candidate, before).await?;
    let mut faults = vec![];
    let lost = missing_items(original, candidate, &settings.frozen);
    if !lost.is_empty() {
        faults.push(format!("改写遗漏了须保留的内容：{}", lost.join("、")));
    }
    let (orig_len, new_len) = (original.chars().count(), candidate.chars().count());
    if settings.goal != Goal::Shorten && new_len * 2 < orig_len {
        faults.push(format!("改写不完整（{new_len} 字，原文 {orig_len} 字）"));
    }
    if meaning < settings.meaning_min {
        faults.push(format!(
            "意思偏离原文（语义相似度 {:.2}，须不低于 {:.2}）",
            meaning, settings.meaning_min
        ));
    }
    let (sim_before, ai_before) = (before.similarity, before.ai);
    let wants_similarity = matches!(settings.goal, Goal::Similarity | Goal::Both);
    let wants_ai = matches!(settings.goal, Goal::Aigc | Goal::Both);
    // A copied paragraph must lose at least a fifth of its copy ratio: shaving a point off is
    // not a rewrite a student should pay for.
    let similarity_ok = similarity <= 0.0 || similarity <= sim_before * (1.0 - MIN_RELATIVE_DROP);
    if wants_similarity && !similarity_ok {
        faults.push(format!(
            "复制比未明显下降（改写前 {sim_before:.1}%，改写后 {similarity:.1}%）"
        ));
    }
    if wants_ai
        && let (Some(a), Some(b)) = (ai, ai_before)
        && a >= settings.ai_target
        && a >= b
    {
        faults.push(format!(
            "AI 特征未减弱（改写前 {:.0}%，改写后 {:.0}%）",
            b * 100.0,
            a * 100.0
        ));
    }
    // Any goal: a rewrite that the detector now reads as AI-written trades one failed check for
    // another, which is no help a week before the defence.
    if !wants_ai
        && let (Some(a), Some(b)) = (ai, ai_before)
        && a >= settings.ai_target
        && a > b
    {
        faults.push(format!(
            "改写后 AI 特征明显增加（改写前 {:.0}%，改写后 {:.0}%）",
            b * 100.0,
            a * 100.0
        ));
    }
    Ok(Verdict {
        similarity,
        ai,
        meaning,
        faults,
        doubts: review.doubts,
        reading: review.reading,
    })
}

/// Receives the text of the attempt being written so far, as the model streams it.
pub type Live<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// Receives a paragraph's index and the text of its attempt so far.
pub type LiveParagraphs<'a> = &'a (dyn Fn(usize, &str) + Send + Sync);

/// The best candidate judged so far.
struct Best {
    verdict: Verdict,
    text: String,
    strength: Strength,
    engine: String,
}

/// Measures `candidate` and keeps it when it is the best so far; true when it is accepted.
#[allow(clippy::too_many_arguments)]
async fn consider(
    best: &mut Option<Best>,
    judge: &dyn Judge,
    settings: &Settings,
    original: &str,
    candidate: String,
    before: &Before,
    strength: Strength,
    engine: String,
) -> Result<Verdict, String> {
    let verdict = measure(judge, settings, original, &candidate, before).await?;
    if best
        .as_ref()
        .is_none_or(|b| verdict.better_than(&b.verdict))
    {
        *best = Some(Best {
            verdict: verdict.clone(),
            text: candidate,
            strength,
            engine,
        });
    }
    Ok(verdict)
}

/// Asks `model`, showing `live` the answer so far after `prefix` (the sentences already written).
async fn streamed_chat(
    model: &dyn ChatModel,
    req: &llm::chat::ChatRequest,
    prefix: &str,
    live: Option<Live<'_>>,
) -> Result<llm::chat::ChatReply, llm::chat::ChatError> {
    let so_far = std::sync::Mutex::new(prefix.to_string());
    let on_delta = |piece: &str| {
        if let Some(live) = live {
            let mut text = so_far.lock().unwrap_or_else(|e| e.into_inner());
            text.push_str(piece);
            live(&text);
        }
    };
    model.chat(req, live.map(|_| &on_delta as _)).await
}

/// Sentences shorter than this are copied as they are when rewriting sentence by sentence: a
/// clause of a few characters has little to reword and small models pad it.
const SENTENCE_MIN_CHARS: usize = 8;

/// One candidate written a sentence at a time: each sentence is sent alone with the locked
/// spans (key terms, the user's terms, numbers, citations, formulas) it holds, and its answer is
/// verified against them; a sentence whose answer lost one, or came back far shorter or longer,
/// keeps its own wording. The paragraph put together is then judged like any other candidate.
/// Fails only when the model failed on every sentence.
async fn rewrite_by_sentence(
    model: &dyn ChatModel,
    goal: Goal,
    strength: Strength,
    locked: &[String],
    original: &str,
    live: Option<Live<'_>>,
) -> Result<(String, Usage), llm::chat::ChatError> {
    let mut text = String::new();
    let mut usage = Usage::default();
    let (mut answered, mut last_error) = (false, None);
    for piece in review::sentence_pieces(original) {
        let body = piece.trim();
        if body.chars().count() < SENTENCE_MIN_CHARS {
            text.push_str(piece);
            continue;
        }
        let here: Vec<String> = locked
            .iter()
            .filter(|t| body.contains(t.as_str()))
            .cloned()
            .collect();
        let req = request(body, goal, strength, &here);
        match streamed_chat(model, &req, &text, live).await {
            Ok(reply) => {
                answered = true;
                usage.prompt_tokens += reply.usage.prompt_tokens;
                usage.completion_tokens += reply.usage.completion_tokens;
                let answer = with_ending_of(body, &clean_answer(&reply.text));
                let kept = if sentence_keeps_locked(body, &answer, &here) {
                    piece.replacen(body, &answer, 1)
                } else {
                    piece.to_string()
                };
                text.push_str(&kept);
            }
            Err(e) => {
                last_error = Some(e);
                text.push_str(piece);
            }
        }
        if let Some(live) = live {
            live(&text);
        }
    }
    match (answered, last_error) {
        (false, Some(e)) => Err(e),
        _ => Ok((text, usage)),
    }
}

/// `answer` ending the way `sentence` ends (its 。, ；, ？ …), so the paragraph keeps its
/// sentence structure when the model closed a clause with a full stop.
fn with_ending_of(sentence: &str, answer: &str) -> String {
    let is_end = |c: char| matches!(c, '。' | '！' | '？' | '；' | '!' | '?' | ';' | '，' | ',');
    let body = answer.trim_end_matches(is_end);
    let ending: String = sentence
        .chars()
        .rev()
        .take_while(|&c| is_end(c))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{body}{ending}")
}

/// Whether a sentence's rewrite may stand in for it: something new, of a like length, holding
/// every locked span of the sentence (terms as whole words, not inside a longer one).
fn sentence_keeps_locked(sentence: &str, answer: &str, locked: &[String]) -> bool {
    let (before, after) = (sentence.chars().count(), answer.chars().count());
    answer != sentence
        && after * 10 >= before * 6
        && after * 10 <= before * 18
        && missing_items(sentence, answer, locked).is_empty()
        && review::terms_lost(sentence, answer, locked).is_empty()
}

/// Rewrites one paragraph under `settings`, judging every attempt; `live` sees each attempt
/// stream in.
pub async fn rewrite_paragraph(
    model: &dyn ChatModel,
    judge: &dyn Judge,
    settings: &Settings,
    original: &str,
    live: Option<Live<'_>>,
) -> Result<ParagraphRewrite, String> {
    let similarity_before = judge.similarity(original).await?;
    let ai_before = judge.ai_probability(original).await?;
    let before = &Before {
        similarity: similarity_before,
        ai: ai_before,
        surprisal: judge.surprisal(original).await?,
    };
    // The field's key terms are locked like the user's kept terms: the model is told to copy
    // them and the copy guard lets it, so the guard no longer forces it to mangle them.
    let mut locked = settings.frozen.clone();
    for term in review::key_terms(original) {
        if !locked.contains(&term) {
            locked.push(term);
        }
    }
    let mut out = ParagraphRewrite {
        original: original.to_string(),
        rewritten: None,
        accepted: false,
        reason: None,
        similarity_before,
        similarity_after: None,
        ai_before,
        ai_after: None,
        meaning: None,
        attempts: 0,
        strength: settings.strength,
        model: model.id(),
        usage: Usage::default(),
        doubts: vec![],
        reading: None,
    };
    // Synonyms lower a copy ratio; an AI-trace rewrite alone or the writing goals get nothing
    // from them.
    let thesaurus = settings
        .thesaurus
        .as_deref()
        .filter(|_| matches!(settings.goal, Goal::Similarity | Goal::Both));
    let mut best: Option<Best> = None;
    let mut strength = settings.strength;
    let mut last_error = None;
    let (mut attempt, mut accepted) = (0, false);
    // At light strength the thesaurus alone goes first: no model call when it is enough. It
    // costs no model attempt, so the model keeps all of its tries when it is not.
    if let Some(t) = thesaurus.filter(|_| strength == Strength::Light) {
        let p = t.paraphrase(original, &locked, strength);
        if p.text != original {
            out.attempts += 1;
            if let Some(live) = live {
                live(&p.text);
            }
            let verdict = consider(
                &mut best,
                judge,
                settings,
                original,
                p.text,
                before,
                strength,
                thesaurus::ENGINE_NAME.to_string(),
            )
            .await?;
            accepted = verdict.accepted();
        }
    }
    while !accepted && attempt < settings.attempts.max(1) {
        attempt += 1;
        out.attempts += 1;
        let answer = if settings.by_sentence && review::sentences(original).len() > 1 {
            rewrite_by_sentence(model, settings.goal, strength, &locked, original, live).await
        } else {
            let req = request(original, settings.goal, strength, &locked);
            streamed_chat(model, &req, "", live)
                .await
                .map(|reply| (clean_answer(&reply.text), reply.usage))
        };
        match answer {
            Ok((candidate, usage)) => {
                out.usage.prompt_tokens += usage.prompt_tokens;
                out.usage.completion_tokens += usage.completion_tokens;
                if !candidate.is_empty() && candidate != original {
                    let verdict = consider(
                        &mut best,
                        judge,
                        settings,
                        original,
                        candidate.clone(),
                        before,
                        strength,
                        model.id(),
                    )
                    .await?;
                    if verdict.accepted() {
                        break;
                    }
                    // The model kept too much of the source: synonyms on top of its rewrite.
                    if let Some(t) = thesaurus
                        && verdict.similarity > similarity_before * (1.0 - MIN_RELATIVE_DROP)
                    {
                        let p = t.paraphrase(&candidate, &locked, strength);
                        if p.text != candidate {
                            if let Some(live) = live {
                                live(&p.text);
                            }
                            let engine = format!("{} + {}", model.id(), thesaurus::ENGINE_NAME);
                            let verdict = consider(
                                &mut best, judge, settings, original, p.text, before, strength,
                                engine,
                            )
                            .await?;
                            if verdict.accepted() {
                                break;
                            }
                        }
                    }
                } else if candidate.is_empty() {
                    last_error = Some("模型未给出改写".to_string());
                } else {
                    last_error = Some("模型给出的文字与原文相同".to_string());
                }
            }
            Err(e) => last_error = Some(e.to_string()),
        }
        strength = strength.stronger().unwrap_or(strength);
    }
    match best {
        Some(Best {
            verdict,
            text,
            strength: used,
            engine,
        }) => {
            out.model = engine;
            out.accepted = verdict.accepted();
            out.reason =
                (!out.accepted).then(|| format!("保留原文：{}", verdict.reasons().join("；")));
            out.doubts = verdict.doubts;
            out.reading = Some(verdict.reading);
            out.rewritten = Some(text);
            out.similarity_after = Some(verdict.similarity);
            out.ai_after = verdict.ai;
            out.meaning = Some(verdict.meaning);
            out.strength = used;
        }
        None => {
            out.reason = Some(format!(
                "保留原文：{}",
                last_error.unwrap_or_else(|| "改写失败".into())
            ));
        }
    }
    Ok(out)
}

/// Rewrites `paragraphs` (at most `settings.concurrency` at a time), telling `progress(done,
/// total)` as each ends and, when given, `live(paragraph, text so far)` as each attempt
/// streams in. Results are in the order of `paragraphs`.
pub async fn rewrite_all(
    model: &dyn ChatModel,
    judge: &dyn Judge,
    settings: &Settings,
    paragraphs: &[String],
    progress: &(dyn Fn(usize, usize) + Send + Sync),
    live: Option<LiveParagraphs<'_>>,
) -> Result<Vec<ParagraphRewrite>, String> {
    let total = paragraphs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let done = &done;
    // The futures are made first and then streamed: a stream that maps with a closure makes
    // the returned future's lifetimes too general for the compiler to prove it `Send`.
    let jobs: Vec<_> = paragraphs
        .iter()
        .enumerate()
        .map(|(i, p)| async move {
            let paragraph_live = move |text: &str| {
                if let Some(live) = live {
                    live(i, text)
                }
            };
            let r = rewrite_paragraph(
                model,
                judge,
                settings,
                p,
                live.map(|_| &paragraph_live as Live<'_>),
            )
            .await;
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, total);
            r.map(|r| (i, r))
        })
        .collect();
    let mut results: Vec<(usize, ParagraphRewrite)> = futures_util::stream::iter(jobs)
        .buffer_unordered(settings.concurrency.max(1))
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use llm::chat::{ChatError, ChatReply, ChatRequest};
    use std::sync::Mutex;

    /// One scripted answer: a transformation of the paragraph sent.
    type Step = fn(&str) -> Result<String, ChatError>;

    /// Answers with a transformation of the paragraph it was sent, chosen per call.
    struct ScriptedModel {
        steps: Mutex<Vec<Step>>,
        temperatures: Mutex<Vec<f32>>,
    }

    impl ScriptedModel {
        fn new(steps: Vec<Step>) -> Self {
            ScriptedModel {
                steps: Mutex::new(steps),
                temperatures: Mutex::new(vec![]),
            }
        }
    }

    impl ChatModel for ScriptedModel {
        fn id(&self) -> String {
            "test:scripted".into()
        }

        fn chat<'a>(
            &'a self,
            request: &'a ChatRequest,
            on_delta: Option<&'a (dyn Fn(&str) + Send + Sync)>,
        ) -> BoxFuture<'a, Result<ChatReply, ChatError>> {
            Box::pin(async move {
                self.temperatures.lock().unwrap().push(request.temperature);
                let step = {
                    let mut steps = self.steps.lock().unwrap();
                    if steps.len() > 1 {
                        steps.remove(0)
                    } else {
                        steps[0]
                    }
                };
                let text = step(&request.messages[1].content)?;
                if let Some(on_delta) = on_delta {
                    // Streamed in two pieces, split on a character boundary.
                    let mid = text
                        .char_indices()
                        .nth(text.chars().count() / 2)
                        .map_or(0, |(b, _)| b);
                    on_delta(&text[..mid]);
                    on_delta(&text[mid..]);
                }
                Ok(ChatReply {
                    text,
                    model: "scripted".into(),
                    usage: Usage {
                        prompt_tokens: 10,
                        completion_tokens: 5,
                    },
                    finish_reason: Some("stop".into()),
                })
            })
        }
    }

    /// Copy ratio: percent of characters inside the library phrase; meaning: shared characters.
    struct PhraseJudge(&'static str);

    impl Judge for PhraseJudge {
        fn similarity<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<f64, String>> {
            Box::pin(async move {
                let n = text.chars().count().max(1);
                Ok(if text.contains(self.0) {
                    self.0.chars().count() as f64 * 100.0 / n as f64
                } else {
                    0.0
                })
            })
        }

        fn ai_probability<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<f64>, String>> {
            Box::pin(async { Ok(None) })
        }

        fn meaning<'a>(&'a self, a: &'a str, b: &'a str) -> BoxFuture<'a, Result<f64, String>> {
            Box::pin(async move {
                let set: std::collections::HashSet<char> = a.chars().collect();
                let shared = b.chars().filter(|c| set.contains(c)).count();
                Ok(shared as f64 / b.chars().count().max(1) as f64)
            })
        }
    }

    /// As `PhraseJudge`, with an AI probability that reads any reordered text as machine-written.
    struct SuspiciousJudge(PhraseJudge);

    impl Judge for SuspiciousJudge {
        fn similarity<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<f64, String>> {
            self.0.similarity(text)
        }

        fn ai_probability<'a>(
            &'a self,
            text: &'a str,
        ) -> BoxFuture<'a, Result<Option<f64>, String>> {
            Box::pin(async move { Ok(Some(if text == PARAGRAPH { 0.05 } else { 0.9 })) })
        }

        fn meaning<'a>(&'a self, a: &'a str, b: &'a str) -> BoxFuture<'a, Result<f64, String>> {
            self.0.meaning(a, b)
        }
    }

    const PARAGRAPH: &str = "深度学习方法在图像识别中取得了显著进展，准确率达到95.2%。";
    const COPIED: &str = "深度学习方法在图像识别中取得了显著进展";

    fn drop_number(p: &str) -> Result<String, ChatError> {
        Ok(p.replace("95.2%", "很高"))
    }
    fn reorder(p: &str) -> Result<String, ChatError> {
        Ok(format!(
            "“改写后：{}”",
            p.replace("深度学习方法在图像识别中", "在图像识别中深度学习方法")
        ))
    }
    fn same(p: &str) -> Result<String, ChatError> {
        Ok(format!("{p}。"))
    }
    fn unreachable(_: &str) -> Result<String, ChatError> {
        Err(ChatError::Unreachable("connection refused".into()))
    }

    const TWO_SENTENCES: &str = "深度学习方法在图像识别中取得了显著进展，准确率达到95.2%。该方法在医学影像分析中同样表现良好；";

    /// Rewrites the first sentence well, and drops the number of any sentence that holds one.
    fn sentence_wise(s: &str) -> Result<String, ChatError> {
        Ok(if s.contains("95.2%") {
            s.replace("95.2%", "很高")
        } else {
            s.replace(
                "该方法在医学影像分析中同样表现良好",
                "在医学影像分析里，这一方法表现同样良好",
            )
            .replace('；', "。")
        })
    }

    #[tokio::test]
    async fn sentence_by_sentence_a_sentence_that_lost_a_locked_span_keeps_its_wording() {
        let model = ScriptedModel::new(vec![sentence_wise]);
        let mut settings = lenient(Settings::new(Goal::Similarity, Strength::Medium));
        settings.by_sentence = true;
        settings.attempts = 1;
        let shown = Mutex::new(vec![]);
        let live = |t: &str| shown.lock().unwrap().push(t.to_string());
        let r = rewrite_paragraph(
            &model,
            &PhraseJudge(COPIED),
            &settings,
            TWO_SENTENCES,
            Some(&live),
        )
        .await
        .unwrap();
        // Two calls, one per sentence; the first answer lost 95.2% so that sentence stays, the
        // second is used with the paragraph's own ending (；, not the model's 。).
        assert_eq!(model.temperatures.lock().unwrap().len(), 2);
        assert_eq!(
            r.rewritten.as_deref(),
            Some(
                "深度学习方法在图像识别中取得了显著进展，准确率达到95.2%。在医学影像分析里，这一方法表现同样良好；"
            )
        );
        assert_eq!(r.usage.completion_tokens, 10);
        // The student watched the paragraph grow sentence by sentence.
        let shown = shown.lock().unwrap();
        let first = "深度学习方法在图像识别中取得了显著进展，准确率达到95.2%。";
        assert!(
            shown
                .iter()
                .any(|t| t.starts_with(first) && t.len() > first.len() + 6 && !t.ends_with('；'))
        );
        // Still copied in the library, so the whole paragraph is judged and refused as usual.
        assert!(!r.accepted);
    }

    #[test]
    fn a_sentence_answer_must_keep_its_locked_terms_whole_and_its_length() {
        let locked = vec!["内资企业".to_string(), "门限".to_string()];
        let s = "内资企业存在单门限效应。";
        assert!(sentence_keeps_locked(
            s,
            "单门限效应存在于内资企业。",
            &locked
        ));
        assert!(!sentence_keeps_locked(
            s,
            "企业内资本存在单门限效应。",
            &locked
        ));
        assert!(!sentence_keeps_locked(
            s,
            "内资企业存在单门限效应。",
            &locked
        ));
        assert!(!sentence_keeps_locked(s, "内资企业门限。", &locked));
        assert_eq!(with_ending_of("甲乙；", "乙甲。"), "乙甲；");
        assert_eq!(with_ending_of("甲乙", "乙甲。"), "乙甲");
    }

    #[tokio::test]
    async fn a_rewrite_that_loses_a_figure_is_tried_again_stronger() {
        let model = ScriptedModel::new(vec![drop_number, reorder]);
        let settings = lenient(Settings::new(Goal::Similarity, Strength::Light));
        let r = rewrite_paragraph(&model, &PhraseJudge(COPIED), &settings, PARAGRAPH, None)
            .await
            .unwrap();
        assert!(r.accepted, "{r:?}");
        assert_eq!(r.attempts, 2);
        assert_eq!(r.strength, Strength::Medium);
        let temps = model.temperatures.lock().unwrap().clone();
        assert!(temps[1] > temps[0]);
        // The label and quotes the model wrapped its answer in are gone.
        assert_eq!(
            r.rewritten.as_deref(),
            Some("在图像识别中深度学习方法取得了显著进展，准确率达到95.2%。")
        );
        assert!(r.similarity_before > 50.0);
        assert_eq!(r.similarity_after, Some(0.0));
        assert_eq!(r.chosen(), r.rewritten.as_deref().unwrap());
        assert_eq!(r.usage.completion_tokens, 10);
    }

    /// These toy rewrites change a word or two, so they keep long runs of the original, which
    /// the review doubts (`a_paragraph_handed_back_is_caught_without_a_library`); tests about
    /// the loop itself let that pass.
    fn lenient(mut settings: Settings) -> Settings {
        settings.thresholds.copied_max = 1.0;
        settings
    }

    /// A judge whose library holds nothing: every copy ratio is 0, as with an empty library.
    struct EmptyLibrary;

    impl Judge for EmptyLibrary {
        fn similarity<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<f64, String>> {
            Box::pin(async { Ok(0.0) })
        }

        fn ai_probability<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<f64>, String>> {
            Box::pin(async { Ok(None) })
        }

        fn meaning<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<f64, String>> {
            Box::pin(async { Ok(0.99) })
        }
    }

    fn drop_one_character(p: &str) -> Result<String, ChatError> {
        Ok(p.replacen("了", "", 1))
    }

    #[tokio::test]
    async fn a_paragraph_handed_back_is_caught_without_a_library() {
        // What an endpoint model did: it "rewrote" by dropping one character, and with an empty
        // library the copy ratio could not fall because it was 0 already.
        let model = ScriptedModel::new(vec![drop_one_character]);
        let settings = Settings::new(Goal::Similarity, Strength::Medium);
        let r = rewrite_paragraph(&model, &EmptyLibrary, &settings, PARAGRAPH, None)
            .await
            .unwrap();
        assert!(!r.accepted, "{r:?}");
        assert_eq!(r.doubts[0].label, "与原文雷同");
        assert!(r.reason.as_deref().unwrap().contains("与原文雷同"), "{r:?}");
        assert!(r.reading.as_ref().unwrap().copied > 0.9);
        assert_eq!(r.chosen(), PARAGRAPH);
    }

    /// One real Cilin synonym group: 显著 / 明显.
    fn small_thesaurus() -> Arc<Thesaurus> {
        Arc::new(
            Thesaurus::from_json(r#"{"E": {"sub": {"d": {"sub": {"01=": ["显著", "明显"]}}}}}"#)
                .unwrap(),
        )
    }

    #[tokio::test]
    async fn at_light_strength_synonyms_go_first_and_the_model_is_not_asked_when_they_suffice() {
        let model = ScriptedModel::new(vec![unreachable]);
        let mut settings = lenient(Settings::new(Goal::Similarity, Strength::Light));
        settings.thesaurus = Some(small_thesaurus());
        let r = rewrite_paragraph(&model, &PhraseJudge(COPIED), &settings, PARAGRAPH, None)
            .await
            .unwrap();
        assert!(r.accepted, "{r:?}");
        assert_eq!(
            r.rewritten.as_deref(),
            Some("深度学习方法在图像识别中取得了明显进展，准确率达到95.2%。")
        );
        assert_eq!((r.attempts, r.model.as_str()), (1, "同义词词林"));
        assert!(
            model.temperatures.lock().unwrap().is_empty(),
            "the model was not asked"
        );
    }

    #[tokio::test]
    async fn a_model_rewrite_that_still_copies_gets_synonyms_and_is_measured_again() {
        let model = ScriptedModel::new(vec![same]);
        let mut settings = lenient(Settings::new(Goal::Similarity, Strength::Medium));
        settings.thesaurus = Some(small_thesaurus());
        let r = rewrite_paragraph(&model, &PhraseJudge(COPIED), &settings, PARAGRAPH, None)
            .await
            .unwrap();
        assert!(r.accepted, "{r:?}");
        assert_eq!(r.attempts, 1);
        assert_eq!(r.model, "test:scripted + 同义词词林");
        assert!(r.rewritten.as_deref().unwrap().contains("明显进展"));
        // Synonyms do nothing for AI traces: an AIGC rewrite never uses them.
        let mut aigc = settings.clone();
        aigc.goal = Goal::Aigc;
        let r = rewrite_paragraph(&model, &PhraseJudge(COPIED), &aigc, PARAGRAPH, None)
            .await
            .unwrap();
        assert_eq!(r.model, "test:scripted");
    }

    #[tokio::test]
    async fn the_original_is_kept_with_the_reason_when_nothing_measures_better() {
        let model = ScriptedModel::new(vec![same]);
        let settings = Settings::new(Goal::Similarity, Strength::Strong);
        let r = rewrite_paragraph(&model, &PhraseJudge(COPIED), &settings, PARAGRAPH, None)
            .await
            .unwrap();
        assert!(!r.accepted);
        assert_eq!(r.attempts, 3);
        assert_eq!(r.chosen(), PARAGRAPH);
        assert!(
            r.reason.as_deref().unwrap().contains("复制比未明显下降"),
            "{r:?}"
        );
        assert!(!r.failed());
    }

    #[tokio::test]
    async fn a_similarity_rewrite_that_reads_as_ai_is_not_used() {
        let model = ScriptedModel::new(vec![reorder]);
        let settings = Settings::new(Goal::Similarity, Strength::Medium);
        let r = rewrite_paragraph(
            &model,
            &SuspiciousJudge(PhraseJudge(COPIED)),
            &settings,
            PARAGRAPH,
            None,
        )
        .await
        .unwrap();
        assert!(!r.accepted, "{r:?}");
        assert_eq!(r.similarity_after, Some(0.0));
        assert!(
            r.reason.as_deref().unwrap().contains("AI 特征明显增加"),
            "{r:?}"
        );
    }

    #[tokio::test]
    async fn a_model_that_fails_leaves_the_paragraph_unchanged_and_uncharged() {
        let model = ScriptedModel::new(vec![unreachable]);
        let settings = Settings::new(Goal::Aigc, Strength::Medium);
        let r = rewrite_paragraph(&model, &PhraseJudge(COPIED), &settings, PARAGRAPH, None)
            .await
            .unwrap();
        assert!(r.failed() && !r.accepted);
        assert!(r.reason.as_deref().unwrap().contains("无法连接"));
        assert_eq!(r.chosen(), PARAGRAPH);
    }

    #[tokio::test]
    async fn every_paragraph_comes_back_in_order_with_progress() {
        let model = ScriptedModel::new(vec![reorder]);
        let mut settings = Settings::new(Goal::Similarity, Strength::Medium);
        settings.concurrency = 3;
        let paragraphs: Vec<String> = (0..7).map(|i| format!("{PARAGRAPH}{i}")).collect();
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let live = Mutex::new(vec![String::new(); 7]);
        let results = rewrite_all(
            &model,
            &PhraseJudge(COPIED),
            &settings,
            &paragraphs,
            &|d, t| {
                assert_eq!(t, 7);
                seen.fetch_max(d, std::sync::atomic::Ordering::Relaxed);
            },
            Some(&|i, text| live.lock().unwrap()[i] = text.to_string()),
        )
        .await
        .unwrap();
        assert_eq!(seen.into_inner(), 7);
        // Each paragraph's last streamed text is the answer it was judged on.
        let live = live.into_inner().unwrap();
        for (i, r) in results.iter().enumerate() {
            assert_eq!(Some(clean_answer(&live[i])), r.rewritten);
        }
        for (i, r) in results.iter().enumerate() {
            assert_eq!(r.original, paragraphs[i]);
            assert!(r.rewritten.as_deref().unwrap().ends_with(&format!("。{i}")));
        }
    }

    #[test]
    fn answers_are_unwrapped() {
        assert_eq!(clean_answer("```\n改写后：正文。\n```"), "正文。");
        assert_eq!(clean_answer("  \"正文。\" "), "正文。");
        assert_eq!(clean_answer("正文“引语”。"), "正文“引语”。");
        assert_eq!(clean_answer("“改写后：正文。”"), "正文。");
        assert_eq!(
            clean_answer("改写后：\n正文。\n\n请注意，以上内容……\n[您的名称]"),
            "正文。"
        );
    }
}

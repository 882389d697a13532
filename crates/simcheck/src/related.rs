//! Library records about a query, for paper generation to offer the model as references.
//!
//! One sentence of a record close to a section's query is weak evidence: a query built of a
//! title and a generic heading ("研究背景与意义") is close to every record that talks about research
//! significance, whatever its field. A record is offered only if it is also about the paper as a
//! whole: its sentences must be close to the topic (title and keywords) too, and so must its
//! title (one garbled or generic sentence is close to anything). The thresholds
//! were chosen on `paper-retrieval` (bench) with two fields' titles and checked on two others.

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

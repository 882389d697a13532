//! Which library records paper generation offers a section, measured on real titles: the
//! library is the even records of the CSL abstracts (four fields), the papers are titles (and
//! keywords) of the odd records, and every section query is the title, a generic thesis heading
//! ("研究背景与意义"…) and the keywords, as `compose` builds it. A record of another field offered
//! to a paper is wrong for certain; one of the same field is counted right (an upper bound: a
//! same-field record may still be off the topic).
//!
//! Sweeps the thresholds of `simcheck::related::RelatedRule`, each with and without the gate on
//! the paper's words (`topic_term`: off, always — the record uses one of `topic_terms` — or
//! always unless the record's closest sentence to the topic reaches a figure), and prints, per split, the field
//! precision of the offered records, the share of offered records sharing a keyword with the
//! paper's own record (a second, stricter measure of being on the topic: the corpus's keywords,
//! which retrieval never reads), the share of sections offered at least one, and the records
//! offered per section. Tune on `RETRIEVAL_TUNE_FIELDS` (default pharmacy and
//! economics), read the others as held out.
//!
//!   cargo run --release -p wenjian-bench --bin paper-retrieval
//!
//! `RETRIEVAL_TITLES` titles per field (default 60).

use simcheck::related::{
    RELATED_RULE, RelatedRule, TOPIC_SENTENCES, best_per_record, mentions_topic, related_records,
    topic_terms,
};
use simcheck::{Library, NewDoc};
use std::collections::HashMap;

/// Generic headings of a Chinese thesis: the hard case, the heading says nothing of the field.
const HEADINGS: [&str; 6] = [
    "绪论",
    "研究背景与意义",
    "国内外研究现状",
    "研究内容与方法",
    "结果与分析",
    "结论与展望",
];
/// As in `compose::generate`.
const SENTENCES_PER_QUERY: usize = 48;
const REFERENCES_PER_SECTION: usize = 4;

struct Query {
    field: String,
    keywords: Vec<String>,
    section: Vec<simcheck::SentenceHit>,
    topic: HashMap<u64, f32>,
    /// Each library record's title to the paper's topic.
    titles: HashMap<u64, f32>,
    /// The paper's `topic_terms`.
    terms: Vec<String>,
}

/// The gate on the paper's words: off; a record must use one of `topic_terms` (shipped); or must
/// unless its closest sentence to the topic is at least this close.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TermGate {
    Off,
    Always,
    Unless(f32),
}

#[derive(Default)]
struct Tally {
    offered: usize,
    right: usize,
    sharing_a_keyword: usize,
    sections: usize,
    sections_offered: usize,
}

fn tally(
    queries: &[&Query],
    field_of: &HashMap<u64, String>,
    keywords_of: &HashMap<u64, Vec<String>>,
    text_of: &HashMap<u64, (String, String)>,
    rule: RelatedRule,
    term: TermGate,
) -> Tally {
    let mut t = Tally::default();
    for q in queries {
        let mut ranked = related_records(&q.section, &q.topic, rule);
        ranked.retain(|(d, _)| {
            rule.admits_title(q.titles[d], q.topic.get(d).copied().unwrap_or(f32::MIN))
        });
        let waived_from = match term {
            TermGate::Off => f32::MIN,
            TermGate::Always => f32::INFINITY,
            TermGate::Unless(w) => w,
        };
        ranked.retain(|(d, _)| {
            q.topic.get(d).copied().unwrap_or(f32::MIN) >= waived_from
                || mentions_topic(&text_of[d].0, &text_of[d].1, &q.terms)
        });
        ranked.truncate(REFERENCES_PER_SECTION);
        t.sections += 1;
        t.sections_offered += usize::from(!ranked.is_empty());
        t.offered += ranked.len();
        t.right += ranked
            .iter()
            .filter(|(d, _)| field_of.get(d) == Some(&q.field))
            .count();
        t.sharing_a_keyword += ranked
            .iter()
            .filter(|(d, _)| {
                keywords_of
                    .get(d)
                    .is_some_and(|k| k.iter().any(|k| q.keywords.contains(k)))
            })
            .count();
    }
    t
}

fn figures(t: &Tally) -> serde_json::Value {
    serde_json::json!({
        "field_precision": (t.right as f64 / t.offered.max(1) as f64 * 1000.0).round() / 1000.0,
        "sharing_a_keyword": (t.sharing_a_keyword as f64 / t.offered.max(1) as f64 * 1000.0).round() / 1000.0,
        "sections_with_records": (t.sections_offered as f64 / t.sections.max(1) as f64 * 1000.0).round() / 1000.0,
        "records_per_section": (t.offered as f64 / t.sections.max(1) as f64 * 100.0).round() / 100.0,
        "sections": t.sections,
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (data, encoder) = wenjian_bench::data_and_encoder_or_exit();
    let titles_per_field: usize = std::env::var("RETRIEVAL_TITLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let tune_fields: Vec<String> = std::env::var("RETRIEVAL_TUNE_FIELDS")
        .unwrap_or_else(|_| "医学_药学,经济学_应用经济学".into())
        .split(',')
        .map(str::to_string)
        .collect();

    let value = wenjian_bench::csl_abstracts(&data);
    let dir = tempfile::tempdir().expect("temp dir");
    let library = wenjian_bench::sentence_library(dir.path(), encoder.clone());
    let began = std::time::Instant::now();
    let mut field_of: HashMap<u64, String> = HashMap::new();
    let mut keywords_of: HashMap<u64, Vec<String>> = HashMap::new();
    // Each record's title and abstract, as the server reads them for the term gate.
    let mut text_of: HashMap<u64, (String, String)> = HashMap::new();
    let mut title_vectors: HashMap<u64, Vec<f32>> = HashMap::new();
    // (field, title, keywords) of the papers.
    let mut papers: Vec<(String, String, Vec<String>)> = Vec::new();
    let keywords = |r: &serde_json::Value| -> Vec<String> {
        r["keywords"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str())
            .map(str::to_string)
            .collect()
    };
    for (field, rows) in value.as_object().expect("fields") {
        let rows = rows.as_array().expect("records");
        let even: Vec<NewDoc> = rows
            .iter()
            .step_by(2)
            .map(|r| {
                NewDoc::public(
                    r["title"].as_str().unwrap_or("").to_string(),
                    r["abstract"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let ids = library.add(even).await.expect("add");
        for (id, r) in ids.into_iter().zip(rows.iter().step_by(2)) {
            field_of.insert(id, field.clone());
            title_vectors.insert(
                id,
                encoder_embed(&encoder, r["title"].as_str().unwrap_or("")),
            );
            keywords_of.insert(id, keywords(r));
            text_of.insert(
                id,
                (
                    r["title"].as_str().unwrap_or("").to_string(),
                    r["abstract"].as_str().unwrap_or("").to_string(),
                ),
            );
        }
        for r in rows.iter().skip(1).step_by(2).take(titles_per_field) {
            papers.push((
                field.clone(),
                r["title"].as_str().unwrap_or("").to_string(),
                keywords(r),
            ));
        }
    }
    let import_seconds = began.elapsed().as_secs_f64();

    // With the paper's keywords, and without (a student may give none).
    let mut with_keywords = Vec::new();
    let mut without_keywords = Vec::new();
    for (field, title, paper_keywords) in &papers {
        let joined = paper_keywords.join(" ");
        for (keywords, given, out) in [
            (joined.as_str(), paper_keywords.clone(), &mut with_keywords),
            ("", Vec::new(), &mut without_keywords),
        ] {
            let terms = topic_terms(title, &given);
            let topic_query = format!("{title} {keywords}");
            let topic_hits = library
                .similar_sentences(
                    &[encoder_embed(&encoder, topic_query.trim())],
                    TOPIC_SENTENCES,
                )
                .await
                .expect("search")
                .expect("sentence index");
            let topic = best_per_record(&topic_hits[0]);
            let topic_vector = encoder_embed(&encoder, topic_query.trim());
            let titles: HashMap<u64, f32> = title_vectors
                .iter()
                .map(|(&id, v)| (id, embed::cosine(v, &topic_vector)))
                .collect();
            for heading in HEADINGS {
                let query = format!("{title} {heading} {keywords}");
                let hits = library
                    .similar_sentences(
                        &[encoder_embed(&encoder, query.trim())],
                        SENTENCES_PER_QUERY,
                    )
                    .await
                    .expect("search")
                    .expect("sentence index");
                out.push(Query {
                    field: field.clone(),
                    keywords: paper_keywords.clone(),
                    section: hits.into_iter().next().unwrap_or_default(),
                    topic: topic.clone(),
                    titles: titles.clone(),
                    terms: terms.clone(),
                });
            }
        }
    }

    let mut rows = Vec::new();
    let sections = [0.40f32, 0.45, 0.50, 0.55];
    let topics = [f32::MIN, 0.40, 0.45, 0.50];
    let titles = [f32::MIN, 0.20, 0.25, 0.30, 0.35, 0.40];
    let waivers = [f32::INFINITY, 0.50, 0.55, 0.60];
    let term_gates = [
        TermGate::Off,
        TermGate::Always,
        TermGate::Unless(0.50),
        TermGate::Unless(0.55),
        TermGate::Unless(0.60),
    ];
    for (keywords, queries) in [("with", &with_keywords), ("without", &without_keywords)] {
        let (tune, held): (Vec<&Query>, Vec<&Query>) =
            queries.iter().partition(|q| tune_fields.contains(&q.field));
        for &min_section in &sections {
            for &min_topic in &topics {
                for ((&min_title, &title_waived_from), term) in titles
                    .iter()
                    .flat_map(|t| waivers.iter().map(move |w| (t, w)))
                    .flat_map(|tw| term_gates.iter().map(move |&g| (tw, g)))
                {
                    let rule = RelatedRule {
                        min_section,
                        min_topic,
                        min_title,
                        title_waived_from,
                    };
                    rows.push(serde_json::json!({
                        "keywords": keywords,
                        "min_section": min_section,
                        "min_topic": (min_topic != f32::MIN).then_some(min_topic),
                        "min_title": (min_title != f32::MIN).then_some(min_title),
                        "title_waived_from": title_waived_from.is_finite().then_some(title_waived_from),
                        "topic_term": match term {
                            TermGate::Off => serde_json::json!("off"),
                            TermGate::Always => serde_json::json!("always"),
                            TermGate::Unless(w) => serde_json::json!(format!("unless topic ≥ {w:.2}")),
                        },
                        "shipped": rule == RELATED_RULE && term == TermGate::Always,
                        "tune": figures(&tally(&tune, &field_of, &keywords_of, &text_of, rule, term)),
                        "held_out": figures(&tally(&held, &field_of, &keywords_of, &text_of, rule, term)),
                    }));
                }
            }
        }
    }
    let shipped: Vec<_> = rows
        .iter()
        .filter(|r| r["shipped"] == true)
        .cloned()
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "library_records": field_of.len(),
            "titles": papers.len(),
            "headings": HEADINGS,
            "tune_fields": tune_fields,
            "import_seconds": (import_seconds * 10.0).round() / 10.0,
            "shipped_rule": shipped,
            "sweep": rows,
        }))
        .expect("json")
    );
}

fn encoder_embed(encoder: &embed::UseEncoder, text: &str) -> Vec<f32> {
    simcheck::SentenceEmbedder::embed(encoder, text)
}

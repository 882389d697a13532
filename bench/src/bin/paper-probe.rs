//! Why a paper's section was (or was not) offered a library record: every gate of
//! `simcheck::related` shown per record, on the paper bench's library (the first 300 CSL
//! abstracts of each field, as `bench/scripts/paper-quality.sh` imports them). A reading tool for
//! one paper at a time; `paper-retrieval` is the measurement.
//!
//!   cargo run --release -p wenjian-bench --bin paper-probe -- TITLE KEYWORDS HEADINGS [RECORD]
//!
//! KEYWORDS comma-separated, HEADINGS `|`-separated (the outline's leaf titles); RECORD a piece
//! of a library title whose figures are printed for every heading even when it is not among the
//! sentences a section looks at. Prints JSON.

use simcheck::related::{
    RELATED_RULE, TOPIC_SENTENCES, best_per_record, mentions_topic, related_records, topic_terms,
};
use simcheck::{Library, NewDoc};
use std::collections::HashMap;

/// As in `compose::generate` and the server's `LibrarySource`.
const SENTENCES_PER_QUERY: usize = 48;
const REFERENCES_PER_SECTION: usize = 4;
/// As in `paper-quality.sh`.
const RECORDS_PER_FIELD: usize = 300;
/// Sentences searched to find the probed record's closest one when it is not among the first.
const WIDE_SEARCH: usize = 5000;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: paper-probe TITLE KEYWORDS HEADINGS [RECORD]");
        std::process::exit(2);
    }
    let (title, headings) = (&args[0], args[2].split('|').collect::<Vec<_>>());
    let keywords: Vec<String> = args[1]
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect();
    let probe = args.get(3);
    let (data, encoder) = wenjian_bench::data_and_encoder_or_exit();
    let embed = |text: &str| simcheck::SentenceEmbedder::embed(encoder.as_ref(), text);

    let value = wenjian_bench::csl_abstracts(&data);
    let dir = tempfile::tempdir().expect("temp dir");
    let library = wenjian_bench::sentence_library(dir.path(), encoder.clone());
    // Each record's title and abstract.
    let mut text_of: HashMap<u64, (String, String)> = HashMap::new();
    for rows in value.as_object().expect("fields").values() {
        let rows: Vec<&serde_json::Value> = rows
            .as_array()
            .expect("records")
            .iter()
            .take(RECORDS_PER_FIELD)
            .collect();
        let pairs: Vec<(String, String)> = rows
            .iter()
            .map(|r| {
                (
                    r["title"].as_str().unwrap_or("").to_string(),
                    r["abstract"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let docs = pairs
            .iter()
            .map(|(t, a)| NewDoc::public(t.clone(), a.clone()))
            .collect();
        let ids = library.add(docs).await.expect("add");
        text_of.extend(ids.into_iter().zip(pairs));
    }

    let terms = topic_terms(title, &keywords);
    let topic_query = format!("{title} {}", keywords.join(" "));
    let topic_vector = embed(topic_query.trim());
    let search = |vector: Vec<f32>, k: usize| {
        let library = &library;
        async move {
            library
                .similar_sentences(&[vector], k)
                .await
                .expect("search")
                .expect("sentence index")
                .into_iter()
                .next()
                .unwrap_or_default()
        }
    };
    let topic = best_per_record(&search(topic_vector.clone(), TOPIC_SENTENCES).await);
    let wide_topic = best_per_record(&search(topic_vector.clone(), WIDE_SEARCH).await);
    let probed: Vec<u64> = probe
        .map(|p| {
            text_of
                .iter()
                .filter(|(_, (t, _))| t.contains(p.as_str()))
                .map(|(&id, _)| id)
                .collect()
        })
        .unwrap_or_default();

    let gates = |id: u64, section: Option<f32>, wide_section: Option<f32>| {
        let (record_title, text) = &text_of[&id];
        let title_cosine = embed::cosine(&embed(record_title), &topic_vector);
        let closest_to_topic = topic.get(&id).copied();
        let admitted = section.is_some_and(|s| s >= RELATED_RULE.min_section)
            && closest_to_topic.is_some_and(|t| t >= RELATED_RULE.min_topic)
            && RELATED_RULE.admits_title(title_cosine, closest_to_topic.unwrap_or(f32::MIN))
            && mentions_topic(record_title, text, &terms);
        serde_json::json!({
            "record": record_title,
            "section_cosine": section,
            "section_cosine_wide": wide_section,
            "topic_cosine": closest_to_topic,
            "topic_cosine_wide": wide_topic.get(&id),
            "title_cosine": (title_cosine * 1000.0).round() / 1000.0,
            "uses_a_term": mentions_topic(record_title, text, &terms),
            "passes_every_gate": admitted,
        })
    };
    let mut sections = Vec::new();
    for heading in &headings {
        let query = format!("{title} {heading} {}", keywords.join(" "));
        let hits = search(embed(query.trim()), SENTENCES_PER_QUERY).await;
        let best = best_per_record(&hits);
        let ranked = related_records(&hits, &topic, RELATED_RULE);
        let mut offered = Vec::new();
        for (id, _) in &ranked {
            let (record_title, text) = &text_of[id];
            let title_cosine = embed::cosine(&embed(record_title), &topic_vector);
            let closest = topic.get(id).copied().unwrap_or(f32::MIN);
            if RELATED_RULE.admits_title(title_cosine, closest)
                && mentions_topic(record_title, text, &terms)
            {
                offered.push(record_title.clone());
            }
        }
        offered.truncate(REFERENCES_PER_SECTION);
        let mut considered: Vec<(u64, f32)> = best.into_iter().collect();
        considered.sort_by(|a, b| b.1.total_cmp(&a.1));
        let wide = if probed.is_empty() {
            HashMap::new()
        } else {
            best_per_record(&search(embed(query.trim()), WIDE_SEARCH).await)
        };
        sections.push(serde_json::json!({
            "heading": heading,
            "offered": offered,
            "considered": considered
                .iter()
                .map(|&(id, s)| gates(id, Some(s), None))
                .collect::<Vec<_>>(),
            "probed": probed
                .iter()
                .map(|id| gates(*id, hits.iter().filter(|h| h.doc == *id).map(|h| h.similarity).reduce(f32::max), wide.get(id).copied()))
                .collect::<Vec<_>>(),
        }));
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "title": title,
            "terms": terms,
            "rule": format!("{RELATED_RULE:?}"),
            "sections": sections,
        }))
        .expect("json")
    );
}

//! The paper generator's figures (issue 22's bench), read from what `bench/scripts/paper-quality.sh`
//! left in a folder: `titles.json` (the titles asked for), `paper-N.json` (`wenjian paper generate
//! --json`), `check-N.json` (`wenjian check --json` of that paper's body against the same library)
//! and `library.tsv` (`wenjian corpus list`). Prints JSON figures, never pass/fail:
//!
//! - outline validity: 4–8 chapters and leaf budgets summing to within 10 % of the target;
//! - length delivered against the length asked (within 15 % counts as delivered);
//! - references: every listed reference is a library record (same id, same title), and every
//!   citation marker in the body names a listed reference;
//! - citation support: sentence-encoder cosine of each citing sentence to the abstract of the
//!   record it cites, beside the cosine to another record the same paper lists (a measure the
//!   generator's trigram grounding does not use);
//! - references on the paper's field: the share of listed references whose record the corpus
//!   files under the paper's own field (a record of another field is off the topic for certain;
//!   retrieval never reads the field);
//! - section relevance: sentence-encoder cosine of each section to its own heading and to the
//!   paper's title, beside the same cosine to a heading and a title of another paper (shuffled);
//! - similarity of the body against the library (总文字复制比 and the paraphrase share);
//! - citing sentences in the paper's own voice ("本研究…[2]"): a record's study told as the
//!   student's own work;
//! - papers with at least one reference, and sentences per paper that say studies or scholars
//!   hold a claim and cite nothing ("已有研究指出…", ghost references without a number);
//! - the longest run of characters the body shares with a record it lists (the copy guard's
//!   leak: the guard lets a term through, not a sentence);
//! - minutes per 10,000 字 on this machine.
//!
//!   cargo run --release -p wenjian-bench --bin paper-review -- DIR

use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Leaves of an outline node tree with their budgets.
fn leaf_budgets(node: &Value, out: &mut Vec<u64>) {
    let children = node["children"].as_array().cloned().unwrap_or_default();
    if children.is_empty() {
        out.push(node["budget"].as_u64().unwrap_or(0));
    }
    for c in &children {
        leaf_budgets(c, out);
    }
}

/// "1.2.3 研究方法" → "研究方法".
fn bare_heading(heading: &str) -> &str {
    heading
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '第' || c == '章')
        .trim()
}

/// Citation numbers written in the body: [3], [1,4], [2-5], [2–5].
fn citation_numbers(text: &str) -> Vec<usize> {
    let re = regex::Regex::new(r"\[(\d+(?:\s*[,，、\-–~]\s*\d+)*)\]").expect("regex");
    let mut out = Vec::new();
    for cap in re.captures_iter(text) {
        let inner = &cap[1];
        let parts: Vec<&str> = inner.split([',', '，', '、']).collect();
        for p in parts {
            let range: Vec<usize> = p
                .split(['-', '–', '~'])
                .filter_map(|n| n.trim().parse().ok())
                .collect();
            match range.as_slice() {
                [a, b] if a <= b && b - a < 50 => out.extend(*a..=*b),
                [a] => out.push(*a),
                _ => {}
            }
        }
    }
    out
}

fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if matches!(c, '。' | '！' | '？' | '；' | '\n') {
            let s = current.trim().to_string();
            if s.chars().count() >= 8 {
                out.push(s);
            }
            current.clear();
        }
    }
    let s = current.trim().to_string();
    if s.chars().count() >= 8 {
        out.push(s);
    }
    out
}

/// A section's meaning: the normalised mean of its sentences' embeddings (the encoder reads one
/// sentence well, a whole section poorly).
fn section_vector(encoder: &embed::UseEncoder, text: &str) -> Option<Vec<f32>> {
    let sentences = sentences(text);
    if sentences.is_empty() {
        return None;
    }
    let refs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let vectors = encoder.embed_batch(&refs);
    let mut mean = vec![0f32; vectors[0].len()];
    for v in &vectors {
        for (m, x) in mean.iter_mut().zip(v) {
            *m += x;
        }
    }
    let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
    Some(mean.into_iter().map(|x| x / norm).collect())
}

/// Words by which a sentence tells of the paper's own work.
const OWN_VOICE: [&str; 5] = ["本文", "本研究", "本论文", "笔者", "我们"];

/// Studies or scholars said to hold a claim ("已有研究指出", "有学者认为", "相关文献表明",
/// "研究者们普遍发现"), anywhere in a sentence: read here by a pattern of its own, wider than the
/// generator's rule, so the figure checks that rule rather than repeating it.
const ATTRIBUTION: &str = "(研究|文献|学者|研究者)们?(还|也|曾|均|都|普遍|已|进一步)?(指出|表明|显示|发现|认为|证实|揭示)";

/// Sentences of `text` that name studies or scholars for a claim and cite nothing: the
/// unsupported attributions the issue calls ghost references. "本研究表明" is the paper's own.
fn uncited_attributions(text: &str, pattern: &regex::Regex) -> usize {
    sentences(text)
        .iter()
        .filter(|s| citation_numbers(s).is_empty())
        .filter(|s| {
            pattern
                .find_iter(s)
                .any(|m| !s[..m.start()].ends_with('本'))
        })
        .count()
}

/// The length in characters of the longest run `a` and `b` share.
fn longest_shared_run(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut previous = vec![0usize; b.len() + 1];
    let mut best = 0;
    for &x in &a {
        let mut row = vec![0usize; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            if x == y {
                row[j + 1] = previous[j] + 1;
                best = best.max(row[j + 1]);
            }
        }
        previous = row;
    }
    best
}

fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some((xs.iter().sum::<f64>() / xs.len() as f64 * 1000.0).round() / 1000.0)
    }
}

struct Section {
    paper: usize,
    heading: String,
    vector: Vec<f32>,
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: paper-review DIR");
        std::process::exit(2);
    };
    let dir = Path::new(&dir);
    let titles = read_json(&dir.join("titles.json")).expect("titles.json");
    let titles = titles.as_array().cloned().unwrap_or_default();
    let library: HashMap<u64, String> = std::fs::read_to_string(dir.join("library.tsv"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut parts = l.split('\t');
            let id = parts.next()?.parse().ok()?;
            Some((id, parts.next()?.to_string()))
        })
        .collect();
    // Record texts by title, for citation support.
    let record_texts: HashMap<String, String> = std::fs::read_to_string(dir.join("library.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            Some((
                v["title"].as_str()?.to_string(),
                v["text"].as_str()?.to_string(),
            ))
        })
        .collect();
    // The corpus's field of each record, by title ("工学_计算机科学与技术" → "计算机科学与技术").
    let record_fields: HashMap<String, String> = wenjian_bench::eval_data_dir()
        .and_then(|d| read_json(&d.join("corpus/csl-abstracts-a.json")))
        .and_then(|v| v.as_object().cloned())
        .into_iter()
        .flatten()
        .flat_map(|(field, records)| {
            let field = field
                .split_once('_')
                .map_or(field.clone(), |(_, f)| f.to_string());
            records
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(move |r| Some((r["title"].as_str()?.to_string(), field.clone())))
        })
        .collect();
    let (mut refs_with_field, mut refs_same_field) = (0, 0);
    let (mut support_cited, mut support_other) = (Vec::new(), Vec::new());
    let encoder = embed::UseEncoder::load(&wenjian_bench::models_dir().join("usem3"))
        .map_err(|e| eprintln!("paper-review: no sentence encoder ({e}); relevance skipped"))
        .ok();

    let mut rows = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut title_vectors: Vec<Option<Vec<f32>>> = Vec::new();
    let (mut outlines_valid, mut delivered_within, mut papers) = (0, 0, 0);
    let (mut refs_total, mut refs_valid, mut markers_total, mut markers_valid) = (0, 0, 0, 0);
    let (mut chars_total, mut minutes_total) = (0usize, 0f64);
    let (mut ratios, mut paraphrase_shares, mut length_ratios) = (vec![], vec![], vec![]);
    let mut longest_runs = vec![];
    let (mut citing_sentences, mut citing_in_own_voice) = (0, 0);
    let attribution = regex::Regex::new(ATTRIBUTION).expect("attribution pattern");
    let (mut attributions_uncited, mut papers_with_a_reference) = (0, 0);
    let mut failures = Vec::new();
    for (i, asked) in titles.iter().enumerate() {
        let title = asked["title"].as_str().unwrap_or_default().to_string();
        let words = asked["words"].as_u64().unwrap_or(0);
        let Some(paper) = read_json(&dir.join(format!("paper-{i}.json"))) else {
            let why = std::fs::read_to_string(dir.join(format!("paper-{i}.err")))
                .unwrap_or_default()
                .lines()
                .last()
                .unwrap_or("no output")
                .to_string();
            failures.push(serde_json::json!({"title": title, "error": why}));
            title_vectors.push(None);
            continue;
        };
        papers += 1;
        let chapters = paper["outline"]["chapters"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut budgets = Vec::new();
        for c in &chapters {
            leaf_budgets(c, &mut budgets);
        }
        let budget_sum: u64 = budgets.iter().sum();
        let budget_error = (budget_sum as f64 - words as f64).abs() / words.max(1) as f64;
        let outline_valid = (4..=8).contains(&chapters.len()) && budget_error <= 0.10;
        outlines_valid += usize::from(outline_valid);

        let chars = paper["chars"].as_u64().unwrap_or(0) as usize;
        let length_ratio = chars as f64 / words.max(1) as f64;
        delivered_within += usize::from((length_ratio - 1.0).abs() <= 0.15);
        length_ratios.push(length_ratio);
        chars_total += chars;
        let minutes = paper["minutes"].as_f64().unwrap_or(0.0);
        minutes_total += minutes;

        let references = paper["references"].as_array().cloned().unwrap_or_default();
        let valid = references
            .iter()
            .filter(|r| {
                r["library_id"]
                    .as_u64()
                    .and_then(|id| library.get(&id))
                    .is_some_and(|t| Some(t.as_str()) == r["title"].as_str())
            })
            .count();
        refs_total += references.len();
        refs_valid += valid;
        let paper_field = asked["field"].as_str().unwrap_or_default();
        let fields: Vec<&String> = references
            .iter()
            .filter_map(|r| record_fields.get(r["title"].as_str()?))
            .collect();
        let same_field = fields.iter().filter(|f| f.as_str() == paper_field).count();
        refs_with_field += fields.len();
        refs_same_field += same_field;
        let body: Vec<(String, String)> = paper["sections"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                (
                    s["heading"].as_str().unwrap_or_default().to_string(),
                    s["text"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        let whole_body: String = body.iter().map(|(_, t)| t.as_str()).collect();
        let longest_run = references
            .iter()
            .filter_map(|r| record_texts.get(r["title"].as_str()?))
            .map(|record| longest_shared_run(&whole_body, record))
            .max()
            .unwrap_or(0);
        longest_runs.push(longest_run as f64);
        for (_, text) in &body {
            for sentence in sentences(text) {
                if !citation_numbers(&sentence).is_empty() {
                    citing_sentences += 1;
                    citing_in_own_voice +=
                        usize::from(OWN_VOICE.iter().any(|own| sentence.contains(own)));
                }
            }
        }
        let uncited: usize = body
            .iter()
            .map(|(_, t)| uncited_attributions(t, &attribution))
            .sum();
        attributions_uncited += uncited;
        papers_with_a_reference += usize::from(!references.is_empty());
        let markers: Vec<usize> = body.iter().flat_map(|(_, t)| citation_numbers(t)).collect();
        markers_total += markers.len();
        markers_valid += markers
            .iter()
            .filter(|&&n| n >= 1 && n <= references.len())
            .count();

        let report = read_json(&dir.join(format!("check-{i}.json")));
        let ratio = report.as_ref().and_then(|r| r["ratio_total"].as_f64());
        let paraphrase_share = report.as_ref().and_then(|r| {
            let total = r["total_chars"].as_f64()?;
            Some(r["paraphrase_chars"].as_f64()? * 100.0 / total.max(1.0))
        });
        ratios.extend(ratio);
        paraphrase_shares.extend(paraphrase_share);

        if let Some(encoder) = &encoder {
            let listed: Vec<Option<Vec<f32>>> = references
                .iter()
                .map(|r| {
                    let text = record_texts.get(r["title"].as_str()?)?;
                    section_vector(encoder, text)
                })
                .collect();
            for (_, text) in &body {
                for sentence in sentences(text) {
                    let cited = citation_numbers(&sentence);
                    if cited.is_empty() {
                        continue;
                    }
                    let v = encoder.embed(&sentence);
                    for n in cited {
                        let Some(Some(record)) = n.checked_sub(1).and_then(|k| listed.get(k))
                        else {
                            continue;
                        };
                        support_cited.push(f64::from(embed::cosine(&v, record)));
                        // The next listed record that is not cited here: same paper, same topic.
                        if let Some(Some(other)) = (1..listed.len())
                            .map(|d| (n - 1 + d) % listed.len())
                            .map(|k| &listed[k])
                            .next()
                        {
                            support_other.push(f64::from(embed::cosine(&v, other)));
                        }
                    }
                }
            }
            title_vectors.push(Some(encoder.embed(&title)));
            for (heading, text) in &body {
                if let Some(vector) = section_vector(encoder, text) {
                    sections.push(Section {
                        paper: i,
                        heading: bare_heading(heading).to_string(),
                        vector,
                    });
                }
            }
        } else {
            title_vectors.push(None);
        }
        rows.push(serde_json::json!({
            "field": asked["field"], "title": title, "words_asked": words, "chars": chars,
            "chapters": chapters.len(), "leaf_sections": budgets.len(), "budget_sum": budget_sum,
            "outline_valid": outline_valid, "references": references.len(), "references_valid": valid,
            "references_same_field": same_field,
            "citation_markers": markers.len(), "removed_citations": paper["removed_citations"],
            "weak_sections": paper["weak_sections"], "ratio_total": ratio,
            "uncited_attributions": uncited,
            "longest_run_from_a_listed_record": longest_run,
            "paraphrase_percent": paraphrase_share, "minutes": (minutes * 10.0).round() / 10.0,
            "model": paper["model"],
        }));
    }

    // Relevance: each section against its own heading and title, and against the heading and
    // title of the section at the same place in the next paper (a different topic).
    let relevance = encoder.as_ref().map(|encoder| {
        let headings: Vec<&str> = sections.iter().map(|s| s.heading.as_str()).collect();
        let heading_vectors = encoder.embed_batch(&headings);
        let (mut own_heading, mut own_title, mut other_heading, mut other_title) =
            (vec![], vec![], vec![], vec![]);
        for (k, s) in sections.iter().enumerate() {
            own_heading.push(f64::from(embed::cosine(&s.vector, &heading_vectors[k])));
            if let Some(Some(t)) = title_vectors.get(s.paper) {
                own_title.push(f64::from(embed::cosine(&s.vector, t)));
            }
            // The first section after this one that belongs to another paper.
            let other = (1..sections.len())
                .map(|d| (k + d) % sections.len())
                .find(|&j| sections[j].paper != s.paper);
            if let Some(j) = other {
                other_heading.push(f64::from(embed::cosine(&s.vector, &heading_vectors[j])));
                if let Some(Some(t)) = title_vectors.get(sections[j].paper) {
                    other_title.push(f64::from(embed::cosine(&s.vector, t)));
                }
            }
        }
        serde_json::json!({
            "sections": sections.len(),
            "to_own_heading": mean(&own_heading), "to_other_heading": mean(&other_heading),
            "to_own_title": mean(&own_title), "to_other_title": mean(&other_title),
        })
    });

    let share = |a: usize, b: usize| {
        if b == 0 {
            None
        } else {
            Some((a as f64 / b as f64 * 1000.0).round() / 1000.0)
        }
    };
    let max = |xs: &[f64]| {
        xs.iter()
            .cloned()
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    let summary = serde_json::json!({
        "titles": titles.len(), "papers": papers, "failed": failures,
        "outline_valid": share(outlines_valid, papers),
        "length_delivered_within_15_percent": share(delivered_within, papers),
        "length_ratio_mean": mean(&length_ratios),
        "references": refs_total, "references_valid": share(refs_valid, refs_total),
        "papers_with_a_reference": share(papers_with_a_reference, papers),
        "uncited_attributions_per_paper": if papers == 0 { None } else {
            Some((attributions_uncited as f64 / papers as f64 * 100.0).round() / 100.0)
        },
        "references_on_the_papers_field": share(refs_same_field, refs_with_field),
        "citation_markers": markers_total, "citation_markers_valid": share(markers_valid, markers_total),
        "relevance": relevance,
        "citation_support": {
            "citations": support_cited.len(),
            "to_cited_record": mean(&support_cited),
            "to_other_listed_record": mean(&support_other),
        },
        "ratio_total_mean": mean(&ratios), "ratio_total_max": max(&ratios),
        "citing_sentences": citing_sentences,
        "citing_sentences_in_own_voice": share(citing_in_own_voice, citing_sentences),
        "longest_run_from_a_listed_record_mean": mean(&longest_runs),
        "longest_run_from_a_listed_record_max": max(&longest_runs),
        "paraphrase_percent_mean": mean(&paraphrase_shares),
        "minutes_per_10000_chars": if chars_total == 0 { None } else {
            Some((minutes_total / chars_total as f64 * 10_000.0 * 10.0).round() / 10.0)
        },
        "papers_detail": rows,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&summary).expect("summary JSON")
    );
}

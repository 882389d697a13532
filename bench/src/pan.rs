//! PAN text-alignment measures (Potthast et al., "An Evaluation Framework for Plagiarism
//! Detection", 2010): character-level precision and recall, granularity, and
//! plagdet = F1 / log2(1 + granularity).

/// A plagiarism case or a detection: a character range of the suspicious document aligned with
/// a character range of a source document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub susp: (usize, usize),
    pub source: u64,
    pub src: (usize, usize),
}

#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Measures {
    pub precision: f64,
    pub recall: f64,
    pub granularity: f64,
    pub plagdet: f64,
    pub cases: usize,
    pub detections: usize,
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> Option<(usize, usize)> {
    let s = a.0.max(b.0);
    let e = a.1.min(b.1);
    (s < e).then_some((s, e))
}

fn detects(r: &Case, s: &Case) -> bool {
    r.source == s.source && overlap(r.susp, s.susp).is_some() && overlap(r.src, s.src).is_some()
}

fn union_len(mut ranges: Vec<(usize, usize)>) -> usize {
    ranges.sort_unstable();
    let mut total = 0;
    let mut current: Option<(usize, usize)> = None;
    for (s, e) in ranges {
        match current {
            Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                current = Some((s, e));
            }
            None => current = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = current {
        total += ce - cs;
    }
    total
}

/// |∪_{b ∈ others detecting a} (a ⊓ b)| / |a|, over the characters of both documents.
fn covered_share(a: &Case, others: &[Case], rel: impl Fn(&Case, &Case) -> bool) -> f64 {
    let mut susp = Vec::new();
    let mut src = Vec::new();
    for b in others.iter().filter(|b| rel(a, b)) {
        if let Some(o) = overlap(a.susp, b.susp) {
            susp.push(o);
        }
        if let Some(o) = overlap(a.src, b.src) {
            src.push(o);
        }
    }
    let len = (a.susp.1 - a.susp.0) + (a.src.1 - a.src.0);
    if len == 0 {
        0.0
    } else {
        (union_len(susp) + union_len(src)) as f64 / len as f64
    }
}

pub fn measure(cases: &[Case], detections: &[Case]) -> Measures {
    let recall = if cases.is_empty() {
        0.0
    } else {
        cases
            .iter()
            .map(|s| covered_share(s, detections, |s, r| detects(r, s)))
            .sum::<f64>()
            / cases.len() as f64
    };
    let precision = if detections.is_empty() {
        0.0
    } else {
        detections
            .iter()
            .map(|r| covered_share(r, cases, detects))
            .sum::<f64>()
            / detections.len() as f64
    };
    let detected: Vec<usize> = cases
        .iter()
        .map(|s| detections.iter().filter(|r| detects(r, s)).count())
        .filter(|&n| n > 0)
        .collect();
    let granularity = if detected.is_empty() {
        1.0
    } else {
        detected.iter().sum::<usize>() as f64 / detected.len() as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    Measures {
        precision,
        recall,
        granularity,
        plagdet: f1 / (1.0 + granularity).log2(),
        cases: cases.len(),
        detections: detections.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(a: usize, b: usize, src: u64, c: usize, d: usize) -> Case {
        Case {
            susp: (a, b),
            source: src,
            src: (c, d),
        }
    }

    #[test]
    fn perfect_detection_scores_one() {
        let s = vec![case(0, 100, 1, 50, 150)];
        let m = measure(&s, &s);
        assert_eq!(
            (m.precision, m.recall, m.granularity, m.plagdet),
            (1.0, 1.0, 1.0, 1.0)
        );
    }

    #[test]
    fn split_detection_pays_granularity() {
        let s = vec![case(0, 100, 1, 0, 100)];
        let r = vec![case(0, 50, 1, 0, 50), case(50, 100, 1, 50, 100)];
        let m = measure(&s, &r);
        assert_eq!((m.precision, m.recall, m.granularity), (1.0, 1.0, 2.0));
        assert!((m.plagdet - 1.0 / 3f64.log2()).abs() < 1e-12);
    }

    #[test]
    fn wrong_source_and_misses() {
        let s = vec![case(0, 100, 1, 0, 100), case(200, 300, 2, 0, 100)];
        let r = vec![case(0, 100, 9, 0, 100), case(200, 250, 2, 0, 50)];
        let m = measure(&s, &r);
        assert!((m.recall - 0.25).abs() < 1e-12);
        assert!((m.precision - 0.5).abs() < 1e-12);
        assert_eq!(m.granularity, 1.0);
    }
}

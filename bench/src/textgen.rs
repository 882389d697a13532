//! Deterministic pseudo-Chinese text for speed benchmarks, and the edits used to disguise
//! copied passages in accuracy benchmarks.

/// A small, fast, seedable generator (PCG-style LCG); benchmarks must be repeatable.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xbf58476d1ce4e5b9) ^ (x >> 32)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The 3,500 characters of the CJK Unified Ideographs block from U+4E00 on, skewed so that
/// low code points are common (like real text, where a few hundred characters dominate).
pub fn synthetic_text(rng: &mut Rng, chars: usize) -> String {
    let mut out = String::with_capacity(chars * 3 + chars / 10);
    let mut since_comma = 0;
    for _ in 0..chars {
        let u = rng.unit();
        let idx = (3500.0 * u * u * u) as u32;
        out.push(char::from_u32(0x4E00 + idx).unwrap_or('的'));
        since_comma += 1;
        if since_comma > 8 && rng.below(12) == 0 {
            out.push(if rng.below(3) == 0 { '。' } else { '，' });
            since_comma = 0;
        }
    }
    out
}

/// Light edits: about one substitution, insertion or deletion every `every` characters.
pub fn light_edit(rng: &mut Rng, text: &str, every: usize) -> String {
    let mut out: Vec<char> = Vec::with_capacity(text.len());
    for c in text.chars() {
        if c.is_alphanumeric() && rng.below(every) == 0 {
            match rng.below(3) {
                0 => out.push(char::from_u32(0x4E00 + rng.below(2000) as u32).unwrap_or(c)),
                1 => {
                    out.push(char::from_u32(0x4E00 + rng.below(2000) as u32).unwrap_or(c));
                    out.push(c);
                }
                _ => {}
            }
        } else {
            out.push(c);
        }
    }
    out.into_iter().collect()
}

/// Clause reordering: the passage's clauses (split at ，；。) rotated by one.
pub fn reorder_clauses(text: &str) -> String {
    let mut clauses: Vec<String> = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if matches!(c, '，' | '；' | '。' | ',' | ';') {
            clauses.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        clauses.push(current);
    }
    if clauses.len() > 1 {
        clauses.rotate_left(1);
    }
    clauses.concat()
}

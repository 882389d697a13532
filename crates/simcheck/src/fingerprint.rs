//! Character k-gram fingerprints with winnowing (Schleimer, Wilkerson and Aiken, 2003).
//!
//! Every k-gram of the normalised stream gets a 64-bit hash; in each window of `w` consecutive
//! hashes the minimum (the rightmost one on ties) is selected. Guarantee: any run of at least
//! `t = w + k - 1` stream characters shared by two texts yields at least one selected
//! fingerprint with the same hash in both, positioned inside the run. The library stores only the
//! selected fingerprints; a query looks up all of its k-grams, so every library fingerprint
//! inside a shared run is found.

/// k-gram length and winnowing window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FingerprintParams {
    pub k: usize,
    pub w: usize,
}

impl Default for FingerprintParams {
    /// k = 5, w = 9: guarantee threshold 13, the length of CNKI's "13 consecutive characters".
    fn default() -> Self {
        FingerprintParams { k: 5, w: 9 }
    }
}

impl FingerprintParams {
    /// Shared runs at least this long are always found.
    pub fn guarantee_threshold(&self) -> usize {
        self.w + self.k - 1
    }
}

/// A selected k-gram: its hash and the stream position where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    pub hash: u64,
    pub pos: u32,
}

fn mix(mut x: u64) -> u64 {
    // splitmix64 finaliser: spreads the polynomial hash over all 64 bits.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

const BASE: u64 = 0x0000_0100_0000_01b3;

/// Hashes of every k-gram of `chars` (position i covers `chars[i..i+k]`).
pub fn kgram_hashes(chars: &[char], k: usize) -> Vec<u64> {
    if k == 0 || chars.len() < k {
        return Vec::new();
    }
    // Rolling polynomial hash modulo 2^64.
    let mut top = 1u64;
    for _ in 1..k {
        top = top.wrapping_mul(BASE);
    }
    let mut out = Vec::with_capacity(chars.len() - k + 1);
    let mut h = 0u64;
    for &c in &chars[..k] {
        h = h.wrapping_mul(BASE).wrapping_add(c as u64 + 1);
    }
    out.push(mix(h));
    for i in k..chars.len() {
        h = h
            .wrapping_sub((chars[i - k] as u64 + 1).wrapping_mul(top))
            .wrapping_mul(BASE)
            .wrapping_add(chars[i] as u64 + 1);
        out.push(mix(h));
    }
    out
}

/// Winnows k-gram hashes: the rightmost minimum of every window of `w`, each selected once.
pub fn winnow(hashes: &[u64], w: usize) -> Vec<Fingerprint> {
    let mut out = Vec::with_capacity(hashes.len() * 2 / (w + 1) + 1);
    if hashes.is_empty() || w == 0 {
        return out;
    }
    if hashes.len() <= w {
        // One (partial) window: still select its minimum so short texts get a fingerprint.
        let (pos, &hash) = hashes
            .iter()
            .enumerate()
            .rev()
            .min_by_key(|(_, h)| **h)
            .expect("non-empty");
        out.push(Fingerprint {
            hash,
            pos: pos as u32,
        });
        return out;
    }
    // Monotonic deque of candidate positions, increasing hash from front to back.
    let mut deque: std::collections::VecDeque<usize> = std::collections::VecDeque::with_capacity(w);
    let mut last_selected = usize::MAX;
    for i in 0..hashes.len() {
        while let Some(&back) = deque.back() {
            // `>=` keeps the rightmost of equal minima.
            if hashes[back] >= hashes[i] {
                deque.pop_back();
            } else {
                break;
            }
        }
        deque.push_back(i);
        if i + 1 >= w {
            let window_start = i + 1 - w;
            while let Some(&front) = deque.front() {
                if front < window_start {
                    deque.pop_front();
                } else {
                    break;
                }
            }
            let min = *deque.front().expect("window is non-empty");
            if min != last_selected {
                out.push(Fingerprint {
                    hash: hashes[min],
                    pos: min as u32,
                });
                last_selected = min;
            }
        }
    }
    out
}

/// The winnowed fingerprints of a normalised stream.
pub fn fingerprints(chars: &[char], params: FingerprintParams) -> Vec<Fingerprint> {
    winnow(&kgram_hashes(chars, params.k), params.w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute_force_winnow(hashes: &[u64], w: usize) -> Vec<Fingerprint> {
        let mut out: Vec<Fingerprint> = Vec::new();
        for start in 0..=hashes.len().saturating_sub(w) {
            let window = &hashes[start..(start + w).min(hashes.len())];
            let (off, &hash) = window
                .iter()
                .enumerate()
                .rev()
                .min_by_key(|(_, h)| **h)
                .unwrap();
            let pos = (start + off) as u32;
            if out.last().map(|f| f.pos) != Some(pos) {
                out.push(Fingerprint { hash, pos });
            }
        }
        out
    }

    #[test]
    fn rolling_hash_equals_direct_hash() {
        let chars: Vec<char> = "知网查重的十三字规则与窗口".chars().collect();
        let rolled = kgram_hashes(&chars, 5);
        for (i, h) in rolled.iter().enumerate() {
            assert_eq!(*h, kgram_hashes(&chars[i..i + 5], 5)[0]);
        }
    }

    #[test]
    fn density_is_about_two_over_w_plus_one() {
        let chars: Vec<char> = (0..20_000u32)
            .map(|i| char::from_u32(0x4e00 + (i * 7919) % 3000).unwrap())
            .collect();
        let fp = fingerprints(&chars, FingerprintParams::default());
        let density = fp.len() as f64 / chars.len() as f64;
        assert!((0.15..0.25).contains(&density), "density {density}");
    }

    fn cjk_text(max: usize) -> impl Strategy<Value = Vec<char>> {
        // A small alphabet makes repeated k-grams and ties likely, the hard case for winnowing.
        proptest::collection::vec(
            prop_oneof![
                Just('研'),
                Just('究'),
                Just('论'),
                Just('文'),
                Just('的'),
                Just('方'),
                Just('法'),
                Just('a')
            ],
            0..max,
        )
    }

    proptest! {
        #[test]
        fn deque_winnowing_matches_brute_force(chars in cjk_text(200), w in 1usize..12) {
            let hashes = kgram_hashes(&chars, 3);
            if hashes.len() > w {
                prop_assert_eq!(winnow(&hashes, w), brute_force_winnow(&hashes, w));
            }
        }

        /// The winnowing guarantee: a shared run of at least t = w + k - 1 characters leaves
        /// a fingerprint with the same hash inside the run on both sides.
        #[test]
        fn shared_run_of_threshold_length_is_always_found(
            left_a in cjk_text(60), right_a in cjk_text(60),
            left_b in cjk_text(60), right_b in cjk_text(60),
            shared in proptest::collection::vec(any::<char>().prop_filter("alnum", |c| c.is_alphanumeric()), 13..40),
        ) {
            let params = FingerprintParams::default();
            prop_assert!(shared.len() >= params.guarantee_threshold());
            let a: Vec<char> = left_a.iter().chain(&shared).chain(&right_a).copied().collect();
            let b: Vec<char> = left_b.iter().chain(&shared).chain(&right_b).copied().collect();
            let inside = |fp: &Fingerprint, left: usize| {
                let p = fp.pos as usize;
                p >= left && p + params.k <= left + shared.len()
            };
            let fa: Vec<u64> = fingerprints(&a, params).iter().filter(|f| inside(f, left_a.len())).map(|f| f.hash).collect();
            let fb: Vec<u64> = fingerprints(&b, params).iter().filter(|f| inside(f, left_b.len())).map(|f| f.hash).collect();
            prop_assert!(fa.iter().any(|h| fb.contains(h)), "no common fingerprint inside the shared run");
        }
    }
}

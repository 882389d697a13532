//! Normalisation that keeps offsets. The fingerprint stream holds only letters and digits
//! (CJK ideographs count as letters): full-width forms become half-width, traditional characters
//! become simplified, letters are lower-cased, and whitespace and punctuation are dropped, so
//! punctuation never breaks a match. Every stream character remembers its offset in the original.

/// Whether a character is counted in character totals (the rule shown to users before payment):
/// every character except whitespace.
pub fn is_counted(c: char) -> bool {
    !c.is_whitespace()
}

/// Counted characters of a text.
pub fn count_chars(text: &str) -> usize {
    text.chars().filter(|c| is_counted(*c)).count()
}

/// The normalised character stream of a text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Normalized {
    /// Normalised letters and digits.
    pub chars: Vec<char>,
    /// For each entry of `chars`, its offset (in characters) in the original text.
    pub offsets: Vec<u32>,
}

impl Normalized {
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The original character range `[start, end)` covered by stream positions `[from, to)`.
    pub fn original_range(&self, from: usize, to: usize) -> (usize, usize) {
        debug_assert!(from < to && to <= self.offsets.len());
        (
            self.offsets[from] as usize,
            self.offsets[to - 1] as usize + 1,
        )
    }
}

/// Full-width ASCII forms (U+FF01–U+FF5E) to their ASCII counterparts.
fn to_half_width(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    }
}

/// Normalises one character, or `None` when it is not part of the stream.
fn normalize_char(c: char) -> Option<char> {
    let c = to_half_width(c);
    if !c.is_alphanumeric() {
        return None;
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => Some(l),
        // Letters whose lower case is several characters (rare) stay as they are.
        _ => Some(c),
    }
}

pub fn normalize(text: &str) -> Normalized {
    // fast2s maps character for character (with a little context), so positions line up.
    let simplified = fast2s::convert(text);
    let mut out = Normalized {
        chars: Vec::with_capacity(text.len() / 3),
        offsets: Vec::with_capacity(text.len() / 3),
    };
    let originals = text.chars();
    let converted = simplified.chars();
    let aligned = originals.clone().count() == converted.clone().count();
    if aligned {
        for (i, c) in converted.enumerate() {
            if let Some(n) = normalize_char(c) {
                out.chars.push(n);
                out.offsets.push(i as u32);
            }
        }
    } else {
        // Never expected; fall back to no conversion rather than misplace offsets.
        for (i, c) in originals.enumerate() {
            if let Some(n) = normalize_char(c) {
                out.chars.push(n);
                out.offsets.push(i as u32);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn drops_punctuation_and_space_and_keeps_offsets() {
        let n = normalize("研究， 方法。AB");
        assert_eq!(n.chars.iter().collect::<String>(), "研究方法ab");
        assert_eq!(n.offsets, vec![0, 1, 4, 5, 7, 8]);
        assert_eq!(n.original_range(1, 3), (1, 5));
    }

    #[test]
    fn full_width_and_traditional() {
        let n = normalize("ＡＢＣ１２３計畫與發展");
        assert_eq!(n.chars.iter().collect::<String>(), "abc123计划与发展");
    }

    #[test]
    fn counting_rule() {
        assert_eq!(count_chars("论文 查重，\n好"), 6);
    }

    proptest! {
        #[test]
        fn offsets_point_at_the_source_character(text in "\\PC{0,200}") {
            let n = normalize(&text);
            let chars: Vec<char> = text.chars().collect();
            prop_assert_eq!(n.chars.len(), n.offsets.len());
            for w in n.offsets.windows(2) {
                prop_assert!(w[0] < w[1]);
            }
            for &o in &n.offsets {
                prop_assert!((o as usize) < chars.len());
                prop_assert!(chars[o as usize].is_alphanumeric() || to_half_width(chars[o as usize]).is_alphanumeric());
            }
        }
    }
}

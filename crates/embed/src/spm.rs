//! A SentencePiece unigram tokenizer for the USE-multilingual v3 model, in plain Rust: the
//! `nmt_nfkc` normaliser (a darts-clone double-array trie over UTF-8 bytes with a replacement
//! table, as stored in the model's precompiled charsmap), whitespace handling (a dummy prefix,
//! whitespace escaped as U+2581, extra whitespace removed) and Viterbi segmentation over the
//! piece scores. The model file keeps the legacy layout: pieces in field 1 of the ModelProto,
//! the trainer spec (carrying the charsmap in its field 2) in field 3.

use crate::{EmbedError, Result};
use std::collections::HashMap;

const UNK: u32 = 0;
const BOS: u32 = 1;
const EOS: u32 = 2;
const SPACE: &str = "\u{2581}";

fn bad(msg: &str) -> EmbedError {
    EmbedError::Format(format!("sp.model: {msg}"))
}

fn varint(data: &[u8], pos: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos).ok_or_else(|| bad("truncated varint"))?;
        *pos += 1;
        value |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(bad("varint too long"))
}

/// The length-delimited and 32-bit fields of one protobuf message: field number → byte ranges.
fn fields(data: &[u8]) -> Result<HashMap<u64, Vec<std::ops::Range<usize>>>> {
    let mut out: HashMap<u64, Vec<std::ops::Range<usize>>> = HashMap::new();
    let mut pos = 0;
    while pos < data.len() {
        let tag = varint(data, &mut pos)?;
        let (field, wire) = (tag >> 3, tag & 7);
        let len = match wire {
            0 => {
                varint(data, &mut pos)?;
                continue;
            }
            1 => 8,
            2 => varint(data, &mut pos)? as usize,
            5 => 4,
            _ => return Err(bad("unknown wire type")),
        };
        let end = pos
            .checked_add(len)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| bad("field past the end"))?;
        if wire == 2 || wire == 5 {
            out.entry(field).or_default().push(pos..end);
        }
        pos = end;
    }
    Ok(out)
}

struct Normalizer {
    units: Vec<u32>,
    replacements: Vec<u8>,
}

fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
}

/// Bytes of the UTF-8 character starting `data[pos]`, or 1 for a malformed one.
fn utf8_len(data: &[u8], pos: usize) -> usize {
    let first = data[pos];
    let len = match first {
        0x00..=0x7F => 1,
        _ if first >> 5 == 0b110 => 2,
        _ if first >> 4 == 0b1110 => 3,
        _ if first >> 3 == 0b11110 => 4,
        _ => 1,
    };
    let valid = (1..len).all(|k| data.get(pos + k).is_some_and(|b| b & 0xC0 == 0x80));
    if valid { len } else { 1 }
}

impl Normalizer {
    fn new(charsmap: Option<&[u8]>) -> Result<Self> {
        let Some(map) = charsmap.filter(|m| m.len() >= 4) else {
            return Ok(Normalizer {
                units: vec![],
                replacements: vec![],
            });
        };
        let trie_size = u32::from_le_bytes([map[0], map[1], map[2], map[3]]) as usize;
        let trie = map
            .get(4..4 + trie_size)
            .ok_or_else(|| bad("charsmap trie past the end"))?;
        Ok(Normalizer {
            units: trie
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            replacements: map[4 + trie_size..].to_vec(),
        })
    }

    /// The normalised form of the longest charsmap key at `data[pos..]` and the bytes it used;
    /// without a key, the character itself.
    fn prefix<'a>(&'a self, data: &'a [u8], pos: usize) -> (&'a [u8], usize) {
        let mut best: Option<(usize, usize)> = None;
        if let Some(&root) = self.units.first() {
            let mut node = offset(root);
            for (i, &c) in data[pos..].iter().enumerate() {
                node ^= c as usize;
                let Some(&unit) = self.units.get(node) else {
                    break;
                };
                if unit & 0x8000_00FF != c as u32 {
                    break;
                }
                node ^= offset(unit);
                if unit & 0x100 != 0 {
                    let Some(&leaf) = self.units.get(node) else {
                        break;
                    };
                    best = Some((i + 1, (leaf & 0x7FFF_FFFF) as usize));
                }
            }
        }
        match best {
            Some((len, value)) if value < self.replacements.len() => {
                let end = self.replacements[value..]
                    .iter()
                    .position(|&b| b == 0)
                    .map_or(self.replacements.len(), |e| value + e);
                (&self.replacements[value..end], len)
            }
            _ => {
                let len = utf8_len(data, pos);
                (&data[pos..pos + len], len)
            }
        }
    }

    fn normalize(&self, text: &str) -> String {
        let raw = text.as_bytes();
        let mut pos = 0;
        // Leading whitespace goes.
        while pos < raw.len() {
            let (piece, used) = self.prefix(raw, pos);
            if piece != b" " {
                break;
            }
            pos += used;
        }
        if pos >= raw.len() {
            return String::new();
        }
        let mut out: Vec<u8> = SPACE.as_bytes().to_vec();
        let mut previous_space = true;
        while pos < raw.len() {
            let (mut piece, used) = self.prefix(raw, pos);
            pos += used;
            if previous_space {
                while let [b' ', rest @ ..] = piece {
                    piece = rest;
                }
            }
            if piece.is_empty() {
                continue;
            }
            for &b in piece {
                if b == b' ' {
                    out.extend_from_slice(SPACE.as_bytes());
                } else {
                    out.push(b);
                }
            }
            previous_space = piece.last() == Some(&b' ');
        }
        while out.ends_with(SPACE.as_bytes()) {
            out.truncate(out.len() - SPACE.len());
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

pub struct Tokenizer {
    normalizer: Normalizer,
    scores: Vec<f32>,
    /// Every piece (value: id + 1) and every proper prefix of one (value: 0).
    prefixes: HashMap<String, u32>,
    max_chars: usize,
    unk_score: f32,
}

impl Tokenizer {
    pub fn from_bytes(data: &[u8]) -> Result<Self> {
        let top = fields(data)?;
        let mut pieces = Vec::new();
        let mut scores = Vec::new();
        for range in top.get(&1).into_iter().flatten() {
            let msg = &data[range.clone()];
            let f = fields(msg)?;
            let Some(text) = f.get(&1).and_then(|v| v.first()) else {
                continue;
            };
            let piece =
                std::str::from_utf8(&msg[text.clone()]).map_err(|_| bad("piece is not UTF-8"))?;
            let score = f.get(&2).and_then(|v| v.first()).map_or(0.0, |r| {
                let b = &msg[r.clone()];
                f32::from_le_bytes([b[0], b[1], b[2], b[3]])
            });
            pieces.push(piece.to_string());
            scores.push(score);
        }
        if pieces.len() < 3 {
            return Err(bad("no vocabulary"));
        }
        let charsmap = top
            .get(&3)
            .and_then(|v| v.first())
            .map(|r| {
                fields(&data[r.clone()]).map(|f| {
                    f.get(&2)
                        .and_then(|v| v.first())
                        .map(|c| r.start + c.start..r.start + c.end)
                })
            })
            .transpose()?
            .flatten();
        let normalizer = Normalizer::new(charsmap.map(|r| &data[r]))?;
        let mut prefixes = HashMap::with_capacity(pieces.len() * 3);
        let mut max_chars = 1;
        for (id, piece) in pieces.iter().enumerate() {
            let boundaries: Vec<usize> = piece.char_indices().map(|(i, _)| i).skip(1).collect();
            max_chars = max_chars.max(boundaries.len() + 1);
            for &b in &boundaries {
                prefixes.entry(piece[..b].to_string()).or_insert(0);
            }
            prefixes.insert(piece.clone(), id as u32 + 1);
        }
        let unk_score = scores.iter().copied().fold(f32::INFINITY, f32::min) - 10.0;
        Ok(Tokenizer {
            normalizer,
            scores,
            prefixes,
            max_chars,
            unk_score,
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.scores.len()
    }

    /// Piece ids with the begin and end markers, as the encoder expects.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalizer.normalize(text);
        let mut ids = vec![BOS];
        if normalized.is_empty() {
            ids.push(UNK);
        } else {
            ids.extend(self.viterbi(&normalized));
        }
        ids.push(EOS);
        ids
    }

    /// Best-scoring segmentation; a position no piece starts with becomes one unknown character.
    fn viterbi(&self, s: &str) -> Vec<u32> {
        let bounds: Vec<usize> = s
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(s.len()))
            .collect();
        let n = bounds.len() - 1;
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        best[0] = 0.0;
        let mut from = vec![0usize; n + 1];
        let mut piece = vec![UNK; n + 1];
        for i in 0..n {
            let base = best[i];
            let mut single = false;
            for j in i + 1..=(i + self.max_chars).min(n) {
                let Some(&v) = self.prefixes.get(&s[bounds[i]..bounds[j]]) else {
                    break;
                };
                if v == 0 {
                    continue;
                }
                let score = base + self.scores[v as usize - 1];
                if score > best[j] {
                    best[j] = score;
                    from[j] = i;
                    piece[j] = v - 1;
                }
                single |= j == i + 1;
            }
            if !single && base + self.unk_score > best[i + 1] {
                best[i + 1] = base + self.unk_score;
                from[i + 1] = i;
                piece[i + 1] = UNK;
            }
        }
        let mut ids = Vec::new();
        let mut p = n;
        while p > 0 {
            ids.push(piece[p]);
            p = from[p];
        }
        ids.reverse();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn random_model_bytes_are_refused_not_panicked_on(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = Tokenizer::from_bytes(&bytes);
        }
    }
}

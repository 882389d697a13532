//! The USE-multilingual v3 network: quantised piece embeddings, a projection with layer norm,
//! three residual CNN branches over 2-, 3- and 5-token windows, layer norm, a length-normalised
//! sum over tokens, and a small feed-forward head with tanh; the output is L2-normalised.

use crate::npz::{Array, Data, read_npz};
use crate::spm::Tokenizer;
use crate::{EmbedError, Result};
use std::collections::HashMap;
use std::path::Path;

const CHUNKS: usize = 17;
const EMB: usize = 512;
const CNN: usize = 256;
const FEAT: usize = EMB + 3 * CNN;
/// (window length, tokens of left context) of the three CNN branches.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
pub const DIM: usize = 512;

struct Dense {
    w: Vec<f32>,
    rows: usize,
    cols: usize,
}

pub struct UseEncoder {
    tokenizer: Tokenizer,
    /// Rows of piece id `r * 17 + c` live in `table[c][r]`: uint8, dequantised per chunk.
    table: Vec<Vec<u8>>,
    scale: Vec<f32>,
    lo: Vec<f32>,
    proj: Dense,
    proj_b: Vec<f32>,
    ln1_g: Vec<f32>,
    ln1_b: Vec<f32>,
    /// The first CNN layer of each branch with its window offsets side by side
    /// (256 × width·256): one product per distinct token gives its term for every offset.
    w1_by_offset: Vec<Dense>,
    b1: Vec<Vec<f32>>,
    w2: Vec<Dense>,
    b2: Vec<Vec<f32>>,
    ln_g: Vec<f32>,
    ln_b: Vec<f32>,
    cnn_w: Dense,
    cnn_b: Vec<f32>,
    d0: Dense,
    d1: Dense,
    d2: Dense,
    d3: Dense,
    p1: Dense,
    p3: Dense,
    eps: f32,
}

fn take(arrays: &mut HashMap<String, Array>, name: &str) -> Result<Array> {
    arrays
        .remove(name)
        .ok_or_else(|| EmbedError::Format(format!("weights.npz: no {name}")))
}

fn floats(arrays: &mut HashMap<String, Array>, name: &str, len: usize) -> Result<Vec<f32>> {
    match take(arrays, name)?.data {
        Data::F32(v) if v.len() == len => Ok(v),
        _ => Err(EmbedError::Format(format!(
            "weights.npz: {name} is not {len} float32 values"
        ))),
    }
}

fn dense(
    arrays: &mut HashMap<String, Array>,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<Dense> {
    if arrays.get(name).is_some_and(|a| a.shape != [rows, cols]) {
        return Err(EmbedError::Format(format!(
            "weights.npz: {name} is not {rows} × {cols}"
        )));
    }
    Ok(Dense {
        w: floats(arrays, name, rows * cols)?,
        rows,
        cols,
    })
}

/// `out (m × d.cols) = a (m × d.rows) · d.w`, overwriting `out` when `beta` is 0, adding when 1.
fn matmul(a: &[f32], m: usize, d: &Dense, out: &mut [f32], beta: f32) {
    debug_assert_eq!(a.len(), m * d.rows);
    debug_assert_eq!(out.len(), m * d.cols);
    // SAFETY: the slices hold exactly m × k, k × n and m × n row-major values (asserted above
    // in debug builds and guaranteed by every caller), matching the strides passed.
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            m,
            d.rows,
            d.cols,
            1.0,
            a.as_ptr(),
            d.rows as isize,
            1,
            d.w.as_ptr(),
            d.cols as isize,
            1,
            beta,
            out.as_mut_ptr(),
            d.cols as isize,
            1,
        );
    }
}

/// A `width·256 × 256` window weight as `256 × width·256`: block `j` of its rows becomes block
/// `j` of the columns, so `x · result` holds `x · (block j)` for every window offset `j`.
fn by_offset(w: &Dense, width: usize) -> Dense {
    let mut out = vec![0f32; w.rows * w.cols];
    let cols = width * w.cols;
    for j in 0..width {
        for c in 0..CNN {
            let src = (j * CNN + c) * w.cols;
            out[c * cols + j * w.cols..c * cols + (j + 1) * w.cols]
                .copy_from_slice(&w.w[src..src + w.cols]);
        }
    }
    Dense {
        w: out,
        rows: CNN,
        cols,
    }
}

fn layer_norm(row: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = row.len() as f32;
    let mean = row.iter().sum::<f32>() / n;
    row.iter_mut().for_each(|x| *x -= mean);
    let var = row.iter().map(|x| x * x).sum::<f32>() / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, g), b) in row.iter_mut().zip(gamma).zip(beta) {
        *x = *x * inv * g + b;
    }
}

fn relu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
}

impl UseEncoder {
    /// Loads `sp.model` and `weights.npz` from `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let tokenizer = Tokenizer::from_bytes(&std::fs::read(dir.join("sp.model"))?)?;
        let mut a = read_npz(&std::fs::read(dir.join("weights.npz"))?)?;
        let mut table = Vec::with_capacity(CHUNKS);
        for c in 0..CHUNKS {
            match take(&mut a, &format!("q{}", c + 1))?.data {
                Data::U8(v) if v.len() % EMB == 0 => table.push(v),
                _ => {
                    return Err(EmbedError::Format(format!(
                        "weights.npz: q{} is not a uint8 table",
                        c + 1
                    )));
                }
            }
        }
        let cat = |a: &mut HashMap<String, Array>, prefix: &str| -> Result<Vec<f32>> {
            let mut out = Vec::with_capacity(3 * CNN);
            for n in [2, 3, 5] {
                out.extend(floats(a, &format!("{prefix}{n}"), CNN)?);
            }
            Ok(out)
        };
        // The three 512 × 256 projections side by side: one 512 × 768 matrix.
        let mut proj = vec![0f32; EMB * 3 * CNN];
        for (k, n) in [2, 3, 5].into_iter().enumerate() {
            let p = floats(&mut a, &format!("proj{n}"), EMB * CNN)?;
            for r in 0..EMB {
                proj[r * 3 * CNN + k * CNN..r * 3 * CNN + (k + 1) * CNN]
                    .copy_from_slice(&p[r * CNN..(r + 1) * CNN]);
            }
        }
        let eps = match take(&mut a, "eps")?.data {
            Data::F64(v) if v.len() == 1 => v[0] as f32,
            Data::F32(v) if v.len() == 1 => v[0],
            _ => return Err(EmbedError::Format("weights.npz: eps".into())),
        };
        let mut w1_by_offset = Vec::new();
        let mut b1 = Vec::new();
        let mut w2 = Vec::new();
        let mut b2 = Vec::new();
        for (n, _) in ORDERS {
            w1_by_offset.push(by_offset(
                &dense(&mut a, &format!("w1_{n}"), n * CNN, CNN)?,
                n,
            ));
            b1.push(floats(&mut a, &format!("b1_{n}"), CNN)?);
            w2.push(dense(&mut a, &format!("w2_{n}"), n * CNN, CNN)?);
            b2.push(floats(&mut a, &format!("b2_{n}"), CNN)?);
        }
        Ok(UseEncoder {
            tokenizer,
            table,
            scale: floats(&mut a, "scale", CHUNKS)?,
            lo: floats(&mut a, "lo", CHUNKS)?,
            proj: Dense {
                w: proj,
                rows: EMB,
                cols: 3 * CNN,
            },
            proj_b: cat(&mut a, "proj_b")?,
            ln1_g: cat(&mut a, "ln_g")?,
            ln1_b: cat(&mut a, "ln_b")?,
            w1_by_offset,
            b1,
            w2,
            b2,
            ln_g: floats(&mut a, "ln_g", FEAT)?,
            ln_b: floats(&mut a, "ln_b", FEAT)?,
            cnn_w: dense(&mut a, "cnn_W", FEAT, DIM)?,
            cnn_b: floats(&mut a, "cnn_b", DIM)?,
            d0: dense(&mut a, "d0", DIM, 320)?,
            d1: dense(&mut a, "d1", 320, 320)?,
            d2: dense(&mut a, "d2", 320, DIM)?,
            d3: dense(&mut a, "d3", DIM, DIM)?,
            p1: dense(&mut a, "p1", DIM, 320)?,
            p3: dense(&mut a, "p3", 320, DIM)?,
            eps,
        })
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    fn embedding_row(&self, id: u32, out: &mut [f32]) {
        let (chunk, row) = (id as usize % CHUNKS, id as usize / CHUNKS);
        let table = &self.table[chunk];
        let start = (row * EMB).min(table.len().saturating_sub(EMB));
        for (o, &q) in out.iter_mut().zip(&table[start..start + EMB]) {
            *o = q as f32 * self.scale[chunk] + self.lo[chunk];
        }
    }

    /// The embeddings of many sentences at once, equal to `embed` of each: their token rows
    /// are stacked so every weight matrix is read once per batch instead of once per sentence
    /// (the dense head turns from matrix–vector into matrix–matrix products).
    pub fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let all: Vec<Vec<u32>> = texts.iter().map(|t| self.tokenizer.encode(t)).collect();
        // A text with no tokens has no meaning to compare: the zero vector (cosine 0 with all).
        if all.iter().any(Vec::is_empty) {
            let mut out = vec![vec![0.0; DIM]; texts.len()];
            let kept: Vec<usize> = (0..texts.len()).filter(|&i| !all[i].is_empty()).collect();
            let embedded = self.embed_batch(&kept.iter().map(|&i| texts[i]).collect::<Vec<_>>());
            for (i, v) in kept.into_iter().zip(embedded) {
                out[i] = v;
            }
            return out;
        }
        let ids = all;
        let n = texts.len();
        if n == 0 {
            return Vec::new();
        }
        let starts: Vec<usize> = ids
            .iter()
            .scan(0, |acc, v| {
                let s = *acc;
                *acc += v.len();
                Some(s)
            })
            .collect();
        let total: usize = ids.iter().map(Vec::len).sum();
        // (sentence start, sentence length) of every stacked row.
        let mut row_of = Vec::with_capacity(total);
        for (s, v) in ids.iter().enumerate() {
            for i in 0..v.len() {
                row_of.push((starts[s], v.len(), i));
            }
        }
        // Everything up to the first CNN layer depends on the token alone: it is computed once
        // per distinct token of the batch (academic text repeats its tokens a lot).
        let mut distinct: Vec<u32> = ids.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let slot: Vec<usize> = ids
            .iter()
            .flatten()
            .map(|id| distinct.binary_search(id).unwrap_or(0))
            .collect();
        let u = distinct.len();
        let mut emb = vec![0f32; u * EMB];
        for (row, &id) in emb.chunks_exact_mut(EMB).zip(&distinct) {
            self.embedding_row(id, row);
        }
        let mut x = vec![0f32; u * 3 * CNN];
        matmul(&emb, u, &self.proj, &mut x, 0.0);
        for row in x.chunks_exact_mut(3 * CNN) {
            row.iter_mut().zip(&self.proj_b).for_each(|(v, b)| *v += b);
            layer_norm(row, &self.ln1_g, &self.ln1_b, self.eps);
        }
        let mut feats = vec![0f32; total * FEAT];
        for (r, &t) in slot.iter().enumerate() {
            feats[r * FEAT..r * FEAT + EMB].copy_from_slice(&emb[t * EMB..(t + 1) * EMB]);
        }
        for (k, &(width, left)) in ORDERS.iter().enumerate() {
            let xs: Vec<f32> = x
                .chunks_exact(3 * CNN)
                .flat_map(|r| r[k * CNN..(k + 1) * CNN].iter().copied())
                .collect();
            // Each distinct token's term for every window offset.
            let mut terms = vec![0f32; u * width * CNN];
            matmul(&xs, u, &self.w1_by_offset[k], &mut terms, 0.0);
            let mut h = vec![0f32; total * CNN];
            for (r, (row, &(start, len, i))) in h.chunks_exact_mut(CNN).zip(&row_of).enumerate() {
                row.copy_from_slice(&self.b1[k]);
                // Windows never cross from one sentence into the next.
                for j in 0..width {
                    let p = i as isize - left as isize + j as isize;
                    if (0..len as isize).contains(&p) {
                        let t = slot[start + p as usize];
                        let term = &terms[(t * width + j) * CNN..(t * width + j + 1) * CNN];
                        row.iter_mut().zip(term).for_each(|(v, w)| *v += w);
                    }
                }
                relu(row);
                let own = &xs[slot[r] * CNN..(slot[r] + 1) * CNN];
                row.iter_mut().zip(own).for_each(|(v, x)| *v += x);
            }
            let mut windows = vec![0f32; total * width * CNN];
            for (r, &(start, len, i)) in row_of.iter().enumerate() {
                for j in 0..width {
                    let p = i as isize - left as isize + j as isize;
                    if (0..len as isize).contains(&p) {
                        let p = start + p as usize;
                        windows[(r * width + j) * CNN..(r * width + j + 1) * CNN]
                            .copy_from_slice(&h[p * CNN..(p + 1) * CNN]);
                    }
                }
            }
            let mut c2 = vec![0f32; total * CNN];
            matmul(&windows, total, &self.w2[k], &mut c2, 0.0);
            for (i, row) in c2.chunks_exact_mut(CNN).enumerate() {
                row.iter_mut().zip(&self.b2[k]).for_each(|(v, b)| *v += b);
                relu(row);
                row.iter_mut()
                    .zip(&h[i * CNN..(i + 1) * CNN])
                    .for_each(|(v, r)| *v += r);
                let off = i * FEAT + EMB + k * CNN;
                feats[off..off + CNN].copy_from_slice(row);
            }
        }
        let mut summed = vec![0f32; n * FEAT];
        for (r, row) in feats.chunks_exact_mut(FEAT).enumerate() {
            layer_norm(row, &self.ln_g, &self.ln_b, self.eps);
            let s = starts.partition_point(|&st| st <= r) - 1;
            summed[s * FEAT..(s + 1) * FEAT]
                .iter_mut()
                .zip(row.iter())
                .for_each(|(a, v)| *a += v);
        }
        let mut mean = vec![0f32; n * DIM];
        matmul(&summed, n, &self.cnn_w, &mut mean, 0.0);
        for (row, v) in mean.chunks_exact_mut(DIM).zip(&ids) {
            let len = v.len() as f32;
            for (m, b) in row.iter_mut().zip(&self.cnn_b) {
                *m = (*m + len * b) / len.sqrt();
            }
        }
        let mut y0 = vec![0f32; n * 320];
        matmul(&mean, n, &self.d0, &mut y0, 0.0);
        relu(&mut y0);
        let mut y1 = vec![0f32; n * 320];
        matmul(&mean, n, &self.p1, &mut y1, 0.0);
        matmul(&y0, n, &self.d1, &mut y1, 1.0);
        relu(&mut y1);
        let mut y2 = vec![0f32; n * DIM];
        matmul(&y1, n, &self.d2, &mut y2, 0.0);
        relu(&mut y2);
        let mut z = vec![0f32; n * DIM];
        matmul(&y1, n, &self.p3, &mut z, 0.0);
        matmul(&y2, n, &self.d3, &mut z, 1.0);
        z.chunks_exact(DIM)
            .map(|row| {
                let mut v: Vec<f32> = row.iter().map(|x| x.tanh()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().max(self.eps).sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    /// The L2-normalised embedding of one sentence.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_batch(&[text])
            .pop()
            .unwrap_or_else(|| vec![0.0; DIM])
    }

    /// The cosine similarity of two sentences' embeddings.
    pub fn cosine(&self, a: &str, b: &str) -> f32 {
        crate::cosine(&self.embed(a), &self.embed(b))
    }
}

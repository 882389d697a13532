//! A linear projection of sentence vectors onto the few directions that carry most of their
//! energy: the leading eigenvectors of the library sentences' second-moment matrix (principal
//! axes without centring, which best keep inner products and so cosines). A large library's
//! sentence index stores and compares the projected vectors: a quarter of the numbers per
//! vector, so a search touches a quarter of the memory. Projected cosines are close to, not
//! equal to, the encoder's; the check confirms a candidate with the encoder's own vectors.

use nalgebra::{DMatrix, SymmetricEigen};

const MAGIC: &[u8; 8] = b"WJPROJ01";

#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    from: usize,
    to: usize,
    /// `to` rows of `from` numbers, strongest direction first.
    rows: Vec<f32>,
    /// Share of the fitted sample's energy the rows keep.
    kept_energy: f32,
}

impl Projection {
    /// Fits a projection to `to` dimensions on `sample` (vectors of one length). `None` when
    /// the sample is empty, its vectors differ in length, or `to` is not below their length.
    pub fn fit(sample: &[Vec<f32>], to: usize) -> Option<Projection> {
        let from = sample.first()?.len();
        if to == 0 || to >= from || sample.iter().any(|v| v.len() != from) {
            return None;
        }
        let data = DMatrix::<f64>::from_fn(sample.len(), from, |r, c| f64::from(sample[r][c]));
        let moment = data.transpose() * &data / sample.len() as f64;
        let eigen = SymmetricEigen::new(moment);
        let mut order: Vec<usize> = (0..from).collect();
        order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
        let total: f64 = eigen.eigenvalues.iter().map(|e| e.max(0.0)).sum();
        let kept: f64 = order[..to]
            .iter()
            .map(|&i| eigen.eigenvalues[i].max(0.0))
            .sum();
        let rows = order[..to]
            .iter()
            .flat_map(|&i| {
                eigen
                    .eigenvectors
                    .column(i)
                    .iter()
                    .map(|&x| x as f32)
                    .collect::<Vec<_>>()
            })
            .collect();
        Some(Projection {
            from,
            to,
            rows,
            kept_energy: if total > 0.0 {
                (kept / total) as f32
            } else {
                0.0
            },
        })
    }

    /// Length of the vectors it takes.
    pub fn from_dimensions(&self) -> usize {
        self.from
    }

    /// Length of the vectors it gives.
    pub fn dimensions(&self) -> usize {
        self.to
    }

    /// Share of the fitted sample's energy kept (1.0 would keep every cosine exactly).
    pub fn kept_energy(&self) -> f32 {
        self.kept_energy
    }

    /// The projected vector (`v` must have `from_dimensions` numbers).
    pub fn apply(&self, v: &[f32]) -> Vec<f32> {
        self.rows
            .chunks_exact(self.from)
            .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
            .collect()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.rows.len() * 4);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.from as u32).to_le_bytes());
        out.extend_from_slice(&(self.to as u32).to_le_bytes());
        out.extend_from_slice(&self.kept_energy.to_le_bytes());
        for x in &self.rows {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// Reads what `to_bytes` wrote; anything else is refused with the reason.
    pub fn from_bytes(bytes: &[u8]) -> Result<Projection, String> {
        let body = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or("not a projection file")?;
        let number = |at: usize| -> Result<[u8; 4], String> {
            body.get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| "the projection file is cut short".to_string())
        };
        let from = u32::from_le_bytes(number(0)?) as usize;
        let to = u32::from_le_bytes(number(4)?) as usize;
        let kept_energy = f32::from_le_bytes(number(8)?);
        let values = &body[12..];
        if to == 0 || to >= from || from > 1 << 16 {
            return Err(format!("a projection from {from} to {to} dimensions"));
        }
        if values.len() != from * to * 4 {
            return Err("the projection file has the wrong length".into());
        }
        let rows: Vec<f32> = values
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if rows.iter().any(|x| !x.is_finite()) || !(0.0..=1.0).contains(&kept_energy) {
            return Err("the projection file holds numbers out of range".into());
        }
        Ok(Projection {
            from,
            to,
            rows,
            kept_energy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Vectors of 8 numbers that vary only in their first three (plus a trace of the rest).
    fn sample() -> Vec<Vec<f32>> {
        (0..200)
            .map(|i| {
                let t = i as f32 * 0.37;
                let mut v = vec![
                    t.sin(),
                    t.cos(),
                    (2.0 * t).sin() * 0.5,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                ];
                v[3 + i % 5] = 0.01;
                v
            })
            .collect()
    }

    #[test]
    fn a_projection_keeps_the_directions_the_vectors_use() {
        let sample = sample();
        let p = Projection::fit(&sample, 3).unwrap();
        assert_eq!((p.from_dimensions(), p.dimensions()), (8, 3));
        assert!(p.kept_energy() > 0.999, "{}", p.kept_energy());
        let (a, b) = (&sample[4], &sample[9]);
        let (pa, pb) = (p.apply(a), p.apply(b));
        let exact = embed::cosine(a, b);
        assert!((embed::cosine(&pa, &pb) - exact).abs() < 0.01);
        // Two directions cannot hold three: some cosine moves.
        let narrow = Projection::fit(&sample, 1).unwrap();
        assert!(narrow.kept_energy() < 0.9);
        assert_eq!(Projection::from_bytes(&p.to_bytes()).unwrap(), p);
    }

    #[test]
    fn a_projection_needs_vectors_of_one_length_and_fewer_dimensions() {
        assert!(Projection::fit(&[], 2).is_none());
        assert!(Projection::fit(&sample(), 8).is_none());
        assert!(Projection::fit(&[vec![1.0; 8], vec![1.0; 7]], 2).is_none());
    }

    proptest! {
        #[test]
        fn random_bytes_never_load_as_a_projection_by_accident(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Projection::from_bytes(&bytes);
            let mut framed = MAGIC.to_vec();
            framed.extend_from_slice(&bytes);
            if let Ok(p) = Projection::from_bytes(&framed) {
                prop_assert_eq!(framed.len(), 20 + p.from_dimensions() * p.dimensions() * 4);
            }
        }
    }
}

//! Reading NumPy `.npz` archives: a zip of `.npy` arrays (little-endian float32, float64, int8
//! and uint8, C order).

use crate::{EmbedError, Result};
use std::collections::HashMap;
use std::io::Read;

#[derive(Debug, Clone)]
pub enum Data {
    F32(Vec<f32>),
    U8(Vec<u8>),
    F64(Vec<f64>),
    /// Read so an archive holding one loads; the encoder has no use for its values.
    I8(#[allow(dead_code)] Vec<i8>),
}

#[derive(Debug, Clone)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Data,
}

fn bad(msg: impl Into<String>) -> EmbedError {
    EmbedError::Format(msg.into())
}

/// Parses one `.npy` file.
pub fn parse_npy(bytes: &[u8]) -> Result<Array> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not an .npy array"));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(format!("unsupported .npy version {v}"))),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or_else(|| bad("truncated .npy header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad("header is not text"))?;
    let field = |name: &str| -> Result<&str> {
        let at = header
            .find(&format!("'{name}':"))
            .ok_or_else(|| bad(format!("no {name} in header")))?;
        Ok(header[at + name.len() + 3..].trim_start())
    };
    if field("fortran_order")?.starts_with("True") {
        return Err(bad("Fortran-ordered arrays are not supported"));
    }
    let descr = field("descr")?;
    let descr = descr
        .trim_start_matches('\'')
        .split('\'')
        .next()
        .unwrap_or("");
    let shape_text = field("shape")?;
    let shape_text = shape_text
        .trim_start_matches('(')
        .split(')')
        .next()
        .unwrap_or("");
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| bad("bad shape")))
        .collect::<Result<_>>()?;
    let count: usize = shape.iter().product();
    let body = &bytes[start + header_len..];
    let need = |size: usize| -> Result<&[u8]> {
        body.get(
            ..count
                .checked_mul(size)
                .ok_or_else(|| bad("array too large"))?,
        )
        .ok_or_else(|| bad("truncated .npy data"))
    };
    let data = match descr {
        "<f4" => Data::F32(
            need(4)?
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        "<f8" => Data::F64(
            need(8)?
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        ),
        "|u1" => Data::U8(need(1)?.to_vec()),
        "|i1" => Data::I8(need(1)?.iter().map(|&b| b as i8).collect()),
        other => return Err(bad(format!("unsupported dtype {other}"))),
    };
    Ok(Array { shape, data })
}

/// Every array of an `.npz` archive, by name (without `.npy`).
pub fn read_npz(bytes: &[u8]) -> Result<HashMap<String, Array>> {
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad(format!("npz: {e}")))?;
    let mut out = HashMap::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).map_err(|e| bad(format!("npz: {e}")))?;
        let name = file.name().trim_end_matches(".npy").to_string();
        let mut buf = Vec::with_capacity(file.size() as usize);
        file.read_to_end(&mut buf)?;
        out.insert(name, parse_npy(&buf)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn npy(descr: &str, shape: &str, body: &[u8]) -> Vec<u8> {
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(body);
        out
    }

    #[test]
    fn reads_float_and_byte_arrays() {
        let body: Vec<u8> = [1.5f32, -2.0, 3.25, 0.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let a = parse_npy(&npy("<f4", "(2, 2)", &body)).unwrap();
        assert_eq!(a.shape, vec![2, 2]);
        assert!(matches!(a.data, Data::F32(ref v) if v == &[1.5, -2.0, 3.25, 0.0]));
        let s = parse_npy(&npy("<f8", "()", &7.0f64.to_le_bytes())).unwrap();
        assert!(s.shape.is_empty() && matches!(s.data, Data::F64(ref v) if v == &[7.0]));
        assert!(
            parse_npy(&npy("<f4", "(3,)", &body[..8])).is_err(),
            "truncated data"
        );
    }

    proptest! {
        #[test]
        fn random_bytes_are_refused_not_panicked_on(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse_npy(&bytes);
            let _ = read_npz(&bytes);
            let mut prefixed = b"\x93NUMPY\x01\x00".to_vec();
            prefixed.extend(&bytes);
            let _ = parse_npy(&prefixed);
        }
    }
}

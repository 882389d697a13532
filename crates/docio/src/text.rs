//! Plain-text decoding: byte-order marks, UTF-8, UTF-16 without a mark, then GB18030 (a superset
//! of GBK and GB2312, what Chinese Windows saves as "ANSI").

use crate::DocError;
use encoding_rs::{GB18030, UTF_16BE, UTF_16LE};

/// The text and the name of the encoding it was read with.
pub fn decode_text(bytes: &[u8]) -> Result<(String, &'static str), DocError> {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return String::from_utf8(rest.to_vec())
            .map(|t| (t, "utf-8"))
            .map_err(|_| DocError::Encoding);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return Ok((
            UTF_16LE.decode_without_bom_handling(rest).0.into_owned(),
            "utf-16le",
        ));
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return Ok((
            UTF_16BE.decode_without_bom_handling(rest).0.into_owned(),
            "utf-16be",
        ));
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok((text.to_string(), "utf-8"));
    }
    // UTF-16 without a mark: most ASCII characters leave a zero byte in every other position.
    if bytes.len() >= 4 {
        let zeros_odd = bytes.iter().skip(1).step_by(2).filter(|b| **b == 0).count();
        let zeros_even = bytes.iter().step_by(2).filter(|b| **b == 0).count();
        let half = bytes.len() / 2;
        if zeros_odd * 3 > half && zeros_even * 10 < half {
            return Ok((
                UTF_16LE.decode_without_bom_handling(bytes).0.into_owned(),
                "utf-16le",
            ));
        }
        if zeros_even * 3 > half && zeros_odd * 10 < half {
            return Ok((
                UTF_16BE.decode_without_bom_handling(bytes).0.into_owned(),
                "utf-16be",
            ));
        }
    }
    let (text, had_errors) = GB18030.decode_without_bom_handling(bytes);
    if had_errors {
        return Err(DocError::Encoding);
    }
    // GB18030 maps almost any byte string to something; insist on mostly readable text.
    let readable = text
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .count();
    if readable * 10 < text.chars().count() * 9 {
        return Err(DocError::Encoding);
    }
    Ok((text.into_owned(), "gb18030"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = "第一章 绪论\n本文研究论文查重的方法，Abstract 12345。";

    #[test]
    fn reads_every_common_encoding() {
        assert_eq!(
            decode_text(SAMPLE.as_bytes()).unwrap(),
            (SAMPLE.to_string(), "utf-8")
        );
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend(SAMPLE.as_bytes());
        assert_eq!(decode_text(&bom).unwrap().0, SAMPLE);
        let utf16le: Vec<u8> = SAMPLE
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let mut with_bom = b"\xFF\xFE".to_vec();
        with_bom.extend(&utf16le);
        assert_eq!(
            decode_text(&with_bom).unwrap(),
            (SAMPLE.to_string(), "utf-16le")
        );
        let ascii_heavy = "Chapter 1 Introduction. This thesis studies similarity. 中文";
        let le: Vec<u8> = ascii_heavy
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(
            decode_text(&le).unwrap(),
            (ascii_heavy.to_string(), "utf-16le")
        );
        let be: Vec<u8> = ascii_heavy
            .encode_utf16()
            .flat_map(|u| u.to_be_bytes())
            .collect();
        assert_eq!(
            decode_text(&be).unwrap(),
            (ascii_heavy.to_string(), "utf-16be")
        );
        let (gbk, _, _) = GB18030.encode(SAMPLE);
        assert_eq!(decode_text(&gbk).unwrap(), (SAMPLE.to_string(), "gb18030"));
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok((text, _)) = decode_text(&bytes) {
                let has_nul = text.contains(char::from(0));
                prop_assert!(!has_nul || bytes.contains(&0));
            }
        }
    }
}

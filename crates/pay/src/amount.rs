//! Amounts as the providers write them: WeChat Pay in integer fen, Alipay in yuan with at most
//! two decimals ("12.30"). Parsed exactly, never through a float.

use crate::{PayError, Result};

/// Fen from a yuan amount: "12", "12.3" or "12.30"; nothing else (no sign, no exponent, no
/// spaces, at most two decimals, at most 10^10 yuan).
pub fn parse_yuan(text: &str) -> Result<i64> {
    let bad = || PayError::BadAmount(text.chars().take(32).collect());
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty()
        || whole.len() > 10
        || fraction.len() > 2
        || (text.contains('.') && fraction.is_empty())
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let whole: i64 = whole.parse().map_err(|_| bad())?;
    let cents: i64 = match fraction.len() {
        0 => 0,
        1 => fraction.parse::<i64>().map_err(|_| bad())? * 10,
        _ => fraction.parse().map_err(|_| bad())?,
    };
    Ok(whole * 100 + cents)
}

/// "12.30" from 1230 fen (Alipay's `total_amount`).
pub fn format_yuan(fen: i64) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let fen = fen.unsigned_abs();
    format!("{sign}{}.{:02}", fen / 100, fen % 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn yuan_amounts_are_read_exactly() {
        for (text, fen) in [
            ("0.01", 1),
            ("12", 1200),
            ("12.3", 1230),
            ("12.30", 1230),
            ("100.00", 10_000),
        ] {
            assert_eq!(parse_yuan(text), Ok(fen), "{text}");
        }
        for bad in [
            "",
            ".5",
            "1.",
            "1.234",
            "-1",
            "+1",
            "1e3",
            " 1",
            "1 ",
            "１",
            "0x10",
            "12,30",
            "99999999999",
        ] {
            assert!(parse_yuan(bad).is_err(), "{bad}");
        }
        assert_eq!(format_yuan(1230), "12.30");
        assert_eq!(format_yuan(5), "0.05");
    }

    proptest! {
        #[test]
        fn formatting_and_reading_agree(fen in 0i64..1_000_000_000_000) {
            prop_assert_eq!(parse_yuan(&format_yuan(fen)), Ok(fen));
        }

        #[test]
        fn any_text_is_read_or_refused(text in ".{0,40}") {
            let _ = parse_yuan(&text);
        }
    }
}

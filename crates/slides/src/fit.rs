//! Text that always fits: lines are broken and measured with the advance widths of the CJK font
//! (Noto Sans CJK SC, what LibreOffice substitutes for 微软雅黑 here; its ideographs and
//! full-width punctuation are one em, as in 微软雅黑), before the deck is written. A frame's
//! text is set at the largest size from the allowed range whose lines fit its height.

use crate::metrics;

/// Line height as a multiple of the font size. The writer sets this exact spacing, so the
/// height measured here is the height every viewer draws.
pub const LINE_SPACING: f64 = 1.25;
/// Latin advance widths differ between the fonts a viewer may use (微软雅黑's are wider than
/// Noto's): measured Latin is widened by this much.
const LATIN_MARGIN: f64 = 1.12;
/// Space kept free at the right of every line, as a share of its width.
const RIGHT_SLACK: f64 = 0.04;

/// Space a viewer may add where Chinese meets Latin letters or digits (LibreOffice's
/// "spacing between Asian and non-Asian text", WPS's too), in ems.
const SCRIPT_GAP: f64 = 0.25;

/// Width of `text` in ems.
pub fn width_em(text: &str) -> f64 {
    let mut width = 0.0;
    let mut previous: Option<char> = None;
    for c in text.chars() {
        width += char_em(c) + gap(previous, c);
        previous = Some(c);
    }
    width
}

/// The space a viewer may put between `previous` and `next`.
fn gap(previous: Option<char>, next: char) -> f64 {
    match previous {
        Some(p)
            if p.is_ascii_alphanumeric() && !next.is_ascii()
                || !p.is_ascii() && next.is_ascii_alphanumeric() =>
        {
            SCRIPT_GAP
        }
        _ => 0.0,
    }
}

fn char_em(c: char) -> f64 {
    match metrics::latin_em(c) {
        Some(w) => w * LATIN_MARGIN,
        None if c.is_control() => 0.0,
        None => 1.0,
    }
}

/// Punctuation that may not open a line (避头).
fn no_line_start(c: char) -> bool {
    "，。、；：！？）》」』”’】〕…%,.;:!?)]}".contains(c)
}

/// Punctuation that may not close a line (避尾).
fn no_line_end(c: char) -> bool {
    "（《「『“‘【〔([{".contains(c)
}

/// Pieces that are never broken inside: a run of Latin letters and digits (a word, a number),
/// or one other character.
fn pieces(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || (c == '.' || c == '-' || c == '_') && !word.is_empty() {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        out.push(c.to_string());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// `text` broken into lines no wider than `width` ems. A piece wider than a line is broken
/// between characters.
pub fn wrap(text: &str, width: f64) -> Vec<String> {
    let width = width * (1.0 - RIGHT_SLACK);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut used = 0.0;
    for piece in pieces(text) {
        let first = piece.chars().next().unwrap_or(' ');
        let w = width_em(&piece) + gap(line.chars().last(), first);
        if used + w <= width || line.is_empty() && w <= width {
            line.push_str(&piece);
            used += w;
            continue;
        }
        if w > width {
            // A very long word: character by character.
            for c in piece.chars() {
                let cw = char_em(c) + gap(line.chars().last(), c);
                if used + cw > width && !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                    used = 0.0;
                }
                line.push(c);
                used += cw;
            }
            continue;
        }
        if no_line_start(first) {
            // Carry the line's last character down with the punctuation.
            let last = line.pop();
            if let Some(last) = last.filter(|_| !line.is_empty()) {
                lines.push(std::mem::take(&mut line));
                line.push(last);
                used = char_em(last);
            } else {
                if let Some(last) = last {
                    line.push(last);
                }
                lines.push(std::mem::take(&mut line));
                used = 0.0;
            }
        } else if line.chars().last().is_some_and(no_line_end) {
            let last = line.pop().unwrap_or(' ');
            lines.push(std::mem::take(&mut line));
            line.push(last);
            used = char_em(last);
        } else {
            lines.push(std::mem::take(&mut line));
            used = 0.0;
        }
        if piece == " " && line.is_empty() {
            continue;
        }
        line.push_str(&piece);
        used = width_em(&line);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.retain(|l| !l.trim().is_empty());
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

/// Paragraphs set in a frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub size_pt: f64,
    /// Each paragraph's lines.
    pub lines: Vec<Vec<String>>,
}

impl Fitted {
    pub fn line_count(&self) -> usize {
        self.lines.iter().map(Vec::len).sum()
    }
}

/// A frame's text box: its size in points and how it is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub width_pt: f64,
    pub height_pt: f64,
    /// Indent of every line (a bullet's hanging indent), in points.
    pub indent_pt: f64,
    /// Space after each paragraph, as a multiple of the font size.
    pub paragraph_gap: f64,
}

impl Frame {
    /// The height `lines` lines in `paragraphs` paragraphs take at `size` points.
    pub fn height_of(&self, lines: usize, paragraphs: usize, size: f64) -> f64 {
        lines as f64 * size * LINE_SPACING
            + paragraphs.saturating_sub(1) as f64 * size * self.paragraph_gap
    }
}

/// The largest size in `[min_pt, max_pt]` (whole points) at which `paragraphs` fit `frame`, or
/// none when they do not fit even at `min_pt`.
pub fn fit(paragraphs: &[String], frame: Frame, min_pt: f64, max_pt: f64) -> Option<Fitted> {
    let mut size = max_pt.floor();
    while size >= min_pt {
        let width_em = (frame.width_pt - frame.indent_pt) / size;
        let lines: Vec<Vec<String>> = paragraphs.iter().map(|p| wrap(p, width_em)).collect();
        let count: usize = lines.iter().map(Vec::len).sum();
        if frame.height_of(count, paragraphs.len(), size) <= frame.height_pt {
            return Some(Fitted {
                size_pt: size,
                lines,
            });
        }
        size -= 1.0;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn chinese_is_one_em_a_character_and_latin_is_narrower() {
        assert_eq!(width_em("研究方法"), 4.0);
        assert!(width_em("CNN") < 3.0 && width_em("CNN") > 1.0);
        assert!(width_em("i") < width_em("W"));
    }

    #[test]
    fn no_line_opens_with_closing_punctuation() {
        let lines = wrap(
            "本文提出了一种方法，该方法在数据集上取得了较好的效果。",
            9.0,
        );
        assert!(lines.len() > 1);
        for line in &lines {
            let first = line.chars().next().unwrap();
            assert!(!no_line_start(first), "{lines:?}");
        }
        assert_eq!(
            lines.concat(),
            "本文提出了一种方法，该方法在数据集上取得了较好的效果。"
        );
    }

    #[test]
    fn latin_words_are_not_broken_between_lines() {
        let lines = wrap("采用 BERT 与 Transformer 模型进行文本分类研究", 8.0);
        assert!(lines.iter().any(|l| l.contains("Transformer")), "{lines:?}");
    }

    #[test]
    fn a_frame_too_small_for_the_text_at_the_smallest_size_does_not_fit() {
        let frame = Frame {
            width_pt: 200.0,
            height_pt: 40.0,
            indent_pt: 0.0,
            paragraph_gap: 0.3,
        };
        let long = vec!["很长的文字".repeat(40)];
        assert!(fit(&long, frame, 14.0, 28.0).is_none());
        let short = vec!["研究背景".to_string()];
        let fitted = fit(&short, frame, 14.0, 28.0).unwrap();
        assert_eq!(fitted.size_pt, 28.0);
    }

    proptest! {
        #[test]
        fn wrapped_lines_keep_every_character_and_stay_within_the_width(
            text in "[一-龥，。、A-Za-z0-9 （）]{0,200}",
            width in 3.0f64..40.0,
        ) {
            let lines = wrap(&text, width);
            let joined: String = lines.concat();
            let kept: String = text.chars().filter(|c| *c != ' ').collect();
            prop_assert_eq!(joined.replace(' ', ""), kept.trim().to_string().replace(' ', ""));
            for line in &lines {
                // A line may pass the width only when it is one unbreakable piece.
                if width_em(line) > width {
                    prop_assert!(pieces(line).len() <= 2, "{:?} in {}", line, width);
                }
            }
        }
    }
}

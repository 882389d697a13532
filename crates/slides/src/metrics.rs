//! Advance widths of printable ASCII in Noto Sans CJK SC (units per em 1000), read from
//! /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc with fontTools. Ideographs,
//! kana and full-width punctuation are one em in this font and in 微软雅黑.

/// Widths of U+0020..=U+007E, in ems.
const ASCII_EM: [f64; 95] = [
    0.224, 0.323, 0.474, 0.555, 0.555, 0.921, 0.680, 0.278, 0.338, 0.338, 0.467, 0.555, 0.278,
    0.347, 0.278, 0.392, 0.555, 0.555, 0.555, 0.555, 0.555, 0.555, 0.555, 0.555, 0.555, 0.555,
    0.278, 0.278, 0.555, 0.555, 0.555, 0.474, 0.946, 0.608, 0.657, 0.638, 0.688, 0.589, 0.552,
    0.689, 0.728, 0.293, 0.535, 0.646, 0.543, 0.812, 0.723, 0.742, 0.633, 0.742, 0.635, 0.596,
    0.599, 0.721, 0.575, 0.878, 0.573, 0.531, 0.603, 0.338, 0.392, 0.338, 0.555, 0.559, 0.606,
    0.563, 0.618, 0.510, 0.620, 0.554, 0.325, 0.564, 0.607, 0.275, 0.275, 0.552, 0.284, 0.926,
    0.610, 0.606, 0.620, 0.620, 0.388, 0.468, 0.377, 0.607, 0.521, 0.802, 0.498, 0.521, 0.475,
    0.338, 0.270, 0.338, 0.555,
];

/// A printable ASCII character's width in ems; none for any other character.
pub fn latin_em(c: char) -> Option<f64> {
    let code = c as usize;
    (0x20..=0x7e).contains(&code).then(|| ASCII_EM[code - 0x20])
}

//! A slide as SVG, drawn from the same layout the .pptx is written from (shapes, fitted lines,
//! sizes): the template gallery's thumbnails and the records' previews show what the file
//! holds, with no office suite on the server.

use crate::fit::LINE_SPACING;
use crate::pptx::{LaidOut, Shape, TableBox, TextBox};
use crate::template::{EMU_PER_PT, Rect, SLIDE_H, SLIDE_W, Template};
use std::fmt::Write as _;

fn pt(emu: i64) -> f64 {
    emu as f64 / EMU_PER_PT as f64
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn centre(rect: Rect) -> (f64, f64) {
    (pt(rect.x + rect.w / 2), pt(rect.y + rect.h / 2))
}

fn text(out: &mut String, t: &TextBox) {
    let size = t.fitted.size_pt;
    let line_height = size * LINE_SPACING;
    let gap = size * 0.5;
    let height = t.text_height() as f64 / EMU_PER_PT as f64 - 2.0 * 3.6;
    let inset_x = 7.2;
    let inset_y = 3.6;
    let top = if t.middle {
        pt(t.rect.y) + (pt(t.rect.h) - height) / 2.0
    } else {
        pt(t.rect.y) + inset_y
    };
    let indent = if t.bullets { 27.0 } else { 0.0 };
    let mut y = top;
    for lines in &t.fitted.lines {
        for (i, line) in lines.iter().enumerate() {
            let baseline = y + size * 0.95;
            if t.bullets && i == 0 {
                let _ = write!(
                    out,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="{:.1}" fill="#{:06X}"/>"##,
                    pt(t.rect.x) + inset_x + size * 0.3,
                    baseline - size * 0.35,
                    size * 0.12,
                    t.colour
                );
            }
            let (x, anchor) = if t.centred {
                (pt(t.rect.x + t.rect.w / 2), "middle")
            } else {
                (pt(t.rect.x) + inset_x + indent, "start")
            };
            let _ = write!(
                out,
                r##"<text x="{x:.1}" y="{baseline:.1}" font-size="{size}" fill="#{:06X}" text-anchor="{anchor}"{}>{}</text>"##,
                t.colour,
                if t.bold { r#" font-weight="bold""# } else { "" },
                esc(line)
            );
            y += line_height;
        }
        y += gap;
    }
}

/// A table: each cell's fill and border, its lines centred as the .pptx sets them.
fn draw_table(out: &mut String, table: &TableBox) {
    let size = table.size_pt;
    let line_height = size * LINE_SPACING;
    let mut y = pt(table.rect.y);
    for (r, (cells, height)) in table.cells.iter().zip(&table.heights).enumerate() {
        let h = pt(*height);
        let (fill, colour, bold) = if r == 0 {
            (table.header_fill, table.header_colour, true)
        } else if r % 2 == 0 {
            (table.band_fill, table.colour, false)
        } else {
            (table.fill, table.colour, false)
        };
        let mut x = pt(table.rect.x);
        for (cell, width) in cells.iter().zip(&table.columns) {
            let w = pt(*width);
            let _ = write!(
                out,
                r##"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="#{fill:06X}" stroke="#{:06X}" stroke-width="0.75"/>"##,
                table.line
            );
            let lines: Vec<&String> = cell.lines.iter().filter(|l| !l.is_empty()).collect();
            let top = y + (h - lines.len() as f64 * line_height) / 2.0;
            for (i, line) in lines.iter().enumerate() {
                let _ = write!(
                    out,
                    r##"<text x="{:.1}" y="{:.1}" font-size="{size:.1}" fill="#{colour:06X}" text-anchor="middle"{}>{}</text>"##,
                    x + w / 2.0,
                    top + i as f64 * line_height + size * 0.95,
                    if bold { r#" font-weight="bold""# } else { "" },
                    esc(line)
                );
            }
            x += w;
        }
        y += h;
    }
}

/// One laid-out slide as an SVG document (960 × 540 points). The logo is drawn as its frame.
pub fn render(slide: &LaidOut, t: &Template) -> String {
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {:.0} {:.0}" font-family="'Microsoft YaHei','微软雅黑','Noto Sans CJK SC','PingFang SC',sans-serif"><rect width="100%" height="100%" fill="#{:06X}"/>"##,
        pt(SLIDE_W),
        pt(SLIDE_H),
        t.background
    );
    for shape in &slide.shapes {
        match shape {
            Shape::Fill {
                geometry,
                rect,
                fill,
                text: inner,
            } => {
                let (cx, cy) = centre(*rect);
                let _ = match *geometry {
                    "ellipse" => write!(
                        out,
                        r##"<ellipse cx="{cx:.1}" cy="{cy:.1}" rx="{:.1}" ry="{:.1}" fill="#{fill:06X}"/>"##,
                        pt(rect.w) / 2.0,
                        pt(rect.h) / 2.0
                    ),
                    geometry => write!(
                        out,
                        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"{} fill="#{fill:06X}"/>"##,
                        pt(rect.x),
                        pt(rect.y),
                        pt(rect.w),
                        pt(rect.h),
                        if geometry == "roundRect" {
                            format!(r#" rx="{:.1}""#, pt(rect.h.min(rect.w)) / 6.0)
                        } else {
                            String::new()
                        }
                    ),
                };
                if let Some(inner) = inner {
                    text(&mut out, inner);
                }
            }
            Shape::Text(t) => text(&mut out, t),
            Shape::Arrow {
                from,
                from_site,
                to,
                to_site,
                colour,
            } => {
                let rect_of = |i: usize| match slide.shapes.get(i) {
                    Some(Shape::Fill { rect, .. }) => Some(*rect),
                    _ => None,
                };
                if let (Some(a), Some(b)) = (rect_of(*from), rect_of(*to)) {
                    let (x1, y1) = crate::pptx::site(a, *from_site);
                    let (x2, y2) = crate::pptx::site(b, *to_site);
                    let _ = write!(
                        out,
                        r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#{colour:06X}" stroke-width="2.25"/>"##,
                        pt(x1),
                        pt(y1),
                        pt(x2),
                        pt(y2)
                    );
                    // The arrow head at the end.
                    let (dx, dy) = ((x2 - x1) as f64, (y2 - y1) as f64);
                    let len = (dx * dx + dy * dy).sqrt().max(1.0);
                    let (ux, uy) = (dx / len, dy / len);
                    let (ex, ey) = (pt(x2), pt(y2));
                    let back = 9.0;
                    let side = 4.5;
                    let _ = write!(
                        out,
                        r##"<polygon points="{ex:.1},{ey:.1} {:.1},{:.1} {:.1},{:.1}" fill="#{colour:06X}"/>"##,
                        ex - ux * back - uy * side,
                        ey - uy * back + ux * side,
                        ex - ux * back + uy * side,
                        ey - uy * back - ux * side
                    );
                }
            }
            Shape::Figure { rect, .. } => {
                // Where the paper's figure goes, labelled: the drawing does not carry it.
                let (cx, cy) = centre(*rect);
                let _ = write!(
                    out,
                    r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#{:06X}" stroke="#{:06X}" stroke-dasharray="6 4"/><text x="{cx:.1}" y="{cy:.1}" font-size="16" fill="#{:06X}" text-anchor="middle">论文插图（下载的PPT中为原图）</text>"##,
                    pt(rect.x),
                    pt(rect.y),
                    pt(rect.w),
                    pt(rect.h),
                    crate::pptx::blend(t.background, t.primary, 0.06),
                    t.accent,
                    t.body_colour()
                );
            }
            Shape::Table(table) => draw_table(&mut out, table),
            Shape::Logo(rect) => {
                // Where the logo goes, labelled: the drawing does not carry the image.
                let (cx, cy) = centre(*rect);
                let _ = write!(
                    out,
                    r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#FFFFFF" fill-opacity="0.6" stroke="#{:06X}" stroke-dasharray="4 3"/><text x="{cx:.1}" y="{:.1}" font-size="{:.1}" fill="#{:06X}" text-anchor="middle">校徽</text>"##,
                    pt(rect.x),
                    pt(rect.y),
                    pt(rect.w),
                    pt(rect.h),
                    t.accent,
                    cy + pt(rect.h.min(rect.w)) / 8.0,
                    (pt(rect.h.min(rect.w)) / 3.0).max(6.0),
                    t.primary
                );
            }
        }
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deck::{Deck, DeckKind, DeckMeta, Slide, SlideKind};

    #[test]
    fn a_slide_renders_as_well_formed_svg_with_its_text_escaped() {
        let deck = Deck {
            title: "A<B & C 的研究".into(),
            kind: DeckKind::Defence,
            meta: DeckMeta::default(),
            slides: vec![Slide::new(
                SlideKind::Cover,
                "A<B & C 的研究".into(),
                vec![],
                String::new(),
            )],
            condensed_by: None,
        };
        for t in &crate::TEMPLATES {
            let laid = crate::pptx::layout(&deck, t, None).unwrap();
            let svg = render(&laid[0], t);
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
            assert!(svg.contains("A&lt;B &amp; C 的研究"));
        }
    }
}

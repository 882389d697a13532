//! The deck templates: colours, the title treatment and the frames text is laid out in. Each is
//! drawn by the writer from these values alone (shapes, no pictures), so a template looks the
//! same in PowerPoint, WPS and LibreOffice and its thumbnail is a rendering of a real deck.

use serde::Serialize;

/// Slide size: 16:9, 13.333 in × 7.5 in, in EMU.
pub const SLIDE_W: i64 = 12_192_000;
pub const SLIDE_H: i64 = 6_858_000;
/// EMU per point.
pub const EMU_PER_PT: i64 = 12_700;

/// How a template marks a slide's title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// A full-width coloured band behind the title.
    Band,
    /// A coloured bar down the left edge; the title in the primary colour.
    Sidebar,
    /// White, a thin rule under the title.
    Minimal,
    /// A dark background with light text.
    Dark,
    /// A header strip holding the school's logo and name.
    School,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Template {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub style: Style,
    /// RGB colours.
    pub primary: u32,
    pub accent: u32,
    pub background: u32,
    pub text: u32,
    /// Text on the primary colour.
    pub on_primary: u32,
}

pub const TEMPLATES: [Template; 6] = [
    Template {
        id: "academic-blue",
        name: "学术蓝",
        description: "深蓝标题栏，稳重的学术风格",
        style: Style::Band,
        primary: 0x1F4E79,
        accent: 0x2E75B6,
        background: 0xFFFFFF,
        text: 0x262626,
        on_primary: 0xFFFFFF,
    },
    Template {
        id: "china-red",
        name: "中国红",
        description: "中国红侧栏配金色点缀",
        style: Style::Sidebar,
        primary: 0xB22222,
        accent: 0xC9A227,
        background: 0xFFFDF8,
        text: 0x2B2B2B,
        on_primary: 0xFFFFFF,
    },
    Template {
        id: "minimal-white",
        name: "极简白",
        description: "白底细线，内容优先",
        style: Style::Minimal,
        primary: 0x333333,
        accent: 0x7F7F7F,
        background: 0xFFFFFF,
        text: 0x333333,
        on_primary: 0xFFFFFF,
    },
    Template {
        id: "dark",
        name: "深邃黑",
        description: "深色背景，适合投影较暗的报告厅",
        style: Style::Dark,
        primary: 0x4FC3F7,
        accent: 0xFFB74D,
        background: 0x1E2430,
        text: 0xECEFF4,
        on_primary: 0x1E2430,
    },
    Template {
        id: "green",
        name: "青绿",
        description: "清新青绿侧栏，适合生命科学与环境类",
        style: Style::Sidebar,
        primary: 0x2E7D5B,
        accent: 0x8BC34A,
        background: 0xF7FBF8,
        text: 0x263238,
        on_primary: 0xFFFFFF,
    },
    Template {
        id: "school",
        name: "校徽",
        description: "页眉放学校校徽与校名",
        style: Style::School,
        primary: 0x5B2C6F,
        accent: 0xA569BD,
        background: 0xFFFFFF,
        text: 0x2C2C2C,
        on_primary: 0xFFFFFF,
    },
];

pub fn by_id(id: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.id == id)
}

/// A rectangle on the slide, in EMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

impl Rect {
    pub const fn new(x: i64, y: i64, w: i64, h: i64) -> Rect {
        Rect { x, y, w, h }
    }

    pub fn contains(&self, other: &Rect) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.x + other.w <= self.x + self.w
            && other.y + other.h <= self.y + self.h
    }
}

const INCH: i64 = 914_400;

impl Template {
    /// Where a content slide's title goes.
    pub fn title_frame(&self) -> Rect {
        match self.style {
            Style::Sidebar => Rect::new(INCH * 3 / 4, INCH * 3 / 10, SLIDE_W - INCH * 3 / 2, INCH),
            Style::School => Rect::new(INCH / 2, INCH * 11 / 10, SLIDE_W - INCH, INCH * 8 / 10),
            _ => Rect::new(INCH / 2, INCH / 5, SLIDE_W - INCH, INCH),
        }
    }

    /// Where a content slide's body goes.
    pub fn body_frame(&self) -> Rect {
        let top = match self.style {
            Style::School => INCH * 2,
            _ => INCH * 3 / 2,
        };
        let left = match self.style {
            Style::Sidebar => INCH * 3 / 4,
            _ => INCH * 6 / 10,
        };
        Rect::new(
            left,
            top,
            SLIDE_W - left - INCH / 2,
            SLIDE_H - top - INCH / 2,
        )
    }

    /// The colour of body text on this template's background.
    pub fn body_colour(&self) -> u32 {
        self.text
    }

    /// The colour of a content slide's title.
    pub fn title_colour(&self) -> u32 {
        match self.style {
            Style::Band => self.on_primary,
            Style::Dark => self.primary,
            _ => self.primary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_templates_with_distinct_ids_looks_and_frames_inside_the_slide() {
        let slide = Rect::new(0, 0, SLIDE_W, SLIDE_H);
        let mut ids: Vec<&str> = TEMPLATES.iter().map(|t| t.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 6);
        let mut looks: Vec<(u32, u32)> = TEMPLATES
            .iter()
            .map(|t| (t.primary, t.background))
            .collect();
        looks.sort();
        looks.dedup();
        assert_eq!(looks.len(), 6);
        for t in &TEMPLATES {
            assert!(slide.contains(&t.title_frame()), "{}", t.id);
            assert!(slide.contains(&t.body_frame()), "{}", t.id);
            assert!(
                t.title_frame().y + t.title_frame().h <= t.body_frame().y,
                "{}",
                t.id
            );
        }
    }
}

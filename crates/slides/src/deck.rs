//! The deck as content: which slides, their titles, bullets and speaker notes. Everything a
//! slide says is drawn from the paper (its headings and sentences, cut at clause boundaries);
//! only the connecting phrases of the speaker's script ("下面介绍……") are the deck's own, and they
//! carry no facts.

use crate::SlidesError;
use crate::paper::{Figure, Paper, Section, Table};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeckKind {
    /// 毕业答辩
    Defence,
    /// 开题报告
    Proposal,
    /// 课程汇报
    Course,
}

impl DeckKind {
    pub fn parse(s: &str) -> Option<DeckKind> {
        match s.trim() {
            "defence" | "毕业答辩" => Some(DeckKind::Defence),
            "proposal" | "开题报告" => Some(DeckKind::Proposal),
            "course" | "课程汇报" => Some(DeckKind::Course),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DeckKind::Defence => "毕业答辩",
            DeckKind::Proposal => "开题报告",
            DeckKind::Course => "课程汇报",
        }
    }

    /// The time the talk may take, in seconds (Chinese guides: a defence 10–15 minutes, a
    /// proposal or a course report 5–10).
    pub fn time_range(self) -> (u32, u32) {
        match self {
            DeckKind::Defence => (600, 900),
            DeckKind::Proposal | DeckKind::Course => (300, 600),
        }
    }
}

/// Slide counts a deck may be asked for.
pub const SLIDE_COUNTS: [usize; 4] = [10, 15, 20, 30];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlideKind {
    Cover,
    Contents,
    /// A part's title page (第一部分 …).
    Section,
    Bullets,
    /// The technical route: steps as shapes joined by arrows.
    Route,
    /// One of the paper's tables, as a table (`rows`), its caption the one bullet.
    Table,
    /// One of the paper's figures (`figure`), its caption the one bullet.
    Figure,
    Thanks,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slide {
    pub kind: SlideKind,
    pub title: String,
    pub bullets: Vec<String>,
    /// The speaker's script (讲稿).
    pub notes: String,
    /// Estimated speaking time of the notes.
    pub seconds: u32,
    /// A table slide's rows as the paper gives them, the first the header.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<Vec<String>>,
    /// A figure slide's picture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<FigureRef>,
    /// The bullets as drawn from the paper, when a model shortened some of them (`bullets`
    /// holds the shortened ones); empty when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub originals: Vec<String>,
}

/// Which of the paper's figures a slide shows, and its size in pixels (to place it without
/// reading it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureRef {
    /// Index in `Paper::figures`.
    pub index: usize,
    pub width: u32,
    pub height: u32,
}

impl Slide {
    /// A slide of text, its time from its notes.
    pub fn new(kind: SlideKind, title: String, bullets: Vec<String>, notes: String) -> Slide {
        Slide {
            kind,
            title,
            bullets,
            seconds: seconds_of(&notes),
            notes,
            rows: Vec::new(),
            figure: None,
            originals: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeckMeta {
    pub school: String,
    pub presenter: String,
    pub supervisor: String,
    pub date: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deck {
    pub title: String,
    pub kind: DeckKind,
    pub meta: DeckMeta,
    pub slides: Vec<Slide>,
    /// The model that shortened some bullets (`crate::condense`), if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condensed_by: Option<String>,
}

impl Deck {
    pub fn seconds(&self) -> u32 {
        self.slides.iter().map(|s| s.seconds).sum()
    }
}

/// Characters a speaker says in a second (about 240 a minute, a calm defence).
pub const CHARS_PER_SECOND: f64 = 4.0;

fn seconds_of(text: &str) -> u32 {
    let chars = text.chars().filter(|c| !c.is_whitespace()).count();
    (chars as f64 / CHARS_PER_SECOND).ceil() as u32
}

/// The parts of a talk, in order, with the heading words that place a chapter in them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Background,
    Status,
    Theory,
    Methods,
    Results,
    Conclusion,
}

impl Part {
    const ALL: [Part; 6] = [
        Part::Background,
        Part::Status,
        Part::Theory,
        Part::Methods,
        Part::Results,
        Part::Conclusion,
    ];

    fn title(self, kind: DeckKind) -> &'static str {
        match (self, kind) {
            (Part::Background, DeckKind::Proposal) => "选题背景与意义",
            (Part::Background, _) => "研究背景与意义",
            (Part::Status, _) => "国内外研究现状",
            (Part::Theory, _) => "相关理论与技术",
            (Part::Methods, DeckKind::Proposal) => "研究内容与方法",
            (Part::Methods, _) => "研究内容与方法",
            (Part::Results, DeckKind::Proposal) => "预期成果与进度",
            (Part::Results, _) => "研究结果与分析",
            (Part::Conclusion, DeckKind::Proposal) => "创新点与可行性",
            (Part::Conclusion, _) => "结论与展望",
        }
    }

    fn words(self) -> &'static [&'static str] {
        match self {
            Part::Background => &["绪论", "引言", "前言", "导论", "背景", "意义", "问题的提出"],
            Part::Status => &["现状", "综述", "相关工作", "相关研究", "文献"],
            Part::Theory => &["理论", "相关技术", "关键技术", "技术基础", "概念", "概述"],
            Part::Methods => &[
                "方法", "设计", "模型", "算法", "系统", "方案", "实现", "构建", "框架", "原理",
                "材料", "数据", "内容", "架构",
            ],
            Part::Results => &[
                "实验", "结果", "分析", "讨论", "测试", "评价", "实证", "验证", "应用", "检验",
                "进度", "预期",
            ],
            Part::Conclusion => &[
                "结论", "总结", "展望", "建议", "对策", "结语", "创新", "不足",
            ],
        }
    }
}

/// A chapter (level-1 section) with its subsections.
struct Chapter<'a> {
    heading: &'a str,
    sections: Vec<&'a Section>,
}

fn chapters(paper: &Paper) -> Vec<Chapter<'_>> {
    let top = paper.sections.iter().map(|s| s.level).min().unwrap_or(1);
    let mut out: Vec<Chapter> = Vec::new();
    for s in &paper.sections {
        if s.level == top || out.is_empty() {
            out.push(Chapter {
                heading: &s.heading,
                sections: vec![s],
            });
        } else if let Some(last) = out.last_mut() {
            last.sections.push(s);
        }
    }
    out
}

/// Which part each chapter belongs to: by its heading's words, else by its place (the first
/// chapter opens, the last concludes, the ones between are methods until results begin).
fn place_chapters(chapters: &[Chapter]) -> Vec<Part> {
    let by_words: Vec<Option<Part>> = chapters
        .iter()
        .map(|c| {
            // The later part wins a tie ("实验设计与结果分析" is results).
            Part::ALL
                .iter()
                .rev()
                .find(|p| p.words().iter().any(|w| c.heading.contains(w)))
                .copied()
        })
        .collect();
    let n = chapters.len();
    let mut out = Vec::with_capacity(n);
    let mut seen_results = false;
    for (i, part) in by_words.iter().enumerate() {
        let part = match part {
            Some(p) => *p,
            None if i == 0 => Part::Background,
            None if i + 1 == n && n > 2 => Part::Conclusion,
            None if seen_results => Part::Results,
            None => Part::Methods,
        };
        seen_results |= part == Part::Results;
        out.push(part);
    }
    out
}

/// Strips a heading's numbering: "第3章 系统设计" → "系统设计", "2.1 数据集" → "数据集".
pub fn bare_heading(heading: &str) -> String {
    let h = heading.trim();
    let h = if h.starts_with('第') {
        match h.find(['章', '部', '节']) {
            Some(i) if i <= 12 => &h[i + '章'.len_utf8()..],
            _ => h,
        }
    } else {
        h
    };
    let h = h.trim_start_matches(|c: char| {
        c.is_ascii_digit() || c == '.' || "一二三四五六七八九十、．".contains(c)
    });
    let h = h.trim_start_matches(['、', ' ', '\u{3000}', '\t']).trim();
    if h.is_empty() {
        heading.trim().to_string()
    } else {
        h.to_string()
    }
}

/// Sentences of a paragraph, each keeping its closing mark; a "。" between digits is a decimal
/// point, not an end.
pub fn sentences(paragraph: &str) -> Vec<String> {
    let chars: Vec<char> = paragraph.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..chars.len() {
        let c = chars[i];
        let end = matches!(c, '。' | '．' | '！' | '？' | '!' | '?' | '；')
            && !(matches!(c, '。' | '．')
                && i > 0
                && chars[i - 1].is_ascii_digit()
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit()));
        if end {
            let s: String = chars[start..=i].iter().collect();
            if !s.trim().is_empty() {
                out.push(s.trim().to_string());
            }
            start = i + 1;
        }
    }
    let rest: String = chars[start..].iter().collect();
    if !rest.trim().is_empty() {
        out.push(rest.trim().to_string());
    }
    out
}

/// Removes citation marks ("[1]", "[2-4]", "［3］") a bullet does not need.
fn without_citations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' || c == '［' {
            let close = if c == '[' { ']' } else { '］' };
            let inner: String = chars.clone().take_while(|&x| x != close).collect();
            if !inner.is_empty()
                && inner.len() <= 12
                && inner
                    .chars()
                    .all(|x| x.is_ascii_digit() || ",，-–~、 ".contains(x))
            {
                for _ in 0..=inner.chars().count() {
                    chars.next();
                }
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The numbers a text holds: runs of digits with their decimal points ("86.4", "2023").
pub fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() || c == '.' && !current.is_empty() {
            current.push(c);
        } else if !current.is_empty() {
            out.push(current.trim_end_matches('.').to_string());
            current.clear();
        }
    }
    if !current.is_empty() {
        out.push(current.trim_end_matches('.').to_string());
    }
    out
}

/// Longest bullet, in characters.
const BULLET_MAX: usize = 60;
/// Shortest sentence worth a bullet.
const BULLET_MIN: usize = 10;

/// A sentence as a bullet: citation marks removed, the closing mark dropped, and a long
/// sentence cut after the last clause (at "，" or "；") that ends within `BULLET_MAX`.
pub fn as_bullet(sentence: &str) -> Option<String> {
    let s = without_citations(sentence);
    let s = s
        .trim()
        .trim_end_matches(['。', '；', '！', '？', ';'])
        .trim();
    let chars: Vec<char> = s.chars().collect();
    let han = chars.iter().filter(|c| is_han(**c)).count();
    if chars.len() < BULLET_MIN || han < 6 {
        return None;
    }
    if chars.len() <= BULLET_MAX {
        return Some(s.to_string());
    }
    let cut = (BULLET_MIN..BULLET_MAX)
        .rev()
        .find(|&i| matches!(chars[i], '，' | '；' | '：' | ','))?;
    Some(chars[..cut].iter().collect())
}

fn is_han(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c) || ('\u{3400}'..='\u{4DBF}').contains(&c)
}

/// Words that mark a sentence saying what the work did or found.
const CUES: [&str; 20] = [
    "本文",
    "本研究",
    "本课题",
    "提出",
    "设计",
    "构建",
    "实现",
    "采用",
    "结果表明",
    "研究表明",
    "表明",
    "发现",
    "显著",
    "提高",
    "降低",
    "证明",
    "旨在",
    "目的",
    "主要",
    "结论",
];
/// Openings of a sentence that leans on the one before it.
const LEANING: [&str; 16] = [
    "因此",
    "但是",
    "而且",
    "此外",
    "同时",
    "另外",
    "然而",
    "其中",
    "这",
    "二是",
    "三是",
    "其次",
    "再次",
    "最后",
    "另一方面",
    "其二",
];

#[derive(Clone)]
struct Candidate {
    /// The sentence as a bullet; none when it cannot be one (too short, too long to cut).
    text: Option<String>,
    /// The whole sentence, for the speaker's script.
    sentence: String,
    score: f64,
    order: usize,
}

fn bigrams(text: &str) -> std::collections::HashSet<(char, char)> {
    let chars: Vec<char> = text.chars().filter(|c| c.is_alphanumeric()).collect();
    chars.windows(2).map(|w| (w[0], w[1])).collect()
}

fn overlap(
    a: &std::collections::HashSet<(char, char)>,
    b: &std::collections::HashSet<(char, char)>,
) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    a.intersection(b).count() as f64 / a.len().min(b.len()) as f64
}

/// The sentences of `sections` ranked as bullets.
fn candidates(sections: &[&Section], title: &str, part: Part) -> Vec<Candidate> {
    let topic = bigrams(title);
    let mut out = Vec::new();
    let mut order = 0;
    for section in sections {
        for paragraph in &section.paragraphs {
            for (i, sentence) in sentences(paragraph).into_iter().enumerate() {
                order += 1;
                let Some(text) = as_bullet(&sentence) else {
                    out.push(Candidate {
                        text: None,
                        sentence,
                        score: f64::MIN,
                        order,
                    });
                    continue;
                };
                let mut score = 0.0;
                if i == 0 {
                    score += 1.0;
                }
                score += CUES.iter().filter(|c| text.contains(*c)).count().min(2) as f64;
                if part == Part::Results && text.chars().any(|c| c.is_ascii_digit()) {
                    score += 1.0;
                }
                score += 2.0 * overlap(&bigrams(&text), &topic);
                let len = text.chars().count();
                if (18..=45).contains(&len) {
                    score += 0.5;
                }
                if LEANING.iter().any(|l| text.starts_with(l)) {
                    score -= 1.5;
                }
                out.push(Candidate {
                    text: Some(text),
                    sentence,
                    score,
                    order,
                });
            }
        }
    }
    out
}

/// The best `n` candidates that do not repeat each other, in the paper's order.
fn choose(candidates: &[Candidate], n: usize) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = candidates
        .iter()
        .filter(|c| c.text.is_some())
        .cloned()
        .collect();
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.order.cmp(&b.order)));
    let mut chosen: Vec<Candidate> = Vec::new();
    for c in candidates {
        if chosen.len() >= n {
            break;
        }
        let grams = bigrams(c.text.as_deref().unwrap_or(""));
        if chosen
            .iter()
            .any(|k| overlap(&bigrams(k.text.as_deref().unwrap_or("")), &grams) > 0.6)
        {
            continue;
        }
        chosen.push(c);
    }
    chosen.sort_by_key(|c| c.order);
    chosen
}

/// What the deck is asked to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeckRequest {
    pub kind: DeckKind,
    pub slides: usize,
    pub meta: DeckMeta,
}

/// Characters of body text a part needs on average before the parts get title pages.
const PART_PAGE_CHARS: usize = 150;

/// Bullets on one content slide.
const BULLETS_PER_SLIDE: usize = 4;

/// The parts present, each with its sections, and the part of each of the paper's sections. A
/// subsection on the state of research is that part wherever the paper puts it (often inside
/// 绪论); a part the paper returns to later joins its first place; a part without text is none.
fn parts_of<'a>(
    paper: &'a Paper,
    chapters: &[Chapter<'a>],
    placed: &[Part],
) -> (Vec<(Part, Vec<&'a Section>)>, Vec<Part>) {
    let mut merged: Vec<(Part, Vec<&Section>)> = Vec::new();
    // Chapters hold all the sections, in order.
    let mut part_of_section: Vec<Part> = Vec::with_capacity(paper.sections.len());
    for (chapter, part) in chapters.iter().zip(placed) {
        for (i, section) in chapter.sections.iter().enumerate() {
            let part = if i > 0
                && Part::Status
                    .words()
                    .iter()
                    .any(|w| section.heading.contains(w))
            {
                Part::Status
            } else {
                *part
            };
            part_of_section.push(part);
            match merged.iter_mut().find(|(p, _)| *p == part) {
                Some((_, sections)) => sections.push(section),
                None => merged.push((part, vec![section])),
            }
        }
    }
    merged.sort_by_key(|(p, _)| *p);
    let parts = merged
        .into_iter()
        .filter(|(_, s)| s.iter().any(|s| !s.paragraphs.is_empty()))
        .collect();
    (parts, part_of_section)
}

/// Keeps of the paper's tables and figures only those a deck of any length could show (at most
/// five, by `choose_objects`' ranking), a table's rows only as many as a slide shows and one
/// more (to say it is cut): what a draft keeps of a paper of a hundred tables and pictures.
pub fn keep_showable_objects(paper: &mut Paper) {
    let chapters = chapters(paper);
    let placed = place_chapters(&chapters);
    let (parts, part_of_section) = parts_of(paper, &chapters, &placed);
    let present: Vec<Part> = parts.iter().map(|(p, _)| *p).collect();
    let most = SLIDE_COUNTS.iter().copied().max().unwrap_or(30);
    let chosen = choose_objects(paper, &part_of_section, &present, most);
    let mut tables = Vec::new();
    let mut figures = Vec::new();
    for object in chosen {
        match object {
            Object::Table(t) => tables.push(Table {
                rows: t.rows.iter().take(TABLE_MAX_ROWS + 1).cloned().collect(),
                ..t.clone()
            }),
            Object::Figure(f, _) => figures.push(f.clone()),
        }
    }
    paper.tables = tables;
    paper.figures = figures;
}

/// Plans the deck: cover, contents, the parts the paper has (a title page each when the deck
/// is long enough), the technical route, thanks.
pub fn plan(paper: &Paper, request: &DeckRequest) -> Result<Deck, SlidesError> {
    if !SLIDE_COUNTS.contains(&request.slides) {
        return Err(SlidesError::SlideCount {
            asked: request.slides,
        });
    }
    let chapters = chapters(paper);
    let placed = place_chapters(&chapters);
    let kind = request.kind;
    let (parts, part_of_section) = parts_of(paper, &chapters, &placed);
    if parts.is_empty() {
        return Err(SlidesError::NoContent);
    }

    let route = Route::of(&chapters, &placed);
    let with_route = route.steps.len() >= 3;
    let fixed = 3 + usize::from(with_route);
    // Title pages of the parts where there is room and the paper says enough for them: a thin
    // paper's deck would be one third dividers.
    let with_part_pages = request.slides >= 15
        && parts.len() >= 3
        && fixed + 2 * parts.len() <= request.slides
        && paper.chars() >= PART_PAGE_CHARS * parts.len();
    let part_pages = if with_part_pages { parts.len() } else { 0 };
    let content_budget = request
        .slides
        .saturating_sub(fixed + part_pages)
        .max(parts.len());
    // The paper's own tables and figures take some of the content slides.
    let present: Vec<Part> = parts.iter().map(|(p, _)| *p).collect();
    let mut objects = choose_objects(paper, &part_of_section, &present, request.slides);
    // Only where every part keeps a slide of its own text.
    objects.truncate(content_budget.saturating_sub(parts.len()));
    let content_budget = content_budget
        .saturating_sub(objects.len())
        .max(parts.len());

    // Content slides per part: at least one, the rest by how much each part says; a conclusion
    // rarely needs more than one.
    let weights: Vec<usize> = parts
        .iter()
        .map(|(_, s)| {
            s.iter()
                .flat_map(|s| &s.paragraphs)
                .map(|p| p.chars().count())
                .sum::<usize>()
                .max(1)
        })
        .collect();
    let mut per_part = vec![1usize; parts.len()];
    let mut left = content_budget - parts.len();
    while left > 0 {
        // Give the next slide to the part with the most text per slide (conclusion capped at 2).
        let next = (0..parts.len())
            .filter(|&i| parts[i].0 != Part::Conclusion || per_part[i] < 2)
            .max_by(|&a, &b| {
                (weights[a] as f64 / per_part[a] as f64)
                    .total_cmp(&(weights[b] as f64 / per_part[b] as f64))
                    .then(b.cmp(&a))
            });
        let Some(next) = next else { break };
        per_part[next] += 1;
        left -= 1;
    }

    // The script aims at the middle of the kind's time; the fixed slides take about a minute.
    let (min_time, max_time) = kind.time_range();
    let script_chars = ((min_time + max_time) as f64 / 2.0 - 60.0).max(60.0) * CHARS_PER_SECOND
        / content_budget.max(1) as f64;
    let script_chars = script_chars as usize;
    let mut slides = Vec::new();
    let title = if paper.title.is_empty() {
        "论文答辩".to_string()
    } else {
        paper.title.clone()
    };
    let presenter = if request.meta.presenter.is_empty() {
        String::new()
    } else {
        format!("我是{}，", request.meta.presenter)
    };
    let supervisor = match request.meta.supervisor.trim() {
        "" => String::new(),
        // "王建国 教授" is not followed by another title.
        s if ["老师", "教授", "博士", "讲师", "研究员", "导师"]
            .iter()
            .any(|t| s.ends_with(t)) =>
        {
            format!("指导教师是{s}。")
        }
        s => format!("指导教师是{s}老师。"),
    };
    let greeting = format!(
        "各位老师好，{presenter}我{}的题目是《{title}》，{supervisor}",
        match kind {
            DeckKind::Proposal => "开题",
            _ => "汇报",
        }
    );
    slides.push(Slide::new(
        SlideKind::Cover,
        title.clone(),
        Vec::new(),
        greeting.trim_end_matches('，').to_string(),
    ));
    let part_titles: Vec<String> = parts
        .iter()
        .map(|(p, _)| p.title(kind).to_string())
        .collect();
    let contents_notes = format!(
        "我的汇报分为{}个部分：{}。",
        parts.len(),
        part_titles.join("、")
    );
    slides.push(Slide::new(
        SlideKind::Contents,
        "目录".into(),
        part_titles.clone(),
        contents_notes,
    ));

    for (index, ((part, sections), count)) in parts.iter().zip(&per_part).enumerate() {
        if with_part_pages {
            let notes = format!(
                "下面进入第{}部分：{}。",
                chinese_number(index + 1),
                part.title(kind)
            );
            slides.push(Slide::new(
                SlideKind::Section,
                part.title(kind).to_string(),
                vec![format!("第{}部分", chinese_number(index + 1))],
                notes,
            ));
        }
        if *part == Part::Methods && with_route {
            slides.push(route.slide());
        }
        slides.extend(part_slides(
            *part,
            sections,
            *count,
            &title,
            kind,
            script_chars,
        ));
        slides.extend(
            objects
                .iter()
                .filter(|o| part_of_section.get(o.section()) == Some(part))
                .map(|o| object_slide(paper, o, part.title(kind))),
        );
    }
    if with_route && !parts.iter().any(|(p, _)| *p == Part::Methods) {
        // No methods part: the route goes before the last part.
        let at = slides
            .len()
            .saturating_sub(per_part.last().copied().unwrap_or(1));
        slides.insert(at, route.slide());
    }
    let thanks = "我的汇报到此结束，恳请各位老师批评指正，谢谢！".to_string();
    slides.push(Slide::new(
        SlideKind::Thanks,
        "敬请各位老师批评指正".into(),
        Vec::new(),
        thanks,
    ));
    if slides
        .iter()
        .filter(|s| s.kind == SlideKind::Bullets)
        .count()
        < 2
    {
        return Err(SlidesError::NoContent);
    }
    let mut deck = Deck {
        title,
        kind,
        meta: request.meta.clone(),
        slides,
        condensed_by: None,
    };
    fit_time(&mut deck);
    Ok(deck)
}

/// The slides of one part: a slide per subsection (or run of subsections) where the part has
/// as many as slides, else the part's best sentences split among its slides in order. A
/// slide's script is its bullets' whole sentences and, up to `script_chars`, the sentences of
/// the paper around them.
fn part_slides(
    part: Part,
    sections: &[&Section],
    count: usize,
    title: &str,
    kind: DeckKind,
    script_chars: usize,
) -> Vec<Slide> {
    let part_title = part.title(kind);
    let subsections: Vec<&Section> = sections
        .iter()
        .copied()
        .filter(|s| !s.paragraphs.is_empty())
        .collect();
    // (title, the sentences the slide draws on, its bullets)
    let mut planned: Vec<(String, Vec<Candidate>, Vec<Candidate>)> = Vec::new();
    if count > 1 && subsections.len() >= count {
        for (i, chunk) in even_chunks(&subsections, count).into_iter().enumerate() {
            // A run of subsections is named by them when that stays short.
            let joined = chunk
                .iter()
                .map(|s| bare_heading(&s.heading))
                .collect::<Vec<_>>()
                .join("与");
            let slide_title = match chunk.len() {
                1 => bare_heading(&chunk[0].heading),
                _ if joined.chars().count() <= 16 => joined,
                _ => format!("{part_title}（{}）", chinese_number(i + 1)),
            };
            let pool = candidates(&chunk, title, part);
            let chosen = choose(&pool, BULLETS_PER_SLIDE);
            planned.push((slide_title, pool, chosen));
        }
    } else {
        let pool = candidates(&subsections, title, part);
        let chosen = choose(&pool, BULLETS_PER_SLIDE * count);
        // At least two bullets a slide: fewer, fuller slides rather than thin ones.
        let slides = count.min(chosen.len() / 2).max(1);
        let chunks = even_chunks(&chosen, slides);
        let total = chunks.len();
        for (i, chunk) in chunks.iter().enumerate() {
            // The slide draws on the paper from its first bullet to the next slide's first.
            let from = if i == 0 { 0 } else { chunk[0].order };
            let to = chunks.get(i + 1).map_or(usize::MAX, |next| next[0].order);
            let around: Vec<Candidate> = pool
                .iter()
                .filter(|c| c.order >= from && c.order < to)
                .cloned()
                .collect();
            let slide_title = if total > 1 {
                format!("{part_title}（{}）", chinese_number(i + 1))
            } else {
                part_title.to_string()
            };
            planned.push((slide_title, around, chunk.clone()));
        }
    }
    // A slide of one bullet joins the slide before it (a part's only slide keeps it).
    let mut merged: Vec<(String, Vec<Candidate>, Vec<Candidate>)> = Vec::new();
    for (title, pool, chosen) in planned.into_iter().filter(|(_, _, c)| !c.is_empty()) {
        match merged.last_mut() {
            Some((_, last_pool, last_chosen))
                if chosen.len() == 1 && last_chosen.len() < BULLETS_PER_SLIDE + 1 =>
            {
                last_pool.extend(pool);
                last_chosen.extend(chosen);
            }
            _ => merged.push((title, pool, chosen)),
        }
    }
    merged
        .into_iter()
        .enumerate()
        .map(|(i, (slide_title, pool, chosen))| {
            let opening = if i == 0 {
                format!("下面介绍{part_title}。")
            } else {
                format!("接下来是{slide_title}。")
            };
            let chosen_orders: Vec<usize> = chosen.iter().map(|c| c.order).collect();
            let chosen_chars: usize = chosen.iter().map(|c| c.sentence.chars().count()).sum();
            let mut spare = script_chars.saturating_sub(chosen_chars + opening.chars().count());
            let mut notes = opening;
            for c in &pool {
                let len = c.sentence.chars().count();
                if chosen_orders.contains(&c.order) {
                    notes.push_str(&without_citations(&c.sentence));
                } else if len <= spare {
                    notes.push_str(&without_citations(&c.sentence));
                    spare -= len;
                }
            }
            Slide::new(
                SlideKind::Bullets,
                slide_title,
                chosen.into_iter().filter_map(|c| c.text).collect(),
                notes,
            )
        })
        .collect()
}

/// A table or a figure of the paper chosen for a slide.
enum Object<'a> {
    Table(&'a Table),
    /// The figure and its index in `Paper::figures`.
    Figure(&'a Figure, usize),
}

impl Object<'_> {
    fn section(&self) -> usize {
        match self {
            Object::Table(t) => t.section,
            Object::Figure(f, _) => f.section,
        }
    }

    fn caption(&self) -> &str {
        match self {
            Object::Table(t) => &t.caption,
            Object::Figure(f, _) => &f.caption,
        }
    }
}

/// Rows of a table a slide shows (the header and nine rows); a longer table is shown in part,
/// and its caption says so.
const TABLE_MAX_ROWS: usize = 10;
/// Columns of a table a slide can show legibly.
const TABLE_MAX_COLUMNS: usize = 8;
/// Characters of a caption shown.
const CAPTION_MAX: usize = 50;
/// Characters of the longest cell of a table a slide can show.
const TABLE_MAX_CELL: usize = 40;

/// Whether a slide can show `table`: two to eight columns, a header and a row at least, short
/// cells, most of them filled.
fn showable(table: &Table) -> bool {
    let columns = table.rows.first().map_or(0, Vec::len);
    let cells: Vec<&String> = table.rows.iter().take(TABLE_MAX_ROWS).flatten().collect();
    let filled = cells.iter().filter(|c| !c.trim().is_empty()).count();
    (2..=TABLE_MAX_COLUMNS).contains(&columns)
        && table.rows.len() >= 2
        && cells.iter().all(|c| c.chars().count() <= TABLE_MAX_CELL)
        && filled * 3 >= cells.len() * 2
        && crate::pptx::table_fits(&table.rows[..table.rows.len().min(TABLE_MAX_ROWS)])
}

/// The tables and figures a deck of `slides` shows: one for a short deck, up to five for a long
/// one; results first, then methods, then theory, then the rest; at most two from a section;
/// captioned ones before uncaptioned. In the paper's order within their part.
fn choose_objects<'a>(
    paper: &'a Paper,
    part_of_section: &[Part],
    present: &[Part],
    slides: usize,
) -> Vec<Object<'a>> {
    let most = match slides {
        0..=10 => 1,
        11..=15 => 2,
        16..=20 => 3,
        _ => 5,
    };
    let rank = |section: usize, captioned: bool| {
        let part = part_of_section.get(section).copied();
        let part_rank = match part {
            Some(Part::Results) => 0,
            Some(Part::Methods) => 1,
            Some(Part::Theory) => 2,
            _ => 3,
        };
        (part_rank, usize::from(!captioned))
    };
    /// An object with its rank (part, uncaptioned) and its place (section, index).
    struct Ranked<'a> {
        rank: (usize, usize),
        at: (usize, usize),
        object: Object<'a>,
    }
    let mut all: Vec<Ranked> = Vec::new();
    for (i, t) in paper.tables.iter().enumerate() {
        if showable(t) {
            all.push(Ranked {
                rank: rank(t.section, !t.caption.is_empty()),
                at: (t.section, i),
                object: Object::Table(t),
            });
        }
    }
    for (i, f) in paper.figures.iter().enumerate() {
        all.push(Ranked {
            rank: rank(f.section, !f.caption.is_empty()),
            at: (f.section, i),
            object: Object::Figure(f, i),
        });
    }
    all.retain(|r| {
        part_of_section
            .get(r.at.0)
            .is_some_and(|p| present.contains(p))
    });
    all.sort_by_key(|r| (r.rank, r.at));
    let mut per_section: std::collections::HashMap<usize, usize> = Default::default();
    let mut chosen: Vec<Ranked> = Vec::new();
    for r in all {
        if chosen.len() >= most {
            break;
        }
        let n = per_section.entry(r.at.0).or_default();
        if *n >= 2 {
            continue;
        }
        *n += 1;
        chosen.push(r);
    }
    chosen.sort_by_key(|r| r.at);
    chosen.into_iter().map(|r| r.object).collect()
}

/// The label a caption opens with ("表4-1", "图 3.2" → "图3.2"), to find where the text
/// refers to it.
fn caption_label(caption: &str) -> Option<String> {
    let caption = caption.trim();
    let mark: String = caption
        .chars()
        .take_while(|c| !c.is_ascii_digit())
        .collect();
    let mark = mark.trim();
    if mark.is_empty() || mark.chars().count() > 7 {
        return None;
    }
    let number: String = caption[caption.find(|c: char| c.is_ascii_digit())?..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | '－' | '—'))
        .collect();
    let number = number.trim_end_matches(['.', '-']);
    (!number.is_empty()).then(|| format!("{mark}{number}"))
}

/// The slide of a table or figure: titled by its section, its caption under it; the script
/// is the paper's sentences that refer to it ("如表4-1所示……"), else the section's first ones.
fn object_slide(paper: &Paper, object: &Object, part_title: &str) -> Slide {
    let section = object.section();
    // A caption fits its two lines on the slide.
    let caption: String = object.caption().trim().chars().take(CAPTION_MAX).collect();
    let caption = caption.as_str();
    let sentences_of: Vec<String> = paper
        .sections
        .get(section)
        .map(|s| s.paragraphs.iter().flat_map(|p| sentences(p)).collect())
        .unwrap_or_default();
    let label = caption_label(caption);
    let referring: Vec<&String> = label
        .as_ref()
        .map(|label| {
            sentences_of
                .iter()
                .filter(|s| s.replace(' ', "").contains(label.as_str()))
                .take(2)
                .collect()
        })
        .unwrap_or_default();
    let said: Vec<&String> = if referring.is_empty() {
        sentences_of.iter().take(2).collect()
    } else {
        referring
    };
    let shown = match (&label, object) {
        (Some(label), _) => label.clone(),
        (None, Object::Table(_)) => "这张表".to_string(),
        (None, Object::Figure(..)) => "这幅图".to_string(),
    };
    // A sentence that names the table or figure introduces it itself.
    let named = label
        .as_ref()
        .is_some_and(|l| said.iter().any(|s| s.replace(' ', "").contains(l.as_str())));
    let mut notes = if named {
        String::new()
    } else {
        format!("请看{shown}。")
    };
    for s in said {
        notes.push_str(&without_citations(s));
    }
    // A chapter's table is titled by the part, as the chapter's text slides are; a section's by
    // the section.
    let title = paper
        .sections
        .get(section)
        .map(|s| match s.level {
            1 => part_title.to_string(),
            _ => bare_heading(&s.heading),
        })
        .unwrap_or_default();
    match object {
        Object::Table(t) => {
            let mut bullets = Vec::new();
            if !caption.is_empty() || t.rows.len() > TABLE_MAX_ROWS {
                let cut = if t.rows.len() > TABLE_MAX_ROWS {
                    crate::pptx::EXCERPT
                } else {
                    ""
                };
                bullets.push(format!("{caption}{cut}"));
            }
            let mut slide = Slide::new(SlideKind::Table, title, bullets, notes);
            slide.rows = t.rows.iter().take(TABLE_MAX_ROWS).cloned().collect();
            slide
        }
        Object::Figure(f, i) => {
            let bullets = if caption.is_empty() {
                Vec::new()
            } else {
                vec![caption.to_string()]
            };
            let mut slide = Slide::new(SlideKind::Figure, title, bullets, notes);
            slide.figure = Some(FigureRef {
                index: *i,
                width: f.width,
                height: f.height,
            });
            slide
        }
    }
}

/// `items` in `n` consecutive runs whose lengths differ by at most one.
fn even_chunks<T: Clone>(items: &[T], n: usize) -> Vec<Vec<T>> {
    let n = n.clamp(1, items.len().max(1));
    let (base, extra) = (items.len() / n, items.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(items[start..start + len].to_vec());
        start += len;
    }
    out.retain(|c| !c.is_empty());
    out
}

/// The route slide: the technical route from the methods' and results' own headings, or — when
/// only the chapters can make the steps — the paper's structure, called so.
struct Route {
    steps: Vec<String>,
    structure: bool,
}

impl Route {
    fn of(chapters: &[Chapter], placed: &[Part]) -> Route {
        let steps = route_steps(chapters, placed);
        let all: Vec<String> = chapters.iter().map(|c| bare_heading(c.heading)).collect();
        let structure = all.len() >= steps.len() && all[..steps.len()] == steps[..];
        Route { steps, structure }
    }

    fn slide(&self) -> Slide {
        let (title, notes) = if self.structure {
            (
                "论文结构",
                format!("论文依次为：{}。", self.steps.join("、")),
            )
        } else {
            (
                "技术路线",
                format!("本研究的技术路线依次为：{}。", self.steps.join("、")),
            )
        };
        Slide::new(SlideKind::Route, title.into(), self.steps.clone(), notes)
    }
}

/// The steps of the technical route: the subsections of the methods and results chapters when
/// they make three to six steps, else those chapters, else every chapter; at most six.
fn route_steps(chapters: &[Chapter], placed: &[Part]) -> Vec<String> {
    let body: Vec<&Chapter> = chapters
        .iter()
        .zip(placed)
        .filter(|(_, p)| matches!(p, Part::Theory | Part::Methods | Part::Results))
        .map(|(c, _)| c)
        .collect();
    let subsections: Vec<String> = chapters
        .iter()
        .zip(placed)
        .filter(|(_, p)| matches!(p, Part::Methods | Part::Results))
        .flat_map(|(c, _)| c.sections.iter().skip(1))
        .filter(|s| Some(s.level) == c_level(chapters).map(|l| l + 1))
        .map(|s| bare_heading(&s.heading))
        .collect();
    let mut steps = if (3..=6).contains(&subsections.len()) {
        subsections
    } else if body.len() >= 3 {
        body.iter().map(|c| bare_heading(c.heading)).collect()
    } else if subsections.len() > 6 {
        subsections
    } else {
        chapters.iter().map(|c| bare_heading(c.heading)).collect()
    };
    steps.truncate(6);
    steps
}

/// The level of the chapters.
fn c_level(chapters: &[Chapter]) -> Option<u8> {
    chapters
        .iter()
        .filter_map(|c| c.sections.first())
        .map(|s| s.level)
        .min()
}

/// Trims the script of the longest content slides until the talk fits the kind's time, keeping
/// whole sentences and at least the opening and the first sentence of each.
fn fit_time(deck: &mut Deck) {
    let (_, max) = deck.kind.time_range();
    while deck.seconds() > max {
        let Some(longest) = deck
            .slides
            .iter_mut()
            .filter(|s| s.kind == SlideKind::Bullets)
            .max_by_key(|s| s.seconds)
        else {
            break;
        };
        let parts = sentences(&longest.notes);
        if parts.len() <= 2 {
            break;
        }
        longest.notes = parts[..parts.len() - 1].concat();
        longest.seconds = seconds_of(&longest.notes);
    }
}

fn chinese_number(n: usize) -> String {
    docio::thesis::chinese_number(n as u32)
}

/// A deck of two slides (cover and a content slide) that shows a template's look in the
/// gallery; its text says it is an example.
pub fn sample() -> Deck {
    Deck {
        title: "示例：基于深度学习的图像识别方法研究".into(),
        kind: DeckKind::Defence,
        meta: DeckMeta {
            school: "示例大学".into(),
            presenter: "张同学".into(),
            supervisor: "李老师".into(),
            date: String::new(),
        },
        slides: vec![
            Slide::new(
                SlideKind::Cover,
                "示例：基于深度学习的图像识别方法研究".into(),
                Vec::new(),
                String::new(),
            ),
            Slide::new(
                SlideKind::Bullets,
                "研究背景与意义".into(),
                vec![
                    "幻灯片的文字摘自您论文的原句".into(),
                    "每页附讲稿，并估计讲解时间".into(),
                    "文字按字体实际宽度排版，不会溢出文本框".into(),
                ],
                String::new(),
            ),
        ],
        condensed_by: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_lose_their_numbering() {
        assert_eq!(bare_heading("第3章 系统设计与实现"), "系统设计与实现");
        assert_eq!(bare_heading("2.1 数据集"), "数据集");
        assert_eq!(bare_heading("三、研究方法"), "研究方法");
        assert_eq!(bare_heading("绪论"), "绪论");
    }

    #[test]
    fn a_long_sentence_becomes_a_bullet_cut_at_a_clause_and_citations_go() {
        assert_eq!(
            as_bullet("本文提出了一种基于注意力机制的文本分类方法[1]。").unwrap(),
            "本文提出了一种基于注意力机制的文本分类方法"
        );
        let long = "实验在三个公开数据集上进行，结果表明所提方法的准确率达到了百分之九十以上，比基线方法高出约五个百分点，并且训练时间缩短了一半左右。";
        let bullet = as_bullet(long).unwrap();
        assert!(bullet.chars().count() <= BULLET_MAX);
        assert!(long.starts_with(&bullet));
        assert!(as_bullet("见表1。").is_none());
    }

    #[test]
    fn decimal_points_written_as_full_stops_do_not_end_sentences() {
        assert_eq!(
            sentences("准确率为0。95，较好。第二句。"),
            vec!["准确率为0。95，较好。", "第二句。"]
        );
    }
}

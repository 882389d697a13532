//! Writing a paper from its outline: every leaf section is written from the title, the outline,
//! its word budget, a brief of the sections before it and the library records retrieved for it;
//! the model's citation markers are mapped onto those records and anything else is removed.

use crate::citations::CitationMap;
use crate::gbt7714::{self, Reference};
use crate::outline::{self, Degree, Node, Outline, OutlineError, PaperKind};
use llm::chat::{BoxFuture, ChatError, ChatModel, ChatRequest, CopyGuard, Message};
use llm::prompts::Prompt;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Bumped when a prompt changes, and recorded with every paper.
pub const PROMPT_VERSION: &str = "v1";

const OUTLINE_PROMPT: Prompt = Prompt {
    name: "paper/outline",
    title: "论文生成 · 章标题",
    builtin: include_str!("../prompts/v1/outline.md"),
};
const SECTIONS_PROMPT: Prompt = Prompt {
    name: "paper/sections",
    title: "论文生成 · 节标题",
    builtin: include_str!("../prompts/v1/sections.md"),
};
const SECTION_PROMPT: Prompt = Prompt {
    name: "paper/section",
    title: "论文生成 · 正文小节",
    builtin: include_str!("../prompts/v1/section.md"),
};
const ABSTRACT_PROMPT: Prompt = Prompt {
    name: "paper/abstract",
    title: "论文生成 · 中文摘要",
    builtin: include_str!("../prompts/v1/abstract.md"),
};
const TRANSLATE_PROMPT: Prompt = Prompt {
    name: "paper/translate",
    title: "论文生成 · 英文摘要翻译",
    builtin: include_str!("../prompts/v1/translate.md"),
};
const KEYWORDS_EN_PROMPT: Prompt = Prompt {
    name: "paper/keywords_en",
    title: "论文生成 · 英文关键词翻译",
    builtin: include_str!("../prompts/v1/keywords_en.md"),
};
const DOCUMENT_PROMPT: Prompt = Prompt {
    name: "paper/document",
    title: "毕业材料（开题报告、任务书等）",
    builtin: include_str!("../prompts/v1/document.md"),
};

/// The paper prompts an operator may edit (`llm::prompts`).
pub const PROMPTS: &[Prompt] = &[
    OUTLINE_PROMPT,
    SECTIONS_PROMPT,
    SECTION_PROMPT,
    ABSTRACT_PROMPT,
    TRANSLATE_PROMPT,
    KEYWORDS_EN_PROMPT,
    DOCUMENT_PROMPT,
];

/// Records retrieved for one section, offered to the model as `[ref:1]`…
const REFERENCES_PER_SECTION: usize = 4;
/// Attempts at an outline the parser accepts before giving up.
const OUTLINE_ATTEMPTS: usize = 3;
/// The abstract's length in characters.
const ABSTRACT_CHARS: u32 = 300;
/// How much of each earlier section the brief keeps, in characters.
const BRIEF_CHARS_PER_SECTION: usize = 80;
/// The brief offered to the model keeps this many earlier sections.
const BRIEF_SECTIONS: usize = 6;
/// Answers asked for before the longest is kept.
const ANSWER_ATTEMPTS: usize = 3;
/// A section or abstract shorter than this (counted characters) is not an answer.
const MIN_SECTION_CHARS: usize = 40;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaperRequest {
    pub title: String,
    pub field: String,
    pub kind: PaperKind,
    pub degree: Degree,
    /// Target length in counted characters (字).
    pub words: u32,
    #[serde(default)]
    pub keywords: Vec<String>,
    /// References the user brought (pasted GB/T 7714 lines): offered to the sections they
    /// suit, before library records.
    #[serde(default)]
    pub own_references: Vec<Reference>,
}

impl PaperRequest {
    /// What the paper is about as a retrieval query: its title and keywords.
    pub fn topic(&self) -> String {
        format!("{} {}", self.title, self.keywords.join(" "))
            .trim()
            .to_string()
    }
}

/// Ids of the user's own references start here (library ids are far smaller, and these stay
/// exact in JavaScript numbers).
pub const OWN_REFERENCE_BASE: u64 = 1 << 40;

/// Whether a reference id is one of the user's own references.
pub fn is_own_reference(id: u64) -> bool {
    id >= OWN_REFERENCE_BASE
}

/// At most this many of the user's references are offered to one section.
const OWN_PER_SECTION: usize = 2;
/// Character-bigram overlap (Dice) from which a user's reference suits a section's query.
const OWN_MIN_OVERLAP: f32 = 0.08;

/// The library, with the user's own references also offered to the sections whose query shares
/// enough of their title's wording (at most `OWN_PER_SECTION` each).
pub struct WithOwnReferences<'a> {
    pub library: &'a dyn ReferenceSource,
    pub own: Vec<Candidate>,
}

impl<'a> WithOwnReferences<'a> {
    pub fn new(library: &'a dyn ReferenceSource, own: &[Reference]) -> Self {
        let own = own
            .iter()
            .enumerate()
            .map(|(i, r)| Candidate {
                id: OWN_REFERENCE_BASE + i as u64,
                reference: r.clone(),
                snippet: String::new(),
            })
            .collect();
        WithOwnReferences { library, own }
    }
}

fn bigrams(text: &str) -> std::collections::HashSet<(char, char)> {
    let chars: Vec<char> = text.chars().filter(|c| c.is_alphanumeric()).collect();
    chars.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Dice overlap of two texts' character bigrams, 0–1.
fn overlap(a: &str, b: &str) -> f32 {
    let (a, b) = (bigrams(a), bigrams(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    2.0 * a.intersection(&b).count() as f32 / (a.len() + b.len()) as f32
}

impl ReferenceSource for WithOwnReferences<'_> {
    fn search<'b>(
        &'b self,
        query: &'b str,
        limit: usize,
    ) -> BoxFuture<'b, Result<Vec<Candidate>, String>> {
        Box::pin(async move {
            let mut scored: Vec<(f32, &Candidate)> = self
                .own
                .iter()
                .map(|c| {
                    let about = format!(
                        "{} {}",
                        c.reference.title,
                        c.reference.container.as_deref().unwrap_or("")
                    );
                    (overlap(query, &about), c)
                })
                .filter(|(score, _)| *score >= OWN_MIN_OVERLAP)
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
            let own: Vec<Candidate> = scored
                .into_iter()
                .take(OWN_PER_SECTION.min(limit))
                .map(|(_, c)| c.clone())
                .collect();
            // The library's closest records first, then the user's: both are offered.
            let mut found = self.library.search(query, limit - own.len()).await?;
            found.extend(own);
            Ok(found)
        })
    }
}

/// A library record offered to the model for a section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    pub id: u64,
    pub reference: Reference,
    /// A few sentences of the record (its abstract), so the model cites what it says.
    pub snippet: String,
}

/// The library as the generator sees it: the server implements it over the similarity library
/// (public records and the user's own uploads), with the sentence encoder and keywords.
pub trait ReferenceSource: Send + Sync {
    fn search<'a>(
        &'a self,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Candidate>, String>>;
}

#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    #[error("{0}")]
    Outline(#[from] OutlineError),
    #[error("模型未能给出可用的大纲（试了 {0} 次），请换个题目表述后重试，或自行上传大纲")]
    NoOutline(usize),
    #[error("{0}")]
    Model(#[from] ChatError),
    #[error("文献检索失败：{0}")]
    Retrieval(String),
    #[error("第 {0} 节不存在")]
    NoSection(usize),
    #[error("论文题目须为 2 到 {max} 个字，现为 {found} 个字")]
    Title { max: usize, found: usize },
}

impl ComposeError {
    pub fn code(&self) -> &'static str {
        match self {
            ComposeError::Outline(e) => e.code(),
            ComposeError::NoOutline(_) => "outline_failed",
            ComposeError::Model(e) => e.code(),
            ComposeError::Retrieval(_) => "retrieval_failed",
            ComposeError::Title { .. } => "title_invalid",
            ComposeError::NoSection(_) => "section_not_found",
        }
    }
}

/// Longest paper title accepted, in characters.
pub const MAX_TITLE_CHARS: usize = 60;

/// A title the generator can work from: 2 to `MAX_TITLE_CHARS` characters once trimmed.
pub fn check_title(title: &str) -> Result<String, ComposeError> {
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let found = title.chars().count();
    if !(2..=MAX_TITLE_CHARS).contains(&found) {
        return Err(ComposeError::Title {
            max: MAX_TITLE_CHARS,
            found,
        });
    }
    Ok(title)
}

/// A target length the generator accepts.
pub fn check_words(words: u32) -> Result<(), ComposeError> {
    if !(outline::MIN_WORDS..=outline::MAX_WORDS).contains(&words) {
        return Err(OutlineError::WordsOutOfRange {
            min: outline::MIN_WORDS,
            max: outline::MAX_WORDS,
            found: u64::from(words),
        }
        .into());
    }
    Ok(())
}

/// One written leaf section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionText {
    /// Indices from the chapter down to the leaf.
    pub path: Vec<usize>,
    /// The numbered heading ("1.2 研究方法").
    pub heading: String,
    pub text: String,
    /// Record ids cited, in order of first citation.
    pub cited: Vec<u64>,
    /// Citations the model wrote that named no offered record, removed.
    pub removed_citations: usize,
    /// Citations the engine placed on sentences sharing an offered record's specific wording
    /// (the model used the record without marking it).
    #[serde(default)]
    pub placed_citations: usize,
    /// Shorter than asked after every attempt: shown as such, never passed off as finished.
    #[serde(default)]
    pub weak: bool,
}

/// A paper being written: what a durable task stores after every section, so a restart goes on
/// from the last finished one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draft {
    pub outline: Outline,
    /// Every record offered to some section, by id.
    pub catalog: HashMap<u64, Candidate>,
    pub sections: Vec<SectionText>,
    /// Record ids in citation order: reference list item k is `citation_order[k-1]`.
    pub citation_order: Vec<u64>,
    pub abstract_zh: String,
    pub abstract_en: String,
    pub keywords: Vec<String>,
    /// The keywords in English, for the Abstract's "Key words".
    #[serde(default)]
    pub keywords_en: Vec<String>,
    /// Set for a document written from a finished paper (开题报告, 任务书, 文献综述).
    #[serde(default)]
    pub brief: Option<DocumentBrief>,
}

/// What the writer of a document about a finished paper is told besides its outline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentBrief {
    /// The kind of document, e.g. 开题报告.
    pub genre: String,
    /// The paper it is about: its outline and abstract.
    pub context: String,
    /// What each leaf (in reading order) should hold, beyond its title.
    pub hints: Vec<String>,
}

/// One reference as the paper lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedReference {
    pub library_id: u64,
    pub title: String,
    pub formatted: String,
}

impl Draft {
    /// The reference list in citation order, GB/T 7714-2015 formatted. Every entry is a record
    /// the source returned; a cited id missing from the catalog cannot happen, and is skipped.
    pub fn references(&self) -> Vec<ListedReference> {
        self.citation_order
            .iter()
            .filter_map(|id| self.catalog.get(id))
            .map(|c| ListedReference {
                library_id: c.id,
                title: c.reference.title.clone(),
                formatted: gbt7714::format(&c.reference),
            })
            .collect()
    }

    /// Counted characters of the body written so far.
    pub fn chars(&self) -> usize {
        self.sections.iter().map(|s| counted_chars(&s.text)).sum()
    }

    /// Leaves still to write, in reading order.
    pub fn remaining(&self) -> usize {
        self.outline
            .leaves()
            .len()
            .saturating_sub(self.sections.len())
    }
}

/// What the generator reports while it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    Outline,
    Section {
        done: usize,
        total: usize,
        heading: String,
    },
    Abstract,
}

/// Characters that count toward a length: letters and digits, CJK included, as the checks count.
pub fn counted_chars(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphanumeric()).count()
}

/// The prompt in force (the console's version, else the built-in one), filled in.
fn fill(prompt: &Prompt, pairs: &[(&str, String)]) -> String {
    llm::prompts::fill(prompt.text().trim_end(), pairs)
}

/// Chapters below which an outline is asked for again (the bench's outline validity: 4–8).
const MIN_FULL_CHAPTERS: usize = 4;

/// Chapters to ask for: a short paper has fewer.
fn chapters_for(words: u32) -> usize {
    match words {
        0..=6_000 => 4,
        6_001..=12_000 => 5,
        12_001..=20_000 => 6,
        _ => 7,
    }
}

/// Asks the model for an outline — the chapters first, then each chapter's sections, short
/// questions a small local model answers far better than one long one — and gives every node a
/// budget summing to the target. Titles that are not titles (labels, the paper's own title,
/// repeats) are dropped; too few chapters is an error, never a stock outline.
pub async fn plan_outline(
    model: &dyn ChatModel,
    request: &PaperRequest,
) -> Result<Outline, ComposeError> {
    let wanted = chapters_for(request.words);
    let system = fill(&OUTLINE_PROMPT, &[("chapters", wanted.to_string())]);
    let mut user = format!(
        "论文题目：{}\n专业：{}\n类型：{}（{}）",
        request.title,
        request.field,
        request.kind.label(),
        request.degree.label(),
    );
    if !request.keywords.is_empty() {
        user.push_str(&format!("\n关键词：{}", request.keywords.join("；")));
    }
    // A thesis ends with its conclusions; the prompt asks for them, a small model forgets.
    let concludes = |t: &String| {
        ["结论", "总结", "展望", "结语"]
            .iter()
            .any(|w| t.contains(w))
    };
    let concluded = |mut chapters: Vec<String>| {
        if !chapters.last().is_some_and(concludes) {
            chapters.retain(|t| !concludes(t));
            chapters.truncate(wanted + 1);
            chapters.push(CONCLUSION_TITLE.to_string());
        }
        chapters
    };
    // Three titles are an outline; fewer than four chapters is a thin one (the bench's 纳米脂质体
    // paper had three), so the model is asked again and the fullest answer kept.
    let mut chapters: Vec<String> = Vec::new();
    for _ in 0..OUTLINE_ATTEMPTS {
        let reply = model
            .chat(&short_request(&system, &user, 300), None)
            .await?;
        let titles = titles_in(&reply.text, &request.title, wanted + 2);
        if titles.len() >= 3 {
            let answer = concluded(titles);
            if answer.len() > chapters.len() {
                chapters = answer;
            }
        }
        if chapters.len() >= MIN_FULL_CHAPTERS {
            break;
        }
    }
    if chapters.is_empty() {
        return Err(ComposeError::NoOutline(OUTLINE_ATTEMPTS));
    }
    let sections_per_chapter = if request.words <= 6_000 { 2 } else { 3 };
    let mut outline = Outline::default();
    let last = chapters.len() - 1;
    for (i, title) in chapters.into_iter().enumerate() {
        let mut chapter = Node::new(title.clone());
        // The conclusion is one leaf; every other chapter is worth its sections.
        if i != last {
            let system = fill(
                &SECTIONS_PROMPT,
                &[("sections", (sections_per_chapter + 1).to_string())],
            );
            let user = format!(
                "论文题目：{}\n专业：{}\n这一章：第{}章 {title}",
                request.title,
                request.field,
                i + 1
            );
            let reply = model
                .chat(&short_request(&system, &user, 200), None)
                .await?;
            chapter.children = titles_in(&reply.text, &request.title, sections_per_chapter + 1)
                .into_iter()
                .filter(|t| *t != title)
                .map(|t| Node::new(without_chapter_prefix(&t, &title)))
                .collect();
            // One section is no division: the chapter is written as one piece.
            if chapter.children.len() < 2 {
                chapter.children.clear();
            }
        }
        outline.chapters.push(chapter);
    }
    let mut outline = usable_outline(outline);
    fit_to_length(&mut outline, request.words);
    loop {
        outline::allocate_budgets(&mut outline, request.words);
        match outline::validate(&outline, request.words) {
            Ok(()) => return Ok(outline),
            // Too short for this many parts: fold the sections of the chapter with the smallest
            // leaf into it, or drop a body chapter.
            Err(OutlineError::BudgetTooSmall { .. }) => {
                let smallest = outline
                    .leaves()
                    .into_iter()
                    .filter(|(path, _)| path.len() > 1)
                    .min_by_key(|(_, node)| node.budget)
                    .map(|(path, _)| path[0]);
                match smallest {
                    Some(chapter) => outline.chapters[chapter].children.clear(),
                    None if outline.chapters.len() > 3 => {
                        outline.chapters.remove(outline.chapters.len() - 2);
                    }
                    None => return Err(ComposeError::NoOutline(OUTLINE_ATTEMPTS)),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn short_request(system: &str, user: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system(system), Message::user(user)],
        temperature: 0.5,
        max_tokens: Some(max_tokens),
        copy_guard: None,
    }
}

/// The headings in a model's list, numbering stripped: at most `most`, each a real title.
fn titles_in(text: &str, paper_title: &str, most: usize) -> Vec<String> {
    // The paper's title with or without its 《》 and quotes (bench, 红楼梦: a chapter "红楼梦人物对话
    // 中的称谓语研究" under the title "《红楼梦》人物对话中的称谓语研究").
    let words = |s: &str| {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<String>()
    };
    let paper_words = words(paper_title);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let title = outline::clean_title(line);
        let title = title
            .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | '、' | ' '))
            .trim_matches(|c: char| matches!(c, '：' | ':' | '*' | '-' | ' '))
            .to_string();
        let chars = title.chars().count();
        let is_label = ["标题", "章节", "大纲", "目录", "以下", "如下"]
            .iter()
            .any(|w| title.contains(w));
        if (2..=outline::MAX_TITLE_CHARS).contains(&chars)
            && !is_label
            && words(&title) != paper_words
            && !title.ends_with('。')
            && !out.contains(&title)
        {
            out.push(title);
        }
        if out.len() >= most {
            break;
        }
    }
    out
}

/// The last chapter's title when the model gave none (the user can rename it in the outline).
const CONCLUSION_TITLE: &str = "结论与展望";

/// A section title without its chapter's title before a colon ("药物经济学分析：成本效益分析"
/// under 第2章 药物经济学分析, read on the bench): the numbering already says which chapter.
fn without_chapter_prefix(section: &str, chapter: &str) -> String {
    section
        .strip_prefix(chapter)
        .and_then(|rest| rest.strip_prefix(['：', ':']))
        .map(str::trim)
        .filter(|rest| rest.chars().count() >= 2)
        .unwrap_or(section)
        .to_string()
}

/// A section shorter than this (characters) says nothing: a short paper has fewer sections.
const MIN_LEAF_WORDS: u32 = 200;

/// Drops sections, from the chapter that has most, until every leaf can get `MIN_LEAF_WORDS`.
fn fit_to_length(outline: &mut Outline, words: u32) {
    let most = (words / MIN_LEAF_WORDS).max(1) as usize;
    while outline.leaves().len() > most {
        let Some(chapter) = outline
            .chapters
            .iter_mut()
            .filter(|c| !c.children.is_empty())
            .max_by_key(|c| c.children.len())
        else {
            break;
        };
        chapter.children.pop();
        if chapter.children.len() < 2 {
            chapter.children.clear();
        }
    }
}

/// Trims what a model's outline may overdo: too many chapters or sections, repeated titles.
fn usable_outline(mut outline: Outline) -> Outline {
    let mut seen = std::collections::HashSet::new();
    outline.chapters.retain(|c| seen.insert(c.title.clone()));
    outline.chapters.truncate(outline::MAX_CHAPTERS);
    let mut budget = outline::MAX_SECTIONS;
    for chapter in &mut outline.chapters {
        let mut seen = std::collections::HashSet::new();
        chapter.children.retain(|s| seen.insert(s.title.clone()));
        chapter.children.truncate(budget.min(6));
        for section in &mut chapter.children {
            section.children.truncate(4);
        }
        let used: usize = chapter.children.iter().map(|s| 1 + s.children.len()).sum();
        budget = budget.saturating_sub(used);
    }
    outline
}

/// Retrieves the records for every leaf of the outline (title and heading as the query), keeps
/// their ids on the leaves and every record in the catalog.
pub async fn attach_references(
    source: &dyn ReferenceSource,
    request: &PaperRequest,
    draft: &mut Draft,
) -> Result<(), ComposeError> {
    let paths: Vec<Vec<usize>> = draft.outline.leaves().into_iter().map(|(p, _)| p).collect();
    for path in paths {
        let Some(node) = node_mut(&mut draft.outline, &path) else {
            continue;
        };
        let query = format!(
            "{} {} {}",
            request.title,
            node.title,
            request.keywords.join(" ")
        );
        let found = source
            .search(query.trim(), REFERENCES_PER_SECTION)
            .await
            .map_err(ComposeError::Retrieval)?;
        node.references = found.iter().map(|c| c.id).collect();
        for candidate in found {
            draft.catalog.entry(candidate.id).or_insert(candidate);
        }
    }
    Ok(())
}

fn node_mut<'a>(outline: &'a mut Outline, path: &[usize]) -> Option<&'a mut Node> {
    let (first, rest) = path.split_first()?;
    let mut node = outline.chapters.get_mut(*first)?;
    for &i in rest {
        node = node.children.get_mut(i)?;
    }
    Some(node)
}

fn node_at<'a>(outline: &'a Outline, path: &[usize]) -> Option<&'a Node> {
    let (first, rest) = path.split_first()?;
    let mut node = outline.chapters.get(*first)?;
    for &i in rest {
        node = node.children.get(i)?;
    }
    Some(node)
}

/// The numbered heading of leaf `index` (in reading order), as its section will carry it.
pub fn leaf_heading(outline: &Outline, index: usize) -> String {
    outline
        .leaves()
        .get(index)
        .map(|(path, _)| numbered(outline, path))
        .unwrap_or_default()
}

/// The numbered heading of the node at `path` ("第2章 …", "2.1 …", "2.1.3 …").
fn numbered(outline: &Outline, path: &[usize]) -> String {
    let title = node_at(outline, path).map_or("", |n| n.title.as_str());
    let numbers: Vec<String> = path.iter().map(|i| (i + 1).to_string()).collect();
    if path.len() == 1 {
        format!("第{}章 {title}", numbers[0])
    } else {
        format!("{} {title}", numbers.join("."))
    }
}

/// A short brief of what the sections before this one said: their headings and first sentences.
fn brief(sections: &[SectionText]) -> String {
    let from = sections.len().saturating_sub(BRIEF_SECTIONS);
    sections[from..]
        .iter()
        .map(|s| {
            format!(
                "{}：{}",
                s.heading,
                opening(&s.text, BRIEF_CHARS_PER_SECTION)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A section's opening in about `chars` characters, in whole words: its first sentences while
/// they fit, or its first sentence up to the last comma that fits, as a sentence. Cut mid-word
/// ("…等方"), the local model copied the pieces into the abstract as they were.
fn opening(text: &str, chars: usize) -> String {
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let sentences = split_sentences(first_line.trim());
    let mut out = String::new();
    for sentence in &sentences {
        if out.chars().count() + sentence.chars().count() > chars {
            break;
        }
        out.push_str(sentence.trim());
    }
    if !out.is_empty() {
        return out;
    }
    let first = sentences.first().map_or("", |s| s.trim());
    let fitting: String = first.chars().take(chars).collect();
    match fitting.rfind(['，', '；']) {
        Some(comma) if comma > 0 => format!("{}。", &fitting[..comma]),
        _ => first.to_string(),
    }
}

/// The outline as the model reads it: numbered headings, one per line.
fn outline_listing(outline: &Outline) -> String {
    outline
        .numbered_titles()
        .into_iter()
        .map(|(number, title, level)| format!("{}{number} {title}", "  ".repeat(level - 1)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes the next unwritten leaf of the draft; returns false when every leaf is written.
pub async fn write_next_section(
    model: &dyn ChatModel,
    request: &PaperRequest,
    draft: &mut Draft,
    on_delta: Option<&(dyn Fn(&str) + Send + Sync)>,
) -> Result<bool, ComposeError> {
    let next = draft.sections.len();
    if next >= draft.outline.leaves().len() {
        return Ok(false);
    }
    let section = write_leaf(model, request, draft, next, None, on_delta).await?;
    extend_order(draft, &section);
    draft.sections.push(section);
    Ok(true)
}

/// What the sections written so far fell short of their budgets, net of what others ran over,
/// at most half of `budget` (the next section's own): asked of the next section, so that the
/// paper comes out at the length asked for. Run H: the 黄芩苷 paper delivered 834 字 of 1,000,
/// its sections' copies of the records dropped, each section still long enough to be kept.
fn carried_shortfall(draft: &Draft, budget: u32) -> u32 {
    let net: i64 = draft
        .sections
        .iter()
        .zip(draft.outline.leaves())
        .map(|(section, (_, node))| i64::from(node.budget) - counted_chars(&section.text) as i64)
        .sum();
    u32::try_from(net.max(0))
        .unwrap_or(u32::MAX)
        .min(budget / 2)
}

/// Longest instruction accepted for rewriting a section ("更学术", "扩写到800字", "加一个表格").
pub const MAX_INSTRUCTION_CHARS: usize = 200;

/// Writes written section `index` again, following the user's `instruction` when given, and
/// numbers the paper's citations anew. The earlier text is the caller's to keep.
pub async fn rewrite_section(
    model: &dyn ChatModel,
    request: &PaperRequest,
    draft: &mut Draft,
    index: usize,
    instruction: Option<&str>,
    on_delta: Option<&(dyn Fn(&str) + Send + Sync)>,
) -> Result<(), ComposeError> {
    if index >= draft.sections.len() {
        return Err(ComposeError::NoSection(index + 1));
    }
    let section = write_leaf(model, request, draft, index, instruction, on_delta).await?;
    extend_order(draft, &section);
    draft.sections[index] = section;
    renumber_citations(draft);
    Ok(())
}

/// A new section's records, numbered after those already cited (as `write_leaf` numbered them).
fn extend_order(draft: &mut Draft, section: &SectionText) {
    for id in &section.cited {
        if !draft.citation_order.contains(id) {
            draft.citation_order.push(*id);
        }
    }
}

/// Numbers every citation of the draft again in reading order (after a section was edited,
/// rewritten or emptied); marks naming no record are removed and counted on their section.
pub fn renumber_citations(draft: &mut Draft) {
    let texts: Vec<String> = draft.sections.iter().map(|s| s.text.clone()).collect();
    let (resolved, order) = crate::citations::renumber(&texts, &draft.citation_order);
    for (section, r) in draft.sections.iter_mut().zip(resolved) {
        section.text = r.text;
        section.cited = r.cited;
        section.removed_citations += r.removed;
    }
    draft.citation_order = order;
}

/// Writes leaf `index` (in reading order) from the outline, its budget, the brief of the
/// sections before it and its records; citations continue the draft's numbering.
async fn write_leaf(
    model: &dyn ChatModel,
    request: &PaperRequest,
    draft: &Draft,
    index: usize,
    instruction: Option<&str>,
    on_delta: Option<&(dyn Fn(&str) + Send + Sync)>,
) -> Result<SectionText, ComposeError> {
    let leaves: Vec<Vec<usize>> = draft.outline.leaves().into_iter().map(|(p, _)| p).collect();
    let path = leaves
        .get(index)
        .cloned()
        .ok_or(ComposeError::NoSection(index + 1))?;
    let node = node_at(&draft.outline, &path).ok_or(ComposeError::NoSection(index + 1))?;
    let offered: Vec<u64> = node.references.clone();
    // Written in order, a section is also asked for what those before it fell short of; it is
    // judged short (weak, asked again) by its own budget still.
    let carried = if index == draft.sections.len() && instruction.is_none() {
        carried_shortfall(draft, node.budget)
    } else {
        0
    };
    let budget = node.budget + carried;
    let heading = numbered(&draft.outline, &path);
    let chapter = numbered(&draft.outline, &path[..1]);
    let pairs = [
        ("degree", request.degree.label().to_string()),
        ("title", request.title.clone()),
        ("field", request.field.clone()),
        ("budget", budget.to_string()),
        (
            "genre",
            draft
                .brief
                .as_ref()
                .map(|b| b.genre.clone())
                .unwrap_or_default(),
        ),
    ];
    let mut user = String::new();
    let system = match &draft.brief {
        Some(b) => {
            user.push_str(&format!("论文概况：\n{}\n\n{}提纲：\n", b.context, b.genre));
            fill(&DOCUMENT_PROMPT, &pairs)
        }
        None => {
            user.push_str("论文大纲：\n");
            fill(&SECTION_PROMPT, &pairs)
        }
    };
    user.push_str(&format!("{}\n\n", outline_listing(&draft.outline)));
    let before = brief(&draft.sections[..index.min(draft.sections.len())]);
    if !before.is_empty() {
        user.push_str(&format!("前文要点：\n{before}\n\n"));
    }
    if offered.is_empty() {
        user.push_str("本节没有可引用的文献，请不要标注任何引用。\n\n");
    } else {
        // Told only where records are offered: without them the local model wrote "已有研究指出"
        // before claims nobody made.
        user.push_str(
            "可引用的文献（都是别人的研究：引用时写成“已有研究指出……”“有学者发现……”，\
             不得把其中的研究对象、样本、数据和结论写成本文自己的工作）：\n",
        );
        for (i, id) in offered.iter().enumerate() {
            if let Some(c) = draft.catalog.get(id) {
                let snippet: String = c.snippet.chars().take(160).collect();
                user.push_str(&format!(
                    "[ref:{}] {}。{}\n",
                    i + 1,
                    c.reference.title,
                    snippet
                ));
            }
        }
        user.push('\n');
    }
    match draft.brief.as_ref() {
        Some(b) => {
            user.push_str(&format!(
                "请撰写{}的“{}”部分，约 {budget} 字。",
                b.genre, node.title
            ));
            if let Some(hint) = b.hints.get(index).filter(|h| !h.is_empty()) {
                user.push_str(hint);
            }
        }
        None => user.push_str(&format!(
            "请撰写“{heading}”这一节的正文（属于{chapter}），约 {budget} 字。"
        )),
    }
    let mut wanted_budget = budget;
    if let Some(instruction) = instruction.map(str::trim).filter(|i| !i.is_empty()) {
        let instruction: String = instruction.chars().take(MAX_INSTRUCTION_CHARS).collect();
        if let Some(earlier) = draft
            .sections
            .get(index)
            .filter(|s| !s.text.trim().is_empty())
        {
            user.push_str(&format!("\n\n本节原先的正文：\n{}", earlier.text));
        }
        user.push_str(&format!("\n\n修改要求：{instruction}"));
        if let Some(asked) = asked_length(&instruction) {
            wanted_budget = asked;
        }
    }
    // The records' words are the model's to read, not to copy: measured on the bench, the
    // local model pasted whole abstracts it was offered (17 % of a paper matched the library).
    // Its decoder is kept from repeating runs of them (dynamic blocking); endpoints never see it.
    let snippets: Vec<String> = offered
        .iter()
        .filter_map(|id| draft.catalog.get(id))
        .map(|c| c.snippet.clone())
        .collect();
    let copy_guard = if snippets.is_empty() {
        // Nothing to copy, but the guard's language bar holds, as for the abstract: a section
        // without records was written with no bar at all and drifted into English (run F, the
        // 情感分类 paper: "捕捉文本中的长-range依赖关系"). The title, the heading and the other
        // sections are the Latin words it may use.
        let others: Vec<&str> = draft.sections.iter().map(|s| s.text.as_str()).collect();
        Some(CopyGuard {
            source: format!("{}\n{}\n{}", request.title, node.title, others.join("\n")),
            keep: request.keywords.clone(),
            probability: 0.0,
            run: SNIPPET_COPY_RUN,
            chars: 0,
        })
    } else {
        Some(CopyGuard {
            source: snippets.join("\n"),
            keep: request.keywords.clone(),
            probability: SNIPPET_COPY_BLOCK,
            run: SNIPPET_COPY_RUN,
            chars: SNIPPET_COPY_CHARS,
        })
    };
    let chat = ChatRequest {
        messages: vec![Message::system(system), Message::user(user)],
        temperature: 0.7,
        // About one token per Chinese character, with room; a runaway answer is cut.
        max_tokens: Some((wanted_budget as f32 * 1.4) as u32 + 160),
        copy_guard,
    };
    let title = node.title.clone();
    let wanted = ((wanted_budget - carried) as usize * 3 / 10).max(MIN_SECTION_CHARS);
    // What the other sections already say: shown their summaries, the local model repeats their
    // sentences; an endpoint's text is kept as written.
    let said = SaidBefore::of(
        model.is_local(),
        draft
            .sections
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, s)| s.text.as_str()),
    );
    // Each offered record as the model saw it, and the words that are the student's own.
    let records: Vec<String> = offered
        .iter()
        .map(|id| {
            draft
                .catalog
                .get(id)
                .map(|c| format!("{}。{}", c.reference.title, c.snippet))
                .unwrap_or_default()
        })
        .collect();
    let common = format!("{} {} {}", request.title, title, request.keywords.join(" "));
    let body = best_answer(model, &chat, on_delta, wanted, |text| {
        let text = without_paper_title(text, &request.title);
        let text = end_at_sentence(&drop_inner_headings(&clean_section(
            &text, &title, &heading,
        )));
        let text = if model.is_local() {
            without_near_copies(
                &without_claimed_studies(&text, &snippets),
                &records,
                &common,
            )
        } else {
            text
        };
        cap_length(
            &without_repeats_then_pointers(&said, &text, model.is_local()),
            wanted_budget,
        )
    })
    .await?;
    // A chapter of the thesis itself (the package's documents have parts, not chapters).
    let body = if path.len() == 1 && draft.brief.is_none() {
        chapter_voice(&body)
    } else {
        body
    };
    let weak = counted_chars(&body) < wanted;
    // Citations are grounded in what the section says before they are resolved: the local
    // model uses the records but seldom marks them (see `grounding`).
    let grounded = crate::grounding::ground(&body, &records, &common);
    let mut citations = CitationMap::from_order(draft.citation_order.iter().copied());
    let resolved = citations.resolve(&grounded.text, &offered);
    Ok(SectionText {
        path,
        heading,
        text: tidy_resolved(&resolved.text),
        cited: resolved.cited,
        removed_citations: resolved.removed,
        placed_citations: grounded.placed,
        weak,
    })
}

/// A length the user asked for ("扩写到800字", "压缩到 300 字"), within reason.
fn asked_length(instruction: &str) -> Option<u32> {
    let digits: String = instruction
        .split('字')
        .next()?
        .chars()
        .rev()
        .skip_while(|c| c.is_whitespace())
        .take_while(|c| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let n: u32 = digits.parse().ok()?;
    (50..=5000).contains(&n).then_some(n)
}

/// Asks up to `ANSWER_ATTEMPTS` times until the cleaned answer has `wanted` counted characters;
/// the longest answer otherwise (the caller marks it weak rather than adopting it silently).
async fn best_answer(
    model: &dyn ChatModel,
    chat: &ChatRequest,
    on_delta: Option<&(dyn Fn(&str) + Send + Sync)>,
    wanted: usize,
    clean: impl Fn(&str) -> String,
) -> Result<String, ComposeError> {
    let mut best = String::new();
    for _ in 0..ANSWER_ATTEMPTS {
        let reply = model.chat(chat, on_delta).await?;
        let text = clean(&reply.text);
        if counted_chars(&text) > counted_chars(&best) {
            best = text;
        }
        if counted_chars(&best) >= wanted {
            break;
        }
    }
    Ok(best)
}

/// The model's answer as body text: markdown, repeated headings and echoes of the request
/// removed, blank lines folded.
fn clean_section(text: &str, title: &str, heading: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let raw: Vec<&str> = text.lines().collect();
    let mut in_code = false;
    for (i, line) in raw.iter().enumerate() {
        // A fenced code block: the thesis body is prose, and the small model's code came out
        // cut short, its comments read as headings ("# 下载停用词" lost its '#'). Dropped whole,
        // to the end when the fence is never closed.
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let trimmed = line.trim().trim_start_matches('#').trim().replace("**", "");
        // A markdown list item is a line of prose here.
        let trimmed = trimmed
            .strip_prefix(['-', '*', '•', '·'])
            .map_or(trimmed.as_str(), str::trim_start)
            .to_string();
        if trimmed.is_empty() {
            continue;
        }
        let bare = trimmed.trim_end_matches(['：', ':']).trim();
        // The model's own reference list: the paper's list is built from the records, and
        // what follows such a heading is an attempt to copy them.
        if matches!(bare, "参考文献" | "参考资料" | "References" | "REFERENCES") {
            break;
        }
        // "[1] 题名。摘要…" without that heading: an entry of such a list, the record pasted
        // (read on the bench: 15 % of a paper matched the library this way). Prose does not
        // open with a citation mark.
        if crate::citations::marker_len(&trimmed).is_some() {
            continue;
        }
        // A summary heading inside a section ("结论"): the outline has its own conclusion.
        if matches!(
            bare,
            "结论" | "小结" | "总结" | "结语" | "本章小结" | "本节小结"
        ) {
            continue;
        }
        let trimmed = enumeration_as_prose(&normalize_citation_markers(&trimmed));
        let trimmed = without_heading_lead_in(&trimmed, heading).to_string();
        // The model repeating the heading, or the request, instead of writing.
        let unnumbered = outline::clean_title(&trimmed);
        let short = trimmed.chars().count() <= title.chars().count() + 16;
        // Or restating it in other words on a line of its own ("汪曾祺的生活方式与现代生活的启示"
        // over "汪曾祺的生活方式及其对现代生活的启示", read on the bench); a caption stays.
        let is_caption = trimmed.starts_with(['表', '图'])
            && trimmed.chars().nth(1).is_some_and(|c| c.is_ascii_digit());
        let restates_heading = short
            && !ends_sentence(&trimmed)
            && !is_caption
            && overlap(&unnumbered, title) >= HEADING_ECHO_OVERLAP;
        let echoes_heading =
            short && (unnumbered == title || trimmed.contains(title)) || restates_heading;
        let echoes_request = trimmed.contains("这一节的正文")
            || trimmed.starts_with("本节正文")
            || (trimmed.starts_with('《') && trimmed.ends_with('》') && short)
            || trimmed.contains("之下的“")
            || (trimmed.starts_with(heading) && short);
        if echoes_heading || echoes_request {
            continue;
        }
        // A bare label ("定义：", "特点:") over lines of its own: a list's heading, not prose.
        // One that leads into a table ("如表所示：") stays.
        let table_follows = raw[i + 1..]
            .iter()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.trim_start().starts_with('|'));
        if !bare.is_empty()
            && bare.len() < trimmed.len()
            && bare.chars().count() <= LABEL_CHARS
            && !table_follows
        {
            continue;
        }
        if trimmed.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) && trimmed.contains('|') {
            // A markdown table's rule line: tables are recognised from their cell rows.
            continue;
        }
        // A sentence with a character the decoder could not complete ("牛�苷", run I: the guard
        // kept the second byte of 蒡 from following the first) is garbled; it goes.
        let trimmed: String = split_sentences(&trimmed)
            .into_iter()
            .filter(|s| !s.contains(char::REPLACEMENT_CHARACTER))
            .collect();
        if trimmed.trim().is_empty() {
            continue;
        }
        // A sentence broken over two lines ("…“高举‘借鉴’和‘特色’两" / "面大旗”。"): the local
        // decoder, kept from copying a record, sometimes answers with a line break (read on
        // the bench). A short line or a numbered one may be a heading, and stays apart.
        if let Some(last) = lines.last_mut()
            && counted_chars(last) > INNER_HEADING_CHARS
            && last.chars().last().is_some_and(char::is_alphanumeric)
            && ends_sentence(&trimmed)
            && numbered_prefix(&trimmed).is_none()
            && !trimmed.contains('|')
        {
            last.push_str(&trimmed);
            continue;
        }
        lines.push(trimmed);
    }
    lines.join("\n")
}

/// `line` without a lead-in that names its own numbered section ("在第3.2 基于农村居民消费行为的分析中，
/// 已有研究指出…", read on the bench): the sentence goes on without it. Only the numbered heading
/// counts: "在数字普惠金融中，…" under "2.1 数字普惠金融" says something.
fn without_heading_lead_in<'a>(line: &'a str, heading: &str) -> &'a str {
    let numbered = heading.trim_start_matches('第');
    if !numbered.starts_with(|c: char| c.is_ascii_digit()) {
        return line;
    }
    let Some(rest) = line.strip_prefix('在') else {
        return line;
    };
    let Some(after) = rest.trim_start_matches('第').strip_prefix(numbered) else {
        return line;
    };
    for tail in ["这一节中，", "一节中，", "部分中，", "中，", "，"] {
        if let Some(body) = after.strip_prefix(tail)
            && !body.trim().is_empty()
        {
            return body;
        }
    }
    line
}

/// Bigram overlap with the section's title from which a line without a sentence's end is the
/// title restated.
const HEADING_ECHO_OVERLAP: f32 = 0.6;

/// Longest bare label line ("主要特点：") dropped from a section.
const LABEL_CHARS: usize = 6;

/// A chapter written as one leaf speaks of itself as a chapter: asked for "这一节", the model
/// writes "本节将介绍…" under a chapter heading. Only where 本节 opens a clause ("在本节中" too),
/// so words such as 基本节点 are left alone.
fn chapter_voice(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let opens_clause = previous.is_none_or(|p| !p.is_alphanumeric() || p == '在');
        if opens_clause && rest.starts_with("本节") {
            out.push_str("本章");
            rest = &rest["本节".len()..];
            previous = Some('节');
            continue;
        }
        out.push(c);
        previous = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Openings that point back at something before the section ("他的生活描写…", "它是指…",
/// "为了实现这一目标，…"): read on the bench, the local model continuing the section it was shown
/// the summary of, so that the pronoun names nothing in this one.
const POINTING_BACK: &[&str] = &[
    "他们",
    "她们",
    "它们",
    "他",
    "她",
    "它",
    "其",
    "这一目标",
    "为了实现这一目标",
    "这一点",
];

/// Connectives that join a sentence to the one before it: opening a section, they join it to
/// nothing ("然而，在实际应用中，…", run H, the 配方颗粒 paper's chapter 3).
const OPENING_CONNECTIVES: &[&str] = &[
    "然而",
    "但是",
    "不过",
    "因此",
    "所以",
    "因而",
    "此外",
    "另外",
    "同时",
    "接着",
    "与此同时",
];

/// The section without an opening sentence that points back at the section before it
/// (`POINTING_BACK`), when a sentence of its own follows (kept when it is all there is), and
/// without a connective opening it (`OPENING_CONNECTIVES`; its sentence stays).
/// `text` without what the paper already says, then (local model) without an opening that
/// points back. In this order: a repeated opening had hidden a pointing one behind it (run I,
/// 汪曾祺 chapter 2 opened "他的生活描写不仅…").
fn without_repeats_then_pointers(said: &SaidBefore, text: &str, local: bool) -> String {
    let text = said.drop_repeats(text);
    if local {
        without_pointer_back_opening(&text)
    } else {
        text
    }
}

fn without_pointer_back_opening(text: &str) -> String {
    let text = text.trim_start();
    if let Some(rest) = OPENING_CONNECTIVES.iter().find_map(|c| {
        text.strip_prefix(c)?
            .strip_prefix(['，', ','])
            .filter(|rest| counted_chars(rest) > 0)
    }) {
        return without_pointer_back_opening(rest);
    }
    let first_line = text.lines().next().unwrap_or_default();
    let Some(first) = split_sentences(first_line).into_iter().next() else {
        return text.to_string();
    };
    let opening = first.trim_start();
    // Words opening with such a character that point at nothing (其实 is not 其).
    let own_word = [
        "其实", "其次", "其中", "其他", "其它", "其余", "他人", "他乡",
    ]
    .iter()
    .any(|w| opening.starts_with(w));
    let points_back = POINTING_BACK.iter().any(|w| opening.starts_with(w)) && !own_word;
    // `first` opens `first_line`, which opens `text`.
    let rest = text[first.len()..].trim_start();
    if !points_back || counted_chars(rest) < 10 {
        return text.to_string();
    }
    rest.to_string()
}

/// A numbered list item that is a paragraph ("1. 日常生活中的观察：汪曾祺…") in the thesis way of
/// numbering within a text ("（1）日常生活中的观察：…"); a short numbered line is a heading and left
/// to `drop_inner_headings`.
fn enumeration_as_prose(line: &str) -> String {
    let digits: String = line.chars().take_while(char::is_ascii_digit).collect();
    let rest = &line[digits.len()..];
    let Some(after) = rest
        .strip_prefix(['.', '、', '．', ')', '）'])
        .filter(|a| !a.starts_with(|c: char| c.is_ascii_digit()))
    else {
        return line.to_string();
    };
    // Short, it is a paragraph only when it ends as a sentence does (run I, 数字普惠金融:
    // "5. 普惠性：面向所有社会成员，提供公平、公正的金融服务。" after （1）–（4）).
    let length = after.chars().count();
    let paragraph = length >= 30 || (length >= 12 && ends_sentence(after));
    if digits.is_empty() || digits.len() > 2 || !paragraph {
        return line.to_string();
    }
    format!("（{digits}）{}", after.trim_start())
}

/// Character n-grams of what earlier sections say, to drop a sentence the model repeats from
/// them: shown the summaries of the sections before, a small model copies their sentences
/// (measured on the bench: one sentence opened three chapters of the same paper).
struct SaidBefore {
    grams: HashSet<Vec<char>>,
    /// Only the local model's answers are tidied so.
    local: bool,
}

/// Length of the n-grams compared, and the share of a sentence's n-grams already said for the
/// sentence to count as a repeat. The share of its characters inside such n-grams (80 %) was
/// tried after run E and reverted: on run F's papers it kept a restated sentence this drops
/// (62 % of its 8-grams, 76 % of its characters) and caught nothing this misses.
const REPEAT_GRAM: usize = 8;
/// Shorter sentences said twice word for word stay ("是。", a table's "无。").
const MIN_EXACT_REPEAT_CHARS: usize = 6;
const REPEAT_SHARE: f32 = 0.6;

impl SaidBefore {
    fn of<'a>(local: bool, texts: impl Iterator<Item = &'a str>) -> Self {
        let mut grams = HashSet::new();
        for text in texts {
            grams.extend(sentence_grams(text));
        }
        SaidBefore { grams, local }
    }

    /// `text` without the sentences that repeat earlier sections or an earlier sentence of its
    /// own; a sentence too short to judge by its n-grams stays unless it is said word for word
    /// again (run I: "广谱抗生素的使用比例较高。" twice in one abstract).
    fn drop_repeats(&self, text: &str) -> String {
        if !self.local {
            return text.to_string();
        }
        let mut seen = self.grams.clone();
        let mut said: HashSet<String> = HashSet::new();
        let mut out = Vec::new();
        for line in text.lines() {
            let mut kept = String::new();
            // Two tables may share a row.
            let table_row = line.trim_start().starts_with('|') || line.matches('|').count() >= 2;
            for sentence in split_sentences(line) {
                let grams = sentence_grams(sentence);
                let repeated = grams.iter().filter(|g| seen.contains(*g)).count();
                let words: String = sentence.chars().filter(|c| c.is_alphanumeric()).collect();
                let is_repeat = (grams.len() >= 8
                    && repeated as f32 >= grams.len() as f32 * REPEAT_SHARE)
                    || (!table_row
                        && words.chars().count() >= MIN_EXACT_REPEAT_CHARS
                        && !said.insert(words));
                if !is_repeat {
                    kept.push_str(sentence);
                }
                seen.extend(grams);
            }
            if !kept.trim().is_empty() {
                out.push(kept);
            }
        }
        out.join("\n")
    }
}

/// A line cut after each 。！？ (closing quotes and citation markers stay with their sentence).
fn split_sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in line.char_indices() {
        if i >= start && matches!(c, '。' | '！' | '？') {
            let end = after_closers(line, i + c.len_utf8());
            out.push(&line[start..end]);
            start = end;
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

/// The sentence's character n-grams, punctuation and citation markers left out.
fn sentence_grams(text: &str) -> Vec<Vec<char>> {
    let chars: Vec<char> = text
        .chars()
        .filter(|c| c.is_alphanumeric() && !c.is_ascii())
        .collect();
    chars.windows(REPEAT_GRAM).map(<[char]>::to_vec).collect()
}

/// "[参考文献2]" and "[文献2]" — the model's other ways of writing a citation — as the marker
/// it was asked for ("[ref:2]"), so they are mapped to records or removed like any marker.
fn normalize_citation_markers(line: &str) -> String {
    let mut out = line.to_string();
    for prefix in ["[参考文献", "[文献"] {
        while let Some(start) = out.find(prefix) {
            let digits_at = start + prefix.len();
            let digits: String = out[digits_at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if digits.is_empty() || !out[digits_at + digits.len()..].starts_with(']') {
                break;
            }
            out.replace_range(
                start..digits_at + digits.len() + 1,
                &format!("[ref:{digits}]"),
            );
        }
    }
    out
}

/// Longest line (counted characters) read as a heading the model wrote inside a section.
const INNER_HEADING_CHARS: usize = 30;

/// A line such as "2.1.3 社会变迁与日常", "一、日常生活的本质", "（二）研究方法" or "1. 情感表达": the
/// model numbering sub-headings of its own inside a leaf. The outline owns the headings, and an
/// extra numbering in the body (一、 under 第3章) misleads the reader and the similarity report's
/// chapters, so they are dropped; the paragraphs under them stay.
fn is_inner_heading(line: &str) -> bool {
    let line = line.trim();
    if counted_chars(line) > INNER_HEADING_CHARS || line.contains('|') {
        return false;
    }
    numbered_prefix(line).is_some_and(|rest| {
        // "1. 1 标题": a number split by a space is one number.
        let rest = rest.trim();
        let rest = match numbered_prefix(rest) {
            Some(inner) if rest.starts_with(|c: char| c.is_ascii_digit()) => inner.trim(),
            _ => rest,
        };
        rest.starts_with(|c: char| c.is_alphabetic())
            && !rest.contains(['。', '！', '？', '；', '，', ';', ','].as_slice())
    })
}

const HAN_DIGITS: &[char] = &['一', '二', '三', '四', '五', '六', '七', '八', '九', '十'];

/// What follows a heading number at the start of `line` ("2.1 ", "1. ", "1、", "一、", "（二）",
/// "第三节"), if it starts with one.
fn numbered_prefix(line: &str) -> Option<&str> {
    let digits_end = line
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '．'))
        .unwrap_or(line.len());
    if line.starts_with(|c: char| c.is_ascii_digit()) {
        let (number, rest) = line.split_at(digits_end);
        if let Some(rest) = rest.strip_prefix('、') {
            return Some(rest);
        }
        // "2.1 标题" or "1. 标题"; a bare number ("2020年…") is a sentence.
        return number.contains(['.', '．']).then_some(rest);
    }
    let han_end = line
        .find(|c: char| !HAN_DIGITS.contains(&c))
        .unwrap_or(line.len());
    if han_end > 0 {
        return line[han_end..].strip_prefix('、');
    }
    for (open, close) in [('（', '）'), ('(', ')'), ('第', '章'), ('第', '节')] {
        if let Some(inner) = line.strip_prefix(open)
            && let Some(end) = inner.find(close)
            && end > 0
            && inner[..end]
                .chars()
                .all(|c| c.is_ascii_digit() || HAN_DIGITS.contains(&c))
        {
            return Some(&inner[end + close.len_utf8()..]);
        }
    }
    None
}

/// Longest line read as an unnumbered heading the model wrote inside a section.
const BARE_HEADING_CHARS: usize = 8;

/// Shortest paragraph a bare heading stands over.
const BARE_HEADING_PARAGRAPH_CHARS: usize = 20;

/// Whether `lines[at]` is a short line of Chinese words alone ("研究背景", "实验结果") standing
/// over a paragraph: a heading the model gave it without numbering it (read on the bench). A
/// list's items (after a lead-in "…：" or beside each other), a poem's lines and a caption are not.
fn is_bare_heading(lines: &[&str], at: usize) -> bool {
    // A line as short without a sentence's end: an item or a verse beside it.
    let short =
        |line: &str| line.trim().chars().count() <= BARE_HEADING_CHARS && !ends_sentence(line);
    let line = lines[at].trim();
    let before = lines[..at].iter().rev().find(|l| !l.trim().is_empty());
    let after = lines[at + 1..].iter().find(|l| !l.trim().is_empty());
    (2..=BARE_HEADING_CHARS).contains(&line.chars().count())
        && line.chars().all(crate::gbt7714::is_ideograph)
        && before.is_none_or(|b| !short(b) && !b.trim_end().ends_with(['：', ':']))
        && after
            .is_some_and(|a| counted_chars(a) >= BARE_HEADING_PARAGRAPH_CHARS && ends_sentence(a))
}

/// The section without the sub-headings the model wrote itself (see `is_inner_heading` and
/// `is_bare_heading`).
fn drop_inner_headings(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(at, line)| !is_inner_heading(line) && !is_bare_heading(&lines, *at))
        .map(|(_, line)| *line)
        .collect::<Vec<_>>()
        .join("\n")
}

const CLOSERS: &[char] = &['”', '’', '」', '』', '）', ')', '"', '\''];

/// Whether `line` ends a sentence: its last character, after citation markers and closing
/// quotes or brackets, is a full stop, question or exclamation mark (or it is a table row).
fn ends_sentence(line: &str) -> bool {
    let mut rest = line.trim_end();
    loop {
        let before = rest;
        rest = rest.trim_end_matches(CLOSERS).trim_end();
        if rest.ends_with(']')
            && let Some(open) = rest.rfind('[')
        {
            rest = rest[..open].trim_end();
        }
        if rest == before {
            break;
        }
    }
    rest.ends_with(['。', '！', '？', '…', '.', '!', '?', '|'])
}

/// Where the sentence ended by the stop at byte `end` of `line` really ends: after the closing
/// quotes and the citation markers that follow the stop.
fn after_closers(line: &str, mut end: usize) -> usize {
    loop {
        let rest = &line[end..];
        if let Some(c) = rest.chars().next().filter(|c| CLOSERS.contains(c)) {
            end += c.len_utf8();
        } else if rest.starts_with('[')
            && let Some(close) = rest.find(']')
        {
            end += close + 1;
        } else {
            return end;
        }
    }
}

/// The text up to its last finished sentence: an answer cut by the token limit ends mid-word
/// ("…体现了他个人的生活经历、创作经验和情感态"), and a reader must never get a broken sentence.
/// A trailing line with no finished sentence at all (a cut heading) is dropped whole.
fn end_at_sentence(text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    while let Some(last) = lines.pop() {
        if ends_sentence(&last) {
            lines.push(last);
            break;
        }
        let stop = last
            .char_indices()
            .rfind(|(_, c)| matches!(c, '。' | '！' | '？'))
            .map(|(i, c)| after_closers(&last, i + c.len_utf8()));
        if let Some(end) = stop {
            lines.push(last[..end].to_string());
            break;
        }
    }
    if lines.is_empty() {
        // Nothing finished at all: the fragment rather than nothing (it is marked weak).
        return text.to_string();
    }
    lines.join("\n")
}

/// How strongly the local decoder is kept from copying the offered records' snippets (the
/// rewriter's "medium": copying stays possible for a token, not for a run).
const SNIPPET_COPY_BLOCK: f32 = 0.8;
/// Tokens of a snippet the local model may repeat in a row before the next is barred, so the
/// records' terms ("高效液相色谱法") stay usable. Barring every repeated pair (the rewriter's
/// setting) mangled the terms on the bench ("高效色液相", "薄层层色法") and pushed the model into
/// other scripts. Six tokens still cut names written a character a token ("氟康唑粘附凝 gel"); the
/// guard by characters below stops sentences, so this one is set above it.
const SNIPPET_COPY_RUN: usize = 10;
/// The same guard counted in characters: the bench's papers carried runs of 41 to 72
/// characters of a cited record, written with another split into tokens than the record's.
/// Ten characters keep a term with a word of context ("采用高效液相色谱法") and stop a sentence.
const SNIPPET_COPY_CHARS: usize = 10;

/// The longest a section may run past its budget, in percent: a paper is delivered within
/// 15 % of the length asked for.
const OVER_BUDGET_PERCENT: usize = 115;

/// The section cut at its last finished sentence within `OVER_BUDGET_PERCENT` of `budget`, when it is
/// longer (the local model runs to its token limit: 1.44× the length asked on the bench).
fn cap_length(text: &str, budget: u32) -> String {
    let limit = budget as usize * OVER_BUDGET_PERCENT / 100;
    if counted_chars(text) <= limit {
        return text.to_string();
    }
    let budget = budget as usize;
    let mut counted = 0;
    // The last sentence end within the limit, and the first one past it.
    let (mut within, mut past) = (None, None);
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            counted += 1;
        }
        let end = i + c.len_utf8();
        let sentence_end = matches!(c, '。' | '！' | '？')
            || (c == '\n' && ends_sentence(&text[..i]))
            || (c == '|' && text[end..].starts_with('\n'));
        if sentence_end {
            let cut = (after_closers(text, end), counted);
            if counted <= limit {
                within = Some(cut);
            } else {
                past = Some(cut);
                break;
            }
        }
    }
    let cut = match (within, past) {
        // Never cut a section to less than its budget's lower bound.
        (Some((end, kept)), _) if kept * 100 >= budget * 85 => Some(end),
        // Long sentences: whichever end is nearer the budget, rather than the whole answer
        // (read on the bench: a section of 544 characters for 156).
        (Some((end, kept)), Some((_, over)))
            if budget - kept <= over - budget && kept * 2 >= budget =>
        {
            Some(end)
        }
        (_, Some((end, _))) => Some(end),
        _ => None,
    };
    match cut {
        Some(end) => text[..end].trim_end().to_string(),
        None => text.to_string(),
    }
}

/// The local model's abstract as one paragraph of the paper's own sentences.
fn tidy_abstract(text: &str, title: &str, headings: &[String], keywords: &[String]) -> String {
    // Sentences said twice go whatever wrote them: the local model, given one summary per
    // section, restates them.
    let nothing_before = SaidBefore::of(true, std::iter::empty());
    let once = nothing_before.drop_repeats(text);
    let prose = abstract_prose(&clean_section(&once, title, "摘要"), headings);
    // Once more without the chapter labels: a long label had kept a restated sentence's share
    // of repeated n-grams under the bar (run I, 汪曾祺: one sentence twice in a row).
    let prose = nothing_before.drop_repeats(&prose);
    end_at_sentence(&without_keyword_lists(&prose, title, keywords))
}

/// Writes the abstract (Chinese, then English) from the title and the sections' first sentences.
pub async fn write_abstract(
    model: &dyn ChatModel,
    request: &PaperRequest,
    draft: &mut Draft,
) -> Result<(), ComposeError> {
    let system = fill(&ABSTRACT_PROMPT, &[("budget", ABSTRACT_CHARS.to_string())]);
    let user = format!(
        "题目：{}\n专业：{}\n各节概要：\n{}",
        request.title,
        request.field,
        brief_all(&draft.sections)
    );
    // Nothing to copy from here, but the guard's language bar holds: without it the local model
    // drifted into English words the paper never used ("对 collected的数据", read on the bench).
    let paper_text: Vec<&str> = draft.sections.iter().map(|s| s.text.as_str()).collect();
    let language_only = CopyGuard {
        source: format!("{}\n{}", request.title, paper_text.join("\n")),
        keep: request.keywords.clone(),
        probability: 0.0,
        run: SNIPPET_COPY_RUN,
        chars: 0,
    };
    let chat = ChatRequest {
        messages: vec![Message::system(system), Message::user(user)],
        temperature: 0.5,
        max_tokens: Some(ABSTRACT_CHARS * 2),
        copy_guard: Some(language_only),
    };
    let wanted = ABSTRACT_CHARS as usize / 3;
    let title = request.title.clone();
    let keywords = request.keywords.clone();
    let headings: Vec<String> = draft
        .outline
        .numbered_titles()
        .into_iter()
        .map(|(_, title, _)| title)
        .collect();
    draft.abstract_zh = best_answer(model, &chat, None, wanted, |text| {
        tidy_abstract(text, &title, &headings, &keywords)
    })
    .await?;
    let chat = ChatRequest {
        messages: vec![
            Message::system(TRANSLATE_PROMPT.text().trim_end()),
            Message::user(draft.abstract_zh.clone()),
        ],
        temperature: 0.3,
        max_tokens: Some(ABSTRACT_CHARS * 2),
        copy_guard: Some(CopyGuard::english_only()),
    };
    let english = model.chat(&chat, None).await?;
    draft.abstract_en =
        end_at_sentence(&clean_section(&english.text, "Abstract", "Abstract").replace('\n', " "));
    if draft.keywords.is_empty() {
        draft.keywords = if request.keywords.is_empty() {
            // The body chapters' titles: not the introduction, not the conclusion.
            let chapters = &draft.outline.chapters;
            let body = chapters.len().saturating_sub(1).max(1.min(chapters.len()));
            chapters[1.min(chapters.len())..body]
                .iter()
                .take(4)
                .map(|c| c.title.clone())
                .collect()
        } else {
            request.keywords.clone()
        };
    }
    if !draft.keywords.is_empty() {
        draft.keywords_en = translate_keywords(model, &draft.keywords).await?;
    }
    Ok(())
}

/// The keywords in English, in their order. When the answer for the whole list leaves one out
/// (Chinese left in it, or a sentence), the order is lost with it, so each is asked for alone
/// (run I: "跨境电商" had no English keyword).
async fn translate_keywords(
    model: &dyn ChatModel,
    keywords: &[String],
) -> Result<Vec<String>, ComposeError> {
    let ask = |list: String, count: usize| ChatRequest {
        messages: vec![
            Message::system(KEYWORDS_EN_PROMPT.text().trim_end()),
            Message::user(list),
        ],
        temperature: 0.2,
        max_tokens: Some(16 * count as u32 + 16),
        copy_guard: Some(CopyGuard::english_only()),
    };
    let reply = model
        .chat(&ask(keywords.join("\n"), keywords.len()), None)
        .await?;
    let together = english_keywords(&reply.text, keywords.len());
    if together.len() == keywords.len() {
        return Ok(together);
    }
    let mut each = Vec::new();
    for keyword in keywords {
        let reply = model.chat(&ask(keyword.clone(), 1), None).await?;
        each.extend(english_keywords(&reply.text, 1));
    }
    Ok(if each.len() > together.len() {
        each
    } else {
        together
    })
}

/// The English keywords in a translator's answer: one per line (or separated by semicolons or
/// commas), list markers and quotes dropped, at most `count` of them. An entry that is not a
/// short English term (Chinese left in it, or a sentence) is left out rather than printed
/// under "Key words".
fn english_keywords(answer: &str, count: usize) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for entry in answer.split(['\n', ';', '；', ',', '，', '、']) {
        let entry = entry
            .trim()
            .trim_start_matches(['-', '*', '•'])
            .trim_start();
        // "1. deep learning", "2）CNN"; "5G network" keeps its digit.
        let digits = entry.len() - entry.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after = &entry[digits..];
        let unnumbered = match after.chars().next() {
            // "2.5D reconstruction" is a term, not item 2.
            Some('.') if after[1..].starts_with(|c: char| c.is_ascii_digit()) => entry,
            Some(mark @ ('.' | ')' | '）' | '、')) if digits > 0 => &after[mark.len_utf8()..],
            _ => entry,
        };
        let word = unnumbered
            .trim_matches(|c: char| "\"'“”‘’。. ".contains(c))
            .trim();
        let is_term = word.chars().any(|c| c.is_ascii_alphabetic())
            && !word.chars().any(gbt7714::is_ideograph)
            && word.split_whitespace().count() <= 6
            && !word.contains(':');
        if is_term && !words.iter().any(|w| w.eq_ignore_ascii_case(word)) {
            words.push(word.to_string());
        }
    }
    words.truncate(count);
    words
}

/// The parts the abstract prompt names, which the local model writes as labels of their own
/// ("研究背景与目的", "研究方法：…"; read on the bench): a thesis abstract is one paragraph of prose.
const ABSTRACT_LABELS: &[&str] = &[
    "研究背景与目的",
    "研究背景和目的",
    "主要内容与结论",
    "主要内容和结论",
    "研究背景",
    "研究目的",
    "研究方法",
    "研究内容",
    "主要内容",
    "研究结果",
    "研究结论",
    "结论",
];

/// Words with which a sentence speaks as one chapter or section ("这一章将探讨…", "本节将从…"),
/// copied from the section summaries the abstract is written from; in an abstract they point at
/// nothing.
const SECTION_VOICE: &[&str] = &["本节", "本章", "这一章", "这一节", "此章", "此节"];

/// `text` without the lines that are only the paper's title (the model opened a chapter with it).
fn without_paper_title(text: &str, paper_title: &str) -> String {
    let bare = |line: &str| {
        line.trim()
            .trim_start_matches('#')
            .trim()
            .trim_start_matches('《')
            .trim_end_matches('》')
            .trim()
            .to_string()
    };
    let paper_title = bare(paper_title);
    text.lines()
        .filter(|line| bare(line) != paper_title)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The section's text once its citations are resolved, tidied of what only the local model
/// writes, read on run F's papers: words in square brackets that are not a citation ("…阶段。
/// [已有研究指出]，随着…": the prompt's quoted phrasing, bracketed like a marker) lose their
/// brackets; a paragraph opening with a comma ("，网络流行语的构成元素…") loses it; and studies
/// named without a citation are not claimed (`without_uncited_attributions`).
fn tidy_resolved(text: &str) -> String {
    let unbracketed: Vec<String> = text.lines().map(unwrap_bracketed_words).collect();
    without_uncited_attributions(&unbracketed.join("\n"))
        .lines()
        .map(|line| line.trim_start_matches(['，', '、', '；', ',', ';']))
        .filter(|line| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` with "[已有研究指出]" as "已有研究指出": square brackets around Chinese words without a
/// digit are never a citation mark ("[1]", "[ref:2]", "[1,3]" keep theirs).
fn unwrap_bracketed_words(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close)
                if after[..close].chars().any(gbt7714::is_ideograph)
                    && !after[..close].chars().any(|c| c.is_ascii_digit()) =>
            {
                out.push_str(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Who a sentence says holds its claim when it names no one ("已有研究", "有学者"), and the verbs
/// by which it says so.
const ATTRIBUTIONS: &[&str] = &[
    "已有研究",
    "有研究",
    "相关研究",
    "大量研究",
    "许多研究",
    "诸多研究",
    "既有研究",
    "现有研究",
    "以往研究",
    "前人研究",
    "有关研究",
    "国内外研究",
    "有学者",
    "许多学者",
    "不少学者",
    "部分学者",
    "一些学者",
    "学者们",
    "国内外学者",
    "国内学者",
    "国外学者",
    "现有文献",
    "已有文献",
    "相关文献",
    "大量文献",
    "有文献",
    "也有研究",
    "还有研究",
    "亦有研究",
    "也有学者",
    "还有学者",
    "一项研究",
    "该研究",
    "该文",
    "文章",
];
const ATTRIBUTION_VERBS: &[&str] = &["指出", "表明", "显示", "发现", "认为", "证实", "揭示"];
/// Words between the one named and the verb ("现有研究还表明", "有学者曾指出", "文章的研究结果
/// 表明"), longer first.
const ATTRIBUTION_ADVERBS: &[&str] = &[
    "的研究结果",
    "的研究",
    "的结果",
    "研究结果",
    "进一步",
    "普遍",
    "还",
    "也",
    "曾",
    "均",
    "都",
    "已",
];
/// Longest opening clause ("此外，", "近年来，") or label ("（1）国内外研究进展：") before an
/// attribution.
const ATTRIBUTION_LEAD_CHARS: usize = 12;

/// `text` with "已有研究指出，" and its kind taken from the sentences that cite nothing once
/// citations are resolved: a claim the paper says studies hold, with no study to show, is the
/// ghost reference this generator must not make (run E: "已有研究指出，…" with nothing cited). The
/// claim stays, in the paper's own voice, where a reader can weigh it; a sentence that cites a
/// record ("…[2]") keeps its words. Only an attribution followed by a verb of saying and a clause
/// is taken: "已有研究采用高效液相色谱法…" tells of a study, "有学者揭示了…" names a finding, and
/// both are left.
fn without_uncited_attributions(text: &str) -> String {
    let unattributed = |sentence: &str| -> Option<String> {
        let lead_end = sentence
            .char_indices()
            .take(ATTRIBUTION_LEAD_CHARS + 1)
            .find(|(_, c)| matches!(c, '，' | '：'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        for start in [0, lead_end] {
            let rest = &sentence[start..];
            let Some(after) = ATTRIBUTIONS.iter().find_map(|a| rest.strip_prefix(a)) else {
                continue;
            };
            let after = ATTRIBUTION_ADVERBS
                .iter()
                .find_map(|a| after.strip_prefix(a))
                .unwrap_or(after);
            let Some(claim) = ATTRIBUTION_VERBS.iter().find_map(|v| after.strip_prefix(v)) else {
                continue;
            };
            let claim = claim.trim_start_matches(['，', '：', ':', ',']);
            // "有研究揭示了…的机制": the verb takes a noun, not a clause that could stand alone.
            if counted_chars(claim) < 4 || claim.starts_with(['了', '的', '过']) {
                return None;
            }
            return Some(format!("{}{claim}", &sentence[..start]));
        }
        None
    };
    text.lines()
        .map(|line| {
            split_sentences(line)
                .into_iter()
                .map(|s| match unattributed(s) {
                    Some(own) if !crate::citations::has_marker(s) => own,
                    _ => s.to_string(),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Words by which a sentence tells of the paper's own work, or of the author's own hospital or
/// school: a record's "我院门诊抗菌药物的应用率为45.34%" repeated makes its hospital the student's
/// (run H, the 抗菌药物 paper).
const OWN_VOICE: &[&str] = &[
    "本文",
    "本研究",
    "本论文",
    "笔者",
    "我们",
    "我院",
    "本院",
    "我科",
    "我校",
];
/// A run this long, with a digit in it, repeated from a record is that record's data (its
/// sample, its year: "西安地区36家二级医院2015年第2季度").
const STUDY_DETAIL_CHARS: usize = 6;

/// `text` without the sentences that tell a record's study as the paper's own: in the paper's
/// voice and repeating a run of the record's data. The local model did ("本研究旨在通过综合分析
/// 西安地区36家二级医疗机构2015年第2季的抗菌药物应用情况…[1]", three times in one paper); the
/// copy guard only bent the words ("三级医院", "2 quarter"). A term of the title repeated in
/// the paper's voice ("本研究…配方颗粒的质量标准") has no digit and stays.
fn without_claimed_studies(text: &str, records: &[String]) -> String {
    let repeats_data = |sentence: &str| {
        let chars: Vec<char> = sentence.chars().collect();
        chars.windows(STUDY_DETAIL_CHARS).any(|w| {
            w.iter().any(|c| c.is_ascii_digit()) && {
                let run: String = w.iter().collect();
                records.iter().any(|r| r.contains(&run))
            }
        })
    };
    text.lines()
        .map(|line| {
            split_sentences(line)
                .into_iter()
                .filter(|s| !(OWN_VOICE.iter().any(|w| s.contains(w)) && repeats_data(s)))
                .collect::<String>()
        })
        .filter(|line| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Shortest run of letters and digits, shared with a record, that counts as the record's words.
const NEAR_COPY_RUN: usize = 8;
/// Share of a sentence's letters and digits inside such runs of one record that makes the
/// sentence a near copy of it.
const NEAR_COPY_SHARE: f32 = 0.5;
/// A sentence shorter than this (letters and digits) is too short to judge.
const NEAR_COPY_MIN_CHARS: usize = 16;

/// Letters and digits of `text`, lowercased: punctuation and spaces changed around a copied run
/// do not make it the writer's own.
fn plain_chars(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

type CopyGram = [char; NEAR_COPY_RUN];

fn copy_grams(plain: &[char]) -> HashSet<CopyGram> {
    plain
        .windows(NEAR_COPY_RUN)
        .filter_map(|w| w.try_into().ok())
        .collect()
}

/// Share of `sentence` covered by runs of at least `NEAR_COPY_RUN` characters that are in
/// `record` and not in `own` (the title, heading and keywords are the student's words, and a run
/// most offered records share is the field's).
fn copied_share(sentence: &[char], record: &HashSet<CopyGram>, own: &HashSet<CopyGram>) -> f32 {
    let mut covered = vec![false; sentence.len()];
    for (start, window) in sentence.windows(NEAR_COPY_RUN).enumerate() {
        let Ok(gram) = CopyGram::try_from(window) else {
            continue;
        };
        if record.contains(&gram) && !own.contains(&gram) {
            covered[start..start + NEAR_COPY_RUN].fill(true);
        }
    }
    covered.iter().filter(|c| **c).count() as f32 / sentence.len().max(1) as f32
}

/// `text` without the sentences that are a record's sentence lightly edited. The copy guard stops
/// runs of ten characters, and the local model went on around it: a change every nine
/// characters, and the check counted 12.8 % of a paper as the library's.
fn without_near_copies(text: &str, records: &[String], common: &str) -> String {
    let records: Vec<HashSet<CopyGram>> = records
        .iter()
        .map(|r| copy_grams(&plain_chars(r)))
        .collect();
    // Each part of `common` on its own: joined, its parts would make runs nobody wrote.
    let mut own: HashSet<CopyGram> = common
        .split_whitespace()
        .flat_map(|part| copy_grams(&plain_chars(part)))
        .collect();
    let mut users: HashMap<CopyGram, usize> = HashMap::new();
    for gram in records.iter().flatten() {
        *users.entry(*gram).or_default() += 1;
    }
    own.extend(
        users
            .into_iter()
            .filter(|(_, n)| records.len() > 1 && *n * 2 > records.len())
            .map(|(gram, _)| gram),
    );
    let is_copy = |sentence: &str| {
        let plain = plain_chars(sentence);
        plain.len() >= NEAR_COPY_MIN_CHARS
            && records
                .iter()
                .any(|r| copied_share(&plain, r, &own) >= NEAR_COPY_SHARE)
    };
    text.lines()
        .map(|line| {
            // A table row is the table's: it goes with the table or not at all.
            if line.contains('|') {
                return line.to_string();
            }
            split_sentences(line)
                .into_iter()
                .filter(|s| !is_copy(s))
                .collect::<String>()
        })
        .filter(|line| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line this short without a sentence's end is a heading, in an abstract.
const ABSTRACT_HEADING_CHARS: usize = 8;

/// `line` without a heading number and the end the model may have put after it: what to compare
/// with the outline's titles.
fn heading_words(line: &str) -> &str {
    let line = line.trim();
    let line = numbered_prefix(line).unwrap_or(line).trim();
    // "第2.1 理论基础": a section's number given a chapter's 第 (bench, 黄芩苷).
    let line = match line.strip_prefix('第') {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
            .trim_start_matches(['章', '节'])
            .trim(),
        _ => line,
    };
    line.trim_end_matches(['。', '：', ':']).trim()
}

/// Items of a keyword list are short terms.
const KEYWORD_LIST_ITEM_CHARS: usize = 8;

/// `abstract_text` without a sentence that only lists keywords ("跨境电商、出口贸易、竞争力提升、
/// 全球电子商务。" closed a run G abstract; the keywords have their own line): three or more
/// short terms, one of them a keyword or a term of three characters or more from the title. A
/// sentence listing topics ("研究涉及历史、文化、经济。") names none of them and stays.
fn without_keyword_lists(abstract_text: &str, title: &str, keywords: &[String]) -> String {
    let is_keyword_list = |sentence: &str| {
        let items: Vec<&str> = sentence
            .trim_end_matches(['。', '；', '.'])
            .split(['、', '，', '；', ',', ';'])
            .map(str::trim)
            .collect();
        items.len() >= 3
            && items
                .iter()
                .all(|item| (2..=KEYWORD_LIST_ITEM_CHARS).contains(&counted_chars(item)))
            && items.iter().any(|item| {
                (counted_chars(item) >= 3 && title.contains(item))
                    || keywords.iter().any(|k| k == item)
            })
    };
    split_sentences(abstract_text)
        .into_iter()
        .filter(|sentence| !is_keyword_list(sentence))
        .collect()
}

/// The abstract as one paragraph of prose: without headings (a line that is a title of the
/// outline, `headings`, or looks like one), labels and sentences in a section's voice.
fn abstract_prose(text: &str, headings: &[String]) -> String {
    let is_outline_title = |s: &str| headings.iter().any(|h| h == heading_words(s));
    let mut out = String::new();
    for line in text.lines() {
        // A chapter's title the model listed ("1. 数字普惠金融的定义与特点"), or a short
        // unnumbered one ("系统设计", which came out "系统设计。").
        let short_heading = line.trim().chars().count() <= ABSTRACT_HEADING_CHARS
            && !line.trim().ends_with(['。', '！', '？', '；', '：', ':']);
        if is_inner_heading(line) || short_heading || is_outline_title(line) {
            continue;
        }
        for sentence in split_sentences(line) {
            let sentence = without_label(sentence.trim());
            // A title of the outline used as a label, however long ("汪曾祺小说中日常生活的
            // 呈现方式：…"; the summaries the abstract is written from are labelled so).
            let sentence = match sentence.split_once(['：', ':']) {
                Some((label, rest)) if is_outline_title(label) => rest.trim(),
                _ => sentence,
            };
            // A heading of the outline as a sentence of its own ("第2.1 理论基础。"), or with only
            // a few words around it ("再次，我们来看…的启示。", "最后，在结论与展望方面。"): it points at a
            // chapter and says nothing of it.
            if is_outline_title(sentence) || names_a_heading_only(sentence, headings) {
                continue;
            }
            if sentence.is_empty() || SECTION_VOICE.iter().any(|w| sentence.contains(w)) {
                continue;
            }
            // A list's lead-in ("具体而言：", "本研究的主要内容包括：") in a one-paragraph abstract:
            // the list's items follow as sentences, the lead-in says nothing (it had come out
            // "具体而言：。").
            if sentence.ends_with(['：', ':']) {
                continue;
            }
            out.push_str(sentence);
            if !ends_sentence(sentence) {
                out.push('。');
            }
        }
    }
    if out.is_empty() {
        text.replace('\n', "")
    } else {
        out
    }
}

/// Words with which a sentence only points at a part of the paper ("再次，我们来看…", "最后，在…方面",
/// "本文对…进行了介绍"), longest first so that none is cut by a shorter one.
const POINTING_WORDS: &[&str] = &[
    "接下来",
    "首先",
    "其次",
    "再次",
    "然后",
    "接着",
    "最后",
    "此外",
    "另外",
    "我们",
    "来看",
    "本文",
    "本研究",
    "方面",
    "部分",
    "关于",
    "对于",
    "进行了",
    "进行",
    "介绍",
    "讨论",
    "探讨",
    "阐述",
    "论述",
    "主要",
    "一下",
    "在",
    "对",
    "将",
    "了",
    "的",
    "是",
    "和",
    "与",
    "及",
    "中",
    "看",
    "第",
    "章",
    "节",
];

/// Whether `sentence` is one of `headings` and nothing else but pointing words: it says nothing
/// of the part it names. A sentence with a word of its own ("我国人口老龄化日益严重", "实验结果显示
/// mAP达到92.4%") is not.
fn names_a_heading_only(sentence: &str, headings: &[String]) -> bool {
    headings.iter().filter(|h| !h.is_empty()).any(|h| {
        if !sentence.contains(h.as_str()) {
            return false;
        }
        let mut rest = sentence.replacen(h.as_str(), "", 1);
        for word in POINTING_WORDS {
            rest = rest.replace(word, "");
        }
        !rest
            .chars()
            .any(|c| gbt7714::is_ideograph(c) || c.is_ascii_alphanumeric())
    })
}

/// A sentence of the abstract without the label it opens with: one of the prompt's parts
/// ("研究方法：…", or alone) or a numbered chapter title followed by a colon.
fn without_label(sentence: &str) -> &str {
    for label in ABSTRACT_LABELS {
        if let Some(rest) = sentence.strip_prefix(label) {
            let after = rest.trim_start_matches([' ', '：', ':', '　']);
            if after.len() < rest.len() || rest.trim().is_empty() {
                return after.trim();
            }
        }
    }
    if numbered_prefix(sentence).is_some()
        && let Some((label, rest)) = sentence.split_once(['：', ':'])
        && is_inner_heading(label)
    {
        return rest.trim();
    }
    // An unnumbered chapter title as a label ("实验设计与方法论：本研究通过…"): short, no clause
    // of its own, something after it.
    if let Some((label, rest)) = sentence.split_once(['：', ':'])
        && label.chars().count() <= ABSTRACT_LABEL_CHARS
        && !label.contains(['，', ',', '；'])
        && !rest.trim().is_empty()
    {
        return rest.trim();
    }
    sentence
}

/// A label before a colon this short, in an abstract, is a heading used as a label.
const ABSTRACT_LABEL_CHARS: usize = 10;

fn brief_all(sections: &[SectionText]) -> String {
    sections
        .iter()
        .map(|s| {
            let first = opening(&s.text, BRIEF_CHARS_PER_SECTION);
            format!("{}：{}", s.heading, first)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The whole pipeline without a server: outline, references, every section, the abstract.
pub async fn generate(
    model: &dyn ChatModel,
    source: &dyn ReferenceSource,
    request: &PaperRequest,
    on_progress: &(dyn Fn(Progress) + Send + Sync),
) -> Result<Draft, ComposeError> {
    on_progress(Progress::Outline);
    let outline = plan_outline(model, request).await?;
    let mut draft = Draft {
        outline,
        ..Draft::default()
    };
    attach_references(source, request, &mut draft).await?;
    let total = draft.outline.leaves().len();
    while draft.remaining() > 0 {
        let next = draft.sections.len();
        let heading = draft
            .outline
            .leaves()
            .get(next)
            .map(|(p, _)| numbered(&draft.outline, p))
            .unwrap_or_default();
        on_progress(Progress::Section {
            done: next,
            total,
            heading,
        });
        if !write_next_section(model, request, &mut draft, None).await? {
            break;
        }
    }
    on_progress(Progress::Abstract);
    write_abstract(model, request, &mut draft).await?;
    Ok(draft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_broken_over_two_lines_is_joined_and_headings_stay_apart() {
        let cases = [
            // The decoder's line break inside a sentence (read on the bench): joined.
            (
                "另一项研究指出三大鲜明特点，即研究理论多元化、新老交替进程基本完成，以及高举“借鉴”和“特色”两\n面大旗”。\n下一段从这里开始。",
                "另一项研究指出三大鲜明特点，即研究理论多元化、新老交替进程基本完成，以及高举“借鉴”和“特色”两面大旗”。\n下一段从这里开始。",
            ),
            // A short line, a line that is not a finished sentence, a numbered line: kept apart.
            (
                "这一段写得很长但是没有句号结尾因为模型在这里停了下来并且另起一行\n研究方法\n这一段写得很长但是没有句号结尾因为模型在这里停了下来并且另起一行\n（1）第一点是这样的。",
                "这一段写得很长但是没有句号结尾因为模型在这里停了下来并且另起一行\n研究方法\n这一段写得很长但是没有句号结尾因为模型在这里停了下来并且另起一行\n（1）第一点是这样的。",
            ),
            // A bare label over a list goes; a sentence ending in a colon stays.
            (
                "以下是数字普惠金融的特点：\n特点：\n普及性：金融服务可以随时随地获取。",
                "以下是数字普惠金融的特点：\n普及性：金融服务可以随时随地获取。",
            ),
            // A label leading into a table stays.
            (
                "如表所示：\n|指标|数值|\n|A|1|",
                "如表所示：\n|指标|数值|\n|A|1|",
            ),
            // A code block goes, closed or cut short; the prose around it stays.
            (
                "首先对数据进行预处理。\n```python\n# 下载停用词\nimport nltk\n```\n然后训练模型。\n```\ntexts = [",
                "首先对数据进行预处理。\n然后训练模型。",
            ),
        ];
        for (written, cleaned) in cases {
            assert_eq!(clean_section(written, "题目", "1.1 现状"), cleaned);
        }
    }

    #[test]
    fn a_section_title_loses_its_chapters_title_before_a_colon() {
        let chapter = "药物经济学分析";
        assert_eq!(
            without_chapter_prefix("药物经济学分析：医院门诊抗菌药物处方成本效益分析", chapter),
            "医院门诊抗菌药物处方成本效益分析"
        );
        // Not before a colon, or nothing after it: unchanged.
        assert_eq!(
            without_chapter_prefix("药物经济学分析方法的比较", chapter),
            "药物经济学分析方法的比较"
        );
        assert_eq!(
            without_chapter_prefix("药物经济学分析：", chapter),
            "药物经济学分析："
        );
    }

    #[test]
    fn a_chapter_leaf_speaks_of_itself_as_a_chapter() {
        assert_eq!(
            chapter_voice("本节将介绍方法。在本节中，我们讨论基本节点的划分；本节最后给出结论。"),
            "本章将介绍方法。在本章中，我们讨论基本节点的划分；本章最后给出结论。"
        );
    }

    #[test]
    fn an_opening_that_points_back_at_the_section_before_is_dropped() {
        // Read on the bench (run H, the 汪曾祺 paper's chapter 2).
        assert_eq!(
            without_pointer_back_opening(
                "他的生活描写不仅丰富了他的小说内容。\n在汪曾祺的小说中，他善于捕捉日常生活中的细节。"
            ),
            "在汪曾祺的小说中，他善于捕捉日常生活中的细节。"
        );
        assert_eq!(
            without_pointer_back_opening(
                "为了实现这一目标，需要建立标准。质量标准体系包括三个层次。"
            ),
            "质量标准体系包括三个层次。"
        );
        // A connective opening the section is dropped, its sentence kept.
        assert_eq!(
            without_pointer_back_opening("然而，在实际应用中，质量标准仍存在一些问题。"),
            "在实际应用中，质量标准仍存在一些问题。"
        );
        assert_eq!(
            without_pointer_back_opening("因此，他的作品值得研究。汪曾祺的小说描写日常生活。"),
            "汪曾祺的小说描写日常生活。"
        );
        // An opening that repeats an earlier section goes first, and the pointing one behind
        // it then goes too (run I, 汪曾祺 chapter 2).
        let said = SaidBefore::of(
            true,
            ["汪曾祺的小说创作与日常生活书写的关系十分密切，值得研究。"].into_iter(),
        );
        let answer = "汪曾祺的小说创作与日常生活书写的关系十分密切，值得研究。\
他的生活描写丰富了小说内容。在汪曾祺的小说中，人物的对话和饮食习惯都写得很细。";
        assert_eq!(
            without_repeats_then_pointers(&said, answer, true),
            "在汪曾祺的小说中，人物的对话和饮食习惯都写得很细。"
        );
        assert_eq!(
            without_repeats_then_pointers(
                &SaidBefore::of(false, std::iter::empty()),
                answer,
                false
            ),
            answer,
            "an endpoint's text is kept as written"
        );
        // Kept: all there is, or an opening of its own (其中, 其他 and 其次 point at nothing).
        for kept in [
            "它是指一种金融服务。",
            "其中，质量标准是关键。配方颗粒的标准体系包括三个层次。",
            "其他国家的经验值得借鉴。配方颗粒的标准体系包括三个层次。",
            "汪曾祺的小说描写日常生活。他善于捕捉细节。",
        ] {
            assert_eq!(without_pointer_back_opening(kept), kept);
        }
    }

    #[test]
    fn a_sections_opening_is_cut_between_words() {
        let text = "网络流行语是通过社交媒体、在线论坛等平台迅速传播的语言现象，其构词方式和传播机制对社会语言学、文化心理学等方面有着深远的影响。通过分析可以理解规律。";
        assert_eq!(
            opening(text, 40),
            "网络流行语是通过社交媒体、在线论坛等平台迅速传播的语言现象。"
        );
        assert_eq!(
            opening("短句一。短句二。短句三很长很长。", 8),
            "短句一。短句二。"
        );
        assert_eq!(
            opening("没有逗号也没有句号的一段话", 4),
            "没有逗号也没有句号的一段话"
        );
        assert_eq!(opening("", 10), "");
    }

    #[test]
    fn a_records_study_told_as_the_papers_own_goes() {
        let records = [
            "目的:分析西安地区36家二级医院2015年第2季度抗菌药物应用情况。方法:回顾性分析。"
                .to_string(),
        ];
        let written = "本研究旨在通过综合分析西安地区36家二级医疗机构2015年第2季的抗菌药物应用情况[1]。\
已有研究分析了西安地区36家二级医院的用药情况[1]。本研究的主要目的是建立抗菌药物应用的评价方法。\n\
首先，我们回顾了西安地区36家三级医院的使用情况。";
        assert_eq!(
            without_claimed_studies(written, &records),
            "已有研究分析了西安地区36家二级医院的用药情况[1]。本研究的主要目的是建立抗菌药物应用的评价方法。"
        );
        let records = ["我院门诊抗菌药物的应用率为45.34%，以口服制剂为主。".to_string()];
        assert_eq!(
            without_claimed_studies(
                "我院门诊抗菌药物的应用率为45.34%[3]。门诊用药以口服制剂为主。",
                &records
            ),
            "门诊用药以口服制剂为主。"
        );
    }

    #[test]
    fn a_records_sentence_lightly_edited_goes_and_the_topics_words_stay() {
        let records = [
            "乌布西奔妈妈。《乌布西奔妈妈》是满族说部中流传于东海女真人的长篇英雄史诗，\
以萨满神歌的形式讲述了部落女首领统一诸部的故事，具有重要的文学与民俗学价值。"
                .to_string(),
        ];
        let common = "沈从文小说中的湘西世界研究 湘西世界 沈从文";
        // Edited every few characters, as the guard leaves it; then the student's own sentence
        // that shares only the topic's words and a short term.
        let written = "《乌布西奔妈妈》是满族说部里流传于东海女真人之间的长篇英雄史诗，\
用萨满神歌形式讲述了部落女首领统一诸部的故事。沈从文小说中的湘西世界研究离不开对民俗学价值的重新认识。";
        assert_eq!(
            without_near_copies(written, &records, common),
            "沈从文小说中的湘西世界研究离不开对民俗学价值的重新认识。"
        );
        // A sentence of the field's terms is the student's, and so are the title's words.
        let review = ["综述了高效液相色谱法、气相色谱法、薄层色谱法、紫外分光光度法及指纹图谱技术在中药质量控制中的应用。"
            .to_string()];
        for own in [
            "目前常用的检测手段包括高效液相色谱法、薄层色谱法和紫外分光光度法。",
            "本研究将指纹图谱技术与高效液相色谱法结合使用。",
        ] {
            assert_eq!(without_near_copies(own, &review, common), own);
        }
        let on_topic = [
            "沈从文小说中的湘西世界研究述评。本文梳理了沈从文小说中的湘西世界研究成果。"
                .to_string(),
        ];
        let titled = "沈从文小说中的湘西世界研究应当回到文本本身。";
        assert_eq!(without_near_copies(titled, &on_topic, common), titled);
        assert_eq!(without_near_copies(titled, &on_topic, ""), "");
        // A table row stays whole.
        let row = "| 乌布西奔妈妈是满族说部中流传于东海女真人的长篇英雄史诗 | 1 |";
        assert_eq!(without_near_copies(row, &records, common), row);
        // A short sentence is not judged, and nothing is dropped without a record.
        assert_eq!(
            without_near_copies("满族说部的长篇英雄史诗。", &records, common),
            "满族说部的长篇英雄史诗。"
        );
        assert_eq!(without_near_copies(written, &[], common), written);
    }

    #[test]
    fn a_line_restating_the_sections_title_goes() {
        let title = "汪曾祺的生活方式及其对现代生活的启示";
        let written = "汪曾祺的生活方式与现代生活的启示\n汪曾祺的作品以其独特的艺术魅力吸引着读者。\n\
                       表1 汪曾祺的生活方式与现代生活的启示\n汪曾祺的生活方式对现代生活有许多启示。";
        assert_eq!(
            clean_section(written, title, "第3章 汪曾祺的生活方式及其对现代生活的启示"),
            "汪曾祺的作品以其独特的艺术魅力吸引着读者。\n表1 汪曾祺的生活方式与现代生活的启示\n\
             汪曾祺的生活方式对现代生活有许多启示。"
        );
    }

    #[test]
    fn a_line_that_is_only_the_papers_title_goes() {
        let written = "数字普惠金融对农村居民消费的影响研究\n在当今社会，数字普惠金融已经成为重要力量。\n《数字普惠金融对农村居民消费的影响研究》";
        assert_eq!(
            without_paper_title(written, "数字普惠金融对农村居民消费的影响研究"),
            "在当今社会，数字普惠金融已经成为重要力量。"
        );
    }

    #[test]
    fn a_lead_in_naming_the_numbered_section_is_dropped() {
        let title = "基于农村居民消费行为的分析";
        assert_eq!(
            clean_section(
                "在第3.2 基于农村居民消费行为的分析中，已有研究指出，农村居民的消费结构正在变化。",
                title,
                "3.2 基于农村居民消费行为的分析"
            ),
            "已有研究指出，农村居民的消费结构正在变化。"
        );
        assert_eq!(
            clean_section("在第2章 现状中，相关研究不断增多。", "现状", "第2章 现状"),
            "相关研究不断增多。"
        );
        // Without the number it is a sentence about the matter, and stays.
        let said = "在数字普惠金融中，移动支付是农村居民最常用也最便捷的金融服务。";
        assert_eq!(
            clean_section(said, "数字普惠金融", "2.1 数字普惠金融"),
            said
        );
    }

    #[test]
    fn an_abstract_loses_the_prompts_labels_and_the_sections_voice() {
        // What the local model wrote on the bench (2026-11-27), shortened.
        let written = "研究背景与目的\n随着国家对药品质量要求的提高，质量标准不断完善。本研究旨在分析其问题。\n研究方法：本研究采用文献回顾与访谈相结合的方法\n主要内容与结论（1）现状分析：本节将从国内外研究现状出发，分析发展趋势。标准仍不统一。\n主要内容与结论\n1. 数字普惠金融的定义与特点\n数字普惠金融利用互联网提供金融服务。";
        assert_eq!(
            abstract_prose(written, &[]),
            "随着国家对药品质量要求的提高，质量标准不断完善。本研究旨在分析其问题。\
本研究采用文献回顾与访谈相结合的方法。标准仍不统一。数字普惠金融利用互联网提供金融服务。"
        );
        let voice = "这一章将探讨汪曾祺的生活与创作之间的互动：在现代文学史上，汪曾祺是一位杰出的作家。\
他的小说书写日常生活。";
        assert_eq!(abstract_prose(voice, &[]), "他的小说书写日常生活。");
        // Chapters as labels, and the same sentence restated for each of them (bench, 网络流行语).
        let restated = "本研究探讨网络流行语的构词方式。第1章 绪论：网络流行语是在网络环境中广泛使用的词语。\
3.1 传播机制分析：通过分析构词方式与传播机制，可以为促进信息交流提供理论支持。\
3.2 构词方式研究：通过分析构词方式与传播机制，可以为促进信息交流提供理论支持。";
        let once = SaidBefore::of(true, std::iter::empty()).drop_repeats(restated);
        assert_eq!(
            abstract_prose(&once, &[]),
            "本研究探讨网络流行语的构词方式。网络流行语是在网络环境中广泛使用的词语。\
通过分析构词方式与传播机制，可以为促进信息交流提供理论支持。"
        );
        // A long chapter label kept a restatement under the repeat bar; after the labels go, the
        // abstract is read for repeats again (run I, 汪曾祺, shortened).
        let labelled = "汪曾祺的小说创作与日常生活书写的关系：汪曾祺的生活描写不仅丰富了他的小说内容，也使他的小说更具现实感和情感深度。\
汪曾祺的生活描写及其对现代生活的启示：他的生活描写不仅丰富了他的小说内容，也使他的小说更具现实感和情感深度。";
        let headings = [
            "汪曾祺的小说创作与日常生活书写的关系".to_string(),
            "汪曾祺的生活描写及其对现代生活的启示".to_string(),
        ];
        let once = SaidBefore::of(true, std::iter::empty()).drop_repeats(labelled);
        assert_eq!(
            abstract_prose(&once, &headings)
                .matches("也使他的小说更具现实感和情感深度")
                .count(),
            2,
            "the case: the label hides the repeat"
        );
        assert_eq!(
            tidy_abstract(labelled, "汪曾祺小说中的日常生活书写研究", &headings, &[]),
            "汪曾祺的生活描写不仅丰富了他的小说内容，也使他的小说更具现实感和情感深度。"
        );
        // Two tables' rows may be the same.
        let tables = "| 组别 | 例数 |\n| 观察组患者 | 50例 |\n表2 两组疗效\n| 组别 | 例数 |\n| 观察组患者 | 50例 |";
        assert_eq!(
            SaidBefore::of(true, std::iter::empty()).drop_repeats(tables),
            tables
        );
        // Short sentences said twice word for word (run I, 抗菌药物).
        assert_eq!(
            tidy_abstract(
                "老年人群的抗菌药物使用频率较高。广谱抗生素的使用比例较高。某些细菌对抗生素耐药性较强。\
广谱抗生素的使用比例较高。某些细菌对抗生素耐药性较强。",
                "医院门诊抗菌药物处方合理性分析",
                &[],
                &[]
            ),
            "老年人群的抗菌药物使用频率较高。广谱抗生素的使用比例较高。某些细菌对抗生素耐药性较强。"
        );
        // A word that merely starts like a label is left alone; nothing left → the text as it came.
        assert_eq!(
            abstract_prose("结论性的判断需要证据。", &[]),
            "结论性的判断需要证据。"
        );
        assert_eq!(
            abstract_prose("本章小结\n本节说明", &[]),
            "本章小结本节说明"
        );
        // A list's lead-in (bench, 数字普惠金融).
        assert_eq!(
            abstract_prose(
                "能够提升消费水平。具体而言：\n本文的主要贡献包括以下几个方面：\n支付更便捷。",
                &[]
            ),
            "能够提升消费水平。支付更便捷。"
        );
        // Chapter titles as labels (bench, 对外汉语).
        assert_eq!(
            abstract_prose(
                "实验设计与方法论：本研究通过实验进行分析。结果分析：实验结果显示：\n学生之间差异显著。",
                &[]
            ),
            "本研究通过实验进行分析。学生之间差异显著。"
        );
        // A short heading of its own (bench, 图书推荐).
        assert_eq!(
            abstract_prose(
                "系统需要快速响应。\n系统设计\n本系统的目标是推荐图书。",
                &[]
            ),
            "系统需要快速响应。本系统的目标是推荐图书。"
        );
        // The outline's own titles, however long, as labels or lines (bench, 汪曾祺).
        let headings = ["汪曾祺小说中日常生活的呈现方式".to_string()];
        assert_eq!(
            abstract_prose(
                "汪曾祺小说中日常生活的呈现方式：他写市井人物的衣食住行。\n\
                 汪曾祺小说中日常生活的呈现方式。\n语言平淡而有味。",
                &headings
            ),
            "他写市井人物的衣食住行。语言平淡而有味。"
        );
        // Sections' headings as sentences, numbered with a chapter's 第 (bench, 黄芩苷).
        let headings = ["理论基础".to_string(), "实验设计".to_string()];
        assert_eq!(
            abstract_prose(
                "黄芩是常用的中药材。第2.1 理论基础。第2.2 实验设计。然后进行前处理。",
                &headings
            ),
            "黄芩是常用的中药材。然后进行前处理。"
        );
        // A title with only pointing words around it points at a chapter (bench, 汪曾祺); a
        // sentence that says something of a title stays, however short (the review's cases).
        let headings = [
            "汪曾祺的生活方式及其对现代生活的启示".to_string(),
            "结论与展望".to_string(),
            "人口老龄化".to_string(),
            "实验结果".to_string(),
            "协同过滤算法".to_string(),
        ];
        assert_eq!(
            abstract_prose(
                "再次，我们来看汪曾祺的生活方式及其对现代生活的启示。最后，在结论与展望方面。\
                 本文认为汪曾祺的生活方式及其对现代生活的启示在于以平淡之心对待日常琐事。\
                 我国人口老龄化日益严重。实验结果显示mAP达到92.4%。推荐模块采用协同过滤算法。",
                &headings
            ),
            "本文认为汪曾祺的生活方式及其对现代生活的启示在于以平淡之心对待日常琐事。\
             我国人口老龄化日益严重。实验结果显示mAP达到92.4%。推荐模块采用协同过滤算法。"
        );
    }

    #[test]
    fn a_section_far_over_its_budget_ends_at_a_sentence_within_it() {
        let sentence = "这是一个十个字的句子。";
        let long: String = sentence.repeat(30); // 300 counted characters
        let capped = cap_length(&long, 200);
        assert_eq!(
            counted_chars(&capped),
            230,
            "the last sentence within 115 %"
        );
        assert!(capped.ends_with('。'));
        // Within 115 %: unchanged. No sentence end to cut at: unchanged.
        assert_eq!(cap_length(&long, 270), long);
        let run_on = "没有句号".repeat(100);
        assert_eq!(cap_length(&run_on, 100), run_on);
        // Long sentences, none ending between 85 % and 115 %: the end nearer the budget.
        let clause = "这是一个由许多分句组成的很长的句子，";
        let long_sentence = format!("{}结束。", clause.repeat(4)); // 70 counted characters
        let three = long_sentence.repeat(3);
        assert_eq!(counted_chars(&cap_length(&three, 100)), 70);
        assert_eq!(counted_chars(&cap_length(&three, 120)), 140);
        // Only an end far past the limit: still nearer than the whole answer.
        assert_eq!(counted_chars(&cap_length(&three, 40)), 70);
        // Paragraphs and tables are kept whole where the cut allows.
        let table = format!(
            "{}\n|指标|数值|\n|A|1|\n{}",
            sentence.repeat(9),
            sentence.repeat(9)
        );
        let cut = cap_length(&table, 100);
        assert!(cut.ends_with("|A|1|") || cut.ends_with('。'), "{cut}");
    }

    #[test]
    fn lists_summaries_own_reference_lists_and_odd_markers_are_cleaned() {
        let answer = "正文一[参考文献1]。\n- 配方设计不合理。\n结论\n1. 1 中药配方颗粒质量标准的现状\n综上所述[文献2]。\n参考文献\n卡莫菲固体酯质胶囊的制備。";
        let cleaned = drop_inner_headings(&clean_section(answer, "现状", "第2章 现状"));
        assert_eq!(
            cleaned,
            "正文一[ref:1]。\n配方设计不合理。\n综上所述[ref:2]。"
        );
        // Entries of a list the model wrote without a heading, pasting the records: dropped.
        let listed = "近年来研究进展显著。\n[1] 中介语“僵化”的语言学意义。中介语以及中介语僵化的现象是对语言习得心理过程的探索。\n[ref:2] 试论不与动态助词共现的动词。";
        assert_eq!(
            clean_section(listed, "现状", "第2章 现状"),
            "近年来研究进展显著。"
        );
        // A bracket that is not a citation stays.
        assert_eq!(
            normalize_citation_markers("见[文献综述]部分"),
            "见[文献综述]部分"
        );
    }

    #[test]
    fn an_answer_cut_by_the_token_limit_ends_at_its_last_finished_sentence() {
        let cut = "汪曾祺重视生活。他的作品来自日常[ref:1]。\n总的来说，这体现了他的情感态";
        assert_eq!(
            end_at_sentence(cut),
            "汪曾祺重视生活。他的作品来自日常[ref:1]。"
        );
        // A stop followed by its marker and quote keeps them.
        let marked = "他说“生活是美好的。”[ref:2]随后又";
        assert_eq!(end_at_sentence(marked), "他说“生活是美好的。”[ref:2]");
        // A cut heading line after finished paragraphs is dropped whole.
        let heading = "第一段写完了。\n2.1.4 艺术发展与";
        assert_eq!(end_at_sentence(heading), "第一段写完了。");
        // Finished text, tables and English are left as they are.
        for whole in [
            "结论成立。[ref:3]",
            "如表所示：\n|指标|数值|\n|A|1|",
            "This paper studies it.",
        ] {
            assert_eq!(end_at_sentence(whole), whole);
        }
        // Nothing finished at all: the fragment is kept (the caller marks it weak).
        assert_eq!(end_at_sentence("只有半句"), "只有半句");
    }

    #[test]
    fn sub_headings_the_model_numbered_itself_are_dropped_and_their_paragraphs_kept() {
        let text = "导语。\n2.1 现代文学中“日常”概念的演变\n正文一。\n一、日常生活的本质与细节\n正文二。\n\
                    （二）研究方法\n1. 情感表达与人情味\n第三节 结语\n三、结语\n正文三。\n研究背景\n近年来，随着数字技术的发展，日常生活书写受到越来越多的关注。";
        assert_eq!(
            drop_inner_headings(text),
            "导语。\n正文一。\n正文二。\n正文三。\n近年来，随着数字技术的发展，日常生活书写受到越来越多的关注。"
        );
        // A list's items and a poem's lines are not headings, nor is a word before a short line.
        for kept in [
            "系统主要包括以下模块：\n用户管理\n图书管理\n借阅管理\n各模块之间通过统一的接口交换数据，便于维护。",
            "徐志摩写道。\n轻轻的我走了\n正如我轻轻的来\n我轻轻的招手\n作别西天的云彩\n诗人以轻柔的语调写出了告别时的不舍与留恋。",
            "实验环境如下。\nPython\n实验使用的编程语言版本为3.10，运行于普通笔记本电脑之上。",
            "研究背景\n正文。",
        ] {
            assert_eq!(drop_inner_headings(kept), kept, "{kept}");
        }
        // Sentences that start with numbers stay.
        for kept in [
            "2020年，该市居民消费增长。",
            "1. 首先，样本取自三所高校，共发放问卷300份。",
            "3.5%的患者出现不良反应",
            "一般而言、总体上",
            "综上所述，",
        ] {
            assert_eq!(drop_inner_headings(kept), kept, "{kept}");
        }
    }
    use crate::gbt7714::RefKind;
    use llm::chat::{ChatReply, Usage};
    use std::sync::Mutex;

    /// Answers from a script, in order, and records every request: the model is a third party
    /// to this engine, and these tests are about what the engine does with its answers.
    struct Scripted {
        answers: Mutex<Vec<String>>,
        seen: Mutex<Vec<ChatRequest>>,
    }

    impl Scripted {
        fn new(answers: &[&str]) -> Self {
            Scripted {
                answers: Mutex::new(answers.iter().rev().map(|s| s.to_string()).collect()),
                seen: Mutex::new(Vec::new()),
            }
        }
    }

    impl ChatModel for Scripted {
        fn id(&self) -> String {
            "scripted".into()
        }
        fn chat<'a>(
            &'a self,
            request: &'a ChatRequest,
            _on_delta: Option<&'a (dyn Fn(&str) + Send + Sync)>,
        ) -> BoxFuture<'a, Result<ChatReply, ChatError>> {
            self.seen.lock().unwrap().push(request.clone());
            let text = self.answers.lock().unwrap().pop().unwrap_or_default();
            Box::pin(async move {
                Ok(ChatReply {
                    text,
                    model: "scripted".into(),
                    usage: Usage::default(),
                    finish_reason: Some("stop".into()),
                })
            })
        }
    }

    /// Three records; every query finds the first two, or the third for "方法".
    struct Shelf;

    impl ReferenceSource for Shelf {
        fn search<'a>(
            &'a self,
            query: &'a str,
            limit: usize,
        ) -> BoxFuture<'a, Result<Vec<Candidate>, String>> {
            let ids: Vec<u64> = if query.contains("方法") {
                vec![30]
            } else {
                vec![10, 20]
            };
            let found = ids
                .into_iter()
                .take(limit)
                .map(|id| {
                    let mut reference = Reference::new(RefKind::Journal, format!("文献{id}"));
                    reference.authors = vec!["王明".into()];
                    reference.container = Some("测试学报".into());
                    reference.year = Some("2020".into());
                    Candidate {
                        id,
                        reference,
                        snippet: format!("文献{id}的摘要。"),
                    }
                })
                .collect();
            Box::pin(async move { Ok(found) })
        }
    }

    fn request() -> PaperRequest {
        PaperRequest {
            title: "基于深度学习的图像识别研究".into(),
            field: "计算机科学与技术".into(),
            kind: PaperKind::Thesis,
            degree: Degree::Bachelor,
            words: 3000,
            keywords: vec![],
            own_references: vec![],
        }
    }

    /// The outline in the two answers-per-step the planner asks for.
    #[test]
    fn a_sentence_said_in_an_earlier_section_is_not_said_again() {
        let earlier = "在现代文学中，“日常”是一个被广泛使用的词语，它不仅仅指日常生活，还涵盖了生活的各个方面[1]。";
        let said = SaidBefore::of(true, [earlier].into_iter());
        let body = "在现代文学史上，“日常”是一个被广泛使用的词语，它不仅仅指日常生活，还涵盖了生活的各个方面。\
                    汪曾祺的生活方式平凡而有趣[ref:1]。\n他写高邮的市井人物，语言平淡而有味。他写高邮的市井人物，语言平淡而有味。日常。";
        assert_eq!(
            said.drop_repeats(body),
            "汪曾祺的生活方式平凡而有趣[ref:1]。\n他写高邮的市井人物，语言平淡而有味。日常。"
        );
        // Nothing said before: nothing dropped; an endpoint's answer is kept as written.
        let fresh = SaidBefore::of(true, std::iter::empty());
        assert_eq!(fresh.drop_repeats(earlier), earlier);
        let endpoint = SaidBefore::of(false, [earlier].into_iter());
        assert_eq!(endpoint.drop_repeats(body), body);
    }

    #[test]
    fn bracketed_words_and_opening_commas_are_tidied() {
        let text = "网络流行语的演变是一个重要的阶段[1]。[已有研究指出]，随着互联网的发展，网络流行语不断创新。\n\
                    ，网络流行语的构成元素包括词汇、语法结构和情感色彩[ref:2]。\n，";
        assert_eq!(
            tidy_resolved(text),
            "网络流行语的演变是一个重要的阶段[1]。随着互联网的发展，网络流行语不断创新。\n\
             网络流行语的构成元素包括词汇、语法结构和情感色彩[ref:2]。"
        );
        assert_eq!(unwrap_bracketed_words("见[1,3]与[注]"), "见[1,3]与注");
        assert_eq!(unwrap_bracketed_words("未闭合[已有研究"), "未闭合[已有研究");
    }

    #[test]
    fn studies_named_without_a_citation_are_not_claimed() {
        let text = "已有研究指出，农村居民的消费结构正在变化。此外，有学者认为数字普惠金融缓解了流动性约束。\n\
                    已有研究表明，数字金融提高了居民消费[2]。已有研究采用面板数据模型检验这一效应。有研究表明。有学者揭示了其中的机制。现有研究还表明，价格影响需求。文章认为，汇率转嫁是不完全的。\n\
                    （1）国内外研究进展：现有文献表明，各国的质量标准差异较大。\n\
                    此外，也有研究显示，护士在药品管理方面存在不足。文章的研究结果表明，关税会对出口贸易产生负面影响。";
        assert_eq!(
            without_uncited_attributions(text),
            "农村居民的消费结构正在变化。此外，数字普惠金融缓解了流动性约束。\n\
             已有研究表明，数字金融提高了居民消费[2]。已有研究采用面板数据模型检验这一效应。有研究表明。有学者揭示了其中的机制。价格影响需求。汇率转嫁是不完全的。\n\
             （1）国内外研究进展：各国的质量标准差异较大。\n\
             此外，护士在药品管理方面存在不足。关税会对出口贸易产生负面影响。"
        );
        // The paper's own findings are not attributions.
        let own =
            "本研究表明，收入是消费的主要决定因素。研究表明收入与消费正相关。本文章认为消费重要。";
        assert_eq!(without_uncited_attributions(own), own);
    }

    #[test]
    fn a_restated_sentence_goes_and_a_parallel_item_stays() {
        // Run F, the 汪曾祺 paper: chapters 1 and 3 said it; the conclusion said it again.
        let chapter_1 = "汪曾祺，作为一个有着丰富人生经历和深厚文学功底的作家，他的作品不仅展现了他对生活的深刻理解和对哲学思考的独到见解，\
                       更通过日常生活细节的描绘，将读者带入了一个充满诗意和哲理的世界。";
        let chapter_3 =
            "在汪曾祺的作品中，我们能够看到他对生活态度的深刻理解和对哲学思考的独特见解。";
        let said = SaidBefore::of(true, [chapter_1, chapter_3].into_iter());
        let conclusion = "他的作品不仅展现了他对生活的深刻理解和对哲学思考的独特见解，更通过日常生活细节的描绘，为读者提供了丰富的阅读体验。\
                          未来的研究可以继续探索汪曾祺的生活态度。";
        assert_eq!(
            said.drop_repeats(conclusion),
            "未来的研究可以继续探索汪曾祺的生活态度。"
        );
        // Run F, the 配方颗粒 paper: two items of one list share their frame, not their content.
        let items = "龙胆：通过TLC和高效液相色谱法对龙胆进行鉴别和含量测定，确保其纯度和有效性。\n\
                     牛蒡子：通过薄层色谱法和高效液相色谱法对其进行鉴别和含量测定，确保其纯度和有效性。";
        let fresh = SaidBefore::of(true, std::iter::empty());
        assert_eq!(fresh.drop_repeats(items), items);
    }

    #[tokio::test]
    async fn a_keyword_left_out_of_the_translation_is_asked_for_alone() {
        let keywords: Vec<String> = ["跨境电商", "出口贸易", "贸易结构"]
            .map(String::from)
            .to_vec();
        let model = Scripted::new(&[
            "跨境电商平台的发展\nexport trade\ntrade structure",
            "Cross-border e-commerce",
            "Export trade",
            "Trade structure",
        ]);
        assert_eq!(
            translate_keywords(&model, &keywords).await.unwrap(),
            ["Cross-border e-commerce", "Export trade", "Trade structure"]
        );
        assert_eq!(model.seen.lock().unwrap().len(), 4);
        // All there at once: one call.
        let model = Scripted::new(&["Cross-border e-commerce\nExport trade\nTrade structure"]);
        assert_eq!(
            translate_keywords(&model, &keywords).await.unwrap().len(),
            3
        );
        assert_eq!(model.seen.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_garbled_sentence_goes() {
        let answer = "龙胆苦苷含量应控制在1%左右。牛蒡子配方颗粒中的牛\u{FFFD}苷含量应控制在3%左右。两者都需测定。\n\u{FFFD}\n结论可靠。";
        assert_eq!(
            clean_section(answer, "配方颗粒", "2.1 现状"),
            "龙胆苦苷含量应控制在1%左右。两者都需测定。\n结论可靠。"
        );
    }

    #[test]
    fn a_numbered_paragraph_is_numbered_the_thesis_way() {
        let item = "1. 日常生活中的观察：汪曾祺的成长环境充满了丰富的文化氛围，这为他日后的写作提供了灵感。";
        assert_eq!(
            enumeration_as_prose(item),
            "（1）日常生活中的观察：汪曾祺的成长环境充满了丰富的文化氛围，这为他日后的写作提供了灵感。"
        );
        assert_eq!(
            enumeration_as_prose("5. 普惠性：面向所有社会成员，提供公平、公正的金融服务。"),
            "（5）普惠性：面向所有社会成员，提供公平、公正的金融服务。"
        );
        for kept in [
            "1. 研究方法",
            "2. 情感表达：",
            "3. 研究背景。",
            "2020年的数据表明，这一比例已经上升到百分之四十以上，远高于十年前的水平。",
            "3.5%的样本",
        ] {
            assert_eq!(enumeration_as_prose(kept), kept);
        }
    }

    const CHAPTERS: &str = "第1章 绪论\n第2章 研究方法\n第3章 结论";
    /// The planner's answers for the three-chapter outline: thin, so it is asked for three
    /// times before it is taken; then the sections of its two body chapters.
    const OUTLINE_ANSWERS: [&str; 5] = [CHAPTERS, CHAPTERS, CHAPTERS, SECTIONS_1, SECTIONS_2];
    /// A list without its conclusion, and one with it in the middle.
    const NO_CONCLUSION: &str = "第1章 绪论\n第2章 研究方法\n第3章 实验\n第4章 总结\n第5章 应用";
    const SECTIONS_1: &str = "1.1 研究背景\n1.2 研究意义";
    const SECTIONS_2: &str = "以下是节标题：\n2.1 方法设计\n2.2 实验";

    /// A section answer long enough to be accepted (a third of its budget).
    fn long(text: &str) -> String {
        format!(
            "{text}{}",
            "卷积网络在图像分类中取得了较好的效果。".repeat(20)
        )
    }

    /// A library with nothing on the topic.
    struct EmptyShelf;

    impl ReferenceSource for EmptyShelf {
        fn search<'a>(
            &'a self,
            _query: &'a str,
            _limit: usize,
        ) -> BoxFuture<'a, Result<Vec<Candidate>, String>> {
            Box::pin(async { Ok(vec![]) })
        }
    }

    #[tokio::test]
    async fn a_section_offered_no_record_is_still_held_to_the_papers_latin_words() {
        let sections: Vec<String> = (0..5).map(|_| long("研究意义重大。")).collect();
        let mut script = OUTLINE_ANSWERS.to_vec();
        script.extend(sections.iter().map(String::as_str));
        let model = Scripted::new(&script);
        let _ = generate(&model, &EmptyShelf, &request(), &|_| {}).await;
        let seen = model.seen.lock().unwrap();
        let writing: Vec<&ChatRequest> = seen[OUTLINE_ANSWERS.len()..][..5].iter().collect();
        for (i, request_seen) in writing.iter().enumerate() {
            let guard = request_seen.copy_guard.as_ref().expect("the language bar");
            // Nothing barred as a copy; the words it may use are the paper's.
            assert_eq!((guard.probability, guard.chars), (0.0, 0));
            assert!(guard.source.starts_with(&request().title));
            if i > 0 {
                assert!(guard.source.contains("研究意义重大"));
            }
        }
    }

    #[tokio::test]
    async fn a_paper_cites_only_records_it_was_offered() {
        let sections = [
            long("图像识别发展迅速[ref:2]，已有研究[ref:1][ref:9]。另见[3]。"),
            long("研究意义重大。"),
            long("本文的方法基于卷积网络[ref:1]。"),
            long("实验表明方法有效[ref:1]。"),
            long("结论如下[ref:2]。"),
        ];
        let mut script = OUTLINE_ANSWERS.to_vec();
        script.extend(sections.iter().map(String::as_str));
        // Sentences the abstract's tidying keeps (it drops repeated ones).
        let abstract_zh = "本文研究了图像识别的背景与意义。随后设计了基于卷积网络的分类方法。\
                           在公开数据集上的实验验证了方法的准确率。最后总结全文并指出不足之处。\
                           今后的工作将扩大数据规模并改进模型结构。\
                           文中还讨论了训练样本不均衡带来的影响。所得结论可供相关课题参考。";
        script.push(abstract_zh);
        script.push("This paper studies image recognition.");
        // One keyword (the body chapter's title): a second English one is not taken.
        script.push("1. research method\n2. convolutional network");
        let model = Scripted::new(&script);
        let draft = generate(&model, &Shelf, &request(), &|_| {}).await.unwrap();
        assert!(
            draft
                .abstract_zh
                .starts_with("本文研究了图像识别的背景与意义。")
        );
        // Budgets: leaves sum to the target; the label line was not taken for a title.
        let leaves = draft.outline.leaves();
        assert_eq!(leaves.len(), 5);
        let sum: u64 = leaves.iter().map(|(_, n)| u64::from(n.budget)).sum();
        assert_eq!(sum, 3000);
        assert_eq!(draft.outline.chapters[1].children[0].title, "方法设计");
        // Citations: in order of first citation, only offered records, the rest removed.
        assert_eq!(draft.citation_order, vec![20, 10, 30]);
        assert!(
            draft.sections[0]
                .text
                .starts_with("图像识别发展迅速[1]，已有研究[2]。另见。"),
            "{}",
            draft.sections[0].text
        );
        assert_eq!(draft.sections[0].removed_citations, 2);
        assert!(
            draft.sections[2]
                .text
                .starts_with("本文的方法基于卷积网络[3]。")
        );
        assert!(draft.sections.iter().all(|s| !s.weak));
        let references = draft.references();
        assert_eq!(
            references.iter().map(|r| r.library_id).collect::<Vec<_>>(),
            vec![20, 10, 30]
        );
        assert!(
            references[0]
                .formatted
                .starts_with("王明. 文献20[J]. 测试学报, 2020")
        );
        assert_eq!(draft.abstract_en, "This paper studies image recognition.");
        // Each section's prompt carried its budget, the outline and the brief of what came before.
        let seen = model.seen.lock().unwrap();
        // The abstract is held to the paper's own Latin words (the guard's language bar, nothing
        // barred as a copy); its translation is not.
        let guard = seen[seen.len() - 3]
            .copy_guard
            .as_ref()
            .expect("the abstract's bar");
        assert_eq!(guard.probability, 0.0);
        let opening: String = draft.sections[1].text.chars().take(10).collect();
        assert!(guard.source.contains(&opening), "{}", guard.source);
        // The translations are held to English.
        for translation in &seen[seen.len() - 2..] {
            assert_eq!(translation.copy_guard, Some(CopyGuard::english_only()));
        }
        assert_eq!(
            seen[seen.len() - 1].messages[1].content,
            draft.keywords.join("\n")
        );
        assert_eq!(draft.keywords, ["研究方法"]);
        assert_eq!(draft.keywords_en, ["research method"]);
        assert!(seen[6].messages[1].content.contains("前文要点"));
        assert!(seen[6].messages[1].content.contains("1.1 研究背景"));
        assert!(seen[6].messages[0].content.contains("约 "));
    }

    #[test]
    fn a_keyword_list_closing_the_abstract_is_dropped() {
        let title = "跨境电商发展对我国出口贸易的影响分析";
        let abstract_text = "本文分析了跨境电商对出口贸易的影响。研究涉及历史、文化、经济。\
                             跨境电商、出口贸易、竞争力提升、全球电子商务。";
        assert_eq!(
            without_keyword_lists(abstract_text, title, &[]),
            "本文分析了跨境电商对出口贸易的影响。研究涉及历史、文化、经济。"
        );
        let keywords = ["贸易结构".to_string()];
        assert_eq!(
            without_keyword_lists("贸易结构；汇率；关税。", "题目", &keywords),
            ""
        );
    }

    #[test]
    fn english_keywords_are_short_terms_without_their_list_marks() {
        assert_eq!(
            english_keywords(
                "1. Deep learning\n2）Sentiment classification；“CNN”\n- 5G network\n2.5D reconstruction",
                5
            ),
            [
                "Deep learning",
                "Sentiment classification",
                "CNN",
                "5G network",
                "2.5D reconstruction"
            ]
        );
        // Chinese left in, a sentence, a label, a repeat, and more than asked for are left out.
        assert_eq!(
            english_keywords(
                "digital普惠 finance\nKeywords: rural consumption\nThis thesis designs a library \
                 management system for universities.\nrural consumption\nRural Consumption\nfintech\nextra",
                2
            ),
            ["rural consumption", "fintech"]
        );
        assert!(english_keywords("", 3).is_empty());
    }

    #[tokio::test]
    async fn an_empty_or_echoed_answer_is_asked_again_then_marked_weak() {
        let good = long("第二次写得完整。");
        let model = Scripted::new(&[
            CHAPTERS,
            CHAPTERS,
            CHAPTERS,
            SECTIONS_1,
            SECTIONS_2,
            "“1.1 研究背景”这一节的正文",
            &good,
            "",
            "",
            "太短。",
        ]);
        let outline = plan_outline(&model, &request()).await.unwrap();
        let mut draft = Draft {
            outline,
            ..Draft::default()
        };
        assert!(
            write_next_section(&model, &request(), &mut draft, None)
                .await
                .unwrap()
        );
        assert_eq!(draft.sections[0].text, good);
        assert!(!draft.sections[0].weak);
        assert!(
            write_next_section(&model, &request(), &mut draft, None)
                .await
                .unwrap()
        );
        assert_eq!(draft.sections[1].text, "太短。");
        assert!(draft.sections[1].weak);
    }

    #[tokio::test]
    async fn a_sections_shortfall_is_asked_of_the_next_one() {
        let model = Scripted::new(&OUTLINE_ANSWERS);
        let outline = plan_outline(&model, &request()).await.unwrap();
        let budgets: Vec<u32> = outline.leaves().iter().map(|(_, n)| n.budget).collect();
        let mut draft = Draft {
            outline,
            ..Draft::default()
        };
        assert_eq!(carried_shortfall(&draft, budgets[0]), 0);
        let section = |chars: u32| SectionText {
            path: vec![0],
            heading: String::new(),
            text: "字".repeat(chars as usize),
            cited: vec![],
            removed_citations: 0,
            placed_citations: 0,
            weak: false,
        };
        // 40 short, then 10 over: 30 carried to the third section.
        draft.sections.push(section(budgets[0] - 40));
        assert_eq!(carried_shortfall(&draft, budgets[1]), 40);
        draft.sections.push(section(budgets[1] + 10));
        assert_eq!(carried_shortfall(&draft, budgets[2]), 30);
        // Never more than half the next section's own budget; nothing when ahead.
        draft.sections[0] = section(0);
        assert_eq!(carried_shortfall(&draft, 100), 50);
        draft.sections[0] = section(budgets[0] + 100);
        assert_eq!(carried_shortfall(&draft, budgets[2]), 0);
    }

    #[tokio::test]
    async fn a_section_asked_for_a_shortfall_is_judged_by_its_own_budget() {
        let outline = plan_outline(&Scripted::new(&OUTLINE_ANSWERS), &request())
            .await
            .unwrap();
        let budgets: Vec<usize> = outline
            .leaves()
            .iter()
            .map(|(_, n)| n.budget as usize)
            .collect();
        // The first section at 40 % of its budget; the second just over the 30 % of its own
        // budget below which a section is asked again and marked short.
        let first = format!("{}。", "数据".repeat(budgets[0] * 2 / 10));
        let second = format!("{}。", "分析".repeat(budgets[1] * 3 / 20 + 3));
        let model = Scripted::new(&[first.as_str(), second.as_str()]);
        let mut draft = Draft {
            outline,
            ..Draft::default()
        };
        for _ in 0..2 {
            write_next_section(&model, &request(), &mut draft, None)
                .await
                .unwrap();
        }
        assert!(!draft.sections[1].weak);
        assert_eq!(draft.sections[1].text, second);
        // It was asked for its own budget and the first one's shortfall (at most half as much).
        let carried = (budgets[0] - counted_chars(&first)).min(budgets[1] / 2);
        let asked = &model.seen.lock().unwrap()[1].messages[1].content;
        assert!(
            asked.contains(&format!("约 {} 字", budgets[1] + carried)),
            "{asked}"
        );
    }

    #[tokio::test]
    async fn writing_resumes_from_the_last_finished_section() {
        let (a, b) = (long("第一节[ref:1]。"), long("第二节[ref:1]。"));
        let model = Scripted::new(&[&OUTLINE_ANSWERS[..], &[&a, &b]].concat());
        let outline = plan_outline(&model, &request()).await.unwrap();
        let mut draft = Draft {
            outline,
            ..Draft::default()
        };
        attach_references(&Shelf, &request(), &mut draft)
            .await
            .unwrap();
        assert!(
            write_next_section(&model, &request(), &mut draft, None)
                .await
                .unwrap()
        );
        assert!(
            write_next_section(&model, &request(), &mut draft, None)
                .await
                .unwrap()
        );
        // What a task stores, and a new process reads back.
        let stored = serde_json::to_string(&draft).unwrap();
        let mut resumed: Draft = serde_json::from_str(&stored).unwrap();
        let rest = [
            long("第三节[ref:1]。"),
            long("第四节[ref:2]。"),
            long("第五节[ref:1]。"),
        ];
        let model = Scripted::new(&rest.iter().map(String::as_str).collect::<Vec<_>>());
        while write_next_section(&model, &request(), &mut resumed, None)
            .await
            .unwrap()
        {}
        assert_eq!(resumed.sections.len(), 5);
        // Numbering goes on where it stopped: 10 was [1]; 2.1 offers 30, then 2.2 offers 10, 20.
        assert!(resumed.sections[2].text.starts_with("第三节[2]。"));
        assert!(resumed.sections[3].text.starts_with("第四节[3]。"));
        assert!(resumed.sections[4].text.starts_with("第五节[1]。"));
        assert_eq!(resumed.citation_order, vec![10, 30, 20]);
    }

    #[tokio::test]
    async fn a_section_rewritten_on_request_keeps_the_numbering_in_reading_order() {
        let (a, b) = (long("第一节[ref:1]。"), long("第二节[ref:2]。"));
        let model = Scripted::new(&[&OUTLINE_ANSWERS[..], &[&a, &b]].concat());
        let outline = plan_outline(&model, &request()).await.unwrap();
        let mut draft = Draft {
            outline,
            ..Draft::default()
        };
        attach_references(&Shelf, &request(), &mut draft)
            .await
            .unwrap();
        for _ in 0..2 {
            write_next_section(&model, &request(), &mut draft, None)
                .await
                .unwrap();
        }
        assert_eq!(draft.citation_order, vec![10, 20]);
        // The first section now cites the second record only: it becomes [1].
        let again = long("改写后的第一节[ref:2]。");
        let model = Scripted::new(&[&again]);
        rewrite_section(&model, &request(), &mut draft, 0, Some("扩写到800字"), None)
            .await
            .unwrap();
        assert!(draft.sections[0].text.starts_with("改写后的第一节[1]。"));
        assert!(draft.sections[1].text.starts_with("第二节[1]。"));
        assert_eq!(draft.citation_order, vec![20]);
        let first = model.seen.lock().unwrap()[0].clone();
        let asked = &first.messages[1].content;
        assert!(asked.contains("修改要求：扩写到800字"), "{asked}");
        assert!(asked.contains("本节原先的正文：\n第一节[1]。"), "{asked}");
        assert_eq!(first.max_tokens, Some(800 * 14 / 10 + 160));
        let missing = rewrite_section(&model, &request(), &mut draft, 9, None, None).await;
        assert_eq!(missing.unwrap_err().code(), "section_not_found");
    }

    #[test]
    fn a_length_is_read_from_an_instruction() {
        assert_eq!(asked_length("扩写到800字"), Some(800));
        assert_eq!(asked_length("压缩到 300 字左右"), Some(300));
        assert_eq!(asked_length("更学术"), None);
        assert_eq!(asked_length("扩写到99999字"), None);
    }

    #[tokio::test]
    async fn the_users_references_go_to_the_sections_they_suit() {
        let own: Vec<Reference> = [
            "[1] 张伟. 图像识别中的卷积神经网络方法[J]. 计算机学报, 2019, 42(3): 1-10.",
            "[2] 李娜. 宋代诗词的意象研究[D]. 南京: 南京大学, 2020.",
        ]
        .iter()
        .map(|l| crate::gbt7714::parse_line(l).unwrap())
        .collect();
        let source = WithOwnReferences::new(&Shelf, &own);
        let found = source
            .search("基于深度学习的图像识别研究 卷积神经网络", 4)
            .await
            .unwrap();
        let ids: Vec<u64> = found.iter().map(|c| c.id).collect();
        // The library's records, then the matching own reference; the unrelated one not at all.
        assert_eq!(ids, vec![10, 20, OWN_REFERENCE_BASE]);
        assert!(is_own_reference(ids[2]) && !is_own_reference(ids[0]));
        let found = source.search("宋代诗词的意象", 1).await.unwrap();
        assert_eq!(found[0].id, OWN_REFERENCE_BASE + 1);
    }

    #[test]
    fn the_papers_title_is_no_chapter_with_or_without_its_marks() {
        let answer =
            "第1章 绪论\n第2章 红楼梦人物对话中的称谓语研究\n第3章 称谓语的分类\n第4章 结论";
        assert_eq!(
            titles_in(answer, "《红楼梦》人物对话中的称谓语研究", 6),
            ["绪论", "称谓语的分类", "结论"]
        );
    }

    #[tokio::test]
    async fn a_thesis_ends_with_its_conclusions() {
        let model = Scripted::new(&[NO_CONCLUSION, "", "", "", ""]);
        let outline = plan_outline(&model, &request()).await.unwrap();
        let titles: Vec<&str> = outline.chapters.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["绪论", "研究方法", "实验", "应用", "结论与展望"]);
    }

    #[tokio::test]
    async fn a_thin_outline_is_asked_for_again_and_the_fuller_one_kept() {
        let thin = "第1章 绪论\n第2章 研究方法\n第3章 结论";
        let model = Scripted::new(&[thin, NO_CONCLUSION, "", "", "", ""]);
        let outline = plan_outline(&model, &request()).await.unwrap();
        assert_eq!(outline.chapters.len(), 5);
        // Asked three times and thin each time, the thin outline is still an outline.
        let model = Scripted::new(&[thin, "好的。", thin, "", ""]);
        let outline = plan_outline(&model, &request()).await.unwrap();
        let titles: Vec<&str> = outline.chapters.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["绪论", "研究方法", "结论"]);
        // Three outline answers, then the sections of the two body chapters.
        assert_eq!(model.seen.lock().unwrap().len(), 5);
    }

    #[tokio::test]
    async fn an_answer_without_an_outline_is_an_error_not_a_template() {
        let model = Scripted::new(&["好的，我来帮你。", "", "标题：意义\n论文大纲如下"]);
        let err = plan_outline(&model, &request()).await.unwrap_err();
        assert_eq!(err.code(), "outline_failed");
    }

    #[test]
    fn a_short_paper_has_fewer_sections() {
        let mut outline = outline::parse_outline_text(
            "第1章 绪论\n1.1 背景\n1.2 意义\n1.3 现状\n第2章 方法\n2.1 设计\n2.2 实验\n第3章 结论",
        );
        fit_to_length(&mut outline, 1000);
        assert_eq!(outline.leaves().len(), 5);
        outline::allocate_budgets(&mut outline, 1000);
        assert!(outline::validate(&outline, 1000).is_ok(), "{outline:?}");
    }

    #[test]
    fn titles_and_lengths_are_checked() {
        assert_eq!(check_title("  ").unwrap_err().code(), "title_invalid");
        assert_eq!(check_title("论").unwrap_err().code(), "title_invalid");
        assert_eq!(
            check_title(&"论".repeat(300)).unwrap_err().code(),
            "title_invalid"
        );
        assert_eq!(check_title(" 图像  识别 ").unwrap(), "图像 识别");
        assert_eq!(
            check_words(200_000).unwrap_err().code(),
            "words_out_of_range"
        );
        assert!(check_words(8000).is_ok());
    }
}

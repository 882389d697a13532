//! The graduation package (毕业材料): 开题报告, 任务书 and 文献综述 written from a finished paper —
//! its outline, abstract and the records it was offered — by the same section writer as the
//! paper, so every citation is again a real record and every part has its word budget.
//!
//! Each document is a `Draft` whose outline is the document's fixed parts (what Chinese
//! universities' templates ask for) and whose `brief` tells the writer the genre and the paper.

use crate::gbt7714;
use crate::generate::{Candidate, DocumentBrief, Draft, ListedReference, PaperRequest};
use crate::outline::{self, Degree, Node, Outline, PaperKind};
use docio::thesis::{Cover, Heading, Thesis};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Which document of the package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OtherKind {
    /// 开题报告.
    Proposal,
    /// 任务书.
    TaskBook,
    /// 文献综述.
    Review,
}

impl OtherKind {
    pub const ALL: [OtherKind; 3] = [OtherKind::Proposal, OtherKind::TaskBook, OtherKind::Review];

    pub fn code(self) -> &'static str {
        match self {
            OtherKind::Proposal => "proposal",
            OtherKind::TaskBook => "task_book",
            OtherKind::Review => "review",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            OtherKind::Proposal => "开题报告",
            OtherKind::TaskBook => "任务书",
            OtherKind::Review => "文献综述",
        }
    }

    /// By code or Chinese name.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        OtherKind::ALL
            .into_iter()
            .find(|k| k.code().eq_ignore_ascii_case(s) || k.label() == s)
            .or(match s {
                "task" => Some(OtherKind::TaskBook),
                _ => None,
            })
    }

    /// Its length in characters: a 硕士's is half as long again.
    pub fn words(self, degree: Degree) -> u32 {
        let base = match self {
            OtherKind::Proposal => 3_000,
            OtherKind::TaskBook => 1_500,
            OtherKind::Review => 3_000,
        };
        match degree {
            Degree::Master => base * 3 / 2,
            _ => base,
        }
    }

    /// The parts, each with its share of the length (per mille) and what it should hold.
    fn parts(self) -> &'static [Part] {
        match self {
            OtherKind::Proposal => &PROPOSAL,
            OtherKind::TaskBook => &TASK_BOOK,
            OtherKind::Review => &REVIEW,
        }
    }
}

struct Part {
    title: &'static str,
    permille: u32,
    hint: &'static str,
    /// Whether the part is offered the paper's records to cite.
    cites: bool,
}

const SCHEDULE_HINT: &str = "请用表格给出进度安排：第一行为表头“阶段|时间|主要任务”，以后每行一个阶段，单元格用“|”分隔，时间按周次书写（如 第1-2周），表格前后各用一两句话说明。";

const PROPOSAL: [Part; 6] = [
    Part {
        title: "选题背景与意义",
        permille: 180,
        hint: "说明课题的来源、现实背景，以及理论意义与应用价值。",
        cites: true,
    },
    Part {
        title: "国内外研究现状",
        permille: 260,
        hint: "按研究方向梳理已有成果，指出尚存的不足，引出本课题要解决的问题。",
        cites: true,
    },
    Part {
        title: "研究内容与方法",
        permille: 220,
        hint: "依据论文概况中的大纲，说明要研究的主要内容和采用的研究方法。",
        cites: false,
    },
    Part {
        title: "研究方案与技术路线",
        permille: 150,
        hint: "按步骤说明研究如何开展，各步骤的输入、做法与产出。",
        cites: false,
    },
    Part {
        title: "进度安排",
        permille: 100,
        hint: SCHEDULE_HINT,
        cites: false,
    },
    Part {
        title: "预期成果",
        permille: 90,
        hint: "说明预期得到的结论、成果形式（论文、系统、模型等）及可能的创新点。",
        cites: false,
    },
];

const TASK_BOOK: [Part; 4] = [
    Part {
        title: "课题来源与目的",
        permille: 220,
        hint: "说明课题的来源与要达到的目的。",
        cites: true,
    },
    Part {
        title: "主要研究内容",
        permille: 330,
        hint: "依据论文概况中的大纲，逐项说明学生需要完成的研究内容。",
        cites: false,
    },
    Part {
        title: "基本要求",
        permille: 230,
        hint: "说明对文献阅读、研究方法、论文字数与格式、成果形式等方面的要求。",
        cites: false,
    },
    Part {
        title: "进度安排",
        permille: 220,
        hint: SCHEDULE_HINT,
        cites: false,
    },
];

const REVIEW: [Part; 5] = [
    Part {
        title: "引言",
        permille: 140,
        hint: "说明综述的主题、范围与文献来源。",
        cites: false,
    },
    Part {
        title: "国内研究现状",
        permille: 290,
        hint: "归纳国内已有研究的主要观点、方法与结论，逐条引用文献。",
        cites: true,
    },
    Part {
        title: "国外研究现状",
        permille: 260,
        hint: "归纳国外已有研究的主要观点、方法与结论，逐条引用文献；没有国外文献时，按研究方法分类综述。",
        cites: true,
    },
    Part {
        title: "研究评述",
        permille: 190,
        hint: "比较已有研究的长处与不足，指出有待研究的问题。",
        cites: true,
    },
    Part {
        title: "结论",
        permille: 120,
        hint: "总结综述的主要发现及其对本课题的启示。",
        cites: false,
    },
];

/// Records offered to one citing part.
const RECORDS_PER_PART: usize = 8;

/// A document's draft, ready to be written section by section: its parts with budgets, the
/// paper's records (cited ones first), and the brief telling the writer about the paper.
pub fn plan(kind: OtherKind, paper_request: &PaperRequest, paper: &Draft) -> Draft {
    let words = kind.words(paper_request.degree);
    let mut records: Vec<&Candidate> = paper
        .citation_order
        .iter()
        .filter_map(|id| paper.catalog.get(id))
        .collect();
    let mut rest: Vec<&Candidate> = paper
        .catalog
        .values()
        .filter(|c| !paper.citation_order.contains(&c.id))
        .collect();
    rest.sort_by_key(|c| c.id);
    records.extend(rest);
    records.truncate(RECORDS_PER_PART * 2);
    let catalog: HashMap<u64, Candidate> = records.iter().map(|c| (c.id, (*c).clone())).collect();

    let parts = kind.parts();
    let chapters = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            // Citing parts share the records in turns, so each gets its own and none is left out.
            let offered = if part.cites {
                let citing = parts.iter().filter(|p| p.cites).count().max(1);
                let turn = parts[..i].iter().filter(|p| p.cites).count();
                records
                    .iter()
                    .enumerate()
                    .filter(|(n, _)| {
                        citing == 1 || n % citing == turn || records.len() <= RECORDS_PER_PART
                    })
                    .map(|(_, c)| c.id)
                    .take(RECORDS_PER_PART)
                    .collect()
            } else {
                Vec::new()
            };
            Node {
                title: part.title.into(),
                budget: words * part.permille / 1000,
                references: offered,
                children: Vec::new(),
            }
        })
        .collect();
    let mut document = Outline { chapters };
    outline::allocate_budgets(&mut document, words);
    let mut context = format!(
        "题目：{}\n专业：{}\n论文大纲：\n{}",
        paper_request.title,
        paper_request.field,
        paper.outline.to_text()
    );
    if !paper.abstract_zh.trim().is_empty() {
        let summary: String = paper.abstract_zh.chars().take(500).collect();
        context.push_str(&format!("\n摘要：{summary}"));
    }
    Draft {
        outline: document,
        catalog,
        brief: Some(DocumentBrief {
            genre: kind.label().into(),
            context,
            hints: parts.iter().map(|p| p.hint.to_string()).collect(),
        }),
        ..Draft::default()
    }
}

/// The records a document lists: those it cites, in citation order, then the others it was
/// offered (a 开题报告's 主要参考文献 includes what was read, not only what was cited).
pub fn listed_references(draft: &Draft) -> Vec<ListedReference> {
    let mut listed = draft.references();
    let mut rest: Vec<&Candidate> = draft
        .catalog
        .values()
        .filter(|c| !draft.citation_order.contains(&c.id))
        .collect();
    rest.sort_by_key(|c| c.id);
    listed.extend(rest.into_iter().map(|c| ListedReference {
        library_id: c.id,
        title: c.reference.title.clone(),
        formatted: gbt7714::format(&c.reference),
    }));
    listed
}

/// The document as a short Word file: cover, its parts, references.
pub fn to_document(
    kind: OtherKind,
    request: &PaperRequest,
    draft: &Draft,
    cover: &Cover,
) -> Thesis {
    let kind_label = match request.kind {
        PaperKind::Thesis => format!("{}毕业论文{}", request.degree.label(), kind.label()),
        PaperKind::Article => kind.label().to_string(),
    };
    let mut written = draft.sections.iter();
    let body = draft
        .outline
        .chapters
        .iter()
        .map(|chapter| Heading {
            level: 1,
            title: chapter.title.clone(),
            blocks: written
                .next()
                .map(|s| crate::thesis::blocks_of(&s.text))
                .unwrap_or_default(),
        })
        .collect();
    let pick = |given: &str, otherwise: &str| match given.trim() {
        "" => otherwise.to_string(),
        _ => given.to_string(),
    };
    Thesis {
        cover: Cover {
            title: pick(&cover.title, &request.title),
            major: pick(&cover.major, &request.field),
            kind_label,
            ..cover.clone()
        },
        body,
        references: listed_references(draft)
            .into_iter()
            .map(|r| r.formatted)
            .collect(),
        short_form: true,
        ..Thesis::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gbt7714::{RefKind, Reference};
    use crate::generate::{self, SectionText};
    use llm::chat::{BoxFuture, ChatError, ChatModel, ChatReply, ChatRequest, Usage};
    use std::sync::Mutex;

    fn paper() -> (PaperRequest, Draft) {
        let request = PaperRequest {
            title: "丹参注射液质量控制方法研究".into(),
            field: "药学".into(),
            kind: PaperKind::Thesis,
            degree: Degree::Bachelor,
            words: 8_000,
            keywords: vec![],
            own_references: vec![],
        };
        let catalog: HashMap<u64, Candidate> = (1..=5)
            .map(|id| {
                let c = Candidate {
                    id,
                    reference: Reference::new(RefKind::Journal, format!("丹参制剂研究{id}")),
                    snippet: format!("丹参制剂的含量测定方法之{id}。"),
                };
                (id, c)
            })
            .collect();
        let draft = Draft {
            outline: outline::parse_outline_text("第1章 绪论\n第2章 方法\n第3章 结论"),
            catalog,
            citation_order: vec![4, 2],
            abstract_zh: "本文建立了丹参注射液的质量控制方法。".into(),
            ..Draft::default()
        };
        (request, draft)
    }

    #[test]
    fn a_plan_has_the_documents_parts_budgets_and_the_papers_records() {
        let (request, paper) = paper();
        for kind in OtherKind::ALL {
            let draft = plan(kind, &request, &paper);
            assert_eq!(
                draft.outline.total_budget(),
                u64::from(kind.words(Degree::Bachelor))
            );
            assert_eq!(draft.outline.chapters.len(), kind.parts().len());
            let brief = draft.brief.as_ref().unwrap();
            assert_eq!(brief.genre, kind.label());
            assert!(brief.context.contains("绪论") && brief.context.contains("质量控制方法"));
            let offered: Vec<u64> = draft
                .outline
                .chapters
                .iter()
                .flat_map(|c| c.references.clone())
                .collect();
            assert!(offered.iter().all(|id| draft.catalog.contains_key(id)));
            // Every record the paper had is offered somewhere.
            for id in paper.catalog.keys() {
                assert!(offered.contains(id), "{kind:?} left out record {id}");
            }
        }
        assert_eq!(OtherKind::parse("开题报告"), Some(OtherKind::Proposal));
        assert_eq!(OtherKind::parse("task"), Some(OtherKind::TaskBook));
        assert_eq!(OtherKind::parse("x"), None);
    }

    /// Writes every part; cites record 1 of what it is offered when it is offered any.
    struct Writer(Mutex<Vec<String>>);

    impl ChatModel for Writer {
        fn id(&self) -> String {
            "test".into()
        }
        fn chat<'a>(
            &'a self,
            request: &'a ChatRequest,
            _on_delta: Option<&'a (dyn Fn(&str) + Send + Sync)>,
        ) -> BoxFuture<'a, Result<ChatReply, ChatError>> {
            let user = request.messages.last().unwrap().content.clone();
            self.0
                .lock()
                .unwrap()
                .push(format!("{}\n{user}", request.messages[0].content));
            let cite = if user.contains("[ref:1]") {
                "[ref:1]"
            } else {
                ""
            };
            let text = format!("{}。", "本部分依据论文的研究内容展开论述".repeat(40)) + cite;
            Box::pin(async move {
                Ok(ChatReply {
                    text,
                    model: "test".into(),
                    usage: Usage::default(),
                    finish_reason: Some("stop".into()),
                })
            })
        }
    }

    #[tokio::test]
    async fn a_document_is_written_from_the_paper_and_lists_only_real_records() {
        let (request, paper) = paper();
        let mut draft = plan(OtherKind::Review, &request, &paper);
        let model = Writer(Mutex::new(Vec::new()));
        while draft.remaining() > 0 {
            generate::write_next_section(&model, &request, &mut draft, None)
                .await
                .unwrap();
        }
        let asked = model.0.lock().unwrap().clone();
        assert_eq!(asked.len(), 5);
        assert!(
            asked
                .iter()
                .all(|a| a.contains("文献综述") && a.contains("论文概况"))
        );
        assert!(asked[1].contains("国内研究现状") && asked[1].contains("逐条引用文献"));
        let listed = listed_references(&draft);
        assert!(!draft.citation_order.is_empty());
        assert_eq!(listed.len(), paper.catalog.len());
        assert!(
            listed
                .iter()
                .all(|r| paper.catalog.contains_key(&r.library_id))
        );
        let cited: Vec<&SectionText> = draft
            .sections
            .iter()
            .filter(|s| !s.cited.is_empty())
            .collect();
        assert!(!cited.is_empty());

        let thesis = to_document(OtherKind::Review, &request, &draft, &Cover::default());
        assert!(thesis.short_form);
        assert_eq!(thesis.cover.kind_label, "本科毕业论文文献综述");
        assert_eq!(thesis.body.len(), 5);
        let bytes = docio::thesis::write_thesis_docx(&thesis).unwrap();
        let back = docio::extract(&bytes, "review.docx", &docio::Limits::default()).unwrap();
        assert!(back.text.contains("国内研究现状"));
        assert!(
            !back.text.contains("目  录"),
            "a short document has no contents page"
        );
    }
}

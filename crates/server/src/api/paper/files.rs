//! Files a student brings to the paper form: a reference file (.bib, .ris, .enw, CNKI's
//! EndNote/NoteExpress exports, or a .docx/.pdf/.txt whose 参考文献 list is read) and an
//! outline (.docx/.txt/.pdf). Both are read off the request path by the isolated extractor,
//! answered as text the form shows and the user may edit, and stored nowhere: the form sends
//! the text with `generate_paper`. Visitors may use them (the form is open to them).

use crate::api::paper_task::{Caller, PastedText, Upload, extract, read_upload};
use crate::envelope::{ApiError, ApiResult, Success};
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use compose::outline::{self, Outline};
use compose::{gbt7714, reffile};
use serde::Serialize;
use utoipa::ToSchema;

/// The references read from a file, as GB/T 7714 lines for the form.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadReferencesView {
    /// How the file was read: `bibtex`, `ris`, `endnote`, `note_express` or `lines`.
    pub format: String,
    /// One formatted GB/T 7714-2015 entry per reference, without numbers.
    pub references: Vec<String>,
    /// The beginnings of the entries that could not be read.
    pub skipped: Vec<String>,
    /// Entries past the most read from one file.
    pub truncated: usize,
}

/// Reads a reference file (or pasted text) into GB/T 7714 lines.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/read_references", tag = "ai_paper_info_api",
    request_body(content = PastedText, description = "multipart/form-data with a `file` part (.bib, .ris, .enw, .txt, .docx, .pdf), or JSON with `text`"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ReadReferencesView>)),
        (status = 413, description = "file_too_large", body = crate::envelope::ErrorBody),
        (status = 422, description = "no_references_found, unsupported_file_type, empty_document, corrupt_file…", body = crate::envelope::ErrorBody),
    ))]
pub async fn read_references(
    State(state): State<AppState>,
    caller: Caller,
    req: Request,
) -> ApiResult<ReadReferencesView> {
    let mut upload = read_upload(&state, req).await?;
    let original_name = upload.file_name.clone();
    upload.file_name = as_text_name(&upload);
    let extracted = extract(&state, &upload, &caller).await?;
    // Off the async threads; a reader that trips over a hostile file answers with a message.
    let read = tokio::task::spawn_blocking(move || reffile::read(&extracted.text, &original_name))
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "reference_file_unreadable",
                "参考文献文件无法解析：请另存为 BibTeX、RIS 或每行一条的 GB/T 7714 文本后重试",
            )
        })?;
    if read.references.is_empty() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "no_references_found",
            "文件中没有读到参考文献：支持 BibTeX（.bib）、RIS（.ris）、EndNote（.enw，或知网导出的 EndNote/NoteExpress 文本），以及按 GB/T 7714 书写、每条一行的参考文献列表",
        ));
    }
    Ok(Success(ReadReferencesView {
        format: serde_json::to_value(read.format)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        references: read.references.iter().map(gbt7714::format).collect(),
        skipped: read.skipped,
        truncated: read.truncated,
    }))
}

/// Tagged reference files are text: the extractor reads them as such (encoding included).
fn as_text_name(upload: &Upload) -> String {
    let lower = upload.file_name.to_ascii_lowercase();
    if [".bib", ".ris", ".enw"].iter().any(|e| lower.ends_with(e)) {
        "references.txt".into()
    } else {
        upload.file_name.clone()
    }
}

/// An outline read from a file, as text the form shows.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadOutlineView {
    /// One heading per line, numbered 第1章 / 1.1 / 1.1.1, with "（约N字）" where the file gave
    /// a budget.
    pub text: String,
    pub chapters: usize,
    /// Sections and subsections below the chapters.
    pub sections: usize,
}

/// Reads an outline file (or pasted text): headings in any common numbering style.
#[utoipa::path(post, path = "/api/base/ai_paper_info_api/read_outline", tag = "ai_paper_info_api",
    request_body(content = PastedText, description = "multipart/form-data with a `file` part (.docx, .txt, .pdf), or JSON with `text`"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ReadOutlineView>)),
        (status = 400, description = "outline_empty, outline_too_many_chapters, outline_too_many_sections, outline_title_too_long", body = crate::envelope::ErrorBody),
        (status = 413, description = "file_too_large", body = crate::envelope::ErrorBody),
        (status = 422, description = "unsupported_file_type, empty_document, corrupt_file…", body = crate::envelope::ErrorBody),
    ))]
pub async fn read_outline(
    State(state): State<AppState>,
    caller: Caller,
    req: Request,
) -> ApiResult<ReadOutlineView> {
    let upload = read_upload(&state, req).await?;
    let extracted = extract(&state, &upload, &caller).await?;
    let outline = given_outline(&extracted.text, None)?;
    Ok(Success(ReadOutlineView {
        text: outline.to_text(),
        chapters: outline.chapters.len(),
        sections: outline.node_count(),
    }))
}

/// The user's own outline, parsed and checked. With `words`, its budgets are made to add up
/// to that length (kept where the user's own already do, within 10 %).
pub fn given_outline(text: &str, words: Option<u32>) -> Result<Outline, ApiError> {
    let bad = |e: outline::OutlineError| ApiError::bad_request(e.code(), e.to_string());
    let mut parsed = outline::parse_outline_text(text);
    check_structure(&parsed)?;
    if let Some(words) = words {
        let sum = parsed.total_budget();
        if sum == 0 || sum.abs_diff(u64::from(words)) * 10 > u64::from(words) {
            outline::allocate_budgets(&mut parsed, words);
        }
        outline::validate(&parsed, words).map_err(bad)?;
    }
    Ok(parsed)
}

/// The outline's shape within the limits (chapters, sections, titles), whatever its budgets.
pub fn check_structure(given: &Outline) -> Result<(), ApiError> {
    // Checked against a length its budgets, spread afresh, cannot miss.
    let mut probe = given.clone();
    outline::allocate_budgets(&mut probe, outline::MAX_WORDS);
    match outline::validate(&probe, outline::MAX_WORDS) {
        Ok(())
        | Err(outline::OutlineError::BudgetTooSmall { .. })
        | Err(outline::OutlineError::BudgetMismatch { .. }) => Ok(()),
        Err(e) => Err(ApiError::bad_request(e.code(), e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_own_outline_is_read_scaled_and_checked() {
        let text = "第一章 绪论\n1.1 研究背景\n1.2 研究意义\n第二章 方法\n2.1 数据\n第三章 结论";
        let o = given_outline(text, Some(8_000)).unwrap();
        assert_eq!(o.chapters.len(), 3);
        assert_eq!(o.total_budget(), 8_000);
        assert_eq!(
            given_outline("", Some(8_000)).unwrap_err().code,
            "outline_empty"
        );
        let many: String = (1..=90).map(|i| format!("第{i}章 题目{i}\n")).collect();
        let code = given_outline(&many, None).unwrap_err().code;
        assert!(code.starts_with("outline_too_many"), "{code}");
        // Budgets the user wrote are kept when they add up.
        let own = "第一章 绪论（约3000字）\n第二章 结论（约5000字）";
        let o = given_outline(own, Some(8_000)).unwrap();
        assert_eq!(o.chapters[0].budget, 3_000);
    }
}

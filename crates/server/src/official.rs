//! The official report: what a check or detection found, with the title and the settings it was
//! made under, snapshotted when the task finishes. The PDF, the HTML and `/verify` all print the
//! snapshot, so renaming a record, choosing report options on screen or deleting the record
//! later changes nothing a teacher holds.

use crate::api::check::task::CheckInput;
use serde::{Deserialize, Serialize};
use store::{NewSnapshot, ReportSnapshot, Store, Task};

/// The figures and settings a snapshot keeps (`report_snapshots.summary`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub author: String,
    /// Characters checked.
    pub chars: usize,
    /// A similarity check's figures (percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckFigures>,
    /// A detection's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aigc: Option<AigcFigures>,
    /// What shaped the figures, one line each (最小匹配字数 13 字, 参考文献不计入检测, …).
    pub settings: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckFigures {
    pub ratio_total: f64,
    pub ratio_excluding_quotes: f64,
    pub ratio_excluding_own: f64,
    pub ratio_max_single_source: f64,
    pub copied_chars: usize,
    pub source_count: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AigcFigures {
    /// Share of the judged characters in 高度疑似 paragraphs, percent; `None` when too short.
    pub ai_rate: Option<f64>,
    pub high_threshold: f64,
    pub medium_threshold: f64,
    pub model: String,
}

fn author_of(task: &Task) -> String {
    serde_json::from_str::<serde_json::Value>(&task.input)
        .ok()
        .and_then(|v| v["author"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The settings printed with a check's figures (a check stored without its input: the defaults).
pub fn check_settings(input: Option<&CheckInput>) -> Vec<String> {
    let (min_span, exclude_bibliography, owner) = input.map_or((13, true, None), |i| {
        (i.min_span, i.exclude_bibliography, i.owner)
    });
    let mut out = vec![
        format!("最小匹配字数：{min_span} 字（连续相同少于此数的文字不计为重复）"),
        if exclude_bibliography {
            "参考文献：不计入检测".to_string()
        } else {
            "参考文献：计入检测".to_string()
        },
        "目录：不计入检测".to_string(),
        "疑似意译与疑似翻译：单独标出，不计入复制比".to_string(),
        "常用表述（比对库中大量文献共用的表述）：单独列出，默认不计入复制比".to_string(),
    ];
    out.push(if owner.is_some() {
        "比对范围：公共文献库及本人私有比对库".to_string()
    } else {
        "比对范围：公共文献库".to_string()
    });
    out
}

/// A finished check's summary.
pub fn check_summary(
    task: &Task,
    input: Option<&CheckInput>,
    report: &simcheck::Report,
) -> Summary {
    Summary {
        author: author_of(task),
        chars: report.total_chars,
        check: Some(CheckFigures {
            ratio_total: report.ratio_total,
            ratio_excluding_quotes: report.ratio_excluding_quotes,
            ratio_excluding_own: report.ratio_excluding_own,
            ratio_max_single_source: report.ratio_max_single_source,
            copied_chars: report.copied_chars,
            source_count: report.sources.len(),
        }),
        aigc: None,
        settings: check_settings(input),
    }
}

/// A finished detection's summary.
pub fn aigc_summary(task: &Task, d: &aidetect::Detection) -> Summary {
    Summary {
        author: author_of(task),
        chars: d.chars,
        check: None,
        aigc: Some(AigcFigures {
            ai_rate: d.ai_rate,
            high_threshold: d.high_threshold,
            medium_threshold: d.medium_threshold,
            model: d.model.clone(),
        }),
        settings: vec![
            format!(
                "判定：段落 AI 概率不低于 {:.0}% 为高度疑似（计入 AI 率），不低于 {:.0}% 为中度疑似",
                d.high_threshold * 100.0,
                d.medium_threshold * 100.0
            ),
            "目录、参考文献与标题不计入检测".to_string(),
        ],
    }
}

/// Takes the snapshot of `task` (finishing now) with `summary`; see `Store::take_report_snapshot`.
pub async fn take(store: &Store, task: &Task, summary: &Summary) -> store::Result<ReportSnapshot> {
    let summary = serde_json::to_string(summary).unwrap_or_default();
    store
        .take_report_snapshot(&NewSnapshot {
            task_id: task.id,
            user_id: task.user_id,
            kind: &task.kind,
            report_number: &report::report_number(task.id, task.created_at),
            title: &task.title,
            checked_at: task.finished_at.unwrap_or_else(now_ms),
            summary: &summary,
        })
        .await
}

/// Takes the snapshot of the task a worker is finishing, from its record as it stands now.
pub async fn take_now(
    ctx: &crate::worker::TaskContext,
    summary: impl FnOnce(&Task) -> Summary,
) -> Result<(), crate::worker::TaskError> {
    let unsaved = |e: store::StoreError| {
        crate::worker::TaskError::retryable(format!("报告暂时无法保存：{e}"))
    };
    let task = ctx.store.task_by_id(ctx.task_id).await.map_err(unsaved)?;
    take(&ctx.store, &task, &summary(&task))
        .await
        .map_err(unsaved)?;
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The official report of a user's finished task, its code issued from now on. A task that
/// finished before snapshots existed gets one now, from its stored result (`summary`).
pub async fn issued(
    store: &Store,
    task: &Task,
    summary: impl FnOnce() -> Summary,
) -> store::Result<(ReportSnapshot, Summary)> {
    let snapshot = match store.issue_report_snapshot(task.id, task.user_id).await? {
        Some(s) if !s.summary.is_empty() => s,
        _ => {
            take(store, task, &summary()).await?;
            store
                .issue_report_snapshot(task.id, task.user_id)
                .await?
                .ok_or(store::StoreError::NotFound)?
        }
    };
    let parsed = serde_json::from_str(&snapshot.summary).unwrap_or_default();
    Ok((snapshot, parsed))
}

/// The summary a snapshot keeps.
pub fn summary_of(snapshot: &ReportSnapshot) -> Summary {
    serde_json::from_str(&snapshot.summary).unwrap_or_default()
}

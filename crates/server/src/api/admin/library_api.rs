//! The console's library page: upload a batch, follow its import, list and search the public
//! library by title, author and year, remove documents, see counts and the index's size. The
//! library belongs to the workers, so imports and removals are tasks they run
//! (`library_task`); listing and counting read the catalogue the workers keep in the store.

use super::console_api::{Page, page_window};
use super::library_task::{self, LibraryJob, LibraryJobResult};
use crate::auth::OperatorUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::library_batch;
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use store::{Actor, CatalogueFilter, TaskFilter};
use utoipa::{IntoParams, ToSchema};

/// Library tasks the page shows (imports and removals, newest first).
const RECENT_TASKS: i64 = 20;
/// Documents one removal takes.
const MAX_REMOVE: usize = 500;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryTaskRow {
    pub task_id: i64,
    /// `import` or `remove`.
    pub op: String,
    pub title: String,
    /// The uploaded file's name (imports).
    pub file_name: String,
    /// pending, queued, running, done, failed, cancelled.
    pub status: String,
    pub progress: i64,
    pub phase: String,
    /// What happened to each item, once done.
    pub result: Option<LibraryJobResult>,
    pub error: Option<String>,
    /// The operator who asked.
    pub login_name: String,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

fn task_row(summary: store::TaskSummary) -> LibraryTaskRow {
    let task = summary.task;
    let (op, file_name) = match serde_json::from_str::<LibraryJob>(&task.input) {
        Ok(LibraryJob::Import { file_name, .. }) => ("import", file_name),
        Ok(LibraryJob::Remove { .. }) => ("remove", String::new()),
        Err(_) => ("unknown", String::new()),
    };
    LibraryTaskRow {
        task_id: task.id,
        op: op.into(),
        title: task.title,
        file_name,
        status: task.status.as_str().into(),
        progress: task.progress,
        phase: task.phase,
        result: task
            .result
            .as_deref()
            .and_then(|r| serde_json::from_str(r).ok()),
        error: task.error,
        login_name: summary.login_name,
        created_at: task.created_at,
        finished_at: task.finished_at,
    }
}

async fn task_row_of(state: &AppState, task_id: i64) -> Result<LibraryTaskRow, ApiError> {
    Ok(task_row(state.store.task_summary(task_id).await?))
}

fn upload_too_large(state: &AppState) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "file_too_large",
        format!(
            "上传失败：一批文献不能超过 {} MB，请分成几批上传",
            state.config.library_upload_bytes / (1024 * 1024)
        ),
    )
}

fn bad_batch(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("bad_batch", message)
}

/// Uploads a batch for the library (multipart `file`: .jsonl, .zip of .txt/.docx/.pdf, or one
/// such file). The archive is checked at once (an unreadable zip is refused and nothing is
/// kept); the import itself runs on a worker, followed with `library/tasks`.
#[utoipa::path(post, path = "/api/admin/library/upload", tag = "admin_api",
    security(("bearer" = [])),
    request_body(content_type = "multipart/form-data", description = "`file`: the batch"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<LibraryTaskRow>)),
        (status = 400, description = "bad_batch, bad_upload", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 413, description = "file_too_large", body = crate::envelope::ErrorBody),
    ))]
pub async fn upload(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    req: Request,
) -> ApiResult<LibraryTaskRow> {
    // The route takes no default limit: this one, from the configuration, with room for the
    // multipart framing. A declared length over it is refused before anything is read.
    let limit = state.config.library_upload_bytes + 1024 * 1024;
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(upload_too_large(&state));
    }
    let req = req.map(|body| axum::body::Body::new(http_body_util::Limited::new(body, limit)));
    let mut multipart = Multipart::from_request(req, &state)
        .await
        .map_err(|_| ApiError::bad_request("bad_upload", "请以 multipart/form-data 上传文件"))?;
    let mut batch = None;
    while let Some(field) = multipart.next_field().await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            upload_too_large(&state)
        } else {
            ApiError::bad_request("bad_upload", "上传内容格式错误或不完整，请重新上传")
        }
    })? {
        if field.name() != Some("file") {
            continue;
        }
        let name = super::library_task::cut(field.file_name().unwrap_or("").trim(), 200);
        let bytes = field.bytes().await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                upload_too_large(&state)
            } else {
                ApiError::bad_request("bad_upload", "上传内容格式错误或不完整，请重新上传")
            }
        })?;
        batch = Some((name, bytes));
    }
    let Some((file_name, bytes)) = batch else {
        return Err(bad_batch("请选择要导入的文件"));
    };
    if bytes.len() > state.config.library_upload_bytes {
        return Err(upload_too_large(&state));
    }
    let format = library_batch::batch_format(&file_name).ok_or_else(|| {
        bad_batch(format!(
            "不支持的文件类型：请上传 {}",
            library_batch::ACCEPTED
        ))
    })?;
    let checked = {
        let (bytes, name) = (bytes.clone(), file_name.clone());
        tokio::task::spawn_blocking(move || library_batch::check_batch(&bytes, &name))
            .await
            .map_err(ApiError::internal)?
    };
    if let Err(message) = checked {
        return Err(bad_batch(message));
    }
    let extension = match format {
        library_batch::BatchFormat::JsonLines => "jsonl".to_string(),
        library_batch::BatchFormat::Zip => "zip".to_string(),
        library_batch::BatchFormat::Document => file_name
            .rsplit_once('.')
            .map(|(_, e)| e.to_lowercase())
            .unwrap_or_default(),
    };
    // The name the operator gave is kept in the task; the key is ours.
    let file_key = format!(
        "library_import/{}/batch.{extension}",
        store::secrets::new_id()
    );
    state.files.put(&file_key, &bytes).await?;
    let job = LibraryJob::Import {
        file_key: file_key.clone(),
        file_name: file_name.clone(),
    };
    let input = serde_json::to_string(&job).map_err(ApiError::internal)?;
    let queued = state
        .store
        .operator_queue_task(
            Actor::from(&operator.user),
            library_task::KIND,
            &format!("导入比对库：{file_name}"),
            &input,
            3,
            "library.import",
            &serde_json::json!({ "file": file_name, "bytes": bytes.len() }).to_string(),
        )
        .await;
    let task = match queued {
        Ok(task) => task,
        Err(e) => {
            // Nothing half-applied: no task, no file left behind.
            if let Some((folder, _)) = file_key.rsplit_once('/') {
                let _ = state.files.remove_under(folder).await;
            }
            return Err(e.into());
        }
    };
    Ok(Success(task_row_of(&state, task.id).await?))
}

/// The latest imports and removals with their progress and results.
#[utoipa::path(get, path = "/api/admin/library/tasks", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Vec<LibraryTaskRow>>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn tasks(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<Vec<LibraryTaskRow>> {
    let filter = TaskFilter {
        kind: library_task::KIND,
        ..TaskFilter::default()
    };
    let (tasks, _) = state.store.search_tasks(&filter, 0, RECENT_TASKS).await?;
    Ok(Success(tasks.into_iter().map(task_row).collect()))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DocsForm {
    /// Part of a title, an author or a source (empty: all).
    #[serde(default)]
    pub q: String,
    /// Publication year.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub year: Option<i64>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub size: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryDocRow {
    pub id: i64,
    pub title: String,
    pub author: String,
    pub year: Option<i32>,
    pub source: String,
    pub chars: i64,
    pub added_at: i64,
}

/// The public library's documents, newest first, searched by title, author or source and
/// filtered by year. Students' own papers (private library) are counted, never listed.
#[utoipa::path(get, path = "/api/admin/library/docs", tag = "admin_api",
    security(("bearer" = [])), params(DocsForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Page<LibraryDocRow>>)),
        (status = 400, description = "bad_year", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn docs(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<DocsForm>,
) -> ApiResult<Page<LibraryDocRow>> {
    let (page, size, offset) = page_window(form.page, form.size);
    if form.year.is_some_and(|y| !(1000..=2100).contains(&y)) {
        return Err(ApiError::bad_request("bad_year", "年份应在 1000–2100 之间"));
    }
    let filter = CatalogueFilter {
        query: &form.q,
        year: form.year.map(|y| y as i32),
        scope: "public",
    };
    let (entries, total) = state.store.search_catalogue(&filter, offset, size).await?;
    Ok(Success(Page {
        records: entries
            .into_iter()
            .map(|e| LibraryDocRow {
                id: e.doc_id,
                title: e.title,
                author: e.author,
                year: e.year,
                source: e.source,
                chars: e.chars,
                added_at: e.added_at,
            })
            .collect(),
        total,
        page,
        size,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibrarySummary {
    pub public_docs: i64,
    pub public_chars: i64,
    /// Students' papers kept in their private libraries.
    pub private_docs: i64,
    /// Students' own published work.
    pub own_published_docs: i64,
    /// Bytes of the index (fingerprints and sentence vectors), as a worker last measured them.
    pub index_bytes: i64,
    /// When (Unix ms; 0: not measured yet).
    pub measured_at: i64,
    /// `embedded` or `database`.
    pub backend: String,
    /// The largest batch an upload may be, in bytes.
    pub max_upload_bytes: usize,
    /// Live workers taking library imports: with none, uploads wait.
    pub workers: usize,
}

/// Counts by scope, the index's size and whether a worker will take an upload.
#[utoipa::path(get, path = "/api/admin/library/summary", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<LibrarySummary>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn summary(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<LibrarySummary> {
    let counts = state.store.catalogue_counts().await?;
    let workers = state
        .store
        .live_workers(crate::worker::presence_cutoff(store::now_ms()))
        .await?
        .iter()
        .filter(|w| w.queues.split(',').any(|q| q == library_task::KIND))
        .count();
    Ok(Success(LibrarySummary {
        public_docs: counts.public.docs,
        public_chars: counts.public.chars,
        private_docs: counts.private.docs,
        own_published_docs: counts.own_published.docs,
        index_bytes: counts.index_bytes,
        measured_at: counts.measured_at,
        backend: state.config.library_backend.clone(),
        max_upload_bytes: state.config.library_upload_bytes,
        workers,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveForm {
    /// Public documents to remove (at most 500).
    pub ids: Vec<i64>,
}

/// Removes public documents from the library (a worker does it; followed with `library/tasks`).
#[utoipa::path(post, path = "/api/admin/library/remove", tag = "admin_api",
    security(("bearer" = [])), request_body = RemoveForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<LibraryTaskRow>)),
        (status = 400, description = "bad_selection", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn remove(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<RemoveForm>,
) -> ApiResult<LibraryTaskRow> {
    let mut ids: Vec<i64> = form.ids.into_iter().filter(|id| *id > 0).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() || ids.len() > MAX_REMOVE {
        return Err(ApiError::bad_request(
            "bad_selection",
            format!("请选择要移除的文献（一次 1–{MAX_REMOVE} 篇）"),
        ));
    }
    // The titles go into the audit log, so the log says what was removed: public documents'
    // only (a student's own paper is neither removed here nor named).
    let mut titles = Vec::new();
    for id in ids.iter().take(20) {
        if let Some(entry) = state.store.catalogue_entry(*id).await?
            && entry.scope == "public"
        {
            titles.push(format!("{}：{}", entry.doc_id, entry.title));
        }
    }
    let job = LibraryJob::Remove {
        docs: ids.iter().map(|id| *id as u64).collect(),
    };
    let input = serde_json::to_string(&job).map_err(ApiError::internal)?;
    let task = state
        .store
        .operator_queue_task(
            Actor::from(&operator.user),
            library_task::KIND,
            &format!("移出比对库：{} 篇", ids.len()),
            &input,
            3,
            "library.remove",
            &serde_json::json!({ "ids": ids, "titles": titles }).to_string(),
        )
        .await?;
    Ok(Success(task_row_of(&state, task.id).await?))
}

//! The library's upkeep from the console, done by the workers that hold the library: importing
//! an uploaded batch and removing documents. Both are durable tasks (a worker killed mid-import
//! leaves a job that runs again; documents already imported are recognised by their text and
//! skipped), with progress for the console and a result that says what happened to each item.

use crate::extraction::Extractor;
use crate::library_batch::{self, BatchFormat, Entry, ZipEntries};
use crate::worker::{TaskContext, TaskError, TaskFuture, TaskHandler};
use serde::{Deserialize, Serialize};
use simcheck::{Library, NewDoc, Scope};
use std::collections::HashSet;
use std::sync::Arc;

pub const KIND: &str = "library_manage";

/// Items (skipped or failed) a result lists by name; the counts cover the rest.
const LISTED_ITEMS: usize = 500;
/// Documents are written in batches of at most this many characters or documents.
const BATCH_CHARS: usize = 20_000_000;
const BATCH_DOCS: usize = 500;
/// The longest title taken; author and source are cut to `MAX_META_CHARS`.
const MAX_TITLE_CHARS: usize = 200;
const MAX_META_CHARS: usize = 200;
/// Names in a result (a file in an archive, a line) are cut to this many characters.
const MAX_NAME_CHARS: usize = 200;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum LibraryJob {
    /// Import the batch stored under `file_key` (uploaded as `file_name`).
    Import { file_key: String, file_name: String },
    /// Remove these public documents.
    Remove { docs: Vec<u64> },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemOutcome {
    /// The file in the archive, or `第 N 行` of a JSON Lines file.
    pub name: String,
    /// `skipped` (nothing wrong, nothing to add: a duplicate, too short, another kind of file)
    /// or `failed` (unreadable).
    pub outcome: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryJobResult {
    pub imported: u64,
    pub imported_chars: u64,
    pub skipped: u64,
    pub failed: u64,
    pub removed: u64,
    /// Asked to remove but not in the public library (already gone, or a user's own).
    pub missing: u64,
    /// The skipped and failed items with their reasons (the first 500).
    pub items: Vec<ItemOutcome>,
}

impl LibraryJobResult {
    fn note(&mut self, name: String, failed: bool, reason: impl Into<String>) {
        if failed {
            self.failed += 1;
        } else {
            self.skipped += 1;
        }
        if self.items.len() < LISTED_ITEMS {
            self.items.push(ItemOutcome {
                name: cut(&name, MAX_NAME_CHARS),
                outcome: if failed { "failed" } else { "skipped" }.into(),
                reason: reason.into(),
            });
        }
    }
}

/// `text` cut to `most` characters (an ellipsis says so).
pub fn cut(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let mut out: String = text.chars().take(most.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Documents waiting to be written, and the texts already seen in this batch.
struct Pending {
    docs: Vec<(String, NewDoc)>,
    chars: usize,
    seen: HashSet<String>,
}

pub struct LibraryHandler<L: Library + 'static> {
    library: Arc<store::Catalogued<L>>,
    files: store::FileStore,
    extractor: Arc<Extractor>,
    /// Limits of one document inside a batch.
    limits: docio::Limits,
    /// The largest batch accepted.
    max_batch_bytes: usize,
}

impl<L: Library + 'static> LibraryHandler<L> {
    pub fn new(
        library: Arc<store::Catalogued<L>>,
        files: store::FileStore,
        extractor: Arc<Extractor>,
        config: &crate::config::Config,
    ) -> Self {
        LibraryHandler {
            library,
            files,
            extractor,
            limits: docio::Limits {
                max_bytes: config.max_upload_bytes,
                max_chars: config.max_paper_chars,
                ..docio::Limits::default()
            },
            max_batch_bytes: config.library_upload_bytes,
        }
    }

    async fn import(
        &self,
        ctx: &TaskContext,
        file_key: &str,
        file_name: &str,
    ) -> Result<LibraryJobResult, TaskError> {
        let bytes = self
            .files
            .get(file_key, self.max_batch_bytes + 1)
            .await
            .map_err(|e| TaskError::retryable(format!("读取上传的文件失败：{e}")))?
            .ok_or_else(|| TaskError::permanent("上传的文件已不存在，请重新上传"))?;
        let mut result = LibraryJobResult::default();
        let mut pending = Pending {
            docs: Vec::new(),
            chars: 0,
            seen: HashSet::new(),
        };
        let caller = format!("library-import-{}", ctx.task_id);
        match library_batch::batch_format(file_name) {
            Some(BatchFormat::JsonLines) => {
                let (text, _) = docio::decode_text(&bytes)
                    .map_err(|e| TaskError::permanent(format!("JSON Lines 文件无法读取：{e}")))?;
                self.import_lines(ctx, &text, None, &mut pending, &mut result)
                    .await?;
            }
            Some(BatchFormat::Zip) => {
                let mut entries = ZipEntries::open(&bytes, self.limits.max_bytes)
                    .map_err(TaskError::permanent)?;
                let total = entries.len().max(1);
                while let Some(entry) = entries.next() {
                    match entry {
                        Entry::Unsupported { name } => {
                            result.note(name, false, "不是 .txt、.docx、.pdf 或 .jsonl 文件")
                        }
                        Entry::Failed { name, reason } => result.note(name, true, reason),
                        Entry::File { name, bytes } => {
                            if library_batch::batch_format(&name) == Some(BatchFormat::JsonLines) {
                                match docio::decode_text(&bytes) {
                                    Ok((text, _)) => {
                                        self.import_lines(
                                            ctx,
                                            &text,
                                            Some(&name),
                                            &mut pending,
                                            &mut result,
                                        )
                                        .await?
                                    }
                                    Err(e) => result.note(name, true, e.to_string()),
                                }
                            } else {
                                self.read_document(&caller, name, bytes, &mut pending, &mut result)
                                    .await;
                            }
                        }
                    }
                    if pending.chars >= BATCH_CHARS || pending.docs.len() >= BATCH_DOCS {
                        self.write(&mut pending, &mut result).await?;
                    }
                    let done = entries.position();
                    ctx.progress(
                        (done * 99 / total) as i64,
                        &format!("已处理 {done}/{total} 个文件"),
                    )
                    .await;
                }
            }
            Some(BatchFormat::Document) => {
                self.read_document(
                    &caller,
                    file_name.to_string(),
                    bytes,
                    &mut pending,
                    &mut result,
                )
                .await;
            }
            None => {
                return Err(TaskError::permanent(format!(
                    "不支持的文件类型：请上传 {}",
                    library_batch::ACCEPTED
                )));
            }
        }
        self.write(&mut pending, &mut result).await?;
        Ok(result)
    }

    /// The records of a JSON Lines text (`within`: the archive entry it came from).
    async fn import_lines(
        &self,
        ctx: &TaskContext,
        text: &str,
        within: Option<&str>,
        pending: &mut Pending,
        result: &mut LibraryJobResult,
    ) -> Result<(), TaskError> {
        let total = library_batch::record_lines(text).max(1);
        for (i, (line, record)) in library_batch::json_lines(text).enumerate() {
            let name = match within {
                Some(file) => format!("{file} {line}"),
                None => line,
            };
            match record {
                Err(reason) => result.note(name, true, reason),
                Ok(record) => {
                    let doc = record.into_doc(Scope::Public, None);
                    if doc.title.is_empty() {
                        result.note(name, true, "缺少题名（title）");
                    } else if doc.title.chars().count() > MAX_TITLE_CHARS {
                        result.note(name, true, format!("题名过长（超过 {MAX_TITLE_CHARS} 字）"));
                    } else {
                        self.accept(name, doc, pending, result);
                    }
                }
            }
            if pending.chars >= BATCH_CHARS || pending.docs.len() >= BATCH_DOCS {
                self.write(pending, result).await?;
            }
            // A single JSON Lines file reports its own progress; inside an archive the
            // archive's count of files does.
            if within.is_none() && (i % 50 == 0 || i + 1 == total) {
                ctx.progress(
                    ((i + 1) * 99 / total) as i64,
                    &format!("已处理 {}/{total} 条", i + 1),
                )
                .await;
            }
        }
        Ok(())
    }

    /// Reads one .txt/.docx/.pdf in the isolated reader.
    async fn read_document(
        &self,
        caller: &str,
        name: String,
        bytes: Vec<u8>,
        pending: &mut Pending,
        result: &mut LibraryJobResult,
    ) {
        match self
            .extractor
            .extract(caller, bytes, &name, self.limits)
            .await
        {
            Ok(extracted) => {
                let mut doc = NewDoc::public(library_batch::title_from_name(&name), extracted.text);
                doc.source = name.clone();
                self.accept(name, doc, pending, result);
            }
            Err(e) => result.note(name, true, e.to_string()),
        }
    }

    /// Queues a document unless it is too short, too long or a copy of one already seen in
    /// this batch.
    fn accept(
        &self,
        name: String,
        mut doc: NewDoc,
        pending: &mut Pending,
        result: &mut LibraryJobResult,
    ) {
        // NUL is no character of a paper, and PostgreSQL's text refuses it.
        for field in [
            &mut doc.title,
            &mut doc.author,
            &mut doc.source,
            &mut doc.text,
        ] {
            if field.contains('\0') {
                *field = field.replace('\0', "");
            }
        }
        doc.author = doc.author.chars().take(MAX_META_CHARS).collect();
        doc.source = doc.source.chars().take(MAX_META_CHARS).collect();
        if simcheck::normalize::count_chars(&doc.text) > self.limits.max_chars {
            result.note(
                name,
                true,
                format!(
                    "正文过长（超过 {} 字），请拆分后导入",
                    self.limits.max_chars
                ),
            );
            return;
        }
        if library_batch::content_chars(&doc.text) < library_batch::MIN_DOC_CHARS {
            result.note(
                name,
                false,
                format!("正文过短（少于 {} 字）", library_batch::MIN_DOC_CHARS),
            );
            return;
        }
        if !pending.seen.insert(store::text_hash(&doc.text)) {
            result.note(name, false, "与本批中前面的一篇内容相同");
            return;
        }
        pending.chars += doc.text.chars().count();
        pending.docs.push((name, doc));
    }

    /// Writes the pending documents, passing over those whose text the library holds already
    /// (the same batch uploaded twice, or this import run again after a crash).
    async fn write(
        &self,
        pending: &mut Pending,
        result: &mut LibraryJobResult,
    ) -> Result<(), TaskError> {
        if pending.docs.is_empty() {
            return Ok(());
        }
        let docs = std::mem::take(&mut pending.docs);
        pending.chars = 0;
        let hashes: Vec<String> = docs
            .iter()
            .map(|(_, d)| store::text_hash(&d.text))
            .collect();
        let present = self
            .library
            .store()
            .public_texts_present(&hashes)
            .await
            .map_err(|e| TaskError::retryable(format!("比对库目录暂时不可用：{e}")))?;
        let mut fresh = Vec::with_capacity(docs.len());
        for ((name, doc), hash) in docs.into_iter().zip(&hashes) {
            match present.get(hash) {
                Some(id) => result.note(
                    name,
                    false,
                    format!("比对库中已有相同内容的文献（编号 {id}）"),
                ),
                None => fresh.push(doc),
            }
        }
        if fresh.is_empty() {
            return Ok(());
        }
        let chars: u64 = fresh.iter().map(|d| d.text.chars().count() as u64).sum();
        let added = fresh.len() as u64;
        self.library
            .add(fresh)
            .await
            .map_err(|e| TaskError::retryable(format!("写入比对库失败：{e}")))?;
        result.imported += added;
        result.imported_chars += chars;
        Ok(())
    }

    async fn remove(&self, docs: &[u64]) -> Result<LibraryJobResult, TaskError> {
        let mut result = LibraryJobResult::default();
        for &id in docs {
            let unavailable =
                |e: simcheck::LibraryError| TaskError::retryable(format!("比对库暂时不可用：{e}"));
            // Only public documents: a student's own paper is theirs to remove.
            let public = self
                .library
                .meta(id)
                .await
                .map_err(unavailable)?
                .is_some_and(|m| m.scope == Scope::Public);
            if public && self.library.remove(id).await.map_err(unavailable)? {
                result.removed += 1;
            } else {
                result.missing += 1;
                if result.items.len() < LISTED_ITEMS {
                    result.items.push(ItemOutcome {
                        name: format!("编号 {id}"),
                        outcome: "skipped".into(),
                        reason: "不在公共比对库中（已移除，或是学生自己的论文）".into(),
                    });
                }
            }
        }
        Ok(result)
    }
}

impl<L: Library + 'static> TaskHandler for LibraryHandler<L> {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move {
            let job: LibraryJob = serde_json::from_str(&ctx.input)
                .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
            let result = match &job {
                LibraryJob::Import {
                    file_key,
                    file_name,
                } => {
                    ctx.progress(0, "读取上传的文件").await;
                    let result = self.import(&ctx, file_key, file_name).await?;
                    // The batch has served its purpose; a failure to delete it only costs disk.
                    if let Some((folder, _)) = file_key.rsplit_once('/')
                        && let Err(e) = self.files.remove_under(folder).await
                    {
                        tracing::warn!(error = %e, key = %file_key, "imported batch not removed");
                    }
                    result
                }
                LibraryJob::Remove { docs } => {
                    ctx.progress(0, "移除文献").await;
                    self.remove(docs).await?
                }
            };
            if let Err(e) = self.library.record_status().await {
                tracing::warn!(error = %e, "library size not recorded");
            }
            serde_json::to_string(&result)
                .map(Into::into)
                .map_err(|e| TaskError::permanent(e.to_string()))
        })
    }
}

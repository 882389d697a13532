//! Where uploaded and generated files live. One interface, three backends: a folder on this
//! machine (the embedded default), the database (the `files` table), which every API node and
//! worker of a multi-machine deployment reaches through the same URL as the rest of the data,
//! and a bucket of an S3-compatible object store (`objects`), which they reach over HTTP.
//!
//! Keys are relative paths such as `check/42/论文.docx`: segments of any characters but `/`,
//! `\` and NUL, none empty, `.` or `..`, so a key never leaves its folder.

use crate::{Result, Store, StoreError, now_ms};
use std::path::{Path, PathBuf};

/// The longest key, in bytes (a file name of 255 bytes under a family and a task id fits).
const MAX_KEY_BYTES: usize = 512;

#[derive(Clone)]
pub enum FileStore {
    /// Files under this folder, one file per key.
    Folder(PathBuf),
    /// Files as rows of the database's `files` table.
    Database(Store),
    /// Files as objects in a bucket of an S3-compatible store.
    Object(crate::objects::Bucket),
}

/// A stored file's key and size, as `FileStore::list` gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    pub key: String,
    pub bytes: u64,
}

/// Checks a key (see the module comment).
pub(crate) fn checked_key(key: &str) -> Result<&str> {
    let fine = !key.is_empty()
        && key.len() <= MAX_KEY_BYTES
        && !key.contains(['\\', '\0'])
        && key
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..");
    if fine {
        Ok(key)
    } else {
        Err(StoreError::Invalid(format!("文件路径不合法：{key:?}")))
    }
}

/// A prefix for `remove_under` and `list`: a key, or empty for everything.
fn checked_prefix(prefix: &str) -> Result<&str> {
    if prefix.is_empty() {
        Ok(prefix)
    } else {
        checked_key(prefix)
    }
}

/// `prefix` as a LIKE pattern matching the keys under it (`\` escapes the wildcards).
fn under_pattern(prefix: &str) -> String {
    let mut pattern = crate::like_literal(prefix);
    if !prefix.is_empty() {
        pattern.push('/');
    }
    pattern.push('%');
    pattern
}

impl FileStore {
    /// `folder` (the default), `database` or `s3`, as the configuration names them.
    pub fn backend_name(&self) -> &'static str {
        match self {
            FileStore::Folder(_) => "folder",
            FileStore::Database(_) => "database",
            FileStore::Object(_) => "s3",
        }
    }

    /// Stores `bytes` under `key`, replacing what was there. A reader sees the old file or the
    /// new one, never a part.
    pub async fn put(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let key = checked_key(key)?;
        match self {
            FileStore::Folder(root) => {
                let path = root.join(key);
                let bytes = bytes.to_vec();
                blocking(move || write_atomically(&path, &bytes)).await
            }
            FileStore::Database(store) => {
                sqlx::query(
                    "INSERT INTO files (key, bytes, size, created_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes, size = excluded.size, \
                     created_at = excluded.created_at",
                )
                .bind(key)
                .bind(bytes.to_vec())
                .bind(bytes.len() as i64)
                .bind(now_ms())
                .execute(&store.pool)
                .await?;
                Ok(())
            }
            FileStore::Object(bucket) => bucket.put(key, bytes).await,
        }
    }

    /// The file under `key`, or `None` when there is none. A file larger than `max_bytes` is an
    /// error (`StoreError::Invalid`), never read whole into memory.
    pub async fn get(&self, key: &str, max_bytes: usize) -> Result<Option<Vec<u8>>> {
        let key = checked_key(key)?;
        let too_large = || StoreError::Invalid(format!("文件过大：{key}"));
        match self {
            FileStore::Folder(root) => {
                let path = root.join(key);
                let read = blocking(move || {
                    use std::io::Read;
                    let file = match std::fs::File::open(&path) {
                        Ok(file) => file,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                        Err(e) => return Err(io_error(&path, e)),
                    };
                    let mut bytes = Vec::new();
                    file.take((max_bytes as u64).saturating_add(1))
                        .read_to_end(&mut bytes)
                        .map_err(|e| io_error(&path, e))?;
                    Ok(Some(bytes))
                })
                .await?;
                match read {
                    Some(bytes) if bytes.len() > max_bytes => Err(too_large()),
                    other => Ok(other),
                }
            }
            FileStore::Database(store) => {
                let size: Option<i64> = sqlx::query_scalar("SELECT size FROM files WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&store.pool)
                    .await?;
                match size {
                    None => Ok(None),
                    Some(size) if size as u64 > max_bytes as u64 => Err(too_large()),
                    Some(_) => Ok(sqlx::query_scalar("SELECT bytes FROM files WHERE key = $1")
                        .bind(key)
                        .fetch_optional(&store.pool)
                        .await?),
                }
            }
            FileStore::Object(bucket) => bucket.get(key, max_bytes).await,
        }
    }

    /// Removes every file under `prefix` (a key's folder, e.g. `check/42`); returns how many.
    pub async fn remove_under(&self, prefix: &str) -> Result<u64> {
        let prefix = checked_key(prefix)?;
        match self {
            FileStore::Folder(root) => {
                let dir = root.join(prefix);
                blocking(move || {
                    let count = walk(&dir, &dir)?.len() as u64;
                    match std::fs::remove_dir_all(&dir) {
                        Ok(()) => Ok(count),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
                        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(0),
                        Err(e) => Err(io_error(&dir, e)),
                    }
                })
                .await
            }
            FileStore::Database(store) => Ok(sqlx::query(
                "DELETE FROM files WHERE key LIKE $1 ESCAPE '\\'",
            )
            .bind(under_pattern(prefix))
            .execute(&store.pool)
            .await?
            .rows_affected()),
            FileStore::Object(bucket) => bucket.remove_under(prefix).await,
        }
    }

    /// The files under `prefix` (empty: all), in key order — for moving a deployment's files
    /// from one backend to another and for measuring what they take.
    pub async fn list(&self, prefix: &str) -> Result<Vec<StoredFile>> {
        let prefix = checked_prefix(prefix)?;
        match self {
            FileStore::Folder(root) => {
                let root = root.clone();
                let dir = root.join(prefix);
                blocking(move || walk(&root, &dir)).await
            }
            FileStore::Database(store) => {
                let rows: Vec<(String, i64)> = sqlx::query_as(
                    "SELECT key, size FROM files WHERE key LIKE $1 ESCAPE '\\' ORDER BY key",
                )
                .bind(under_pattern(prefix))
                .fetch_all(&store.pool)
                .await?;
                Ok(rows
                    .into_iter()
                    .map(|(key, size)| StoredFile {
                        key,
                        bytes: size.max(0) as u64,
                    })
                    .collect())
            }
            FileStore::Object(bucket) => bucket.list(prefix).await,
        }
    }

    /// Whether the backend answers: the folder exists and takes a file, the database
    /// answers a query on the table, or the bucket takes and gives back a probe object.
    pub async fn ping(&self) -> Result<()> {
        match self {
            FileStore::Folder(root) => {
                // A name of its own per probe: two health checks at once must not remove
                // each other's file.
                let probe = root.join(format!(".probe-{}", unique_suffix()));
                blocking(move || {
                    write_atomically(&probe, b"ok")?;
                    std::fs::remove_file(&probe).map_err(|e| io_error(&probe, e))
                })
                .await
            }
            FileStore::Database(store) => {
                sqlx::query("SELECT COUNT(*) FROM files WHERE key = ''")
                    .execute(&store.pool)
                    .await?;
                Ok(())
            }
            FileStore::Object(bucket) => bucket.ping().await,
        }
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Io(format!("文件操作中断：{e}")))?
}

fn io_error(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Io(format!("{}：{e}", path.display()))
}

/// Writes to a temporary file beside `path`, flushes it and renames it into place.
/// Unique across processes (the pid) and across concurrent writers in this one (a counter), so
/// two writes in flight never share a temporary file.
pub(crate) fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    let partial = path.with_file_name(format!(
        ".{}.partial-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        unique_suffix()
    ));
    let mut file = std::fs::File::create(&partial).map_err(|e| io_error(&partial, e))?;
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(|e| io_error(&partial, e))?;
    std::fs::rename(&partial, path).map_err(|e| io_error(path, e))
}

/// The files under `dir` as keys relative to `root`, in key order (partial writes left out).
fn walk(root: &Path, dir: &Path) -> Result<Vec<StoredFile>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let entries = match std::fs::read_dir(&next) {
            Ok(entries) => entries,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                continue;
            }
            Err(e) => return Err(io_error(&next, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&next, e))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| io_error(&path, e))?;
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                let name = entry.file_name();
                if name.to_string_lossy().starts_with('.') {
                    continue;
                }
                let Some(key) = path
                    .strip_prefix(root)
                    .ok()
                    .and_then(|k| k.to_str())
                    .map(str::to_string)
                else {
                    continue;
                };
                let bytes = entry.metadata().map_err(|e| io_error(&path, e))?.len();
                out.push(StoredFile { key, bytes });
            }
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_leave_their_folder() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "..",
            "a//b",
            "a/./b",
            "a\\b",
            "a\0b",
            "a/",
        ] {
            assert!(checked_key(bad).is_err(), "{bad:?}");
        }
        for good in ["check/42/论文.docx", "paper/7/refs.bib", "a b/c…d"] {
            assert_eq!(checked_key(good).unwrap(), good);
        }
        assert!(checked_key(&"x".repeat(MAX_KEY_BYTES + 1)).is_err());
    }

    #[test]
    fn a_prefix_pattern_matches_only_its_folder() {
        assert_eq!(under_pattern("check/4_2"), "check/4\\_2/%");
        assert_eq!(under_pattern(""), "%");
    }
}

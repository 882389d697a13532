//! A batch of documents for the library, as an operator uploads it from the console: JSON Lines
//! (one record per line, `simcheck::LibraryRecord`), a .zip of .txt/.docx/.pdf (and .jsonl)
//! files, or one such file. Reading the archive is bounded (entries, bytes per entry, bytes in
//! all), so a zip bomb ends as failed entries, never as a worker out of memory; the documents
//! inside are read by the isolated extractor like any upload.

use std::io::{Cursor, Read};

/// Entries of one archive looked at.
pub const MAX_ENTRIES: usize = 100_000;
/// Uncompressed bytes read from one archive in all.
pub const MAX_UNCOMPRESSED: u64 = 4 * 1024 * 1024 * 1024;
/// Fewer characters (not counting spaces) than this is no document to compare with.
pub const MIN_DOC_CHARS: usize = 50;

/// The accepted kinds, for messages.
pub const ACCEPTED: &str = ".jsonl、.zip（内含 .txt/.docx/.pdf）或单个 .txt/.docx/.pdf 文件";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchFormat {
    JsonLines,
    Zip,
    /// One .txt, .docx or .pdf.
    Document,
}

fn extension(name: &str) -> String {
    name.rsplit_once('.')
        .map(|(_, e)| e.to_lowercase())
        .unwrap_or_default()
}

/// The batch's kind by its file name, or `None` for a kind not taken.
pub fn batch_format(file_name: &str) -> Option<BatchFormat> {
    match extension(file_name).as_str() {
        "jsonl" | "ndjson" => Some(BatchFormat::JsonLines),
        "zip" => Some(BatchFormat::Zip),
        "txt" | "docx" | "pdf" => Some(BatchFormat::Document),
        _ => None,
    }
}

/// Whether an entry of an archive is a document to read (not a folder, not the hidden files
/// macOS and Windows add).
fn readable_entry(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    !name.ends_with('/')
        && !name.starts_with("__MACOSX/")
        && !base.starts_with('.')
        && !base.eq_ignore_ascii_case("thumbs.db")
}

/// Checks a batch before it is accepted: the archive opens and holds something to import, a
/// JSON Lines file is text. Returns how many items it holds (entries or lines); the message says
/// in Chinese what is wrong.
pub fn check_batch(bytes: &[u8], file_name: &str) -> Result<usize, String> {
    match batch_format(file_name) {
        None => Err(format!("不支持的文件类型：请上传 {ACCEPTED}")),
        Some(BatchFormat::JsonLines) => {
            let (text, _) = docio::decode_text(bytes)
                .map_err(|e| format!("JSON Lines 文件无法读取为文本：{e}"))?;
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            if lines.is_empty() {
                return Err("JSON Lines 文件是空的：每行应为一篇文献的 JSON".into());
            }
            // A binary file may decode as some legacy encoding; records start with `{`.
            if text.contains('\0') || !lines.iter().any(|l| l.trim_start().starts_with('{')) {
                return Err("这不是 JSON Lines 文件：每行应为一篇文献的 JSON，如 {\"title\": \"…\", \"text\": \"…\"}".into());
            }
            Ok(lines.len())
        }
        Some(BatchFormat::Zip) => {
            let archive = zip::ZipArchive::new(Cursor::new(bytes))
                .map_err(|_| "压缩包无法读取（可能已损坏或不是 zip 格式）".to_string())?;
            if archive.len() > MAX_ENTRIES {
                return Err(format!(
                    "压缩包内文件过多（{} 个，上限 {MAX_ENTRIES} 个），请分成几批上传",
                    archive.len()
                ));
            }
            let entries = archive
                .file_names()
                .filter(|n| readable_entry(n))
                .filter(|n| batch_format(n).is_some_and(|f| f != BatchFormat::Zip))
                .count();
            if entries == 0 {
                return Err("压缩包中没有可导入的 .txt、.docx、.pdf 或 .jsonl 文件".into());
            }
            Ok(entries.min(MAX_ENTRIES))
        }
        Some(BatchFormat::Document) => {
            if bytes.is_empty() {
                return Err("文件是空的".into());
            }
            Ok(1)
        }
    }
}

/// One file taken out of an archive, or why it could not be.
pub enum Entry {
    File {
        name: String,
        bytes: Vec<u8>,
    },
    /// Not a kind the library takes (skipped, with the reason).
    Unsupported {
        name: String,
    },
    Failed {
        name: String,
        reason: String,
    },
}

/// The files of a .zip, read one at a time within the limits.
pub struct ZipEntries<'a> {
    archive: zip::ZipArchive<Cursor<&'a [u8]>>,
    next: usize,
    read_so_far: u64,
    max_entry_bytes: usize,
}

impl<'a> ZipEntries<'a> {
    pub fn open(bytes: &'a [u8], max_entry_bytes: usize) -> Result<Self, String> {
        let archive =
            zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| format!("压缩包无法读取：{e}"))?;
        Ok(ZipEntries {
            archive,
            next: 0,
            read_so_far: 0,
            max_entry_bytes,
        })
    }

    /// Entries that will be looked at (folders and hidden files included; they are passed over).
    pub fn len(&self) -> usize {
        self.archive.len().min(MAX_ENTRIES)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many entries have been looked at.
    pub fn position(&self) -> usize {
        self.next
    }
}

impl Iterator for ZipEntries<'_> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        loop {
            if self.next >= self.len() {
                return None;
            }
            let index = self.next;
            self.next += 1;
            let listed_name = self
                .archive
                .name_for_index(index)
                .unwrap_or("（无名条目）")
                .to_string();
            let mut file = match self.archive.by_index(index) {
                Ok(file) => file,
                Err(e) => {
                    let name = listed_name;
                    let reason = match e {
                        zip::result::ZipError::UnsupportedArchive(_) => {
                            "条目已加密或使用了不支持的压缩方式".to_string()
                        }
                        other => format!("条目无法读取：{other}"),
                    };
                    return Some(Entry::Failed { name, reason });
                }
            };
            let name = entry_name(file.name_raw(), file.name());
            if file.is_dir() || !readable_entry(&name) {
                continue;
            }
            match batch_format(&name) {
                Some(BatchFormat::Document) | Some(BatchFormat::JsonLines) => {}
                _ => return Some(Entry::Unsupported { name }),
            }
            if file.size() > self.max_entry_bytes as u64 {
                return Some(Entry::Failed {
                    name,
                    reason: format!(
                        "文件过大（超过 {} MB）",
                        self.max_entry_bytes / (1024 * 1024)
                    ),
                });
            }
            if self.read_so_far > MAX_UNCOMPRESSED {
                return Some(Entry::Failed {
                    name,
                    reason: "压缩包解压后的内容过大，其余文件未读取".into(),
                });
            }
            // The declared size may lie: read at most one byte more than allowed.
            let mut bytes = Vec::new();
            let read = (&mut file)
                .take(self.max_entry_bytes as u64 + 1)
                .read_to_end(&mut bytes);
            self.read_so_far += bytes.len() as u64;
            return Some(match read {
                Err(e) => Entry::Failed {
                    name,
                    reason: format!("解压失败：{e}"),
                },
                Ok(_) if bytes.len() > self.max_entry_bytes => Entry::Failed {
                    name,
                    reason: format!(
                        "文件过大（超过 {} MB）",
                        self.max_entry_bytes / (1024 * 1024)
                    ),
                },
                Ok(_) => Entry::File { name, bytes },
            });
        }
    }
}

/// An entry's name: archives made on Chinese Windows (Explorer, 360压缩, older WinRAR) store
/// names in GBK without the UTF-8 flag, which a reader takes for CP437; such bytes are read as
/// GB18030.
fn entry_name(raw: &[u8], decoded: &str) -> String {
    if raw.is_ascii() || std::str::from_utf8(raw).is_ok() {
        return decoded.to_string();
    }
    let (text, _, malformed) = encoding_rs::GB18030.decode(raw);
    if malformed {
        decoded.to_string()
    } else {
        text.into_owned()
    }
}

/// Non-empty lines of a JSON Lines text.
pub fn record_lines(text: &str) -> usize {
    text.lines().filter(|line| !line.trim().is_empty()).count()
}

/// The documents of a JSON Lines text, read one line at a time: each line a record, or the
/// reason it is not one.
pub fn json_lines(
    text: &str,
) -> impl Iterator<Item = (String, Result<simcheck::LibraryRecord, String>)> + '_ {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let name = format!("第 {} 行", i + 1);
            let record = serde_json::from_str::<simcheck::LibraryRecord>(line.trim())
                .map_err(|e| record_error(&e));
            (name, record)
        })
}

/// Why a line is not a record, in words an operator can act on.
fn record_error(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            format!("不是有效的 JSON（第 {} 列附近）", error.column())
        }
        Category::Data if error.to_string().contains("missing field `text`") => {
            "缺少正文字段 text".into()
        }
        Category::Data => {
            "字段内容不合要求：text、title、author、source 应为文字，year 应为整数".into()
        }
    }
}

/// The title of a document read from a file: its name without folders and extension.
pub fn title_from_name(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    base.rsplit_once('.')
        .map_or(base, |(stem, _)| stem)
        .trim()
        .to_string()
}

/// Counted characters of a text, spaces not included.
pub fn content_chars(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        {
            let mut writer = zip::ZipWriter::new(&mut out);
            for (name, bytes) in files {
                writer
                    .start_file(*name, zip::write::SimpleFileOptions::default())
                    .unwrap();
                writer.write_all(bytes).unwrap();
            }
            writer.finish().unwrap();
        }
        out.into_inner()
    }

    #[test]
    fn kinds_are_told_by_extension() {
        assert_eq!(batch_format("a.JSONL"), Some(BatchFormat::JsonLines));
        assert_eq!(batch_format("库.zip"), Some(BatchFormat::Zip));
        assert_eq!(batch_format("论文.docx"), Some(BatchFormat::Document));
        assert_eq!(batch_format("x.exe"), None);
        assert_eq!(batch_format("noext"), None);
    }

    #[test]
    fn an_archive_is_checked_before_it_is_accepted() {
        let good = zip_of(&[("a.txt", "正文".as_bytes()), ("__MACOSX/._a.txt", b"x")]);
        assert_eq!(check_batch(&good, "b.zip"), Ok(1));
        let nothing = zip_of(&[("a.exe", b"MZ")]);
        assert!(
            check_batch(&nothing, "b.zip")
                .unwrap_err()
                .contains("没有可导入")
        );
        assert!(
            check_batch(b"PK\x03\x04garbage", "b.zip")
                .unwrap_err()
                .contains("无法读取")
        );
        assert!(check_batch(b"\x00\x01\x02\xff\xfe", "b.jsonl").is_err());
        assert!(check_batch(b"x", "b.rar").unwrap_err().contains("不支持"));
    }

    #[test]
    fn entries_over_the_limit_fail_and_others_are_read() {
        let big = vec![b'a'; 2048];
        let bytes = zip_of(&[
            ("dir/一.txt", "第一篇".as_bytes()),
            ("dir/big.txt", &big),
            ("dir/x.png", b"\x89PNG"),
        ]);
        let entries: Vec<Entry> = ZipEntries::open(&bytes, 1024).unwrap().collect();
        assert!(
            matches!(&entries[0], Entry::File { name, bytes } if name == "dir/一.txt" && bytes == "第一篇".as_bytes())
        );
        assert!(matches!(&entries[1], Entry::Failed { reason, .. } if reason.contains("过大")));
        assert!(matches!(&entries[2], Entry::Unsupported { .. }));
        assert_eq!(entries.len(), 3);
    }

    #[test]
    fn json_lines_name_the_bad_line() {
        let lines: Vec<_> =
            json_lines("{\"title\":\"t\",\"text\":\"正文\"}\n\n{\"title\":1}\n").collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].1.is_ok());
        assert_eq!(lines[1].0, "第 3 行");
        assert!(lines[1].1.is_err());
    }

    #[test]
    fn names_in_gbk_are_read_as_chinese() {
        let (gbk, _, _) = encoding_rs::GBK.encode("中文名.txt");
        // What a reader that takes the bytes for CP437 shows.
        assert_eq!(entry_name(&gbk, "╓╨╬─├√.txt"), "中文名.txt");
        assert_eq!(
            entry_name("中文名.txt".as_bytes(), "中文名.txt"),
            "中文名.txt"
        );
    }

    #[test]
    fn titles_come_from_file_names() {
        assert_eq!(title_from_name("a/b/中药 研究.docx"), "中药 研究");
        assert_eq!(title_from_name("无扩展名"), "无扩展名");
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..4096)) {
            let _ = check_batch(&bytes, "x.zip");
            let _ = check_batch(&bytes, "x.jsonl");
            if let Ok(entries) = ZipEntries::open(&bytes, 1 << 20) {
                for _ in entries {}
            }
            if let Ok((text, _)) = docio::decode_text(&bytes) {
                for _ in json_lines(&text) {}
            }
        }
    }
}

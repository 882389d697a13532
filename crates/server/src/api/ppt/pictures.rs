//! Pictures of decks as a viewer draws them: LibreOffice Impress (headless) turns the .pptx
//! into PDF, poppler's `pdftoppm` turns its first pages into PNG. The PDF is the download; the
//! pictures are the template gallery's thumbnails (each template's own .pptx) and the first
//! slides of a user's deck on /aippt/list. Both tools are optional: without them the pages draw
//! the same layout as SVG. One conversion at a time in a process (each is a whole office suite),
//! killed with everything it started when it runs out of time.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use std::time::Instant;
use tokio::process::Command;

/// LibreOffice conversions at a time: each is a whole office suite.
static CONVERSIONS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);
/// Longest conversion of one deck.
const CONVERSION_SECONDS: u64 = 120;
/// Longest rasterisation of a few pages.
const RASTER_SECONDS: u64 = 30;
/// Width of a template thumbnail, in pixels (the gallery shows them at about 180).
pub const THUMBNAIL_WIDTH: u32 = 480;
/// Width of a deck's preview pictures on /aippt/list.
pub const PREVIEW_WIDTH: u32 = 320;
/// How many first slides of a deck are previewed.
pub const PREVIEW_PAGES: usize = 3;
/// Largest deck PDF read back from the store.
const PDF_MAX_BYTES: usize = 200 * 1024 * 1024;
/// A PNG larger than this is not a thumbnail.
const PICTURE_MAX_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertError {
    /// `soffice` or `pdftoppm` is not installed.
    Missing,
    /// It ran and failed, or ran out of time.
    Failed,
    /// Another conversion holds the slot and the caller would not wait.
    Busy,
}

/// The process group of a conversion: `soffice` hands the work to a `soffice.bin` child, which
/// must die with it (on time-out, or when the request that waits for it goes away).
struct ProcessGroup(Option<u32>);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .0
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            // A group already gone is no error.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Runs `command` to completion within `seconds`; it and its children are killed on time-out.
async fn run(mut command: Command, seconds: u64) -> Result<(), ConvertError> {
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let child = command.spawn().map_err(|_| ConvertError::Missing)?;
    let _group = ProcessGroup(child.id());
    match tokio::time::timeout(Duration::from_secs(seconds), child.wait_with_output()).await {
        Ok(Ok(out)) if out.status.success() => Ok(()),
        _ => Err(ConvertError::Failed),
    }
}

/// The deck as PDF, drawn by LibreOffice Impress (its own profile, time-limited, one at a time).
pub async fn pdf_of(pptx: &[u8]) -> Result<Vec<u8>, ConvertError> {
    let mut pdfs = pdfs_of(&[pptx]).await?;
    pdfs.pop().ok_or(ConvertError::Failed)
}

/// Several decks as PDF, in one start of LibreOffice (most of a conversion's time), in order.
pub async fn pdfs_of(decks: &[&[u8]]) -> Result<Vec<Vec<u8>>, ConvertError> {
    let _slot = CONVERSIONS
        .acquire()
        .await
        .map_err(|_| ConvertError::Failed)?;
    convert(decks).await
}

/// `pdfs_of` for a caller that holds the conversion slot.
async fn convert(decks: &[&[u8]]) -> Result<Vec<Vec<u8>>, ConvertError> {
    let dir = tempfile::tempdir().map_err(|_| ConvertError::Failed)?;
    let mut paths = Vec::with_capacity(decks.len());
    for (i, pptx) in decks.iter().enumerate() {
        let path = dir.path().join(format!("deck{i}.pptx"));
        tokio::fs::write(&path, pptx)
            .await
            .map_err(|_| ConvertError::Failed)?;
        paths.push(path);
    }
    let inputs: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    run(
        Command::from(docio::office::pdfs_command(&inputs, dir.path())),
        CONVERSION_SECONDS * decks.len().max(1) as u64,
    )
    .await?;
    let mut out = Vec::with_capacity(decks.len());
    for i in 0..decks.len() {
        out.push(
            tokio::fs::read(dir.path().join(format!("deck{i}.pdf")))
                .await
                .map_err(|_| ConvertError::Failed)?,
        );
    }
    Ok(out)
}

/// The first `pages` pages of a PDF as PNG images `width` pixels wide, in page order.
pub async fn pages_of(pdf: &[u8], pages: usize, width: u32) -> Result<Vec<Vec<u8>>, ConvertError> {
    let dir = tempfile::tempdir().map_err(|_| ConvertError::Failed)?;
    let path = dir.path().join("deck.pdf");
    tokio::fs::write(&path, pdf)
        .await
        .map_err(|_| ConvertError::Failed)?;
    let mut command = Command::new("pdftoppm");
    command
        .args(["-png", "-f", "1", "-l"])
        .arg(pages.to_string())
        .args(["-scale-to-x", &width.to_string(), "-scale-to-y", "-1"])
        .arg(&path)
        .arg(dir.path().join("page"));
    run(command, RASTER_SECONDS).await?;
    // pdftoppm names them page-1.png … (zero-padded to the page count's width).
    let mut names: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path())
        .map_err(|_| ConvertError::Failed)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names.into_iter().take(pages) {
        let bytes = tokio::fs::read(&name)
            .await
            .map_err(|_| ConvertError::Failed)?;
        if bytes.len() > PICTURE_MAX_BYTES {
            return Err(ConvertError::Failed);
        }
        out.push(bytes);
    }
    if out.is_empty() {
        return Err(ConvertError::Failed);
    }
    Ok(out)
}

/// A finished deck's PDF: the one kept (made by its task or an earlier download), else drawn
/// by LibreOffice from `pptx` (waiting for the slot) and kept.
pub async fn deck_pdf(
    files: &store::FileStore,
    task_id: i64,
    template: &str,
    pptx: &[u8],
) -> Result<Vec<u8>, ConvertError> {
    kept_pdf(files, task_id, template, pdf_of(pptx)).await
}

/// The deck's kept PDF, else what `convert` makes of it, kept for the next time.
async fn kept_pdf(
    files: &store::FileStore,
    task_id: i64,
    template: &str,
    convert: impl std::future::Future<Output = Result<Vec<u8>, ConvertError>>,
) -> Result<Vec<u8>, ConvertError> {
    let key = super::task::pdf_key(task_id, template);
    if let Ok(Some(pdf)) = files.get(&key, PDF_MAX_BYTES).await {
        return Ok(pdf);
    }
    let pdf = convert.await?;
    if let Err(e) = files.put(&key, &pdf).await {
        tracing::warn!(task = task_id, error = %e, "deck PDF not kept");
    }
    Ok(pdf)
}

/// Where preview picture `page` (0-based) of a deck written with `template` is kept (beside
/// its PDF, in the folder the task clears before drawing them).
pub fn preview_key(task_id: i64, template: &str, page: usize) -> String {
    format!(
        "{}/preview-{page}.png",
        super::task::drawn_folder(task_id, template)
    )
}

/// How a caller waits for the conversion slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// In turn (a task, under its own time limit).
    InTurn,
    /// Not at all (a request): `ConvertError::Busy` when another conversion runs.
    NotAtAll,
}

/// Decks LibreOffice failed on lately, by (task, template): not tried again for a while, so
/// asking again and again for a deck it chokes on does not keep it busy.
fn recent_failures() -> &'static Mutex<HashMap<(i64, String), Instant>> {
    static FAILED: OnceLock<Mutex<HashMap<(i64, String), Instant>>> = OnceLock::new();
    FAILED.get_or_init(Default::default)
}

/// How long a deck LibreOffice failed on is left alone.
const RETRY_AFTER: Duration = Duration::from_secs(10 * 60);

/// The first `pages` preview pictures of a deck, when they were drawn before.
pub async fn stored_previews(
    files: &store::FileStore,
    task_id: i64,
    template: &str,
    pages: usize,
) -> Option<Vec<Vec<u8>>> {
    let mut kept = Vec::with_capacity(pages);
    for page in 0..pages {
        kept.push(
            files
                .get(&preview_key(task_id, template, page), PICTURE_MAX_BYTES)
                .await
                .ok()
                .flatten()?,
        );
    }
    Some(kept)
}

/// Draws the first `pages` slides of a finished deck as LibreOffice does, from its PDF (kept
/// for download; converted from `pptx` when there is none yet), and keeps them.
pub async fn draw_previews(
    files: &store::FileStore,
    task_id: i64,
    template: &str,
    pptx: &[u8],
    pages: usize,
    wait: Wait,
) -> Result<Vec<Vec<u8>>, ConvertError> {
    let key = (task_id, template.to_string());
    if let Ok(mut failed) = recent_failures().lock() {
        failed.retain(|_, at| at.elapsed() < RETRY_AFTER);
        if failed.contains_key(&key) {
            return Err(ConvertError::Failed);
        }
    }
    let _slot = match wait {
        Wait::InTurn => CONVERSIONS
            .acquire()
            .await
            .map_err(|_| ConvertError::Failed)?,
        Wait::NotAtAll => CONVERSIONS.try_acquire().map_err(|_| ConvertError::Busy)?,
    };
    // Drawn while this caller waited for the slot.
    if let Some(kept) = stored_previews(files, task_id, template, pages).await {
        return Ok(kept);
    }
    let drawn = async {
        let converted = async { convert(&[pptx]).await?.pop().ok_or(ConvertError::Failed) };
        let pdf = kept_pdf(files, task_id, template, converted).await?;
        pages_of(&pdf, pages, PREVIEW_WIDTH).await
    }
    .await;
    let pictures = match drawn {
        Err(ConvertError::Failed) => {
            if let Ok(mut failed) = recent_failures().lock() {
                failed.insert(key, Instant::now());
            }
            return Err(ConvertError::Failed);
        }
        other => other?,
    };
    for (page, png) in pictures.iter().enumerate() {
        if let Err(e) = files.put(&preview_key(task_id, template, page), png).await {
            tracing::warn!(task = task_id, error = %e, "deck preview not kept");
        }
    }
    Ok(pictures)
}

/// The version of each template's pictures (`template_sample`), computed once per process.
pub fn template_version(template: &slides::Template) -> Option<&'static str> {
    static VERSIONS: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    VERSIONS
        .get_or_init(|| {
            slides::TEMPLATES
                .iter()
                .filter_map(|t| template_sample(t).ok().map(|(_, v)| (t.id, v)))
                .collect()
        })
        .get(template.id)
        .map(String::as_str)
}

/// A template's sample deck (the cover and a content slide) as .pptx, and the name its
/// pictures are kept under: a digest of those bytes, so a template drawn differently by a
/// new version is rendered again rather than shown from an old picture.
pub fn template_sample(template: &slides::Template) -> Result<(Vec<u8>, String), String> {
    let pptx = slides::pptx::write(&slides::deck::sample(), template, None, &Default::default())
        .map_err(|e| e.to_string())?;
    let digest = Sha256::digest(&pptx);
    let version = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Ok((pptx, version))
}

/// Where picture `page` (0-based) of a template's sample deck is kept.
pub fn template_picture_key(template: &str, version: &str, page: usize) -> String {
    format!(
        "{}/templates/{template}/{version}-{page}.png",
        super::task::FILES
    )
}

/// The template pictures this process knows the file store holds, by template id:
/// (version, pages).
#[derive(Default)]
pub struct RenderedThumbnails {
    known: Mutex<HashMap<String, (String, usize)>>,
    started: std::sync::atomic::AtomicBool,
}

impl RenderedThumbnails {
    /// Starts rendering the thumbnails in the background the first time the gallery is asked
    /// for (a process that never shows it never starts LibreOffice); the first visitors see the
    /// SVG drawings.
    pub fn render_once(self: &Arc<Self>, files: &store::FileStore) {
        if !self
            .started
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            tokio::spawn(render_template_thumbnails(files.clone(), self.clone()));
        }
    }

    fn remember(&self, template: &str, version: String, pages: usize) {
        if let Ok(mut known) = self.known.lock() {
            known.insert(template.to_string(), (version, pages));
        }
    }

    /// The URLs of a template's rendered thumbnails, when they have been rendered for this
    /// version.
    pub fn urls(&self, template: &str, version: &str) -> Vec<String> {
        let known = self
            .known
            .lock()
            .map(|m| m.get(template).cloned())
            .unwrap_or_default();
        match known {
            Some((v, pages)) if v == version => (0..pages)
                .map(|page| {
                    format!(
                        "/api/base/ai_ppt_info_api/template_thumbnail/{template}/{version}-{page}.png"
                    )
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Renders every template's thumbnails that the file store does not hold yet (in the
/// background, all templates in one start of LibreOffice; several processes may do it at once:
/// they write the same bytes). A server without LibreOffice logs it once and keeps drawing SVG.
pub async fn render_template_thumbnails(files: store::FileStore, known: Arc<RenderedThumbnails>) {
    let pages = slides::deck::sample().slides.len();
    let mut missing = Vec::new();
    for template in slides::TEMPLATES.iter() {
        let (pptx, version) = match template_sample(template) {
            Ok(sample) => sample,
            Err(e) => {
                tracing::warn!(template = template.id, error = %e, "template sample not written");
                continue;
            }
        };
        let mut present = 0;
        for page in 0..pages {
            let key = template_picture_key(template.id, &version, page);
            match files.get(&key, PICTURE_MAX_BYTES).await {
                Ok(Some(_)) => present += 1,
                _ => break,
            }
        }
        if present == pages {
            known.remember(template.id, version, pages);
        } else {
            missing.push((template.id, version, pptx));
        }
    }
    if missing.is_empty() {
        return;
    }
    let decks: Vec<&[u8]> = missing.iter().map(|(_, _, pptx)| pptx.as_slice()).collect();
    let pdfs: Vec<Option<Vec<u8>>> = match pdfs_of(&decks).await {
        Ok(pdfs) => pdfs.into_iter().map(Some).collect(),
        Err(ConvertError::Missing) => {
            tracing::info!("LibreOffice not installed: template thumbnails are drawn as SVG");
            return;
        }
        // One deck LibreOffice chokes on fails the batch: each on its own, then.
        Err(ConvertError::Failed | ConvertError::Busy) => {
            let mut one_by_one = Vec::with_capacity(decks.len());
            for deck in &decks {
                one_by_one.push(pdf_of(deck).await.ok());
            }
            one_by_one
        }
    };
    for ((template, version, _), pdf) in missing.into_iter().zip(pdfs) {
        let Some(pdf) = pdf else {
            tracing::warn!(
                template,
                "template thumbnails not rendered: LibreOffice failed"
            );
            continue;
        };
        let pictures = match pages_of(&pdf, pages, THUMBNAIL_WIDTH).await {
            Ok(p) if p.len() == pages => p,
            Ok(_) | Err(ConvertError::Failed | ConvertError::Busy) => {
                tracing::warn!(template, "template thumbnails not rendered");
                continue;
            }
            Err(ConvertError::Missing) => {
                tracing::info!("pdftoppm not installed: template thumbnails are drawn as SVG");
                return;
            }
        };
        let mut stored = true;
        for (page, png) in pictures.iter().enumerate() {
            if let Err(e) = files
                .put(&template_picture_key(template, &version, page), png)
                .await
            {
                tracing::warn!(template, error = %e, "template thumbnail not kept");
                stored = false;
                break;
            }
        }
        if stored {
            known.remember(template, version, pages);
        }
    }
}

/// A template thumbnail's bytes from the file store, `name` being `<version>-<page>.png`.
pub async fn template_picture(
    files: &store::FileStore,
    template: &str,
    name: &str,
) -> Option<Vec<u8>> {
    slides::template::by_id(template)?;
    let (version, page) = name.strip_suffix(".png")?.split_once('-')?;
    let well_formed = version.len() == 16 && version.bytes().all(|b| b.is_ascii_hexdigit());
    let page: usize = page.parse().ok().filter(|p| *p < 8)?;
    if !well_formed {
        return None;
    }
    files
        .get(
            &template_picture_key(template, version, page),
            PICTURE_MAX_BYTES,
        )
        .await
        .ok()
        .flatten()
}

//! `ai_ppt_info_api`: defence slides (答辩PPT). A draft is saved with its source (an uploaded
//! paper, a paper generated or checked here, or a title and outline typed in), kind, slide
//! count, cover details and logo (`save_or_update`); the paper is read then, so a scanned PDF or
//! a paper without headings is refused before anything is paid. A template is chosen
//! (`get_template_list`, thumbnails drawn from each template) and the deck is paid for and
//! queued (`submit_by_id`). A finished deck is downloaded as .pptx or PDF, and written again
//! with another template for free (`change_template`).

use super::pictures;
use super::task::{self as ppt_task, FILES, KIND, PptInput, PptResult};
use crate::api::paper_task::{
    self, Caller, IdForm, ListForm, Queueing, RecordPage, TaskCost, Upload, plain_line,
};
use crate::auth::AuthUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use slides::deck::{DeckKind, DeckMeta, DeckRequest, SLIDE_COUNTS};
use slides::{Paper, SlidesError};
use store::{Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

fn not_found() -> ApiError {
    ApiError::not_found("ppt_not_found", "PPT 记录不存在或已删除")
}

fn slides_error(e: SlidesError) -> ApiError {
    let status = match e {
        SlidesError::Write(_) => StatusCode::INTERNAL_SERVER_ERROR,
        SlidesError::NoHeadings | SlidesError::NoContent | SlidesError::DoesNotFit { .. } => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::new(status, e.code(), e.to_string())
}

async fn owned(state: &AppState, id: i64, user_id: i64) -> Result<Task, ApiError> {
    paper_task::owned_task(state, id, user_id, KIND, not_found).await
}

/// A finished deck of this user, with what the task made.
async fn finished(state: &AppState, id: i64, user_id: i64) -> Result<(Task, PptResult), ApiError> {
    let task = owned(state, id, user_id).await?;
    let result = result_of(&task)
        .filter(|_| task.status == TaskStatus::Done)
        .ok_or_else(|| ApiError::conflict("ppt_not_ready", "PPT 尚未生成完成"))?;
    Ok((task, result))
}

fn input_of(task: &Task) -> Result<PptInput, ApiError> {
    serde_json::from_str(&task.input).map_err(ApiError::internal)
}

fn result_of(task: &Task) -> Option<PptResult> {
    task.result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
}

/// A template as the gallery shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateView {
    pub id: String,
    pub name: String,
    pub description: String,
    /// The template's colours (#RRGGBB).
    pub primary: String,
    pub accent: String,
    pub background: String,
    /// Its cover and a content slide, drawn by the layout the .pptx is written from (SVG
    /// documents); the pages show these until `pictures` are ready.
    pub thumbnails: Vec<String>,
    /// The same two slides as LibreOffice draws the template's own .pptx (URLs of PNG images,
    /// `template_thumbnail`); empty while they are being rendered or where LibreOffice is not
    /// installed.
    pub pictures: Vec<String>,
    /// The price of a deck, in fen (the same for every template).
    pub price_fen: i64,
}

/// The templates, each with thumbnails drawn from it.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/get_template_list", tag = "ai_ppt_info_api",
    responses((status = 200, body = inline(crate::envelope::Envelope<Vec<TemplateView>>))))]
pub async fn get_template_list(State(state): State<AppState>) -> ApiResult<Vec<TemplateView>> {
    let sample = slides::deck::sample();
    let price_fen = crate::prices::Prices::current(&state).await?.ppt_fen;
    let disabled = crate::api::site::sys_config_api::disabled_templates(&state).await?;
    state.template_pictures.render_once(&state.files);
    let mut out = Vec::new();
    // Templates an operator switched off are not offered.
    for t in slides::TEMPLATES
        .iter()
        .filter(|t| !disabled.iter().any(|d| d == t.id))
    {
        let laid = slides::pptx::layout(&sample, t, None).map_err(slides_error)?;
        let pictures = pictures::template_version(t)
            .map(|version| state.template_pictures.urls(t.id, version))
            .unwrap_or_default();
        out.push(TemplateView {
            id: t.id.into(),
            name: t.name.into(),
            description: t.description.into(),
            primary: format!("#{:06X}", t.primary),
            accent: format!("#{:06X}", t.accent),
            background: format!("#{:06X}", t.background),
            thumbnails: laid.iter().map(|s| slides::svg::render(s, t)).collect(),
            pictures,
            price_fen,
        });
    }
    Ok(Success(out))
}

/// A template thumbnail as LibreOffice drew the template's .pptx (PNG; public, cached for good:
/// its name holds the version it was drawn from).
#[utoipa::path(get, path = "/api/base/ai_ppt_info_api/template_thumbnail/{template}/{name}", tag = "ai_ppt_info_api",
    params(("template" = String, Path, description = "template id"),
           ("name" = String, Path, description = "<version>-<page>.png, as get_template_list gives it")),
    responses((status = 200, content_type = "image/png", description = "the picture"),
              (status = 404, description = "thumbnail_not_found")))]
pub async fn template_thumbnail(
    State(state): State<AppState>,
    axum::extract::Path((template, name)): axum::extract::Path<(String, String)>,
) -> Result<Response, ApiError> {
    let png = pictures::template_picture(&state.files, &template, &name)
        .await
        .ok_or_else(|| ApiError::not_found("thumbnail_not_found", "模板缩略图不存在"))?;
    Response::builder()
        .header(axum::http::header::CONTENT_TYPE, "image/png")
        .header(
            axum::http::header::CACHE_CONTROL,
            "public, max-age=31536000, immutable",
        )
        .body(axum::body::Body::from(png))
        .map_err(ApiError::internal)
}

/// A deck draft or record.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PptRecord {
    pub id: i64,
    pub title: String,
    /// pending (a draft), queued, running, done, failed or cancelled.
    pub status: String,
    pub progress: i64,
    pub phase: String,
    pub error: Option<String>,
    /// defence (毕业答辩), proposal (开题报告) or course (课程汇报).
    pub kind: String,
    pub kind_label: String,
    /// Slides asked for.
    pub slides: usize,
    /// Slides the deck has, once made (fewer than asked when the paper is thin).
    pub delivered: Option<usize>,
    /// Slides the paper gives, while a draft: what paying will make.
    pub planned: Option<usize>,
    pub template: String,
    pub template_name: String,
    /// upload, paper, check or outline.
    pub source: String,
    pub source_id: Option<i64>,
    pub file_name: String,
    /// Counted characters of the paper's body.
    pub chars: usize,
    /// Headings read from the paper.
    pub sections: usize,
    pub school: String,
    pub presenter: String,
    pub supervisor: String,
    pub date: String,
    pub has_logo: bool,
    /// Estimated speaking time of the script, in seconds, once made.
    pub seconds: Option<u32>,
    pub charged_fen: i64,
    pub charged_units: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// The first slides (SVG), once made.
    pub previews: Vec<String>,
}

/// An engine enum as the API names it: its serde name (`defence`, `bullets`…).
fn wire_name(value: impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn template_name(id: &str) -> String {
    slides::template::by_id(id).map_or_else(|| id.to_string(), |t| t.name.to_string())
}

/// The first `count` slides of a finished deck as SVG (the logo as a frame of its size).
fn previews(result: &PptResult, logo: Option<&slides::pptx::Picture>, count: usize) -> Vec<String> {
    let Some(t) = slides::template::by_id(&result.template) else {
        return Vec::new();
    };
    let head = slides::Deck {
        slides: result.deck.slides.iter().take(count).cloned().collect(),
        ..result.deck.clone()
    };
    slides::pptx::layout(&head, t, logo)
        .map(|laid| laid.iter().map(|s| slides::svg::render(s, t)).collect())
        .unwrap_or_default()
}

fn record(task: &Task, preview_count: usize) -> PptRecord {
    let input = input_of(task).ok();
    let result = result_of(task);
    let template = result
        .as_ref()
        .map(|r| r.template.clone())
        .or_else(|| input.as_ref().map(|i| i.template.clone()))
        .unwrap_or_default();
    let meta = input.as_ref().map(|i| i.meta.clone()).unwrap_or_default();
    PptRecord {
        id: task.id,
        title: task.title.clone(),
        status: task.status.as_str().into(),
        progress: task.progress,
        phase: task.phase.clone(),
        error: task.error.clone(),
        kind: input
            .as_ref()
            .map(|i| wire_name(i.kind))
            .unwrap_or_default(),
        kind_label: input
            .as_ref()
            .map(|i| i.kind.label().to_string())
            .unwrap_or_default(),
        slides: input.as_ref().map_or(0, |i| i.slides),
        delivered: result.as_ref().map(|r| r.deck.slides.len()),
        planned: input
            .as_ref()
            .filter(|_| task.status == TaskStatus::Pending)
            .and_then(|i| {
                let request = DeckRequest {
                    kind: i.kind,
                    slides: i.slides,
                    meta: i.meta.clone(),
                };
                slides::plan(&i.paper, &request).ok()
            })
            .map(|deck| deck.slides.len()),
        template_name: template_name(&template),
        template,
        source: input.as_ref().map(|i| i.source.clone()).unwrap_or_default(),
        source_id: input.as_ref().and_then(|i| i.source_id),
        file_name: input
            .as_ref()
            .map(|i| i.file_name.clone())
            .unwrap_or_default(),
        chars: input.as_ref().map_or(0, |i| i.paper.chars()),
        sections: input.as_ref().map_or(0, |i| i.paper.sections.len()),
        school: meta.school,
        presenter: meta.presenter,
        supervisor: meta.supervisor,
        date: meta.date,
        has_logo: input.as_ref().is_some_and(|i| i.logo.is_some()),
        seconds: result.as_ref().map(|r| r.deck.seconds()),
        charged_fen: task.charged_fen,
        charged_units: task.charged_units,
        created_at: task.created_at,
        updated_at: task.updated_at,
        previews: result
            .as_ref()
            .map(|r| {
                let logo = input.as_ref().and_then(PptInput::logo_frame);
                previews(r, logo.as_ref(), preview_count)
            })
            .unwrap_or_default(),
    }
}

/// What a draft is saved with: JSON, a form, or multipart/form-data with the paper as `file`
/// and the school's logo as `logo` (PNG or JPEG, at most 2 MB).
#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct SaveForm {
    /// The draft to change; absent for a new one.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub id: Option<i64>,
    /// The deck's title on its cover (default: the paper's). Absent keeps a draft's.
    #[serde(default)]
    pub title: Option<String>,
    /// upload (with `file`), paper (`sourceId`: a paper generated here), check (`sourceId`: a
    /// paper checked here) or outline (`outline`: headings "1 绪论", "1.1 …" and lines of text).
    #[serde(default)]
    pub source: String,
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub source_id: Option<i64>,
    #[serde(default)]
    pub outline: String,
    /// defence (毕业答辩, default), proposal (开题报告) or course (课程汇报).
    #[serde(default)]
    pub kind: String,
    /// 10, 15 (default), 20 or 30.
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub slides: Option<i64>,
    /// Cover details; an absent one keeps a draft's, an empty one clears it.
    #[serde(default)]
    pub school: Option<String>,
    #[serde(default)]
    pub presenter: Option<String>,
    #[serde(default)]
    pub supervisor: Option<String>,
    #[serde(default)]
    pub date: Option<String>,
    /// A template id (see get_template_list); it may also be chosen at submission.
    #[serde(default)]
    pub template: String,
    /// Remove the logo kept with the draft.
    #[serde(default, deserialize_with = "lenient::opt_bool")]
    pub remove_logo: Option<bool>,
}

struct Received {
    form: SaveForm,
    file: Option<Upload>,
    logo: Option<Vec<u8>>,
}

async fn read_save(state: &AppState, req: Request) -> Result<Received, ApiError> {
    if !paper_task::is_multipart(&req) {
        let Params(form) = Params::<SaveForm>::from_request(req, state).await?;
        return Ok(Received {
            form,
            file: None,
            logo: None,
        });
    }
    let mut multipart = Multipart::from_request(req, state)
        .await
        .map_err(|_| ApiError::bad_request("bad_upload", "上传内容格式错误"))?;
    let mut fields = serde_json::Map::new();
    let mut file = None;
    let mut logo = None;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| paper_task::upload_error(state, e))?
    {
        let name = field.name().unwrap_or("").to_string();
        match name.as_str() {
            "file" => {
                let file_name = field.file_name().unwrap_or("").to_string();
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|e| paper_task::upload_error(state, e))?;
                if bytes.is_empty() && !file_name.is_empty() {
                    return Err(ApiError::bad_request(
                        "empty_file",
                        format!("上传的文件“{file_name}”是空的，请重新选择论文文件"),
                    ));
                }
                if !bytes.is_empty() {
                    file = Some(Upload {
                        title: String::new(),
                        author: String::new(),
                        file_name,
                        bytes: bytes.to_vec(),
                    });
                }
            }
            "logo" => {
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|e| paper_task::upload_error(state, e))?;
                if !bytes.is_empty() {
                    logo = Some(bytes.to_vec());
                }
            }
            _ => {
                let value = field.text().await.unwrap_or_default();
                fields.insert(name, serde_json::Value::String(value));
            }
        }
    }
    let form = serde_json::from_value(serde_json::Value::Object(fields)).map_err(|e| {
        tracing::debug!(error = %e, "deck form not read");
        ApiError::bad_request(
            "invalid_form",
            "表单内容有误：请检查页数、论文来源等字段后重试",
        )
    })?;
    Ok(Received { form, file, logo })
}

/// A field typed in, as one plain line of at most `max` characters.
fn line(text: &str, max: usize) -> String {
    plain_line(text).chars().take(max).collect()
}

/// The paper a generated paper (论文生成) is: its chapters and sections as written, and the
/// tables its sections hold (numbered as its .docx numbers them).
fn paper_of_generated(doc: &crate::api::paper::task::PaperDoc) -> Paper {
    let outline = &doc.draft.outline;
    let mut sections: Vec<slides::paper::Section> = Vec::new();
    let mut tables: Vec<slides::paper::Table> = Vec::new();
    for (index, chapter) in outline.chapters.iter().enumerate() {
        sections.push(slides::paper::Section {
            heading: chapter.title.clone(),
            level: 1,
            paragraphs: Vec::new(),
        });
        for written in doc
            .draft
            .sections
            .iter()
            .filter(|s| s.path.first() == Some(&index))
        {
            if written.path.len() > 1 {
                let heading = written
                    .heading
                    .split_once(' ')
                    .map_or(written.heading.as_str(), |(_, h)| h)
                    .to_string();
                sections.push(slides::paper::Section {
                    heading,
                    level: written.path.len().min(4) as u8,
                    paragraphs: Vec::new(),
                });
            }
            let at = sections.len() - 1;
            for block in compose::thesis::blocks_of(&written.text) {
                match block {
                    docio::thesis::Block::Paragraph(text) => sections[at].paragraphs.push(text),
                    docio::thesis::Block::Table {
                        caption,
                        header,
                        rows,
                    } => tables.push(slides::paper::Table {
                        section: at,
                        caption: format!("表{} {caption}", tables.len() + 1)
                            .trim()
                            .to_string(),
                        rows: std::iter::once(header).chain(rows).collect(),
                    }),
                    docio::thesis::Block::Figure { .. } => {}
                }
            }
        }
    }
    Paper {
        title: doc.request.title.clone(),
        summary: doc
            .draft
            .abstract_zh
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect(),
        sections,
        tables,
        figures: Vec::new(),
    }
}

/// Bytes of the pictures read from an uploaded paper for its figure slides.
const FIGURE_BYTES: usize = 30 * 1024 * 1024;

/// A paper read for a deck: the paper, the uploaded file's name, and the pictures of its
/// figures (`Figure::image` indexes them) to keep.
struct ReadPaper {
    paper: Paper,
    file_name: String,
    images: Vec<docio::Image>,
}

/// Reads the paper the form names.
async fn read_paper(
    state: &AppState,
    user_id: i64,
    form: &SaveForm,
    file: Option<&Upload>,
) -> Result<ReadPaper, ApiError> {
    let (paper, file_name) = match form.source.as_str() {
        "upload" | "" => {
            let upload = file.ok_or_else(|| {
                ApiError::bad_request("file_required", "请上传论文文件（.docx、.pdf 或 .txt）")
            })?;
            let extracted = paper_task::extract_with_images(
                state,
                upload,
                &Caller::user(user_id),
                FIGURE_BYTES,
            )
            .await?;
            let paper = Paper::from_extracted(&extracted).map_err(slides_error)?;
            return Ok(ReadPaper {
                paper,
                file_name: upload.file_name.clone(),
                images: extracted.images,
            });
        }
        "paper" => {
            let id = form.source_id.ok_or_else(|| {
                ApiError::bad_request("source_required", "请选择一篇已生成的论文")
            })?;
            let task =
                paper_task::owned_task(state, id, user_id, crate::api::paper::task::KIND, || {
                    ApiError::not_found("paper_not_found", "论文不存在或已删除")
                })
                .await?;
            let doc = crate::api::paper::task::PaperDoc::of_task(&task)
                .filter(|d| !d.draft.sections.is_empty())
                .ok_or_else(|| {
                    ApiError::conflict(
                        "paper_not_written",
                        "这篇论文还没有写完正文，写完后再生成 PPT",
                    )
                })?;
            (paper_of_generated(&doc), String::new())
        }
        "check" => {
            let id = form.source_id.ok_or_else(|| {
                ApiError::bad_request("source_required", "请选择一篇查重过的论文")
            })?;
            let task =
                paper_task::owned_task(state, id, user_id, crate::api::check::task::KIND, || {
                    ApiError::not_found("check_not_found", "查重记录不存在或已删除")
                })
                .await?;
            let input: crate::api::check::task::CheckInput =
                serde_json::from_str(&task.input).map_err(ApiError::internal)?;
            let extracted = docio::Extracted {
                text: input.text,
                format: docio::Format::Text,
                reader: "check".into(),
                headings: input
                    .headings
                    .iter()
                    .map(|&(line, level)| docio::Heading { line, level })
                    .collect(),
                title: Some(task.title.clone()),
                tables: Vec::new(),
                images: Vec::new(),
            };
            let paper = Paper::from_extracted(&extracted).map_err(slides_error)?;
            (paper, String::new())
        }
        "outline" => {
            if form.outline.chars().count() > 20_000 {
                return Err(ApiError::bad_request(
                    "outline_too_long",
                    "提纲过长：请控制在 20000 字以内，或直接上传论文",
                ));
            }
            let title = line(form.title.as_deref().unwrap_or(""), 200);
            let paper = Paper::from_outline(&title, &form.outline).map_err(|e| match e {
                SlidesError::NoHeadings => ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    e.code(),
                    "提纲中没有识别到标题：请每行写一个标题（如“1 绪论”“1.1 研究背景”），标题下写几句要点",
                ),
                e => slides_error(e),
            })?;
            (paper, String::new())
        }
        _ => {
            return Err(ApiError::bad_request(
                "invalid_source",
                "来源只能是 upload（上传论文）、paper（本站生成的论文）、check（本站查重的论文）或 outline（填写提纲）",
            ));
        }
    };
    Ok(ReadPaper {
        paper,
        file_name,
        images: Vec::new(),
    })
}

/// Saves a deck draft: a new one, or the changes to one not yet submitted. The paper is read
/// now; a paper the deck cannot be made from is refused with its reason. Nothing is charged.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/save_or_update", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(SaveForm), request_body(content = SaveForm, description = "JSON, a form, or multipart/form-data with `file` (the paper) and `logo`"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PptRecord>)),
        (status = 400, description = "invalid_slide_count, invalid_deck_kind, unknown_template, invalid_logo, invalid_source, file_required, source_required, outline_too_long, unsupported_file_type, corrupt_file…", body = crate::envelope::ErrorBody),
        (status = 404, description = "ppt_not_found, paper_not_found, check_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "already_submitted: the draft was paid for; paper_not_written", body = crate::envelope::ErrorBody),
        (status = 413, description = "file_too_large, too_many_characters", body = crate::envelope::ErrorBody),
        (status = 422, description = "paper_without_headings, paper_without_content, garbled_text_layer (a scanned PDF), empty_document", body = crate::envelope::ErrorBody),
    ))]
pub async fn save_or_update(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    req: Request,
) -> ApiResult<PptRecord> {
    let user_id = session.user.id;
    let Received { form, file, logo } = read_save(&state, req).await?;
    let existing = match form.id {
        Some(id) => {
            let task = owned(&state, id, user_id).await?;
            if task.status != TaskStatus::Pending {
                return Err(ApiError::conflict(
                    "already_submitted",
                    "该 PPT 已提交生成，不能再修改；可在记录中更换模板",
                ));
            }
            Some((task.clone(), input_of(&task)?))
        }
        None => None,
    };
    let kind = match form.kind.trim() {
        "" => existing.as_ref().map_or(DeckKind::Defence, |(_, i)| i.kind),
        k => DeckKind::parse(k).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_deck_kind",
                "类型只能是 defence（毕业答辩）、proposal（开题报告）或 course（课程汇报）",
            )
        })?,
    };
    let slides = match form.slides {
        Some(n) => usize::try_from(n).unwrap_or(0),
        None => existing.as_ref().map_or(15, |(_, i)| i.slides),
    };
    if !SLIDE_COUNTS.contains(&slides) {
        return Err(slides_error(SlidesError::SlideCount { asked: slides }));
    }
    let template = match form.template.trim() {
        "" => match existing.as_ref() {
            Some((_, i)) => i.template.clone(),
            // The first template that is on.
            None => {
                let off = crate::api::site::sys_config_api::disabled_templates(&state).await?;
                slides::TEMPLATES
                    .iter()
                    .find(|t| !off.iter().any(|d| d == t.id))
                    .unwrap_or(&slides::TEMPLATES[0])
                    .id
                    .to_string()
            }
        },
        t => crate::api::site::sys_config_api::usable_template(&state, t)
            .await?
            .id
            .to_string(),
    };
    let logo = match logo {
        Some(bytes) => Some(slides::pptx::Picture::logo(&bytes).map_err(slides_error)?),
        None => None,
    };
    // The paper: read anew when a source is given, else the draft's own.
    let changes_source = file.is_some()
        || existing.is_none()
        || form.source == "outline" && !form.outline.trim().is_empty()
        || !form.source.is_empty()
            && existing
                .as_ref()
                .is_some_and(|(_, i)| i.source != form.source || i.source_id != form.source_id);
    // Pictures of a paper read now, to keep once the draft has its id.
    let mut images: Option<Vec<docio::Image>> = None;
    let (paper, file_name, source, source_id) = match (&existing, changes_source) {
        (Some((_, input)), false) => (
            input.paper.clone(),
            input.file_name.clone(),
            input.source.clone(),
            input.source_id,
        ),
        _ => {
            let read = read_paper(&state, user_id, &form, file.as_ref()).await?;
            images = Some(read.images);
            let source = match form.source.as_str() {
                "" => "upload".to_string(),
                s => s.to_string(),
            };
            // A draft keeps the few tables and figures a deck could show, not a hundred.
            let mut paper = read.paper;
            slides::deck::keep_showable_objects(&mut paper);
            (paper, read.file_name, source, form.source_id)
        }
    };
    let kept = existing
        .as_ref()
        .map(|(_, i)| i.meta.clone())
        .unwrap_or_default();
    let field = |given: &Option<String>, kept: String, max: usize| match given {
        Some(v) => line(v, max),
        None => kept,
    };
    let meta = DeckMeta {
        school: field(&form.school, kept.school, 60),
        presenter: field(&form.presenter, kept.presenter, 40),
        supervisor: field(&form.supervisor, kept.supervisor, 40),
        date: field(&form.date, kept.date, 40),
    };
    let typed = form.title.as_deref().map(|t| line(t, 200));
    let title = match typed {
        Some(t) if !t.is_empty() => t,
        // Absent: a draft keeps its title; a new one takes the paper's.
        None if existing.is_some() => existing
            .as_ref()
            .map(|(t, _)| t.title.clone())
            .unwrap_or_default(),
        _ if !paper.title.is_empty() => line(&paper.title, 200),
        _ => "未命名答辩PPT".to_string(),
    };
    // The title typed is the one on the cover and in the script.
    let mut paper = paper;
    paper.title = title.clone();
    // A deck that cannot be made is refused now, not after paying.
    let request = DeckRequest {
        kind,
        slides,
        meta: meta.clone(),
    };
    let planned = slides::plan(&paper, &request).map_err(slides_error)?;
    let drawn_with = slides::template::by_id(&template)
        .ok_or_else(|| slides_error(SlidesError::UnknownTemplate(template.clone())))?;
    let logo_frame = match &logo {
        Some(l) => Some(l.clone()),
        None => existing.as_ref().and_then(|(_, i)| i.logo_frame()),
    };
    slides::pptx::layout(&planned, drawn_with, logo_frame.as_ref()).map_err(slides_error)?;
    let mut input = PptInput {
        kind,
        slides,
        meta,
        template,
        outline: match source.as_str() {
            "outline" if !form.outline.trim().is_empty() => form.outline.clone(),
            "outline" => existing
                .as_ref()
                .map(|(_, i)| i.outline.clone())
                .unwrap_or_default(),
            _ => String::new(),
        },
        source,
        source_id,
        file_name,
        paper,
        logo: existing.as_ref().and_then(|(_, i)| i.logo.clone()),
        logo_size: existing.as_ref().and_then(|(_, i)| i.logo_size),
    };
    if form.remove_logo == Some(true)
        && let Some(key) = input.logo.take()
    {
        input.logo_size = None;
        if let Err(e) = state.files.remove_under(&key).await {
            tracing::warn!(error = %e, "removed logo not deleted");
        }
    }
    let json = |input: &PptInput| serde_json::to_string(input).map_err(ApiError::internal);
    let task = match &existing {
        Some((task, _)) => task.clone(),
        None => {
            state
                .store
                .create_task(user_id, KIND, &title, &json(&input)?)
                .await?
        }
    };
    if let Some(logo) = &logo {
        let key = format!("{FILES}/{}/logo.{}", task.id, logo.ext);
        state
            .files
            .put(&key, &logo.bytes)
            .await
            .map_err(|e| ApiError::internal(format!("保存校徽失败：{e}")))?;
        input.logo = Some(key);
        input.logo_size = Some((logo.width, logo.height));
    }
    if let Some(upload) = &file {
        paper_task::keep_upload(&state, FILES, task.id, upload).await;
    }
    // A paper read now has its pictures kept in a folder of their own; the draft's earlier ones
    // go once the draft names the new ones (a submit in between keeps what it paid for).
    let kept_figures = match &images {
        Some(images) => Some(keep_figures(&state, task.id, &mut input.paper, images).await?),
        None => None,
    };
    if existing.is_some() || logo.is_some() || kept_figures.is_some() {
        let stored = state
            .store
            .update_pending_task(task.id, user_id, &title, &json(&input)?)
            .await?;
        // Stored: the earlier pictures go; refused: the ones just kept do.
        let unused: Vec<String> = if stored {
            match (&existing, &kept_figures) {
                (Some((_, earlier)), Some(_)) => figure_folders(&earlier.paper),
                _ => Vec::new(),
            }
        } else {
            kept_figures.iter().cloned().collect()
        };
        for folder in unused {
            if let Err(e) = state.files.remove_under(&folder).await {
                tracing::warn!(error = %e, "figures not deleted");
            }
        }
        if !stored {
            return Err(ApiError::conflict(
                "already_submitted",
                "该 PPT 已提交生成，不能再修改",
            ));
        }
    }
    let task = state.store.task(task.id, user_id).await?;
    Ok(Success(record(&task, 0)))
}

/// Keeps the pictures of a paper just read in a new folder of the draft's and names each
/// figure's file; the folder.
async fn keep_figures(
    state: &AppState,
    task_id: i64,
    paper: &mut Paper,
    images: &[docio::Image],
) -> Result<String, ApiError> {
    let batch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let folder = ppt_task::figure_folder(task_id, &batch.to_string());
    for (index, figure) in paper.figures.iter_mut().enumerate() {
        let Some(image) = images.get(figure.image) else {
            continue;
        };
        let key = format!("{folder}/{index}.{}", figure.ext);
        state
            .files
            .put(&key, &image.bytes)
            .await
            .map_err(|e| ApiError::internal(format!("保存论文插图失败：{e}")))?;
        figure.file = key;
    }
    Ok(folder)
}

/// The folders a draft's figures are kept in.
fn figure_folders(paper: &Paper) -> Vec<String> {
    let mut out: Vec<String> = paper
        .figures
        .iter()
        .filter_map(|f| f.file.rsplit_once('/').map(|(dir, _)| dir.to_string()))
        .collect();
    out.dedup();
    out
}

/// What a deck costs this user now: one use of a 答辩PPT package, else the balance.
async fn cost(state: &AppState, task: &Task, chars: usize) -> Result<TaskCost, ApiError> {
    let account = state.store.account(task.user_id).await?;
    let package = paper_task::package_payment(
        state,
        task.user_id,
        paper_task::PackageUnits::PerTask(store::GrantKind::Ppt),
        chars,
    )
    .await?;
    let price_fen = crate::prices::Prices::current(state).await?.ppt_fen;
    let pays_with = if package.as_ref().is_some_and(|p| p.covers) {
        "package"
    } else if account.balance_fen >= price_fen {
        "balance"
    } else {
        "insufficient"
    };
    Ok(TaskCost {
        id: task.id,
        chars,
        rule: format!(
            "每份答辩PPT {:.2} 元，与页数和模板无关；生成后更换模板不再收费",
            price_fen as f64 / 100.0
        ),
        price_per_thousand_fen: 0,
        price_fen,
        pays_with: pays_with.into(),
        package,
        free_checks: account.free_checks,
        balance_fen: account.balance_fen,
        free_check_max_chars: None,
    })
}

/// A deck with its price (a draft) or its slides (a finished deck).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PptDetail {
    pub record: PptRecord,
    /// What submitting would cost, while a draft.
    pub cost: Option<TaskCost>,
    /// Every slide with its script, once made.
    pub slides: Vec<SlideView>,
    /// How the deck's text was made, for the page to say plainly.
    pub method: String,
    /// What the model did to a finished deck's long bullets (none for a draft, or when no
    /// model was asked).
    pub condensing: Option<ppt_task::Condensing>,
    /// The outline as typed, for a draft made from one (to edit it again).
    pub outline: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlideView {
    /// cover, contents, section, bullets, route, table (one of the paper's tables), figure (one of
    /// its pictures; drawn here as a labelled frame, embedded in the file) or thanks.
    pub kind: String,
    pub title: String,
    pub bullets: Vec<String>,
    /// The speaker's script (讲稿).
    pub notes: String,
    pub seconds: u32,
    /// The slide drawn (SVG).
    pub svg: String,
    /// The bullets as the paper's sentences, when a model shortened some (else empty).
    pub originals: Vec<String>,
}

/// How the text of every deck is made (shown on the pages).
const METHOD: &str = "幻灯片文字摘自您论文的原句（按章节提炼要点，长句在分句处截断），论文中的表格做成可编辑的表格、插图原样放入（预览中以“论文插图”框表示），讲稿由相应段落的原句组成。";
const CHECKS: &str = "模型只能删去字词：每条压缩结果都与原句逐条核对（字词与顺序、数字、英文术语、“可能”“约”等限定词、意思是否一致），任何一项不合格就保留原句，不会出现论文中没有的数字或结论。";

/// A model as the pages name it: "本地小模型（qwen2.5-0.5b）" for `local:qwen2.5-0.5b`.
fn model_words(id: &str) -> String {
    match id.split_once(':') {
        Some(("local", name)) => format!("本地小模型（{name}）"),
        Some((_, name)) => format!("大模型（{name}）"),
        None => format!("模型（{id}）"),
    }
}

/// What the pages say of a deck's text: how every deck is made, and what the model did (for a
/// finished deck) or will do (for a draft) with its long bullets.
fn method(state: &AppState, result: Option<&PptResult>) -> String {
    let model_part = match result.map(|r| &r.condensing) {
        Some(Some(c)) if c.adopted > 0 => format!(
            "{} 条较长的要点中有 {} 条由{}压缩，论文原句见每页讲稿下方；{CHECKS}",
            c.tried,
            c.adopted,
            model_words(&c.model)
        ),
        Some(Some(c)) if !c.model.is_empty() && c.unavailable.is_none() => format!(
            "{}压缩的 {} 条要点都未通过核对，全部保留原句。",
            model_words(&c.model),
            c.tried
        ),
        Some(Some(c)) => format!(
            "本次未能用模型压缩要点（{}），要点均为原句。",
            c.unavailable.as_deref().unwrap_or("模型不可用")
        ),
        Some(None) => "本次未用模型压缩要点，要点均为原句。".to_string(),
        None if !state.config.ppt_condense => "本站未启用模型压缩要点，要点均为原句。".to_string(),
        None => {
            let engine = state.models.engine(crate::models::Feature::Slides);
            match (engine.source.as_str(), engine.model) {
                ("local", Some(model)) => format!(
                    "较长的要点将由本站的本地小模型（{model}）压缩：它只能做有限的删减，多数要点会保留原句。{CHECKS}"
                ),
                ("endpoint", Some(model)) => {
                    format!("较长的要点将由大模型（{model}）压缩。{CHECKS}")
                }
                _ => format!(
                    "本站暂无可用模型压缩要点（{}），要点均为原句。",
                    engine.unavailable.unwrap_or_default()
                ),
            }
        }
    };
    format!("{METHOD}{model_part}请在答辩前通读并按需修改。")
}

/// One deck: a draft with its price, or a finished deck with every slide.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/load_by_id", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PptDetail>)),
        (status = 404, description = "ppt_not_found (also for another user's)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<PptDetail> {
    let task = owned(&state, form.id, session.user.id).await?;
    let input = input_of(&task)?;
    let cost = match task.status {
        TaskStatus::Pending => Some(cost(&state, &task, input.paper.chars()).await?),
        _ => None,
    };
    let result = result_of(&task);
    let slides = match &result {
        Some(result) => {
            let t = slides::template::by_id(&result.template)
                .ok_or_else(|| ApiError::internal("模板已不存在"))?;
            let logo = input.logo_frame();
            let laid =
                slides::pptx::layout(&result.deck, t, logo.as_ref()).map_err(slides_error)?;
            result
                .deck
                .slides
                .iter()
                .zip(&laid)
                .map(|(s, l)| SlideView {
                    kind: wire_name(s.kind),
                    title: s.title.clone(),
                    bullets: s.bullets.clone(),
                    notes: s.notes.clone(),
                    seconds: s.seconds,
                    svg: slides::svg::render(l, t),
                    originals: s.originals.clone(),
                })
                .collect()
        }
        None => Vec::new(),
    };
    Ok(Success(PptDetail {
        record: record(&task, 0),
        cost,
        slides,
        method: method(&state, result.as_ref()),
        condensing: result.as_ref().and_then(|r| r.condensing.clone()),
        outline: input.outline.clone(),
    }))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubmitForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// The template (default: the draft's).
    #[serde(default)]
    pub template: Option<String>,
}

/// Pays for a draft (a 答辩PPT package use, else the balance) and queues the deck, in one
/// transaction. Not enough → 402 and nothing is charged; a failed deck is refunded.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/submit_by_id", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(SubmitForm, ("X-Confirmed-Payment" = Option<String>, Header, description = "What the confirmed price dialog said would pay: package or balance; the charge is refused (412) when that changed"), ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the dialog showed; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")), request_body = SubmitForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PptRecord>)),
        (status = 400, description = "unknown_template", body = crate::envelope::ErrorBody),
        (status = 402, description = "insufficient_balance, package_exhausted", body = crate::envelope::ErrorBody),
        (status = 404, description = "ppt_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "already_submitted", body = crate::envelope::ErrorBody),
        (status = 412, description = "payment_changed: X-Confirmed-Payment no longer says what would pay; nothing charged", body = crate::envelope::ErrorBody),
    ))]
pub async fn submit_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<SubmitForm>,
) -> ApiResult<PptRecord> {
    let task = owned(&state, form.id, session.user.id).await?;
    if task.status != TaskStatus::Pending {
        return Err(ApiError::conflict("already_submitted", "该 PPT 已提交生成"));
    }
    let mut input = input_of(&task)?;
    if let Some(t) = form.template.as_deref().filter(|t| !t.trim().is_empty()) {
        input.template = crate::api::site::sys_config_api::usable_template(&state, t.trim())
            .await?
            .id
            .to_string();
    }
    let cost = cost(&state, &task, input.paper.chars()).await?;
    confirmed.check(&cost)?;
    let task = paper_task::charge_and_queue_with(
        &state,
        &task,
        &cost,
        "答辩PPT",
        Queueing::Submit(Some(
            serde_json::to_string(&input).map_err(ApiError::internal)?,
        )),
    )
    .await?;
    Ok(Success(record(&task, 0)))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TemplateForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    pub template: String,
}

/// Writes a finished deck again with another template, free: the content was paid for once.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/change_template", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(TemplateForm), request_body = TemplateForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<PptRecord>)),
        (status = 400, description = "unknown_template", body = crate::envelope::ErrorBody),
        (status = 404, description = "ppt_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "ppt_not_ready: not finished; ppt_changed: changed meanwhile, try again", body = crate::envelope::ErrorBody),
    ))]
pub async fn change_template(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<TemplateForm>,
) -> ApiResult<PptRecord> {
    let task = owned(&state, form.id, session.user.id).await?;
    let template =
        crate::api::site::sys_config_api::usable_template(&state, form.template.trim()).await?;
    let (Some(read), Some(mut result)) = (task.result.clone(), result_of(&task)) else {
        return Err(ApiError::conflict("ppt_not_ready", "PPT 尚未生成完成"));
    };
    let input = input_of(&task)?;
    ppt_task::render(&state.files, task.id, &input, &result.deck, template.id)
        .await
        .map_err(ApiError::internal)?;
    result.template = template.id.to_string();
    let stored = state
        .store
        .replace_task_result(
            task.id,
            task.user_id,
            &read,
            &serde_json::to_string(&result).map_err(ApiError::internal)?,
        )
        .await?;
    if !stored {
        return Err(ApiError::conflict(
            "ppt_changed",
            "PPT 刚被更改，请刷新后重试",
        ));
    }
    let task = state.store.task(task.id, session.user.id).await?;
    Ok(Success(record(&task, 3)))
}

/// The user's decks (drafts included), newest first, with the first slides of finished ones.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/query_list", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(ListForm), request_body = ListForm,
    responses((status = 200, body = inline(crate::envelope::Envelope<RecordPage<PptRecord>>))))]
pub async fn query_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ListForm>,
) -> ApiResult<RecordPage<PptRecord>> {
    Ok(Success(
        paper_task::list_records(&state, session.user.id, KIND, &form, |t| record(t, 3)).await?,
    ))
}

/// Deletes a deck and its files; an unfinished one is cancelled and refunded first.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/delete", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 404, description = "ppt_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<bool> {
    owned(&state, form.id, session.user.id).await?;
    paper_task::delete_task(&state, FILES, form.id, session.user.id).await?;
    Ok(Success(true))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DownloadForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
    /// pptx (default) or pdf.
    #[serde(default)]
    pub format: Option<String>,
}

/// What a user is told when LibreOffice cannot draw a deck.
fn conversion_error(e: pictures::ConvertError) -> ApiError {
    match e {
        pictures::ConvertError::Missing => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "pdf_converter_missing",
            "服务器未安装 LibreOffice，暂不能导出 PDF；请下载 PPTX（管理员可安装 libreoffice-impress-nogui）",
        ),
        pictures::ConvertError::Failed => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "pdf_conversion_failed",
            "PDF 转换失败，请稍后重试或下载 PPTX",
        ),
        pictures::ConvertError::Busy => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "preview_busy",
            "预览图正在绘制，请稍后刷新",
        ),
    }
}

/// Largest deck file read back from the store.
const DECK_MAX_BYTES: usize = 200 * 1024 * 1024;

/// A finished deck's .pptx from the file store; a file that was lost (a store moved, a disk
/// replaced) is written again from the plan.
async fn deck_pptx(state: &AppState, task: &Task, result: &PptResult) -> Result<Vec<u8>, ApiError> {
    let pptx_key = ppt_task::pptx_key(task.id, &result.template);
    if let Some(bytes) = state
        .files
        .get(&pptx_key, DECK_MAX_BYTES)
        .await
        .map_err(ApiError::internal)?
    {
        return Ok(bytes);
    }
    let input = input_of(task)?;
    ppt_task::render(
        &state.files,
        task.id,
        &input,
        &result.deck,
        &result.template,
    )
    .await
    .map_err(ApiError::internal)
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PreviewForm {
    #[serde(deserialize_with = "lenient::i64")]
    pub id: i64,
}

/// A finished deck's first slides as LibreOffice draws them.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeckPreviews {
    /// The template they were drawn with (the deck's current one).
    pub template: String,
    /// PNG images as data URLs, first slide first.
    pub pictures: Vec<String>,
}

/// The first three slides of a finished deck as LibreOffice draws the .pptx (figures as their
/// pictures, unlike the layout's SVG drawings in the record): drawn by the task, or now and
/// kept, after a change of template.
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/preview_pictures", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(PreviewForm),
    responses((status = 200, body = inline(crate::envelope::Envelope<DeckPreviews>)),
              (status = 409, description = "ppt_not_ready", body = crate::envelope::ErrorBody),
              (status = 503, description = "pdf_converter_missing, pdf_conversion_failed, preview_busy (another drawing runs: ask again later)", body = crate::envelope::ErrorBody)))]
pub async fn preview_pictures(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<PreviewForm>,
) -> ApiResult<DeckPreviews> {
    use base64::Engine as _;
    let (task, result) = finished(&state, form.id, session.user.id).await?;
    let pages = result.deck.slides.len().min(pictures::PREVIEW_PAGES);
    let pngs = match pictures::stored_previews(&state.files, task.id, &result.template, pages).await
    {
        Some(pngs) => pngs,
        // Drawn now only when the office suite is free: a list of many decks must not queue
        // conversions (the page keeps the layout's drawings and asks again later).
        None => {
            let pptx = deck_pptx(&state, &task, &result).await?;
            let drawn = pictures::draw_previews(
                &state.files,
                task.id,
                &result.template,
                &pptx,
                pages,
                pictures::Wait::NotAtAll,
            )
            .await
            .map_err(conversion_error)?;
            // Deleted while it was drawn: what the drawing kept goes with the deck.
            if let Err(e) = owned(&state, task.id, session.user.id).await {
                if e.code == "ppt_not_found"
                    && let Err(e) = state
                        .files
                        .remove_under(&format!("{FILES}/{}", task.id))
                        .await
                {
                    tracing::warn!(task = task.id, error = %e, "files of a deleted deck not removed");
                }
                return Err(e);
            }
            drawn
        }
    };
    Ok(Success(DeckPreviews {
        template: result.template,
        pictures: pngs
            .iter()
            .map(|png| {
                format!(
                    "data:image/png;base64,{}",
                    base64::engine::general_purpose::STANDARD.encode(png)
                )
            })
            .collect(),
    }))
}

/// The finished deck as .pptx, or as PDF (converted on first download and kept).
#[utoipa::path(post, path = "/api/base/ai_ppt_info_api/download", tag = "ai_ppt_info_api", security(("bearer" = [])),
    params(DownloadForm), request_body = DownloadForm,
    responses(
        (status = 200, description = "the deck (.pptx) or its PDF", content_type = "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
        (status = 400, description = "invalid_format", body = crate::envelope::ErrorBody),
        (status = 404, description = "ppt_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "ppt_not_ready", body = crate::envelope::ErrorBody),
        (status = 503, description = "pdf_converter_missing, pdf_conversion_failed", body = crate::envelope::ErrorBody),
    ))]
pub async fn download(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<DownloadForm>,
) -> Result<Response, ApiError> {
    let format = match form.format.as_deref().unwrap_or("pptx") {
        "" | "pptx" => "pptx",
        "pdf" => "pdf",
        _ => {
            return Err(ApiError::bad_request(
                "invalid_format",
                "格式只能是 pptx 或 pdf",
            ));
        }
    };
    let (task, result) = finished(&state, form.id, session.user.id).await?;
    let pptx = deck_pptx(&state, &task, &result).await?;
    let name = task.title.chars().take(60).collect::<String>();
    if format == "pptx" {
        return Ok(paper_task::attachment(
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            pptx,
            &format!("deck-{}.pptx", task.id),
            &format!("{name}-答辩PPT.pptx"),
        ));
    }
    let pdf = pictures::deck_pdf(&state.files, task.id, &result.template, &pptx)
        .await
        .map_err(conversion_error)?;
    Ok(paper_task::attachment(
        "application/pdf",
        pdf,
        &format!("deck-{}.pdf", task.id),
        &format!("{name}-答辩PPT.pdf"),
    ))
}

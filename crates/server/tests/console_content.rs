//! What the console manages besides users and money (issue 25). The library: a batch uploaded
//! from the browser is imported by a worker with a result per item, listed and searched from
//! the catalogue, imported only once, removed; bad batches are refused with nothing kept (both
//! library backends). The prompts: versions saved, checked, restored, reset, all audited and
//! append-only. SQLite and PostgreSQL.

#[macro_use]
mod common;
use common::*;
use simcheck::Library;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

const PASSWORD: &str = "Zq7-kite-river";

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
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

async fn upload(s: &TestServer, token: &str, name: &str, bytes: Vec<u8>) -> (StatusCode, Value) {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()),
    );
    let res = s
        .http
        .post(format!("{}/api/admin/library/upload", s.base))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Waits for a library task to end and returns its row.
async fn ended(s: &TestServer, token: &str, task_id: i64) -> Value {
    for _ in 0..600 {
        let (status, body) = s.get("/api/admin/library/tasks", Some(token)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let row = body["result"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["taskId"] == task_id)
            .cloned()
            .expect("the task is listed");
        if ["done", "failed", "cancelled"].contains(&row["status"].as_str().unwrap()) {
            return row;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("library task {task_id} did not end");
}

/// Prose long enough to be a library document, different for each `seed`.
fn prose(seed: &str) -> String {
    format!(
        "{seed}的研究表明，在相同的实验条件下，样品的含量随提取温度升高而增加，\
         在八十摄氏度时达到最大值，此后略有下降。本文据此提出了改进的工艺路线，并讨论了{seed}在实际生产中的适用范围。"
    )
}

/// `bytes` with every `from` replaced by `to` (of the same length).
fn replace_bytes(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from {
            out[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
    out
}

fn config_with(backend: &str) -> Config {
    Config {
        library_backend: backend.into(),
        // A record longer than this is refused (the tests' long record is 2,500 characters).
        max_paper_chars: 2_000,
        // The sentence encoder is not what this test is about; without it the library keeps
        // the k-gram index only.
        paraphrase_layer: false,
        ..test_config()
    }
}

async fn library_docs(config: &Config, store: &store::Store) -> u64 {
    match config.library_backend.as_str() {
        "database" => store::SqlLibrary::new(store.clone(), Default::default())
            .doc_count()
            .await
            .unwrap(),
        _ => simcheck::EmbeddedLibrary::open(config.library_dir(), Default::default())
            .unwrap()
            .doc_count()
            .await
            .unwrap(),
    }
}

async fn import_list_search_and_remove(s: &TestServer, config: &Config) {
    let store = s.store().clone();
    let handlers = server::task_handlers(
        config,
        &store,
        Arc::new(server::models::ModelHub::new(config)),
    )
    .unwrap();
    let workers = server::worker::WorkerPool::new(store.clone(), handlers)
        .with_lease(Duration::from_secs(30), Duration::from_millis(20))
        .spawn(1);
    let ops = operator(s, "ops_library").await;

    let lines = format!(
        "{}\n\n{}\n{{\"title\": \"缺正文\"}}\n{}\n{}\n",
        json!({"title": "黄芩苷提取工艺研究", "author": "李明", "year": 2021, "source": "中草药", "text": prose("黄芩苷")}),
        json!({"title": "重复的一篇", "text": prose("葛根素")}),
        json!({"title": "很长的一篇", "text": "长".repeat(2_500) + &prose("长文")}),
        json!({"title": "含\u{0}空字符的题名", "text": prose("川芎嗪")}),
    );
    let batch = zip_of(&[
        ("论文/葛根素含量测定.txt", prose("葛根素").as_bytes()),
        ("论文/丹参酮稳定性.txt", prose("丹参酮").as_bytes()),
        ("论文/过短.txt", "只有几个字".as_bytes()),
        ("论文/插图.png", b"\x89PNG\r\n"),
        ("论文/坏的.pdf", b"%PDF-1.7 not really a pdf"),
        ("论文/records.jsonl", lines.as_bytes()),
        ("__MACOSX/论文/._葛根素含量测定.txt", b"junk"),
        // Named in GBK below, as Chinese Windows zips do.
        ("ABCDEF.txt", prose("当归").as_bytes()),
    ]);
    let (gbk, _, _) = encoding_rs::GBK.encode("中文名.txt");
    let batch = replace_bytes(&batch, b"ABCDEF.txt", &gbk);
    let (status, body) = upload(s, &ops, "第一批.zip", batch.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["op"], "import");
    assert_eq!(body["result"]["fileName"], "第一批.zip");
    let row = ended(s, &ops, body["result"]["taskId"].as_i64().unwrap()).await;
    assert_eq!(row["status"], "done", "{row}");
    let result = &row["result"];
    assert_eq!(result["imported"], 5, "{result}");
    // Too short, a picture, the jsonl copy of the 葛根素 file; the broken PDF, the line
    // without text and the one too long failed.
    assert_eq!(result["skipped"], 3, "{result}");
    assert_eq!(result["failed"], 3, "{result}");
    let reasons: Vec<String> = result["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| format!("{} {} {}", i["name"], i["outcome"], i["reason"]))
        .collect();
    let said = reasons.join("\n");
    assert!(
        said.contains("过短.txt") && said.contains("正文过短"),
        "{said}"
    );
    assert!(said.contains("插图.png"), "{said}");
    assert!(
        said.contains("第 3 行") && said.contains("内容相同"),
        "{said}"
    );
    assert!(said.contains("坏的.pdf\" \"failed\""), "{said}");
    assert!(
        said.contains("第 4 行\" \"failed\" \"缺少正文字段 text"),
        "{said}"
    );
    assert!(said.contains("第 5 行\" \"failed\" \"正文过长"), "{said}");
    assert_eq!(library_docs(config, &store).await, 5);

    // Listed and searched from the catalogue.
    let (_, all) = s.get("/api/admin/library/docs", Some(&ops)).await;
    assert_eq!(all["result"]["total"], 5, "{all}");
    let (_, gbk_named) = s.get("/api/admin/library/docs?q=中文名", Some(&ops)).await;
    assert_eq!(
        gbk_named["result"]["records"][0]["title"], "中文名",
        "{gbk_named}"
    );
    let (_, nul) = s.get("/api/admin/library/docs?q=空字符", Some(&ops)).await;
    assert_eq!(
        nul["result"]["records"][0]["title"], "含空字符的题名",
        "{nul}"
    );
    let (status, body) = s
        .get("/api/admin/library/docs?year=99999", Some(&ops))
        .await;
    assert_error(status, &body, 400, "bad_year");
    let (_, found) = s.get("/api/admin/library/docs?q=李明", Some(&ops)).await;
    assert_eq!(found["result"]["total"], 1, "{found}");
    let doc = &found["result"]["records"][0];
    assert_eq!(doc["title"], "黄芩苷提取工艺研究");
    assert_eq!(doc["year"], 2021);
    let (_, by_year) = s.get("/api/admin/library/docs?year=2021", Some(&ops)).await;
    assert_eq!(by_year["result"]["total"], 1);
    let (_, by_title) = s.get("/api/admin/library/docs?q=丹参酮", Some(&ops)).await;
    assert_eq!(by_title["result"]["records"][0]["title"], "丹参酮稳定性");
    let (_, summary) = s.get("/api/admin/library/summary", Some(&ops)).await;
    let summary = &summary["result"];
    assert_eq!(summary["publicDocs"], 5, "{summary}");
    assert!(summary["publicChars"].as_i64().unwrap() > 150, "{summary}");
    assert!(summary["measuredAt"].as_i64().unwrap() > 0, "{summary}");
    if config.library_backend == "embedded" {
        assert!(summary["indexBytes"].as_i64().unwrap() > 0, "{summary}");
    }
    // The worker says it is alive within moments of starting (it may not have yet).
    let mut alive = summary["workers"].clone();
    for _ in 0..400 {
        if alive == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        alive =
            s.get("/api/admin/library/summary", Some(&ops)).await.1["result"]["workers"].clone();
    }
    assert_eq!(alive, 1, "{summary}");

    // The same batch again adds nothing.
    let (_, again) = upload(s, &ops, "第一批.zip", batch).await;
    let row = ended(s, &ops, again["result"]["taskId"].as_i64().unwrap()).await;
    assert_eq!(row["result"]["imported"], 0, "{row}");
    assert!(
        row["result"].to_string().contains("比对库中已有相同内容"),
        "{row}"
    );
    assert_eq!(library_docs(config, &store).await, 5);

    // Removal, by a worker; a student's own document is not the operator's to remove.
    let student = s.register("student_lib", PASSWORD).await;
    let student_id = s.user_id(&student).await;
    let mut own = simcheck::NewDoc::public("学生自己的论文", prose("自己"));
    own.scope = simcheck::Scope::Private;
    own.owner = Some(student_id);
    let own_id = match config.library_backend.as_str() {
        "database" => {
            let lib = store::Catalogued::new(
                store::SqlLibrary::new(store.clone(), Default::default()),
                store.clone(),
            );
            lib.add(vec![own]).await.unwrap()[0]
        }
        _ => {
            // The embedded library belongs to the workers: their handler adds it (a check
            // keeping the paper would), here through the same catalogued library type.
            let lib = store::Catalogued::new(
                simcheck::EmbeddedLibrary::open(config.library_dir(), Default::default()).unwrap(),
                store.clone(),
            );
            lib.add(vec![own]).await.unwrap()[0]
        }
    };
    let (_, listed) = s.get("/api/admin/library/docs?q=自己", Some(&ops)).await;
    assert_eq!(
        listed["result"]["total"], 0,
        "private papers are never listed"
    );
    let id = doc["id"].as_i64().unwrap();
    let (status, removal) = s
        .post(
            "/api/admin/library/remove",
            Some(&ops),
            json!({"ids": [id, own_id]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{removal}");
    let row = ended(s, &ops, removal["result"]["taskId"].as_i64().unwrap()).await;
    assert_eq!(row["result"]["removed"], 1, "{row}");
    assert_eq!(row["result"]["missing"], 1, "{row}");
    assert_eq!(
        row["result"]["items"][0]["name"],
        format!("编号 {own_id}"),
        "{row}"
    );
    let (_, left) = s.get("/api/admin/library/docs", Some(&ops)).await;
    assert_eq!(left["result"]["total"], 4, "{left}");
    let (_, summary) = s.get("/api/admin/library/summary", Some(&ops)).await;
    assert_eq!(summary["result"]["privateDocs"], 1, "{summary}");

    // Every step is in the audit log.
    let (actions, _) = audit_actions(s, &ops, "library").await;
    assert_eq!(
        actions,
        ["library.remove", "library.import", "library.import"]
    );

    // The imported batches are not kept once read.
    let kept = s.state.files.list("library_import").await.unwrap();
    assert!(kept.is_empty(), "{kept:?}");
    workers.stop().await;
}

// The server's own configuration (its data folder) is the workers' too.
api_test!(
    embedded_library_import_list_search_and_remove,
    config_with("embedded"),
    async |s: &TestServer| {
        let config = s.state.config.as_ref().clone();
        import_list_search_and_remove(s, &config).await
    }
);

api_test!(
    database_library_import_list_search_and_remove,
    config_with("database"),
    async |s: &TestServer| {
        let config = s.state.config.as_ref().clone();
        import_list_search_and_remove(s, &config).await
    }
);

api_test!(
    bad_batches_are_refused_and_nothing_is_kept,
    Config {
        library_upload_bytes: 64 * 1024,
        ..config_with("embedded")
    },
    async |s: &TestServer| {
        let ops = operator(s, "ops_bad_batch").await;
        let student = s.register("student_batch", PASSWORD).await;
        let (status, body) = upload(s, &student, "a.jsonl", b"{}".to_vec()).await;
        assert_error(status, &body, 403, "not_operator");

        let not_zip = b"PK\x03\x04 this archive was cut off".to_vec();
        let (status, body) = upload(s, &ops, "坏的.zip", not_zip).await;
        assert_error(status, &body, 400, "bad_batch");
        assert!(
            body["message"].as_str().unwrap().contains("压缩包无法读取"),
            "{body}"
        );

        let nothing = zip_of(&[("setup.exe", b"MZ")]);
        let (status, body) = upload(s, &ops, "空的.zip", nothing).await;
        assert_error(status, &body, 400, "bad_batch");
        assert!(
            body["message"].as_str().unwrap().contains("没有可导入"),
            "{body}"
        );

        let (status, body) = upload(s, &ops, "文献.rar", b"Rar!".to_vec()).await;
        assert_error(status, &body, 400, "bad_batch");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("不支持的文件类型"),
            "{body}"
        );

        let (status, body) = upload(s, &ops, "二进制.jsonl", vec![0, 159, 146, 150, 0, 1]).await;
        assert_error(status, &body, 400, "bad_batch");

        let big = vec![b'a'; 2 * 1024 * 1024];
        let (status, body) = upload(s, &ops, "很大.jsonl", big).await;
        assert_error(status, &body, 413, "file_too_large");
        assert!(
            body["message"].as_str().unwrap().contains("分成几批"),
            "{body}"
        );

        let (status, body) = s
            .post("/api/admin/library/remove", Some(&ops), json!({"ids": []}))
            .await;
        assert_error(status, &body, 400, "bad_selection");

        // Nothing half-applied: no task, no audit entry, no file.
        let (_, tasks) = s.get("/api/admin/library/tasks", Some(&ops)).await;
        assert_eq!(tasks["result"], json!([]), "{tasks}");
        let (_, audit) = s.get("/api/admin/audit?q=library", Some(&ops)).await;
        assert_eq!(audit["result"]["total"], 0, "{audit}");
        assert!(
            s.state
                .files
                .list("library_import")
                .await
                .unwrap()
                .is_empty()
        );
    }
);

async fn save_prompt(s: &TestServer, token: &str, body: Value) -> (StatusCode, Value) {
    s.post("/api/admin/prompts/save", Some(token), body).await
}

fn prompt_row<'a>(rows: &'a Value, name: &str) -> &'a Value {
    rows["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed: {rows}"))
}

api_test!(
    prompts_are_versioned_checked_restored_and_audited,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_prompts").await;
        let (status, rows) = s.get("/api/admin/prompts", Some(&ops)).await;
        assert_eq!(status, StatusCode::OK, "{rows}");
        let section = prompt_row(&rows, "paper/section");
        assert_eq!(
            section["placeholders"],
            json!(["budget", "degree", "field", "title"])
        );
        assert_eq!(section["isBuiltin"], true);
        assert_eq!(
            prompt_row(&rows, "slides/condense")["placeholders"],
            json!(["target"])
        );
        let polish = prompt_row(&rows, "rewrite/polish");
        let builtin = polish["builtin"].as_str().unwrap().to_string();
        assert_eq!(polish["text"], builtin.as_str());
        assert_eq!(polish["group"], "降重与改写");

        // A text that loses a placeholder, adds an unknown one or says nothing is refused.
        let without_budget = section["builtin"]
            .as_str()
            .unwrap()
            .replace("{budget}", "八百");
        let (status, body) = save_prompt(
            s,
            &ops,
            json!({"name": "paper/section", "text": without_budget}),
        )
        .await;
        assert_error(status, &body, 400, "invalid_prompt");
        assert!(
            body["message"].as_str().unwrap().contains("{budget}"),
            "{body}"
        );
        let (status, body) = save_prompt(
            s,
            &ops,
            json!({"name": "rewrite/polish", "text": "润色{paper}"}),
        )
        .await;
        assert_error(status, &body, 400, "invalid_prompt");
        assert!(
            body["message"].as_str().unwrap().contains("不认识的占位符"),
            "{body}"
        );
        let (status, body) =
            save_prompt(s, &ops, json!({"name": "rewrite/polish", "text": "  "})).await;
        assert_error(status, &body, 400, "invalid_prompt");
        let (status, body) =
            save_prompt(s, &ops, json!({"name": "rewrite/nothing", "text": "x"})).await;
        assert_error(status, &body, 404, "prompt_not_found");

        // Two versions, then back to the first, then to the built-in text.
        let first = "请润色下面的段落，使表达更通顺。只输出润色后的段落。";
        let (status, rows) = save_prompt(
            s,
            &ops,
            json!({"name": "rewrite/polish", "text": first, "note": "更短"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{rows}");
        let polish = prompt_row(&rows, "rewrite/polish");
        assert_eq!(
            (polish["text"].as_str(), polish["isBuiltin"].as_bool()),
            (Some(first), Some(false))
        );
        let (status, body) =
            save_prompt(s, &ops, json!({"name": "rewrite/polish", "text": first})).await;
        assert_error(status, &body, 409, "prompt_unchanged");
        let second = "请润色下面的段落，保持原意和术语不变。只输出润色后的段落。";
        save_prompt(s, &ops, json!({"name": "rewrite/polish", "text": second})).await;
        // What every process reads (a worker before its next job).
        let overrides = s.store().prompt_overrides().await.unwrap();
        assert_eq!(
            overrides.get("rewrite/polish").map(String::as_str),
            Some(second)
        );

        let (_, versions) = s
            .get(
                "/api/admin/prompts/versions?name=rewrite/polish",
                Some(&ops),
            )
            .await;
        let versions = versions["result"].as_array().unwrap().clone();
        assert_eq!(versions.len(), 2);
        assert_eq!(
            (
                versions[0]["number"].as_i64(),
                versions[0]["current"].as_bool()
            ),
            (Some(2), Some(true))
        );
        assert_eq!(versions[1]["note"], "更短");
        let (status, rows) = save_prompt(
            s,
            &ops,
            json!({"name": "rewrite/polish", "versionId": versions[1]["id"]}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{rows}");
        assert_eq!(prompt_row(&rows, "rewrite/polish")["text"], first);
        let (_, history) = s
            .get(
                "/api/admin/prompts/versions?name=rewrite/polish",
                Some(&ops),
            )
            .await;
        assert_eq!(history["result"][0]["note"], "恢复为第 1 版");
        assert_eq!(history["result"].as_array().unwrap().len(), 3);
        // A version of another prompt is not this one's to restore.
        let (status, body) = save_prompt(
            s,
            &ops,
            json!({"name": "rewrite/aigc", "versionId": versions[1]["id"]}),
        )
        .await;
        assert_error(status, &body, 404, "version_not_found");

        let (status, rows) =
            save_prompt(s, &ops, json!({"name": "rewrite/polish", "builtin": true})).await;
        assert_eq!(status, StatusCode::OK, "{rows}");
        let polish = prompt_row(&rows, "rewrite/polish");
        assert_eq!(
            (polish["text"].as_str(), polish["isBuiltin"].as_bool()),
            (Some(builtin.as_str()), Some(true))
        );
        assert!(
            !s.store()
                .prompt_overrides()
                .await
                .unwrap()
                .contains_key("rewrite/polish")
        );
        let (status, body) =
            save_prompt(s, &ops, json!({"name": "rewrite/polish", "builtin": true})).await;
        assert_error(status, &body, 409, "prompt_unchanged");

        let (actions, _) = audit_actions(s, &ops, "prompt").await;
        assert_eq!(
            actions,
            ["prompt.reset", "prompt.save", "prompt.save", "prompt.save"]
        );
        // History is never rewritten.
        assert!(
            s.store()
                .execute_for_tests("UPDATE prompt_versions SET body = 'x'")
                .await
                .is_err()
        );
        assert!(
            s.store()
                .execute_for_tests("DELETE FROM prompt_versions")
                .await
                .is_err()
        );
    }
);

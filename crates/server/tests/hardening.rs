//! Hostile input against the real server: uploads that would expand to gigabytes or never
//! finish, visitors counting without end, while other users keep being served.

#[macro_use]
mod common;

use common::*;
use std::time::{Duration, Instant};

async fn upload(
    s: &TestServer,
    path: &str,
    token: Option<&str>,
    name: &str,
    bytes: Vec<u8>,
) -> (StatusCode, Value) {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()),
    );
    let mut req = s.http.post(format!("{}{path}", s.base)).multipart(form);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Peak resident memory of this test process (the server runs in it), in MiB.
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        / 1024
}

/// A reading child that never answers, to stand for a file that takes forever to parse.
fn stuck_reader(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("stuck-reader.sh");
    std::fs::write(&path, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

api_test!(
    bombs_are_refused_with_clear_errors_and_the_server_stays_small,
    test_config(),
    async |s: &TestServer| {
        let before = peak_rss_mib();
        // 2 GB of deflated spaces in a PDF page, and three million empty paragraphs in a .docx.
        let pdf = docio::hostile::deflate_bomb_pdf(2 << 30);
        let docx = docio::hostile::empty_paragraphs_docx(3_000_000);
        let token = s.register("bombtester", "bomb-pass-2026").await;
        for path in [
            "/api/base/check_api/word_count",
            "/api/base/paper_aigc_api/word_count",
            "/api/base/paper_machine_api/word_count",
        ] {
            let (status, body) = upload(s, path, Some(&token), "bomb.pdf", pdf.clone()).await;
            assert_error(status, &body, 422, "document_too_complex");
            assert!(
                body["message"].as_str().unwrap().contains("第 1 页"),
                "{body}"
            );
            let (status, body) = upload(s, path, Some(&token), "bomb.docx", docx.clone()).await;
            assert_error(status, &body, 422, "document_too_complex");
        }
        let (status, body) = upload(
            s,
            "/api/base/check_api/check_init",
            Some(&token),
            "bomb.pdf",
            pdf,
        )
        .await;
        assert_error(status, &body, 422, "document_too_complex");
        // The bombs were read in children: this process grew by far less than they expand to.
        let grown = peak_rss_mib().saturating_sub(before);
        assert!(grown < 300, "the server's peak RSS grew by {grown} MiB");
        // A real document still reads.
        let (status, body) = upload(
            s,
            "/api/base/check_api/word_count",
            Some(&token),
            "a.pdf",
            docio::hostile::pdf_with_content(
                b"BT /F1 12 Tf 72 720 Td (Ordinary papers are read as before.) Tj ET",
                "",
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body["result"]["chars"].as_u64().unwrap() > 20, "{body}");
    }
);

api_test!(
    a_reading_that_never_ends_is_killed_and_others_are_served_meanwhile,
    {
        let dir = tempfile::tempdir().unwrap().keep();
        Config {
            extractor: Some(stuck_reader(&dir)),
            extract_timeout_seconds: 2,
            ..test_config()
        }
    },
    async |s: &TestServer| {
        let pdf = docio::hostile::pdf_with_content(b"BT ET", "");
        let started = Instant::now();
        let stuck = async {
            upload(
                s,
                "/api/base/check_api/word_count",
                None,
                "slow.pdf",
                pdf.clone(),
            )
            .await
        };
        // Meanwhile: another visitor's page requests answer at once.
        let others = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let mut slowest = Duration::ZERO;
            for _ in 0..20 {
                let t = Instant::now();
                let (status, _) = s.get("/api/base/site_api/f/config", None).await;
                assert_eq!(status, StatusCode::OK);
                slowest = slowest.max(t.elapsed());
            }
            // The same visitor may not start a second reading while the first runs.
            let (status, body) = upload(
                s,
                "/api/base/check_api/word_count",
                None,
                "again.pdf",
                pdf.clone(),
            )
            .await;
            assert_error(status, &body, 429, "extraction_in_progress");
            slowest
        };
        let ((status, body), slowest) = tokio::join!(stuck, others);
        assert_error(status, &body, 422, "extraction_timeout");
        assert!(started.elapsed() < Duration::from_secs(10));
        // Not a timing claim, only that nothing waited for the stuck reading.
        assert!(slowest < Duration::from_secs(2), "{slowest:?}");
    }
);

api_test!(
    visitors_count_only_so_many_uploads_an_hour,
    Config {
        anonymous_counts_per_hour: 2,
        ..test_config()
    },
    async |s: &TestServer| {
        let count = |token: Option<String>| async move {
            s.post(
                "/api/base/check_api/word_count",
                token.as_deref(),
                json!({"text": "这是一段用于统计字数的文字。"}),
            )
            .await
        };
        for _ in 0..2 {
            assert_eq!(count(None).await.0, StatusCode::OK);
        }
        let (status, body) = count(None).await;
        assert_error(status, &body, 429, "too_many_requests");
        assert!(body["message"].as_str().unwrap().contains("登录"), "{body}");
        // Signed in, the count goes on.
        let token = s.register("counter01", "count-pass-2026").await;
        for _ in 0..3 {
            assert_eq!(count(Some(token.clone())).await.0, StatusCode::OK);
        }
    }
);

api_test!(
    every_response_carries_the_security_headers,
    test_config(),
    async |s: &TestServer| {
        for path in [
            "/api/base/site_api/f/config",
            "/",
            "/m/qr/unknown",
            "/api/nope",
        ] {
            let res = s
                .http
                .get(format!("{}{path}", s.base))
                .send()
                .await
                .unwrap();
            let h = res.headers();
            let csp = h["content-security-policy"].to_str().unwrap();
            assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
            assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
            assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
            assert_eq!(h["x-frame-options"], "DENY", "{path}");
            assert!(h.contains_key("referrer-policy"), "{path}");
        }
    }
);

/// Reads from `stream` until the server closes it; how long that took.
async fn closed_within(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<Duration> {
    use tokio::io::AsyncReadExt;
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(
            tokio::time::Instant::from_std(started + limit),
            stream.read(&mut buf),
        )
        .await
        {
            Ok(Ok(0)) | Ok(Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => continue,
            Err(_) => return None,
        }
    }
}

api_test!(
    slow_and_silent_connections_are_closed_and_capped,
    Config {
        header_read_timeout_seconds: 1,
        body_read_timeout_seconds: 1,
        max_connections: 4,
        ..test_config()
    },
    async |s: &TestServer| {
        use tokio::io::AsyncWriteExt;
        let addr = s.base.trim_start_matches("http://").to_string();
        // Half a header, then nothing.
        let mut half = tokio::net::TcpStream::connect(&addr).await.unwrap();
        half.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .unwrap();
        assert!(
            closed_within(&mut half, Duration::from_secs(5))
                .await
                .is_some(),
            "half a header stays open"
        );
        // A body promised and trickled: one byte, then silence.
        let mut trickle = tokio::net::TcpStream::connect(&addr).await.unwrap();
        trickle
            .write_all(b"POST /api/base/login_api/f/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
            .await
            .unwrap();
        assert!(
            closed_within(&mut trickle, Duration::from_secs(6))
                .await
                .is_some(),
            "a trickled body stays open"
        );
        // Four silent connections fill the cap; a fifth client waits until their headers'
        // deadline frees the slots, then is served.
        let mut silent = Vec::new();
        for _ in 0..4 {
            silent.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let blocked = tokio::time::timeout(
            Duration::from_millis(500),
            s.http.get(format!("{}/api/health", s.base)).send(),
        )
        .await;
        assert!(blocked.is_err(), "served beyond the connection cap");
        let (status, _) = s.get("/api/health", None).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "served once the silent ones were closed"
        );
    }
);

api_test!(
    concurrent_submissions_with_different_options_are_charged_for_what_runs,
    test_config(),
    async |s: &TestServer| {
        let token = s.register("racer01", "race-pass-2026").await;
        let (_, me) = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await;
        let me = me["result"]["id"].as_i64().unwrap();
        s.store()
            .operator_credit(me, 100_000, 0, "测试充值")
            .await
            .unwrap();
        // About 1,500 characters of body and 900 of references: excluding the references
        // changes the price (per started 1,000 characters).
        let body = "本研究以高校图书馆的数字资源建设为对象，分析了资源采购、读者使用与服务评价之间的关系。".repeat(36);
        let references =
            "[1] 王明. 数字图书馆资源建设研究[J]. 图书情报工作, 2020, 64(3): 1-9.\n".repeat(20);
        let text = format!("{body}\n参考文献\n{references}");
        let (status, draft) = s
            .post(
                "/api/base/check_api/check_init",
                Some(&token),
                json!({"title": "竞速", "text": text}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{draft}");
        let id = draft["result"]["id"].as_i64().unwrap();
        let submits = (0..10).map(|i| {
            s.post(
                "/api/base/check_api/check_submit",
                Some(&token),
                json!({"id": id, "exclude_bibliography": i % 2 == 0}),
            )
        });
        let results = futures_util::future::join_all(submits).await;
        let accepted: Vec<&Value> = results
            .iter()
            .filter(|(status, _)| *status == StatusCode::OK)
            .map(|(_, body)| body)
            .collect();
        assert_eq!(accepted.len(), 1, "{results:?}");
        let (_, record) = s
            .post(
                "/api/base/check_api/load_by_id",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        let chars = record["result"]["chars"].as_i64().unwrap();
        let charged = record["result"]["chargedFen"].as_i64().unwrap();
        assert_eq!(charged, (chars + 999) / 1000 * 300, "{record}");
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&token))
            .await;
        assert_eq!(
            account["result"]["balanceFen"],
            json!(100_000 - charged),
            "{account}"
        );
    }
);

/// A paper kept in the private library leaves it when its check is deleted.
async fn deleting_a_check_forgets_its_kept_paper(db: TestDb) {
    use simcheck::{EmbeddedLibrary, FingerprintParams, Library, Scope};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let library = Arc::new(
        EmbeddedLibrary::open(dir.path().join("library"), FingerprintParams::default()).unwrap(),
    );
    let store = db.store.clone();
    let s = TestServer::start(
        db,
        Config {
            files_dir: Some(dir.path().join("files")),
            // No public address configured: links must not come from request headers.
            public_url: None,
            ..test_config()
        },
    )
    .await;
    let workers = server::worker::WorkerPool::new(
        store.clone(),
        vec![
            Arc::new(server::api::check::task::CheckHandler::new(
                library.clone(),
                None,
            )),
            Arc::new(server::api::check::task::ForgetHandler::new(
                library.clone(),
            )),
        ],
    )
    .with_lease(Duration::from_secs(5), Duration::from_millis(20))
    .spawn(1);
    let token = s.register("keeper01", "keep-pass-2026").await;
    let (_, me) = s
        .post("/api/base/login_api/current", Some(&token), json!({}))
        .await;
    store
        .operator_credit(me["result"]["id"].as_i64().unwrap(), 1000, 0, "测试充值")
        .await
        .unwrap();
    let text = "这是作者独立完成的研究工作，初稿保存在私有比对库中，用于比对后续修改稿。".repeat(3);
    let (_, draft) = s
        .post(
            "/api/base/check_api/check_init",
            Some(&token),
            json!({"title": "初稿", "text": text}),
        )
        .await;
    let id = draft["result"]["id"].as_i64().unwrap();
    let (status, body) = s
        .post(
            "/api/base/check_api/check_submit",
            Some(&token),
            json!({"id": id, "add_to_private_library": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let private = || async {
        library
            .list()
            .await
            .unwrap()
            .into_iter()
            .filter(|d| d.scope == Scope::Private)
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while private().await == 0 {
        assert!(
            Instant::now() < deadline,
            "the paper never entered the private library"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A genuine report downloaded with a forged Host names no forger's site for verification.
    let deadline = Instant::now() + Duration::from_secs(60);
    let report = loop {
        let res = s
            .http
            .get(format!(
                "{}/api/base/check_api/download_report?id={id}&format=html",
                s.base
            ))
            .bearer_auth(&token)
            .header("host", "evil.example")
            .header("x-forwarded-host", "evil.example")
            .send()
            .await
            .unwrap();
        if res.status() == StatusCode::OK {
            break res.text().await.unwrap();
        }
        assert!(Instant::now() < deadline, "the report never became ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!report.contains("evil.example"), "{report}");
    assert!(
        report.contains("报告验证"),
        "the report names the verification page"
    );
    // A QR link follows the request's Host (shown only to whoever asked), never an
    // untrusted X-Forwarded-Host.
    let qr: Value = s
        .http
        .post(format!("{}/api/base/login_api/f/login_qr_code", s.base))
        .header("x-forwarded-host", "evil.example")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let link = qr["result"]["qrCode"].as_str().unwrap();
    assert!(link.starts_with(&s.base), "{link}");
    let (status, _) = s
        .post(
            "/api/base/check_api/delete",
            Some(&token),
            json!({"id": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let deadline = Instant::now() + Duration::from_secs(30);
    while private().await > 0 {
        assert!(
            Instant::now() < deadline,
            "the deleted check's paper stayed in the library"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    workers.stop().await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_check_forgets_its_kept_paper_sqlite() {
    deleting_a_check_forgets_its_kept_paper(TestDb::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_check_forgets_its_kept_paper_postgres() {
    deleting_a_check_forgets_its_kept_paper(TestDb::postgres().await).await;
}

api_test!(
    titles_are_plain_lines_and_pages_never_overflow,
    test_config(),
    async |s: &TestServer| {
        let token = s.register("titler01", "title-pass-2026").await;
        let (status, draft) = s
            .post(
                "/api/base/check_api/check_init",
                Some(&token),
                json!({"title": "毕业论文\u{202E}fdp.exe\u{0}\n", "author": "张\u{200B}三", "text": "这是一段需要检测的论文正文，内容足够长以便统计。"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{draft}");
        assert_eq!(draft["result"]["title"], json!("毕业论文fdp.exe"));
        assert_eq!(draft["result"]["author"], json!("张三"));
        let id = draft["result"]["id"].as_i64().unwrap();
        let (status, _) = s
            .post(
                "/api/base/check_api/update_title",
                Some(&token),
                json!({"id": id, "title": "\u{2066}新标题\u{2069}\u{7}"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = s
            .post(
                "/api/base/check_api/update_title",
                Some(&token),
                json!({"id": id, "title": "\u{202E}\u{0}"}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_title");
        let (_, list) = s
            .post("/api/base/check_api/query_list", Some(&token), json!({}))
            .await;
        assert_eq!(list["result"]["records"][0]["title"], json!("新标题"));
        let (status, list) = s
            .post(
                &format!("/api/base/check_api/query_list?page={}&size=100", i64::MAX),
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert_eq!(list["result"]["records"], json!([]));
    }
);

api_test!(
    uploads_are_judged_by_what_is_wrong_with_them,
    test_config(),
    async |s: &TestServer| {
        let token = s.register("uploader01", "upload-pass-2026").await;
        // A body cut off in the middle of its file part is malformed, not too large.
        let res = s
            .http
            .post(format!("{}/api/base/check_api/word_count", s.base))
            .bearer_auth(&token)
            .header("content-type", "multipart/form-data; boundary=XYZ")
            .body("--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n论文正文")
            .send()
            .await
            .unwrap();
        let status = res.status();
        let body: Value = res.json().await.unwrap();
        assert_error(status, &body, 400, "bad_upload");
        // The rewriting family takes uploads as large as the others (beyond axum's 2 MB default).
        let padding = "\n".repeat(3 << 20);
        let text = format!("这是一篇需要改写的论文，正文之后有很多空行。{padding}");
        let (status, body) = upload(
            s,
            "/api/base/paper_machine_api/word_count",
            Some(&token),
            "paper.txt",
            text.into_bytes(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
);

api_test!(
    a_free_check_pays_only_for_papers_within_its_size_cap,
    Config {
        free_check_max_chars: 100,
        ..test_config()
    },
    async |s: &TestServer| {
        let token = s.register("freeloader01", "free-pass-2026").await;
        let (_, me) = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await;
        let me = me["result"]["id"].as_i64().unwrap();
        s.store()
            .operator_credit(me, 0, 1, "测试赠送")
            .await
            .unwrap();
        let token = token.as_str();
        let cost_of = |text: String| async move {
            let (_, draft) = s
                .post(
                    "/api/base/check_api/check_init",
                    Some(token),
                    json!({"text": text}),
                )
                .await;
            let id = draft["result"]["id"].as_i64().unwrap();
            s.post(
                "/api/base/check_api/check_cost",
                Some(token),
                json!({"id": id}),
            )
            .await
            .1
        };
        let short = cost_of("一篇很短的论文正文。".repeat(5)).await;
        assert_eq!(short["result"]["paysWith"], json!("free_check"), "{short}");
        assert_eq!(short["result"]["freeCheckMaxChars"], json!(100));
        let long = cost_of("一篇很长的论文正文。".repeat(20)).await;
        assert_eq!(long["result"]["paysWith"], json!("insufficient"), "{long}");
        assert_eq!(long["result"]["freeChecks"], json!(1));
    }
);

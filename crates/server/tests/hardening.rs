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

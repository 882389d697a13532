//! `wenjian serve` on its embedded defaults, as a real process: uploads are read by the same
//! binary's `extract-child`, and what it stores is readable by its own user only.

use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn serves_uploads_through_its_reading_child_and_keeps_files_private() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _server = Killed(
        Command::new(env!("CARGO_BIN_EXE_wenjian"))
            .arg("serve")
            .env("WENJIAN_DATA_DIR", &data)
            .env("WENJIAN_LISTEN", format!("127.0.0.1:{port}"))
            .env("WENJIAN_WORKERS_PER_QUEUE", "0")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while http.get(format!("{base}/api/health")).send().await.is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pdf = docio::hostile::pdf_with_content(
        b"BT /F1 12 Tf 72 720 Td (A paper read by the reading child process.) Tj ET",
        "",
    );
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(pdf).file_name("paper.pdf"),
    );
    let res = http
        .post(format!("{base}/api/base/check_api/word_count"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body["result"]["chars"].as_u64().unwrap() > 30, "{body}");
    assert_eq!(body["result"]["format"], "pdf", "{body}");

    assert_eq!(mode(&data), 0o700, "the data folder");
    let db = data.join("wenjian.db");
    assert!(db.exists());
    assert_eq!(mode(&db), 0o600, "the database holds every paper");
    assert_eq!(mode(&data.join("files")), 0o700);
}

//! The test harness shared by the API test files: the real server on 127.0.0.1:0, spoken to
//! over HTTP, on SQLite and PostgreSQL.
#![allow(dead_code)]

pub use reqwest::StatusCode;
pub use serde_json::{Value, json};
pub use server::{AppState, Config};
pub use store::testing::TestDb;

pub struct TestServer {
    pub base: String,
    /// The running server's state (its payment sandbox, say).
    pub state: AppState,
    pub http: reqwest::Client,
    db: Option<TestDb>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// The server's own data folder (files of uploads and decks), removed with it.
    _data: Option<tempfile::TempDir>,
}

impl TestServer {
    /// `start`, with `public_url` set to the address the server listens at (a live payment
    /// site must have one).
    pub async fn start_public(db: TestDb, config: Config) -> Self {
        Self::start_inner(db, config, true).await
    }

    pub async fn start(db: TestDb, config: Config) -> Self {
        Self::start_inner(db, config, false).await
    }

    async fn start_inner(db: TestDb, mut config: Config, public: bool) -> Self {
        // Each server its own data folder: two servers (SQLite and PostgreSQL) both have a task
        // 1, and nothing a test writes belongs in the source tree.
        let data = (config.data_dir == Config::default().data_dir)
            .then(|| tempfile::tempdir().expect("a data folder"));
        if let Some(dir) = &data {
            config.data_dir = dir.path().to_path_buf();
        }
        // The test binary is not `wenjian`; uploads are read by the same child on its own.
        config
            .extractor
            .get_or_insert_with(|| env!("CARGO_BIN_EXE_wenjian-extract").into());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        if public {
            config.public_url = Some(format!("http://{addr}"));
        }
        let state = AppState::new(db.store.clone(), config);
        let served = state.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server::serve_on(listener, served, async {
                let _ = rx.await;
            })
            .await
            .unwrap();
        });
        TestServer {
            state,
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            db: Some(db),
            shutdown: Some(tx),
            task: Some(task),
            _data: data,
        }
    }

    /// The server's store, for what no API does yet (crediting an account).
    pub fn store(&self) -> &store::Store {
        &self.db.as_ref().expect("running").store
    }

    pub async fn stop(mut self) {
        let _ = self.shutdown.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap();
        self.db.take().unwrap().cleanup().await;
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
        let mut req = self.http.post(format!("{}{path}", self.base)).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        let mut req = self.http.get(format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// The signed-in user's id.
    pub async fn user_id(&self, token: &str) -> i64 {
        self.post("/api/base/login_api/current", Some(token), json!({}))
            .await
            .1["result"]["id"]
            .as_i64()
            .unwrap()
    }

    pub async fn register(&self, username: &str, password: &str) -> String {
        let (status, body) = self
            .post(
                "/api/base/login_api/f/register",
                None,
                json!({"username": username, "password": password}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["result"]["access_token"].as_str().unwrap().to_string()
    }
}

/// The password of operators made by `operator`.
pub const OPERATOR_PASSWORD: &str = "Zq7-kite-river";

/// An operator made as `wenjian user create NAME --admin` makes one, signed in.
pub async fn operator(s: &TestServer, name: &str) -> String {
    s.store()
        .create_user(name, OPERATOR_PASSWORD, true)
        .await
        .unwrap();
    let (status, body) = s
        .post(
            "/api/base/login_api/f/login",
            None,
            json!({"username": name, "password": OPERATOR_PASSWORD}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"]["access_token"].as_str().unwrap().to_string()
}

/// The audit log's actions for `query`, newest first, and the page as answered.
pub async fn audit_actions(s: &TestServer, token: &str, query: &str) -> (Vec<String>, Value) {
    let (status, page) = s
        .get(&format!("/api/admin/audit?q={query}"), Some(token))
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let actions = page["result"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect();
    (actions, page)
}

pub fn test_config() -> Config {
    Config {
        login_max_failures: 3,
        // The product's default setup (scripts/run.sh fetches the 0.5B model only), even where
        // the tests' models folder also holds the 1.5B observer for the aidetect pair tests.
        aigc_observer: false,
        public_url: Some("http://wenjian.test".into()),
        ..Config::default()
    }
}

macro_rules! api_test {
    ($name:ident, $config:expr, $body:expr) => {
        mod $name {
            use super::*;
            #[tokio::test]
            pub async fn sqlite() {
                let server = TestServer::start(TestDb::sqlite().await, $config).await;
                ($body)(&server).await;
                server.stop().await;
            }
            #[tokio::test]
            pub async fn postgres() {
                let server = TestServer::start(TestDb::postgres().await, $config).await;
                ($body)(&server).await;
                server.stop().await;
            }
        }
    };
}

/// Text of a PDF, read with Debian's `pdftotext` (installed by scripts/test.sh).
pub fn pdftotext(pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, pdf).unwrap();
    let out = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils)");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

pub fn assert_error(status: StatusCode, body: &Value, want_status: u16, want_code: &str) {
    assert_eq!(status.as_u16(), want_status, "{body}");
    assert_eq!(body["success"], json!(false), "{body}");
    assert_eq!(body["code"], json!(want_status), "{body}");
    assert_eq!(body["error"], json!(want_code), "{body}");
    assert!(!body["message"].as_str().unwrap_or("").is_empty(), "{body}");
}

//! Black-box API tests: the real server on 127.0.0.1:0, spoken to over HTTP, on SQLite and PostgreSQL.

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::{AppState, Config};
use store::testing::TestDb;

struct TestServer {
    base: String,
    http: reqwest::Client,
    db: Option<TestDb>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    async fn start(db: TestDb, config: Config) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = AppState::new(db.store.clone(), config);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server::serve_on(listener, state, async {
                let _ = rx.await;
            })
            .await
            .unwrap();
        });
        TestServer {
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            db: Some(db),
            shutdown: Some(tx),
            task: Some(task),
        }
    }

    async fn stop(mut self) {
        let _ = self.shutdown.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap();
        self.db.take().unwrap().cleanup().await;
    }

    async fn post(&self, path: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
        let mut req = self.http.post(format!("{}{path}", self.base)).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        let mut req = self.http.get(format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    async fn register(&self, username: &str, password: &str) -> String {
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

fn test_config() -> Config {
    Config {
        login_max_failures: 3,
        public_url: Some("http://wenjian.test".into()),
        ..Config::default()
    }
}

macro_rules! api_test {
    ($name:ident, $config:expr, $body:expr) => {
        mod $name {
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let server = TestServer::start(TestDb::sqlite().await, $config).await;
                ($body)(&server).await;
                server.stop().await;
            }
            #[tokio::test]
            async fn postgres() {
                let server = TestServer::start(TestDb::postgres().await, $config).await;
                ($body)(&server).await;
                server.stop().await;
            }
        }
    };
}

fn assert_error(status: StatusCode, body: &Value, want_status: u16, want_code: &str) {
    assert_eq!(status.as_u16(), want_status, "{body}");
    assert_eq!(body["success"], json!(false), "{body}");
    assert_eq!(body["code"], json!(want_status), "{body}");
    assert_eq!(body["error"], json!(want_code), "{body}");
    assert!(!body["message"].as_str().unwrap_or("").is_empty(), "{body}");
}

api_test!(
    login_success_in_every_parameter_style,
    test_config(),
    async |s: &TestServer| {
        s.register("student01", "password-123").await;
        // JSON body, with a username that needs trimming.
        let (status, body) = s
            .post(
                "/api/base/login_api/f/login",
                None,
                json!({"username": "  student01 ", "password": "password-123"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["code"], json!(200));
        assert_eq!(body["success"], json!(true));
        let token = body["result"]["access_token"].as_str().unwrap().to_string();
        // Query string, as the spec's client sends it.
        let res = s
            .http
            .post(format!(
                "{}/api/base/login_api/f/login?username=student01&password=password-123",
                s.base
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        // Form body.
        let res = s
            .http
            .post(format!("{}/api/base/login_api/f/login", s.base))
            .form(&[("username", "student01"), ("password", "password-123")])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);

        let (status, me) = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(me["result"]["loginName"], json!("student01"));
        assert_eq!(me["result"]["roles"], json!(["admin"]));
        assert!(me["result"]["id"].as_i64().unwrap() > 0);
    }
);

api_test!(
    login_failure_then_lockout,
    test_config(),
    async |s: &TestServer| {
        s.register("student02", "password-123").await;
        for _ in 0..3 {
            let (status, body) = s
                .post(
                    "/api/base/login_api/f/login",
                    None,
                    json!({"username": "student02", "password": "wrong-pass"}),
                )
                .await;
            assert_error(status, &body, 401, "invalid_credentials");
            assert_eq!(body["message"], json!("用户名或密码错误"));
        }
        // Locked now, even with the right password.
        let (status, body) = s
            .post(
                "/api/base/login_api/f/login",
                None,
                json!({"username": "student02", "password": "password-123"}),
            )
            .await;
        assert_error(status, &body, 429, "too_many_attempts");
        // Unknown users look exactly like wrong passwords.
        let (status, body) = s
            .post(
                "/api/base/login_api/f/login",
                None,
                json!({"username": "nobody99", "password": "whatever-1"}),
            )
            .await;
        assert_error(status, &body, 401, "invalid_credentials");
        let (status, body) = s
            .post(
                "/api/base/login_api/f/login",
                None,
                json!({"username": " ", "password": ""}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_input");
    }
);

api_test!(
    logout_revokes_the_token,
    test_config(),
    async |s: &TestServer| {
        let token = s.register("student03", "password-123").await;
        let (status, _) = s
            .post("/api/base/login_api/logout", Some(&token), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await;
        assert_error(status, &body, 401, "not_logged_in");
        let (status, body) = s.post("/api/base/login_api/current", None, json!({})).await;
        assert_error(status, &body, 401, "not_logged_in");
        let (status, body) = s
            .get("/api/base/account_info_api/account", Some("forged"))
            .await;
        assert_error(status, &body, 401, "not_logged_in");
    }
);

api_test!(
    register_validation,
    test_config(),
    async |s: &TestServer| {
        let cases = [
            (
                json!({"username": "abc", "password": "password-123"}),
                400,
                "invalid_username",
            ),
            (
                json!({"username": &"x".repeat(33), "password": "password-123"}),
                400,
                "invalid_username",
            ),
            (
                json!({"username": "bad name", "password": "password-123"}),
                400,
                "invalid_username",
            ),
            (
                json!({"username": "goodname", "password": "short"}),
                400,
                "weak_password",
            ),
            (json!({"username": "goodname"}), 400, "bad_request"),
        ];
        for (body, want_status, want_code) in cases {
            let (status, res) = s.post("/api/base/login_api/f/register", None, body).await;
            assert_error(status, &res, want_status, want_code);
        }
        s.register("张三同学", "password-123").await;
        let (status, res) = s
            .post(
                "/api/base/login_api/f/register",
                None,
                json!({"username": "张三同学", "password": "password-456"}),
            )
            .await;
        assert_error(status, &res, 409, "username_taken");
    }
);

api_test!(
    change_password_signs_out_other_sessions,
    test_config(),
    async |s: &TestServer| {
        let first = s.register("student04", "password-123").await;
        let (_, second) = s
            .post(
                "/api/base/login_api/f/login",
                None,
                json!({"username": "student04", "password": "password-123"}),
            )
            .await;
        let second = second["result"]["access_token"]
            .as_str()
            .unwrap()
            .to_string();
        let (status, body) = s
            .post(
                "/api/base/login_api/change_password",
                Some(&first),
                json!({"old_password": "nope-nope", "new_password": "password-456"}),
            )
            .await;
        assert_error(status, &body, 400, "wrong_password");
        let (status, _) = s
            .post(
                "/api/base/login_api/change_password",
                Some(&first),
                json!({"old_password": "password-123", "new_password": "password-456"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            s.post("/api/base/login_api/current", Some(&first), json!({}))
                .await
                .0,
            StatusCode::OK
        );
        assert_eq!(
            s.post("/api/base/login_api/current", Some(&second), json!({}))
                .await
                .0,
            StatusCode::UNAUTHORIZED
        );
    }
);

api_test!(
    qr_login_single_use_with_first_login_bonus,
    test_config(),
    async |s: &TestServer| {
        let phone = s.register("student05", "password-123").await;
        let (status, qr) = s
            .post("/api/base/login_api/f/login_qr_code", None, json!({}))
            .await;
        assert_eq!(status, StatusCode::OK);
        let id = qr["result"]["id"].as_str().unwrap().to_string();
        assert_eq!(
            qr["result"]["qrCode"],
            json!(format!("http://wenjian.test/m/qr/{id}"))
        );
        assert_eq!(qr["result"]["expiresInSeconds"], json!(300));

        let poll = format!("/api/base/login_api/f/val_login_qr_code?id={id}");
        let (status, pending) = s.post(&poll, None, json!({})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(pending["result"], json!(false));

        let (status, info) = s
            .post("/api/base/login_api/f/qr_info", None, json!({"id": id}))
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(info["result"]["status"], json!("pending"));
        assert_eq!(info["result"]["requesterIp"], json!("127.0.0.1"));

        let (status, body) = s
            .post(
                &format!("/api/base/login_api/qr_confirm?id={id}"),
                None,
                json!({}),
            )
            .await;
        assert_error(status, &body, 401, "not_logged_in");
        let (status, _) = s
            .post(
                &format!("/api/base/login_api/qr_confirm?id={id}"),
                Some(&phone),
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);

        let (status, done) = s.post(&poll, None, json!({})).await;
        assert_eq!(status, StatusCode::OK);
        let desktop = done["result"]["access_token"].as_str().unwrap().to_string();
        let (_, me) = s
            .post("/api/base/login_api/current", Some(&desktop), json!({}))
            .await;
        assert_eq!(me["result"]["loginName"], json!("student05"));

        let (status, body) = s.post(&poll, None, json!({})).await;
        assert_error(status, &body, 409, "qr_used");

        let (status, account) = s
            .get("/api/base/account_info_api/account", Some(&desktop))
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(account["result"]["freeCheckCredits"], json!(1));
        assert_eq!(account["result"]["balanceFen"], json!(0));
        assert_eq!(
            account["result"]["ledger"][0]["kind"],
            json!("qr_first_login_bonus")
        );

        let (status, body) = s
            .post(
                "/api/base/login_api/f/val_login_qr_code?id=unknown",
                None,
                json!({}),
            )
            .await;
        assert_error(status, &body, 404, "qr_not_found");
    }
);

api_test!(
    qr_login_expires,
    Config {
        qr_ttl_seconds: 0,
        ..test_config()
    },
    async |s: &TestServer| {
        let phone = s.register("student06", "password-123").await;
        let (_, qr) = s
            .post("/api/base/login_api/f/login_qr_code", None, json!({}))
            .await;
        let id = qr["result"]["id"].as_str().unwrap().to_string();
        let (status, body) = s
            .post(
                &format!("/api/base/login_api/f/val_login_qr_code?id={id}"),
                None,
                json!({}),
            )
            .await;
        assert_error(status, &body, 410, "qr_expired");
        let (status, body) = s
            .post(
                &format!("/api/base/login_api/qr_confirm?id={id}"),
                Some(&phone),
                json!({}),
            )
            .await;
        assert_error(status, &body, 410, "qr_expired");
    }
);

api_test!(
    openapi_documents_every_route_and_unknown_api_is_json,
    test_config(),
    async |s: &TestServer| {
        let (status, doc) = s.get("/api/docs/openapi.json", None).await;
        assert_eq!(status, StatusCode::OK);
        let mut paths: Vec<&str> = doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        paths.sort();
        let mut expected = vec![
            "/api/health",
            "/api/base/site_api/f/config",
            "/api/base/login_api/f/login",
            "/api/base/login_api/f/register",
            "/api/base/login_api/current",
            "/api/base/login_api/logout",
            "/api/base/login_api/change_password",
            "/api/base/login_api/f/login_qr_code",
            "/api/base/login_api/f/val_login_qr_code",
            "/api/base/login_api/f/qr_info",
            "/api/base/login_api/qr_confirm",
            "/api/base/account_info_api/account",
        ];
        expected.sort();
        assert_eq!(paths, expected);
        let (status, body) = s.post("/api/base/no_such_api/x", None, json!({})).await;
        assert_error(status, &body, 404, "api_not_found");
        let (status, health) = s.get("/api/health", None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(health["result"]["status"], json!("ok"));
    }
);

//! Accounts and authentication abuse (issue 18): registration limits, free checks that cannot be
//! farmed by confirming one's own QR code, database-kept lockouts per account and per IP, the
//! password and user-name policy, and credentials kept out of URLs. SQLite and PostgreSQL.

#[macro_use]
mod common;
use common::*;

const LOGIN: &str = "/api/base/login_api/f/login";
const REGISTER: &str = "/api/base/login_api/f/register";
const CHANGE_PASSWORD: &str = "/api/base/login_api/change_password";
const QR_CODE: &str = "/api/base/login_api/f/login_qr_code";

/// A client whose requests leave from `ip` (any 127.0.0.0/8 address works on loopback), so the
/// server sees another address without trusting forwarded headers.
fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip.parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap()
}

async fn send(req: reqwest::RequestBuilder) -> (StatusCode, Value, Option<String>) {
    let res = req.send().await.unwrap();
    let status = res.status();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    (status, res.json().await.unwrap_or(Value::Null), retry)
}

async fn login_from(
    s: &TestServer,
    http: &reqwest::Client,
    user: &str,
    pw: &str,
) -> (StatusCode, Value) {
    let (status, body, _) = send(
        http.post(format!("{}{LOGIN}", s.base))
            .json(&json!({"username": user, "password": pw})),
    )
    .await;
    (status, body)
}

/// Asserts a 429 with `code`, a `Retry-After` header and the same seconds in the message.
fn assert_retry(status: StatusCode, body: &Value, retry: Option<String>, code: &str) {
    assert_error(status, body, 429, code);
    let secs: u64 = retry.expect("Retry-After").parse().unwrap();
    assert!(secs >= 1);
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(&format!("{secs} 秒")), "{message}");
}

api_test!(
    registration_is_limited_per_ip,
    Config {
        register_max_per_ip_per_hour: 3,
        ..test_config()
    },
    async |s: &TestServer| {
        // Refused input does not use up the allowance.
        let (status, body) = s
            .post(
                REGISTER,
                None,
                json!({"username": "limited0", "password": "short"}),
            )
            .await;
        assert_error(status, &body, 400, "weak_password");
        for i in 1..=3 {
            s.register(&format!("limited{i}"), "password-123").await;
        }
        let (status, body, retry) = send(
            s.http
                .post(format!("{}{REGISTER}", s.base))
                .json(&json!({"username": "limited4", "password": "password-123"})),
        )
        .await;
        assert_retry(status, &body, retry, "too_many_registrations");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .starts_with("注册过于频繁")
        );
        // Another address may still register.
        let (status, body, _) = send(
            client_from("127.0.0.2")
                .post(format!("{}{REGISTER}", s.base))
                .json(&json!({"username": "limited5", "password": "password-123"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
);

api_test!(
    registration_is_limited_globally,
    Config {
        register_max_per_minute: 2,
        ..test_config()
    },
    async |s: &TestServer| {
        s.register("global01", "password-123").await;
        let (status, body, _) = send(
            client_from("127.0.0.2")
                .post(format!("{}{REGISTER}", s.base))
                .json(&json!({"username": "global02", "password": "password-123"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body, retry) = send(
            client_from("127.0.0.3")
                .post(format!("{}{REGISTER}", s.base))
                .json(&json!({"username": "global03", "password": "password-123"})),
        )
        .await;
        assert_retry(status, &body, retry, "too_many_registrations");
    }
);

/// Starts a QR login as `desktop_agent` and returns its id.
async fn new_qr(s: &TestServer, desktop_agent: &str) -> String {
    let (status, qr, _) = send(
        s.http
            .post(format!("{}{QR_CODE}", s.base))
            .header("user-agent", desktop_agent)
            .json(&json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{qr}");
    qr["result"]["id"].as_str().unwrap().to_string()
}

async fn confirm(s: &TestServer, id: &str, token: &str, agent: &str) -> (StatusCode, Value) {
    let (status, body, _) = send(
        s.http
            .post(format!("{}/api/base/login_api/qr_confirm", s.base))
            .bearer_auth(token)
            .header("user-agent", agent)
            .json(&json!({"id": id})),
    )
    .await;
    (status, body)
}

async fn collect(s: &TestServer, id: &str) -> String {
    let (status, done) = s
        .post(
            "/api/base/login_api/f/val_login_qr_code",
            None,
            json!({"id": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    done["result"]["access_token"].as_str().unwrap().to_string()
}

async fn free_checks(s: &TestServer, token: &str) -> i64 {
    let (_, account) = s
        .get("/api/base/account_info_api/account", Some(token))
        .await;
    account["result"]["freeCheckCredits"].as_i64().unwrap()
}

const DESKTOP: &str = "Mozilla/5.0 (Windows NT 10.0) Chrome/126 desktop";
const PHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) Mobile Safari";

api_test!(
    qr_confirm_from_the_requesting_browser_is_refused,
    test_config(),
    async |s: &TestServer| {
        let token = s.register("qrself01", "password-123").await;
        let id = new_qr(s, DESKTOP).await;
        let (status, body) = confirm(s, &id, &token, DESKTOP).await;
        assert_error(status, &body, 403, "qr_same_device");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("请使用另一台设备（手机）扫码确认")
        );
        let (_, info) = s
            .post("/api/base/login_api/f/qr_info", None, json!({"id": id}))
            .await;
        assert_eq!(
            info["result"]["status"],
            json!("pending"),
            "nothing was confirmed"
        );
        // A phone on the same network (same address, another browser) may confirm.
        let (status, body) = confirm(s, &id, &token, PHONE).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let desktop = collect(s, &id).await;
        assert_eq!(free_checks(s, &desktop).await, 1);
    }
);

api_test!(
    qr_free_check_once_per_ip_per_day,
    test_config(),
    async |s: &TestServer| {
        let mut tokens = Vec::new();
        for name in ["farmer01", "farmer02", "farmer03"] {
            let phone = s.register(name, "password-123").await;
            let id = new_qr(s, DESKTOP).await;
            let (status, body) = confirm(s, &id, &phone, PHONE).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            tokens.push(collect(s, &id).await);
        }
        let counts = [
            free_checks(s, &tokens[0]).await,
            free_checks(s, &tokens[1]).await,
            free_checks(s, &tokens[2]).await,
        ];
        assert_eq!(
            counts,
            [1, 0, 0],
            "one free check per requesting IP per day"
        );
    }
);

api_test!(
    qr_creation_is_limited_per_ip,
    Config {
        qr_max_per_ip_per_minute: 3,
        ..test_config()
    },
    async |s: &TestServer| {
        for _ in 0..3 {
            new_qr(s, DESKTOP).await;
        }
        let (status, body, retry) =
            send(s.http.post(format!("{}{QR_CODE}", s.base)).json(&json!({}))).await;
        assert_retry(status, &body, retry, "too_many_qr_codes");
        let (status, _, _) = send(
            client_from("127.0.0.2")
                .post(format!("{}{QR_CODE}", s.base))
                .json(&json!({})),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
);

api_test!(
    login_lockout_is_per_account_across_addresses,
    Config {
        login_max_failures: 100,
        login_max_failures_per_ip: 100,
        login_max_failures_per_account: 4,
        ..test_config()
    },
    async |s: &TestServer| {
        s.register("victim01", "password-123").await;
        s.register("bystander", "password-123").await;
        // A guesser rotating addresses: each tries twice.
        for ip in ["127.0.0.2", "127.0.0.3"] {
            let http = client_from(ip);
            for _ in 0..2 {
                let (status, body) = login_from(s, &http, "victim01", "guess-guess").await;
                assert_error(status, &body, 401, "invalid_credentials");
            }
        }
        let (status, body) =
            login_from(s, &client_from("127.0.0.4"), "VICTIM01", "password-123").await;
        assert_error(status, &body, 429, "too_many_attempts");
        // The lock is on the account, not on the addresses.
        let (status, body) =
            login_from(s, &client_from("127.0.0.2"), "bystander", "password-123").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
);

api_test!(
    login_lockout_is_per_ip_across_accounts,
    Config {
        login_max_failures: 100,
        login_max_failures_per_ip: 3,
        login_max_failures_per_account: 100,
        ..test_config()
    },
    async |s: &TestServer| {
        s.register("sprayed1", "password-123").await;
        let http = client_from("127.0.0.5");
        for name in ["sprayed1", "sprayed2", "sprayed3"] {
            let (status, body) = login_from(s, &http, name, "Spring2024!").await;
            assert_error(status, &body, 401, "invalid_credentials");
        }
        let (status, body) = login_from(s, &http, "sprayed1", "password-123").await;
        assert_error(status, &body, 429, "too_many_attempts");
        let (status, body) =
            login_from(s, &client_from("127.0.0.6"), "sprayed1", "password-123").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
);

api_test!(
    change_password_is_throttled_like_login,
    test_config(),
    async |s: &TestServer| {
        // test_config: 3 failures of one IP with one name lock it.
        let token = s.register("changer01", "password-123").await;
        for _ in 0..3 {
            let (status, body) = s
                .post(
                    CHANGE_PASSWORD,
                    Some(&token),
                    json!({"old_password": "guess-guess", "new_password": "new-password-1"}),
                )
                .await;
            assert_error(status, &body, 400, "wrong_password");
        }
        let (status, body, retry) = send(
            s.http
                .post(format!("{}{CHANGE_PASSWORD}", s.base))
                .bearer_auth(&token)
                .json(&json!({"old_password": "password-123", "new_password": "new-password-1"})),
        )
        .await;
        assert_error(status, &body, 429, "too_many_attempts");
        assert!(retry.is_some());
        // The same lock guards the login form.
        let (status, body) = s
            .post(
                LOGIN,
                None,
                json!({"username": "changer01", "password": "password-123"}),
            )
            .await;
        assert_error(status, &body, 429, "too_many_attempts");
    }
);

api_test!(
    password_policy_on_register_and_change,
    test_config(),
    async |s: &TestServer| {
        let cases = [
            ("policy01", "        ", "blank_password"),
            ("policy01", "12345678", "common_password"),
            ("policy01", "PassWord", "common_password"),
            ("policy01", "a1234567", "common_password"),
            ("policy01", "iloveyou", "common_password"),
            ("policy01", "88888888", "common_password"),
            ("policy01", "policy01", "password_contains_username"),
            ("Policy01", "my-POLICY01-pw", "password_contains_username"),
        ];
        for (username, password, code) in cases {
            let (status, body) = s
                .post(
                    REGISTER,
                    None,
                    json!({"username": username, "password": password}),
                )
                .await;
            assert_error(status, &body, 400, code);
        }
        let token = s.register("policy01", "password-123").await;
        for (new_password, code) in [
            ("qwertyui", "common_password"),
            ("POLICY01!!", "password_contains_username"),
            ("\t       ", "blank_password"),
        ] {
            let (status, body) = s
                .post(
                    CHANGE_PASSWORD,
                    Some(&token),
                    json!({"old_password": "password-123", "new_password": new_password}),
                )
                .await;
            assert_error(status, &body, 400, code);
        }
        let (status, body) = s
            .post(
                CHANGE_PASSWORD,
                Some(&token),
                json!({"old_password": "password-123", "new_password": "a-better-one-9"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
);

api_test!(
    lookalike_and_reserved_names_are_refused,
    test_config(),
    async |s: &TestServer| {
        let cases = [
            // Cyrillic а and е in otherwise Latin names, a Greek ο, full-width letters and digits.
            ("\u{0430}dmin_01", "invalid_username"),
            ("stud\u{0435}nt01", "invalid_username"),
            ("stud\u{03bf}nt01", "invalid_username"),
            ("ｓｔｕｄｅｎｔ01", "invalid_username"),
            ("student０１", "invalid_username"),
            ("admin", "reserved_username"),
            ("ADMIN", "reserved_username"),
            ("Administrator", "reserved_username"),
            ("root", "reserved_username"),
            ("system", "reserved_username"),
            ("support", "reserved_username"),
            ("wenjian", "reserved_username"),
            ("admin_01", "reserved_username"),
            ("文鉴", "invalid_username"),
            ("文鉴官方", "reserved_username"),
            ("管理员01", "reserved_username"),
            ("客服小王", "reserved_username"),
        ];
        for (username, code) in cases {
            let (status, body) = s
                .post(
                    REGISTER,
                    None,
                    json!({"username": username, "password": "password-123"}),
                )
                .await;
            assert_error(status, &body, 400, code);
            assert!(
                body["message"]
                    .as_str()
                    .unwrap()
                    .chars()
                    .any(|c| c > '\u{2e80}'),
                "Chinese message: {body}"
            );
        }
        let (_, body) = s
            .post(
                REGISTER,
                None,
                json!({"username": "ｓｔｕｄｅｎｔ01", "password": "password-123"}),
            )
            .await;
        assert!(body["message"].as_str().unwrap().contains("全角"), "{body}");
        let (_, body) = s
            .post(
                REGISTER,
                None,
                json!({"username": "stud\u{0435}nt01", "password": "password-123"}),
            )
            .await;
        assert!(
            body["message"].as_str().unwrap().contains("西里尔"),
            "{body}"
        );
        s.register("张三同学", "password-123").await;
        s.register("student_01", "password-123").await;
    }
);

api_test!(
    credentials_in_the_url_are_refused,
    test_config(),
    async |s: &TestServer| {
        s.register("urlsafe01", "password-123").await;
        for path in [
            format!("{LOGIN}?username=urlsafe01&password=password-123"),
            format!("{LOGIN}?password=password-123"),
            format!("{REGISTER}?username=urlsafe02&password=password-123"),
        ] {
            let (status, body) = s.post(&path, None, json!({})).await;
            assert_error(status, &body, 400, "credentials_in_url");
            assert!(
                body["message"]
                    .as_str()
                    .unwrap()
                    .contains("密码不能放在网址中")
            );
        }
        // Even with the same password in the body as well.
        let (status, body) = s
            .post(
                &format!("{LOGIN}?password=password-123"),
                None,
                json!({"username": "urlsafe01", "password": "password-123"}),
            )
            .await;
        assert_error(status, &body, 400, "credentials_in_url");
        let (_, login) = s
            .post(
                LOGIN,
                None,
                json!({"username": "urlsafe01", "password": "password-123"}),
            )
            .await;
        let token = login["result"]["access_token"].as_str().unwrap();
        let (status, body) = s
            .post(
                &format!("{CHANGE_PASSWORD}?old_password=password-123&new_password=xyz-987-abc"),
                Some(token),
                json!({}),
            )
            .await;
        assert_error(status, &body, 400, "credentials_in_url");
        // A refused URL does not count as a failed login.
        let (status, _) = s
            .post(
                LOGIN,
                None,
                json!({"username": "urlsafe01", "password": "password-123"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
);

/// A server over its own connection to `url`, as after a restart.
async fn restarted(url: &str, config: Config) -> (String, tokio::sync::oneshot::Sender<()>) {
    let store = store::Store::open(url).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server::serve_on(
        listener,
        AppState::new(store, config),
        async {
            let _ = rx.await;
        },
    ));
    (base, tx)
}

async fn lockout_survives_restart(db: TestDb) {
    let url = db.url.clone();
    let s = TestServer::start(db, test_config()).await;
    s.register("restart01", "password-123").await;
    for _ in 0..3 {
        let (status, body) = s
            .post(
                LOGIN,
                None,
                json!({"username": "restart01", "password": "guess-guess"}),
            )
            .await;
        assert_error(status, &body, 401, "invalid_credentials");
    }
    let (base, stop) = restarted(&url, test_config()).await;
    let (status, body, _) = send(
        s.http
            .post(format!("{base}{LOGIN}"))
            .json(&json!({"username": "restart01", "password": "password-123"})),
    )
    .await;
    assert_error(status, &body, 429, "too_many_attempts");
    let _ = stop.send(());
    s.stop().await;
}

#[tokio::test]
async fn lockout_survives_restart_sqlite() {
    lockout_survives_restart(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn lockout_survives_restart_postgres() {
    lockout_survives_restart(TestDb::postgres().await).await;
}

async fn sweeper_cleans_expired_rows(db: TestDb) {
    let store = db.store.clone();
    let old = store
        .create_qr_login("local", -2 * 3_600_000, "", "")
        .await
        .unwrap();
    let user = store
        .create_user("swept01", "password-123", false)
        .await
        .unwrap();
    store
        .create_session(store::NewSession {
            user_id: user.id,
            via: "password",
            ip: "",
            user_agent: "",
            ttl_ms: -1,
        })
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::watch::channel(false);
    let sweeper = server::sweeper::spawn(store.clone(), std::time::Duration::from_secs(3600), rx);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while store.qr_login(&old.id).await.is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the sweep did not run"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tx.send(true).unwrap();
    sweeper.await.unwrap();
    // Nothing is left to sweep: the expired session went in the same pass.
    assert_eq!(
        store.sweep_expired(store::now_ms()).await.unwrap().total(),
        0
    );
    db.cleanup().await;
}

#[tokio::test]
async fn sweeper_cleans_expired_rows_sqlite() {
    sweeper_cleans_expired_rows(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn sweeper_cleans_expired_rows_postgres() {
    sweeper_cleans_expired_rows(TestDb::postgres().await).await;
}

api_test!(
    a_fresh_qr_login_may_set_a_forgotten_password,
    test_config(),
    async |s: &TestServer| {
        // The phone stays signed in; the password is forgotten on the desktop.
        let phone = s.register("forgot01", "password-123").await;
        let reset = json!({"old_password": "", "new_password": "new-password-456"});
        // A password session must give the old password.
        let (status, body) = s.post(CHANGE_PASSWORD, Some(&phone), reset.clone()).await;
        assert_error(status, &body, 400, "old_password_required");
        assert!(body["message"].as_str().unwrap().contains("扫码登录"));
        // Scanned with the phone, the desktop may set a new one without the old.
        let id = new_qr(s, DESKTOP).await;
        let (status, body) = confirm(s, &id, &phone, PHONE).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let desktop = collect(s, &id).await;
        let (status, body) = s.post(CHANGE_PASSWORD, Some(&desktop), reset).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = s
            .post(
                LOGIN,
                None,
                json!({"username": "forgot01", "password": "new-password-456"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
);

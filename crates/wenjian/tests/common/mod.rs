//! What the process-level tests share: children killed at the end, a free port, and an
//! API-only `wenjian serve` with a registered user.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Children are killed when the test ends, pass or fail.
pub struct Processes(pub Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `wenjian ARGS` on a data folder and database, with a job lease of 2 seconds (a killed
/// worker's job is claimed again soon), quiet but for warnings.
pub fn wenjian(data: &Path, db_url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wenjian"));
    cmd.args(args)
        .env("WENJIAN_DATA_DIR", data)
        .env("WENJIAN_DATABASE_URL", db_url)
        .env("WENJIAN_JOB_LEASE_SECONDS", "2")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    cmd
}

/// Polls `probe` every 10 ms until `done` holds of what it returns; fails after `seconds`.
pub async fn wait_for<F, Fut>(
    what: &str,
    seconds: u64,
    mut probe: F,
    done: impl Fn(&Value) -> bool,
) -> Value
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let value = probe().await;
        if done(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "waiting for {what}: {value}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A worker SIGKILLed in the middle of a task: `worker()` is started and killed as soon as the
/// record `probe` reads says "running" (no shutdown, no cleanup: its lease just stops being
/// renewed); the task must still be running then. Another worker (kept in `procs`) is started
/// and the record is returned once the task has ended.
pub async fn kill_worker_mid_task<F, Fut>(
    worker: impl Fn() -> Command,
    procs: &mut Processes,
    probe: F,
    what: &str,
) -> Value
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let mut first = worker().spawn().unwrap();
    wait_for(
        &format!("the first worker to start {what}"),
        180,
        &probe,
        |r| r["status"] == json!("running"),
    )
    .await;
    first.kill().unwrap();
    first.wait().unwrap();
    let after_kill = probe().await;
    assert_eq!(
        after_kill["status"],
        json!("running"),
        "the worker was killed in the middle of {what}: {after_kill}"
    );
    procs.0.push(worker().spawn().unwrap());
    wait_for("the restarted worker to finish", 180, &probe, |r| {
        matches!(r["status"].as_str(), Some("done" | "failed" | "cancelled"))
    })
    .await
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A signed-in user of a running server.
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

impl Api {
    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.send(path, body, None).await
    }

    /// A paid call, sent with the confirmation every paid journey sends (from the balance).
    pub async fn pay(&self, path: &str, body: Value) -> Value {
        self.send(path, body, Some(("X-Confirmed-Payment", "balance")))
            .await
    }

    async fn send(&self, path: &str, body: Value, header: Option<(&str, &str)>) -> Value {
        let mut request = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body);
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        request.send().await.unwrap().json().await.unwrap()
    }

    /// The ledger's movements in fen, newest first.
    pub async fn movements(&self) -> Vec<i64> {
        self.account().await["ledger"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["deltaFen"].as_i64().unwrap())
            .collect()
    }

    /// The account with its ledger (newest first).
    pub async fn account(&self) -> Value {
        self.http
            .get(format!("{}/api/base/account_info_api/account", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()["result"]
            .clone()
    }
}

/// Starts `serve` (a `wenjian serve` command) as an API-only node on a free port, waits until it
/// answers, and registers `username`.
pub async fn api_only_server(mut serve: Command, procs: &mut Processes, username: &str) -> Api {
    let port = free_port();
    procs.0.push(
        serve
            .env("WENJIAN_LISTEN", format!("127.0.0.1:{port}"))
            .env("WENJIAN_WORKERS_PER_QUEUE", "0")
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
    let registered: Value = http
        .post(format!("{base}/api/base/login_api/f/register"))
        .json(&json!({"username": username, "password": "password-123"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    Api {
        http,
        base,
        token: registered["result"]["access_token"]
            .as_str()
            .unwrap()
            .to_string(),
    }
}

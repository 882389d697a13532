//! What the process-level tests share: children killed at the end, a free port, and an
//! API-only `wenjian serve` with a registered user.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::process::{Child, Command};
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
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
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

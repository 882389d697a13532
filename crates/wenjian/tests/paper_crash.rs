//! A worker killed with SIGKILL while writing a paper: the next worker resumes after the last
//! finished section (the finished ones are not asked for again), the paper completes, and the
//! user is charged exactly once. Real processes (`wenjian serve` without workers, then
//! `wenjian worker`), on SQLite and PostgreSQL; the writer is a local server speaking the
//! OpenAI chat-completions protocol (a third party to us), which stalls on the third section
//! the first time it is asked, so the kill lands mid-paper at a known point.

use axum::Router;
use axum::routing::post;
mod common;

use common::{Api, Processes, api_only_server, wenjian};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store::testing::TestDb;

/// Headings of the section requests the writer received, in order.
type Asked = Arc<Mutex<Vec<String>>>;

fn answer(body: &Value, asked: &Asked) -> Option<String> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = |role: &str| {
        messages
            .iter()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let (system, user) = (text("system"), text("user"));
    if system.contains("拟定各章的标题") {
        return Some("绪论\n需求分析\n系统设计\n结论与展望".into());
    }
    if system.contains("拟定节标题") {
        let chapter = user
            .lines()
            .find_map(|l| l.strip_prefix("这一章："))
            .and_then(|l| l.split_once(' ').map(|(_, t)| t.to_string()))
            .unwrap_or_default();
        return Some(format!("{chapter}的现状\n{chapter}的问题"));
    }
    if let Some(rest) = user.split("请撰写“").nth(1) {
        let heading = rest.split('”').next().unwrap_or("").to_string();
        let mut asked = asked.lock().unwrap();
        asked.push(heading.clone());
        // The third section, the first time: no answer (the worker is killed meanwhile).
        if asked.len() == 3 {
            return None;
        }
        return Some(format!(
            "本节论述{heading}。{}",
            "系统以读者与馆藏为中心组织数据，流程清晰，便于维护。".repeat(12)
        ));
    }
    if system.contains("中文摘要") {
        return Some("本文研究高校图书馆管理系统，完成需求分析与总体设计。".repeat(3));
    }
    Some("This thesis designs a library management system.".into())
}

async fn fake_writer(asked: Asked) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |body: String| {
            let asked = asked.clone();
            async move {
                let body: Value = serde_json::from_str(&body).unwrap();
                let Some(text) = answer(&body, &asked) else {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    return axum::Json(json!({})).into_response();
                };
                let event = json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
                let stop = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
                if body["stream"] == json!(true) {
                    (
                        [("content-type", "text/event-stream")],
                        format!("data: {event}\n\ndata: {stop}\n\ndata: [DONE]\n\n"),
                    )
                        .into_response()
                } else {
                    axum::Json(json!({
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
                    }))
                    .into_response()
                }
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

use axum::response::IntoResponse;

fn command(data: &Path, db_url: &str, writer: &str, args: &[&str]) -> Command {
    let mut cmd = wenjian(data, db_url, args);
    cmd.env("WENJIAN_PARAPHRASE_LAYER", "false")
        .env("WENJIAN_LLM_BASE_URL", writer)
        .env("WENJIAN_LLM_MODEL", "fake-writer")
        .env("WENJIAN_LLM_TIMEOUT_SECONDS", "600")
        .env("WENJIAN_PAPER_PROVIDER", "endpoint");
    cmd
}

async fn wait_for(api: &Api, id: i64, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let detail = api
            .post(
                "/api/base/ai_paper_info_api/load_by_id",
                json!({ "id": id }),
            )
            .await["result"]
            .clone();
        if done(&detail["record"]) {
            return detail;
        }
        assert!(Instant::now() < deadline, "waiting for {what}: {detail}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn worker_killed_mid_paper(db: TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let asked: Asked = Arc::default();
    let writer = fake_writer(asked.clone()).await;
    let mut procs = Processes(vec![]);
    let api = api_only_server(
        command(&data, &db.url, &writer, &["serve"]),
        &mut procs,
        "papercrash",
    )
    .await;
    let user = db.store.user_by_login("papercrash").await.unwrap();
    db.store
        .operator_credit(user.id, 10_000, 0, "测试充值")
        .await
        .unwrap();

    let started = api
        .post(
            "/api/base/paper_info_api/paper_submit",
            json!({"title": "高校图书馆管理系统的设计与实现", "field": "计算机科学与技术", "words": 3000}),
        )
        .await;
    let id = started["result"]["record"]["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("{started}"));
    let mut first = command(&data, &db.url, &writer, &["worker"])
        .spawn()
        .unwrap();
    wait_for(&api, id, "the outline", |r| {
        r["state"] == json!("outline_ready")
    })
    .await;
    let committed = api
        .post(
            "/api/base/ai_paper_info_api/commit_paper",
            json!({ "id": id }),
        )
        .await;
    let price = committed["result"]["price"]["priceFen"]
        .as_i64()
        .unwrap_or_else(|| panic!("{committed}"));
    let stalled = wait_for(
        &api,
        id,
        "two sections stored and the third asked for",
        |r| r["sectionsDone"] == json!(2),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while asked.lock().unwrap().len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the third section was never asked for"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill().unwrap(); // SIGKILL mid-paper: the lease just stops being renewed.
    first.wait().unwrap();
    assert_eq!(stalled["record"]["state"], json!("writing"));

    procs.0.push(
        command(&data, &db.url, &writer, &["worker"])
            .spawn()
            .unwrap(),
    );
    let done = wait_for(&api, id, "the restarted worker to finish", |r| {
        !matches!(r["state"].as_str(), Some("writing"))
    })
    .await;
    assert_eq!(done["record"]["state"], json!("done"), "{done}");
    let total = done["record"]["sectionsTotal"].as_u64().unwrap() as usize;
    assert_eq!(
        done["record"]["sectionsDone"].as_u64().unwrap() as usize,
        total
    );
    // Sections 1 and 2 were written once; the third twice (the killed attempt); then the rest.
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), total + 1, "{asked:?}");
    assert_eq!(asked[2], asked[3], "{asked:?}");
    let mut unique = asked.clone();
    unique.dedup();
    assert_eq!(unique.len(), total, "{asked:?}");

    // Charged exactly once.
    let account = api.account().await;
    assert_eq!(
        account["balanceFen"],
        json!(10_000 - price + done["record"]["refundedFen"].as_i64().unwrap()),
        "{account}"
    );
    let movements = api.movements().await;
    // The missing share of a short paper comes back with the completion (once, whatever the
    // attempts): the ledger is the credit, the one charge, the one refund.
    let refunded = done["record"]["refundedFen"].as_i64().unwrap();
    assert!(refunded > 0, "{done}");
    assert_eq!(movements, vec![refunded, -price, 10_000], "{account}");
    drop(procs);
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_paper_sqlite() {
    worker_killed_mid_paper(TestDb::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_paper_postgres() {
    worker_killed_mid_paper(TestDb::postgres().await).await;
}

//! What an operator and a load balancer read: `/api/health` names each dependency and says when
//! work waits with no worker alive; `/api/metrics` gives queue depth, waiting age, live workers
//! and task latency in the Prometheus text format, behind `metrics_token` when one is set.
//! On SQLite and PostgreSQL, with files in the database.

#[macro_use]
mod common;

use common::*;
use server::worker::{TaskContext, TaskFuture, TaskHandler, WorkerPool};
use std::sync::Arc;
use std::time::Duration;

fn operations_config() -> Config {
    Config {
        files_backend: "database".into(),
        ..test_config()
    }
}

/// A paid check task of `user`, waiting in the `check` queue (no worker runs in the test server).
async fn waiting_check(s: &TestServer, user: i64) -> i64 {
    let store = s.store();
    store.operator_credit(user, 1_000, 0, "测试").await.unwrap();
    let task = store::testing::queued_task(store, user, "check", "论文", "{}", 100).await;
    task.id
}

async fn metrics(s: &TestServer, token: Option<&str>) -> (StatusCode, String) {
    let mut req = s.http.get(format!("{}/api/metrics", s.base));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    (status, res.text().await.unwrap())
}

api_test!(
    health_and_metrics_follow_the_queue_and_the_workers,
    operations_config(),
    async |s: &TestServer| {
        let (status, health) = s.get("/api/health", None).await;
        assert_eq!(status, StatusCode::OK, "{health}");
        let health = &health["result"];
        assert_eq!(health["status"], json!("ok"));
        assert_eq!(health["files"], json!("database"));
        let names: Vec<&str> = health["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["database", "files", "workers"]);
        assert!(
            health["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["ok"] == json!(true))
        );

        // A paid task waits and no worker is alive: the node still serves, work does not.
        let user = s
            .store()
            .create_user("ops1", "password-1", false)
            .await
            .unwrap()
            .id;
        waiting_check(s, user).await;
        let (status, health) = s.get("/api/health", None).await;
        assert_eq!(status, StatusCode::OK);
        let health = &health["result"];
        assert_eq!(health["status"], json!("degraded"), "{health}");
        assert_eq!(health["liveWorkers"], json!(0));
        assert_eq!(health["queues"][0]["queue"], json!("check"));
        assert_eq!(health["queues"][0]["waiting"], json!(1));
        let (status, text) = metrics(s, None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            text.contains("wenjian_queue_jobs{queue=\"check\",state=\"waiting\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("wenjian_workers_live 0\n"), "{text}");

        // A worker on another host reports in: work is being done again.
        s.store()
            .worker_seen("other-host-4242", "other-host", "check,aigc", 2)
            .await
            .unwrap();
        let (_, health) = s.get("/api/health", None).await;
        assert_eq!(health["result"]["status"], json!("ok"));
        assert_eq!(health["result"]["liveWorkers"], json!(1));
        let (_, text) = metrics(s, None).await;
        assert!(text.contains("wenjian_workers_live 1\n"), "{text}");
        assert!(
            text.contains("wenjian_worker_heartbeat_age_seconds{worker=\"other-host-4242\",host=\"other-host\"}"),
            "{text}"
        );

        // A task that ended shows in the latency summary.
        let ended = s
            .store()
            .create_task(user, "aigc", "检测", "{}")
            .await
            .unwrap();
        s.store().cancel_task(ended.id, user).await.unwrap();
        let (_, text) = metrics(s, None).await;
        assert!(
            text.contains("wenjian_tasks_ended{kind=\"aigc\",status=\"cancelled\"} 1\n"),
            "{text}"
        );
    }
);

api_test!(
    metrics_need_the_token_when_one_is_set,
    Config {
        metrics_token: Some("scrape-secret-1".into()),
        ..operations_config()
    },
    async |s: &TestServer| {
        let (status, _) = metrics(s, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _) = metrics(s, Some("scrape-secret-2")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, text) = metrics(s, Some("scrape-secret-1")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text.contains("# TYPE wenjian_queue_jobs gauge"), "{text}");
    }
);

struct Idle;

impl TaskHandler for Idle {
    fn kind(&self) -> &'static str {
        "idle"
    }

    fn run(&self, _ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async { Ok("{}".to_string().into()) })
    }
}

api_test!(
    a_worker_process_is_seen_while_it_runs_and_gone_when_it_stops,
    operations_config(),
    async |s: &TestServer| {
        let running = WorkerPool::new(s.store().clone(), vec![Arc::new(Idle)])
            .with_lease(Duration::from_secs(5), Duration::from_millis(20))
            .spawn(1);
        let mut seen = Vec::new();
        for _ in 0..100 {
            seen = s.store().live_workers(0).await.unwrap();
            if !seen.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].queues, "idle");
        running.stop().await;
        assert!(s.store().live_workers(0).await.unwrap().is_empty());
    }
);

#[tokio::test]
async fn health_is_503_when_the_file_folder_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the folder should be: nothing can be written under it.
    let blocked = dir.path().join("files");
    std::fs::write(&blocked, b"not a folder").unwrap();
    let s = TestServer::start(
        TestDb::sqlite().await,
        Config {
            files_dir: Some(blocked),
            ..test_config()
        },
    )
    .await;
    let (status, body) = s.get("/api/health", None).await;
    assert_error(status, &body, 503, "dependency_unavailable");
    assert!(
        body["message"].as_str().unwrap().contains("无法写入"),
        "{body}"
    );
    s.stop().await;
}

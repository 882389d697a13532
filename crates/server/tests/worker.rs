//! The worker pool against the real store (SQLite and PostgreSQL): a check task submitted by a
//! user is claimed, run through simcheck and stored as done; a failing handler ends the task
//! failed and refunded.

use server::api::check::task::{CheckHandler, CheckInput};
use server::worker::{TaskContext, TaskError, TaskFuture, TaskHandler, WorkerPool};
use simcheck::{EmbeddedLibrary, FingerprintParams, Library, NewDoc};
use std::sync::Arc;
use std::time::Duration;
use store::testing::TestDb;
use store::{Charge, Store, TaskStatus};

const SOURCE: &str = "城市轨道交通的客流预测是线网规划与运营组织的基础工作本文提出一种融合时空特征的组合预测模型并在多个站点进行了验证结果表明该模型的预测精度明显优于传统方法";

async fn wait_final(store: &Store, task: i64, user: i64) -> store::Task {
    for _ in 0..200 {
        let t = store.task(task, user).await.unwrap();
        if t.status.is_final() {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {task} did not finish");
}

async fn check_task_runs_to_done(db: TestDb) {
    let store = db.store.clone();
    let dir = tempfile::tempdir().unwrap();
    let library =
        Arc::new(EmbeddedLibrary::open(dir.path(), FingerprintParams::default()).unwrap());
    let handle = library.clone();
    library
        .add(vec![NewDoc::public("客流预测", SOURCE)])
        .await
        .unwrap();
    let user = store
        .create_user("worker_user", "password-1", false)
        .await
        .unwrap()
        .id;
    store.operator_credit(user, 1000, 0, "测试").await.unwrap();
    let copied: String = SOURCE.chars().take(30).collect();
    let text = format!("本文是作者的原创研究内容。\n{copied}\n");
    let input = serde_json::to_string(&CheckInput {
        text,
        min_span: 13,
        exclude_bibliography: true,
        owner: Some(user),
        add_to_private_library: true,
        title: "我的初稿".into(),
        headings: Vec::new(),
    })
    .unwrap();
    let task = store
        .create_task(user, "check", "论文", &input)
        .await
        .unwrap();
    store
        .submit_task(
            task.id,
            user,
            "check",
            &Charge {
                fen: 300,
                free_checks: 0,
                grant: None,
                reason: "查重".into(),
            },
            3,
        )
        .await
        .unwrap();

    let pool = WorkerPool::new(
        store.clone(),
        vec![Arc::new(CheckHandler::new(library, None))],
    )
    .with_lease(Duration::from_secs(5), Duration::from_millis(20));
    let running = pool.spawn(1);
    let done = wait_final(&store, task.id, user).await;
    assert_eq!(done.status, TaskStatus::Done, "{:?}", done.error);
    let report: serde_json::Value = serde_json::from_str(done.result.as_deref().unwrap()).unwrap();
    assert_eq!(report["copied_chars"], 30);
    assert_eq!(report["sources"][0]["title"], "客流预测");
    assert_eq!(store.account(user).await.unwrap().balance_fen, 700);
    // The owner asked to keep the draft: it is in their private library, not the public one.
    let docs = handle.list().await.unwrap();
    let kept = docs
        .iter()
        .find(|d| d.title == "我的初稿")
        .expect("draft kept");
    assert_eq!(
        (kept.scope, kept.owner),
        (simcheck::Scope::Private, Some(user))
    );
    // …and the report records it, so the report screen can say so.
    assert_eq!(
        report[server::api::check::task::PRIVATE_LIBRARY_DOC].as_u64(),
        Some(kept.id)
    );
    running.stop().await;
    db.cleanup().await;
}

struct Broken;

impl TaskHandler for Broken {
    fn kind(&self) -> &'static str {
        "broken"
    }

    fn run(&self, _ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async { Err(TaskError::permanent("文档无法解析")) })
    }
}

async fn failing_task_is_refunded(db: TestDb) {
    let store = db.store.clone();
    let user = store
        .create_user("worker_user2", "password-1", false)
        .await
        .unwrap()
        .id;
    store.operator_credit(user, 1000, 0, "测试").await.unwrap();
    let task = store
        .create_task(user, "broken", "坏文档", "{}")
        .await
        .unwrap();
    store
        .submit_task(
            task.id,
            user,
            "broken",
            &Charge {
                fen: 300,
                free_checks: 0,
                grant: None,
                reason: "查重".into(),
            },
            3,
        )
        .await
        .unwrap();
    let pool = WorkerPool::new(store.clone(), vec![Arc::new(Broken)])
        .with_lease(Duration::from_secs(5), Duration::from_millis(20));
    let running = pool.spawn(1);
    let failed = wait_final(&store, task.id, user).await;
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some("文档无法解析"));
    assert_eq!(store.account(user).await.unwrap().balance_fen, 1000);
    running.stop().await;
    db.cleanup().await;
}

#[tokio::test]
async fn check_task_runs_to_done_sqlite() {
    check_task_runs_to_done(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn check_task_runs_to_done_postgres() {
    check_task_runs_to_done(TestDb::postgres().await).await;
}

#[tokio::test]
async fn failing_task_is_refunded_sqlite() {
    failing_task_is_refunded(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn failing_task_is_refunded_postgres() {
    failing_task_is_refunded(TestDb::postgres().await).await;
}

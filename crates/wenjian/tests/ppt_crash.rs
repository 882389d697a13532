//! A worker killed with SIGKILL while it makes a paid deck (答辩PPT): after its lease runs out
//! another worker makes it again from the start, the deck is done, its file and pictures are
//! there, and the user paid once. Real processes (`wenjian serve` with no workers, then
//! `wenjian worker`), on SQLite and PostgreSQL.

mod common;

use common::{Api, Processes, api_only_server, kill_worker_mid_task, wenjian};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use store::testing::TestDb;

fn command(data: &Path, db_url: &str, args: &[&str]) -> Command {
    let mut cmd = wenjian(data, db_url, args);
    // No model: the deck is the paper's sentences, and the task's longest step is LibreOffice
    // drawing its previews — the step it is killed in.
    cmd.env("WENJIAN_MODELS_DIR", data.join("no-models"));
    cmd
}

const OUTLINE: &str = "1 绪论\n道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。传统的人工巡检效率低且存在安全隐患。\n\
2 研究方法\n2.1 总体框架\n本文提出的模型以YOLOv5s为基础，在主干网络末端引入坐标注意力模块。\n\
2.2 数据集构建\n本文使用车载相机在城市道路采集图像，共得到3200张包含裂缝的图像。\n\
2.3 训练策略\n模型训练采用随机梯度下降优化器，初始学习率为0.01，共训练300轮。\n\
3 实验结果与分析\n实验结果表明，改进模型的平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点。\n\
4 结论与展望\n本文提出的方法能够满足道路巡检的实时性要求。未来将扩充不同天气条件下的样本。";

async fn record(api: &Api, id: i64) -> Value {
    api.post("/api/base/ai_ppt_info_api/load_by_id", json!({ "id": id }))
        .await["result"]["record"]
        .clone()
}

async fn worker_killed_mid_deck(db: TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut procs = Processes(vec![]);
    let api = api_only_server(command(&data, &db.url, &["serve"]), &mut procs, "pptcrash").await;
    let user = db.store.user_by_login("pptcrash").await.unwrap();
    db.store
        .operator_credit(user.id, 5_000, 0, "测试充值")
        .await
        .unwrap();

    let draft = api
        .post(
            "/api/base/ai_ppt_info_api/save_or_update",
            json!({"title": "基于改进YOLOv5的道路裂缝检测方法研究", "source": "outline",
                   "outline": OUTLINE, "kind": "defence", "slides": 10, "school": "华东理工学院"}),
        )
        .await;
    let id = draft["result"]["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("{draft}"));
    let submitted = api
        .pay(
            "/api/base/ai_ppt_info_api/submit_by_id",
            json!({"id": id, "template": "china-red"}),
        )
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
        "the deck",
    )
    .await;
    assert_eq!(done["status"], json!("done"), "{done}");
    assert_eq!(done["chargedFen"], json!(1990), "{done}");

    // The deck is there, as a file PowerPoint opens (a zip), with its pictures.
    let pptx = api
        .http
        .post(format!("{}/api/base/ai_ppt_info_api/download", api.base))
        .bearer_auth(&api.token)
        .json(&json!({"id": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(pptx.status(), reqwest::StatusCode::OK);
    assert!(pptx.bytes().await.unwrap().starts_with(b"PK"));
    let pictures = api
        .post(
            "/api/base/ai_ppt_info_api/preview_pictures",
            json!({ "id": id }),
        )
        .await;
    assert_eq!(
        pictures["result"]["pictures"].as_array().map(Vec::len),
        Some(3),
        "{pictures}"
    );

    // Paid once, never refunded.
    let account = api.account().await;
    assert_eq!(account["balanceFen"], json!(5_000 - 1990), "{account}");
    let movements = api.movements().await;
    assert_eq!(movements, vec![-1990, 5_000], "{account}");
    drop(procs);
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_deck_sqlite() {
    worker_killed_mid_deck(TestDb::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_deck_postgres() {
    worker_killed_mid_deck(TestDb::postgres().await).await;
}

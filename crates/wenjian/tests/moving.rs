//! Moving house: `wenjian migrate --to postgres://… [--files-to s3]` moves an embedded
//! deployment — users, ledgers, tasks with their reports, kept files, the library — into an
//! empty PostgreSQL database (and the files into the database or an S3 bucket); counts,
//! balances, a report's figures, a file's bytes and the library's ids match, and a check
//! against the moved library still finds its source.

use simcheck::Library;
use std::process::Command;

const SOURCE: &str = "本研究采用问卷调查与深度访谈相结合的方法考察了高校学生的课外阅读习惯及其影响因素结果表明阅读时间与学业成绩存在显著的正相关关系";
const OTHER: &str = "城市轨道交通的客流预测是线网规划与运营组织的基础工作本文提出一种融合时空特征的组合预测模型并在多个站点进行了验证";

fn wenjian(data: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wenjian"))
        .args(args)
        .env("WENJIAN_DATA_DIR", data)
        .env_remove("WENJIAN_DATABASE_URL")
        .env_remove("WENJIAN_LIBRARY_BACKEND")
        .env_remove("WENJIAN_FILES_BACKEND")
        .envs(env.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .output()
        .expect("run wenjian");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_deployment_moves_into_postgres() {
    moves(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_deployment_moves_into_postgres_and_an_object_store() {
    store::testing::test_bucket().await;
    moves(Some(store::testing::test_bucket_settings())).await;
}

/// The `[s3]` settings as `WENJIAN_S3__…` variables (how a deployment keeps the secret out of
/// its configuration file).
fn bucket_env(bucket: &store::BucketSettings) -> Vec<(&'static str, String)> {
    vec![
        ("WENJIAN_S3__ENDPOINT", bucket.endpoint.clone()),
        ("WENJIAN_S3__BUCKET", bucket.bucket.clone()),
        ("WENJIAN_S3__REGION", bucket.region.clone()),
        ("WENJIAN_S3__ACCESS_KEY_ID", bucket.access_key_id.clone()),
        (
            "WENJIAN_S3__SECRET_ACCESS_KEY",
            bucket.secret_access_key.clone(),
        ),
        ("WENJIAN_S3__PREFIX", bucket.prefix.clone()),
    ]
}

/// Moves a deployment; files into the database, or into `bucket` when given.
async fn moves(bucket: Option<store::BucketSettings>) {
    let s3_env = bucket.as_ref().map(bucket_env).unwrap_or_default();
    let s3_env: Vec<(&str, &str)> = s3_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let files_to = if bucket.is_some() { "s3" } else { "database" };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();

    // The embedded deployment: a library, a user with money, a finished check, a kept upload.
    let jsonl = data.join("docs.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{}\n{}\n",
            serde_json::json!({"title": "阅读习惯研究", "author": "甲", "year": 2021, "text": SOURCE}),
            serde_json::json!({"title": "客流预测模型", "text": OTHER}),
        ),
    )
    .unwrap();
    let (ok, out) = wenjian(data, &[], &["corpus", "import", jsonl.to_str().unwrap()]);
    assert!(ok, "{out}");
    let (ok, out) = wenjian(
        data,
        &[("WENJIAN_USER_PASSWORD", "password-123")],
        &["user", "create", "movinguser"],
    );
    assert!(ok, "{out}");
    let (ok, out) = wenjian(
        data,
        &[],
        &[
            "account",
            "credit",
            "movinguser",
            "--yuan",
            "12.5",
            "--free-checks",
            "2",
        ],
    );
    assert!(ok, "{out}");

    let url = format!("sqlite://{}?mode=rwc", data.join("wenjian.db").display());
    let source = store::Store::open(&url).await.unwrap();
    let user = source.user_by_login("movinguser").await.unwrap().id;
    let task =
        store::testing::queued_task(&source, user, "check", "毕业论文", r#"{"text":"…"}"#, 300)
            .await;
    let report = r#"{"ratio_total":12.34,"spans":[{"start":0,"end":20}]}"#;
    store::testing::finish_next_job(&source, "check", report).await;
    let upload: Vec<u8> = (0..5_000u32).map(|i| (i % 251) as u8).collect();
    let key = format!("check/{}/论文.docx", task.id);
    store::FileStore::Folder(data.join("files"))
        .put(&key, &upload)
        .await
        .unwrap();
    let balance = source.account(user).await.unwrap();
    let counts_before = source.table_counts().await.unwrap();
    source.close().await;

    // Move into a new PostgreSQL database.
    let target = store::testing::TestDb::postgres().await;
    let (ok, out) = wenjian(
        data,
        &s3_env,
        &["migrate", "--to", &target.url, "--files-to", files_to],
    );
    assert!(ok, "{out}");
    assert!(out.contains("核对通过"), "{out}");
    assert!(
        out.contains(&format!("WENJIAN_FILES_BACKEND={files_to}")),
        "{out}"
    );

    let moved = &target.store;
    let moved_user = moved.user_by_login("movinguser").await.unwrap();
    assert_eq!(moved_user.id, user);
    assert_eq!(moved.account(user).await.unwrap(), balance);
    assert_eq!(
        moved.ledger(user, 10).await.unwrap().len(),
        2,
        "the credit and the check's charge"
    );
    let moved_task = moved.task(task.id, user).await.unwrap();
    assert_eq!(moved_task.result.as_deref(), Some(report));
    let moved_files = match &bucket {
        Some(settings) => store::FileStore::Object(store::Bucket::open(settings).unwrap()),
        None => store::FileStore::Database(moved.clone()),
    };
    assert_eq!(moved_files.get(&key, 1 << 20).await.unwrap(), Some(upload));
    if bucket.is_some() {
        // The files went to the bucket only.
        assert!(
            store::FileStore::Database(moved.clone())
                .list("")
                .await
                .unwrap()
                .is_empty()
        );
    }
    let library = store::SqlLibrary::new(moved.clone(), simcheck::FingerprintParams::default());
    let titles: Vec<(u64, String)> = library
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.title))
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(titles.iter().any(|(_, t)| t == "阅读习惯研究"));
    let counts_after = moved.table_counts().await.unwrap();
    for before in counts_before.iter().filter(|t| {
        !["files", "library_docs", "library_runs", "library_blocks"].contains(&t.table.as_str())
    }) {
        let after = counts_after
            .iter()
            .find(|a| a.table == before.table)
            .unwrap();
        assert_eq!(after.rows, before.rows, "{}", before.table);
    }

    // New rows take ids after the moved ones.
    let next = moved
        .create_task(user, "check", "第二篇", "{}")
        .await
        .unwrap();
    assert!(next.id > task.id);

    // The moved deployment checks against the moved library.
    let paper = data.join("paper.txt");
    std::fs::write(&paper, format!("引言部分是作者自己写的内容。\n{SOURCE}\n")).unwrap();
    let mut moved_env = vec![
        ("WENJIAN_DATABASE_URL", target.url.as_str()),
        ("WENJIAN_LIBRARY_BACKEND", "database"),
        ("WENJIAN_FILES_BACKEND", files_to),
    ];
    moved_env.extend(s3_env.iter().copied());
    let (ok, out) = wenjian(
        data,
        &moved_env,
        &[
            "check",
            paper.to_str().unwrap(),
            "--json",
            "--no-paraphrase",
        ],
    );
    assert!(ok, "{out}");
    assert!(out.contains("阅读习惯研究"), "{out}");

    // A second move into the same database is refused; nothing changes.
    let (ok, out) = wenjian(data, &[], &["migrate", "--to", &target.url]);
    assert!(!ok);
    assert!(out.contains("目标数据库已有用户数据"), "{out}");
    target.cleanup().await;
}

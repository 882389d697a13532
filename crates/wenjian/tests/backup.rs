//! Backups as docs/deploy.md describes them: `pg_dump -Fc` of a PostgreSQL deployment restored
//! with `pg_restore` into a fresh database — users, balances, a kept file and a report that still
//! verifies by its code, and the schema already current for `wenjian migrate`.

use std::process::Command;
use store::{NewSnapshot, Store};

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e} (postgresql-client)"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_dump_restored_into_a_fresh_database_keeps_reports_verifiable() {
    let source = store::testing::TestDb::postgres().await;
    let store = &source.store;
    let user = store
        .create_user("backupuser", "password-1", false)
        .await
        .unwrap()
        .id;
    store
        .operator_credit(user, 4_321, 1, "测试充值")
        .await
        .unwrap();
    let task = store::testing::queued_task(store, user, "check", "毕业论文", "{}", 300).await;
    store::testing::finish_next_job(store, "check", "{}").await;
    let snapshot = store
        .take_report_snapshot(&NewSnapshot {
            task_id: task.id,
            user_id: user,
            kind: "check",
            report_number: "WJ-20261126-0001",
            title: "毕业论文",
            checked_at: 1_764_000_000_000,
            summary: r#"{"ratioTotal":12.3}"#,
        })
        .await
        .unwrap();
    store.issue_report_snapshot(task.id, user).await.unwrap();
    assert!(
        store
            .report_snapshot_by_code(&snapshot.code)
            .await
            .unwrap()
            .is_some()
    );
    let files = store::FileStore::Database(store.clone());
    files
        .put("check/1/论文.docx", b"PK\x03\x04 docx")
        .await
        .unwrap();
    let balance = store.account(user).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("wenjian.dump");
    run(
        "pg_dump",
        &["-Fc", "-f", dump.to_str().unwrap(), &source.url],
    );

    // A fresh, empty database restored from the dump.
    let (base, _) = source.url.rsplit_once('/').unwrap();
    let name = format!("wj_restore_{}", std::process::id());
    let admin = format!("{base}/postgres");
    run(
        "psql",
        &[&admin, "-qc", &format!("DROP DATABASE IF EXISTS {name}")],
    );
    run("psql", &[&admin, "-qc", &format!("CREATE DATABASE {name}")]);
    let restored_url = format!("{base}/{name}");
    run(
        "pg_restore",
        &["--no-owner", "-d", &restored_url, dump.to_str().unwrap()],
    );
    let restored = Store::open(&restored_url).await.expect("schema is current");
    let verified = restored
        .report_snapshot_by_code(&snapshot.code)
        .await
        .unwrap()
        .expect("the report still verifies");
    assert_eq!(verified.report_number, "WJ-20261126-0001");
    assert_eq!(verified.summary, r#"{"ratioTotal":12.3}"#);
    assert_eq!(restored.account(user).await.unwrap(), balance);
    assert_eq!(
        store::FileStore::Database(restored.clone())
            .get("check/1/论文.docx", 1 << 10)
            .await
            .unwrap()
            .as_deref(),
        Some(&b"PK\x03\x04 docx"[..])
    );
    // New rows go on after the restored ones.
    let next = restored
        .create_task(user, "check", "第二篇", "{}")
        .await
        .unwrap();
    assert!(next.id > task.id);
    restored.close().await;
    run(
        "psql",
        &[&admin, "-qc", &format!("DROP DATABASE {name} WITH (FORCE)")],
    );
    source.cleanup().await;
}

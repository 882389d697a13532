//! Throwaway databases for tests: every store test runs once on SQLite and once on PostgreSQL.
//! PostgreSQL is reached at `WENJIAN_TEST_POSTGRES_URL` (default: local server, trust auth); each
//! test gets a database of its own, named `wj_test_*`, dropped when the test finishes.

use crate::Store;
use sqlx::{AnyConnection, Connection, Executor};
use std::sync::atomic::{AtomicU32, Ordering};

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

static COUNTER: AtomicU32 = AtomicU32::new(0);

pub struct TestDb {
    pub store: Store,
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    File(std::path::PathBuf),
    Database { admin_url: String, name: String },
}

fn unique_name() -> String {
    format!(
        "wj_test_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        crate::now_ms() % 1_000_000
    )
}

impl TestDb {
    pub async fn sqlite() -> Self {
        let dir = std::env::temp_dir().join("wenjian-tests");
        std::fs::create_dir_all(&dir).expect("create temp dir");
        let path = dir.join(format!("{}.db", unique_name()));
        let url = format!("sqlite://{}?mode=rwc", path.display());
        let store = Store::open(&url).await.expect("open sqlite test store");
        TestDb {
            store,
            url,
            cleanup: Cleanup::File(path),
        }
    }

    pub async fn postgres() -> Self {
        sqlx::any::install_default_drivers();
        let admin_url =
            std::env::var("WENJIAN_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_ADMIN_URL.into());
        let name = unique_name();
        let mut admin = AnyConnection::connect(&admin_url).await.unwrap_or_else(|e| {
            panic!("PostgreSQL is needed for store tests at {admin_url}: {e} (scripts/test.sh starts it)")
        });
        admin
            .execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .expect("create test database");
        admin.close().await.ok();
        let base = admin_url
            .rsplit_once('/')
            .map(|(b, _)| b)
            .unwrap_or(&admin_url);
        let url = format!("{base}/{name}");
        let store = Store::open(&url).await.expect("open postgres test store");
        TestDb {
            store,
            url,
            cleanup: Cleanup::Database { admin_url, name },
        }
    }

    pub async fn cleanup(self) {
        self.store.close().await;
        match self.cleanup {
            Cleanup::File(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
            }
            Cleanup::Database { admin_url, name } => {
                if let Ok(mut admin) = AnyConnection::connect(&admin_url).await {
                    let _ = admin
                        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
                        .await;
                }
            }
        }
    }
}

/// Declares a test that runs on both backends:
/// `store_test!(name, |store: Store| async move { ... });`
#[macro_export]
macro_rules! store_test {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                let db = $crate::testing::TestDb::sqlite().await;
                ($body)(db.store.clone()).await;
                db.cleanup().await;
            }

            #[tokio::test]
            async fn postgres() {
                let db = $crate::testing::TestDb::postgres().await;
                ($body)(db.store.clone()).await;
                db.cleanup().await;
            }
        }
    };
}

/// A task of `user_id` paid with `fen` from the balance and queued on the `kind` queue, as a
/// submission leaves it: for tests and benchmarks that need queued or finished work.
pub async fn queued_task(
    store: &Store,
    user_id: i64,
    kind: &str,
    title: &str,
    input: &str,
    fen: i64,
) -> crate::Task {
    let task = store
        .create_task(user_id, kind, title, input)
        .await
        .expect("create task");
    store
        .submit_task(
            task.id,
            user_id,
            kind,
            &crate::Charge {
                fen,
                free_checks: 0,
                grant: None,
                reason: title.into(),
            },
            3,
        )
        .await
        .expect("submit task")
}

/// Claims the next job of the `kind` queue and completes it with `result`, as a worker would;
/// returns the finished task's id.
pub async fn finish_next_job(store: &Store, kind: &str, result: &str) -> i64 {
    let job = store
        .claim_job(kind, "test-worker", 60_000)
        .await
        .expect("claim")
        .expect("a job waits");
    assert!(
        store
            .complete_job(job.job_id, "test-worker", result)
            .await
            .expect("complete")
    );
    job.task_id
}

/// The S3-compatible test server's address (`WENJIAN_TEST_S3_ENDPOINT`; default: the Garage that
/// `scripts/lib.sh ensure_garage` starts on this machine).
const DEFAULT_S3_ENDPOINT: &str = "http://127.0.0.1:3900";
/// The test key `ensure_garage` imports (test-only credentials of a server on loopback).
pub const TEST_S3_KEY_ID: &str = "GK0000000000000000000000a1";
pub const TEST_S3_SECRET: &str = "5e3f0c8d2b7a41e69c0d1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e";
pub const TEST_S3_BUCKET: &str = "wenjian-test";
pub const TEST_S3_REGION: &str = "garage";

/// Settings for a folder of its own in the test bucket: tests never see each other's files.
pub fn test_bucket_settings() -> crate::BucketSettings {
    crate::BucketSettings {
        endpoint: std::env::var("WENJIAN_TEST_S3_ENDPOINT")
            .unwrap_or_else(|_| DEFAULT_S3_ENDPOINT.into()),
        bucket: TEST_S3_BUCKET.into(),
        region: TEST_S3_REGION.into(),
        access_key_id: TEST_S3_KEY_ID.into(),
        secret_access_key: TEST_S3_SECRET.into(),
        prefix: format!("t/{}", unique_name()),
        virtual_hosted_style: false,
    }
}

/// A bucket folder of its own on the test object store, checked to answer.
pub async fn test_bucket() -> crate::Bucket {
    let settings = test_bucket_settings();
    let bucket = crate::Bucket::open(&settings).expect("test bucket settings");
    bucket.ping().await.unwrap_or_else(|e| {
        panic!(
            "an S3-compatible store is needed at {} for file tests: {e} \
             (scripts/test.sh starts one: bash -c 'source scripts/lib.sh; ensure_garage')",
            settings.endpoint
        )
    });
    bucket
}

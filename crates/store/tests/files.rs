//! The file store behaves the same on every backend: a folder, the database on SQLite and on
//! PostgreSQL, and a bucket of an S3-compatible store (the Garage server the scripts start).

use store::{FileStore, StoreError, StoredFile, store_test};

/// Everything callers rely on, run against one backend.
async fn behaves_like_a_file_store(files: FileStore) {
    files.ping().await.expect("ping");
    assert_eq!(files.get("check/1/论文.docx", 1 << 20).await.unwrap(), None);

    // Health checks and writers in flight at once never trip over each other's temporary files.
    let mut in_flight = tokio::task::JoinSet::new();
    for n in 0..8u8 {
        let pinger = files.clone();
        in_flight.spawn(async move { pinger.ping().await });
        let writer = files.clone();
        in_flight.spawn(async move { writer.put("check/9/same.txt", &[n; 64]).await });
    }
    while let Some(outcome) = in_flight.join_next().await {
        outcome.unwrap().expect("concurrent ping or put");
    }
    let last = files
        .get("check/9/same.txt", 1 << 10)
        .await
        .unwrap()
        .unwrap();
    assert!(
        last.len() == 64 && last.iter().all(|b| *b == last[0]),
        "torn write"
    );
    files.remove_under("check/9").await.unwrap();

    // Any bytes come back unchanged, and a second put replaces the first.
    let binary: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    files.put("check/1/论文.docx", &binary).await.unwrap();
    assert_eq!(
        files.get("check/1/论文.docx", 1 << 20).await.unwrap(),
        Some(binary.clone())
    );
    files.put("check/1/论文.docx", b"second").await.unwrap();
    assert_eq!(
        files
            .get("check/1/论文.docx", 1 << 20)
            .await
            .unwrap()
            .as_deref(),
        Some(&b"second"[..])
    );
    files.put("check/1/empty.txt", b"").await.unwrap();
    assert_eq!(
        files.get("check/1/empty.txt", 10).await.unwrap(),
        Some(Vec::new())
    );

    // A file over the caller's limit is refused, not read.
    let refused = files.get("check/1/论文.docx", 3).await.unwrap_err();
    assert!(matches!(refused, StoreError::Invalid(_)), "{refused:?}");

    // Keys that would leave their folder are refused before anything is written.
    for bad in ["../escape", "/abs", "a//b", "a\\b", ""] {
        let err = files.put(bad, b"x").await.unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{bad:?}: {err:?}");
    }

    // Wildcards in a prefix are literal: check/1_ is not check/12.
    files.put("check/12/a.pdf", b"12").await.unwrap();
    files.put("check/1_/a.pdf", b"1_").await.unwrap();
    files.put("paper/1/refs.bib", b"bib").await.unwrap();
    assert_eq!(
        files.list("check/1").await.unwrap(),
        vec![
            StoredFile {
                key: "check/1/empty.txt".into(),
                bytes: 0
            },
            StoredFile {
                key: "check/1/论文.docx".into(),
                bytes: 6
            },
        ]
    );
    assert_eq!(files.list("").await.unwrap().len(), 5);

    // Removing a task's folder removes its files and nothing else.
    assert_eq!(files.remove_under("check/1").await.unwrap(), 2);
    assert_eq!(files.get("check/1/论文.docx", 100).await.unwrap(), None);
    assert_eq!(files.remove_under("check/1").await.unwrap(), 0);
    let left: Vec<String> = files
        .list("")
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.key)
        .collect();
    let mut expected = vec!["check/12/a.pdf", "check/1_/a.pdf", "paper/1/refs.bib"];
    // Characters object paths cannot carry as they are come back the same (names of uploads).
    let odd = "check/7/第#1%稿 [终] ?~.docx";
    files.put(odd, b"odd").await.unwrap();
    assert_eq!(
        files.get(odd, 10).await.unwrap().as_deref(),
        Some(&b"odd"[..])
    );
    assert!(
        files
            .list("check/7")
            .await
            .unwrap()
            .iter()
            .any(|f| f.key == odd)
    );
    assert_eq!(files.remove_under("check/7").await.unwrap(), 1);
    // A name that starts with a dot (an upload called ".docx") is removed with its folder.
    files.put("check/8/..论文.docx", b"dot").await.unwrap();
    assert_eq!(
        files
            .get("check/8/..论文.docx", 10)
            .await
            .unwrap()
            .as_deref(),
        Some(&b"dot"[..])
    );
    files.remove_under("check/8").await.unwrap();
    assert_eq!(files.get("check/8/..论文.docx", 10).await.unwrap(), None);
    let mut left_sorted = left.clone();
    left_sorted.sort();
    expected.sort();
    assert_eq!(left_sorted, expected);
}

store_test!(database_backend, async |store: store::Store| {
    behaves_like_a_file_store(FileStore::Database(store)).await;
});

#[tokio::test]
async fn folder_backend() {
    let dir = tempfile::tempdir().unwrap();
    behaves_like_a_file_store(FileStore::Folder(dir.path().join("files"))).await;
    // No partial files are left beside the kept ones.
    let names: Vec<String> = std::fs::read_dir(dir.path().join("files/check/12"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["a.pdf"]);
}

#[tokio::test]
async fn a_folder_store_on_a_missing_folder_lists_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileStore::Folder(dir.path().join("not-yet"));
    assert!(files.list("").await.unwrap().is_empty());
    assert_eq!(files.remove_under("check/1").await.unwrap(), 0);
}

#[tokio::test]
async fn object_store_backend() {
    let bucket = store::testing::test_bucket().await;
    behaves_like_a_file_store(FileStore::Object(bucket.clone())).await;
    // Another deployment's folder in the same bucket is neither listed nor removed.
    let mut neighbour_settings = store::testing::test_bucket_settings();
    neighbour_settings.prefix = format!("{}-neighbour", neighbour_settings.prefix);
    let neighbour = FileStore::Object(store::Bucket::open(&neighbour_settings).unwrap());
    neighbour.put("check/12/a.pdf", b"theirs").await.unwrap();
    let ours = FileStore::Object(bucket);
    assert_eq!(ours.list("").await.unwrap().len(), 3);
    assert_eq!(ours.remove_under("check/12").await.unwrap(), 1);
    assert_eq!(
        neighbour
            .get("check/12/a.pdf", 10)
            .await
            .unwrap()
            .as_deref(),
        Some(&b"theirs"[..])
    );
    neighbour.remove_under("check").await.unwrap();
}

#[tokio::test]
async fn an_object_store_that_does_not_answer_or_refuses_the_key_is_an_error() {
    let mut settings = store::testing::test_bucket_settings();
    // A port nothing listens on (connection refused at once).
    settings.endpoint = "http://127.0.0.1:9".into();
    let files = FileStore::Object(store::Bucket::open(&settings).unwrap());
    assert!(files.ping().await.is_err());
    assert!(files.get("check/1/a.pdf", 10).await.is_err());

    let mut wrong_key = store::testing::test_bucket_settings();
    wrong_key.secret_access_key = "0".repeat(64);
    let files = FileStore::Object(store::Bucket::open(&wrong_key).unwrap());
    assert!(files.ping().await.is_err(), "a wrong secret must not pass");

    let mut incomplete = store::testing::test_bucket_settings();
    incomplete.bucket.clear();
    assert!(store::Bucket::open(&incomplete).is_err());
}

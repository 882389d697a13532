//! `wenjian migrate --to postgres://… [--files-to s3]`: moves an embedded deployment (SQLite,
//! files in a folder, the memory-mapped library) into PostgreSQL — every table with its ids, every
//! kept file into the database's file store or the `[s3]` bucket, every library document under its
//! id — then checks the move by counting both sides and comparing balances.

use anyhow::Context;
use server::Config;
use simcheck::{Library, NewDoc};

/// Library documents moved per transaction.
const DOCS_PER_BATCH: usize = 200;

pub async fn run(config: &Config, target_url: &str, files_to: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        store::Backend::from_url(target_url)? == store::Backend::Postgres,
        "迁移目标须是 PostgreSQL 地址（postgres://…）"
    );
    let source = store::Store::open(&config.database_url()).await?;
    anyhow::ensure!(
        source.backend() == store::Backend::Sqlite,
        "当前部署已在 PostgreSQL 上，无需迁移"
    );
    let target = store::Store::open(target_url)
        .await
        .with_context(|| "无法连接或初始化目标数据库")?;

    println!("复制数据表……");
    let tables = source.copy_into(&target).await?;
    for t in &tables {
        println!("  {:<24} {:>10} 行", t.table, t.rows);
    }

    let files_from = config.file_store(&source);
    let files_to = match files_to {
        "s3" => {
            let settings = config
                .s3
                .as_ref()
                .context("--files-to s3 需要在配置中写明 [s3]（endpoint、bucket、region、密钥），见 docs/deploy.md")?;
            let bucket = store::FileStore::Object(
                store::Bucket::open(settings).map_err(|e| anyhow::anyhow!("{e}"))?,
            );
            bucket
                .ping()
                .await
                .map_err(|e| anyhow::anyhow!("对象存储不可用：{e}"))?;
            bucket
        }
        _ => store::FileStore::Database(target.clone()),
    };
    let mut files = 0usize;
    let mut file_bytes = 0u64;
    if files_from.backend_name() == "folder" {
        for file in files_from.list("").await? {
            let bytes = files_from
                .get(&file.key, usize::MAX)
                .await?
                .with_context(|| format!("文件在复制时消失：{}", file.key))?;
            files_to.put(&file.key, &bytes).await?;
            files += 1;
            file_bytes += bytes.len() as u64;
        }
    }
    let (files_in_table, files_where) = match &files_to {
        store::FileStore::Object(bucket) => (0, format!("存入对象存储 {}", bucket.label())),
        _ => (files, "存入数据库".to_string()),
    };
    if let store::FileStore::Object(_) = &files_to {
        // Every copied file is in the bucket with its size.
        let listed = files_to.list("").await?;
        for file in files_from.list("").await? {
            anyhow::ensure!(listed.contains(&file), "文件未进入对象存储：{}", file.key);
        }
    }
    println!(
        "文件：{files} 个，{} KB（{files_where}）",
        file_bytes.div_ceil(1024)
    );

    let mut docs = 0usize;
    if config.library_backend != "database" {
        let embedded = crate::corpus::open_library(&config.library_dir())?;
        let to = store::SqlLibrary::new(target.clone(), embedded.params());
        let metas = embedded.list().await?;
        for chunk in metas.chunks(DOCS_PER_BATCH) {
            let mut batch = Vec::with_capacity(chunk.len());
            for meta in chunk {
                let text = embedded.text(meta.id).await?.unwrap_or_default();
                batch.push((
                    meta.id,
                    meta.added_at,
                    NewDoc {
                        title: meta.title.clone(),
                        author: meta.author.clone(),
                        year: meta.year,
                        source: meta.source.clone(),
                        owner: meta.owner,
                        scope: meta.scope,
                        text,
                        bib: meta.bib.clone(),
                    },
                ));
            }
            to.add_keeping_ids(batch).await?;
            docs += chunk.len();
        }
        // The batches' runs are merged before the process ends.
        to.settle().await?;
        println!("比对库：{docs} 篇文档（保留原编号，存入数据库）");
    }

    // The check: both sides hold the same rows and the same money.
    let before = source.table_counts().await?;
    let after = target.table_counts().await?;
    for t in &before {
        let moved = after
            .iter()
            .find(|a| a.table == t.table)
            .map_or(0, |a| a.rows);
        let expected = if t.table == "files" {
            t.rows + files_in_table as u64
        } else if t.table == "library_docs" {
            t.rows + docs as u64
        } else {
            t.rows
        };
        // Runs of postings are copied, and written anew for the embedded library's documents:
        // their counts differ by design.
        if !["library_runs", "library_blocks"].contains(&t.table.as_str()) {
            anyhow::ensure!(
                moved == expected,
                "{} 行数不一致：原 {expected}，新 {moved}",
                t.table
            );
        }
    }
    let (money_before, money_after) = (
        source.total_balances().await?,
        target.total_balances().await?,
    );
    anyhow::ensure!(
        money_before == money_after,
        "余额合计不一致：原 {money_before:?}，新 {money_after:?}"
    );
    println!(
        "核对通过：各表行数一致，余额合计 {:.2} 元、免费次数 {} 一致。",
        money_before.0 as f64 / 100.0,
        money_before.1
    );
    println!(
        "改用新部署：WENJIAN_DATABASE_URL={target_url} WENJIAN_FILES_BACKEND={} WENJIAN_LIBRARY_BACKEND=database",
        files_to.backend_name()
    );
    println!(
        "（句子索引仍在 {}，多机部署时在每台工作机上运行 wenjian corpus index）",
        config.library_dir().join("sentences").display()
    );
    Ok(())
}

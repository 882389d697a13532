//! Moving house: every table of an embedded (SQLite) deployment copied into a PostgreSQL one,
//! ids kept, in one transaction — users, sessions, ledgers, orders, tasks with their reports,
//! files kept in the database and the library's tables. `wenjian migrate --to` drives it, with
//! the embedded library's documents and the folder's files (`SqlLibrary::add_keeping_ids`,
//! `FileStore`).

use crate::{Backend, Result, Store, StoreError};
use std::collections::HashMap;

/// How many rows of a table one `INSERT` carries (PostgreSQL takes at most 65,535 parameters).
const ROWS_PER_BATCH: usize = 200;

/// One copied table and its row count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedTable {
    pub table: String,
    pub rows: u64,
}

impl Store {
    /// The tables of this SQLite database in creation order (so a table comes after those its
    /// foreign keys name), without sqlx's own.
    async fn sqlite_tables(&self) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_sqlx_%' ORDER BY rowid",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// The sum of every account's balance (fen) and free checks: what a move must keep.
    pub async fn total_balances(&self) -> Result<(i64, i64)> {
        Ok(sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(balance_fen), 0) AS BIGINT), \
             CAST(COALESCE(SUM(free_checks), 0) AS BIGINT) FROM accounts",
        )
        .fetch_one(&self.pool)
        .await?)
    }

    /// Row counts of every table, by name: what a move is checked against.
    pub async fn table_counts(&self) -> Result<Vec<CopiedTable>> {
        let tables = match self.backend {
            Backend::Sqlite => self.sqlite_tables().await?,
            Backend::Postgres => {
                sqlx::query_scalar(
                    "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = 'public' AND table_type = 'BASE TABLE' \
                 AND table_name NOT LIKE '\\_sqlx\\_%' \
                 ORDER BY table_name",
                )
                .fetch_all(&self.pool)
                .await?
            }
        };
        let mut out = Vec::with_capacity(tables.len());
        for table in tables {
            let rows: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
                .fetch_one(&self.pool)
                .await?;
            out.push(CopiedTable {
                table,
                rows: rows.max(0) as u64,
            });
        }
        out.sort_by(|a, b| a.table.cmp(&b.table));
        Ok(out)
    }

    /// Copies every table of this SQLite database into `target`, a PostgreSQL database at the
    /// same schema version that holds no users yet. All or nothing: one transaction on the
    /// target. Identity counters are moved past the copied ids.
    pub async fn copy_into(&self, target: &Store) -> Result<Vec<CopiedTable>> {
        if self.backend != Backend::Sqlite || target.backend != Backend::Postgres {
            return Err(StoreError::Config("只能从 SQLite 迁移到 PostgreSQL".into()));
        }
        let ours: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&self.pool)
                .await?;
        let theirs: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&target.pool)
                .await?;
        if ours != theirs {
            return Err(StoreError::Config(
                "两个数据库的结构版本不同：请先对两边运行 wenjian migrate".into(),
            ));
        }
        let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users")
            .fetch_one(&target.pool)
            .await?;
        if users > 0 {
            return Err(StoreError::Config(
                "目标数据库已有用户数据：只能迁移到一个新建的空数据库".into(),
            ));
        }

        // The target's column types decide how each value is read and bound (SQLite's are
        // only affinities).
        let types: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT table_name::text, column_name::text, data_type::text \
             FROM information_schema.columns WHERE table_schema = 'public'",
        )
        .fetch_all(&target.pool)
        .await?;
        let type_of: HashMap<(String, String), String> =
            types.into_iter().map(|(t, c, ty)| ((t, c), ty)).collect();

        let mut tx = target.pool.begin().await?;
        let mut copied = Vec::new();
        for table in self.sqlite_tables().await? {
            let columns: Vec<String> = sqlx::query_scalar(&format!(
                "SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
            ))
            .fetch_all(&self.pool)
            .await?;
            let kinds: Vec<ColumnKind> = columns
                .iter()
                .map(|c| {
                    type_of
                        .get(&(table.clone(), c.clone()))
                        .map(|ty| ColumnKind::of(ty))
                        .ok_or_else(|| StoreError::Config(format!("目标数据库缺少列 {table}.{c}")))
                })
                .collect::<Result<_>>()?;
            let list = columns.join(", ");
            let mut rows = 0u64;
            let mut last_rowid = i64::MIN;
            loop {
                let batch = sqlx::query(&format!(
                    "SELECT rowid AS wj_rowid, {list} FROM {table} WHERE rowid > $1 ORDER BY rowid LIMIT $2"
                ))
                .bind(last_rowid)
                .bind(ROWS_PER_BATCH as i64)
                .fetch_all(&self.pool)
                .await?;
                if batch.is_empty() {
                    break;
                }
                let mut sql = format!("INSERT INTO {table} ({list}) VALUES ");
                let mut n = 0;
                for (r, _) in batch.iter().enumerate() {
                    sql.push_str(if r == 0 { "(" } else { ", (" });
                    for c in 0..columns.len() {
                        n += 1;
                        sql.push_str(&format!("{}${n}", if c == 0 { "" } else { ", " }));
                    }
                    sql.push(')');
                }
                let mut insert = sqlx::query(&sql);
                for row in &batch {
                    for (c, kind) in kinds.iter().enumerate() {
                        insert = kind.bind(insert, row, c + 1)?;
                    }
                }
                insert.execute(&mut *tx).await?;
                use sqlx::Row;
                last_rowid = batch
                    .last()
                    .map(|r| r.try_get::<i64, _>(0))
                    .transpose()?
                    .unwrap_or(last_rowid);
                rows += batch.len() as u64;
            }
            let id_column = columns.iter().position(|c| c == "id");
            if id_column.is_some_and(|i| kinds[i] == ColumnKind::Integer) {
                // Identity columns go on after the copied ids (NULL for a table without one).
                sqlx::query(&format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                     COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM {table}"
                ))
                .execute(&mut *tx)
                .await?;
            }
            copied.push(CopiedTable { table, rows });
        }
        tx.commit().await?;
        copied.sort_by(|a, b| a.table.cmp(&b.table));
        Ok(copied)
    }
}

/// How a column's values are read from SQLite and bound for PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnKind {
    Integer,
    Float,
    Text,
    Bytes,
    Bool,
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

impl ColumnKind {
    fn of(data_type: &str) -> Self {
        match data_type {
            "bigint" | "integer" | "smallint" => ColumnKind::Integer,
            "double precision" | "real" | "numeric" => ColumnKind::Float,
            "bytea" => ColumnKind::Bytes,
            "boolean" => ColumnKind::Bool,
            _ => ColumnKind::Text,
        }
    }

    fn bind<'q>(
        self,
        query: AnyQuery<'q>,
        row: &sqlx::any::AnyRow,
        column: usize,
    ) -> Result<AnyQuery<'q>> {
        use sqlx::Row;
        Ok(match self {
            ColumnKind::Integer => query.bind(row.try_get::<Option<i64>, _>(column)?),
            ColumnKind::Float => query.bind(row.try_get::<Option<f64>, _>(column)?),
            ColumnKind::Text => query.bind(row.try_get::<Option<String>, _>(column)?),
            ColumnKind::Bytes => query.bind(row.try_get::<Option<Vec<u8>>, _>(column)?),
            ColumnKind::Bool => query.bind(row.try_get::<Option<i64>, _>(column)?.map(|v| v != 0)),
        })
    }
}

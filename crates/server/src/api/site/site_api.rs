//! Public facts the web app needs before anyone signs in, and a health probe.

use super::sys_config_api;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SiteConfig {
    pub site_title: String,
    /// Opened in a new tab by the "首页" menu entry.
    pub marketing_url: String,
    /// Which QR-login provider confirms scans, e.g. `local`.
    pub qr_provider: String,
    pub version: String,
    /// 对话改写's price per started 1,000 characters of a message, in fen: the page shows what a
    /// message will cost and asks before sending.
    pub chat_price_fen_per_thousand: i64,
    /// The IANA zone every time is shown in, e.g. `Asia/Shanghai`.
    pub time_zone: String,
    /// How that zone is named beside a time, e.g. 北京时间.
    pub time_zone_label: String,
    /// 论文生成's prices by length, shown on the form before anyone signs in.
    pub paper_price_tiers: Vec<crate::config::PriceTier>,
    /// Who writes generated papers: `local` (short, weak drafts), `endpoint`, or `none`.
    pub paper_writer: String,
    /// Why papers cannot be generated here, when they cannot.
    pub paper_unavailable: Option<String>,
}

#[utoipa::path(get, path = "/api/base/site_api/f/config", tag = "site_api",
    responses((status = 200, body = inline(crate::envelope::Envelope<SiteConfig>))))]
pub async fn config(State(state): State<AppState>) -> ApiResult<SiteConfig> {
    let paper = state.models.engine(crate::models::Feature::Paper);
    let prices = crate::prices::Prices::current(&state).await?;
    Ok(Success(SiteConfig {
        // What an operator set in the console wins over the configuration file.
        site_title: sys_config_api::site_text(&state, "site_title", &state.config.site_title).await,
        marketing_url: sys_config_api::site_text(
            &state,
            "marketing_url",
            &state.config.marketing_url,
        )
        .await,
        qr_provider: state.qr_provider.name().into(),
        version: env!("CARGO_PKG_VERSION").into(),
        chat_price_fen_per_thousand: prices.chat_fen_per_thousand,
        time_zone: state.clock.name().into(),
        time_zone_label: state.clock.label().into(),
        paper_price_tiers: prices.paper_tiers,
        paper_writer: paper.source,
        paper_unavailable: paper.unavailable,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok`, or `degraded` when this node serves but work is not being done (no live worker
    /// while jobs wait).
    #[schema(example = "ok")]
    pub status: String,
    /// `sqlite` or `postgres`.
    pub database: String,
    /// Where files live: `folder` or `database`.
    pub files: String,
    /// Each dependency this deployment needs, and whether it answered.
    pub dependencies: Vec<Dependency>,
    /// Worker processes seen in the last `PRESENCE_STALE`, on any host.
    pub live_workers: usize,
    /// Queues with unfinished jobs.
    pub queues: Vec<QueueHealth>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Dependency {
    /// `database`, `files` or `workers`.
    pub name: String,
    pub ok: bool,
    /// What was found, in Chinese (the error when it did not answer).
    pub detail: String,
    /// How long the probe took.
    pub millis: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueHealth {
    pub queue: String,
    pub waiting: i64,
    pub running: i64,
    /// Age of the oldest job waiting to start, in seconds.
    pub oldest_waiting_seconds: i64,
}

/// Times one probe of a dependency; `ok` and `failed` word its outcome.
async fn probe(
    name: &str,
    ok: &str,
    failed: &str,
    check: impl std::future::Future<Output = store::Result<()>>,
) -> Dependency {
    let began = std::time::Instant::now();
    let outcome = check.await;
    Dependency {
        name: name.into(),
        ok: outcome.is_ok(),
        // The answer is public: the cause (addresses, a store's error body) goes to the log only.
        detail: match outcome {
            Ok(()) => ok.into(),
            Err(e) => {
                tracing::warn!(dependency = name, error = %e, "health probe failed");
                format!("{failed}（原因见服务日志）")
            }
        },
        millis: began.elapsed().as_millis() as u64,
    }
}

/// Liveness and the dependencies a load balancer or an operator needs: the database, the file
/// store and the workers. 503 when this node cannot serve (database or files down).
#[utoipa::path(get, path = "/api/health", tag = "site_api",
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Health>)),
        (status = 503, description = "database or file store unreachable", body = crate::envelope::ErrorBody),
    ))]
pub async fn health(State(state): State<AppState>) -> ApiResult<Health> {
    let database = probe("database", "可连接", "无法连接", state.store.ping()).await;
    let files = probe("files", "可读写", "无法写入", state.files.ping()).await;
    let down: Vec<&str> = [&database, &files]
        .into_iter()
        .filter(|d| !d.ok)
        .map(|d| d.detail.as_str())
        .collect();
    if !down.is_empty() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "dependency_unavailable",
            format!("服务依赖不可用：{}", down.join("；")),
        ));
    }
    let workers = state
        .store
        .live_workers(crate::worker::presence_cutoff(store::now_ms()))
        .await?;
    let queues = state.store.queue_depths().await?;
    let waiting: i64 = queues.iter().map(|q| q.waiting).sum();
    let worker_check = Dependency {
        name: "workers".into(),
        ok: !workers.is_empty() || waiting == 0,
        detail: if workers.is_empty() {
            format!("没有在线的工作进程（{waiting} 个任务在等待）")
        } else {
            format!("{} 个工作进程在线", workers.len())
        },
        millis: 0,
    };
    Ok(Success(Health {
        status: if worker_check.ok { "ok" } else { "degraded" }.into(),
        database: match state.store.backend() {
            store::Backend::Sqlite => "sqlite".into(),
            store::Backend::Postgres => "postgres".into(),
        },
        files: state.files.backend_name().into(),
        dependencies: vec![database, files, worker_check],
        live_workers: workers.len(),
        queues: queues
            .into_iter()
            .map(|q| QueueHealth {
                queue: q.queue,
                waiting: q.waiting,
                running: q.running,
                oldest_waiting_seconds: q.oldest_waiting_ms / 1000,
            })
            .collect(),
    }))
}

/// The Prometheus text exposition of queue depth, waiting age, live workers and task
/// latency. Open when `metrics_token` is not set (keep the path off the public proxy then);
/// otherwise the scraper sends `Authorization: Bearer <metrics_token>`.
#[utoipa::path(get, path = "/api/metrics", tag = "site_api",
    responses(
        (status = 200, description = "Prometheus text format 0.0.4", content_type = "text/plain", body = String),
        (status = 401, description = "metrics_token set and not given", body = crate::envelope::ErrorBody),
    ))]
pub async fn metrics(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    if let Some(token) = state
        .config
        .metrics_token
        .as_deref()
        .filter(|t| !t.is_empty())
    {
        let given = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        if !crate::metrics::same_secret(given, token) {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "metrics_token_required",
                "读取指标需要 metrics_token",
            ));
        }
    }
    let now = store::now_ms();
    let queues = state.store.queue_depths().await?;
    let workers = state
        .store
        .live_workers(crate::worker::presence_cutoff(now))
        .await?;
    let latencies = state
        .store
        .task_latencies(now - METRICS_LATENCY_WINDOW_MS)
        .await?;
    let body = crate::metrics::exposition(&queues, &workers, &latencies, now);
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response())
}

/// Task latency is summarised over the last hour.
const METRICS_LATENCY_WINDOW_MS: i64 = 3_600_000;

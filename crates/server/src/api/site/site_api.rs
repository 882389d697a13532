//! Public facts the web app needs before anyone signs in, and a health probe.

use crate::envelope::{ApiResult, Success};
use crate::state::AppState;
use axum::extract::State;
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
    Ok(Success(SiteConfig {
        site_title: state.config.site_title.clone(),
        marketing_url: state.config.marketing_url.clone(),
        qr_provider: state.qr_provider.name().into(),
        version: env!("CARGO_PKG_VERSION").into(),
        chat_price_fen_per_thousand: state.config.chat_price_fen_per_thousand,
        time_zone: state.clock.name().into(),
        time_zone_label: state.clock.label().into(),
        paper_price_tiers: state.config.paper_price_tiers.clone(),
        paper_writer: paper.source,
        paper_unavailable: paper.unavailable,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    #[schema(example = "ok")]
    pub status: String,
    /// `sqlite` or `postgres`.
    pub database: String,
}

/// Liveness and database reachability.
#[utoipa::path(get, path = "/api/health", tag = "site_api",
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Health>)),
        (status = 500, description = "database unreachable", body = crate::envelope::ErrorBody),
    ))]
pub async fn health(State(state): State<AppState>) -> ApiResult<Health> {
    state.store.ping().await?;
    Ok(Success(Health {
        status: "ok".into(),
        database: match state.store.backend() {
            store::Backend::Sqlite => "sqlite".into(),
            store::Backend::Postgres => "postgres".into(),
        },
    }))
}

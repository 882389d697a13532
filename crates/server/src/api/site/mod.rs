//! Site information and health.

pub mod site_api;

use crate::state::AppState;
use axum::Router;
use axum::routing::get;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/health", get(site_api::health))
        .route("/api/metrics", get(site_api::metrics))
        .route("/api/base/site_api/f/config", get(site_api::config))
}

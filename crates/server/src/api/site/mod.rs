//! Site information and health.

pub mod site_api;
pub mod sys_config_api;

use crate::state::AppState;
use axum::Router;
use axum::routing::{get, post};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/health", get(site_api::health))
        .route("/api/metrics", get(site_api::metrics))
        .route("/api/base/site_api/f/config", get(site_api::config))
        .route(
            "/api/base/ai_sys_config_api/f/load_all_by_entity",
            post(sys_config_api::load_all_by_entity),
        )
        .route(
            "/api/base/ai_sys_config_api/f/load_by_id",
            post(sys_config_api::load_by_id),
        )
}

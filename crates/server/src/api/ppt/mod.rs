//! Defence slides (答辩PPT, `ai_ppt_info_api`): drafts, templates, payment, the deck task and
//! its downloads.

pub mod pictures;
pub mod ppt_api;
pub mod task;

use super::UPLOAD_BODY_LIMIT;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub fn routes() -> Router<AppState> {
    let call = |name: &str| format!("/api/base/ai_ppt_info_api/{name}");
    Router::new()
        .route(&call("get_template_list"), post(ppt_api::get_template_list))
        .route(
            &call("template_thumbnail/{template}/{name}"),
            get(ppt_api::template_thumbnail),
        )
        .route(
            &call("save_or_update"),
            post(ppt_api::save_or_update).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(&call("load_by_id"), post(ppt_api::load_by_id))
        .route(&call("submit_by_id"), post(ppt_api::submit_by_id))
        .route(&call("change_template"), post(ppt_api::change_template))
        .route(&call("query_list"), post(ppt_api::query_list))
        .route(&call("delete"), post(ppt_api::delete))
        .route(&call("download"), post(ppt_api::download))
        .route(&call("preview_pictures"), post(ppt_api::preview_pictures))
}

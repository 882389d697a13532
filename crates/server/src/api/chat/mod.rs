//! Chat-style rewriting: the task and its streamed answers.

pub mod chat_gpt_api;
pub mod task;

use crate::state::AppState;
use axum::Router;
use axum::routing::{get, post};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/base/chat_gpt_api/completions",
            post(chat_gpt_api::completions),
        )
        .route(
            "/api/base/chat_gpt_api/query_list",
            post(chat_gpt_api::query_list),
        )
        .route(
            "/api/base/chat_gpt_api/load_by_id",
            post(chat_gpt_api::load_by_id),
        )
        .route("/api/base/chat_gpt_api/delete", post(chat_gpt_api::delete))
        .route("/api/base/chat_gpt_api/engine", get(chat_gpt_api::engine))
}

//! AI paper generation (论文生成: `ai_paper_info_api`, `paper_info_api`): the API, the
//! outline / writing / section-rewrite tasks, and the library as the generator's reference
//! source. `paper_info_api` shares the handlers of `ai_paper_info_api` for the calls both name.

pub mod files;
pub mod package;
pub mod paper_api;
pub mod retrieval;
pub mod task;

use crate::api::UPLOAD_BODY_LIMIT;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::post;

/// Calls `paper_info_api` answers exactly as `ai_paper_info_api` does (documented under both).
pub const SHARED_CALLS: [&str; 6] = [
    "query_list",
    "load_by_id",
    "query_content_list",
    "reload",
    "download",
    "delete",
];

pub fn routes() -> Router<AppState> {
    let mut router = Router::new()
        .route(
            "/api/base/paper_info_api/paper_submit",
            post(paper_api::paper_submit),
        )
        .route(
            "/api/base/paper_info_api/paper_xueshu_submit",
            post(paper_api::paper_xueshu_submit),
        )
        .route(
            "/api/base/paper_info_api/load_other_by_id",
            post(package::load_other_by_id),
        )
        .route(
            "/api/base/ai_paper_info_api/generate_paper",
            post(paper_api::generate_paper),
        )
        .route(
            "/api/base/ai_paper_info_api/commit_paper",
            post(paper_api::commit_paper),
        )
        .route(
            "/api/base/ai_paper_info_api/update_content",
            post(paper_api::update_content),
        )
        .route(
            "/api/base/ai_paper_info_api/delete_content",
            post(paper_api::delete_content),
        )
        .route(
            "/api/base/ai_paper_info_api/update_outline",
            post(paper_api::update_outline),
        )
        .route(
            "/api/base/ai_paper_info_api/read_references",
            post(files::read_references).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(
            "/api/base/ai_paper_info_api/read_outline",
            post(files::read_outline).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        );
    // Calls both families name, answered alike.
    for family in ["ai_paper_info_api", "paper_info_api"] {
        router = router
            .route(
                &format!("/api/base/{family}/query_list"),
                post(paper_api::query_list),
            )
            .route(
                &format!("/api/base/{family}/load_by_id"),
                post(paper_api::load_by_id),
            )
            .route(
                &format!("/api/base/{family}/query_content_list"),
                post(paper_api::query_content_list),
            )
            .route(
                &format!("/api/base/{family}/reload"),
                post(paper_api::reload),
            )
            .route(
                &format!("/api/base/{family}/download"),
                post(paper_api::download),
            )
            .route(
                &format!("/api/base/{family}/delete"),
                post(paper_api::delete),
            );
    }
    router.route(
        "/api/base/paper_info_api/query_paper_content",
        post(paper_api::query_content_list),
    )
}

/// The documented path of `ai_paper_info_api/<call>`, and its `paper_info_api` aliases.
pub fn aliases() -> Vec<(String, String)> {
    SHARED_CALLS
        .iter()
        .map(|call| (*call, *call))
        .chain([("query_content_list", "query_paper_content")])
        .map(|(call, alias)| {
            (
                format!("/api/base/ai_paper_info_api/{call}"),
                format!("/api/base/paper_info_api/{alias}"),
            )
        })
        .collect()
}

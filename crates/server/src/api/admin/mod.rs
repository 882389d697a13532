//! The operator console's API (`/api/admin/…`): every call takes an `OperatorUser`, so the role
//! is checked on the server whatever the web app shows; every change is written to the audit
//! log in the same transaction as the change.

pub mod console_api;
pub mod library_api;
pub mod library_task;
pub mod model_task;
pub mod prompts_api;

use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/admin/dashboard", get(console_api::dashboard))
        .route("/api/admin/users", get(console_api::users))
        .route("/api/admin/users/detail", get(console_api::user_detail))
        .route(
            "/api/admin/users/balance",
            post(console_api::adjust_balance),
        )
        .route("/api/admin/users/disabled", post(console_api::set_disabled))
        .route("/api/admin/users/operator", post(console_api::set_operator))
        .route(
            "/api/admin/users/password",
            post(console_api::reset_password),
        )
        .route("/api/admin/tasks", get(console_api::tasks))
        .route("/api/admin/tasks/retry", post(console_api::retry_task))
        .route("/api/admin/tasks/cancel", post(console_api::cancel_task))
        .route("/api/admin/orders", get(console_api::orders))
        .route(
            "/api/admin/orders/reconcile",
            post(console_api::reconcile_orders),
        )
        .route("/api/admin/orders/refund", post(console_api::refund_order))
        .route(
            "/api/admin/orders/refund/abandon",
            post(console_api::abandon_refund),
        )
        .route("/api/admin/packages", get(console_api::packages))
        .route("/api/admin/packages/save", post(console_api::save_package))
        .route(
            "/api/admin/packages/active",
            post(console_api::set_package_active),
        )
        .route("/api/admin/prices", get(console_api::prices))
        .route("/api/admin/prices/save", post(console_api::save_prices))
        .route("/api/admin/prices/reset", post(console_api::reset_prices))
        .route("/api/admin/models", get(console_api::models))
        .route("/api/admin/models/test", post(console_api::test_endpoint))
        .route("/api/admin/models/fetch", post(console_api::fetch_model))
        .route(
            "/api/admin/models/endpoint",
            post(console_api::save_endpoint),
        )
        .route(
            "/api/admin/models/endpoint/reset",
            post(console_api::reset_endpoint),
        )
        .route(
            "/api/admin/library/upload",
            // Limited in the handler, by the configured size of a batch.
            post(library_api::upload).layer(DefaultBodyLimit::disable()),
        )
        .route("/api/admin/library/tasks", get(library_api::tasks))
        .route("/api/admin/library/docs", get(library_api::docs))
        .route("/api/admin/library/summary", get(library_api::summary))
        .route("/api/admin/library/remove", post(library_api::remove))
        .route("/api/admin/prompts", get(prompts_api::prompts))
        .route("/api/admin/prompts/versions", get(prompts_api::versions))
        .route("/api/admin/prompts/save", post(prompts_api::save))
        .route("/api/admin/audit", get(console_api::audit))
        .route("/api/admin/config", get(console_api::config_entries))
        .route(
            "/api/admin/config/save",
            post(console_api::save_config_entry),
        )
        .route(
            "/api/admin/config/delete",
            post(console_api::delete_config_entry),
        )
}

//! The account centre: balance, free uses and the ledger.

pub mod account_info_api;

use crate::state::AppState;
use axum::Router;
use axum::routing::get;

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/api/base/account_info_api/account",
        get(account_info_api::account),
    )
}

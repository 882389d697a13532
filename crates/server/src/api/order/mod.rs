//! Packages (套餐), top-up and orders: `product_package_api` (the catalogue),
//! `order_info_api` (create an order, follow it, list them), the providers' notification
//! endpoints, and the sandbox's phone page.

pub mod notify;
pub mod order_info_api;
pub mod paid_task;
pub mod product_package_api;
pub mod sandbox_page;

use crate::state::AppState;
use axum::Router;
use axum::routing::{any, get, post};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/base/product_package_api/query_list",
            post(product_package_api::query_list),
        )
        .route(
            "/api/base/product_package_api/load_by_id",
            post(product_package_api::load_by_id),
        )
        .route(
            "/api/order/order_info_api/create_order",
            post(order_info_api::create_order),
        )
        .route(
            "/api/order/order_info_api/load_by_id",
            post(order_info_api::load_by_id),
        )
        .route(
            "/api/order/order_info_api/query_list",
            post(order_info_api::query_list),
        )
        .route(
            "/api/order/order_info_api/options",
            post(order_info_api::options),
        )
        .route(
            "/api/order/order_info_api/phone_pay_url",
            post(order_info_api::phone_pay_url),
        )
        .route(
            "/api/order/order_info_api/check_paid",
            post(order_info_api::check_paid),
        )
        .route("/api/order/notify/wechat", post(notify::wechat))
        .route("/api/order/notify/alipay", post(notify::alipay))
        .route(
            "/sandbox/pay/{out_trade_no}",
            get(sandbox_page::show).post(sandbox_page::pay),
        )
        .route(
            "/sandbox/gateway/wechat/{*path}",
            any(sandbox_page::wechat_gateway),
        )
        .route(
            "/sandbox/gateway/alipay",
            get(sandbox_page::alipay_page).post(sandbox_page::alipay_gateway),
        )
}

//! The built React app, embedded in the binary (release) or read from `web/dist` (debug).
//! Every non-API path that is not a file gets `index.html` (SPA fallback).

use axum::body::Body;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "../../web/dist"]
#[allow_missing = true]
struct WebAssets;

fn asset_response(path: &str, body: Vec<u8>, cache: &'static str) -> Response {
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    Response::builder()
        .header(header::CONTENT_TYPE, mime.as_ref())
        .header(header::CACHE_CONTROL, cache)
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

pub async fn serve_web(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if path == "api" || path.starts_with("api/") {
        return crate::api::api_not_found().await.into_response();
    }
    if !path.is_empty()
        && path != "index.html"
        && let Some(file) = WebAssets::get(path)
    {
        // Vite puts content-hashed files under assets/: they never change, so cache for good.
        let cache = if path.starts_with("assets/") {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        return asset_response(path, file.data.into_owned(), cache);
    }
    match WebAssets::get("index.html") {
        Some(index) => asset_response("index.html", index.data.into_owned(), "no-cache"),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            "<!doctype html><meta charset=utf-8><title>文鉴</title>\
             <p>网页应用尚未构建：请先在 web/ 目录运行 <code>npm run build</code>，或使用 README 中的启动命令。</p>",
        )
            .into_response(),
    }
}

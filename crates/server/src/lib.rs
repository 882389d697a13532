//! The HTTP server: the spec's API families, auth, the response envelope and the embedded web app.

pub mod api;
pub mod auth;
pub mod config;
pub mod envelope;
pub mod openapi;
pub mod params;
pub mod qr_provider;
pub mod rate_limit;
pub mod state;
pub mod web_assets;

pub use config::Config;
pub use state::AppState;

use axum::Router;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tower_http::trace::TraceLayer;

pub fn router(state: AppState) -> Router {
    api::routes()
        .fallback(web_assets::serve_web)
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Serves until `shutdown` resolves, then finishes the requests in flight.
pub async fn serve_on(
    listener: TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        router(state).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}

/// `wenjian serve`: opens the store, prepares the folders and serves until Ctrl-C or SIGTERM.
pub async fn run(config: Config) -> anyhow::Result<()> {
    std::fs::create_dir_all(config.files_dir())?;
    let store = store::Store::open(&config.database_url()).await?;
    let listener = TcpListener::bind(&config.listen).await.map_err(|e| {
        anyhow::anyhow!(
            "无法监听 {}：{e}（端口被占用？可用 WENJIAN_LISTEN 更换）",
            config.listen
        )
    })?;
    let addr = listener.local_addr()?;
    tracing::info!(database = ?store.backend(), "文鉴 listening on http://{addr}");
    let state = AppState::new(store.clone(), config);
    serve_on(listener, state, shutdown_signal()).await?;
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}

//! The HTTP server: the spec's API families, auth, the response envelope and the embedded web app.

pub mod account_policy;
pub mod api;
pub mod auth;
pub mod config;
pub mod envelope;
pub mod extraction;
pub mod http;
pub mod library_batch;
pub mod live_settings;
pub mod metrics;
pub mod model_fetch;
pub mod models;
pub mod official;
pub mod openapi;
pub mod params;
pub mod payments;
pub mod prices;
pub mod prompts;
pub mod qr_provider;
pub mod rate_limit;
pub mod shared_sentences;
pub mod state;
pub mod sweeper;
pub mod web_assets;
pub mod worker;

pub use config::Config;
pub use state::AppState;

use axum::Router;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::trace::TraceLayer;

pub fn router(state: AppState) -> Router {
    // The web app is served compressed (brotli or gzip, as the browser accepts); the API is
    // not, so its streamed answers reach the page as they are written.
    let web = axum::routing::any(web_assets::serve_web)
        .layer(tower_http::compression::CompressionLayer::new());
    let app = api::routes()
        .fallback_service(web)
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(account_policy::request_span::<axum::body::Body>),
        )
        .with_state(state);
    http::with_security_headers(app)
}

/// Serves until `shutdown` resolves, then finishes the requests in flight.
pub async fn serve_on(
    listener: TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let front = http::Front {
        max_connections: state.config.max_connections,
        header_read_timeout: Duration::from_secs(state.config.header_read_timeout_seconds.max(1)),
        body_read_timeout: Duration::from_secs(state.config.body_read_timeout_seconds.max(1)),
    };
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = tx.send(true);
    });
    http::serve(listener, router(state), front, rx).await
}

/// Crash tests' hook: a debug build started with `WENJIAN_CRASH_AT=<point>` dies at that point
/// as if killed with SIGKILL (no unwinding, no cleanup, nothing flushed). Release builds have no
/// such hook.
#[inline]
pub fn crash_point(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("WENJIAN_CRASH_AT").is_ok_and(|at| at == point) {
        tracing::error!(point, "WENJIAN_CRASH_AT: dying here");
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

/// The task handlers this deployment runs, over the configured library backend; `models` is
/// shared with the API (one copy of each model per process).
pub fn task_handlers(
    config: &Config,
    store: &store::Store,
    models: Arc<models::ModelHub>,
) -> anyhow::Result<Vec<Arc<dyn worker::TaskHandler>>> {
    let params = simcheck::FingerprintParams::default();
    let encoder = if config.paraphrase_layer {
        api::check::task::load_encoder(&config.models_dir())
    } else {
        None
    };
    let aigc: Arc<dyn worker::TaskHandler> =
        Arc::new(api::aigc::task::AigcHandler::new(models.clone()));
    let reload: Arc<dyn worker::TaskHandler> =
        Arc::new(api::paper::task::ReloadHandler::new(models.clone()));
    let package: Arc<dyn worker::TaskHandler> =
        Arc::new(api::paper::package::OtherHandler::new(models.clone()));
    let chat: Arc<dyn worker::TaskHandler> =
        Arc::new(api::chat::task::ChatHandler::new(models.clone()));
    let slides_models = models.clone();
    fn over<L: simcheck::Library + 'static>(
        config: &Config,
        store: &store::Store,
        library: L,
        encoder: Option<Arc<embed::UseEncoder>>,
        models: Arc<models::ModelHub>,
    ) -> Vec<Arc<dyn worker::TaskHandler>> {
        let concurrency = config.rewrite_concurrency;
        let library = Arc::new(store::Catalogued::new(library, store.clone()));
        // A library imported before the catalogue existed, or changed by hand, is listed
        // again; the index's size is measured for the console.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let library = library.clone();
            runtime.spawn(async move {
                match library.reconcile().await {
                    Ok((0, 0)) => {}
                    Ok((added, removed)) => {
                        tracing::info!(added, removed, "library catalogue brought up to date")
                    }
                    Err(e) => tracing::warn!(error = %e, "library catalogue not reconciled"),
                }
            });
        }
        let mut handlers: Vec<Arc<dyn worker::TaskHandler>> = vec![
            Arc::new(api::admin::library_task::LibraryHandler::new(
                library.clone(),
                config.file_store(store),
                Arc::new(extraction::Extractor::new(config)),
                config,
            )),
            Arc::new(api::check::task::CheckHandler::new(
                library.clone(),
                encoder,
            )),
            Arc::new(api::check::task::ForgetHandler::new(library.clone())),
            Arc::new(api::paper::task::PaperHandler::new(
                library.clone(),
                models.clone(),
            )),
        ];
        // Papers, paragraphs and smart rewrites queue apart, so a long paper does not hold up
        // a paragraph someone is watching stream in.
        for kind in api::rewrite::task::KINDS {
            handlers.push(Arc::new(api::rewrite::task::RewriteHandler::new(
                library.clone(),
                models.clone(),
                concurrency,
                kind,
            )));
        }
        handlers
    }
    let mut handlers = match config.library_backend.as_str() {
        "database" => over(
            config,
            store,
            with_sentence_index(
                config,
                Some(store),
                store::SqlLibrary::new(store.clone(), params),
                encoder.clone(),
            )?,
            encoder,
            models,
        ),
        _ => over(
            config,
            store,
            with_sentence_index(
                config,
                None,
                simcheck::EmbeddedLibrary::open(config.library_dir(), params)?,
                encoder.clone(),
            )?,
            encoder,
            models,
        ),
    };
    handlers.push(aigc);
    handlers.push(chat);
    handlers.push(Arc::new(api::ppt::task::PptHandler::new(
        config.file_store(store),
        config.ppt_condense.then_some(slides_models),
    )));
    handlers.push(reload);
    handlers.push(package);
    handlers.push(Arc::new(api::admin::model_task::ModelFetchHandler::new(
        config.models_dir(),
    )));
    Ok(handlers)
}

/// The library with its sentence index (`<library_dir>/sentences`), kept by every import and
/// removal when the sentence encoder is installed; without it, the library alone. With the
/// library in the database and files in a shared store, the index is shared by every node
/// (`shared_sentences`); `store` is the deployment's database for that.
pub fn with_sentence_index<L: simcheck::Library>(
    config: &Config,
    store: Option<&store::Store>,
    library: L,
    encoder: Option<Arc<embed::UseEncoder>>,
) -> anyhow::Result<shared_sentences::SharedSentences<L>> {
    let embedder = encoder.map(|e| e as Arc<dyn simcheck::SentenceEmbedder>);
    let semantic =
        simcheck::SemanticLibrary::open(library, config.library_dir().join("sentences"), embedder)?;
    Ok(shared_sentences::SharedSentences::new(
        config, store, semantic,
    ))
}

/// A channel that turns true on Ctrl-C or SIGTERM.
fn shutdown_channel() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = tx.send(true);
    });
    rx
}

/// Papers are private: whatever this process creates (the embedded database, uploads, the
/// library, reports) is readable by its own user only, and so is the data folder.
pub fn private_files(config: &Config) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
        let _ = std::fs::create_dir_all(&config.data_dir);
        let _ = std::fs::set_permissions(&config.data_dir, std::fs::Permissions::from_mode(0o700));
    }
}

/// `wenjian serve`: opens the store, prepares the folders, runs the workers in-process and
/// serves until Ctrl-C or SIGTERM, finishing requests and jobs in flight.
pub async fn run(config: Config) -> anyhow::Result<()> {
    private_files(&config);
    if config.files_backend == "folder" {
        std::fs::create_dir_all(config.files_dir())?;
    }
    if config.public_url.is_none() {
        tracing::warn!(
            "public_url 未设置：报告中的核验链接只写页面名称，二维码使用请求的 Host；生产环境请设置 WENJIAN_PUBLIC_URL"
        );
    }
    let store = store::Store::open(&config.database_url()).await?;
    let listener = TcpListener::bind(&config.listen).await.map_err(|e| {
        anyhow::anyhow!(
            "无法监听 {}：{e}（端口被占用？可用 WENJIAN_LISTEN 更换）",
            config.listen
        )
    })?;
    let addr = listener.local_addr()?;
    tracing::info!(database = ?store.backend(), "文鉴 listening on http://{addr}");
    let shutdown = shutdown_channel();
    let state = AppState::new(store.clone(), config.clone());
    let _sweeper = sweeper::start(&store, &config, &shutdown);
    live_settings::keep_fresh(store.clone(), state.models.clone(), shutdown.clone());
    payments::seed_packages(&store, &config).await?;
    let _reconciler = api::order::notify::spawn_reconciler(
        state.clone(),
        api::order::notify::RECONCILE_EVERY,
        shutdown.clone(),
    );
    // `workers_per_queue = 0`: an API-only node; `wenjian worker` processes do the work.
    let workers = if config.workers_per_queue > 0 {
        let pool = worker::WorkerPool::new(
            store.clone(),
            task_handlers(&config, &store, state.models.clone())?,
        )
        .with_lease(config.job_lease(), worker::IDLE_POLL);
        Some(tokio::spawn(
            pool.run(config.workers_per_queue, shutdown.clone()),
        ))
    } else {
        tracing::info!("workers_per_queue = 0: no workers in this process (API only)");
        None
    };
    let mut http_shutdown = shutdown.clone();
    serve_on(listener, state, async move {
        let _ = http_shutdown.wait_for(|stop| *stop).await;
    })
    .await?;
    if let Some(workers) = workers {
        let _ = workers.await;
    }
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// `wenjian worker`: workers only, against the configured database (scale-out).
pub async fn run_workers(config: Config) -> anyhow::Result<()> {
    private_files(&config);
    let store = store::Store::open(&config.database_url()).await?;
    tracing::info!(database = ?store.backend(), "文鉴 worker started");
    let models = Arc::new(models::ModelHub::new(&config));
    let shutdown = shutdown_channel();
    let _sweeper = sweeper::start(&store, &config, &shutdown);
    live_settings::keep_fresh(store.clone(), models.clone(), shutdown.clone());
    let workers = worker::WorkerPool::new(store.clone(), task_handlers(&config, &store, models)?)
        .with_lease(config.job_lease(), worker::IDLE_POLL);
    workers.run(config.workers_per_queue, shutdown).await;
    store.close().await;
    tracing::info!("worker stopped");
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

use crate::config::Config;
use crate::qr_provider::QrLoginProvider;
use crate::rate_limit::{LoginGuard, MemoryLimiter};
use std::sync::Arc;
use store::Store;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub config: Arc<Config>,
    /// Failed-login lockouts, kept in the database.
    pub login_limiter: Arc<LoginGuard>,
    pub qr_provider: Arc<dyn QrLoginProvider>,
    /// The PDF report font, loaded on first use (a CJK font is tens of megabytes).
    pub pdf_font: Arc<tokio::sync::OnceCell<Result<report::PdfFont, (&'static str, String)>>>,
    /// Slows down guessing of report verification codes (in memory, bounded).
    pub verify_limiter: Arc<MemoryLimiter>,
    /// The models this process shares with its workers (loaded on first use).
    pub models: Arc<crate::models::ModelHub>,
    /// Reads uploads in child processes with limits.
    pub extractor: Arc<crate::extraction::Extractor>,
    /// The zone every time is shown in (`Config::time_zone`).
    pub clock: report::SiteClock,
    /// The payment providers (or the sandbox), when configured.
    pub payments: Arc<crate::payments::Payments>,
    /// Uploaded and generated files (`Config::files_backend`).
    pub files: store::FileStore,
    /// The template thumbnails LibreOffice has drawn into `files`.
    pub template_pictures: Arc<crate::api::ppt::pictures::RenderedThumbnails>,
}

impl AppState {
    pub fn new(store: Store, config: Config) -> Self {
        let limiter = LoginGuard::new(store.clone(), &config);
        let models = Arc::new(crate::models::ModelHub::new(&config));
        let extractor = Arc::new(crate::extraction::Extractor::new(&config));
        // `Config::load` refuses an unknown zone; a config built in code falls back to the default.
        let clock = config.clock().unwrap_or_default();
        let payments = Arc::new(crate::payments::Payments::new(&config));
        AppState {
            files: config.file_store(&store),
            template_pictures: Arc::default(),
            payments,
            clock,
            extractor,
            models,
            store,
            config: Arc::new(config),
            login_limiter: Arc::new(limiter),
            qr_provider: Arc::new(crate::qr_provider::LocalPageProvider),
            pdf_font: Arc::default(),
            verify_limiter: Arc::new(MemoryLimiter::new(
                20,
                20,
                std::time::Duration::from_secs(15 * 60),
            )),
        }
    }
}

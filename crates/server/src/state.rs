use crate::config::Config;
use crate::qr_provider::QrLoginProvider;
use crate::rate_limit::LoginLimiter;
use std::sync::Arc;
use store::Store;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub config: Arc<Config>,
    pub login_limiter: Arc<LoginLimiter>,
    pub qr_provider: Arc<dyn QrLoginProvider>,
    /// The PDF report font, loaded on first use (a CJK font is tens of megabytes).
    pub pdf_font: Arc<tokio::sync::OnceCell<Result<report::PdfFont, (&'static str, String)>>>,
    /// Slows down guessing of report verification codes.
    pub verify_limiter: Arc<LoginLimiter>,
    /// The models this process shares with its workers (loaded on first use).
    pub models: Arc<crate::models::ModelHub>,
}

impl AppState {
    pub fn new(store: Store, config: Config) -> Self {
        let limiter = LoginLimiter::new(
            config.login_max_failures,
            config.login_max_failures_per_ip,
            std::time::Duration::from_secs(config.login_lock_minutes * 60),
        );
        let models = Arc::new(crate::models::ModelHub::new(&config));
        AppState {
            models,
            store,
            config: Arc::new(config),
            login_limiter: Arc::new(limiter),
            qr_provider: Arc::new(crate::qr_provider::LocalPageProvider),
            pdf_font: Arc::default(),
            verify_limiter: Arc::new(LoginLimiter::new(
                20,
                20,
                std::time::Duration::from_secs(15 * 60),
            )),
        }
    }
}

//! The periodic sweep of rows that stopped meaning anything: expired QR logins and sessions,
//! ended throttle windows and old daily free-check grants (`Store::sweep_expired`). Started by
//! `wenjian serve` and `wenjian worker`; running it in several processes at once is harmless.

use std::time::Duration;
use store::Store;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// One sweep now, logged.
pub async fn sweep_once(store: &Store) -> Result<store::Swept, store::StoreError> {
    let swept = store.sweep_expired(store::now_ms()).await?;
    if swept.total() > 0 {
        tracing::info!(
            qr_logins = swept.qr_logins,
            sessions = swept.sessions,
            throttles = swept.throttles,
            qr_bonus_grants = swept.qr_bonus_grants,
            "swept expired rows"
        );
    }
    Ok(swept)
}

/// Sweeps at start and then every `every` until `shutdown` turns true.
pub fn spawn(store: Store, every: Duration, mut shutdown: watch::Receiver<bool>) -> JoinHandle<()> {
    let every = every.max(Duration::from_secs(1));
    tokio::spawn(async move {
        loop {
            if let Err(e) = sweep_once(&store).await {
                tracing::warn!(error = %e, "sweep of expired rows failed");
            }
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.wait_for(|stop| *stop) => break,
            }
        }
    })
}

/// The sweep as configured (`sweep_interval_seconds`), for `server::run` and `run_workers`.
pub fn start(
    store: &Store,
    config: &crate::Config,
    shutdown: &watch::Receiver<bool>,
) -> JoinHandle<()> {
    spawn(
        store.clone(),
        Duration::from_secs(config.sweep_interval_seconds),
        shutdown.clone(),
    )
}

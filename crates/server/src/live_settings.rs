//! Settings the console changes that each process holds in memory — the prompts in force and
//! the model endpoint — read again from the store every few seconds, so a change saved on one
//! node reaches every API node and worker without a restart.

use crate::models::ModelHub;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often a process reads the settings again.
pub const REFRESH_EVERY: Duration = Duration::from_secs(5);

/// Keeps this process's settings current until `shutdown` turns true.
pub fn keep_fresh(store: store::Store, models: Arc<ModelHub>, mut shutdown: watch::Receiver<bool>) {
    tokio::spawn(async move {
        while !*shutdown.borrow() {
            crate::prompts::refresh(&store).await;
            models.refresh_endpoint(&store).await;
            tokio::select! {
                _ = tokio::time::sleep(REFRESH_EVERY) => {}
                _ = shutdown.changed() => {}
            }
        }
    });
}

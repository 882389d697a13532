//! Workers: claim jobs from the durable queue, keep their lease alive, report progress, and end
//! each job done or failed. `serve` runs them in-process; `wenjian worker` runs them alone, against
//! the same database, for scale-out. A job whose worker dies is claimed again after its lease.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use store::{ClaimedJob, Store, now_ms};
use tokio::sync::watch;

/// Why a task could not be done: a Chinese sentence for the user, and whether trying again may help.
#[derive(Debug, Clone)]
pub struct TaskError {
    pub message: String,
    pub retryable: bool,
}

impl TaskError {
    pub fn permanent(message: impl Into<String>) -> Self {
        TaskError {
            message: message.into(),
            retryable: false,
        }
    }

    pub fn retryable(message: impl Into<String>) -> Self {
        TaskError {
            message: message.into(),
            retryable: true,
        }
    }
}

/// What a finished task leaves: its result (JSON) and, when part of the work could not be
/// done, the share of the charge (money or package units) to give back with the completion.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutput {
    pub result: String,
    pub refund: store::Share,
    pub refund_reason: Option<String>,
}

impl From<String> for TaskOutput {
    fn from(result: String) -> Self {
        TaskOutput {
            result,
            refund: store::Share::NONE,
            refund_reason: None,
        }
    }
}

pub type TaskFuture<'a> = Pin<Box<dyn Future<Output = Result<TaskOutput, TaskError>> + Send + 'a>>;

/// What a handler may do while it runs.
#[derive(Clone)]
pub struct TaskContext {
    pub store: Store,
    pub task_id: i64,
    /// The task's input, JSON.
    pub input: String,
}

impl TaskContext {
    /// Progress 0–100 and a phrase for the user; failures to record it are not fatal.
    pub async fn progress(&self, percent: i64, phase: &str) {
        if let Err(e) = self.store.task_progress(self.task_id, percent, phase).await {
            tracing::warn!(task = self.task_id, error = %e, "progress not recorded");
        }
    }

    /// What the task has produced so far (JSON), for pages that show it live; failures to
    /// record it are not fatal.
    /// `delivered_permille` is how much of what was paid for the draft holds (a cancellation
    /// refunds only the rest).
    pub async fn draft(&self, draft_json: &str, delivered_permille: i64) {
        if let Err(e) = self
            .store
            .task_draft(self.task_id, draft_json, delivered_permille)
            .await
        {
            tracing::warn!(task = self.task_id, error = %e, "draft not recorded");
        }
    }
}

/// How often what a task has produced so far is written to the store (so any process can
/// show it).
const DRAFT_FLUSH: Duration = Duration::from_millis(400);

/// A draft's produced text, measured against what was paid for.
pub trait Delivered {
    fn delivered_chars(&self) -> usize;
}

impl Delivered for String {
    fn delivered_chars(&self) -> usize {
        self.chars().filter(|c| !c.is_whitespace()).count()
    }
}

impl<T: Delivered> Delivered for Vec<T> {
    fn delivered_chars(&self) -> usize {
        self.iter().map(Delivered::delivered_chars).sum()
    }
}

/// Keeps a running task's draft in the store: `update` changes it in memory, and it is
/// written every `DRAFT_FLUSH` while it changes; writing stops when this is dropped. Each write
/// also records the share of `paid_chars` the draft has shown so far (never decreasing: text
/// once shown stays delivered even when an attempt is replaced).
pub struct DraftWriter<T> {
    state: Arc<std::sync::Mutex<(bool, T)>>,
    task: tokio::task::JoinHandle<()>,
}

impl<T: serde::Serialize + Delivered + Send + 'static> DraftWriter<T> {
    pub fn start(ctx: TaskContext, initial: T, paid_chars: usize) -> Self {
        let state = Arc::new(std::sync::Mutex::new((false, initial)));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            let mut delivered_permille = 0i64;
            loop {
                tokio::time::sleep(DRAFT_FLUSH).await;
                let json = {
                    let mut guard = shared.lock().unwrap_or_else(|e| e.into_inner());
                    if !guard.0 {
                        continue;
                    }
                    guard.0 = false;
                    delivered_permille =
                        delivered_permille.max(permille(guard.1.delivered_chars(), paid_chars));
                    serde_json::to_string(&guard.1).unwrap_or_default()
                };
                ctx.draft(&json, delivered_permille).await;
            }
        });
        DraftWriter { state, task }
    }

    pub fn update(&self, change: impl FnOnce(&mut T)) {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut guard.1);
        guard.0 = true;
    }
}

/// `part` of `whole` in thousandths, at most 1000; nothing paid for counts as all delivered.
pub fn permille(part: usize, whole: usize) -> i64 {
    if whole == 0 {
        return 1000;
    }
    ((part as u128 * 1000 / whole as u128).min(1000)) as i64
}

impl<T> Drop for DraftWriter<T> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs one kind of task (its queue has the same name). Returns the result as JSON.
pub trait TaskHandler: Send + Sync {
    fn kind(&self) -> &'static str;
    fn run(&self, ctx: TaskContext) -> TaskFuture<'_>;
}

/// How often a worker process reports that it is alive.
pub const PRESENCE_INTERVAL: Duration = Duration::from_secs(10);
/// A worker not seen for this long is taken for dead.
pub const PRESENCE_STALE: Duration = Duration::from_secs(35);

/// The time (Unix ms) before which a worker last seen is taken for dead, at `now`.
pub fn presence_cutoff(now: i64) -> i64 {
    now - PRESENCE_STALE.as_millis() as i64
}

/// How often an idle worker looks for new jobs.
pub const IDLE_POLL: Duration = Duration::from_millis(500);

#[derive(Clone)]
pub struct WorkerPool {
    store: Store,
    handlers: Vec<Arc<dyn TaskHandler>>,
    name: String,
    lease: Duration,
    idle_poll: Duration,
}

impl WorkerPool {
    pub fn new(store: Store, handlers: Vec<Arc<dyn TaskHandler>>) -> Self {
        WorkerPool {
            store,
            handlers,
            name: format!("{}-{}", hostname(), std::process::id()),
            lease: Duration::from_secs(60),
            idle_poll: IDLE_POLL,
        }
    }

    pub fn with_lease(mut self, lease: Duration, idle_poll: Duration) -> Self {
        self.lease = lease;
        self.idle_poll = idle_poll;
        self
    }

    /// Starts the workers in the background; `RunningWorkers::stop` ends them.
    pub fn spawn(self, per_queue: usize) -> RunningWorkers {
        let (stop, stopped) = watch::channel(false);
        RunningWorkers {
            stop,
            task: tokio::spawn(self.run(per_queue, stopped)),
        }
    }

    /// Runs `per_queue` workers for every handler until `shutdown` turns true; jobs in hand are
    /// finished first.
    pub async fn run(self, per_queue: usize, shutdown: watch::Receiver<bool>) {
        let presence = tokio::spawn(self.clone().report_presence(per_queue, shutdown.clone()));
        let mut tasks = Vec::new();
        for handler in &self.handlers {
            for n in 0..per_queue.max(1) {
                let pool = self.clone();
                let handler = handler.clone();
                let shutdown = shutdown.clone();
                let name = format!("{}/{}#{n}", self.name, handler.kind());
                tasks.push(tokio::spawn(async move {
                    pool.work(handler, name, shutdown).await
                }));
            }
        }
        for t in tasks {
            let _ = t.await;
        }
        presence.abort();
        if let Err(e) = self
            .store
            .worker_gone(&self.name, presence_cutoff(now_ms()))
            .await
        {
            tracing::warn!(worker = %self.name, error = %e, "worker presence not removed");
        }
    }

    /// Tells the store every `PRESENCE_INTERVAL` that this process works its queues, so the
    /// health endpoint, the metrics and the console see live workers on every host.
    async fn report_presence(self, per_queue: usize, mut shutdown: watch::Receiver<bool>) {
        let queues: Vec<&str> = self.handlers.iter().map(|h| h.kind()).collect();
        let queues = queues.join(",");
        let host = hostname();
        while !*shutdown.borrow() {
            if let Err(e) = self
                .store
                .worker_seen(&self.name, &host, &queues, per_queue.max(1) as i64)
                .await
            {
                tracing::warn!(worker = %self.name, error = %e, "worker presence not recorded");
            }
            tokio::select! {
                _ = tokio::time::sleep(PRESENCE_INTERVAL) => {}
                _ = shutdown.changed() => {}
            }
        }
    }

    async fn work(
        &self,
        handler: Arc<dyn TaskHandler>,
        name: String,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let lease_ms = self.lease.as_millis() as i64;
        while !*shutdown.borrow() {
            match self.store.claim_job(handler.kind(), &name, lease_ms).await {
                Ok(Some(job)) => self.run_job(handler.as_ref(), &name, job).await,
                Ok(None) => {
                    tokio::select! {
                        _ = tokio::time::sleep(self.idle_poll) => {}
                        _ = shutdown.changed() => {}
                    }
                }
                Err(e) => {
                    tracing::error!(worker = %name, error = %e, "claiming a job failed");
                    tokio::time::sleep(self.idle_poll * 4).await;
                }
            }
        }
    }

    async fn run_job(&self, handler: &dyn TaskHandler, name: &str, job: ClaimedJob) {
        tracing::info!(
            worker = name,
            task = job.task_id,
            attempt = job.attempt,
            "job started"
        );
        // A prompt changed in the console applies from the next job on, on every host.
        crate::prompts::refresh(&self.store).await;
        let ctx = TaskContext {
            store: self.store.clone(),
            task_id: job.task_id,
            input: job.input.clone(),
        };
        let lease_ms = self.lease.as_millis() as i64;
        let beat_every = self.lease / 3;
        // Heartbeats run as a task of their own, so a handler busy computing never lets its
        // lease lapse.
        let (lost_tx, lost_rx) = tokio::sync::oneshot::channel::<()>();
        let heartbeat = tokio::spawn({
            let store = self.store.clone();
            let name = name.to_string();
            let (job_id, task_id) = (job.job_id, job.task_id);
            async move {
                loop {
                    tokio::time::sleep(beat_every).await;
                    match store.heartbeat(job_id, &name, lease_ms).await {
                        Ok(true) => {}
                        // Lost the lease (cancelled, or taken over after a stall): stop this run.
                        Ok(false) => {
                            let _ = lost_tx.send(());
                            return;
                        }
                        Err(e) => tracing::warn!(task = task_id, error = %e, "heartbeat failed"),
                    }
                }
            }
        });
        let outcome = tokio::select! {
            r = handler.run(ctx) => Some(r),
            _ = lost_rx => None,
        };
        heartbeat.abort();
        let recorded = match outcome {
            None => {
                tracing::info!(task = job.task_id, "lease lost; run abandoned");
                return;
            }
            Some(Ok(output)) => self
                .store
                .complete_job_refunding(
                    job.job_id,
                    name,
                    &output.result,
                    output.refund,
                    output.refund_reason.as_deref().unwrap_or("部分未完成"),
                )
                .await
                .map(|_| ()),
            Some(Err(e)) => self
                .store
                .fail_job(job.job_id, name, &e.message, e.retryable)
                .await
                .map(|_| ()),
        };
        if let Err(e) = recorded {
            tracing::error!(task = job.task_id, error = %e, "job outcome not recorded");
        }
    }
}

/// Workers started with `WorkerPool::spawn`.
pub struct RunningWorkers {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningWorkers {
    /// Asks the workers to stop and waits until the jobs in hand are finished.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "worker".into())
}

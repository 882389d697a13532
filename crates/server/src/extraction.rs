//! Reading uploads off the request path: every document that is not small plain text is read
//! by a child process (`docio::isolated`) with an address-space cap, a CPU-time cap and a
//! wall-clock timeout, a bounded number at a time, at most one per caller. The request only
//! awaits the child, so a hostile file costs its own child and nothing else; if the caller goes
//! away, the child is killed with its whole process group (`pdftotext` included).

use crate::config::Config;
use docio::isolated::{ChildRequest, decode_reply, encode_request};
use docio::{DocError, Extracted, Format, Limits};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

/// The argument that makes the `wenjian` binary (or `wenjian-extract`) the reading child.
pub const CHILD_ARG: &str = "extract-child";

/// Plain text up to this size is decoded in the server itself (no parser to attack).
const IN_PROCESS_TEXT_BYTES: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error(transparent)]
    Document(#[from] DocError),
    /// All reading slots stayed busy for the whole wait.
    #[error("当前上传解析繁忙，请稍后重试")]
    Busy,
    /// This caller already has a document being read.
    #[error("您有一个文件正在解析，请等待其完成后再上传")]
    OnePerCaller,
    #[error("文档解析程序无法启动：{0}")]
    Unavailable(String),
}

pub struct Extractor {
    program: PathBuf,
    slots: Semaphore,
    queue_wait: Duration,
    timeout: Duration,
    memory_bytes: u64,
    /// Callers with a document being read.
    reading: Mutex<HashMap<String, Instant>>,
}

impl Extractor {
    pub fn new(config: &Config) -> Self {
        let program = config.extractor.clone().unwrap_or_else(|| {
            std::env::current_exe().unwrap_or_else(|_| PathBuf::from("wenjian"))
        });
        Extractor {
            program,
            slots: Semaphore::new(config.extract_concurrency.max(1)),
            queue_wait: Duration::from_secs(30),
            timeout: Duration::from_secs(config.extract_timeout_seconds.max(1)),
            memory_bytes: config.extract_memory_mb.max(64) * 1024 * 1024,
            reading: Mutex::new(HashMap::new()),
        }
    }

    /// Reads `bytes` for `caller` (a user or an address; one document at a time each).
    pub async fn extract(
        &self,
        caller: &str,
        bytes: Vec<u8>,
        file_name: &str,
        limits: Limits,
    ) -> Result<Extracted, ExtractError> {
        if bytes.len() > limits.max_bytes {
            // The same clear error the reader gives, without starting a child for it.
            return Ok(docio::extract(&bytes, file_name, &limits)?);
        }
        let plain = docio::detect(&bytes, file_name)? == Format::Text;
        if plain && bytes.len() <= IN_PROCESS_TEXT_BYTES {
            let name = file_name.to_string();
            return tokio::task::spawn_blocking(move || docio::extract(&bytes, &name, &limits))
                .await
                .map_err(|e| ExtractError::Unavailable(e.to_string()))?
                .map_err(ExtractError::from);
        }
        let _turn = self.claim(caller)?;
        let _slot = tokio::time::timeout(self.queue_wait, self.slots.acquire())
            .await
            .map_err(|_| ExtractError::Busy)?
            .map_err(|_| ExtractError::Busy)?;
        self.run_child(bytes, file_name, limits).await
    }

    fn claim(&self, caller: &str) -> Result<Turn<'_>, ExtractError> {
        let mut reading = self.reading.lock().unwrap_or_else(|e| e.into_inner());
        if reading.contains_key(caller) {
            return Err(ExtractError::OnePerCaller);
        }
        reading.insert(caller.to_string(), Instant::now());
        Ok(Turn {
            extractor: self,
            caller: caller.to_string(),
        })
    }

    async fn run_child(
        &self,
        bytes: Vec<u8>,
        file_name: &str,
        limits: Limits,
    ) -> Result<Extracted, ExtractError> {
        let request = ChildRequest {
            file_name: file_name.to_string(),
            limits,
            memory_bytes: self.memory_bytes,
            cpu_seconds: self.timeout.as_secs() + 1,
        };
        let mut command = tokio::process::Command::new(&self.program);
        command
            .arg(CHILD_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| ExtractError::Unavailable(format!("{}：{e}", self.program.display())))?;
        let group = ProcessGroup(child.id());
        let mut stdin = child.stdin.take();
        let input = encode_request(&request, &bytes);
        drop(bytes);
        let write = async move {
            if let Some(stdin) = stdin.as_mut() {
                let _ = stdin.write_all(&input).await;
                let _ = stdin.shutdown().await;
            }
        };
        let mut stdout = child.stdout.take();
        // The reply holds at most the character limit of text (as UTF-8 in JSON) and the
        // pictures asked for (as base64).
        let most = limits.max_chars as u64 * 16 + limits.image_bytes as u64 * 4 / 3 + (1 << 20);
        let read = async move {
            let mut out = Vec::new();
            if let Some(stdout) = stdout.as_mut() {
                let _ = stdout.take(most).read_to_end(&mut out).await;
            }
            out
        };
        let run = async {
            let ((), out) = tokio::join!(write, read);
            let _ = child.wait().await;
            out
        };
        let out = tokio::time::timeout(self.timeout, run).await.map_err(|_| {
            group.kill();
            DocError::TimedOut {
                seconds: self.timeout.as_secs(),
            }
        })?;
        group.kill();
        match decode_reply(&out) {
            Some(reply) => Ok(reply?),
            // No reply: a limit killed it (memory, CPU) or the parser crashed.
            None => Err(DocError::TooComplex {
                detail: "读取时超出内存或时间限制".into(),
            }
            .into()),
        }
    }
}

/// A caller's one reading in flight; ends when dropped (the request finished or went away).
struct Turn<'a> {
    extractor: &'a Extractor,
    caller: String,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.extractor
            .reading
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.caller);
    }
}

/// The child's process group, so `pdftotext` under it dies with it.
struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn kill(&self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .0
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            // A group already gone is no error.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

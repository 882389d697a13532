//! Reading a document in a child process, so that a hostile file costs a bounded amount of
//! memory and time and can be killed without touching the server: the parent writes one JSON
//! line (a [`ChildRequest`]) and then the document's bytes to the child's stdin; the child caps
//! its own address space and CPU time, lowers its priority, reads the document with the usual
//! limits and writes one [`Reply`] as JSON to stdout. A child killed by a limit writes nothing,
//! and the parent says so.

use crate::{DocError, Extracted, Limits};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildRequest {
    pub file_name: String,
    pub limits: Limits,
    /// Address-space cap of the child (and of `pdftotext`, which inherits it).
    pub memory_bytes: u64,
    pub cpu_seconds: u64,
}

pub type Reply = Result<Extracted, DocError>;

/// What the parent writes to the child's stdin: the request line, then the document.
pub fn encode_request(request: &ChildRequest, document: &[u8]) -> Vec<u8> {
    let mut out = serde_json::to_vec(request).unwrap_or_default();
    out.push(b'\n');
    out.extend_from_slice(document);
    out
}

/// The child's reply, or `None` when it wrote none (killed by a limit, or crashed).
pub fn decode_reply(stdout: &[u8]) -> Option<Reply> {
    serde_json::from_slice(stdout).ok()
}

/// The child's whole life; returns the process exit code.
pub fn child_main() -> i32 {
    // A malformed file may make a parser panic; the reply says what happened, the log need not
    // hold a backtrace per upload.
    std::panic::set_hook(Box::new(|_| {}));
    let mut stdin = std::io::stdin().lock();
    let mut line = Vec::new();
    if (&mut stdin)
        .take(64 * 1024)
        .read_until(b'\n', &mut line)
        .is_err()
    {
        return 2;
    }
    let Ok(request) = serde_json::from_slice::<ChildRequest>(&line) else {
        return 2;
    };
    apply_limits(request.memory_bytes, request.cpu_seconds);
    let mut document = Vec::new();
    let most = request.limits.max_bytes as u64 + 1;
    if stdin.take(most).read_to_end(&mut document).is_err() {
        return 2;
    }
    let reply: Reply =
        std::panic::catch_unwind(|| crate::extract(&document, &request.file_name, &request.limits))
            .unwrap_or_else(|_| {
                Err(DocError::TooComplex {
                    detail: "解析时出错".into(),
                })
            });
    let mut stdout = std::io::stdout().lock();
    if serde_json::to_writer(&mut stdout, &reply).is_err() || stdout.flush().is_err() {
        return 2;
    }
    0
}

#[cfg(unix)]
fn apply_limits(memory_bytes: u64, cpu_seconds: u64) {
    use rustix::process::{Resource, Rlimit, setpriority_process, setrlimit};
    let cap = |resource, value: u64| {
        let _ = setrlimit(
            resource,
            Rlimit {
                current: Some(value),
                maximum: Some(value),
            },
        );
    };
    if memory_bytes > 0 {
        cap(Resource::As, memory_bytes);
    }
    if cpu_seconds > 0 {
        cap(Resource::Cpu, cpu_seconds);
    }
    // Parsing yields to serving: the server's threads win the cores while a file is read.
    let _ = setpriority_process(None, 10);
}

#[cfg(not(unix))]
fn apply_limits(_memory_bytes: u64, _cpu_seconds: u64) {}

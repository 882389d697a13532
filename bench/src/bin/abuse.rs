//! Load and abuse of the real server: starts `wenjian serve` on a free port with an empty data
//! folder, registers users, and measures an authenticated page (requests/s, p50/p99/max latency)
//! for 2, 20 and 200 concurrent users, first alone, then while 4 hostile uploads (2 deflate-bomb
//! PDFs, 2 .docx files of empty paragraphs) are sent to `word_count` without pause. The server's
//! resident memory is sampled every 50 ms, alone and with its children (the upload readers,
//! `wenjian extract-child`). A last phase (`login_flood`) runs the largest load while 4 callers
//! log in to their own accounts without pause (Argon2id on every login). Prints one JSON line per
//! phase and a short summary; figures, never pass/fail. The hostile files are generated in
//! memory, never written to disk.
//!
//! ```text
//! cargo build --release -p wenjian -p wenjian-bench
//! target/release/abuse [WENJIAN_BINARY] [--duration 10] [--users 2,20,200]
//!     [--pages account,query_list] [--bomb-mib 2048] [--docx-paragraphs 30000000]
//! ```
//! The binary defaults to `$WENJIAN_BIN`, else `target/release/wenjian`.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wenjian_bench::percentile;

struct Args {
    binary: PathBuf,
    duration: Duration,
    users: Vec<usize>,
    pages: Vec<Page>,
    bomb_bytes: usize,
    docx_paragraphs: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Page {
    /// GET /api/base/account_info_api/account: balance, free checks, recent ledger.
    Account,
    /// POST /api/base/check_api/query_list {}: the user's check records.
    QueryList,
}

impl Page {
    fn name(self) -> &'static str {
        match self {
            Page::Account => "account",
            Page::QueryList => "query_list",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Page::Account => "/api/base/account_info_api/account",
            Page::QueryList => "/api/base/check_api/query_list",
        }
    }
}

fn parse_args() -> Args {
    let mut args = Args {
        binary: std::env::var("WENJIAN_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from("target/release/wenjian")),
        duration: Duration::from_secs(10),
        users: vec![2, 20, 200],
        pages: vec![Page::Account, Page::QueryList],
        bomb_bytes: 2048 << 20,
        docx_paragraphs: 30_000_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| panic!("{name} needs a value"));
        match arg.as_str() {
            "--duration" => args.duration = Duration::from_secs_f64(num(&value("--duration"))),
            "--users" => {
                args.users = value("--users")
                    .split(',')
                    .map(|n| num(n) as usize)
                    .collect()
            }
            "--pages" => {
                args.pages = value("--pages")
                    .split(',')
                    .map(|p| match p {
                        "account" => Page::Account,
                        "query_list" => Page::QueryList,
                        other => panic!("unknown page {other} (account, query_list)"),
                    })
                    .collect()
            }
            "--bomb-mib" => args.bomb_bytes = (num(&value("--bomb-mib")) as usize) << 20,
            "--docx-paragraphs" => args.docx_paragraphs = num(&value("--docx-paragraphs")) as usize,
            "-h" | "--help" => {
                eprintln!(
                    "abuse [WENJIAN_BINARY] [--duration SECS] [--users 2,20,200] \
                     [--pages account,query_list] [--bomb-mib 2048] [--docx-paragraphs 30000000]"
                );
                std::process::exit(0);
            }
            other if !other.starts_with("--") => args.binary = PathBuf::from(other),
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

fn num(s: &str) -> f64 {
    s.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s}"))
}

/// The server process; sent SIGTERM (then killed) when dropped.
struct Server {
    child: Child,
    base: String,
    log: PathBuf,
    _data: tempfile::TempDir,
}

impl Server {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn start(binary: &PathBuf) -> Server {
        let data = tempfile::tempdir().expect("temporary folder");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = data.path().join("server.log");
        let log_file = std::fs::File::create(&log).expect("server log");
        let child = Command::new(binary)
            .arg("serve")
            .env("WENJIAN_LISTEN", format!("127.0.0.1:{port}"))
            .env("WENJIAN_DATA_DIR", data.path())
            .env("WENJIAN_REGISTER_MAX_PER_IP_PER_HOUR", "100000")
            .env("WENJIAN_REGISTER_MAX_PER_MINUTE", "100000")
            .env("WENJIAN_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("server log"))
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
            _data: data,
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    async fn wait_healthy(&mut self, client: &reqwest::Client) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the server exited ({status}):\n{}", self.log_tail());
            }
            if let Ok(r) = client.get(format!("{}/api/health", self.base)).send().await
                && r.status().is_success()
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not answer /api/health within 120 s:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `/proc/<pid>/status` field in KiB.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Every process descended from `root` (children, grandchildren, …).
fn descendants(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid …"; comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        if let Some(ppid) = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok())
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        if let Some(kids) = children.get(&p) {
            out.extend(kids);
            stack.extend(kids);
        }
    }
    out
}

#[derive(Debug, Clone, Copy, Default)]
struct Peaks {
    /// The server process alone, KiB.
    server_kib: u64,
    /// The server and its descendants at the same instant, KiB.
    total_kib: u64,
    /// Most descendants alive at once.
    children: usize,
    samples: u64,
}

/// Samples the server's resident memory every 50 ms on its own thread; `take` returns the peaks
/// since the last `take`.
struct Sampler {
    peaks: Arc<Mutex<Peaks>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    fn start(pid: u32) -> Sampler {
        let peaks = Arc::new(Mutex::new(Peaks::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (peaks, stop) = (peaks.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let server = status_kib(pid, "VmRSS:").unwrap_or(0);
                    let kids = descendants(pid);
                    let total = server
                        + kids
                            .iter()
                            .filter_map(|&k| status_kib(k, "VmRSS:"))
                            .sum::<u64>();
                    {
                        let mut p = peaks.lock().unwrap();
                        p.server_kib = p.server_kib.max(server);
                        p.total_kib = p.total_kib.max(total);
                        p.children = p.children.max(kids.len());
                        p.samples += 1;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        Sampler {
            peaks,
            stop,
            thread: Some(thread),
        }
    }

    fn take(&self) -> Peaks {
        std::mem::take(&mut *self.peaks.lock().unwrap())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `code` of an error envelope, else an empty string.
fn error_code(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

async fn register(client: &reqwest::Client, base: &str, i: usize) -> String {
    let password = format!("Bench-pass-2026-{i}");
    let username = format!("benchuser{i}");
    let response = client
        .post(format!("{base}/api/base/login_api/f/register"))
        .json(&json!({ "username": username, "password": password }))
        .send()
        .await
        .expect("register request");
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    body.pointer("/result/access_token")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| panic!("registering {username}: {status} {body}"))
}

/// One phase's latencies and answers.
struct Measured {
    latencies_ms: Vec<f64>,
    answers: BTreeMap<String, u64>,
    elapsed: Duration,
}

/// `users` tasks, each with its own token, requesting `page` one after another for `duration`.
async fn load(
    client: &reqwest::Client,
    base: &str,
    tokens: &[String],
    page: Page,
    users: usize,
    duration: Duration,
) -> Measured {
    let start = Instant::now();
    let deadline = start + duration;
    let url = format!("{base}{}", page.path());
    let mut tasks = Vec::new();
    for u in 0..users {
        let client = client.clone();
        let url = url.clone();
        let token = tokens[u % tokens.len()].clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut answers: BTreeMap<String, u64> = BTreeMap::new();
            while Instant::now() < deadline {
                let sent = Instant::now();
                let request = match page {
                    Page::Account => client.get(&url),
                    Page::QueryList => client.post(&url).json(&json!({})),
                };
                let result = request.bearer_auth(&token).send().await;
                let key = match result {
                    Ok(response) => {
                        let status = response.status();
                        let body = response.bytes().await.unwrap_or_default();
                        latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
                        if status == StatusCode::OK {
                            "200".to_string()
                        } else {
                            format!("{} {}", status.as_u16(), error_code(&body))
                        }
                    }
                    Err(e) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        format!("transport: {}", transport_kind(&e))
                    }
                };
                *answers.entry(key).or_default() += 1;
            }
            (latencies, answers)
        }));
    }
    let mut measured = Measured {
        latencies_ms: Vec::new(),
        answers: BTreeMap::new(),
        elapsed: Duration::ZERO,
    };
    for task in tasks {
        let (latencies, answers) = task.await.expect("load task");
        measured.latencies_ms.extend(latencies);
        for (k, n) in answers {
            *measured.answers.entry(k).or_default() += n;
        }
    }
    measured.elapsed = start.elapsed();
    measured
        .latencies_ms
        .sort_by(|a, b| a.partial_cmp(b).unwrap());
    measured
}

fn transport_kind(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else if e.is_body() || e.is_decode() {
        "body"
    } else {
        "request"
    }
}

/// One answer to a hostile upload.
struct HostileAnswer {
    finished: Instant,
    kind: &'static str,
    answer: String,
    seconds: f64,
}

/// Sends `file` to `word_count` as `token`'s upload, again and again until `stop`.
fn hostile_loop(
    client: reqwest::Client,
    base: String,
    token: String,
    kind: &'static str,
    file: Arc<Vec<u8>>,
    answers: Arc<Mutex<Vec<HostileAnswer>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let (file_name, mime) = match kind {
            "pdf_bomb" => ("bomb.pdf", "application/pdf"),
            _ => (
                "empty.docx",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            ),
        };
        loop {
            let part = reqwest::multipart::Part::bytes(file.as_ref().clone())
                .file_name(file_name)
                .mime_str(mime)
                .expect("mime");
            let form = reqwest::multipart::Form::new().part("file", part);
            let sent = Instant::now();
            let result = client
                .post(format!("{base}/api/base/check_api/word_count"))
                .bearer_auth(&token)
                .multipart(form)
                .send()
                .await;
            let answer = describe(result).await;
            let failed = answer.starts_with("transport");
            answers.lock().unwrap().push(HostileAnswer {
                finished: Instant::now(),
                kind,
                answer,
                seconds: sent.elapsed().as_secs_f64(),
            });
            if failed {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    })
}

/// An answer as "status error_code" (or "status" alone), or the transport failure.
async fn describe(result: reqwest::Result<reqwest::Response>) -> String {
    match result {
        Ok(response) => {
            let status = response.status();
            let body = response.bytes().await.unwrap_or_default();
            format!("{} {}", status.as_u16(), error_code(&body))
                .trim()
                .to_string()
        }
        Err(e) => format!("transport: {}", transport_kind(&e)),
    }
}

/// Logs in as `benchuser<i>` with the right password, again and again until aborted.
fn login_loop(
    client: reqwest::Client,
    base: String,
    i: usize,
    answers: Arc<Mutex<Vec<HostileAnswer>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let form = json!({ "username": format!("benchuser{i}"), "password": format!("Bench-pass-2026-{i}") });
        loop {
            let sent = Instant::now();
            let result = client
                .post(format!("{base}/api/base/login_api/f/login"))
                .json(&form)
                .send()
                .await;
            let answer = describe(result).await;
            let failed = answer != "200";
            answers.lock().unwrap().push(HostileAnswer {
                finished: Instant::now(),
                kind: "login",
                answer,
                seconds: sent.elapsed().as_secs_f64(),
            });
            if failed {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    })
}

fn mib(kib: u64) -> f64 {
    (kib as f64 / 1024.0 * 10.0).round() / 10.0
}

fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    let most_users = args.users.iter().copied().max().unwrap_or(0).max(1);

    // The hostile files, generated in memory before the server starts.
    let (bomb, docx) = {
        let (bomb_bytes, paragraphs) = (args.bomb_bytes, args.docx_paragraphs);
        let bomb = std::thread::spawn(move || {
            let t = Instant::now();
            (docio::hostile::deflate_bomb_pdf(bomb_bytes), t.elapsed())
        });
        let docx = std::thread::spawn(move || {
            let t = Instant::now();
            (
                docio::hostile::empty_paragraphs_docx(paragraphs),
                t.elapsed(),
            )
        });
        (bomb.join().unwrap(), docx.join().unwrap())
    };
    println!(
        "{}",
        json!({
            "phase": "hostile_files",
            "pdf_bomb_bytes": bomb.0.len(),
            "pdf_bomb_expanded_bytes": args.bomb_bytes,
            "pdf_bomb_generate_s": round(bomb.1.as_secs_f64(), 2),
            "docx_bytes": docx.0.len(),
            "docx_empty_paragraphs": args.docx_paragraphs,
            "docx_expanded_bytes": args.docx_paragraphs * 6,
            "docx_generate_s": round(docx.1.as_secs_f64(), 2),
        })
    );
    let (bomb, docx) = (Arc::new(bomb.0), Arc::new(docx.0));

    let mut server = Server::start(&args.binary);
    // The server closes connections idle for 10 s; the pool forgets them sooner.
    let client = reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(60))
        .build()
        .expect("HTTP client");
    let started = Instant::now();
    server.wait_healthy(&client).await;
    let startup_s = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pid = server.pid();
    let idle_kib = status_kib(pid, "VmRSS:").unwrap_or(0);

    // Users: one per concurrent load user, and four more for the hostile uploads.
    let t = Instant::now();
    let mut tokens = Vec::new();
    // Sixteen at a time: the setup, not a measurement (a burst of hundreds of registrations at
    // once raises the server's high-water mark by itself).
    for batch in (0..most_users + 4).collect::<Vec<_>>().chunks(16) {
        let registering: Vec<_> = batch
            .iter()
            .map(|&i| {
                let (client, base) = (client.clone(), server.base.clone());
                tokio::spawn(async move { register(&client, &base, i).await })
            })
            .collect();
        for r in registering {
            tokens.push(r.await.expect("register task"));
        }
    }
    let hostile_tokens = tokens.split_off(most_users);
    let registered_kib = status_kib(pid, "VmRSS:").unwrap_or(0);
    println!(
        "{}",
        json!({
            "phase": "idle",
            "startup_s": round(startup_s, 2),
            "idle_rss_mib": mib(idle_kib),
            "users_registered": most_users + 4,
            "register_s": round(t.elapsed().as_secs_f64(), 2),
            "rss_after_register_mib": mib(registered_kib),
            "server_vmhwm_after_register_mib": mib(status_kib(pid, "VmHWM:").unwrap_or(0)),
        })
    );

    let sampler = Sampler::start(pid);
    let mut results: Vec<Value> = Vec::new();
    let mut run_phase = |phase: &'static str,
                         page: Page,
                         users: usize,
                         measured: Measured,
                         peaks: Peaks,
                         hostile: Option<Value>| {
        let lat = &measured.latencies_ms;
        let n = lat.len();
        let mut line = json!({
            "phase": phase,
            "page": page.name(),
            "users": users,
            "duration_s": round(measured.elapsed.as_secs_f64(), 2),
            "requests": n,
            "requests_per_s": round(n as f64 / measured.elapsed.as_secs_f64(), 1),
            "p50_ms": round(percentile(lat, 50.0), 1),
            "p99_ms": round(percentile(lat, 99.0), 1),
            "max_ms": round(lat.last().copied().unwrap_or(0.0), 1),
            "mean_ms": round(lat.iter().sum::<f64>() / n.max(1) as f64, 1),
            "answers": measured.answers,
            "idle_rss_mib": mib(idle_kib),
            "peak_server_rss_mib": mib(peaks.server_kib),
            "peak_server_and_children_rss_mib": mib(peaks.total_kib),
            "peak_over_idle_mib": mib(peaks.total_kib.saturating_sub(idle_kib)),
            "most_children": peaks.children,
            "rss_samples": peaks.samples,
            "server_vmhwm_mib": mib(status_kib(pid, "VmHWM:").unwrap_or(0)),
        });
        if let Some(h) = hostile {
            line["hostile"] = h;
        }
        println!("{line}");
        results.push(line);
    };

    // Load alone.
    for &page in &args.pages {
        for &users in &args.users {
            sampler.take();
            let m = load(&client, &server.base, &tokens, page, users, args.duration).await;
            run_phase("load", page, users, m, sampler.take(), None);
        }
    }

    // Load while four hostile uploads run without pause, each from its own user.
    let upload_client = reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(180))
        .build()
        .expect("HTTP client");
    let answers: Arc<Mutex<Vec<HostileAnswer>>> = Arc::default();
    let hostile_started = Instant::now();
    let hostile: Vec<_> = hostile_tokens
        .iter()
        .enumerate()
        .map(|(i, token)| {
            let (kind, file) = if i % 2 == 0 {
                ("pdf_bomb", bomb.clone())
            } else {
                ("docx_empty_paragraphs", docx.clone())
            };
            hostile_loop(
                upload_client.clone(),
                server.base.clone(),
                token.clone(),
                kind,
                file,
                answers.clone(),
            )
        })
        .collect();
    // Let the first readings start before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for &page in &args.pages {
        for &users in &args.users {
            sampler.take();
            let from = Instant::now();
            let m = load(&client, &server.base, &tokens, page, users, args.duration).await;
            let peaks = sampler.take();
            let to = Instant::now();
            let summary = hostile_summary(&answers.lock().unwrap(), from, to);
            run_phase("abuse", page, users, m, peaks, Some(summary));
        }
    }
    for h in &hostile {
        h.abort();
    }
    let hostile_s = hostile_started.elapsed();
    let all = hostile_summary(&answers.lock().unwrap(), hostile_started, Instant::now());

    // Beyond the issue's list: password hashing (Argon2id) is the dearest thing a caller can ask
    // for without a file, so four callers log in to their own accounts without pause while the
    // largest load runs on the first page.
    if let (Some(&page), Some(&users)) = (args.pages.first(), args.users.iter().max()) {
        let logins: Arc<Mutex<Vec<HostileAnswer>>> = Arc::default();
        let flood: Vec<_> = (most_users..most_users + 4)
            .map(|i| login_loop(client.clone(), server.base.clone(), i, logins.clone()))
            .collect();
        tokio::time::sleep(Duration::from_millis(500)).await;
        sampler.take();
        let from = Instant::now();
        let m = load(&client, &server.base, &tokens, page, users, args.duration).await;
        let peaks = sampler.take();
        let summary = hostile_summary(&logins.lock().unwrap(), from, Instant::now());
        for f in &flood {
            f.abort();
        }
        run_phase("login_flood", page, users, m, peaks, Some(summary));
    }
    let whole = sampler.take();
    drop(sampler);
    // The server's own high-water mark covers spikes between samples.
    let hwm_kib = status_kib(pid, "VmHWM:").unwrap_or(0);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after_kib = status_kib(pid, "VmRSS:").unwrap_or(0);
    let children_after = descendants(pid).len();
    let peak_total = results
        .iter()
        .filter_map(|r| r["peak_server_and_children_rss_mib"].as_f64())
        .fold(mib(whole.total_kib), f64::max);
    let peak_server = results
        .iter()
        .filter_map(|r| r["peak_server_rss_mib"].as_f64())
        .fold(mib(whole.server_kib), f64::max);
    println!(
        "{}",
        json!({
            "phase": "end",
            "hostile_seconds": round(hostile_s.as_secs_f64(), 1),
            "hostile_answers": all,
            "idle_rss_mib": mib(idle_kib),
            "peak_server_rss_mib": peak_server,
            "peak_server_and_children_rss_mib": peak_total,
            "peak_over_idle_mib": round(peak_total - mib(idle_kib), 1),
            "server_vmhwm_mib": mib(hwm_kib),
            "rss_after_abuse_mib": mib(after_kib),
            "children_left_after_abuse": children_after,
        })
    );

    println!();
    println!(
        "Summary ({} cores, {} s per phase; latency of the authenticated page, peak RSS of the server with its reading children):",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        args.duration.as_secs_f64()
    );
    for r in &results {
        let non_ok: u64 = r["answers"]
            .as_object()
            .map(|a| {
                a.iter()
                    .filter(|(k, _)| k.as_str() != "200")
                    .filter_map(|(_, v)| v.as_u64())
                    .sum()
            })
            .unwrap_or(0);
        let f = |key: &str| r[key].as_f64().unwrap_or(0.0);
        println!(
            "  {:11} {:10} {:>3} users: {:>8.1} req/s  p50 {:>6.1} ms  p99 {:>6.1} ms  max {:>7.1} ms  non-200 {:>5}  peak RSS {:>6.1} MiB (server {:>6.1})",
            r["phase"].as_str().unwrap_or(""),
            r["page"].as_str().unwrap_or(""),
            f("users"),
            f("requests_per_s"),
            f("p50_ms"),
            f("p99_ms"),
            f("max_ms"),
            non_ok,
            f("peak_server_and_children_rss_mib"),
            f("peak_server_rss_mib"),
        );
        if let Some(side) = r["hostile"].as_object() {
            for (kind, v) in side {
                println!(
                    "  {:>28} {kind}: {} (longest answer {} s)",
                    "", v["answers"], v["max_answer_s"]
                );
            }
        }
    }
    println!(
        "  hostile answers over {:.0} s: {all}",
        hostile_s.as_secs_f64()
    );
    println!(
        "  idle RSS {} MiB; peak {} MiB with children ({} MiB over idle); server alone {} MiB (VmHWM {} MiB); {} MiB three seconds after the abuse",
        mib(idle_kib),
        peak_total,
        round(peak_total - mib(idle_kib), 1),
        peak_server,
        mib(hwm_kib),
        mib(after_kib),
    );
    drop(server);
}

/// Counts of the hostile answers that arrived between `from` and `to`, per file kind, with the
/// mean and longest time to answer.
fn hostile_summary(answers: &[HostileAnswer], from: Instant, to: Instant) -> Value {
    let mut out = serde_json::Map::new();
    let mut kinds: Vec<&str> = answers.iter().map(|a| a.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let mine: Vec<&HostileAnswer> = answers
            .iter()
            .filter(|a| a.kind == kind && a.finished >= from && a.finished <= to)
            .collect();
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        for a in &mine {
            *counts.entry(a.answer.as_str()).or_default() += 1;
        }
        let secs: Vec<f64> = mine.iter().map(|a| a.seconds).collect();
        out.insert(
            kind.to_string(),
            json!({
                "answers": counts,
                "mean_answer_s": round(secs.iter().sum::<f64>() / secs.len().max(1) as f64, 2),
                "max_answer_s": round(secs.iter().copied().fold(0.0, f64::max), 2),
            }),
        );
    }
    Value::Object(out)
}

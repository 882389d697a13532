//! Tasks per minute with 1, 2 and 4 `wenjian worker` processes against one PostgreSQL
//! database: the scale-out layout of docs/deploy.md on this machine. A library of real
//! abstracts is imported into the database library, paid check tasks of real prose are queued,
//! then N worker processes (separate binaries, as on other hosts) drain the queue; the figure is
//! tasks finished per minute from the workers' start (their model loading included) and from
//! the first task's end (steady state).
//!
//!   cargo build --release -p wenjian && \
//!   cargo run --release -p wenjian-bench --bin workers-throughput -- 1 2 4
//!
//! Environment: `WENJIAN_BIN` (default target/release/wenjian), `THROUGHPUT_TASKS` (per run,
//! default 24), `THROUGHPUT_PAPER_CHARS` (default 10,000), `WENJIAN_TEST_POSTGRES_URL` (the
//! server to create a throwaway database on). Needs `../shared/data` (the CSL abstracts).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use store::Store;

fn abstracts(data: &std::path::Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(data.join("corpus/csl-abstracts-a.json")).expect("CSL abstracts");
    let value: serde_json::Value = serde_json::from_slice(&bytes).expect("CSL JSON");
    value
        .as_object()
        .expect("fields")
        .values()
        .flat_map(|rows| rows.as_array().cloned().unwrap_or_default())
        .map(|row| {
            (
                row["title"].as_str().unwrap_or_default().to_string(),
                row["abstract"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

struct Workers(Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(data) = wenjian_bench::eval_data_dir() else {
        eprintln!("workers-throughput: no evaluation data; skipped");
        return;
    };
    let counts = wenjian_bench::numbers_from_args(&[1, 2, 4]);
    let tasks: usize = std::env::var("THROUGHPUT_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let paper_chars: usize = std::env::var("THROUGHPUT_PAPER_CHARS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let bin = std::env::var("WENJIAN_BIN").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/wenjian").to_string()
    });

    let db = store::testing::TestDb::postgres().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let records = abstracts(&data);
    // Library: the even records; papers: the odd ones, with a library abstract pasted in.
    let jsonl: String = records
        .iter()
        .step_by(2)
        .map(|(title, text)| serde_json::json!({"title": title, "text": text}).to_string() + "\n")
        .collect();
    std::fs::write(dir.path().join("library.jsonl"), jsonl).expect("write");
    let env = |cmd: &mut Command| {
        cmd.env("WENJIAN_DATA_DIR", dir.path())
            .env("WENJIAN_DATABASE_URL", &db.url)
            .env("WENJIAN_LIBRARY_BACKEND", "database")
            .env("WENJIAN_FILES_BACKEND", "database")
            .env("WENJIAN_MODELS_DIR", wenjian_bench::models_dir())
            .env("RUST_LOG", "warn");
    };
    let mut import = Command::new(&bin);
    env(&mut import);
    let imported = import
        .args(["corpus", "import"])
        .arg(dir.path().join("library.jsonl"))
        .stdout(Stdio::null())
        .status()
        .expect("run wenjian corpus import");
    assert!(imported.success(), "corpus import failed");

    let store: &Store = &db.store;
    let user = store
        .create_user("throughput", "password-1", false)
        .await
        .expect("user")
        .id;
    let own: Vec<&String> = records.iter().skip(1).step_by(2).map(|(_, t)| t).collect();
    let library: Vec<&String> = records.iter().step_by(2).map(|(_, t)| t).collect();
    let mut runs = Vec::new();
    let mut next = 0usize;
    for &workers in &counts {
        store
            .operator_credit(user, 1_000 * tasks as i64, 0, "基准测试")
            .await
            .expect("credit");
        let mut ids = Vec::new();
        for _ in 0..tasks {
            let mut text = String::new();
            while text.chars().count() < paper_chars {
                text.push_str(own[next % own.len()]);
                text.push('\n');
                if next.is_multiple_of(4) {
                    text.push_str(library[next * 7 % library.len()]);
                    text.push('\n');
                }
                next += 1;
            }
            let input = serde_json::json!({"text": text, "owner": user, "title": "基准论文"});
            let task = store::testing::queued_task(
                store,
                user,
                "check",
                "基准论文",
                &input.to_string(),
                1_000,
            )
            .await;
            ids.push(task.id);
        }
        let began = Instant::now();
        let _running = Workers(
            (0..workers)
                .map(|_| {
                    let mut cmd = Command::new(&bin);
                    env(&mut cmd);
                    cmd.arg("worker")
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .expect("spawn worker")
                })
                .collect(),
        );
        let mut first_done: Option<f64> = None;
        let mut done;
        loop {
            done = 0;
            let mut failed = 0;
            for &id in &ids {
                let task = store.task(id, user).await.expect("task");
                if task.status.is_final() {
                    done += 1;
                    if task.status != store::TaskStatus::Done {
                        failed += 1;
                    }
                }
            }
            if done > 0 && first_done.is_none() {
                first_done = Some(began.elapsed().as_secs_f64());
            }
            assert_eq!(failed, 0, "a task failed");
            if done == ids.len() || began.elapsed() > Duration::from_secs(1_800) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let seconds = began.elapsed().as_secs_f64();
        let first = first_done.unwrap_or(seconds);
        let steady = if done > 1 && seconds > first {
            (done - 1) as f64 * 60.0 / (seconds - first)
        } else {
            0.0
        };
        eprintln!("{workers} worker(s): {done} tasks in {seconds:.1} s");
        runs.push(serde_json::json!({
            "workers": workers,
            "tasks": done,
            "seconds": seconds,
            "first_task_done_seconds": first,
            "tasks_per_minute": done as f64 * 60.0 / seconds,
            "tasks_per_minute_after_first": steady,
        }));
    }
    let out = serde_json::json!({
        "bench": "workers-throughput",
        "library_docs": library.len(),
        "paper_chars": paper_chars,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "runs": runs,
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
    db.cleanup().await;
}

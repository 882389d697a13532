//! The Prometheus text exposition (format 0.0.4) of what `/api/metrics` serves: queue depth
//! and waiting age, live workers and their last heartbeat, finished tasks' latency.

use std::fmt::Write;
use store::{QueueDepth, TaskLatency, WorkerPresence};

/// A label value with `\`, `"` and newlines escaped, as the format asks.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One metric family: its help and type lines, then its samples.
fn family(out: &mut String, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    for (labels, value) in samples {
        if labels.is_empty() {
            let _ = writeln!(out, "{name} {value}");
        } else {
            let _ = writeln!(out, "{name}{{{labels}}} {value}");
        }
    }
}

pub fn exposition(
    queues: &[QueueDepth],
    workers: &[WorkerPresence],
    latencies: &[TaskLatency],
    now_ms: i64,
) -> String {
    let mut out = String::new();
    let per_state: Vec<(String, f64)> = queues
        .iter()
        .flat_map(|q| {
            [
                ("waiting", q.waiting),
                ("running", q.running),
                ("stalled", q.stalled),
            ]
            .map(|(state, n)| {
                (
                    format!("queue=\"{}\",state=\"{state}\"", label(&q.queue)),
                    n as f64,
                )
            })
        })
        .collect();
    family(
        &mut out,
        "wenjian_queue_jobs",
        "gauge",
        "Unfinished jobs per queue: waiting, running (lease held), stalled (lease ran out).",
        &per_state,
    );
    family(
        &mut out,
        "wenjian_queue_oldest_waiting_seconds",
        "gauge",
        "Age of the oldest job that is due and not yet claimed.",
        &queues
            .iter()
            .map(|q| {
                (
                    format!("queue=\"{}\"", label(&q.queue)),
                    q.oldest_waiting_ms as f64 / 1000.0,
                )
            })
            .collect::<Vec<_>>(),
    );
    family(
        &mut out,
        "wenjian_workers_live",
        "gauge",
        "Worker processes that reported within the staleness window, on any host.",
        &[(String::new(), workers.len() as f64)],
    );
    family(
        &mut out,
        "wenjian_worker_heartbeat_age_seconds",
        "gauge",
        "Seconds since each live worker process last reported.",
        &workers
            .iter()
            .map(|w| {
                (
                    format!("worker=\"{}\",host=\"{}\"", label(&w.name), label(&w.host)),
                    (now_ms - w.seen_at).max(0) as f64 / 1000.0,
                )
            })
            .collect::<Vec<_>>(),
    );
    let mut quantiles = Vec::new();
    let mut counts = Vec::new();
    for l in latencies {
        let base = format!(
            "kind=\"{}\",status=\"{}\"",
            label(&l.kind),
            label(&l.status)
        );
        for (q, ms) in [("0.5", l.p50_ms), ("0.95", l.p95_ms), ("1", l.max_ms)] {
            quantiles.push((format!("{base},quantile=\"{q}\""), ms as f64 / 1000.0));
        }
        counts.push((base, l.count as f64));
    }
    family(
        &mut out,
        "wenjian_task_latency_seconds",
        "gauge",
        "Time from submission to the end of tasks that ended in the last hour, by quantile.",
        &quantiles,
    );
    family(
        &mut out,
        "wenjian_tasks_ended",
        "gauge",
        "Tasks that ended in the last hour.",
        &counts,
    );
    out
}

/// Compares a presented secret with the configured one in time that does not depend on where
/// they differ.
pub fn same_secret(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_follow_the_text_format() {
        let text = exposition(
            &[QueueDepth {
                queue: "check".into(),
                waiting: 3,
                running: 1,
                stalled: 0,
                oldest_waiting_ms: 12_500,
            }],
            &[WorkerPresence {
                name: "w\"1".into(),
                host: "h".into(),
                queues: "check".into(),
                per_queue: 1,
                started_at: 0,
                seen_at: 9_000,
            }],
            &[TaskLatency {
                kind: "check".into(),
                status: "done".into(),
                count: 4,
                p50_ms: 1_500,
                p95_ms: 3_000,
                max_ms: 4_000,
            }],
            10_000,
        );
        assert!(text.contains("wenjian_queue_jobs{queue=\"check\",state=\"waiting\"} 3\n"));
        assert!(text.contains("wenjian_queue_oldest_waiting_seconds{queue=\"check\"} 12.5\n"));
        assert!(text.contains("wenjian_workers_live 1\n"));
        assert!(text.contains("worker=\"w\\\"1\",host=\"h\"} 1\n"));
        assert!(text.contains(
            "wenjian_task_latency_seconds{kind=\"check\",status=\"done\",quantile=\"0.95\"} 3\n"
        ));
        // Every sample line is `name{labels} value` or `name value`.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
    }
}

//! Payment notifications under load (issue 23): exactly once, and how fast. For each size, top-up
//! orders are made for one account and every order is notified ten times — five times under one
//! notification id (a provider resending) and five under ids of their own (a provider and our
//! reconciliation both reporting it) — all shuffled and recorded by 16 concurrent callers through
//! `Store::record_payment`, on SQLite and on PostgreSQL. Then the account is read back: the balance
//! must be the sum of the orders' credits, the ledger must hold one row per order, and every
//! order must be paid. Prints one JSON line per backend and size (notifications/s, p50/p95 of a
//! call, what was recorded); figures, never pass/fail — a broken exactly-once is printed as
//! `"exactly_once": false`.
//!
//! ```text
//! cargo build --release -p wenjian-bench --bin notify-bench
//! target/release/notify-bench [--sizes 100,1000,10000] [--backends sqlite,postgres]
//! ```
//! PostgreSQL is reached as the store tests reach it (`WENJIAN_TEST_POSTGRES_URL`, default the
//! local server), in a database of its own that is dropped afterwards.

use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use store::testing::TestDb;
use store::{NewOrder, OrderKind, OrderStatus, PaymentNotice, PaymentOutcome};
use wenjian_bench::percentile;

const CALLERS: usize = 16;
const NOTICES_PER_ORDER: usize = 10;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// A fixed shuffle (xorshift), so runs are comparable.
fn shuffle<T>(items: &mut [T]) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in (1..items.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        items.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

async fn run(
    backend: &str,
    notices: usize,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let db = match backend {
        "postgres" => TestDb::postgres().await,
        _ => TestDb::sqlite().await,
    };
    let store = db.store.clone();
    let user = store
        .create_user("bench_payer", "bench-pass-1", false)
        .await?;
    let orders_wanted = notices.div_ceil(NOTICES_PER_ORDER);
    let mut orders = Vec::with_capacity(orders_wanted);
    let started = Instant::now();
    for i in 0..orders_wanted {
        let fen = 100 + i as i64;
        orders.push(
            store
                .create_order(&NewOrder {
                    user_id: user.id,
                    kind: OrderKind::TopUp,
                    channel: "wechat",
                    title: "账户充值",
                    amount_fen: fen,
                    credit_fen: fen,
                    product: None,
                    task_id: None,
                    ttl_ms: 3_600_000,
                })
                .await?,
        );
    }
    let create_s = started.elapsed().as_secs_f64();
    let mut work: Vec<(usize, String)> = Vec::with_capacity(notices);
    for (k, _) in orders.iter().enumerate() {
        for j in 0..NOTICES_PER_ORDER {
            let event = if j % 2 == 0 {
                format!("resent-{k}")
            } else {
                format!("evt-{k}-{j}")
            };
            work.push((k, event));
        }
    }
    work.truncate(notices);
    shuffle(&mut work);
    let orders = Arc::new(orders);
    let queue = Arc::new(Mutex::new(work));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(notices)));
    let outcomes = Arc::new(Mutex::new([0usize; 4]));
    let started = Instant::now();
    let mut callers = Vec::new();
    for _ in 0..CALLERS {
        let (store, orders, queue, latencies, outcomes) = (
            store.clone(),
            orders.clone(),
            queue.clone(),
            latencies.clone(),
            outcomes.clone(),
        );
        callers.push(tokio::spawn(async move {
            loop {
                let Some((k, event)) = queue.lock().unwrap().pop() else {
                    break;
                };
                let order = &orders[k];
                let t = Instant::now();
                let outcome = store
                    .record_payment(&PaymentNotice {
                        provider: "wechat",
                        event_id: &event,
                        out_trade_no: &order.out_trade_no,
                        amount_fen: order.amount_fen,
                        provider_trade_no: "4200000000",
                    })
                    .await;
                latencies
                    .lock()
                    .unwrap()
                    .push(t.elapsed().as_secs_f64() * 1000.0);
                let slot = match outcome {
                    Ok(PaymentOutcome::Paid(_)) => 0,
                    Ok(PaymentOutcome::AlreadyPaid(_) | PaymentOutcome::Duplicate) => 1,
                    Ok(_) => 2,
                    Err(_) => 3,
                };
                outcomes.lock().unwrap()[slot] += 1;
            }
        }));
    }
    for caller in callers {
        caller.await?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let account = store.account(user.id).await?;
    let ledger_rows = store.ledger(user.id, i64::MAX).await?.len();
    let expected_fen: i64 = orders.iter().map(|o| o.credit_fen).sum();
    let mut unpaid = 0;
    for o in orders.iter() {
        if store.order(o.id, user.id).await?.status != OrderStatus::Paid {
            unpaid += 1;
        }
    }
    let mut ms = latencies.lock().unwrap().clone();
    ms.sort_by(f64::total_cmp);
    let [paid, repeats, refused, errors] = *outcomes.lock().unwrap();
    db.cleanup().await;
    Ok(json!({
        "backend": backend,
        "notifications": notices,
        "orders": orders.len(),
        "callers": CALLERS,
        "orders_created_s": (create_s * 100.0).round() / 100.0,
        "seconds": (seconds * 100.0).round() / 100.0,
        "notifications_per_s": (notices as f64 / seconds).round(),
        "p50_ms": (percentile(&ms, 50.0) * 10.0).round() / 10.0,
        "p95_ms": (percentile(&ms, 95.0) * 10.0).round() / 10.0,
        "paid": paid,
        "seen_again": repeats,
        "refused": refused,
        "errors": errors,
        "exactly_once": paid == orders.len()
            && unpaid == 0
            && ledger_rows == orders.len()
            && account.balance_fen == expected_fen,
    }))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or_else(|| "100,1000,10000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let backends = arg("--backends").unwrap_or_else(|| "sqlite,postgres".into());
    for backend in backends.split(',') {
        for &n in &sizes {
            println!("{}", run(backend.trim(), n).await?);
        }
    }
    Ok(())
}

//! Packages paying for tasks: units taken from the grants that expire first, all or nothing,
//! and given back to the grants they came from when a task fails or delivers only part.
//! Each test once on SQLite and once on PostgreSQL.

use store::{
    Charge, GrantCharge, GrantKind, NewOrder, NewProduct, OrderKind, PaymentNotice, Share, Store,
    StoreError, TaskStatus, store_test,
};

async fn user(store: &Store, name: &str) -> i64 {
    store
        .create_user(name, "password-1", false)
        .await
        .unwrap()
        .id
}

/// A paid package of `amount` units of `kind`, valid for `days`.
async fn bought(store: &Store, user_id: i64, kind: GrantKind, amount: i64, days: i64) {
    let product = store
        .create_product(&NewProduct {
            name: format!("{} {amount}（{days} 天）", kind.as_str()),
            description: String::new(),
            price_fen: 1_000,
            grant_kind: kind,
            grant_amount: amount,
            valid_days: days,
            sort_order: 0,
        })
        .await
        .unwrap();
    let order = store
        .create_order(&NewOrder {
            user_id,
            kind: OrderKind::Package,
            channel: "wechat",
            title: &product.name,
            amount_fen: product.price_fen,
            credit_fen: 0,
            product: Some(&product),
            task_id: None,
            ttl_ms: 3_600_000,
        })
        .await
        .unwrap();
    let event = format!("evt-{}", order.out_trade_no);
    store
        .record_payment(&PaymentNotice {
            provider: "wechat",
            event_id: &event,
            out_trade_no: &order.out_trade_no,
            amount_fen: product.price_fen,
            provider_trade_no: "4200000000",
        })
        .await
        .unwrap();
}

fn from_package(kind: GrantKind, units: i64) -> Charge {
    Charge {
        fen: 0,
        free_checks: 0,
        grant: Some(GrantCharge { kind, units }),
        reason: "降重（套餐抵扣）".into(),
    }
}

/// Remaining units per grant, those expiring first first.
async fn remaining(store: &Store, user_id: i64) -> Vec<i64> {
    store
        .active_grants(user_id, store::now_ms())
        .await
        .unwrap()
        .iter()
        .map(|g| g.remaining)
        .collect()
}

store_test!(
    packages_pay_for_tasks_and_give_units_back,
    |store: Store| async move {
        let u = user(&store, "pkg_user").await;
        bought(&store, u, GrantKind::RewriteChars, 1_000, 30).await;
        bought(&store, u, GrantKind::RewriteChars, 5_000, 180).await;
        bought(&store, u, GrantKind::Check, 3, 180).await;
        assert_eq!(remaining(&store, u).await, vec![1_000, 5_000, 3]);

        // 3,000 characters: the whole of the grant that expires first, then the next.
        let t = store.create_task(u, "rewrite", "论文", "{}").await.unwrap();
        let t = store
            .submit_task(
                t.id,
                u,
                "rewrite",
                &from_package(GrantKind::RewriteChars, 3_000),
                1,
            )
            .await
            .unwrap();
        assert_eq!((t.charged_fen, t.charged_units), (0, 3_000));
        assert_eq!(remaining(&store, u).await, vec![3_000, 3]);
        let uses = store.grant_uses(u, 10, 0).await.unwrap();
        assert_eq!(
            uses.iter().map(|x| x.units).collect::<Vec<_>>(),
            vec![2_000, 1_000]
        );
        assert!(uses.iter().all(|x| x.task_id == t.id));
        // Money and free checks are untouched; the ledger has nothing to show.
        let account = store.account(u).await.unwrap();
        assert_eq!((account.balance_fen, account.free_checks), (0, 0));

        // A third could not be done: a third of the units come back, to the later grant first.
        let job = store
            .claim_job("rewrite", "w1", 30_000)
            .await
            .unwrap()
            .unwrap();
        assert!(
            store
                .complete_job_refunding(
                    job.job_id,
                    "w1",
                    "{}",
                    Share { part: 1, whole: 3 },
                    "未达标"
                )
                .await
                .unwrap()
        );
        let t = store.task(t.id, u).await.unwrap();
        assert_eq!((t.status, t.charged_units), (TaskStatus::Done, 2_000));
        assert_eq!(remaining(&store, u).await, vec![4_000, 3]);

        // More than remains: refused, nothing taken, still a draft.
        let big = store
            .create_task(u, "rewrite", "长论文", "{}")
            .await
            .unwrap();
        let refused = store
            .submit_task(
                big.id,
                u,
                "rewrite",
                &from_package(GrantKind::RewriteChars, 4_001),
                1,
            )
            .await;
        assert!(
            matches!(refused, Err(StoreError::InsufficientFunds)),
            "{refused:?}"
        );
        assert_eq!(
            store.task(big.id, u).await.unwrap().status,
            TaskStatus::Pending
        );
        assert_eq!(remaining(&store, u).await, vec![4_000, 3]);

        // A check paid by one use fails for good: the use comes back in full.
        let check = store.create_task(u, "check", "查重", "{}").await.unwrap();
        store
            .submit_task(check.id, u, "check", &from_package(GrantKind::Check, 1), 1)
            .await
            .unwrap();
        assert_eq!(remaining(&store, u).await, vec![4_000, 2]);
        let job = store
            .claim_job("check", "w1", 30_000)
            .await
            .unwrap()
            .unwrap();
        let status = store
            .fail_job(job.job_id, "w1", "解析失败", false)
            .await
            .unwrap();
        assert_eq!(status, TaskStatus::Failed);
        assert_eq!(remaining(&store, u).await, vec![4_000, 3]);
        assert_eq!(store.task(check.id, u).await.unwrap().charged_units, 0);
        // The history keeps the use, at zero.
        let uses = store.grant_uses(u, 10, 0).await.unwrap();
        assert_eq!((uses[0].task_id, uses[0].units), (check.id, 0));

        // Run again, it is taken again.
        store
            .rerun_task(
                check.id,
                u,
                "check",
                &from_package(GrantKind::Check, 1),
                1,
                None,
            )
            .await
            .unwrap();
        assert_eq!(remaining(&store, u).await, vec![4_000, 2]);
    }
);

store_test!(
    an_expired_package_pays_for_nothing,
    |store: Store| async move {
        let u = user(&store, "pkg_expired").await;
        bought(&store, u, GrantKind::Aigc, 2, 1).await;
        let t = store.create_task(u, "aigc", "检测", "{}").await.unwrap();
        // A day later: the clock the store reads is the real one, so age the grant instead.
        store.age_grants_for_tests(u, 86_400_000 + 1).await.unwrap();
        let refused = store
            .submit_task(t.id, u, "aigc", &from_package(GrantKind::Aigc, 1), 1)
            .await;
        assert!(
            matches!(refused, Err(StoreError::InsufficientFunds)),
            "{refused:?}"
        );
    }
);

store_test!(
    the_last_use_goes_to_one_task_only,
    |store: Store| async move {
        let u = user(&store, "pkg_race").await;
        bought(&store, u, GrantKind::Check, 1, 30).await;
        let mut tasks = Vec::new();
        for i in 0..4 {
            tasks.push(
                store
                    .create_task(u, "check", &format!("稿件{i}"), "{}")
                    .await
                    .unwrap(),
            );
        }
        let calls: Vec<_> = tasks
            .iter()
            .map(|t| {
                let (store, id) = (store.clone(), t.id);
                tokio::spawn(async move {
                    store
                        .submit_task(id, u, "check", &from_package(GrantKind::Check, 1), 1)
                        .await
                })
            })
            .collect();
        let mut results = Vec::new();
        for call in calls {
            results.push(call.await.unwrap());
        }
        let ok = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(ok, 1, "{results:?}");
        assert!(
            results
                .iter()
                .filter_map(|r| r.as_ref().err())
                .all(|e| matches!(e, StoreError::InsufficientFunds)),
            "{results:?}"
        );
        assert_eq!(remaining(&store, u).await, Vec::<i64>::new());
    }
);

store_test!(
    a_stopped_paper_keeps_its_use_and_a_refunded_package_takes_nothing_back,
    |store: Store| async move {
        let u = user(&store, "pkg_edges").await;
        bought(&store, u, GrantKind::Paper, 2, 30).await;

        // Stopped at 99 %: a package use is kept rounded up (money would keep 99 %).
        let paper = store.create_task(u, "paper", "论文", "{}").await.unwrap();
        store
            .submit_task(paper.id, u, "paper", &from_package(GrantKind::Paper, 1), 1)
            .await
            .unwrap();
        store
            .claim_job("paper", "w1", 30_000)
            .await
            .unwrap()
            .unwrap();
        store.task_draft(paper.id, "{}", 990).await.unwrap();
        assert!(store.cancel_task(paper.id, u).await.unwrap());
        assert_eq!(remaining(&store, u).await, vec![1]);
        assert_eq!(store.task(paper.id, u).await.unwrap().charged_units, 1);

        // Stopped before anything was written: the use comes back.
        let early = store.create_task(u, "paper", "另一篇", "{}").await.unwrap();
        store
            .submit_task(early.id, u, "paper", &from_package(GrantKind::Paper, 1), 1)
            .await
            .unwrap();
        assert_eq!(remaining(&store, u).await, Vec::<i64>::new());
        assert!(store.cancel_task(early.id, u).await.unwrap());
        assert_eq!(remaining(&store, u).await, vec![1]);

        // Expired while the task ran: what comes back gets days to be used.
        let late = store.create_task(u, "paper", "第三篇", "{}").await.unwrap();
        store
            .submit_task(late.id, u, "paper", &from_package(GrantKind::Paper, 1), 1)
            .await
            .unwrap();
        store
            .age_grants_for_tests(u, 31 * 86_400_000)
            .await
            .unwrap();
        let job = store
            .claim_job("paper", "w1", 30_000)
            .await
            .unwrap()
            .unwrap();
        store
            .fail_job(job.job_id, "w1", "模型出错", false)
            .await
            .unwrap();
        let grants = store.active_grants(u, store::now_ms()).await.unwrap();
        assert_eq!(grants.len(), 1, "{grants:?}");
        let days = (grants[0].expires_at - store::now_ms()) as f64 / 86_400_000.0;
        assert!((6.9..=7.1).contains(&days), "{days}");

        // The package refunded to the buyer: a failed task's use does not come back to it.
        let v = user(&store, "pkg_refunded").await;
        bought(&store, v, GrantKind::Check, 2, 30).await;
        let t = store.create_task(v, "check", "查重", "{}").await.unwrap();
        store
            .submit_task(t.id, v, "check", &from_package(GrantKind::Check, 1), 1)
            .await
            .unwrap();
        let order = store.orders_of(v, 1, 0).await.unwrap().remove(0);
        store
            .refund_order(order.id, "RF-EDGE", 500, "用户申请")
            .await
            .unwrap();
        assert_eq!(remaining(&store, v).await, vec![0_i64; 0]);
        let job = store
            .claim_job("check", "w1", 30_000)
            .await
            .unwrap()
            .unwrap();
        store
            .fail_job(job.job_id, "w1", "解析失败", false)
            .await
            .unwrap();
        assert_eq!(remaining(&store, v).await, vec![0_i64; 0]);
        let ledger = store.ledger(v, 10).await.unwrap();
        assert!(
            ledger[0].reason.contains("已退款，额度不再退回"),
            "{ledger:?}"
        );
    }
);

store_test!(
    a_package_used_up_is_not_refunded_beyond_what_is_left,
    |store: Store| async move {
        let u = user(&store, "pkg_used").await;
        bought(&store, u, GrantKind::Check, 2, 30).await;
        let order = store.orders_of(u, 1, 0).await.unwrap().remove(0);
        let t = store.create_task(u, "check", "查重", "{}").await.unwrap();
        store
            .submit_task(t.id, u, "check", &from_package(GrantKind::Check, 1), 1)
            .await
            .unwrap();
        // One of two checks used: the whole price would take back two.
        assert!(matches!(
            store
                .refund_order(order.id, "RF-USED", 1_000, "用户申请")
                .await,
            Err(StoreError::Conflict("package_used"))
        ));
        assert_eq!(remaining(&store, u).await, vec![1]);
        // Half the price takes back the one that is left.
        store
            .refund_order(order.id, "RF-USED", 500, "用户申请")
            .await
            .unwrap();
        assert_eq!(remaining(&store, u).await, vec![0_i64; 0]);
    }
);

store_test!(
    small_refunds_take_back_what_one_refund_of_their_sum_would,
    |store: Store| async move {
        let u = user(&store, "pkg_small_refunds").await;
        bought(&store, u, GrantKind::Check, 3, 30).await;
        let order = store.orders_of(u, 1, 0).await.unwrap().remove(0);
        for n in 0..3 {
            store
                .refund_order(order.id, &format!("RF-SMALL-{n}"), 1, "试探")
                .await
                .unwrap();
        }
        // Three fen of ¥10.00 round up to one use, not three.
        assert_eq!(remaining(&store, u).await, vec![2]);
        store
            .refund_order(order.id, "RF-SMALL-REST", 997, "其余")
            .await
            .unwrap();
        assert_eq!(remaining(&store, u).await, vec![0_i64; 0]);
    }
);

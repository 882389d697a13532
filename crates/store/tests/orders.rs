//! Orders paid exactly once, each test once on SQLite and once on PostgreSQL.

use store::{
    GrantKind, NewOrder, NewProduct, Order, OrderKind, OrderStatus, PaymentNotice, PaymentOutcome,
    Store, StoreError, store_test,
};

const HOUR_MS: i64 = 3_600_000;

async fn user(store: &Store, name: &str) -> i64 {
    store
        .create_user(name, "password-1", false)
        .await
        .unwrap()
        .id
}

async fn top_up(store: &Store, user_id: i64, amount_fen: i64, credit_fen: i64) -> Order {
    store
        .create_order(&NewOrder {
            user_id,
            kind: OrderKind::TopUp,
            channel: "wechat",
            title: "账户充值",
            amount_fen,
            credit_fen,
            product: None,
            task_id: None,
            ttl_ms: HOUR_MS,
        })
        .await
        .unwrap()
}

async fn package_order(store: &Store, user_id: i64, product: &store::Product) -> Order {
    store
        .create_order(&NewOrder {
            user_id,
            kind: OrderKind::Package,
            channel: "alipay",
            title: &product.name,
            amount_fen: product.price_fen,
            credit_fen: 0,
            product: Some(product),
            task_id: None,
            ttl_ms: HOUR_MS,
        })
        .await
        .unwrap()
}

fn notice<'a>(order: &'a Order, event_id: &'a str, amount_fen: i64) -> PaymentNotice<'a> {
    PaymentNotice {
        provider: "wechat",
        event_id,
        out_trade_no: &order.out_trade_no,
        amount_fen,
        provider_trade_no: "4200000000202611250000000001",
    }
}

async fn checks_package(store: &Store) -> store::Product {
    store
        .create_product(&NewProduct {
            name: "查重 3 次".into(),
            description: "毕业季常用".into(),
            price_fen: 9_900,
            grant_kind: GrantKind::Check,
            grant_amount: 3,
            valid_days: 180,
            sort_order: 1,
        })
        .await
        .unwrap()
}

store_test!(
    a_top_up_is_credited_once_with_its_bonus,
    |store: Store| async move {
        let u = user(&store, "payer_1").await;
        let order = top_up(&store, u, 10_000, 12_000).await;
        assert_eq!(order.status, OrderStatus::Pending);
        assert!(order.out_trade_no.starts_with("WJ") && order.out_trade_no.len() <= 32);

        let first = store
            .record_payment(&notice(&order, "evt-1", 10_000))
            .await
            .unwrap();
        let PaymentOutcome::Paid(paid) = first else {
            panic!("{first:?}")
        };
        assert_eq!(paid.status, OrderStatus::Paid);
        assert!(paid.paid_at.is_some());
        // The same notification again, and another notification of the same payment.
        assert_eq!(
            store
                .record_payment(&notice(&order, "evt-1", 10_000))
                .await
                .unwrap(),
            PaymentOutcome::Duplicate
        );
        assert!(matches!(
            store
                .record_payment(&notice(&order, "evt-2", 10_000))
                .await
                .unwrap(),
            PaymentOutcome::AlreadyPaid(_)
        ));
        assert_eq!(store.account(u).await.unwrap().balance_fen, 12_000);
        let ledger = store.ledger(u, 10).await.unwrap();
        assert_eq!(ledger.len(), 1);
        assert_eq!(ledger[0].kind, "order_payment");
        assert!(
            ledger[0].reason.contains("含赠送 ¥20.00"),
            "{}",
            ledger[0].reason
        );
    }
);

store_test!(
    wrong_amounts_and_unknown_orders_change_nothing,
    |store: Store| async move {
        let u = user(&store, "payer_2").await;
        let order = top_up(&store, u, 5_000, 5_000).await;
        assert_eq!(
            store
                .record_payment(&notice(&order, "evt-a", 1))
                .await
                .unwrap(),
            PaymentOutcome::AmountMismatch {
                expected_fen: 5_000,
                got_fen: 1
            }
        );
        let mut stranger = order.clone();
        stranger.out_trade_no = "WJ000000000000000000".into();
        assert_eq!(
            store
                .record_payment(&notice(&stranger, "evt-b", 5_000))
                .await
                .unwrap(),
            PaymentOutcome::UnknownOrder
        );
        assert_eq!(store.account(u).await.unwrap().balance_fen, 0);
        assert_eq!(
            store.order(order.id, u).await.unwrap().status,
            OrderStatus::Pending
        );
        // Another user cannot read the order.
        let other = user(&store, "payer_3").await;
        assert!(matches!(
            store.order(order.id, other).await,
            Err(StoreError::NotFound)
        ));
    }
);

store_test!(
    twenty_concurrent_notifications_credit_once,
    |store: Store| async move {
        let u = user(&store, "payer_4").await;
        let order = top_up(&store, u, 3_000, 3_000).await;
        let calls = (0..20).map(|i| {
            let store = store.clone();
            let order = order.clone();
            tokio::spawn(async move {
                // Half repeat one notification id, half are distinct notifications.
                let event = if i % 2 == 0 {
                    "same".to_string()
                } else {
                    format!("evt-{i}")
                };
                store.record_payment(&notice(&order, &event, 3_000)).await
            })
        });
        let mut paid = 0;
        for call in calls {
            match call.await.unwrap().unwrap() {
                PaymentOutcome::Paid(_) => paid += 1,
                PaymentOutcome::AlreadyPaid(_) | PaymentOutcome::Duplicate => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(paid, 1);
        assert_eq!(store.account(u).await.unwrap().balance_fen, 3_000);
        assert_eq!(store.ledger(u, 50).await.unwrap().len(), 1);
    }
);

store_test!(
    an_expired_order_paid_late_is_still_credited,
    |store: Store| async move {
        let u = user(&store, "payer_5").await;
        let order = top_up(&store, u, 2_000, 2_000).await;
        assert_eq!(store.pending_orders(i64::MAX, 10).await.unwrap().len(), 1);
        // Deferred, it is not due until its time; listing everything still shows it.
        let deferred = store.pending_orders(i64::MAX, 10).await.unwrap()[0].id;
        let now = store::now_ms();
        store
            .defer_order_query(deferred, now + 60_000)
            .await
            .unwrap();
        assert!(
            store
                .pending_orders_due(i64::MAX, 0, 10, now)
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            store
                .pending_orders_due(i64::MAX, 0, 10, now + 60_000)
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(store.pending_orders(i64::MAX, 10).await.unwrap().len(), 1);
        assert!(store.close_order(order.id).await.unwrap());
        assert!(!store.close_order(order.id).await.unwrap(), "closed once");
        assert!(store.pending_orders(i64::MAX, 10).await.unwrap().is_empty());
        // The provider took the money before our close reached it: the payment stands.
        let late = store
            .record_payment(&notice(&order, "late", 2_000))
            .await
            .unwrap();
        assert!(
            matches!(late, PaymentOutcome::Paid(ref o) if o.closed_at.is_none()),
            "{late:?}"
        );
        assert_eq!(store.account(u).await.unwrap().balance_fen, 2_000);
    }
);

store_test!(
    a_package_grants_what_it_was_sold_with,
    |store: Store| async move {
        let u = user(&store, "payer_6").await;
        let product = checks_package(&store).await;
        let order = package_order(&store, u, &product).await;
        // Withdrawn from sale after the order: what was bought is unchanged.
        store.set_product_active(product.id, false).await.unwrap();
        assert!(store.products(true).await.unwrap().is_empty());
        assert_eq!(store.products(false).await.unwrap().len(), 1);
        let paid = store
            .record_payment(&notice(&order, "pkg-1", 9_900))
            .await
            .unwrap();
        assert!(matches!(paid, PaymentOutcome::Paid(_)));
        let now = store::now_ms();
        let grants = store.active_grants(u, now).await.unwrap();
        assert_eq!(grants.len(), 1);
        assert_eq!(
            (grants[0].kind, grants[0].total, grants[0].remaining),
            (GrantKind::Check, 3, 3)
        );
        let days = (grants[0].expires_at - now) as f64 / 86_400_000.0;
        assert!((179.9..=180.1).contains(&days), "{days}");
        assert!(
            store
                .active_grants(u, grants[0].expires_at)
                .await
                .unwrap()
                .is_empty(),
            "expired"
        );
        assert_eq!(store.account(u).await.unwrap().balance_fen, 0);

        // A refund under one number, twice, reverses the grant once; a third of the price takes
        // a whole check (rounded up), the rest takes the others.
        let refund = store
            .refund_order(order.id, "RF-1", 3_300, "用户申请")
            .await
            .unwrap();
        assert!(refund.new);
        assert_eq!(refund.order.status, OrderStatus::Paid);
        let again = store
            .refund_order(order.id, "RF-1", 3_300, "用户申请")
            .await
            .unwrap();
        assert!(!again.new);
        assert_eq!(store.active_grants(u, now).await.unwrap()[0].remaining, 2);
        assert!(matches!(
            store.refund_order(order.id, "RF-1", 100, "换了金额").await,
            Err(StoreError::Conflict("refund_no_reused"))
        ));
        assert!(matches!(
            store.refund_order(order.id, "RF-2", 6_601, "超过").await,
            Err(StoreError::Conflict("refund_exceeds_payment"))
        ));
        let rest = store
            .refund_order(order.id, "RF-3", 6_600, "用户申请")
            .await
            .unwrap();
        assert_eq!(rest.order.status, OrderStatus::Refunded);
        assert!(store.active_grants(u, now).await.unwrap().is_empty());
    }
);

store_test!(
    a_top_up_already_spent_cannot_be_refunded,
    |store: Store| async move {
        let u = user(&store, "payer_7").await;
        let order = top_up(&store, u, 1_000, 1_000).await;
        assert!(matches!(
            store.refund_order(order.id, "RF-x", 1_000, "未支付").await,
            Err(StoreError::Conflict("order_not_paid"))
        ));
        store
            .record_payment(&notice(&order, "e", 1_000))
            .await
            .unwrap();
        store.operator_credit(u, -600, 0, "花掉").await.unwrap();
        assert!(matches!(
            store
                .refund_order(order.id, "RF-y", 1_000, "用户申请")
                .await,
            Err(StoreError::InsufficientFunds)
        ));
        // Nothing of the refused refund stayed: the number can be used for what is possible.
        let part = store
            .refund_order(order.id, "RF-y", 400, "用户申请")
            .await
            .unwrap();
        assert!(part.new);
        assert_eq!(store.account(u).await.unwrap().balance_fen, 0);
        assert_eq!(part.order.refunded_fen, 400);
    }
);

store_test!(
    orders_are_listed_newest_first_and_amounts_checked,
    |store: Store| async move {
        let u = user(&store, "payer_8").await;
        let a = top_up(&store, u, 100, 100).await;
        let b = top_up(&store, u, 200, 200).await;
        assert_ne!(a.out_trade_no, b.out_trade_no);
        let listed: Vec<i64> = store
            .orders_of(u, 10, 0)
            .await
            .unwrap()
            .iter()
            .map(|o| o.id)
            .collect();
        assert_eq!(listed, vec![b.id, a.id]);
        assert_eq!(store.orders_of(u, 1, 1).await.unwrap()[0].id, a.id);
        store
            .set_order_pay_url(a.id, "weixin://wxpay/bizpayurl?pr=abc")
            .await
            .unwrap();
        assert_eq!(
            store
                .order_by_trade_no(&a.out_trade_no)
                .await
                .unwrap()
                .pay_url
                .as_deref(),
            Some("weixin://wxpay/bizpayurl?pr=abc")
        );
        for bad in [0, -5, store::MAX_ACCOUNT_AMOUNT + 1] {
            let refused = store
                .create_order(&NewOrder {
                    user_id: u,
                    kind: OrderKind::TopUp,
                    channel: "wechat",
                    title: "账户充值",
                    amount_fen: bad,
                    credit_fen: bad.max(0),
                    product: None,
                    task_id: None,
                    ttl_ms: HOUR_MS,
                })
                .await;
            assert!(
                matches!(refused, Err(StoreError::Conflict("amount_out_of_range"))),
                "{bad}"
            );
        }
    }
);

store_test!(
    a_refund_the_provider_never_made_is_abandoned_and_what_it_took_is_restored,
    |store: Store| async move {
        let ops = store
            .create_user("ops_abandon", "password-1", true)
            .await
            .unwrap();
        let actor = store::Actor::from(&ops);
        let u = user(&store, "payer_abandon").await;
        // A top-up of ¥30 with ¥6 bonus, half refunded: ¥18 of credit taken back while pending.
        let order = top_up(&store, u, 3_000, 3_600).await;
        store
            .record_payment(&notice(&order, "ab-1", 3_000))
            .await
            .unwrap();
        let refund = store
            .operator_refund_order(actor, order.id, "RF-ab-1", 1_500, "用户申请")
            .await
            .unwrap();
        assert_eq!(refund.order.refunded_fen, 1_500);
        assert_eq!(store.account(u).await.unwrap().balance_fen, 1_800);
        let pending = store
            .pending_refund_fen(&[order.id, 999_999])
            .await
            .unwrap();
        assert_eq!(pending.get(&order.id), Some(&1_500));
        assert_eq!(pending.len(), 1);
        let written = store.refund_by_no("RF-ab-1").await.unwrap();
        assert_eq!((written.taken_fen, written.taken_uses), (1_800, 0));

        // The writer's attempt holds it; a retry cannot take it, nor can giving it up.
        assert!(!store.claim_refund_attempt("RF-ab-1").await.unwrap());
        assert!(matches!(
            store.begin_abandon("RF-ab-1", 0).await,
            Err(StoreError::Conflict("refund_in_flight"))
        ));
        // The provider refused: the hold is released; a retry takes it, then fails again.
        store
            .settle_refund("RF-ab-1", false, None, Some("银行卡已注销"))
            .await
            .unwrap();
        assert!(store.claim_refund_attempt("RF-ab-1").await.unwrap());
        assert!(
            !store.claim_refund_attempt("RF-ab-1").await.unwrap(),
            "held once"
        );
        store
            .settle_refund("RF-ab-1", false, None, Some("银行卡已注销"))
            .await
            .unwrap();
        // Too soon after that attempt for an operator who must wait an hour.
        assert!(matches!(
            store.begin_abandon("RF-ab-1", 3_600_000).await,
            Err(StoreError::Conflict("refund_too_recent"))
        ));
        // Being given up, it is no retry's; the provider could not say, so it is back.
        store.begin_abandon("RF-ab-1", 0).await.unwrap();
        assert!(store.pending_refunds(10).await.unwrap().is_empty());
        assert!(!store.claim_refund_attempt("RF-ab-1").await.unwrap());
        store.cancel_abandon("RF-ab-1").await.unwrap();
        assert_eq!(store.pending_refunds(10).await.unwrap().len(), 1);
        store.begin_abandon("RF-ab-1", 0).await.unwrap();
        let abandoned = store
            .abandon_refund(actor, "RF-ab-1", "银行卡已注销")
            .await
            .unwrap();
        assert_eq!(abandoned.status, "abandoned");
        assert_eq!(store.account(u).await.unwrap().balance_fen, 3_600);
        let order_now = store.order_by_id(order.id).await.unwrap();
        assert_eq!(
            (order_now.refunded_fen, order_now.status),
            (0, OrderStatus::Paid)
        );
        assert!(
            store
                .pending_refund_fen(&[order.id])
                .await
                .unwrap()
                .is_empty()
        );
        let ledger = store.ledger(u, 10).await.unwrap();
        assert!(
            ledger[0].reason.contains("退款未完成")
                && ledger[0].reason.contains("已恢复余额 ¥18.00"),
            "{:?}",
            ledger[0]
        );
        // Once only; the order can be refunded again.
        assert!(matches!(
            store.abandon_refund(actor, "RF-ab-1", "再来").await,
            Err(StoreError::Conflict("refund_not_pending"))
        ));
        assert!(matches!(
            store.abandon_refund(actor, "RF-none", "无").await,
            Err(StoreError::NotFound)
        ));
        assert!(matches!(
            store.begin_abandon("RF-ab-1", 0).await,
            Err(StoreError::Conflict("refund_not_pending"))
        ));
        // A provider that paid it after all is not hidden: the refund says so for the operator.
        assert!(
            !store
                .settle_refund("RF-ab-1", true, Some("50000"), None)
                .await
                .unwrap()
        );
        let late = &store.refunds_of(order.id).await.unwrap()[0];
        assert_eq!(late.status, "abandoned");
        assert!(
            late.error
                .as_deref()
                .unwrap_or_default()
                .contains("放弃之后仍完成"),
            "{late:?}"
        );
        store
            .operator_refund_order(actor, order.id, "RF-ab-2", 3_000, "用户申请")
            .await
            .unwrap();
        assert_eq!(store.account(u).await.unwrap().balance_fen, 0);

        // A package refunded in full, then abandoned: paid again with its uses back.
        let product = checks_package(&store).await;
        let bought = package_order(&store, u, &product).await;
        store
            .record_payment(&notice(&bought, "ab-2", 9_900))
            .await
            .unwrap();
        let full = store
            .operator_refund_order(actor, bought.id, "RF-ab-3", 9_900, "用户申请")
            .await
            .unwrap();
        assert_eq!(full.order.status, OrderStatus::Refunded);
        let now = store::now_ms();
        assert!(store.active_grants(u, now).await.unwrap().is_empty());
        store
            .settle_refund("RF-ab-3", false, None, Some("超过退款期限"))
            .await
            .unwrap();
        store.begin_abandon("RF-ab-3", 0).await.unwrap();
        store
            .abandon_refund(actor, "RF-ab-3", "超过退款期限")
            .await
            .unwrap();
        let back = store.order_by_id(bought.id).await.unwrap();
        assert_eq!((back.status, back.refunded_fen), (OrderStatus::Paid, 0));
        assert_eq!(store.active_grants(u, now).await.unwrap()[0].remaining, 3);
        let (entries, _) = store.audit_log("refund_abandon", 0, 10).await.unwrap();
        let actions: Vec<String> = entries.iter().map(|e| e.action.clone()).collect();
        assert_eq!(
            actions
                .iter()
                .filter(|a| *a == "order.refund_abandon")
                .count(),
            2,
            "{actions:?}"
        );
    }
);

store_test!(
    a_refund_attempt_and_a_paid_tasks_submission_are_taken_once_under_concurrency,
    |store: Store| async move {
        let ops = store
            .create_user("ops_once", "password-1", true)
            .await
            .unwrap();
        let u = user(&store, "payer_once").await;
        let order = top_up(&store, u, 3_000, 3_000).await;
        store
            .record_payment(&notice(&order, "once-1", 3_000))
            .await
            .unwrap();
        store
            .operator_refund_order(
                store::Actor::from(&ops),
                order.id,
                "RF-once",
                1_000,
                "用户申请",
            )
            .await
            .unwrap();
        store
            .settle_refund("RF-once", false, None, Some("拒绝"))
            .await
            .unwrap();
        // Ten retries on ten nodes, and an operator giving it up, at the same moment: one wins.
        let mut calls = Vec::new();
        for _ in 0..10 {
            let store = store.clone();
            calls.push(tokio::spawn(async move {
                store.claim_refund_attempt("RF-once").await.unwrap()
            }));
        }
        let giving_up = {
            let store = store.clone();
            tokio::spawn(async move { store.begin_abandon("RF-once", 0).await.is_ok() })
        };
        let mut winners = 0;
        for call in calls {
            winners += usize::from(call.await.unwrap());
        }
        winners += usize::from(giving_up.await.unwrap());
        assert_eq!(winners, 1, "one attempt at a time");

        // A paid task order's submission: ten takers, one gets it.
        let task = store
            .create_task(u, "check", "扫码支付的论文", "{}")
            .await
            .unwrap();
        let paid_for_task = store
            .create_order(&NewOrder {
                user_id: u,
                kind: OrderKind::Task,
                channel: "wechat",
                title: "任务支付：扫码支付的论文",
                amount_fen: 300,
                credit_fen: 300,
                product: None,
                task_id: Some(task.id),
                ttl_ms: HOUR_MS,
            })
            .await
            .unwrap();
        store
            .set_order_submission(
                paid_for_task.id,
                r#"{"path":"/x","body":{},"priceFen":300}"#,
            )
            .await
            .unwrap();
        assert_eq!(
            store.take_order_submission(paid_for_task.id).await.unwrap(),
            None,
            "not before it is paid"
        );
        store
            .record_payment(&notice(&paid_for_task, "once-2", 300))
            .await
            .unwrap();
        assert_eq!(
            store
                .paid_orders_to_submit(i64::MAX, 10)
                .await
                .unwrap()
                .len(),
            1
        );
        let mut takers = Vec::new();
        for _ in 0..10 {
            let store = store.clone();
            let id = paid_for_task.id;
            takers.push(tokio::spawn(async move {
                store.take_order_submission(id).await.unwrap()
            }));
        }
        let mut taken = 0;
        for taker in takers {
            taken += usize::from(taker.await.unwrap().is_some());
        }
        assert_eq!(taken, 1, "made once");
        assert!(
            store
                .paid_orders_to_submit(i64::MAX, 10)
                .await
                .unwrap()
                .is_empty()
        );
    }
);

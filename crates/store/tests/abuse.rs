//! Abuse guards kept in the database (issue 18): throttle windows and lockouts, the per-IP
//! daily cap on the first-QR-login free check, and the sweep of expired rows. Each test runs on
//! SQLite and PostgreSQL.

use store::testing::TestDb;
use store::{QrClaim, RateDecision, Store, StoreError, store_test};

const DAY_MS: i64 = 86_400_000;

store_test!(
    rate_take_counts_per_bucket_and_window,
    |store: Store| async move {
        for _ in 0..3 {
            assert_eq!(
                store
                    .rate_take("register:ip:1.1.1.1", 3, 60_000)
                    .await
                    .unwrap(),
                RateDecision::Allowed
            );
        }
        let RateDecision::Refused { retry_after_ms } = store
            .rate_take("register:ip:1.1.1.1", 3, 60_000)
            .await
            .unwrap()
        else {
            panic!("the fourth attempt in the window is refused")
        };
        assert!((1..=60_000).contains(&retry_after_ms), "{retry_after_ms}");
        assert_eq!(
            store
                .rate_take("register:ip:2.2.2.2", 3, 60_000)
                .await
                .unwrap(),
            RateDecision::Allowed,
            "another bucket counts apart"
        );
        // A window that has ended starts again.
        assert_eq!(
            store.rate_take("short", 1, 30).await.unwrap(),
            RateDecision::Allowed
        );
        assert!(matches!(
            store.rate_take("short", 1, 30).await.unwrap(),
            RateDecision::Refused { .. }
        ));
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        assert_eq!(
            store.rate_take("short", 1, 30).await.unwrap(),
            RateDecision::Allowed
        );
    }
);

store_test!(
    rate_take_holds_under_concurrency,
    |store: Store| async move {
        let attempts = (0..24).map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.rate_take("register:all", 5, 60_000).await })
        });
        let mut allowed = 0;
        for attempt in attempts {
            if attempt.await.unwrap().unwrap() == RateDecision::Allowed {
                allowed += 1;
            }
        }
        assert_eq!(allowed, 5, "exactly the limit gets through");
    }
);

store_test!(
    lockout_locks_at_limit_and_clears,
    |store: Store| async move {
        let bucket = "login:acct:amy";
        assert_eq!(store.lockout_remaining(&[bucket]).await.unwrap(), None);
        assert!(!store.lockout_fail(bucket, 3, 60_000, 60_000).await.unwrap());
        assert!(!store.lockout_fail(bucket, 3, 60_000, 60_000).await.unwrap());
        assert_eq!(store.lockout_remaining(&[bucket]).await.unwrap(), None);
        assert!(store.lockout_fail(bucket, 3, 60_000, 60_000).await.unwrap());
        let left = store
            .lockout_remaining(&["login:ip:x", bucket])
            .await
            .unwrap()
            .expect("locked");
        assert!((1..=60_000).contains(&left), "{left}");
        store.throttle_clear(bucket).await.unwrap();
        assert_eq!(store.lockout_remaining(&[bucket]).await.unwrap(), None);
        // A limit of one locks at the first failure; a short lock runs out.
        assert!(store.lockout_fail("one", 1, 60_000, 40).await.unwrap());
        assert!(store.lockout_remaining(&["one"]).await.unwrap().is_some());
        tokio::time::sleep(std::time::Duration::from_millis(80)).await;
        assert_eq!(store.lockout_remaining(&["one"]).await.unwrap(), None);
    }
);

/// A lock is in the database: another connection (a restarted server) still sees it.
async fn lockout_survives_reconnect(db: TestDb) {
    for _ in 0..2 {
        db.store
            .lockout_fail("login:ip:9.9.9.9", 2, 600_000, 600_000)
            .await
            .unwrap();
    }
    db.store.close().await;
    let reopened = Store::open(&db.url).await.unwrap();
    assert!(
        reopened
            .lockout_remaining(&["login:ip:9.9.9.9"])
            .await
            .unwrap()
            .is_some()
    );
    reopened.close().await;
    db.cleanup().await;
}

#[tokio::test]
async fn lockout_survives_reconnect_sqlite() {
    lockout_survives_reconnect(TestDb::sqlite().await).await;
}

#[tokio::test]
async fn lockout_survives_reconnect_postgres() {
    lockout_survives_reconnect(TestDb::postgres().await).await;
}

async fn qr_login(store: &Store, user_id: i64, requester_ip: &str) -> bool {
    let qr = store
        .create_qr_login("local", 300_000, requester_ip, "desktop")
        .await
        .unwrap();
    store
        .confirm_qr_login(&qr.id, user_id)
        .await
        .unwrap()
        .unwrap();
    let QrClaim::LoggedIn {
        first_login_bonus, ..
    } = store
        .claim_qr_login(&qr.id, DAY_MS, requester_ip, "desktop")
        .await
        .unwrap()
    else {
        panic!("expected a login")
    };
    first_login_bonus
}

store_test!(
    qr_bonus_at_most_once_per_ip_per_day,
    |store: Store| async move {
        let first = store
            .create_user("farm_01", "pw-abcdefg", false)
            .await
            .unwrap();
        let second = store
            .create_user("farm_02", "pw-abcdefg", false)
            .await
            .unwrap();
        assert!(qr_login(&store, first.id, "7.7.7.7").await);
        assert!(
            !qr_login(&store, second.id, "7.7.7.7").await,
            "the same IP gets no second free check today"
        );
        let account = store.account(second.id).await.unwrap();
        assert_eq!(account.free_checks, 0);
        assert_eq!(account.qr_bonus_granted_at, None, "still eligible later");
        assert!(store.ledger(second.id, 10).await.unwrap().is_empty());
        // From another address the account gets its first-login check.
        assert!(qr_login(&store, second.id, "8.8.8.8").await);
        assert_eq!(store.account(second.id).await.unwrap().free_checks, 1);
        assert!(
            !qr_login(&store, first.id, "9.9.9.9").await,
            "once per account"
        );
        assert_eq!(store.account(first.id).await.unwrap().free_checks, 1);
    }
);

store_test!(
    qr_same_client_compares_address_and_browser,
    |store: Store| async move {
        let agent = "Mozilla/5.0 ".repeat(40);
        let qr = store
            .create_qr_login("local", 300_000, "5.5.5.5", &agent)
            .await
            .unwrap();
        assert!(
            qr.same_client("5.5.5.5", &agent),
            "a stored agent is cut at 300 characters"
        );
        assert!(!qr.same_client("5.5.5.5", "PhoneBrowser/1.0"));
        assert!(!qr.same_client("6.6.6.6", &agent));
    }
);

store_test!(sweep_removes_only_what_expired, |store: Store| async move {
    let user = store
        .create_user("sweeper", "pw-abcdefg", false)
        .await
        .unwrap();
    let old_qr = store
        .create_qr_login("local", -2 * 3_600_000, "", "")
        .await
        .unwrap();
    let recent_qr = store.create_qr_login("local", -1, "", "").await.unwrap();
    let live_qr = store
        .create_qr_login("local", 300_000, "", "")
        .await
        .unwrap();
    let session = |ttl_ms| store::NewSession {
        user_id: user.id,
        via: "password",
        ip: "",
        user_agent: "",
        ttl_ms,
    };
    store.create_session(session(-1)).await.unwrap();
    let live = store.create_session(session(DAY_MS)).await.unwrap();
    store.rate_take("ended", 5, 1).await.unwrap();
    store.rate_take("running", 5, 600_000).await.unwrap();
    store.lockout_fail("locked", 1, 1, 600_000).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;

    let swept = store.sweep_expired(store::now_ms()).await.unwrap();
    assert_eq!(
        (swept.qr_logins, swept.sessions, swept.throttles),
        (1, 1, 1),
        "{swept:?}"
    );
    assert!(matches!(
        store.qr_login(&old_qr.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(
        store.qr_login(&recent_qr.id).await.is_ok(),
        "kept within the grace hour"
    );
    assert!(store.qr_login(&live_qr.id).await.is_ok());
    assert!(store.session_user(&live).await.is_ok());
    assert!(
        store
            .lockout_remaining(&["locked"])
            .await
            .unwrap()
            .is_some()
    );
    assert!(matches!(
        store.rate_take("running", 1, 600_000).await.unwrap(),
        RateDecision::Refused { .. }
    ));
    // A day later everything has expired.
    let later = store
        .sweep_expired(store::now_ms() + 2 * DAY_MS + store::QR_SWEEP_GRACE_MS)
        .await
        .unwrap();
    assert_eq!(later.qr_logins, 2);
    assert!(later.sessions == 1 && later.throttles == 2, "{later:?}");
});

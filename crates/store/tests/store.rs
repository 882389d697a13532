//! Store behaviour, each test once on SQLite and once on PostgreSQL.

use store::{QrClaim, QrStatus, Store, StoreError, store_test};

const DAY_MS: i64 = 86_400_000;

async fn session_for(store: &Store, user_id: i64, ttl_ms: i64) -> String {
    store
        .create_session(store::NewSession {
            user_id,
            via: "password",
            ip: "127.0.0.1",
            user_agent: "test",
            ttl_ms,
        })
        .await
        .unwrap()
}

store_test!(users_are_unique_ignoring_case, |store: Store| async move {
    let u = store
        .create_user("Alice_01", "password-1", false)
        .await
        .unwrap();
    assert_eq!(u.login_name, "Alice_01");
    let again = store.create_user("alice_01", "password-2", false).await;
    assert!(matches!(again, Err(StoreError::Conflict("login_name"))));
    let account = store.account(u.id).await.unwrap();
    assert_eq!((account.balance_fen, account.free_checks), (0, 0));
});

store_test!(login_checks_password, |store: Store| async move {
    let u = store
        .create_user("bob_test", "s3cret-pass", false)
        .await
        .unwrap();
    assert_eq!(
        store
            .verify_login("BOB_TEST", "s3cret-pass")
            .await
            .unwrap()
            .map(|x| x.id),
        Some(u.id)
    );
    assert!(
        store
            .verify_login("bob_test", "wrong-pass")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .verify_login("nobody", "s3cret-pass")
            .await
            .unwrap()
            .is_none()
    );
});

store_test!(sessions_expire_and_revoke, |store: Store| async move {
    let u = store
        .create_user("carol", "password-1", false)
        .await
        .unwrap();
    let live = session_for(&store, u.id, DAY_MS).await;
    let expired = session_for(&store, u.id, -1).await;
    let resolved = store.session_user(&live).await.unwrap();
    assert_eq!(resolved.user.id, u.id);
    assert!(matches!(
        store.session_user(&expired).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.session_user("garbage").await,
        Err(StoreError::NotFound)
    ));
    store.revoke_session(resolved.session_id).await.unwrap();
    assert!(matches!(
        store.session_user(&live).await,
        Err(StoreError::NotFound)
    ));
});

store_test!(
    password_change_revokes_other_sessions,
    |store: Store| async move {
        let u = store
            .create_user("dave", "password-1", false)
            .await
            .unwrap();
        let keep = session_for(&store, u.id, DAY_MS).await;
        let other = session_for(&store, u.id, DAY_MS).await;
        let kept = store.session_user(&keep).await.unwrap();
        store
            .set_password(u.id, "password-2", Some(&kept.token_hash))
            .await
            .unwrap();
        assert!(store.session_user(&keep).await.is_ok());
        assert!(store.session_user(&other).await.is_err());
        assert!(
            store
                .verify_login("dave", "password-2")
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            store
                .verify_login("dave", "password-1")
                .await
                .unwrap()
                .is_none()
        );
    }
);

store_test!(
    qr_login_is_single_use_and_grants_bonus_once,
    |store: Store| async move {
        let u = store
            .create_user("erin", "password-1", false)
            .await
            .unwrap();
        let qr = store
            .create_qr_login("local", 300_000, "1.2.3.4", "desktop")
            .await
            .unwrap();
        assert_eq!(qr.status, QrStatus::Pending);
        assert!(matches!(
            store.claim_qr_login(&qr.id, DAY_MS, "", "").await.unwrap(),
            QrClaim::Pending
        ));
        assert_eq!(store.confirm_qr_login(&qr.id, u.id).await.unwrap(), Ok(()));
        // A second confirmation (by anyone) does not change who is logged in.
        let other = store
            .create_user("mallory", "password-1", false)
            .await
            .unwrap();
        assert_eq!(
            store.confirm_qr_login(&qr.id, other.id).await.unwrap(),
            Err(QrStatus::Confirmed)
        );
        let QrClaim::LoggedIn {
            token,
            user,
            first_login_bonus,
        } = store.claim_qr_login(&qr.id, DAY_MS, "", "").await.unwrap()
        else {
            panic!("expected a login")
        };
        assert_eq!(user.id, u.id);
        assert!(first_login_bonus);
        assert_eq!(store.session_user(&token).await.unwrap().user.id, u.id);
        assert!(matches!(
            store.claim_qr_login(&qr.id, DAY_MS, "", "").await.unwrap(),
            QrClaim::AlreadyUsed
        ));

        // A second QR login works but grants nothing more.
        let qr2 = store
            .create_qr_login("local", 300_000, "", "")
            .await
            .unwrap();
        store
            .confirm_qr_login(&qr2.id, u.id)
            .await
            .unwrap()
            .unwrap();
        let QrClaim::LoggedIn {
            first_login_bonus, ..
        } = store.claim_qr_login(&qr2.id, DAY_MS, "", "").await.unwrap()
        else {
            panic!("expected a login")
        };
        assert!(!first_login_bonus);
        assert_eq!(store.account(u.id).await.unwrap().free_checks, 1);
        let ledger = store.ledger(u.id, 10).await.unwrap();
        assert_eq!(ledger.len(), 1);
        assert_eq!(ledger[0].kind, "qr_first_login_bonus");
        assert_eq!(ledger[0].free_checks_after, 1);
    }
);

store_test!(
    expired_qr_cannot_be_confirmed_or_claimed,
    |store: Store| async move {
        let u = store
            .create_user("frank", "password-1", false)
            .await
            .unwrap();
        let qr = store.create_qr_login("local", -1, "", "").await.unwrap();
        assert_eq!(qr.status, QrStatus::Expired);
        assert_eq!(
            store.confirm_qr_login(&qr.id, u.id).await.unwrap(),
            Err(QrStatus::Expired)
        );
        assert!(matches!(
            store.claim_qr_login(&qr.id, DAY_MS, "", "").await.unwrap(),
            QrClaim::Expired
        ));
        assert!(matches!(
            store.qr_login("unknown").await,
            Err(StoreError::NotFound)
        ));
        assert!(matches!(
            store.claim_qr_login("unknown", DAY_MS, "", "").await,
            Err(StoreError::NotFound)
        ));
    }
);

store_test!(
    ledger_records_every_movement_and_refuses_overdraft,
    |store: Store| async move {
        let u = store
            .create_user("grace", "password-1", false)
            .await
            .unwrap();
        let a = store
            .operator_credit(u.id, 1_000, 2, "测试充值")
            .await
            .unwrap();
        assert_eq!((a.balance_fen, a.free_checks), (1_000, 2));
        let b = store.operator_credit(u.id, -300, 0, "更正").await.unwrap();
        assert_eq!(b.balance_fen, 700);
        let over = store.operator_credit(u.id, -701, 0, "超额").await;
        assert!(matches!(over, Err(StoreError::InsufficientFunds)));
        assert_eq!(store.account(u.id).await.unwrap().balance_fen, 700);
        let ledger = store.ledger(u.id, 10).await.unwrap();
        assert_eq!(ledger.len(), 2);
        assert_eq!(ledger[0].balance_after_fen, 700);
        assert_eq!(ledger[1].delta_fen, 1_000);
        let sum: i64 = ledger.iter().map(|e| e.delta_fen).sum();
        assert_eq!(sum, 700);
        assert!(matches!(
            store.operator_credit(9_999, 1, 0, "x").await,
            Err(StoreError::NotFound)
        ));
    }
);

mod library {
    use simcheck::FingerprintParams;
    use simcheck::conformance as c;
    use store::{SqlLibrary, Store, store_test};

    fn lib(store: Store) -> SqlLibrary {
        SqlLibrary::new(store, FingerprintParams::default())
    }

    store_test!(add_list_and_find, |store: Store| async move {
        c::add_list_and_find(&lib(store)).await
    });
    store_test!(scopes_are_respected, |store: Store| async move {
        c::scopes_are_respected(&lib(store)).await
    });
    store_test!(remove_hides_a_document, |store: Store| async move {
        c::remove_hides_a_document(&lib(store)).await
    });
    store_test!(very_common_kgrams_are_skipped, |store: Store| async move {
        c::very_common_kgrams_are_skipped(&lib(store)).await
    });
}

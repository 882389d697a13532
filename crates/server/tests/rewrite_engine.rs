//! `paper_machine_api/engine`: the rewrite pages learn which model rewrites — the small local
//! model, an operator's OpenAI-compatible endpoint, or none — so they can say what to expect.

#[macro_use]
mod common;

use common::*;

async fn engine(s: &TestServer) -> Value {
    let (status, body) = s.get("/api/base/paper_machine_api/engine", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].clone()
}

api_test!(
    no_model_installed,
    Config {
        models_dir: Some(tempfile::tempdir().unwrap().keep()),
        ..test_config()
    },
    async |s: &TestServer| {
        let e = engine(s).await;
        assert_eq!(e["source"], json!("none"));
        assert!(e["model"].is_null());
        assert!(
            e["unavailable"]
                .as_str()
                .unwrap()
                .contains("wenjian models fetch"),
            "{e}"
        );
    }
);

api_test!(
    an_endpoint_rewrites,
    Config {
        llm_base_url: Some("http://127.0.0.1:9/v1".into()),
        llm_model: Some("deepseek-chat".into()),
        ..test_config()
    },
    async |s: &TestServer| {
        let e = engine(s).await;
        assert_eq!(e["source"], json!("endpoint"));
        assert_eq!(e["model"], json!("deepseek-chat"));
        assert!(e["unavailable"].is_null());
    }
);

api_test!(
    the_larger_local_model_named_but_not_installed,
    Config {
        models_dir: Some({
            // The small model present (its files need only exist for the check), the larger one not.
            let dir = tempfile::tempdir().unwrap().keep();
            let small = dir.join("qwen2.5-0.5b");
            std::fs::create_dir_all(&small).unwrap();
            std::fs::write(small.join("model.gguf"), b"").unwrap();
            std::fs::write(small.join("tokenizer.json"), b"").unwrap();
            dir
        }),
        rewrite_provider: "local".into(),
        rewrite_local_model: "qwen2.5-1.5b".into(),
        ..test_config()
    },
    async |s: &TestServer| {
        let e = engine(s).await;
        assert_eq!(e["source"], json!("none"), "{e}");
        assert!(
            e["unavailable"]
                .as_str()
                .unwrap()
                .contains("wenjian models fetch qwen2.5-1.5b"),
            "{e}"
        );
    }
);

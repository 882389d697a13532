//! With the real local model (fetched by `wenjian models fetch`; CI fetches it): the copy guard
//! of a Chinese source bars stray English words but never the tokens that end an answer.
//! Skips with a clear message when the model files are absent.

use std::path::PathBuf;

fn local_model() -> Option<llm::LocalScorer> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models"))
        .join("qwen2.5-0.5b");
    match llm::LocalScorer::load(&dir, "qwen2.5-0.5b") {
        Ok(model) => Some(model),
        Err(e) => {
            eprintln!(
                "skipped: local model not available in {} ({e}); run `wenjian models fetch`",
                dir.display()
            );
            None
        }
    }
}

#[test]
fn copy_guard_never_bars_the_end_of_an_answer() {
    let Some(model) = local_model() else { return };
    let guard = llm::chat::CopyGuard {
        source: "本文基于RFID技术设计了一种图书馆管理系统，并在三所高校进行了测试。".into(),
        keep: vec!["RFID".into()],
        probability: 1.0,
    };
    let blocking = model.blocking(&guard).unwrap();
    for stop in ["<|im_end|>", "<|endoftext|>"] {
        let id = model.token_id(stop).expect(stop);
        assert!(!blocking.bars_always(id), "{stop} is barred");
    }
    let english = model.tokenize(" Privacy").unwrap().ids;
    assert!(
        english.iter().all(|&id| blocking.bars_always(id)),
        "{english:?}"
    );
    let kept = model.tokenize("RFID").unwrap().ids;
    assert!(kept.iter().all(|&id| !blocking.bars_always(id)), "{kept:?}");
}

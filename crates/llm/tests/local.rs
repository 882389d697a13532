//! With the real local model (fetched by `wenjian models fetch`; CI fetches it): the copy guard
//! of a Chinese source bars stray English words and other scripts, that of an English one bars
//! Chinese, and neither bars the tokens that end an answer.
//! The integer arithmetic scores as the f32 one does, within its rounding.
//! A prompt that starts like the last one resumes from it.
//! Skips with a clear message when the model files are absent.

use std::path::PathBuf;

fn local_model() -> Option<llm::LocalScorer> {
    local_model_with(llm::Arithmetic::default())
}

fn local_model_with(arithmetic: llm::Arithmetic) -> Option<llm::LocalScorer> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models"))
        .join("qwen2.5-0.5b");
    match llm::LocalScorer::load_with(&dir, "qwen2.5-0.5b", arithmetic) {
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
        run: 1,
        chars: 0,
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
    // Nor does it write a barred word in another script ("舒巴タン" on the paper bench).
    for other in ["タン", "школь"] {
        let ids = model.tokenize(other).unwrap().ids;
        assert!(
            ids.iter().all(|&id| blocking.bars_always(id)),
            "{other}: {ids:?}"
        );
    }
}

#[test]
fn an_english_guard_bars_chinese_and_nothing_else() {
    let Some(model) = local_model() else { return };
    let blocking = model
        .blocking(&llm::chat::CopyGuard::english_only())
        .unwrap();
    let chinese = model.tokenize("普惠金融").unwrap().ids;
    assert!(
        chinese.iter().all(|&id| blocking.bars_always(id)),
        "{chinese:?}"
    );
    let english = model
        .tokenize("Digital inclusive finance (DIF), 2019: 7.6%.")
        .unwrap()
        .ids;
    assert!(
        english.iter().all(|&id| !blocking.bars_always(id)),
        "{english:?}"
    );
    for stop in ["<|im_end|>", "<|endoftext|>"] {
        let id = model.token_id(stop).expect(stop);
        assert!(!blocking.bars_always(id), "{stop} is barred");
    }
}

#[test]
fn integer_arithmetic_scores_like_f32() {
    let Some(f32_model) = local_model_with(llm::Arithmetic::F32) else {
        return;
    };
    let Some(int8_model) = local_model_with(llm::Arithmetic::Int8) else {
        return;
    };
    let text = "随着信息技术的快速发展，高校图书馆的管理方式发生了深刻变化。本文基于RFID技术设计了一种图书馆管理系统，\
                并在三所高校进行了为期一年的测试，结果表明借还书效率提高了约百分之四十。";
    let a = f32_model.score(text, None).unwrap();
    let b = int8_model.score(text, None).unwrap();
    assert_eq!(a.len(), b.len());
    let n = a.len() as f64;
    let mean = |v: &[llm::ScoredToken], f: fn(&llm::ScoredToken) -> f32| {
        v.iter().map(|t| f(t) as f64).sum::<f64>() / n
    };
    let per_token: f64 = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x.logprob - y.logprob).abs() as f64)
        .sum::<f64>()
        / n;
    let (lp_a, lp_b) = (mean(&a, |t| t.logprob), mean(&b, |t| t.logprob));
    let (h_a, h_b) = (mean(&a, |t| t.entropy), mean(&b, |t| t.entropy));
    eprintln!(
        "mean log p {lp_a:.4} / {lp_b:.4}, entropy {h_a:.4} / {h_b:.4}, per token |Δ| {per_token:.4}"
    );
    // Measured on abstracts: 0.005 nats in the mean, 0.065 per token; a wrong weight or scale
    // would move them by whole nats.
    assert!((lp_a - lp_b).abs() < 0.05, "{lp_a} vs {lp_b}");
    assert!((h_a - h_b).abs() < 0.1, "{h_a} vs {h_b}");
    assert!(per_token < 0.2, "{per_token}");
    assert_eq!(
        a.iter().map(|t| (t.start, t.end)).collect::<Vec<_>>(),
        b.iter().map(|t| (t.start, t.end)).collect::<Vec<_>>()
    );
}

/// Generation resumes from the start a prompt shares with the last one (the paper writer's
/// prompts share their instructions and outline): only the rest is evaluated, and the answer is
/// still an answer to the whole prompt. Equal text is not asserted: with this model's integer
/// products a position computed in a batch of another size can round an activation the other
/// way, and greedy answers then part where two words are nearly tied (seen here: "本文研究…" /
/// "本文旨在…"). The tiny model's tests check the resumed cache against a full pass.
#[test]
fn a_prompt_sharing_the_last_ones_start_resumes_from_it() {
    use llm::chat::Message;
    use llm::generate::{Sampling, chat_prompt};
    let Some(model) = local_model() else { return };
    let greedy = Sampling {
        temperature: 0.0,
        ..Sampling::default()
    };
    let ask = |question: &str| {
        chat_prompt(&[
            Message::system("你是一名论文写作助手，回答简洁。"),
            Message::user(format!(
                "论文题目：高校图书馆管理系统的设计与实现。{question}"
            )),
        ])
    };
    let answer = |prompt: &str| {
        model
            .generate(prompt, 24, &greedy, None, &mut |_| true)
            .unwrap()
    };
    let meaning = ask("请用一句话写出本文的研究意义。");
    model.forget_last_prompt();
    let cold = answer(&meaning);
    assert_eq!(cold.reused_tokens, 0);
    model.forget_last_prompt();
    let keywords = answer(&ask("请列出两个关键词。"));
    let resumed = answer(&meaning);
    assert!(
        resumed.reused_tokens >= 16 && resumed.reused_tokens < keywords.prompt_tokens,
        "{} of {}",
        resumed.reused_tokens,
        resumed.prompt_tokens
    );
    // The same prompt again: all but its last token are reused.
    let again = answer(&meaning);
    assert_eq!(again.reused_tokens, again.prompt_tokens - 1);
    for text in [&cold.text, &resumed.text, &again.text] {
        assert!(
            text.contains("图书馆"),
            "not an answer to the prompt: {text}"
        );
    }
    // A prompt sharing almost nothing starts from nothing.
    let other = answer(&chat_prompt(&[Message::user("你好")]));
    assert_eq!(other.reused_tokens, 0);
}

//! The OpenAI-compatible client against a local server that speaks the documented protocol
//! (`POST /v1/chat/completions`, JSON or server-sent events with `data: [DONE]`, usage in the
//! last chunk when `stream_options.include_usage` is set, 429 with `Retry-After`, error bodies
//! `{"error":{"message":…}}`). The fake derives its answer from the request, so the test checks
//! what was sent.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use llm::chat::{ChatError, ChatModel, ChatRequest, Message, OpenAiCompatible, OpenAiConfig};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

#[derive(Clone, Default)]
struct Fake {
    calls: Arc<AtomicU32>,
    /// Answer 429 to this many calls first.
    busy: Arc<AtomicU32>,
}

/// The answer the fake gives: the user's text reversed, with the model and temperature it was asked for.
fn answer(body: &Value) -> String {
    let user = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    format!(
        "{}|{}|{}",
        user.chars().rev().collect::<String>(),
        body["model"].as_str().unwrap_or(""),
        body["temperature"]
    )
}

async fn completions(State(fake): State<Fake>, headers: HeaderMap, body: String) -> Response {
    fake.calls.fetch_add(1, Ordering::SeqCst);
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer sk-test") {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})),
        )
            .into_response();
    }
    if fake
        .busy
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "0")],
            axum::Json(json!({"error": {"message": "Rate limit reached"}})),
        )
            .into_response();
    }
    let body: Value = serde_json::from_str(&body).unwrap();
    let text = answer(&body);
    if body["model"] == "always-down" {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    if body["stream"] != json!(true) {
        return axum::Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "fake-model-0613",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        }))
        .into_response();
    }
    // One chunk per character, written in pieces that cut events (and characters) apart.
    let mut sse = String::new();
    for (i, c) in text.chars().enumerate() {
        let delta = if i == 0 {
            json!({"role": "assistant", "content": c.to_string()})
        } else {
            json!({"content": c.to_string()})
        };
        let event = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "fake-model-0613",
            "choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
        sse.push_str(&format!("data: {event}\n\n"));
    }
    sse.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    if body["stream_options"]["include_usage"] == json!(true) {
        sse.push_str(&format!(
            "data: {}\n\n",
            json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
        ));
    }
    sse.push_str("data: [DONE]\n\n");
    let bytes = sse.into_bytes();
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
        bytes.chunks(7).map(|c| Ok(c.to_vec())).collect();
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures_stream(pieces)))
        .unwrap()
}

/// A body stream from pieces, each sent separately.
fn futures_stream(
    pieces: Vec<Result<Vec<u8>, std::io::Error>>,
) -> impl futures_core::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    struct Pieces(std::vec::IntoIter<Result<Vec<u8>, std::io::Error>>);
    impl futures_core::Stream for Pieces {
        type Item = Result<Vec<u8>, std::io::Error>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Pieces(pieces.into_iter())
}

async fn start(fake: Fake) -> String {
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(fake);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn client(base_url: &str, model: &str, key: &str, retries: u32) -> OpenAiCompatible {
    OpenAiCompatible::new(OpenAiConfig {
        base_url: base_url.into(),
        api_key: key.into(),
        model: model.into(),
        timeout: Duration::from_secs(10),
        retries,
        backoff: Duration::from_millis(10),
    })
    .unwrap()
}

fn request(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("只输出改写后的文字"), Message::user(text)],
        temperature: 0.5,
        max_tokens: Some(200),
        copy_guard: None,
    }
}

#[tokio::test]
async fn a_completion_returns_the_text_model_and_usage() {
    let base = start(Fake::default()).await;
    let c = client(&base, "deepseek-chat", "sk-test", 0);
    assert_eq!(c.id(), "openai:deepseek-chat");
    let reply = c.chat(&request("改写这一段"), None).await.unwrap();
    assert_eq!(reply.text, "段一这写改|deepseek-chat|0.5");
    assert_eq!(reply.model, "fake-model-0613");
    assert_eq!(
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
        (11, 7)
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn a_stream_delivers_every_delta_in_order_and_the_usage() {
    let base = start(Fake::default()).await;
    let c = client(&base, "qwen-plus", "sk-test", 0);
    let seen = std::sync::Mutex::new(Vec::<String>::new());
    let on_delta = |d: &str| seen.lock().unwrap().push(d.to_string());
    let reply = c
        .chat(&request("流式输出的中文"), Some(&on_delta))
        .await
        .unwrap();
    let deltas = seen.into_inner().unwrap();
    assert_eq!(reply.text, "文中的出输式流|qwen-plus|0.5");
    assert_eq!(deltas.concat(), reply.text);
    assert_eq!(deltas.len(), reply.text.chars().count());
    assert_eq!(reply.usage.completion_tokens, 7);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_servers_delay() {
    let fake = Fake::default();
    fake.busy.store(2, Ordering::SeqCst);
    let base = start(fake.clone()).await;
    let reply = client(&base, "m", "sk-test", 3)
        .chat(&request("重试"), None)
        .await
        .unwrap();
    assert_eq!(reply.text, "试重|m|0.5");
    assert_eq!(fake.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn failures_are_typed_and_never_retried_when_the_request_is_wrong() {
    let fake = Fake::default();
    let base = start(fake.clone()).await;
    let err = client(&base, "m", "wrong-key", 3)
        .chat(&request("x"), None)
        .await
        .unwrap_err();
    match &err {
        ChatError::Rejected { status, message } => {
            assert_eq!(*status, 401);
            assert_eq!(message, "Incorrect API key provided");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.code(), "llm_rejected");
    assert_eq!(fake.calls.load(Ordering::SeqCst), 1, "a 401 is not retried");

    let err = client(&base, "always-down", "sk-test", 2)
        .chat(&request("x"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ChatError::Exhausted {
                status: 503,
                attempts: 3
            }
        ),
        "{err:?}"
    );
    assert_eq!(fake.calls.load(Ordering::SeqCst), 4);

    // Nothing listening.
    let err = client("http://127.0.0.1:9/v1", "m", "sk-test", 1)
        .chat(&request("x"), None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "llm_unreachable", "{err:?}");
    assert!(err.to_string().starts_with("模型服务无法连接"));
}

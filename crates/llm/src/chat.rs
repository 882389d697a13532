//! Chat completion behind one trait, so rewriting and generation do not care who answers: any
//! OpenAI-compatible `/chat/completions` endpoint (streaming over server-sent events, retries with
//! backoff on 429 and 5xx, token usage reported), and later the local GGUF model.

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: f32,
    pub max_tokens: Option<u32>,
    /// For paraphrasing: a decoder that can (the local one) keeps from copying this text
    /// verbatim. Endpoints never see it.
    pub copy_guard: Option<CopyGuard>,
}

/// Dynamic blocking (Niu et al., 2021): after the answer repeats `run` consecutive tokens of
/// `source`, the token that followed them there is barred for the next step, with
/// `probability`, so the model must find another wording instead of copying. Tokens without a
/// Chinese character (numbers, punctuation, Latin terms) and the tokens of `keep` are never
/// barred. The answer keeps to the source's script: a Chinese source bars Latin words it does
/// not use (see `run`), an English one (no Chinese character) bars every Chinese token.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyGuard {
    pub source: String,
    pub keep: Vec<String>,
    pub probability: f32,
    /// 1 for a rewrite (no wording of the source survives); more for a writer that may use the
    /// source's terms but not copy its sentences. With 1, Latin words the source does not use
    /// are barred too (a small model drifts into English when its Chinese wording is barred).
    pub run: usize,
    /// When more than 0: once the answer ends with a run of this many characters of the
    /// source, every token whose text would continue the run is barred (one draw of
    /// `probability` per step), however the model splits the characters into tokens. The
    /// token-level `run` misses a copy written with another split of the same characters.
    pub chars: usize,
}

impl CopyGuard {
    /// A guard that bars no copy and only keeps the answer in English: its source holds no
    /// Chinese, so every token with a Chinese character is barred. The local model translating
    /// an abstract kept terms it could not put in English ("digital普惠 finance", read on the
    /// paper bench).
    pub fn english_only() -> CopyGuard {
        CopyGuard {
            source: "English".into(),
            keep: vec![],
            probability: 0.0,
            run: 1,
            chars: 0,
        }
    }
}

/// Tokens the provider counted for one call (zero when it does not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    pub text: String,
    /// The model that answered, as the provider names it.
    pub model: String,
    pub usage: Usage,
    /// `stop`, `length`, … as the provider says.
    pub finish_reason: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("模型服务无法连接：{0}")]
    Unreachable(String),
    #[error("模型服务超时")]
    Timeout,
    #[error("模型服务拒绝了请求（HTTP {status}）：{message}")]
    Rejected { status: u16, message: String },
    #[error("模型服务繁忙（HTTP {status}），重试 {attempts} 次后仍未成功")]
    Exhausted { status: u16, attempts: u32 },
    #[error("模型服务的回答无法解析：{0}")]
    Malformed(String),
}

impl ChatError {
    /// A stable code for APIs and logs.
    pub fn code(&self) -> &'static str {
        match self {
            ChatError::Unreachable(_) => "llm_unreachable",
            ChatError::Timeout => "llm_timeout",
            ChatError::Rejected { .. } => "llm_rejected",
            ChatError::Exhausted { .. } => "llm_busy",
            ChatError::Malformed(_) => "llm_malformed",
        }
    }

    /// Whether the same request may succeed later (the service was down, slow or busy, or cut
    /// its answer off); a refusal will not.
    pub fn is_transient(&self) -> bool {
        !matches!(self, ChatError::Rejected { .. })
    }
}

/// Something that answers chat requests. `on_delta`, when given, receives the text as it streams.
pub trait ChatModel: Send + Sync {
    /// `provider:model`, recorded with every task it serves and shown to users.
    fn id(&self) -> String;
    /// Whether this is the small model running here (its answers need more tidying than an
    /// endpoint's; see `CopyGuard`).
    fn is_local(&self) -> bool {
        false
    }
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: Option<&'a (dyn Fn(&str) + Send + Sync)>,
    ) -> BoxFuture<'a, Result<ChatReply, ChatError>>;
}

/// An OpenAI-compatible endpoint: `POST {base_url}/chat/completions`.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.deepseek.com/v1` or `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    /// Whole-call limit, streaming included.
    pub timeout: Duration,
    /// Further attempts after a 429 or 5xx (or a connection failure).
    pub retries: u32,
    /// The first backoff; doubled each time, unless the server sends `Retry-After`.
    pub backoff: Duration,
}

pub struct OpenAiCompatible {
    config: OpenAiConfig,
    http: reqwest::Client,
}

impl OpenAiCompatible {
    pub fn new(config: OpenAiConfig) -> Result<Self, ChatError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| ChatError::Unreachable(e.to_string()))?;
        Ok(OpenAiCompatible { config, http })
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> serde_json::Value {
        let mut body = serde_json::json!({
            "model": self.config.model,
            "messages": request.messages,
            "temperature": request.temperature,
            "stream": stream,
        });
        if stream {
            body["stream_options"] = serde_json::json!({"include_usage": true});
        }
        if let Some(n) = request.max_tokens {
            body["max_tokens"] = n.into();
        }
        body
    }

    /// Sends the request, retrying 429, 5xx and failed connections with backoff.
    async fn send(&self, body: &serde_json::Value) -> Result<reqwest::Response, ChatError> {
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let mut attempt = 0;
        loop {
            let sent = self
                .http
                .post(&url)
                .bearer_auth(&self.config.api_key)
                .json(body)
                .send()
                .await;
            let (status, wait) = match sent {
                Ok(res) if res.status().is_success() => return Ok(res),
                Ok(res) => {
                    let status = res.status().as_u16();
                    if status != 429 && status < 500 {
                        let text = res.text().await.unwrap_or_default();
                        return Err(ChatError::Rejected {
                            status,
                            message: error_message(&text),
                        });
                    }
                    let retry_after = res
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    (status, retry_after)
                }
                Err(e) if e.is_timeout() => return Err(ChatError::Timeout),
                Err(e) if attempt >= self.config.retries => {
                    return Err(ChatError::Unreachable(e.to_string()));
                }
                Err(_) => (0, None),
            };
            if attempt >= self.config.retries {
                return Err(ChatError::Exhausted {
                    status,
                    attempts: attempt + 1,
                });
            }
            let backoff = self.config.backoff * 2u32.saturating_pow(attempt);
            tokio::time::sleep(wait.unwrap_or(backoff).min(Duration::from_secs(60))).await;
            attempt += 1;
        }
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatReply, ChatError> {
        let res = self.send(&self.body(request, false)).await?;
        let body: CompletionBody = res
            .json()
            .await
            .map_err(|e| ChatError::Malformed(e.to_string()))?;
        let choice = body
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| ChatError::Malformed("没有 choices".into()))?;
        Ok(ChatReply {
            text: choice.message.map(|m| m.content).unwrap_or_default(),
            model: body.model.unwrap_or_else(|| self.config.model.clone()),
            usage: body.usage.unwrap_or_default(),
            finish_reason: choice.finish_reason,
        })
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        on_delta: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<ChatReply, ChatError> {
        let mut res = self.send(&self.body(request, true)).await?;
        let mut events = SseParser::default();
        let mut reply = ChatReply {
            text: String::new(),
            model: self.config.model.clone(),
            usage: Usage::default(),
            finish_reason: None,
        };
        let mut done = false;
        while !done {
            let chunk = match res.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) if e.is_timeout() => return Err(ChatError::Timeout),
                Err(e) => return Err(ChatError::Unreachable(e.to_string())),
            };
            for data in events.push(&chunk) {
                if data.trim() == "[DONE]" {
                    done = true;
                    break;
                }
                let event: CompletionBody = serde_json::from_str(&data)
                    .map_err(|e| ChatError::Malformed(format!("{e}: {data}")))?;
                if let Some(model) = event.model {
                    reply.model = model;
                }
                if let Some(usage) = event.usage {
                    reply.usage = usage;
                }
                for choice in event.choices {
                    if let Some(text) = choice.delta.and_then(|d| d.content)
                        && !text.is_empty()
                    {
                        on_delta(&text);
                        reply.text.push_str(&text);
                    }
                    if choice.finish_reason.is_some() {
                        reply.finish_reason = choice.finish_reason;
                    }
                }
            }
        }
        Ok(reply)
    }
}

impl ChatModel for OpenAiCompatible {
    fn id(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: Option<&'a (dyn Fn(&str) + Send + Sync)>,
    ) -> BoxFuture<'a, Result<ChatReply, ChatError>> {
        Box::pin(async move {
            match on_delta {
                Some(f) => self.stream(request, f).await,
                None => self.complete(request).await,
            }
        })
    }
}

/// The provider's own error text (`{"error":{"message":…}}`), else the body, shortened.
fn error_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(String::from))
        .unwrap_or_else(|| body.chars().take(200).collect())
}

#[derive(Deserialize)]
struct CompletionBody {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<ReplyMessage>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ReplyMessage {
    #[serde(default)]
    content: String,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
}

/// Server-sent events as they arrive in arbitrary chunks: the `data:` payload of every complete
/// event (several `data:` lines of one event are joined by newlines; comments are skipped).
#[derive(Default)]
pub struct SseParser {
    buffer: Vec<u8>,
}

impl SseParser {
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = vec![];
        while let Some((end, sep)) = find_event_end(&self.buffer) {
            let raw: Vec<u8> = self.buffer.drain(..end + sep).collect();
            let text = String::from_utf8_lossy(&raw[..end]);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if !data.is_empty() {
                events.push(data.join("\n"));
            }
        }
        events
    }
}

/// Where the first event ends (a blank line: `\n\n` or `\r\n\r\n`) and the separator's length.
fn find_event_end(buf: &[u8]) -> Option<(usize, usize)> {
    (0..buf.len()).find_map(|i| {
        if buf[i..].starts_with(b"\r\n\r\n") {
            Some((i, 4))
        } else if buf[i..].starts_with(b"\n\n") {
            Some((i, 2))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_split_across_chunks_come_out_whole() {
        let mut p = SseParser::default();
        assert!(p.push(b"data: {\"a\"").is_empty());
        assert_eq!(p.push(b":1}\n\n: comment\n\ndata: [DO"), vec!["{\"a\":1}"]);
        assert_eq!(p.push(b"NE]\r\n\r\n"), vec!["[DONE]"]);
    }

    proptest! {
        /// However the stream is cut, the same events come out in the same order.
        #[test]
        fn any_chunking_gives_the_same_events(cuts in proptest::collection::vec(0usize..200, 0..12)) {
            let stream = "data: 第一段\n\ndata: {\"x\": \"二\"}\n\n: ping\n\ndata: a\ndata: b\n\ndata: [DONE]\n\n".as_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.sort();
            let mut p = SseParser::default();
            let mut got = vec![];
            let mut at = 0;
            for c in cuts.into_iter().chain([stream.len()]) {
                got.extend(p.push(&stream[at..c]));
                at = c;
            }
            prop_assert_eq!(got, vec!["第一段", "{\"x\": \"二\"}", "a\nb", "[DONE]"]);
        }

        /// Random bytes never panic the parser.
        #[test]
        fn random_bytes_are_safe(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = SseParser::default().push(&bytes);
        }
    }
}

//! `Params<T>`: one extractor for the spec's "query and body" calls. Query string, form body and
//! JSON body are merged (body wins) and then read as `T`, so clients may send either style.

use crate::envelope::ApiError;
use axum::body::to_bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Bodies of plain API calls are small; uploads use their own extractor.
const BODY_LIMIT: usize = 1024 * 1024;

pub struct Params<T>(pub T);

fn insert_pairs(map: &mut Map<String, Value>, encoded: &str) -> Result<(), ApiError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(encoded)
        .map_err(|_| ApiError::bad_request("bad_request", "请求参数格式错误"))?;
    for (key, value) in pairs {
        map.insert(key, Value::String(value));
    }
    Ok(())
}

impl<T, S> FromRequest<S> for Params<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let mut map = Map::new();
        if let Some(query) = parts.uri.query() {
            insert_pairs(&mut map, query)?;
        }
        let bytes = to_bytes(body, BODY_LIMIT).await.map_err(|_| {
            ApiError::new(
                axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "请求内容过大",
            )
        })?;
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            let content_type = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if content_type.starts_with("application/x-www-form-urlencoded") {
                let text = std::str::from_utf8(&bytes).map_err(|_| {
                    ApiError::bad_request("bad_request", "请求参数不是有效的 UTF-8 文本")
                })?;
                insert_pairs(&mut map, text)?;
            } else {
                match serde_json::from_slice::<Value>(&bytes) {
                    Ok(Value::Object(body)) => map.extend(body),
                    Ok(Value::Null) => {}
                    _ => return Err(ApiError::bad_request("bad_request", "请求体应为 JSON 对象")),
                }
            }
        }
        serde_json::from_value(Value::Object(map))
            .map(Params)
            .map_err(|e| ApiError::bad_request("bad_request", format!("请求参数有误：{e}")))
    }
}

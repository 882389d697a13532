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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use proptest::prelude::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Form {
        username: String,
        password: String,
    }

    async fn extract(query: &str, content_type: &str, body: Vec<u8>) -> Result<Form, ApiError> {
        let req = Request::builder()
            .method("POST")
            .uri(format!("/x?{query}"))
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .expect("request");
        Params::<Form>::from_request(req, &()).await.map(|p| p.0)
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn merges_query_form_and_json() {
        let f = block_on(extract("username=a%20b&password=p", "", vec![])).unwrap();
        assert_eq!((f.username.as_str(), f.password.as_str()), ("a b", "p"));
        let f = block_on(extract(
            "username=q",
            "application/json",
            br#"{"password":"j"}"#.to_vec(),
        ))
        .unwrap();
        assert_eq!((f.username.as_str(), f.password.as_str()), ("q", "j"));
        let f = block_on(extract(
            "username=q&password=x",
            "application/x-www-form-urlencoded",
            b"password=form".to_vec(),
        ))
        .unwrap();
        assert_eq!(f.password, "form", "the body wins over the query");
        let err = block_on(extract("", "application/json", b"[1,2]".to_vec())).unwrap_err();
        assert_eq!((err.status.as_u16(), err.code), (400, "bad_request"));
    }

    proptest! {
        /// Random bytes in every position give a 400 or a value, never a panic.
        #[test]
        fn random_input_never_panics(
            query in "[a-zA-Z0-9=&%._~-]{0,40}",
            body in proptest::collection::vec(any::<u8>(), 0..300),
            kind in 0usize..3,
        ) {
            let content_type = ["application/json", "application/x-www-form-urlencoded", "text/plain"][kind];
            let query = query.replace(['#', ' '], "");
            if let Err(err) = block_on(extract(&query, content_type, body)) {
                prop_assert!(err.status.is_client_error());
                prop_assert!(!err.message.is_empty());
            }
        }
    }
}

/// Numbers and flags arrive as strings from query strings and forms, and as JSON values from
/// bodies; these accept both.
pub mod lenient {
    use serde::{Deserialize, Deserializer, de::Error};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(i64),
        Float(f64),
        Bool(bool),
        Text(String),
    }

    pub fn i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Int(v) => Ok(v),
            Raw::Float(v) if v.fract() == 0.0 => Ok(v as i64),
            Raw::Text(s) => s
                .trim()
                .parse()
                .map_err(|_| D::Error::custom(format!("“{s}”不是整数"))),
            _ => Err(D::Error::custom("应为整数")),
        }
    }

    pub fn opt_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        match Option::<Raw>::deserialize(d)? {
            None => Ok(None),
            Some(Raw::Text(s)) if s.trim().is_empty() => Ok(None),
            Some(Raw::Int(v)) => Ok(Some(v)),
            Some(Raw::Text(s)) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| D::Error::custom(format!("“{s}”不是整数"))),
            Some(_) => Err(D::Error::custom("应为整数")),
        }
    }

    pub fn opt_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        match Option::<Raw>::deserialize(d)? {
            None => Ok(None),
            Some(Raw::Bool(b)) => Ok(Some(b)),
            Some(Raw::Int(v)) => Ok(Some(v != 0)),
            Some(Raw::Text(s)) => match s.trim() {
                "" => Ok(None),
                "true" | "1" => Ok(Some(true)),
                "false" | "0" => Ok(Some(false)),
                _ => Err(D::Error::custom(format!("“{s}”不是是/否值"))),
            },
            Some(_) => Err(D::Error::custom("应为是/否值")),
        }
    }
}

//! Request identity: the bearer-token extractor and the client's address.

use crate::envelope::ApiError;
use crate::state::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header;
use axum::http::request::Parts;
use std::net::SocketAddr;
use store::{SessionUser, StoreError};

/// The signed-in user; requests without a valid token are refused with 401.
pub struct AuthUser(pub SessionUser);

pub fn bearer_token(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))?
        .trim();
    (!token.is_empty()).then_some(token)
}

impl FromRequestParts<AppState> for AuthUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = bearer_token(parts).ok_or_else(ApiError::not_logged_in)?;
        match state.store.session_user(token).await {
            Ok(session) => Ok(AuthUser(session)),
            Err(StoreError::NotFound) => Err(ApiError::not_logged_in()),
            Err(other) => Err(other.into()),
        }
    }
}

/// The signed-in user when there is one; visitors are `None`.
pub struct MaybeUser(pub Option<SessionUser>);

impl FromRequestParts<AppState> for MaybeUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Some(token) = bearer_token(parts) else {
            return Ok(MaybeUser(None));
        };
        match state.store.session_user(token).await {
            Ok(session) => Ok(MaybeUser(Some(session))),
            Err(StoreError::NotFound) => Ok(MaybeUser(None)),
            Err(other) => Err(other.into()),
        }
    }
}

/// Who is calling: the client IP (from the socket, or `X-Forwarded-For` when configured) and agent.
pub struct ClientInfo {
    pub ip: String,
    pub user_agent: String,
}

impl FromRequestParts<AppState> for ClientInfo {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let forwarded = state
            .config
            .trust_forwarded_for
            .then(|| parts.headers.get("x-forwarded-for")?.to_str().ok())
            .flatten()
            .and_then(|v| v.split(',').next())
            .map(|v| v.trim().to_string());
        let socket = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip().to_string());
        let user_agent = parts
            .headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        Ok(ClientInfo {
            ip: forwarded.or(socket).unwrap_or_default(),
            user_agent,
        })
    }
}

/// The address users reach this server at: the configured public URL, else the request's Host.
pub fn public_base(parts_headers: &axum::http::HeaderMap, state: &AppState) -> String {
    if let Some(url) = &state.config.public_url {
        return url.trim_end_matches('/').to_string();
    }
    let host = parts_headers
        .get("x-forwarded-host")
        .or_else(|| parts_headers.get(header::HOST))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1:8080");
    let scheme = parts_headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("http");
    format!("{scheme}://{host}")
}

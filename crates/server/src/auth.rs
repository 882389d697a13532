//! Request identity: the bearer-token extractor and the client's address.

use crate::config::Config;
use crate::envelope::ApiError;
use crate::state::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header;
use axum::http::request::Parts;
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};
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

/// A request the server makes to itself on a user's behalf (a task paid by scanning, started
/// after its page was closed). Set as a request extension, which no client can send.
#[derive(Clone)]
pub struct InternalCaller(pub SessionUser);

impl FromRequestParts<AppState> for AuthUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if let Some(InternalCaller(user)) = parts.extensions.get::<InternalCaller>() {
            return Ok(AuthUser(user.clone()));
        }
        let token = bearer_token(parts).ok_or_else(ApiError::not_logged_in)?;
        match state.store.session_user(token).await {
            Ok(session) => Ok(AuthUser(session)),
            Err(StoreError::NotFound) => Err(ApiError::not_logged_in()),
            Err(other) => Err(other.into()),
        }
    }
}

/// A signed-in operator (console); 401 without a valid token, 403 `not_operator` for everyone
/// else. Checked on the server for every console call, whatever the web app shows.
pub struct OperatorUser(pub SessionUser);

impl FromRequestParts<AppState> for OperatorUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let AuthUser(session) = AuthUser::from_request_parts(parts, state).await?;
        if !session.user.is_operator {
            return Err(ApiError::new(
                axum::http::StatusCode::FORBIDDEN,
                "not_operator",
                "此功能仅限运营人员使用",
            ));
        }
        Ok(OperatorUser(session))
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

/// Who is calling: the client IP (from the socket, or from trusted proxies' `X-Forwarded-For`)
/// and agent.
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
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        let forwarded = parts
            .headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(",");
        let ip = client_ip(&state.config, peer, &forwarded)
            .map(|ip| ip.to_string())
            .unwrap_or_default();
        let user_agent = parts
            .headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        Ok(ClientInfo { ip, user_agent })
    }
}

/// Whether forwarding headers from `peer` are believed.
fn trusted_proxy(config: &Config, peer: IpAddr) -> bool {
    if !config.trust_forwarded_for {
        return false;
    }
    if config.trusted_proxies.is_empty() {
        return true;
    }
    config.trusted_proxies.iter().any(|p| {
        p.parse::<IpNet>()
            .map(|net| net.contains(&peer))
            .or_else(|_| p.parse::<IpAddr>().map(|ip| ip == peer))
            .unwrap_or(false)
    })
}

/// The client's address: the socket peer; behind trusted proxies, the rightmost
/// `X-Forwarded-For` hop that is not itself a trusted proxy (the leftmost entries are whatever
/// the client wrote, so they prove nothing).
pub fn client_ip(config: &Config, peer: Option<IpAddr>, forwarded_for: &str) -> Option<IpAddr> {
    let mut client = peer?;
    if !trusted_proxy(config, client) {
        return Some(client);
    }
    for hop in forwarded_for.rsplit(',') {
        let Ok(hop) = hop.trim().parse::<IpAddr>() else {
            // A hop that is not an address: nothing left of it can be trusted.
            break;
        };
        client = hop;
        if !trusted_proxy(config, hop) || config.trusted_proxies.is_empty() {
            break;
        }
    }
    Some(client)
}

/// This server's address for QR links: the configured public URL; else, from a trusted proxy,
/// the host it forwards; else the request's Host (a QR code is shown only to whoever asked for
/// it, so a forged Host misleads no one else).
pub fn public_base(parts_headers: &axum::http::HeaderMap, state: &AppState) -> String {
    if let Some(url) = &state.config.public_url {
        return url.trim_end_matches('/').to_string();
    }
    let header = |name: &str| parts_headers.get(name).and_then(|v| v.to_str().ok());
    let proxied = state.config.trust_forwarded_for;
    let host = proxied
        .then(|| header("x-forwarded-host"))
        .flatten()
        .or_else(|| header(header::HOST.as_str()))
        .unwrap_or("127.0.0.1:8080");
    let scheme = proxied
        .then(|| header("x-forwarded-proto"))
        .flatten()
        .filter(|s| *s == "https" || *s == "http")
        .unwrap_or("http");
    format!("{scheme}://{host}")
}

/// Where a report sends its reader to verify it: only the configured public URL, since a report
/// outlives the request and is shown to others (a forged Host would send a teacher to a forger's
/// site). Without one, the report names the page instead of an address.
pub fn report_verify_url(state: &AppState, code: &str) -> String {
    match &state.config.public_url {
        Some(url) => format!("{}/verify?code={code}", url.trim_end_matches('/')),
        None => "本站「报告验证」页面（/verify）".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        s.parse().ok()
    }

    #[test]
    fn the_client_is_the_rightmost_untrusted_hop() {
        let direct = Config::default();
        assert_eq!(client_ip(&direct, ip("9.9.9.9"), "1.2.3.4"), ip("9.9.9.9"));
        let one_proxy = Config {
            trust_forwarded_for: true,
            ..Config::default()
        };
        // The client wrote "6.6.6.6"; the proxy appended the address it saw.
        assert_eq!(
            client_ip(&one_proxy, ip("10.0.0.2"), "6.6.6.6, 1.2.3.4"),
            ip("1.2.3.4")
        );
        let listed = Config {
            trust_forwarded_for: true,
            trusted_proxies: vec!["10.0.0.0/8".into(), "192.168.1.7".into()],
            ..Config::default()
        };
        assert_eq!(
            client_ip(&listed, ip("10.0.0.2"), "6.6.6.6, 1.2.3.4, 192.168.1.7"),
            ip("1.2.3.4")
        );
        // Not from a listed proxy: its header is ignored.
        assert_eq!(client_ip(&listed, ip("8.8.8.8"), "6.6.6.6"), ip("8.8.8.8"));
        assert_eq!(
            client_ip(&listed, ip("10.0.0.2"), "junk, 1.2.3.4"),
            ip("1.2.3.4")
        );
    }
}

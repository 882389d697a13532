//! The HTTP/1.1 front: a connection cap, a deadline for request headers (which also closes
//! idle kept-alive connections), an idle deadline for request bodies, and the security headers
//! every response carries. A slow or silent client holds one connection for seconds, not forever.

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::{HeaderName, HeaderValue, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::ServiceExt;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::RequestBodyTimeoutLayer;

/// Limits of the front.
#[derive(Debug, Clone, Copy)]
pub struct Front {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
}

/// The page may load only its own scripts, styles (inline ones for the component library),
/// images and fonts, and may not be framed by anyone (the QR confirmation page included).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; \
     connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; \
     frame-ancestors 'none'";

/// The security headers, set on every response that does not set its own.
pub fn with_security_headers(router: Router) -> Router {
    let headers: [(HeaderName, &'static str); 5] = [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "strict-origin-when-cross-origin"),
        (
            HeaderName::from_static("permissions-policy"),
            "camera=(), microphone=(), geolocation=()",
        ),
    ];
    headers.into_iter().fold(router, |router, (name, value)| {
        router.layer(SetResponseHeaderLayer::if_not_present(
            name,
            HeaderValue::from_static(value),
        ))
    })
}

/// Serves `router` on `listener` until `shutdown` turns true, then lets the connections finish
/// the requests in flight.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    front: Front,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let router = router.layer(RequestBodyTimeoutLayer::new(front.body_read_timeout));
    let slots = Arc::new(Semaphore::new(front.max_connections.max(1)));
    loop {
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => permit.expect("never closed"),
            _ = stopped(&mut shutdown) => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stopped(&mut shutdown) => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let mut stop = shutdown.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
                    router.clone().oneshot(req.map(axum::body::Body::new))
                },
            );
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(front.header_read_timeout)
                .max_buf_size(64 * 1024);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stopped(&mut stop) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    // Wait for the connections still open to finish what they were doing.
    let _ = slots
        .acquire_many(front.max_connections.max(1) as u32)
        .await;
    Ok(())
}

/// Resolves once `shutdown` turns true (or its sender is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

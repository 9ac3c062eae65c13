//! The front door: each request on a connection comes here first. A page
//! view whose finished page is in the page cache is answered here, at the
//! cost of a static file ([`pages::from_cache`]: one lookup, then bytes and
//! header values made when the page was cached); every other request goes
//! to the router. Both ways get the same bookkeeping ([`Seen`]: request id,
//! log line, metrics) and the same security headers (a cached page keeps
//! them with its other header values), so a response does not show which
//! way it came.
//!
//! Only paths of the route table are answered here, and the route table
//! may not use a path the router serves itself
//! ([`crate::content::routes::SERVER_SEGMENTS`]), so a route of the router never
//! reaches the page cache.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::Request;
use axum::response::Response;
use axum::Router;
use tower::{Service, ServiceExt};

use super::observe::{self, Seen};
use super::pages;
use crate::client_ip;
use crate::state::SharedState;

#[derive(Clone)]
pub struct FrontDoor {
    state: SharedState,
    router: Router,
}

impl FrontDoor {
    /// The front door of `router` (see [`super::router`]).
    pub fn new(state: SharedState, router: Router) -> FrontDoor {
        FrontDoor { router, state }
    }
}

impl Service<Request> for FrontDoor {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let started = Instant::now();
        let state = &self.state;
        if let Some((mut res, hot)) = pages::from_hot(state, request.method(), request.uri(), request.headers()) {
            let (peer, headers) = (observe::peer(request.extensions()), request.headers());
            let seen = Seen::new(state, started, peer, headers);
            let client = || client_ip::resolve(peer, headers, &state.config.trusted_proxies);
            let seconds = seen.answered(request.method(), request.uri().path(), hot.id.name(), client, &mut res);
            hot.viewed(&state.metrics, res.status(), seconds);
            return Box::pin(std::future::ready(Ok(res)));
        }
        let (state, router) = (self.state.clone(), self.router.clone());
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            match pages::from_cache(&state, &parts.method, &parts.uri, &parts.headers).await {
                Some((mut res, page)) => {
                    let peer = observe::peer(&parts.extensions);
                    let seen = Seen::new(&state, started, peer, &parts.headers);
                    let client = || client_ip::resolve(peer, &parts.headers, &state.config.trusted_proxies);
                    let seconds = seen.answered(&parts.method, parts.uri.path(), &page, client, &mut res);
                    state.metrics.observe_request(&page, res.status().as_u16(), seconds);
                    Ok(res)
                }
                None => router.oneshot(Request::from_parts(parts, body)).await,
            }
        })
    }
}

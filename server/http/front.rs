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

use super::observe::Seen;
use super::pages;
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
        if let Some((mut res, page)) = pages::from_hot(&self.state, request.method(), request.uri(), request.headers()) {
            let seen = Seen::new(&self.state, started, request.extensions(), request.headers());
            seen.answered(&self.state, request.method(), request.uri().path(), page, &mut res);
            return Box::pin(std::future::ready(Ok(res)));
        }
        let (state, router) = (self.state.clone(), self.router.clone());
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            match pages::from_cache(&state, &parts.method, &parts.uri, &parts.headers).await {
                Some((mut res, page)) => {
                    let seen = Seen::new(&state, started, &parts.extensions, &parts.headers);
                    seen.answered(&state, &parts.method, parts.uri.path(), page, &mut res);
                    Ok(res)
                }
                None => router.oneshot(Request::from_parts(parts, body)).await,
            }
        })
    }
}

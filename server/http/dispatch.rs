//! The front door: each request on a connection comes here first. A page
//! view whose finished page is kept is answered here, at the cost of a
//! static file: first by its path alone from the site's hot pages
//! ([`pages::from_hot`]: one lookup, no waiting, nothing boxed), else
//! resolved and looked up in the page cache ([`pages::from_cache`]); every
//! other request goes to the router. All ways get the same bookkeeping
//! ([`Seen`]: request id, log line, metrics) and the same security headers
//! (a cached page keeps them with its other header values), so a response
//! does not show which way it came (README, "What a cache hit does").
//!
//! Only paths of the route table are answered here, and the route table
//! may not use a path the router serves itself
//! ([`crate::content::routes::SERVER_SEGMENTS`]), so a route of the router never
//! reaches the page cache.

use std::convert::Infallible;
use std::future::{ready, Future, Ready};
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, Method, Uri};
use axum::Router;
use bytes::Bytes;
use futures_util::future::Either;
use http_body_util::Full;
use hyper::body::Incoming;
use tower::ServiceExt;

use super::observe::Seen;
use super::pages;
use crate::client_ip;
use crate::render::cache::Kept;
use crate::state::{AppState, SharedState};

/// The body of an answer at the front door: a cached page's bytes as they
/// are kept (nothing boxed), or what the router made.
pub type DoorBody = http_body_util::Either<Full<Bytes>, Body>;

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

    /// The door of one connection, from `peer` (see [`crate::edge::serve`]).
    pub fn connection(&self, peer: SocketAddr) -> Door {
        Door {
            front: self.clone(),
            peer,
        }
    }
}

/// The front door of one connection: it answers the connection's requests
/// as they come off the wire. A hit is answered before anything is boxed
/// or handed on; a request for the router gets its body boxed and its
/// peer in its extensions ([`ConnectInfo`]), as axum expects.
pub struct Door {
    front: FrontDoor,
    peer: SocketAddr,
}

type Answer = hyper::Response<DoorBody>;
type Later = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

impl hyper::service::Service<hyper::Request<Incoming>> for Door {
    type Response = Answer;
    type Error = Infallible;
    type Future = Either<Ready<Result<Answer, Infallible>>, Later>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let started = Instant::now();
        let (state, peer) = (&self.front.state, self.peer);
        if let Some((mut res, hot)) =
            pages::from_hot(state, request.method(), request.uri(), request.headers())
        {
            let seconds = booked(
                state,
                started,
                peer,
                (request.method(), request.uri(), request.headers()),
                hot.id.name(),
                &mut res,
            );
            hot.viewed(&state.metrics, res.status(), seconds);
            return Either::Left(ready(Ok(res.map(DoorBody::Left))));
        }
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(peer));
        let FrontDoor { state, router } = self.front.clone();
        Either::Right(Box::pin(async move {
            let (parts, body) = request.into_parts();
            match pages::from_cache(&state, &parts.method, &parts.uri, &parts.headers).await {
                Some((mut res, page)) => {
                    let seconds = booked(
                        &state,
                        started,
                        peer,
                        (&parts.method, &parts.uri, &parts.headers),
                        &page,
                        &mut res,
                    );
                    state
                        .metrics
                        .observe_request(&page, res.status().as_u16(), seconds);
                    Ok(res.map(DoorBody::Left))
                }
                None => {
                    let Ok(res) = router.oneshot(Request::from_parts(parts, body)).await;
                    Ok(res.map(DoorBody::Right))
                }
            }
        }))
    }
}

/// A kept page's answer to the request (`method`, `uri`, `headers`) from
/// `peer`, booked as the router's middleware books its answers: the
/// request's id in, its log line written when one is due. Returns how long
/// it took, for the metrics.
fn booked(
    state: &AppState,
    started: Instant,
    peer: SocketAddr,
    (method, uri, headers): (&Method, &Uri, &HeaderMap),
    route: &str,
    res: &mut Kept,
) -> f64 {
    let seen = Seen::new(state, started, peer, headers);
    let client = || client_ip::resolve(peer, headers, &state.config.trusted_proxies);
    seen.answered(method, uri.path(), route, client, res)
}

//! Where every request on a connection goes first, and once: by the first
//! segment of its path. A segment the route table leaves to the server
//! ([`is_the_servers`]: the API, assets, SEO files, health, `dev`'s files)
//! goes to the axum router ([`super::router`]), which never sees a
//! page; every other path is a page and goes to the page pipeline
//! ([`page_handler`]): the page last made for the path, else resolved,
//! looked up in the page cache and, on a miss, made in the same call.
//!
//! A page answered from [`pages::latest_for_path`](crate::pages::latest_for_path)
//! (the pipeline's first step: one of the site's own paths, which are
//! pages by construction, so it is asked before the segment is read) is
//! answered here, as it comes off the wire: nothing is boxed or handed
//! on, and the answer is a ready future, at the cost of a static file
//! (docs/performance.md, "What a cache hit does"). Every other request gets
//! its body boxed and its peer in its extensions ([`ConnectInfo`]), as
//! axum expects.

use std::convert::Infallible;
use std::future::{ready, Future, Ready};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use bytes::Bytes;
use futures_util::future::Either;
use http_body_util::Full;
use tower::ServiceExt;

use super::page_handler;
use crate::content::routes::is_the_servers;
use crate::state::SharedState;

/// The body of an answer: a cached page's bytes as they are kept (nothing
/// boxed), or what the router or the page pipeline made.
pub type ResponseBody = http_body_util::Either<Full<Bytes>, Body>;

/// The services every connection's requests are dispatched to.
#[derive(Clone)]
pub struct Dispatcher {
    state: SharedState,
    /// The API, assets, SEO files and health ([`super::router`]).
    router: Router,
    /// Pages ([`page_handler::pipeline`]).
    page_pipeline: Router,
}

impl Dispatcher {
    pub fn new(state: SharedState, router: Router) -> Dispatcher {
        let page_pipeline = page_handler::pipeline(state.clone());
        Dispatcher {
            state,
            router,
            page_pipeline,
        }
    }

    /// The service of one connection, from `peer` (see [`crate::edge::serve`]).
    pub fn connection(this: &Arc<Dispatcher>, peer: SocketAddr) -> ConnectionService {
        ConnectionService {
            dispatcher: this.clone(),
            peer,
        }
    }
}

/// The service of one connection: it dispatches the connection's requests
/// as they come off the wire.
pub struct ConnectionService {
    dispatcher: Arc<Dispatcher>,
    peer: SocketAddr,
}

type Answer = hyper::Response<ResponseBody>;
type Pending = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

/// A request's body as a connection reads it: hyper's over TCP, the
/// QUIC stream's over HTTP/3 (`edge::quic`).
pub trait IncomingBody:
    hyper::body::Body<Data = Bytes, Error: Into<axum::BoxError>> + Send + 'static
{
}

impl<B> IncomingBody for B where
    B: hyper::body::Body<Data = Bytes, Error: Into<axum::BoxError>> + Send + 'static
{
}

impl<In: IncomingBody> hyper::service::Service<hyper::Request<In>> for ConnectionService {
    type Response = Answer;
    type Error = Infallible;
    type Future = Either<Ready<Result<Answer, Infallible>>, Pending>;

    fn call(&self, request: hyper::Request<In>) -> Self::Future {
        let started = Instant::now();
        let Dispatcher {
            state,
            router,
            page_pipeline,
        } = &*self.dispatcher;
        // The site's own paths are pages by construction (the route table
        // refuses the server's segments), so the table of their latest
        // pages is asked first: a hit reads nothing else of the path.
        if let Some(res) = page_handler::latest(state, started, self.peer, &request) {
            return Either::Left(ready(Ok(res.map(ResponseBody::Left))));
        }
        let to = if is_the_servers(request.uri().path()) {
            router
        } else {
            page_pipeline
        };
        Either::Right(forward(to, self.peer, request))
    }
}

/// `request` handed to `service` (the router or the page pipeline).
fn forward<In: IncomingBody>(
    service: &Router,
    peer: SocketAddr,
    request: hyper::Request<In>,
) -> Pending {
    let mut request = request.map(Body::new);
    request.extensions_mut().insert(ConnectInfo(peer));
    let service = service.clone();
    Box::pin(async move {
        let Ok(res) = service.oneshot(request).await;
        Ok(res.map(ResponseBody::Right))
    })
}

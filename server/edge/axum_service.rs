//! [`Axum`]: a tower service of axum's requests (the router) as the
//! service of one connection.

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use hyper::body::Incoming;
use tower::Service;

/// A tower service of axum's requests as the service of one connection:
/// each request's body boxed and the peer in its extensions
/// ([`ConnectInfo`]), as axum's extractors expect.
#[derive(Clone)]
pub struct Axum<S> {
    service: S,
    peer: SocketAddr,
}

impl<S> Axum<S> {
    /// `service` for each connection (the argument of [`serve`]).
    pub fn per_worker(service: S) -> impl Fn() -> Box<dyn Fn(SocketAddr) -> Axum<S> + Send + Sync>
    where
        S: Clone + Send + Sync + 'static,
    {
        move || {
            let service = service.clone();
            Box::new(move |peer| Axum {
                service: service.clone(),
                peer,
            })
        }
    }
}

impl<S> hyper::service::Service<hyper::Request<Incoming>> for Axum<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future = S::Future;

    fn call(&self, req: hyper::Request<Incoming>) -> S::Future {
        let mut req = req.map(Body::new);
        req.extensions_mut().insert(ConnectInfo(self.peer));
        self.service.clone().call(req)
    }
}

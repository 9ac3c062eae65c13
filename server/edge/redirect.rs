//! The HTTP port while the server serves HTTPS itself: it answers the CA's
//! HTTP-01 challenges and sends everybody else to the same path and query
//! on https, permanently (301 for GET and HEAD; 308 otherwise, so a form
//! post is repeated as a post). Nothing else is served in the clear.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use tower::Service;

use super::certs::Certs;

const CHALLENGE_PATH: &str = "/.well-known/acme-challenge/";

#[derive(Clone)]
pub struct Redirect {
    inner: Arc<Inner>,
}

struct Inner {
    /// Host names a visitor may be sent back to as they typed them.
    hosts: Vec<String>,
    /// Where anybody else goes: `SITE_URL`'s origin.
    origin: String,
    /// `:port` when the HTTPS port is not 443, from `SITE_URL`.
    port: String,
    certs: Arc<Certs>,
}

impl Redirect {
    /// `site_url` is the https address of the site; `hosts` the names the
    /// certificate is for.
    pub fn new(site_url: &str, hosts: Vec<String>, certs: Arc<Certs>) -> Redirect {
        let origin = site_url.trim_end_matches('/').to_owned();
        let authority = origin.trim_start_matches("https://");
        let port = authority
            .rfind(':')
            .filter(|i| !authority[*i..].contains(']'))
            .map(|i| authority[i..].to_owned())
            .unwrap_or_default();
        Redirect {
            inner: Arc::new(Inner {
                hosts,
                origin,
                port,
                certs,
            }),
        }
    }

    fn answer(&self, req: &Request) -> Response {
        let path = req.uri().path();
        if let Some(token) = path.strip_prefix(CHALLENGE_PATH) {
            return match self.inner.certs.http_challenge(token) {
                Some(key_authorization) => plain(StatusCode::OK, key_authorization),
                None => plain(StatusCode::NOT_FOUND, "No such challenge".into()),
            };
        }
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| req.uri().host())
            .unwrap_or("");
        let name = host
            .rsplit_once(':')
            .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
            .map_or(host, |(n, _)| n)
            .to_ascii_lowercase();
        let origin = if self.inner.hosts.contains(&name) {
            format!("https://{name}{}", self.inner.port)
        } else {
            self.inner.origin.clone()
        };
        let target = format!(
            "{origin}{}",
            req.uri().path_and_query().map_or("/", |pq| pq.as_str())
        );
        let status = if req.method() == Method::GET || req.method() == Method::HEAD {
            StatusCode::MOVED_PERMANENTLY
        } else {
            StatusCode::PERMANENT_REDIRECT
        };
        let mut res = Response::new(Body::empty());
        *res.status_mut() = status;
        match HeaderValue::from_str(&target) {
            Ok(location) => {
                res.headers_mut().insert(header::LOCATION, location);
            }
            Err(_) => *res.status_mut() = StatusCode::BAD_REQUEST,
        }
        res
    }
}

fn plain(status: StatusCode, text: String) -> Response {
    let mut res = Response::new(Body::from(text));
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}

impl Service<Request> for Redirect {
    type Response = Response;
    type Error = Infallible;
    type Future = Ready<Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        ready(Ok(self.answer(&req)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(r: &Redirect, method: Method, host: &str, uri: &str) -> Response {
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::HOST, host)
            .body(Body::empty())
            .unwrap();
        r.answer(&req)
    }

    #[test]
    fn every_path_and_query_goes_to_https_on_a_known_name_or_the_site() {
        let certs = Certs::new();
        let r = Redirect::new(
            "https://site.example:8443",
            vec!["site.example".into(), "www.site.example".into()],
            certs.clone(),
        );
        let res = get(&r, Method::GET, "www.site.example", "/blog?type=News&x=%20");
        assert_eq!(res.status(), 301);
        assert_eq!(
            res.headers()[header::LOCATION],
            "https://www.site.example:8443/blog?type=News&x=%20"
        );
        // A name the certificate is not for goes to SITE_URL.
        let res = get(&r, Method::HEAD, "evil.example:80", "/");
        assert_eq!(
            res.headers()[header::LOCATION],
            "https://site.example:8443/"
        );
        let res = get(&r, Method::POST, "SITE.example:80", "/api/save-to-notion");
        assert_eq!(res.status(), 308);
        assert_eq!(
            res.headers()[header::LOCATION],
            "https://site.example:8443/api/save-to-notion"
        );
        let r = Redirect::new("https://site.example", vec!["site.example".into()], certs);
        assert_eq!(
            get(&r, Method::GET, "site.example", "/about").headers()[header::LOCATION],
            "https://site.example/about"
        );
    }

    #[test]
    fn http_01_tokens_are_answered_while_they_are_being_validated() {
        let certs = Certs::new();
        let r = Redirect::new(
            "https://site.example",
            vec!["site.example".into()],
            certs.clone(),
        );
        assert_eq!(
            get(
                &r,
                Method::GET,
                "site.example",
                "/.well-known/acme-challenge/abc"
            )
            .status(),
            404
        );
        certs.set_http_challenge("abc", "abc.thumbprint");
        let res = get(
            &r,
            Method::GET,
            "site.example",
            "/.well-known/acme-challenge/abc",
        );
        assert_eq!(res.status(), 200);
        certs.forget_http_challenge("abc", "abc.thumbprint");
        assert_eq!(
            get(
                &r,
                Method::GET,
                "site.example",
                "/.well-known/acme-challenge/abc"
            )
            .status(),
            404
        );
    }
}

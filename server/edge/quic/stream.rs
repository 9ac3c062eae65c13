//! One HTTP/3 request stream served: its head read within its bound, its
//! body handed to the site as it arrives ([`QuicBody`]), and the answer
//! written as hyper writes one over HTTP/2 (the same headers: `date`, a
//! `content-length` the body's size gives, no connection-specific header,
//! no body for HEAD), each write bounded as the TCP port bounds a client
//! that does not read.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use bytes::{Buf, Bytes};
use h3::server::{RequestResolver, RequestStream};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};

use super::super::connection::OutgoingBody;

/// The QUIC connection's half of a request stream, as h3 gives it.
type Recv = RequestStream<h3_quinn::RecvStream, Bytes>;
type Send = RequestStream<h3_quinn::SendStream<Bytes>, Bytes>;

/// How long a request's body may take to arrive, whole: a body sent a
/// byte at a time keeps a QUIC connection from being idle, so it is bounded
/// by itself (a TCP connection's is bounded by its write-stall and idle
/// bounds, which a QUIC stream has no socket for).
pub const BODY_TIME: Duration = Duration::from_secs(30);

/// The body of a request that came over HTTP/3, read from its stream as
/// the handler reads it, for at most [`BODY_TIME`] from its head.
pub struct QuicBody {
    recv: Recv,
    ended: bool,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl QuicBody {
    fn new(recv: Recv) -> QuicBody {
        QuicBody {
            recv,
            ended: false,
            deadline: Box::pin(tokio::time::sleep(BODY_TIME)),
        }
    }
}

/// Why a request body over HTTP/3 was not read to its end.
#[derive(Debug)]
pub enum BodyError {
    Stream(h3::error::StreamError),
    TooSlow,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Stream(e) => write!(f, "the request stream failed: {e}"),
            BodyError::TooSlow => write!(
                f,
                "the request body did not arrive within {} s",
                BODY_TIME.as_secs()
            ),
        }
    }
}

impl std::error::Error for BodyError {}

impl Body for QuicBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match self.recv.poll_recv_data(cx) {
            Poll::Ready(Ok(Some(mut data))) => {
                let bytes = data.copy_to_bytes(data.remaining());
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(Ok(None)) => {
                self.ended = true;
                Poll::Ready(None)
            }
            Poll::Ready(Err(e)) => {
                self.ended = true;
                Poll::Ready(Some(Err(BodyError::Stream(e))))
            }
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    // No STOP_SENDING here: h3-quinn panics on one while a
                    // read is pending, as one is now. The stream's receiving
                    // half is stopped when the request (and this) is dropped.
                    self.ended = true;
                    Poll::Ready(Some(Err(BodyError::TooSlow)))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// What bounds one request stream.
#[derive(Debug, Clone, Copy)]
pub struct StreamBounds {
    /// From the stream's opening to the end of its request head.
    pub head: Duration,
    /// A write of the answer that the client does not take (its flow
    /// control window stays shut) for this long ends the stream.
    pub write_stall: Duration,
}

/// Serves one request stream of a connection from `peer`: reads its head,
/// asks `service` for the answer and writes it. `active` counts it from
/// its head's arrival to its end; returns whether the head arrived.
pub async fn serve_request<S, B>(
    resolver: RequestResolver<h3_quinn::Connection, Bytes>,
    service: &S,
    bounds: StreamBounds,
    held: tokio::sync::watch::Receiver<bool>,
    active: &AtomicUsize,
) -> (bool, Result<(), String>)
where
    S: hyper::service::Service<
        hyper::Request<QuicBody>,
        Response = hyper::Response<B>,
        Error = Infallible,
    >,
    B: OutgoingBody,
{
    let (request, stream) =
        match tokio::time::timeout(bounds.head, resolver.resolve_request()).await {
            Ok(Ok(resolved)) => resolved,
            Ok(Err(e)) => return (false, Err(format!("the request head was refused: {e}"))),
            Err(_) => return (false, Err("the request head did not arrive in time".into())),
        };
    active.fetch_add(1, Ordering::AcqRel);
    let answered = answer(request, stream, service, bounds, held).await;
    active.fetch_sub(1, Ordering::AcqRel);
    (true, answered)
}

/// A request whose head has arrived, answered.
async fn answer<S, B>(
    request: hyper::Request<()>,
    stream: RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>,
    service: &S,
    bounds: StreamBounds,
    mut held: tokio::sync::watch::Receiver<bool>,
) -> Result<(), String>
where
    S: hyper::service::Service<
        hyper::Request<QuicBody>,
        Response = hyper::Response<B>,
        Error = Infallible,
    >,
    B: OutgoingBody,
{
    let (mut send, recv) = stream.split();
    let head_only = request.method() == hyper::Method::HEAD;
    let request = request.map(|()| QuicBody::new(recv));
    let Ok(response) = service.call(request).await;
    let (mut parts, body) = response.into_parts();
    finish_head(parts.status, &mut parts.headers, &body);
    let head = hyper::Response::from_parts(parts, ());
    let written = async {
        bounded(bounds, send.send_response(head)).await?;
        if !head_only {
            write_body(&mut send, body, bounds).await?;
        }
        // The answer's end waits while the connection says GOAWAY (see
        // `quic::connection`).
        let _ = held.wait_for(|held| !*held).await;
        bounded(bounds, send.finish()).await
    }
    .await;
    if written.is_err() {
        // What is left unsent is dropped, not kept for a client that
        // does not read.
        send.stop_stream(h3::error::Code::H3_REQUEST_CANCELLED);
    }
    written
}

/// A request on a stream at or above the GOAWAY's: not processed, and
/// said so at once (its answer's half reset with H3_REQUEST_REJECTED,
/// its head left unread), so the client sends it again elsewhere.
pub fn refuse_request(mut resolver: RequestResolver<h3_quinn::Connection, Bytes>) {
    use h3::quic::SendStream;
    resolver
        .frame_stream
        .reset(h3::error::Code::H3_REQUEST_REJECTED.value());
}

/// The headers hyper gives an answer over HTTP/2 that the site's service
/// leaves to the connection: `date`, and a `content-length` when the
/// body's size is known; and none of HTTP/1.1's connection-specific ones,
/// which HTTP/3 forbids (RFC 9114, 4.2).
fn finish_head<B: Body>(status: hyper::StatusCode, headers: &mut HeaderMap, body: &B) {
    for name in [
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::UPGRADE,
        HeaderName::from_static("keep-alive"),
        HeaderName::from_static("proxy-connection"),
    ] {
        headers.remove(name);
    }
    // Not for a body already at its end (as hyper over HTTP/2: a HEAD
    // answer whose body the router dropped has no length of 0), nor for an
    // answer that has no content by its status (a 304's length would be
    // the representation's, not 0).
    let bodiless = body.is_end_stream()
        || status.is_informational()
        || status == hyper::StatusCode::NO_CONTENT
        || status == hyper::StatusCode::NOT_MODIFIED;
    if let Some(length) = body.size_hint().exact().filter(|_| !bodiless) {
        headers
            .entry(header::CONTENT_LENGTH)
            .or_insert_with(|| HeaderValue::from(length));
    }
    headers.entry(header::DATE).or_insert_with(now);
}

/// Today's `date` value, made once a second per thread (as hyper caches it).
fn now() -> HeaderValue {
    thread_local! {
        static CACHED: std::cell::RefCell<(u64, HeaderValue)> =
            const { std::cell::RefCell::new((0, HeaderValue::from_static(""))) };
    }
    let second = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    CACHED.with(|cached| {
        let mut cached = cached.borrow_mut();
        if cached.0 != second {
            let text = httpdate::fmt_http_date(SystemTime::now());
            *cached = (
                second,
                HeaderValue::from_str(&text).expect("an HTTP date is ASCII"),
            );
        }
        cached.1.clone()
    })
}

/// The answer's body, frame by frame (trailers are not sent: the site
/// sends none).
async fn write_body<B: OutgoingBody>(
    send: &mut Send,
    body: B,
    bounds: StreamBounds,
) -> Result<(), String> {
    let mut body = std::pin::pin!(body);
    loop {
        // The frame's error is made text before the next await: the body's
        // error type need not be Send.
        let data = match body.frame().await {
            None => return Ok(()),
            Some(Ok(frame)) => frame.into_data().ok(),
            Some(Err(e)) => Err(format!("the answer's body failed: {}", e.into()))?,
        };
        if let Some(data) = data.filter(Buf::has_remaining) {
            bounded(bounds, send.send_data(data)).await?;
        }
    }
}

/// A write of the answer, within the write-stall bound.
async fn bounded(
    bounds: StreamBounds,
    write: impl Future<Output = Result<(), h3::error::StreamError>>,
) -> Result<(), String> {
    match tokio::time::timeout(bounds.write_stall, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("writing the answer failed: {e}")),
        Err(_) => Err(format!(
            "the client took none of the answer for {} s",
            bounds.write_stall.as_secs()
        )),
    }
}

//! A stand-in in front of Debian's pebble (2.4), which knows neither ACME
//! Renewal Information (RFC 9773) nor profiles: it forwards every request
//! to pebble (the `Host` header kept, so pebble's URLs and its JWS checks
//! name the stand-in), adds `renewalInfo` and two profiles to the directory,
//! answers the renewal information with a window the test moves, records
//! each new order's payload, refuses the first order that names a
//! certificate it replaces with `alreadyReplaced`, and, when the test
//! asks, the next new order as rate-limited, with a `Retry-After`.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use serde_json::{json, Value};

use super::support::tls_site::Pebble;

/// A window: seconds from now when it was set, as instants.
type Window = (time::OffsetDateTime, time::OffsetDateTime);

#[derive(Default)]
struct State {
    /// The window of each certificate identifier asked for.
    windows: HashMap<String, Window>,
    /// The identifiers asked for, in order.
    asked: Vec<String>,
    /// The payloads of the new orders, in order.
    orders: Vec<Value>,
    /// New orders are answered 503 (and not counted) while set.
    held: bool,
    /// The next new order is refused as rate-limited (429), with this
    /// `Retry-After` in seconds.
    limit_next: Option<u64>,
    /// When each new order came (refused or not).
    order_times: Vec<std::time::Instant>,
    refused_a_replacement: bool,
}

pub struct AriCa {
    pub port: u16,
    state: Arc<Mutex<State>>,
    _runtime: tokio::runtime::Runtime,
}

/// A day from now, for an hour: the window of a certificate not moved.
fn later() -> Window {
    let now = time::OffsetDateTime::now_utc();
    (
        now + time::Duration::days(1),
        now + time::Duration::days(1) + time::Duration::hours(1),
    )
}

impl AriCa {
    pub fn start(pebble: &Pebble) -> AriCa {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let chain = std::fs::read(pebble.dir.0.join("cert.pem")).unwrap();
        let key = std::fs::read(pebble.dir.0.join("key.pem")).unwrap();
        let served = citizen_site::edge::certs::parse(&chain, &key, ("cert", "key")).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(Fixed(served.key)));
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let pebble_ca =
            reqwest::Certificate::from_pem(&std::fs::read(&pebble.listener_ca).unwrap()).unwrap();
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .add_root_certificate(pebble_ca)
            .build()
            .unwrap();
        let upstream = format!("https://127.0.0.1:{}", pebble.api);
        let shared = state.clone();
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, client, upstream, state) = (
                    acceptor.clone(),
                    client.clone(),
                    upstream.clone(),
                    shared.clone(),
                );
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |req| {
                        let (client, upstream, state) =
                            (client.clone(), upstream.clone(), state.clone());
                        async move {
                            Ok::<_, std::convert::Infallible>(
                                answer(req, &client, &upstream, &state, port).await,
                            )
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        AriCa {
            port,
            state,
            _runtime: runtime,
        }
    }

    pub fn directory(&self) -> String {
        format!("https://127.0.0.1:{}/dir", self.port)
    }

    /// Moves the window of every certificate asked for so far to `from`
    /// .. `to` seconds from now.
    pub fn move_windows(&self, from: i64, to: i64) {
        let now = time::OffsetDateTime::now_utc();
        let mut state = self.state.lock().unwrap();
        for window in state.windows.values_mut() {
            *window = (
                now + time::Duration::seconds(from),
                now + time::Duration::seconds(to),
            );
        }
    }

    /// The certificate identifiers asked for, in order.
    pub fn asked(&self) -> Vec<String> {
        self.state.lock().unwrap().asked.clone()
    }

    /// While `held`, a new order is answered 503 and not counted: the
    /// fleet tries again later, as after any CA's 503.
    pub fn hold_orders(&self, held: bool) {
        self.state.lock().unwrap().held = held;
    }

    /// The next new order is refused as rate-limited, its `Retry-After`
    /// `secs`.
    pub fn limit_next_order(&self, secs: u64) {
        self.state.lock().unwrap().limit_next = Some(secs);
    }

    /// When each new order came, refused ones too.
    pub fn order_times(&self) -> Vec<std::time::Instant> {
        self.state.lock().unwrap().order_times.clone()
    }

    /// The payloads of the new orders sent, in order.
    pub fn orders(&self) -> Vec<Value> {
        self.state.lock().unwrap().orders.clone()
    }
}

#[derive(Debug)]
struct Fixed(Arc<rustls::sign::CertifiedKey>);

impl rustls::server::ResolvesServerCert for Fixed {
    fn resolve(
        &self,
        _: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }
}

fn json_answer(status: u16, content_type: &str, body: &Value) -> Response<Full<Bytes>> {
    answer_after(status, content_type, body, 1)
}

fn answer_after(
    status: u16,
    content_type: &str,
    body: &Value,
    retry_after: u64,
) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .header("retry-after", retry_after.to_string())
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

async fn answer(
    req: Request<hyper::body::Incoming>,
    client: &reqwest::Client,
    upstream: &str,
    state: &Mutex<State>,
    port: u16,
) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    if let Some(id) = path.strip_prefix("/renewal-info/") {
        let mut state = state.lock().unwrap();
        state.asked.push(id.to_owned());
        let (start, end) = *state.windows.entry(id.to_owned()).or_insert_with(later);
        let rfc = |t: time::OffsetDateTime| {
            t.format(&time::format_description::well_known::Rfc3339)
                .unwrap()
        };
        return json_answer(
            200,
            "application/json",
            &json!({
                "suggestedWindow": { "start": rfc(start), "end": rfc(end) },
                "explanationURL": "https://ca.test/why-renew",
            }),
        );
    }
    if path == "/order-plz" {
        let payload = order_payload(&body);
        let mut state = state.lock().unwrap();
        if state.held {
            return json_answer(
                503,
                "application/problem+json",
                &json!({
                    "type": "urn:ietf:params:acme:error:serverInternal",
                    "detail": "the stand-in holds new orders (the test waits for the balancer)",
                    "status": 503,
                }),
            );
        }
        state.order_times.push(std::time::Instant::now());
        if let Some(secs) = state.limit_next.take() {
            return answer_after(
                429,
                "application/problem+json",
                &json!({
                    "type": "urn:ietf:params:acme:error:rateLimited",
                    "detail": "too many new orders (the stand-in limits this one)",
                    "status": 429,
                }),
                secs,
            );
        }
        state.orders.push(payload.clone());
        if payload.get("replaces").is_some() && !state.refused_a_replacement {
            state.refused_a_replacement = true;
            return json_answer(
                409,
                "application/problem+json",
                &json!({
                    "type": "urn:ietf:params:acme:error:alreadyReplaced",
                    "detail": "the certificate named was already replaced (the stand-in says so once)",
                    "status": 409,
                }),
            );
        }
    }
    let mut forwarded = client.request(parts.method.clone(), format!("{upstream}{path}"));
    for (name, value) in &parts.headers {
        forwarded = forwarded.header(name, value);
    }
    let Ok(rsp) = forwarded.body(body.to_vec()).send().await else {
        return json_answer(502, "text/plain", &json!("pebble did not answer"));
    };
    let status = rsp.status();
    let headers = rsp.headers().clone();
    let mut bytes = rsp.bytes().await.unwrap_or_default().to_vec();
    if path == "/dir" {
        let mut directory: Value = serde_json::from_slice(&bytes).unwrap();
        directory["renewalInfo"] = json!(format!("https://127.0.0.1:{port}/renewal-info"));
        directory["meta"]["profiles"] = json!({
            "classic": "The CA's usual certificates",
            "shortlived": "Certificates of six days",
        });
        bytes = directory.to_string().into_bytes();
    }
    let mut out = Response::builder().status(status.as_u16());
    for (name, value) in &headers {
        if name != "content-length" && name != "transfer-encoding" {
            out = out.header(name, value);
        }
    }
    out.body(Full::new(Bytes::from(bytes))).unwrap()
}

/// The payload of a JWS request body (its `payload`, base64url JSON).
fn order_payload(body: &[u8]) -> Value {
    let jws: Value = serde_json::from_slice(body).unwrap_or_default();
    let encoded = jws["payload"].as_str().unwrap_or_default();
    serde_json::from_slice(&base64url(encoded)).unwrap_or_default()
}

fn base64url(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' | b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(value).collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | (u32::from(*d) << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}

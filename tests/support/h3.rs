//! Clients of the HTTPS port by HTTP/2 (TCP) and HTTP/3 (QUIC), for the
//! HTTP/3 tests (`tests/http3.rs`): one answer's status, headers and body
//! as sent, so that the two can be compared byte for byte; and a load of
//! visitors over HTTP/3 that sends again what a GOAWAY left unprocessed,
//! as a browser does. The bench's own HTTP/3 client (`bench/h3-load/`)
//! is built on this file too.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes};
use http_body_util::BodyExt;

/// Where a client connects: an address, and the server's name.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub name: String,
    /// The roots to trust (PEM).
    pub roots: std::path::PathBuf,
}

impl Target {
    /// `localhost` on this machine's `port`.
    pub fn local(port: u16, roots: &Path) -> Target {
        Target {
            addr: ([127, 0, 0, 1], port).into(),
            name: "localhost".into(),
            roots: roots.to_owned(),
        }
    }

    fn authority(&self) -> String {
        format!("{}:{}", self.name, self.addr.port())
    }
}

/// One answer: status, headers (lower-case names, in the order sent) and
/// the body's bytes as sent (still compressed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The headers but those that differ by nature between two answers:
    /// the date, the request's id, and `alt-svc`.
    pub fn comparable_headers(&self) -> Vec<(String, String)> {
        let mut headers: Vec<_> = self
            .headers
            .iter()
            .filter(|(n, _)| n != "date" && n != "x-request-id" && n != "alt-svc")
            .cloned()
            .collect();
        headers.sort();
        headers
    }
}

fn answer_of(head: http::response::Parts, body: Vec<u8>) -> Answer {
    Answer {
        status: head.status.as_u16(),
        headers: head
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    }
}

/// A runtime of the client's own (the tests are synchronous).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The client's TLS for `alpn`, trusting the roots in `roots` (PEM).
pub fn client_tls(roots: &Path, alpn: &[u8]) -> rustls::ClientConfig {
    use rustls::pki_types::pem::PemObject;
    let mut store = rustls::RootCertStore::empty();
    let pem = std::fs::read(roots).unwrap_or_else(|e| panic!("{}: {e}", roots.display()));
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
        store.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    config
}

/// One connection over HTTP/2 to `localhost:port`.
pub struct H2 {
    send: hyper::client::conn::http2::SendRequest<http_body_util::Full<Bytes>>,
    port: u16,
}

impl H2 {
    pub async fn connect(port: u16, roots: &Path) -> H2 {
        H2::connect_checked(port, roots)
            .await
            .expect("an HTTP/2 connection")
    }

    /// [`H2::connect`], None when there is no answer yet.
    pub async fn connect_checked(port: u16, roots: &Path) -> Option<H2> {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let connector = tokio_rustls::TlsConnector::from(Arc::new(client_tls(roots, b"h2")));
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let tls = connector.connect(name, tcp).await.ok()?;
        let (send, conn) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(tls),
        )
        .await
        .ok()?;
        tokio::spawn(conn);
        Some(H2 { send, port })
    }

    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Answer {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("https://localhost:{}{path}", self.port));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(http_body_util::Full::new(Bytes::copy_from_slice(body)))
            .unwrap();
        self.send.ready().await.unwrap();
        let response =
            tokio::time::timeout(Duration::from_secs(20), self.send.send_request(request))
                .await
                .expect("an answer over HTTP/2 within 20 s")
                .unwrap();
        let (head, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes().to_vec();
        answer_of(head, body)
    }
}

/// One QUIC connection speaking HTTP/3 to `localhost:port`.
pub struct H3 {
    pub endpoint: quinn::Endpoint,
    pub connection: quinn::Connection,
    send: h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>,
    authority: String,
    _driver: tokio::task::JoinHandle<()>,
}

/// A client endpoint on loopback, trusting `roots`.
pub fn endpoint(roots: &Path) -> quinn::Endpoint {
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    let tls = quinn::crypto::rustls::QuicClientConfig::try_from(client_tls(roots, b"h3")).unwrap();
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(tls)));
    endpoint
}

impl H3 {
    pub async fn connect(port: u16, roots: &Path) -> Result<H3, String> {
        H3::connect_to(&Target::local(port, roots)).await
    }

    pub async fn connect_to(target: &Target) -> Result<H3, String> {
        H3::connect_from(endpoint(&target.roots), target).await
    }

    pub async fn connect_from(endpoint: quinn::Endpoint, target: &Target) -> Result<H3, String> {
        H3::connect_with(endpoint, target, true).await
    }

    /// A client that never reads the server's control stream, so never
    /// learns of its GOAWAY: as a busy client's request may leave before
    /// its connection's task has read the GOAWAY that arrived with the
    /// last answer.
    pub async fn connect_unheeding(port: u16, roots: &Path) -> Result<H3, String> {
        let target = Target::local(port, roots);
        H3::connect_with(endpoint(roots), &target, false).await
    }

    async fn connect_with(
        endpoint: quinn::Endpoint,
        target: &Target,
        heeding: bool,
    ) -> Result<H3, String> {
        let connecting = endpoint
            .connect(target.addr, &target.name)
            .map_err(|e| e.to_string())?;
        let connection = tokio::time::timeout(Duration::from_secs(10), connecting)
            .await
            .map_err(|_| "no QUIC handshake within 10 s".to_string())?
            .map_err(|e| e.to_string())?;
        let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(connection.clone()))
            .await
            .map_err(|e| e.to_string())?;
        let driver = tokio::spawn(async move {
            if heeding {
                let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
            } else {
                // Kept (its drop would close the connection), never polled.
                let _kept = driver;
                std::future::pending::<()>().await;
            }
        });
        Ok(H3 {
            endpoint,
            connection,
            send,
            authority: target.authority(),
            _driver: driver,
        })
    }

    pub async fn get(&mut self, path: &str, headers: &[(&str, &str)]) -> Result<Answer, String> {
        self.request("GET", path, headers, b"").await
    }

    /// One request, its body sent whole.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Answer, String> {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("https://{}{path}", self.authority));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(()).unwrap();
        let exchange = async {
            let mut stream = self
                .send
                .send_request(request)
                .await
                .map_err(|e| e.to_string())?;
            if !body.is_empty() {
                stream
                    .send_data(Bytes::copy_from_slice(body))
                    .await
                    .map_err(|e| e.to_string())?;
            }
            stream.finish().await.map_err(|e| e.to_string())?;
            let response = stream.recv_response().await.map_err(|e| e.to_string())?;
            let mut received = Vec::new();
            while let Some(mut chunk) = stream.recv_data().await.map_err(|e| e.to_string())? {
                let bytes = chunk.copy_to_bytes(chunk.remaining());
                received.extend_from_slice(&bytes);
            }
            let (head, ()) = response.into_parts();
            Ok(answer_of(head, received))
        };
        tokio::time::timeout(Duration::from_secs(20), exchange)
            .await
            .map_err(|_| "no answer over HTTP/3 within 20 s".to_string())?
    }
}

/// A QUIC connection (ALPN h3) that never opens a stream and sends a PING
/// every second, so it is never idle as QUIC counts it. With `no_streams`
/// it also lets the server open none of its own (not even HTTP/3's
/// control stream).
pub async fn pinging(port: u16, roots: &Path, no_streams: bool) -> quinn::Connection {
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    let tls = quinn::crypto::rustls::QuicClientConfig::try_from(client_tls(roots, b"h3")).unwrap();
    let mut transport = quinn::TransportConfig::default();
    transport.keep_alive_interval(Some(Duration::from_secs(1)));
    if no_streams {
        transport.max_concurrent_uni_streams(0u8.into());
        transport.max_concurrent_bidi_streams(0u8.into());
    }
    let mut config = quinn::ClientConfig::new(Arc::new(tls));
    config.transport_config(Arc::new(transport));
    endpoint.set_default_client_config(config);
    let at: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let connection = tokio::time::timeout(
        Duration::from_secs(10),
        endpoint.connect(at, "localhost").unwrap(),
    )
    .await
    .expect("a QUIC handshake within 10 s")
    .expect("a QUIC handshake");
    // The endpoint lives as long as the connection does.
    std::mem::forget(endpoint);
    connection
}

/// A TCP port on loopback forwarded to another, as a container runtime
/// publishes one; stopped when dropped.
pub struct TcpForward(tokio::task::JoinHandle<()>);

impl TcpForward {
    pub async fn new(from: u16, to: u16) -> TcpForward {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", from))
            .await
            .unwrap();
        TcpForward(tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(("127.0.0.1", to)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        }))
    }
}

impl Drop for TcpForward {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A UDP relay between one client and a QUIC server, whose side facing
/// the server is bound to `from` (an address of loopback's own: the
/// client as the server sees it). It counts the Retry packets the server
/// sends (QUIC version 1's long header of type 3, RFC 9000, 17.2.5).
pub struct Relay {
    /// Where the client connects: the relay, named as the server is.
    pub target: Target,
    retries: Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    pub async fn to(server: &Target, from: std::net::IpAddr) -> Relay {
        Relay::listening(0, server, from).await
    }

    /// A relay whose side facing the client is UDP `port` on loopback (0:
    /// any), as a container runtime publishes a UDP port.
    pub async fn listening(port: u16, server: &Target, from: std::net::IpAddr) -> Relay {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let front = tokio::net::UdpSocket::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let back = tokio::net::UdpSocket::bind((from, 0)).await.unwrap();
        back.connect(server.addr).await.unwrap();
        let target = Target {
            addr: front.local_addr().unwrap(),
            ..server.clone()
        };
        let retries = Arc::new(AtomicUsize::new(0));
        let counted = retries.clone();
        let task = tokio::spawn(async move {
            let (mut up, mut down) = (vec![0u8; 65_536], vec![0u8; 65_536]);
            let mut client = None;
            loop {
                tokio::select! {
                    got = front.recv_from(&mut up) => {
                        let Ok((n, at)) = got else { return };
                        client = Some(at);
                        let _ = back.send(&up[..n]).await;
                    }
                    got = back.recv(&mut down) => {
                        let Ok(n) = got else { return };
                        let packet = &down[..n];
                        let long = packet.first().is_some_and(|b| b & 0xc0 == 0xc0);
                        if long && packet[0] >> 4 & 0x03 == 0x03 && packet.get(1..5) == Some(&[0, 0, 0, 1][..]) {
                            counted.fetch_add(1, Ordering::Relaxed);
                        }
                        if let Some(at) = client {
                            let _ = front.send_to(packet, at).await;
                        }
                    }
                }
            }
        });
        Relay {
            target,
            retries,
            task,
        }
    }

    /// The Retry packets the server has sent through it.
    pub fn retries(&self) -> usize {
        self.retries.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The first datagram a QUIC client sends (its Initial, with the
/// ClientHello), as a server would receive it.
pub async fn first_initial(roots: &Path) -> Vec<u8> {
    let catcher = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let at = catcher.local_addr().unwrap();
    let endpoint = endpoint(roots);
    let _connecting = endpoint.connect(at, "localhost").unwrap();
    let mut buf = vec![0u8; 2048];
    let (n, _) = tokio::time::timeout(Duration::from_secs(5), catcher.recv_from(&mut buf))
        .await
        .expect("the client's Initial")
        .unwrap();
    buf.truncate(n);
    buf
}

/// The head of a contact form post to `localhost:port`.
fn form_post(port: u16) -> http::Request<()> {
    http::Request::builder()
        .method("POST")
        .uri(format!("https://localhost:{port}/api/save-to-notion"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(())
        .unwrap()
}

/// A POST whose body is sent one byte at a time, for `during`: Ok once
/// that is done (the server may have reset the stream meanwhile, which is
/// its right), Err if the connection itself failed.
pub async fn slow_body(port: u16, roots: &Path, during: Duration) -> Result<(), String> {
    let h3 = H3::connect(port, roots).await?;
    let mut send = h3.send.clone();
    let request = form_post(port);
    let mut stream = send
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let until = tokio::time::Instant::now() + during;
    while tokio::time::Instant::now() < until {
        if stream.send_data(Bytes::from_static(b"a")).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(stream);
    Ok(())
}

/// A contact form post whose body (`name=NAME&...`) is sent a byte at a
/// time over about `during`, but for its last byte, held until `release`
/// is set; then read to its answer (15 s from the body's end): its status,
/// or how it failed.
pub async fn slow_post(
    port: u16,
    roots: std::path::PathBuf,
    name: &'static str,
    during: Duration,
    release: Arc<std::sync::atomic::AtomicBool>,
) -> Result<u16, String> {
    let h3 = H3::connect(port, &roots).await?;
    let mut send = h3.send.clone();
    let body = format!(
        "name={name}&contactPerson=Ana&email=ana%40example.org&website=&description=Slow&tags=Loyalty"
    );
    let request = form_post(port);
    // The head and the body, its last byte held as long as the caller holds
    // it (the server bounds a body's whole time itself, `BODY_TIME`: 30 s
    // from the head), then 15 s for the answer from the body's end: the hold
    // is the caller's (a successor starting on a loaded machine), not the
    // server's answer.
    let pause = during / body.len() as u32;
    let last = body.len() - 1;
    let sending = async {
        let mut stream = send
            .send_request(request)
            .await
            .map_err(|e| format!("sending the head: {e}"))?;
        for (at, byte) in body.bytes().enumerate() {
            while at == last && !release.load(std::sync::atomic::Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            stream
                .send_data(Bytes::copy_from_slice(&[byte]))
                .await
                .map_err(|e| format!("sending the body: {e}"))?;
            tokio::time::sleep(pause).await;
        }
        stream
            .finish()
            .await
            .map_err(|e| format!("ending the body: {e}"))?;
        Ok::<_, String>(stream)
    };
    let mut stream = tokio::time::timeout(during + Duration::from_secs(40), sending)
        .await
        .map_err(|_| {
            "the body not sent within 40 s of its time (the server allows 30 s)".to_owned()
        })??;
    let answering = async {
        let response = stream
            .recv_response()
            .await
            .map_err(|e| format!("the answer: {e}"))?;
        while stream
            .recv_data()
            .await
            .map_err(|e| format!("the answer's body: {e}"))?
            .is_some()
        {}
        Ok(response.status().as_u16())
    };
    let answered = tokio::time::timeout(Duration::from_secs(15), answering)
        .await
        .map_err(|_| "no answer within 15 s of the body's end".to_owned())?;
    drop(h3);
    answered
}

/// How one request of a load went.
#[derive(Debug)]
pub enum Outcome {
    Answered(Answer),
    /// Not processed, so safe to send again on a new connection (RFC 9114,
    /// 5.2): never sent (the connection was going away), or refused by the
    /// server's GOAWAY (H3_REQUEST_REJECTED).
    NotProcessed(String),
    Failed(String),
}

impl H3 {
    /// One request, told apart as a browser tells it apart: answered, not
    /// processed (to retry), or failed.
    pub async fn attempt(&mut self, method: &str, path: &str, body: &[u8]) -> Outcome {
        self.exchange(method, path, None, body).await
    }

    /// [`H3::attempt`] without a body, asking for `encoding`.
    pub async fn attempt_with(&mut self, method: &str, path: &str, encoding: &str) -> Outcome {
        self.exchange(method, path, Some(encoding), b"").await
    }

    async fn exchange(
        &mut self,
        method: &str,
        path: &str,
        encoding: Option<&str>,
        body: &[u8],
    ) -> Outcome {
        use h3::error::{Code, StreamError};
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("https://{}{path}", self.authority));
        if !body.is_empty() {
            request = request.header("content-type", "application/x-www-form-urlencoded");
        }
        if let Some(encoding) = encoding {
            request = request.header("accept-encoding", encoding);
        }
        let request = request.body(()).unwrap();
        let mut stream = match self.send.send_request(request).await {
            Ok(s) => s,
            Err(e) => return Outcome::NotProcessed(format!("not sent: {e}")),
        };
        let rejected = |e: &StreamError| matches!(e, StreamError::RemoteTerminate { code, .. } if *code == Code::H3_REQUEST_REJECTED);
        let exchange = async {
            if !body.is_empty() {
                stream.send_data(Bytes::copy_from_slice(body)).await?;
            }
            stream.finish().await?;
            let response = stream.recv_response().await?;
            let mut received = Vec::new();
            while let Some(mut chunk) = stream.recv_data().await? {
                received.extend_from_slice(&chunk.copy_to_bytes(chunk.remaining()));
            }
            let (head, ()) = response.into_parts();
            Ok::<_, StreamError>(answer_of(head, received))
        };
        match tokio::time::timeout(Duration::from_secs(20), exchange).await {
            Ok(Ok(answer)) => Outcome::Answered(answer),
            Ok(Err(e)) if rejected(&e) => Outcome::NotProcessed(format!("rejected: {e}")),
            Ok(Err(e)) => Outcome::Failed(format!("{method} {path}: {e}")),
            Err(_) => Outcome::Failed(format!("{method} {path}: no answer within 20 s")),
        }
    }
}

/// What a load saw.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub answered: usize,
    /// Requests sent again after [`Outcome::NotProcessed`].
    pub retried: usize,
    pub failures: Vec<String>,
    /// The names of the intro requests the server acknowledged.
    pub posted: Vec<String>,
}

/// `clients` visitors over HTTP/3, each on a connection of its own, asking
/// for `/`, `/pricing` and `/about` in turn and posting the contact form
/// once every `post_every` (each visitor), until `stop` is set. A request
/// not processed is sent again on a new connection, as a browser does.
pub async fn load(
    target: Target,
    clients: usize,
    post_every: Duration,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> LoadReport {
    use std::sync::atomic::Ordering;
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (target, stop) = (target.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut report = LoadReport::default();
            let mut connection: Option<H3> = None;
            let mut n = 0usize;
            let mut last_post = tokio::time::Instant::now();
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let name = format!("Load{client}x{n}");
                let (method, path, body) = if last_post.elapsed() >= post_every {
                    last_post = tokio::time::Instant::now();
                    (
                        "POST",
                        "/api/save-to-notion",
                        format!("name={name}&contactPerson=Ana&email=ana%40example.org&website=&description=Under+load&tags=Loyalty"),
                    )
                } else {
                    ("GET", ["/", "/pricing", "/about"][n % 3], String::new())
                };
                let mut tries = 0;
                loop {
                    tries += 1;
                    let h3 = match connection.as_mut() {
                        Some(h3) => h3,
                        None => match H3::connect_to(&target).await {
                            Ok(h3) => connection.insert(h3),
                            Err(e) => {
                                report.failures.push(format!("connecting: {e}"));
                                break;
                            }
                        },
                    };
                    match h3.attempt(method, path, body.as_bytes()).await {
                        Outcome::Answered(answer) => {
                            let fine = match method {
                                "POST" => answer.status == 303,
                                _ => answer.status == 200 && !answer.body.is_empty(),
                            };
                            if fine {
                                report.answered += 1;
                                if method == "POST" {
                                    report.posted.push(name.clone());
                                }
                            } else {
                                report.failures.push(format!("{method} {path}: {}", answer.status));
                            }
                            break;
                        }
                        Outcome::NotProcessed(why) if tries < 5 => {
                            let _ = why;
                            report.retried += 1;
                            connection = None;
                        }
                        Outcome::NotProcessed(why) | Outcome::Failed(why) => {
                            report.failures.push(why);
                            connection = None;
                            break;
                        }
                    }
                }
            }
            report
        }));
    }
    let mut all = LoadReport::default();
    for task in tasks {
        let one = task.await.unwrap();
        all.answered += one.answered;
        all.retried += one.retried;
        all.failures.extend(one.failures);
        all.posted.extend(one.posted);
    }
    all
}

/// rustls's session store, counting the tickets a handshake took to offer
/// (quinn does not say whether a handshake resumed).
#[derive(Debug)]
pub struct Offers {
    inner: rustls::client::ClientSessionMemoryCache,
    pub taken: std::sync::atomic::AtomicU64,
}

impl Default for Offers {
    fn default() -> Self {
        Offers {
            inner: rustls::client::ClientSessionMemoryCache::new(16),
            taken: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl rustls::client::ClientSessionStore for Offers {
    fn set_kx_hint(&self, name: rustls::pki_types::ServerName<'static>, group: rustls::NamedGroup) {
        self.inner.set_kx_hint(name, group)
    }

    fn kx_hint(&self, name: &rustls::pki_types::ServerName<'_>) -> Option<rustls::NamedGroup> {
        self.inner.kx_hint(name)
    }

    fn set_tls12_session(
        &self,
        name: rustls::pki_types::ServerName<'static>,
        value: rustls::client::Tls12ClientSessionValue,
    ) {
        self.inner.set_tls12_session(name, value)
    }

    fn tls12_session(
        &self,
        name: &rustls::pki_types::ServerName<'_>,
    ) -> Option<rustls::client::Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }

    fn remove_tls12_session(&self, name: &rustls::pki_types::ServerName<'static>) {
        self.inner.remove_tls12_session(name)
    }

    fn insert_tls13_ticket(
        &self,
        name: rustls::pki_types::ServerName<'static>,
        value: rustls::client::Tls13ClientSessionValue,
    ) {
        self.inner.insert_tls13_ticket(name, value)
    }

    fn take_tls13_ticket(
        &self,
        name: &rustls::pki_types::ServerName<'static>,
    ) -> Option<rustls::client::Tls13ClientSessionValue> {
        let ticket = self.inner.take_tls13_ticket(name);
        if ticket.is_some() {
            self.taken
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        ticket
    }
}

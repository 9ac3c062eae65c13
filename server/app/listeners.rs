//! The listening sockets the application serves: plain HTTP behind a
//! proxy, or HTTPS with the HTTP port's redirect and HTTP/3's UDP socket
//! (and the tasks that keep its certificate current).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use std::os::fd::{AsFd, OwnedFd};

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::client_ip::Networks;
use crate::config::{CertSource, Config, TlsSettings};
use crate::db::Db;
use crate::edge::quic::handoff::Handoff;
use crate::edge::tickets::TicketKeys;
use crate::edge::{self, certs::Certs, redirect::Redirect, Addresses, Limits};
use crate::http::dispatch::Dispatcher;
use crate::metrics::AcmeOrders;
use crate::tls::tickets::TicketSchedule;
use crate::tls::Identity;

use super::inherited::{self, Inherited};

/// The bound sockets: plain HTTP, or HTTPS, the HTTP port's redirect and
/// HTTP/3's UDP socket when it is served.
pub enum Listeners {
    Plain(TcpListener),
    Tls {
        https: TcpListener,
        http: TcpListener,
        quic: Option<Box<QuicSocket>>,
        /// Why HTTP/3 is not served though the configuration asks for it.
        no_http3: Option<String>,
        acceptor: tokio_rustls::TlsAcceptor,
        redirect: Redirect,
    },
}

/// HTTP/3's endpoint on its UDP socket, made at the start (so that a
/// successor tells its predecessor it serves HTTP/3 only once it can).
/// Nothing reads the socket until the server serves (a successor must not
/// take the packets of the connections its predecessor still serves
/// before it is ready): `Handoff::start_reading`.
pub struct QuicSocket {
    endpoint: edge::quic::Endpoint,
    /// A copy of the socket, for a successor.
    copy: OwnedFd,
    /// Its part in a handover (`edge::quic::handoff`).
    handoff: Arc<Handoff>,
}

impl Listeners {
    /// Takes the sockets `inherited` holds (from systemd or a predecessor,
    /// see [`handover`]) and binds what `config` asks for that is not
    /// among them. With HTTPS, the certificate's tasks (the ACME robot, or
    /// the watch on the operator's files) are started and returned, to be
    /// stopped with the server.
    pub async fn bind(
        config: &Config,
        inherited: &mut Inherited,
        db: &Db,
        orders: &AcmeOrders,
    ) -> anyhow::Result<(Listeners, Vec<JoinHandle<()>>, Option<Arc<Identity>>)> {
        warn_if_few_open_files(config);
        let Some(tls) = &config.tls else {
            let plain = match inherited.take_plain()? {
                Some(socket) => adopt(socket, inherited::HTTP)?,
                None => bind(config.addr, "ADDR").await?,
            };
            warn_if_left(inherited);
            return Ok((Listeners::Plain(plain), Vec::new(), None));
        };
        let https = match inherited.take(inherited::HTTPS) {
            Some(socket) => adopt(socket, inherited::HTTPS)?,
            None => bind(tls.https_addr, "HTTPS_ADDR").await?,
        };
        let http = match inherited.take(inherited::HTTP) {
            Some(socket) => adopt(socket, inherited::HTTP)?,
            None => bind(tls.http_addr, "HTTP_ADDR").await?,
        };
        let mut no_http3 = None;
        let udp = match config.http3 {
            true => quic_socket(tls, &https, inherited)?,
            false => None,
        };
        if config.http3 && udp.is_none() {
            no_http3 = Some(PASSED_WITHOUT_UDP.to_owned());
        }
        warn_if_left(inherited);
        let (acceptor, quic_tls, certs, identity, tasks) = certificates(tls, db, orders)?;
        let quic = match udp {
            Some(socket) => {
                let handoff = Handoff::new(inherited.take_quic_predecessor());
                let copy = socket.as_fd().try_clone_to_owned()?;
                let server = edge::quic::server_config(quic_tls, &config.limits)?;
                let made = edge::quic::Endpoint::new(
                    socket,
                    server,
                    handoff.clone(),
                    config.limits.workers,
                );
                match made {
                    Ok(endpoint) => Some(Box::new(QuicSocket {
                        endpoint,
                        copy,
                        handoff,
                    })),
                    Err(e) => {
                        tracing::error!(error = %format!("{e:#}"), "HTTP/3 is not served");
                        no_http3 = Some(format!("its endpoint could not be made ({e:#})"));
                        None
                    }
                }
            }
            None => None,
        };
        let listeners = Listeners::Tls {
            https,
            http,
            quic,
            no_http3,
            acceptor,
            redirect: Redirect::new(&config.site_url, tls.domains(), certs),
        };
        Ok((listeners, tasks, Some(identity)))
    }

    /// Copies of the sockets (the same kernel sockets) to pass to a
    /// successor, by name.
    pub fn for_successor(&self) -> anyhow::Result<Vec<(&'static str, OwnedFd)>> {
        let copy = |l: &TcpListener| l.as_fd().try_clone_to_owned();
        Ok(match self {
            Listeners::Plain(l) => vec![(inherited::HTTP, copy(l)?)],
            Listeners::Tls {
                https, http, quic, ..
            } => {
                let mut sockets = vec![
                    (inherited::HTTPS, copy(https)?),
                    (inherited::HTTP, copy(http)?),
                ];
                if let Some(quic) = quic {
                    sockets.push((inherited::QUIC, quic.copy.try_clone()?));
                }
                sockets
            }
        })
    }

    /// HTTP/3's part in a handover, when it is served.
    pub fn handoff(&self) -> Option<Arc<Handoff>> {
        match self {
            Listeners::Tls {
                quic: Some(quic), ..
            } => Some(quic.handoff.clone()),
            _ => None,
        }
    }

    /// The UDP port HTTP/3 is served on, if it is.
    pub fn h3_port(&self) -> Option<u16> {
        self.quic_addr().map(|a| a.port())
    }

    /// Why HTTP/3 is not served though the configuration asks for it.
    pub fn no_http3(&self) -> Option<&str> {
        match self {
            Listeners::Tls { no_http3, .. } => no_http3.as_deref(),
            Listeners::Plain(_) => None,
        }
    }

    /// The UDP address HTTP/3 is served on, if it is.
    pub fn quic_addr(&self) -> Option<SocketAddr> {
        match self {
            Listeners::Tls {
                quic: Some(quic), ..
            } => quic.endpoint.local_addr().ok(),
            _ => None,
        }
    }

    pub fn addresses(&self) -> Addresses {
        let of = |l: &TcpListener| l.local_addr().expect("a bound listener has an address");
        match self {
            Listeners::Plain(l) => Addresses {
                main: of(l),
                redirect: None,
            },
            Listeners::Tls { https, http, .. } => Addresses {
                main: of(https),
                redirect: Some(of(http)),
            },
        }
    }

    /// Serves every listener until `stopped()` resolves, then until their
    /// connections have finished (see [`edge::serve`]).
    pub async fn serve<F>(
        self,
        dispatcher: Dispatcher,
        limits: Limits,
        exempt: Networks,
        stopped: impl Fn() -> F,
    ) where
        F: Future<Output = ()>,
    {
        // Each worker its own: a connection's service then counts its
        // references to the dispatcher on its worker alone.
        let connection = move || {
            let dispatcher = Arc::new(dispatcher.clone());
            move |peer| Dispatcher::connection(&dispatcher, peer)
        };
        match self {
            Listeners::Plain(listener) => {
                edge::serve(listener, None, connection, limits, exempt, stopped()).await
            }
            Listeners::Tls {
                https,
                http,
                quic,
                acceptor,
                redirect,
                ..
            } => {
                let redirects = edge::Axum::per_worker(redirect);
                let endpoint = quic.map(|q| q.endpoint);
                let h3 = async {
                    if let Some(endpoint) = endpoint {
                        let (limits, exempt) = (limits.clone(), exempt.clone());
                        edge::quic::serve(endpoint, &connection, limits, exempt, stopped()).await
                    }
                };
                tokio::join!(
                    edge::serve(
                        https,
                        Some(acceptor),
                        &connection,
                        limits.clone(),
                        exempt.clone(),
                        stopped()
                    ),
                    edge::serve(
                        http,
                        None,
                        redirects,
                        limits.clone(),
                        exempt.clone(),
                        stopped()
                    ),
                    h3,
                );
            }
        }
    }
}

/// The HTTPS port's TLS and the certificate store it serves from, filled
/// from the operator's files or by ACME; the identity that keeps it and
/// the session-ticket keys current from the database every server shares
/// (`tls`), and the tasks that do it.
fn certificates(tls: &TlsSettings, db: &Db, orders: &AcmeOrders) -> anyhow::Result<Certificates> {
    let certs = Certs::new();
    let schedule = TicketSchedule::every(tls.ticket_period);
    let tickets = TicketKeys::new(schedule.lifetime, schedule.keep())
        .context("making the session ticket key (the system's random source)")?;
    let identity = Identity::new(
        db.clone(),
        certs.clone(),
        tickets.clone(),
        schedule,
        orders.clone(),
    );
    let mut tasks = Vec::new();
    let acme = match &tls.certs {
        CertSource::Files(files) => {
            let served = files.load().map_err(|e| anyhow::anyhow!("{e}"))?;
            let valid_until = edge::certs::rfc3339(served.info.not_after);
            tracing::info!(serial = %served.info.serial, %valid_until, "HTTPS: TLS_CERT is in service");
            certs.deploy(served);
            let pair = files.clone();
            tasks.push(edge::certs::watch_files(
                certs.clone(),
                files.paths(),
                move || pair.load(),
            ));
            None
        }
        CertSource::Acme(acme) => Some(acme.clone()),
    };
    tasks.extend(identity.start(acme)?);
    let config = edge::certs::server_config(certs.clone(), &tickets);
    let quic = edge::certs::quic_server_config(certs.clone(), &tickets);
    Ok((
        tokio_rustls::TlsAcceptor::from(config),
        quic,
        certs,
        identity,
        tasks,
    ))
}

type Certificates = (
    tokio_rustls::TlsAcceptor,
    Arc<rustls::ServerConfig>,
    Arc<Certs>,
    Arc<Identity>,
    Vec<JoinHandle<()>>,
);

/// One descriptor per connection: says so when the process may open fewer
/// files than `MAX_CONNECTIONS` needs (after raising its limit where it may).
fn warn_if_few_open_files(config: &Config) {
    let open_files = edge::raise_open_files();
    if (open_files as usize) < config.limits.max_connections + 256 {
        tracing::warn!(
            open_files,
            max_connections = config.limits.max_connections,
            "the open-file limit is below MAX_CONNECTIONS: raise LimitNOFILE / ulimit -n"
        );
    }
}

/// A socket passed in, served as it is (its address is the socket unit's,
/// or the predecessor's).
fn adopt(socket: std::net::TcpListener, name: &str) -> anyhow::Result<TcpListener> {
    let listener = TcpListener::from_std(socket)?;
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(socket = name, %addr, "serving on a socket passed in (systemd or the previous process)");
    }
    Ok(listener)
}

/// HTTP/3's UDP socket: the one passed in, or, when the server bound its
/// HTTPS port itself, one bound to the same address and port number. When
/// the HTTPS port was passed in without one (socket units older than
/// `citizen-site-quic.socket`), none: HTTPS_ADDR is not the port in use.
fn quic_socket(
    tls: &TlsSettings,
    https: &TcpListener,
    inherited: &mut Inherited,
) -> anyhow::Result<Option<std::net::UdpSocket>> {
    if let Some(socket) = inherited.take_quic() {
        if let Ok(addr) = socket.local_addr() {
            tracing::info!(socket = inherited::QUIC, %addr, "HTTP/3: serving on a UDP socket passed in (systemd or the previous process)");
        }
        return Ok(Some(socket));
    }
    let at = https.local_addr()?;
    if inherited.was_passed(inherited::HTTPS) {
        tracing::warn!(https = %at, "HTTP/3 is not served: {PASSED_WITHOUT_UDP}");
        return Ok(None);
    }
    let addr = SocketAddr::new(tls.https_addr.ip(), at.port());
    let socket = std::net::UdpSocket::bind(addr).with_context(|| {
        format!(
            "HTTPS_ADDR: cannot listen on {addr} over UDP for HTTP/3 (HTTP3=off serves without it)"
        )
    })?;
    socket.set_nonblocking(true)?;
    Ok(Some(socket))
}

/// Why HTTP/3 is not served on a socket systemd passed without its UDP one.
const PASSED_WITHOUT_UDP: &str = "the HTTPS socket was passed in without a UDP one (add deploy/citizen-site-quic.socket, or set HTTP3=off)";

fn warn_if_left(inherited: &Inherited) {
    let left = inherited.left();
    if !left.is_empty() {
        tracing::warn!(sockets = ?left, "sockets passed in that this configuration does not serve (names: https, http, quic)");
    }
}

async fn bind(addr: SocketAddr, variable: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .with_context(|| format!("{variable}: cannot listen on {addr}"))
}

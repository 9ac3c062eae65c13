//! PostgreSQL for the process tests (`tests/fleet.rs`,
//! `tests/monitoring.rs`): a database of the test's own on the shared
//! cluster (127.0.0.1:5432, trust auth), dropped with it, and a TCP proxy
//! in front of it that the test cuts (the database away, never the
//! cluster).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A PostgreSQL database of the test's own, dropped with it.
pub struct PgDb {
    pub url: String,
    pub name: String,
}

pub const PG_ADMIN: &str = "postgres://postgres@127.0.0.1:5432/test";

fn pg(statement: &str) {
    use sqlx::Connection;
    let statement = statement.to_owned();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let mut conn = sqlx::postgres::PgConnection::connect(PG_ADMIN)
                .await
                .expect("PostgreSQL on 127.0.0.1:5432 (trust auth) is needed");
            sqlx::query(&statement).execute(&mut conn).await.unwrap();
        });
}

impl PgDb {
    pub fn new() -> PgDb {
        let name = format!("citizen_pg_{}", uuid::Uuid::new_v4().simple());
        pg(&format!("CREATE DATABASE {name}"));
        PgDb {
            url: format!("postgres://postgres@127.0.0.1:5432/{name}"),
            name,
        }
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        pg(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

/// A TCP proxy in front of PostgreSQL that the test cuts: once cut, it
/// closes what it carries and every new connection.
pub struct CutProxy {
    pub port: u16,
    cut: Arc<AtomicBool>,
}

impl CutProxy {
    pub fn start(upstream: u16) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let flag = cut.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if flag.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let flag = flag.clone();
                    from.set_read_timeout(Some(Duration::from_millis(200)))
                        .unwrap();
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16384];
                        loop {
                            if flag.load(Ordering::SeqCst) {
                                break;
                            }
                            match from.read(&mut buf) {
                                Ok(0) => break,
                                Ok(n) => {
                                    if to.write_all(&buf[..n]).is_err() {
                                        break;
                                    }
                                }
                                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                                Err(_) => break,
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                        let _ = from.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        CutProxy { port, cut }
    }

    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }

    /// Carries new connections again (those it closed stay closed).
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

//! How an order ended when it did not end with a certificate ([`Failure`]): the CA's refusal (the fleet backs off), this member's own fault (it backs off alone), or a lease lost.

/// How an order ended, when it did not end with a certificate.
#[derive(Debug)]
pub(super) enum Failure {
    /// The CA answered it (refused, invalid, limited): the fleet backs off.
    Ca(anyhow::Error),
    /// It never reached the CA: this member backs off alone.
    Own(anyhow::Error),
    /// The lease was lost: another member orders now.
    Abandoned(String),
}

/// A refusal the CA made in its answer (an order or authorization that
/// went invalid), as opposed to one it never got to make.
#[derive(Debug)]
pub(super) struct CaAnswer(pub(super) String);

impl std::fmt::Display for CaAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CaAnswer {}

impl Failure {
    /// A refusal the CA made in its answer, said as `why`.
    pub(super) fn refused(why: String) -> Failure {
        Failure::Ca(anyhow::Error::new(CaAnswer(why)))
    }

    /// Whose fault `e` is: the CA's answer (a problem document, an order
    /// that went invalid, a validation still pending at the deadline), or
    /// this member's (no connection, TLS, DNS, its database).
    pub(super) fn of(e: anyhow::Error) -> Failure {
        let answered = e.chain().any(|c| {
            c.is::<CaAnswer>()
                || matches!(
                    c.downcast_ref::<instant_acme::Error>(),
                    Some(instant_acme::Error::Api(_) | instant_acme::Error::Timeout(_))
                )
        });
        if answered {
            Failure::Ca(e)
        } else {
            Failure::Own(e)
        }
    }

    /// Whose fault `e` is once the order exists: the CA's too when it
    /// answered with no problem document (a 5xx page) or did not answer
    /// in time. The CA was reached to place the order, so a slow or
    /// failing CA now is the fleet's back-off, not each member's in turn.
    pub(super) fn of_placed(e: anyhow::Error) -> Failure {
        if slow_or_failing_ca(&e) {
            Failure::Ca(e)
        } else {
            Failure::of(e)
        }
    }
}

/// A CA's answer that is no problem document (instant-acme fails to read
/// one from a 5xx page), or a request to it that timed out.
fn slow_or_failing_ca(e: &anyhow::Error) -> bool {
    let timed_out = |c: &(dyn std::error::Error + 'static)| {
        c.downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
    };
    e.chain().any(|c| {
        timed_out(c)
            || match c.downcast_ref::<instant_acme::Error>() {
                Some(instant_acme::Error::Json(_)) => true,
                Some(instant_acme::Error::Other(inner)) => {
                    timed_out(inner.as_ref())
                        || inner
                            .downcast_ref::<reqwest::Error>()
                            .is_some_and(|r| r.status().is_some_and(|s| s.is_server_error()))
                }
                _ => false,
            }
    })
}

#[cfg(test)]
mod classification {
    use super::*;
    use std::time::Duration;

    /// A CA that answers a step of an existing order with a 5xx page and
    /// no problem document, or not in time, is the fleet's back-off; before
    /// the order exists, a failure that is not the CA's answer stays the
    /// member's own.
    #[test]
    fn a_slow_or_failing_ca_after_the_order_is_the_fleets_back_off() {
        let failing = || {
            anyhow::Error::new(instant_acme::Error::Json(
                serde_json::from_str::<serde_json::Value>("<html>502</html>").unwrap_err(),
            ))
            .context("downloading the certificate")
        };
        assert!(matches!(Failure::of_placed(failing()), Failure::Ca(_)));
        assert!(matches!(Failure::of(failing()), Failure::Own(_)));
        let unreachable = || anyhow::Error::new(instant_acme::Error::Str("no connection"));
        assert!(matches!(Failure::of_placed(unreachable()), Failure::Own(_)));
    }

    #[tokio::test]
    async fn a_request_that_times_out_is_the_cas_once_the_order_exists() {
        // A CA that accepts the connection and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _held = tokio::spawn(async move {
            let mut kept = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                kept.push(socket);
            }
        });
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(200))
            .build()
            .unwrap();
        let e = client
            .get(format!("http://{addr}/"))
            .send()
            .await
            .unwrap_err();
        assert!(e.is_timeout());
        let e = anyhow::Error::new(instant_acme::Error::Other(Box::new(e)))
            .context("waiting for the validation");
        assert!(matches!(Failure::of_placed(e), Failure::Ca(_)));
    }
}

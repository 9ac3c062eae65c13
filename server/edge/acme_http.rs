//! instant-acme's HTTP client: its requests sent through reqwest, with
//! timeouts, so that a CA that does not answer never holds the ACME robot.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use anyhow::Context;
use axum::http;
use bytes::Bytes;
use http_body_util::BodyExt;
use instant_acme::{BodyWrapper, BytesResponse, HttpClient};

/// The longest `Retry-After` a CA's answer is taken at, in seconds: a day.
/// instant-acme adds the header's seconds to the clock unchecked (a huge
/// value panics the task that asked), and no CA means a longer wait.
pub const RETRY_AFTER_CAP: u64 = 86_400;

/// A `Retry-After` in seconds past [`RETRY_AFTER_CAP`] is made the cap,
/// before anything reads it. A date is left:
/// instant-acme compares it with the clock, which cannot overflow.
pub fn cap_retry_after(headers: &mut http::HeaderMap) {
    let Some(value) = headers.get(http::header::RETRY_AFTER) else {
        return;
    };
    let Ok(text) = value.to_str() else {
        return;
    };
    // Read exactly as instant-acme reads it (`u64::from_str` on the
    // trimmed text, which takes a leading `+`); a number too large for
    // u64 it reads as no header at all.
    if text
        .trim()
        .parse::<u64>()
        .is_ok_and(|secs| secs > RETRY_AFTER_CAP)
    {
        headers.insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from(RETRY_AFTER_CAP),
        );
    }
}

/// The wait a refusal's `Retry-After` asks for (seconds, or a date: by the
/// answer's own `Date` when it has one, else by `now`), at most
/// [`RETRY_AFTER_CAP`]; None without one, or for an answer that is no
/// refusal (an order's polling answers carry one too).
pub fn refusal_wait(
    status: http::StatusCode,
    headers: &http::HeaderMap,
    now: std::time::SystemTime,
) -> Option<Duration> {
    if !(status.is_client_error() || status.is_server_error()) {
        return None;
    }
    let date = |name| {
        let text = headers.get(name)?.to_str().ok()?;
        httpdate::parse_http_date(text.trim()).ok()
    };
    let now = date(http::header::DATE).unwrap_or(now);
    let text = headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    let wait = match text.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => httpdate::parse_http_date(text)
            .ok()?
            .duration_since(now)
            .unwrap_or_default(),
    };
    Some(wait.min(Duration::from_secs(RETRY_AFTER_CAP)))
}

/// instant-acme's requests, sent by reqwest: rustls with the web's roots
/// (plus `ACME_DIRECTORY_CA`), 10 s to connect and 30 s per request.
/// Each keeps the wait its last answer asked for ([`refusal_wait`]: a
/// refusal's; an answer after it, a retried nonce's or the next step's,
/// clears it): instant-acme reads no header of a problem document, and the
/// robot's back-off after a refusal is never shorter than the CA's word.
#[derive(Clone)]
pub struct AcmeHttp {
    client: reqwest::Client,
    refused_wait: std::sync::Arc<std::sync::Mutex<Option<Duration>>>,
}

impl AcmeHttp {
    pub fn new(extra_ca: Option<&[u8]>) -> anyhow::Result<AcmeHttp> {
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("citizen-site/", env!("CARGO_PKG_VERSION")));
        if let Some(pem) = extra_ca {
            for cert in reqwest::Certificate::from_pem_bundle(pem)
                .context("ACME_DIRECTORY_CA: not a PEM certificate")?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        Ok(AcmeHttp {
            client: builder.build().context("setting up the ACME client")?,
            refused_wait: Default::default(),
        })
    }

    /// The same client, keeping the waits of its own refusals: one order's.
    pub fn for_one_order(&self) -> AcmeHttp {
        AcmeHttp {
            client: self.client.clone(),
            refused_wait: Default::default(),
        }
    }

    /// The wait the last answer to this client's requests asked for.
    pub fn refused_wait(&self) -> Option<Duration> {
        *self.refused_wait.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl HttpClient for AcmeHttp {
    fn request(
        &self,
        req: http::Request<BodyWrapper<Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, instant_acme::Error>> + Send>> {
        let (client, refused_wait) = (self.client.clone(), self.refused_wait.clone());
        Box::pin(async move {
            let failed = |e: reqwest::Error| instant_acme::Error::Other(Box::new(e));
            let (parts, body) = req.into_parts();
            let body = body
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            let rsp = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .map_err(failed)?;
            let mut out = http::Response::builder().status(rsp.status());
            *refused_wait.lock().unwrap_or_else(|p| p.into_inner()) =
                refusal_wait(rsp.status(), rsp.headers(), std::time::SystemTime::now());
            if let Some(headers) = out.headers_mut() {
                *headers = rsp.headers().clone();
                cap_retry_after(headers);
            }
            let bytes = rsp.bytes().await.map_err(failed)?;
            let out = out
                .body(http_body_util::Full::new(bytes))
                .map_err(|e| instant_acme::Error::Other(Box::new(e)))?;
            Ok(BytesResponse::from(out))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_retry_after_is_capped_before_instant_acme_reads_it() {
        let capped = |value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(http::header::RETRY_AFTER, value.parse().unwrap());
            cap_retry_after(&mut headers);
            headers[http::header::RETRY_AFTER]
                .to_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(capped("18446744073709551615"), "86400");
        // Too large for u64: instant-acme reads no Retry-After at all.
        assert_eq!(capped("99999999999999999999999"), "99999999999999999999999");
        assert_eq!(capped("86401"), "86400");
        // u64::from_str takes a sign, after the trim instant-acme makes: so
        // does the cap.
        assert_eq!(capped("+18446744073709551615"), "86400");
        assert_eq!(capped(" 18446744073709551615 "), "86400");
        assert_eq!("+18446744073709551615".parse::<u64>(), Ok(u64::MAX));
        assert_eq!(capped("120"), "120");
        assert_eq!(
            capped("Wed, 21 Oct 2015 07:28:00 GMT"),
            "Wed, 21 Oct 2015 07:28:00 GMT"
        );
        // What instant-acme does with the header's seconds: the capped
        // value adds to the clock, the CA's would have panicked.
        let now = std::time::SystemTime::now();
        assert!(now.checked_add(Duration::from_secs(u64::MAX)).is_none());
        assert!(now
            .checked_add(Duration::from_secs(RETRY_AFTER_CAP))
            .is_some());
    }

    /// A refusal's `Retry-After`, in seconds or as a date, is the wait it
    /// asks for, at most a day; an answer that is no refusal asks none.
    #[test]
    fn a_refusals_retry_after_is_its_wait() {
        let headers = |value: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(http::header::RETRY_AFTER, value.parse().unwrap());
            h
        };
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        let limited = http::StatusCode::TOO_MANY_REQUESTS;
        assert_eq!(
            refusal_wait(limited, &headers(" 120 "), now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            refusal_wait(limited, &headers("Wed, 21 Oct 2015 08:28:00 GMT"), now),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(
            refusal_wait(limited, &headers("Wed, 21 Oct 2015 06:28:00 GMT"), now),
            Some(Duration::ZERO),
            "a date gone by"
        );
        assert_eq!(
            refusal_wait(
                http::StatusCode::SERVICE_UNAVAILABLE,
                &headers("18446744073709551615"),
                now
            ),
            Some(Duration::from_secs(RETRY_AFTER_CAP))
        );
        assert_eq!(refusal_wait(limited, &headers("soon"), now), None);
        // A date by the answer's own clock, not this member's (an hour off).
        let mut dated = headers("Wed, 21 Oct 2015 09:28:00 GMT");
        dated.insert(
            http::header::DATE,
            "Wed, 21 Oct 2015 08:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(
            refusal_wait(limited, &dated, now),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(refusal_wait(limited, &http::HeaderMap::new(), now), None);
        assert_eq!(
            refusal_wait(http::StatusCode::OK, &headers("120"), now),
            None,
            "an order's polling answer"
        );
    }
}

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

/// instant-acme's requests, sent by reqwest: rustls with the web's roots
/// (plus `ACME_DIRECTORY_CA`), 10 s to connect and 30 s per request.
#[derive(Clone)]
pub struct AcmeHttp(reqwest::Client);

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
        Ok(AcmeHttp(
            builder.build().context("setting up the ACME client")?,
        ))
    }
}

impl HttpClient for AcmeHttp {
    fn request(
        &self,
        req: http::Request<BodyWrapper<Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, instant_acme::Error>> + Send>> {
        let client = self.0.clone();
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
}

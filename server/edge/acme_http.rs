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
            }
            let bytes = rsp.bytes().await.map_err(failed)?;
            let out = out
                .body(http_body_util::Full::new(bytes))
                .map_err(|e| instant_acme::Error::Other(Box::new(e)))?;
            Ok(BytesResponse::from(out))
        })
    }
}

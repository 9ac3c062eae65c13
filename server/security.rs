//! Security headers, on every response (the request middleware in
//! `http::observe` adds them; a handler may set its own first).
//!
//! The Content-Security-Policy starts from nothing (`default-src 'none'`)
//! and allows what the pages use: scripts, styles, fonts and data from this
//! origin only (no inline script anywhere: the loader JSON and JSON-LD are
//! data blocks, which CSP does not run; the one inline style of a page, the
//! CSS its markup uses, is allowed by its SHA-256 alone:
//! [`SecurityHeaders::page_policy`]), images from here or any
//! https host (team photos come from the database), frames from exactly the
//! embeds in `content/site/embeds.json` (read with the rest of the content,
//! [`crate::content::Content::frame_origins`]), and forms that post here (the
//! no-JavaScript checkout post is redirected to Stripe Checkout, which
//! `form-action` must allow too). Nobody may frame the site.

use axum::http::{header, HeaderMap, HeaderName, HeaderValue};

/// Where Stripe hosts Checkout; the no-JavaScript plan form is redirected there.
pub const STRIPE_CHECKOUT_ORIGIN: &str = "https://checkout.stripe.com";

/// Two years, as the HSTS preload list asks.
const HSTS: &str = "max-age=63072000";

pub const PERMISSIONS_POLICY: &str =
    "camera=(), microphone=(), geolocation=(), payment=(), usb=(), browsing-topics=()";

/// The headers, computed once from the configuration.
pub struct SecurityHeaders {
    csp: HeaderValue,
    https: bool,
    frame_origins: Vec<String>,
    hsts: Option<HeaderValue>,
    alt_svc: Option<HeaderValue>,
}

/// How long a browser may remember that HTTP/3 is served (a day).
pub const ALT_SVC_MAX_AGE: u32 = 86400;

impl SecurityHeaders {
    /// For a site at `site_url` whose pages embed frames from
    /// `frame_origins`, advertising HTTP/3 on UDP port `h3_port` when one
    /// is served. Every response carries them, kept pages in their
    /// finished headers: nothing is encoded per response.
    pub fn new(site_url: &str, frame_origins: &[String], h3_port: Option<u16>) -> SecurityHeaders {
        let https = site_url.starts_with("https://");
        SecurityHeaders {
            csp: HeaderValue::from_str(&content_security_policy(https, frame_origins, None))
                .expect("the policy is ASCII"),
            https,
            frame_origins: frame_origins.to_vec(),
            hsts: https.then(|| HeaderValue::from_static(HSTS)),
            alt_svc: h3_port.map(|port| {
                HeaderValue::from_str(&format!("h3=\":{port}\"; ma={ALT_SVC_MAX_AGE}"))
                    .expect("the value is ASCII")
            }),
        }
    }

    /// The policy of a page whose one inline `<style>` has the CSP source
    /// `style_source` (`'sha256-…'`, see [`crate::css`]):
    /// the site's, with that style allowed and nothing else inline. A page
    /// sets it before [`SecurityHeaders::apply`], which keeps it.
    pub fn page_policy(&self, style_source: &str) -> HeaderValue {
        HeaderValue::from_str(&content_security_policy(
            self.https,
            &self.frame_origins,
            Some(style_source),
        ))
        .expect("the policy is ASCII")
    }

    /// Adds every header `headers` does not have yet. `/assets/` files may
    /// be loaded by other sites (preview cards, icons); nothing else may.
    pub fn apply(&self, path: &str, headers: &mut HeaderMap) {
        const FIXED: [(HeaderName, HeaderValue); 5] = [
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("strict-origin-when-cross-origin"),
            ),
            (
                HeaderName::from_static("permissions-policy"),
                HeaderValue::from_static(PERMISSIONS_POLICY),
            ),
            (
                HeaderName::from_static("cross-origin-opener-policy"),
                HeaderValue::from_static("same-origin"),
            ),
        ];
        const CORP: HeaderName = HeaderName::from_static("cross-origin-resource-policy");
        headers.reserve(FIXED.len() + 4);
        headers
            .entry(header::CONTENT_SECURITY_POLICY)
            .or_insert_with(|| self.csp.clone());
        for (name, value) in FIXED {
            headers.entry(name).or_insert(value);
        }
        let corp = if path.starts_with("/assets/") {
            "cross-origin"
        } else {
            "same-origin"
        };
        headers
            .entry(CORP)
            .or_insert(HeaderValue::from_static(corp));
        if let Some(hsts) = &self.hsts {
            headers
                .entry(header::STRICT_TRANSPORT_SECURITY)
                .or_insert_with(|| hsts.clone());
        }
        if let Some(alt_svc) = &self.alt_svc {
            headers
                .entry(header::ALT_SVC)
                .or_insert_with(|| alt_svc.clone());
        }
    }
}

/// The policy; `style_source`, a hash source, allows one inline style.
pub fn content_security_policy(
    https: bool,
    frame_origins: &[String],
    style_source: Option<&str>,
) -> String {
    // Only a hash: a page's HTML could not name anything else safely.
    let style_source = style_source.filter(|s| {
        s.strip_prefix("'sha256-")
            .and_then(|s| s.strip_suffix('\''))
            .is_some_and(|b64| {
                b64.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
            })
    });
    let mut csp = format!(
        "default-src 'none'; script-src 'self'; style-src 'self'{style}; img-src 'self' data: https:; font-src 'self'; \
         connect-src 'self'; manifest-src 'self'; frame-src {frames}; form-action 'self' {STRIPE_CHECKOUT_ORIGIN}; \
         frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
        style = style_source.map(|s| format!(" {s}")).unwrap_or_default(),
        frames = frame_origins.join(" "),
    );
    if https {
        csp.push_str("; upgrade-insecure-requests");
    }
    csp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames() -> Vec<String> {
        crate::content::parse_frame_origins(include_str!("../content/site/embeds.json")).unwrap()
    }

    #[test]
    fn the_policy_allows_no_inline_script_and_no_framing() {
        let csp = content_security_policy(false, &frames(), None);
        assert!(!csp.contains("unsafe"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'none'"));
        assert!(
            csp.contains("frame-src https://dexscreener.com https://www.youtube-nocookie.com;"),
            "{csp}"
        );
        assert!(
            content_security_policy(true, &frames(), None).ends_with("; upgrade-insecure-requests")
        );
    }

    #[test]
    fn a_page_allows_its_own_inline_style_by_hash_and_nothing_else() {
        let security = SecurityHeaders::new("https://citizenwallet.xyz", &frames(), None);
        let source = "'sha256-p0bF+un5yUb9MBO6xRb8kPHlY2BdpHVtLiFkDrZPF64='";
        let policy = security.page_policy(source);
        let policy = policy.to_str().unwrap();
        assert!(
            policy.contains(&format!("style-src 'self' {source};")),
            "{policy}"
        );
        assert!(policy.contains("script-src 'self';") && !policy.contains("unsafe"));
        // Anything but a hash source is left out.
        for bad in [
            "'unsafe-inline'",
            "'sha256-x' 'unsafe-inline'",
            "'nonce-abc'",
            "*",
        ] {
            let policy = security.page_policy(bad);
            assert!(
                policy.to_str().unwrap().contains("style-src 'self';"),
                "{bad}"
            );
        }
    }

    #[test]
    fn hsts_only_when_the_site_is_https_and_a_handler_keeps_its_own_values() {
        let mut h = HeaderMap::new();
        SecurityHeaders::new("http://127.0.0.1:3000", &frames(), None).apply("/", &mut h);
        assert!(h.get(header::STRICT_TRANSPORT_SECURITY).is_none());
        assert_eq!(h["cross-origin-resource-policy"], "same-origin");
        let mut h = HeaderMap::new();
        h.insert(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("SAMEORIGIN"),
        );
        SecurityHeaders::new("https://citizenwallet.xyz", &frames(), None)
            .apply("/assets/x.png", &mut h);
        assert_eq!(h[header::STRICT_TRANSPORT_SECURITY], HSTS);
        assert!(h.get(header::ALT_SVC).is_none());
        assert_eq!(h[header::X_FRAME_OPTIONS], "SAMEORIGIN");
        assert_eq!(h["cross-origin-resource-policy"], "cross-origin");
    }

    #[test]
    fn http3_is_advertised_on_the_port_held() {
        let mut h = HeaderMap::new();
        SecurityHeaders::new("https://citizenwallet.xyz", &frames(), Some(8443)).apply("/", &mut h);
        assert_eq!(h[header::ALT_SVC], "h3=\":8443\"; ma=86400");
    }
}

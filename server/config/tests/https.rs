//! HTTPS's settings: the domains settled, each bad setting refused by its
//! name, and an operator's certificate files checked as a start checks
//! them.

use super::*;

#[test]
fn tls_domains_settle_to_https_with_the_first_name_as_the_site() {
    let c = config(&[
        "--tls-domains",
        " Site.Example, www.site.example.,site.example ",
    ])
    .unwrap();
    let tls = c.tls.expect("tls");
    let CertSource::Acme(acme) = &tls.certs else {
        panic!("acme")
    };
    assert_eq!(acme.domains, ["site.example", "www.site.example"]);
    assert_eq!(acme.directory, crate::edge::acme::LETS_ENCRYPT);
    assert_eq!(
        acme.cache_dir,
        PathBuf::from("data/acme"),
        "beside the SQLite file"
    );
    assert_eq!((tls.https_addr.port(), tls.http_addr.port()), (443, 80));
    assert_eq!(c.site_url, "https://site.example");
    assert_eq!(c.limits.max_per_client, Some(256));
    assert_eq!(c.limits.header_read, Some(Duration::from_secs(10)));
    let c = config(&[
        "--tls-domains",
        "a.example",
        "--https-addr",
        "127.0.0.1:8443",
        "--http-addr",
        "127.0.0.1:8080",
    ])
    .unwrap();
    assert_eq!(c.site_url, "https://a.example:8443");
}

#[test]
fn bad_tls_settings_are_refused_naming_the_variable() {
    assert!(error(&["--tls-domains", " , "]).starts_with("TLS_DOMAINS: empty"));
    for bad in [
        "*.site.example",
        "127.0.0.1",
        "site.example:443",
        "https://site.example",
        "-a.example",
        "a..example",
        "ex ample.org",
    ] {
        let e = error(&[&format!("--tls-domains={bad}")]);
        assert!(
            e.starts_with(&format!("TLS_DOMAINS: {bad:?} is not a domain name")),
            "{bad}: {e}"
        );
    }
    assert_eq!(
        error(&["--tls-cert", "/c.pem"]),
        "TLS_KEY: not set, but TLS_CERT is: both are needed"
    );
    assert_eq!(
        error(&["--tls-key", "/k.pem"]),
        "TLS_CERT: not set, but TLS_KEY is: both are needed"
    );
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--tls-cert",
        "/c.pem",
        "--tls-key",
        "/k.pem"
    ])
    .starts_with("TLS_DOMAINS and TLS_CERT/TLS_KEY are both set"));
    // A missing file first, then what follows from it.
    let e = problems(&[
        "--tls-cert",
        "/nonexistent/c.pem",
        "--tls-key",
        "/nonexistent/k.pem",
    ]);
    assert_eq!(
        e,
        [
            "TLS_CERT=/nonexistent/c.pem: cannot read the file: no such file",
            "TLS_KEY=/nonexistent/k.pem: cannot read the file: no such file",
            "SITE_URL: set it to the https address TLS_CERT is for (https://your.domain)",
        ]
    );
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--site-url",
        "http://a.example"
    ])
    .starts_with("SITE_URL=http://a.example: must start with https://"));
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--acme-directory",
        "http://ca.example/dir"
    ])
    .starts_with("ACME_DIRECTORY=http://ca.example/dir: must be an https URL"));
    assert!(
        error(&["--tls-domains", "a.example", "--acme-email", "nobody"])
            .starts_with("ACME_EMAIL=nobody: not an email address")
    );
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--acme-profile",
        "short lived"
    ])
    .starts_with("ACME_PROFILE=short lived: not a profile name"));
    let e = error(&[
        "--tls-domains",
        "a.example",
        "--acme-directory-ca",
        "/nonexistent/ca.pem",
    ]);
    assert!(
        e.starts_with("ACME_DIRECTORY_CA=/nonexistent/ca.pem: cannot read the file"),
        "{e}"
    );
    assert!(
        error(&["--tls-domains", "a.example", "--https-addr", "0.0.0.0:80"])
            .starts_with("HTTPS_ADDR and HTTP_ADDR are the same address")
    );
}

#[test]
fn an_operators_certificate_must_be_usable_and_for_the_site() {
    let dir = std::env::temp_dir().join(format!("cs-config-cert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let make = |name: &str, days: (i64, i64)| {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec![name.to_owned()]).unwrap();
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now + time::Duration::days(days.0);
        params.not_after = now + time::Duration::days(days.1);
        let cert = params.self_signed(&key).unwrap();
        let (c, k) = (
            dir.join(format!("{name}.{}.crt", days.1)),
            dir.join(format!("{name}.{}.key", days.1)),
        );
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c.display().to_string(), k.display().to_string())
    };
    let (cert, key) = make("site.example", (-1, 90));
    let ok = config(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--site-url",
        "https://site.example",
    ])
    .unwrap();
    assert_eq!(ok.site_url, "https://site.example");
    let found = problems(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--site-url",
        "https://other.example",
    ]);
    assert_eq!(
        found,
        ["SITE_URL=https://other.example: the certificate in TLS_CERT is not for other.example (it is for site.example)"]
    );
    let (old, old_key) = make("site.example", (-90, -1));
    let found = problems(&[
        "--tls-cert",
        &old,
        "--tls-key",
        &old_key,
        "--site-url",
        "https://site.example",
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(&format!("TLS_CERT={old}: the certificate expired at ")),
        "{found:?}"
    );
    let found = problems(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &old_key,
        "--site-url",
        "https://site.example",
    ]);
    assert_eq!(
        found,
        [format!("TLS_CERT={cert} and TLS_KEY={old_key} do not belong together: the key is not the certificate's")]
    );
    assert!(tls::name_covers("*.site.example", "www.site.example"));
    assert!(!tls::name_covers("*.site.example", "site.example"));
    assert!(!tls::name_covers("*.site.example", "a.b.site.example"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn own_files_that_cannot_be_read_are_each_named_in_words() {
    let dir = std::env::temp_dir().join(format!("cs-config-unread-{}", std::process::id()));
    let files = OwnFiles {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
        named: ("TLS_CERT=c".into(), "TLS_KEY=k".into()),
    };
    assert_eq!(
        files.load().err().unwrap().0,
        [
            "TLS_CERT=c: cannot read the file: no such file",
            "TLS_KEY=k: cannot read the file: no such file"
        ]
    );
}

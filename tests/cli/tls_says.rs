//! An operator's second hour (issue 67), its HTTPS part: `check` on a
//! `TLS_CERT` and `TLS_KEY` given the wrong way round names both files and
//! says they look swapped.

use std::path::Path;
use std::process::Command;

use super::{run, site};
use crate::support::tls_site::TestCa;
use crate::support::{free_port, Dir};

/// `check` with `TLS_CERT` and `TLS_KEY` set to `cert` and `key`, in text
/// and in JSON: (exit code, text, the JSON's problems).
fn check_pair(dir: &Path, cert: &Path, key: &Path) -> (i32, String, Vec<String>) {
    let with = |c: &mut Command| {
        c.env("TLS_CERT", cert)
            .env("TLS_KEY", key)
            .env("SITE_URL", "https://localhost")
            .env("HTTPS_ADDR", format!("127.0.0.1:{}", free_port()))
            .env("HTTP_ADDR", format!("127.0.0.1:{}", free_port()));
    };
    let mut text = site(dir);
    with(text.arg("check"));
    let (code, out, err) = run(&mut text);
    let mut json = site(dir);
    with(json.args(["check", "--json"]));
    let (json_code, json_out, _) = run(&mut json);
    assert_eq!(code, json_code, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&json_out).unwrap();
    let problems = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    (code, out, problems)
}

#[test]
fn check_names_both_files_of_a_swapped_tls_pair_and_each_file_at_fault() {
    let dir = Dir::new("cli-tls-swapped");
    let ca = TestCa::new();
    let (cert, key) = ca.leaf(&["localhost"], -60, 86400);
    let (cert_file, key_file) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let (c, k) = (cert_file.display(), key_file.display());

    // Swapped: each file holds what the other should.
    let (code, out, problems) = check_pair(&dir.0, &key_file, &cert_file);
    assert_eq!(code, 1, "{out}");
    for words in [
        format!("error: TLS_CERT={k}: holds no certificate"),
        format!("error: TLS_KEY={c}: holds no PEM private key"),
        format!("error: TLS_CERT={k} and TLS_KEY={c} look swapped"),
    ] {
        assert!(out.contains(&words), "{words:?} not in {out}");
    }
    assert!(!out.contains("PRIVATE KEY-----"), "{out}");
    for start in [format!("TLS_CERT={k}: "), format!("TLS_KEY={c}: ")] {
        assert!(
            problems.iter().any(|p| p.starts_with(&start)),
            "{start:?} not in {problems:?}"
        );
    }

    // Neither file holds what it should: both named, no swap suggested.
    let notes = dir.0.join("notes.txt");
    std::fs::write(&notes, "the certificate is in the other folder\n").unwrap();
    let (code, out, problems) = check_pair(&dir.0, &notes, &notes);
    assert_eq!(code, 1, "{out}");
    let n = notes.display();
    assert!(
        out.contains(&format!("error: TLS_CERT={n}: holds no certificate"))
            && out.contains(&format!("error: TLS_KEY={n}: holds no PEM private key")),
        "{out}"
    );
    assert!(!out.contains("look swapped"), "{out}");
    assert_eq!(problems.len(), 2, "{problems:?}");

    // Another certificate's key: one problem naming both.
    let (_, other_key) = ca.leaf(&["localhost"], -60, 86400);
    let other = dir.0.join("other-key.pem");
    std::fs::write(&other, other_key).unwrap();
    let (code, out, problems) = check_pair(&dir.0, &cert_file, &other);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        problems,
        [format!(
            "TLS_CERT={c} and TLS_KEY={} do not belong together: the key is not the certificate's",
            other.display()
        )]
    );
}

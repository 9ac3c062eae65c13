//! A maintainer's photos, as a phone gives them: a post with a 3000 x 2000
//! camera JPEG cover (GPS in its EXIF), a 1600 x 1000 PNG and a portrait
//! JPEG stored on its side (EXIF orientation 6) in its text, named by paths
//! relative to the post (tests/support/photos.mjs). Packed by this build's
//! binary and served, the photos reach a phone small, as AVIF or WebP,
//! upright and without metadata, and Lighthouse scores the post
//! (tests/photos/served.mjs). A second pack processes nothing again. Every
//! bad image (empty, cut short, corrupt, misnamed, a decompression bomb)
//! and an image the post names that is not there is refused by `pack`,
//! naming the file and the reason, with nothing written; `dev` refuses them
//! on its pages, and processes a new photo once.
//!
//! Needs Node.js, and Chromium for the served check.

use crate::pack::{get, serve};
use crate::support::{checkout_copy, free_port, needs, pack, said, wait, Dir};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn node() -> String {
    std::env::var("NODE").unwrap_or_else(|_| "node".into())
}

/// A copy of the checkout with the photo post written into it.
fn photo_tree(dir: &Path) -> PathBuf {
    let tree = checkout_copy(dir);
    let status = Command::new(node())
        .arg(Path::new(ROOT).join("tests/support/photos.mjs"))
        .arg(&tree)
        .current_dir(ROOT)
        .stdout(Stdio::null())
        .status()
        .expect("running node");
    assert!(status.success(), "writing the photo post");
    tree
}

/// The lines of a pack's or a build's standard error that report a photo
/// processed now.
fn processed(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("processed "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_photo_post_reaches_a_phone_small_upright_and_without_metadata() {
    needs("node", "nodejs");
    let chromium = std::env::var("CHROMIUM_PATH").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "Chromium is needed at {chromium}: apt-get install chromium"
    );
    let dir = Dir::new("photos");
    let tree = photo_tree(&dir.0);

    // The first pack processes each photo once and says so, with its time.
    let site = dir.0.join("site");
    let out = pack(&tree, &site);
    assert!(out.status.success(), "{}", said(&out));
    let first = processed(&out);
    for (file, size) in [
        ("market-day.jpg", "3000 x 2000"),
        ("stalls.png", "1600 x 1000"),
        ("portrait.jpg", "1500 x 2000"),
    ] {
        let line = format!("processed content/images/blog/{file} ({size}): ");
        assert!(
            first
                .iter()
                .any(|l| l.starts_with(&line) && l.ends_with(" s")),
            "{line}... in N s, in:\n{}",
            said(&out)
        );
    }
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains(", its images "), "{summary}");

    let server = serve(&site, &dir.0.join("data"));
    let check = Command::new(node())
        .arg("tests/photos/served.mjs")
        .arg(format!("http://127.0.0.1:{}", server.port))
        .current_dir(ROOT)
        .status()
        .expect("running node");
    assert!(
        check.success(),
        "what a phone gets of the photo post (above)"
    );
    let before = get(server.port, "/blog/market-day", "identity");
    drop(server);

    // A one-word change to the post: nothing is processed again, and the
    // photos are the same files.
    let post = tree.join("content/blog/market-day.md");
    let text = std::fs::read_to_string(&post).unwrap();
    std::fs::write(
        &post,
        text.replace("Forty stalls took", "Forty-one stalls took"),
    )
    .unwrap();
    let again = dir.0.join("again");
    let out = pack(&tree, &again);
    assert!(out.status.success(), "{}", said(&out));
    assert_eq!(processed(&out), Vec::<String>::new(), "{}", said(&out));
    let server = serve(&again, &dir.0.join("data-again"));
    let after = get(server.port, "/blog/market-day", "identity");
    let pictures = |page: &[u8]| {
        let html = String::from_utf8_lossy(page).into_owned();
        html.split("<picture>")
            .skip(1)
            .map(|p| p.split("</picture>").next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(String::from_utf8_lossy(&after.2).contains("Forty-one stalls"));
    assert_eq!(pictures(&before.2).len(), 3);
    assert_eq!(pictures(&before.2), pictures(&after.2));
}

/// The bad images a maintainer may add, each with what the refusal says.
fn bad_images(tree: &Path) -> Vec<(&'static str, &'static str)> {
    // A real JPEG and PNG to spoil, made by sharp.
    let status = Command::new(node())
        .args(["-e", r#"
            const sharp = require("sharp");
            const fs = require("fs");
            const noise = { width: 1200, height: 800, channels: 3, noise: { type: "gaussian", mean: 128, sigma: 50 } };
            (async () => {
              fs.writeFileSync(process.argv[1] + "/good.jpg", await sharp({ create: noise }).jpeg({ quality: 90 }).toBuffer());
              fs.writeFileSync(process.argv[1] + "/good.png", await sharp({ create: { ...noise, width: 64, height: 64 } }).png().toBuffer());
            })();
        "#])
        .arg(tree)
        .current_dir(ROOT)
        .status()
        .unwrap();
    assert!(status.success());
    let jpeg = std::fs::read(tree.join("good.jpg")).unwrap();
    let png = std::fs::read(tree.join("good.png")).unwrap();
    let images = tree.join("content/images/blog");
    let put = |name: &str, bytes: &[u8]| std::fs::write(images.join(name), bytes).unwrap();
    put("empty.jpg", b"");
    put("cut.jpg", &jpeg[..jpeg.len() / 2]);
    let mut corrupt = jpeg.clone();
    for i in 0..2000 {
        let at = jpeg.len() / 3 + i * 37;
        corrupt[at] = (i * 7919 % 251) as u8;
    }
    put("corrupt.jpg", &corrupt);
    put("misnamed.jpg", &png);
    put("text.png", b"a note, not a picture\n");
    // A PNG whose header claims 50,000 x 50,000 pixels (its CRC made right,
    // so only its size is wrong).
    let mut bomb = png.clone();
    bomb[16..20].copy_from_slice(&50_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&50_000u32.to_be_bytes());
    let mut crc = flate2::Crc::new();
    crc.update(&bomb[12..29]);
    bomb[29..33].copy_from_slice(&crc.sum().to_be_bytes());
    put("bomb.png", &bomb);
    // What an iPhone saves, which no browser but Safari shows.
    put("phone.heic", &jpeg);
    vec![
        ("empty.jpg", "the file is empty (0 bytes)"),
        ("cut.jpg", "is damaged or cut short (a JPEG, 1200 x 800)"),
        ("corrupt.jpg", "is damaged or cut short (a JPEG, 1200 x 800)"),
        ("misnamed.jpg", "named .jpg but is a PNG file: rename it to misnamed.png"),
        ("text.png", "named .png but is not an image"),
        ("bomb.png", "claims 50000 x 50000 pixels (2500 megapixels), more than the 268 megapixels an image may have"),
        ("phone.heic", "HEIC is not a format browsers show: save it as JPEG, PNG, WebP or AVIF"),
    ]
}

#[test]
fn pack_refuses_every_bad_image_naming_it_and_writes_nothing() {
    needs("node", "nodejs");
    let dir = Dir::new("photos-bad");
    let tree = checkout_copy(&dir.0);
    let cases = bad_images(&tree);
    let out_file = dir.0.join("site");
    let out = pack(&tree, &out_file);
    assert!(!out.status.success(), "{}", said(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Every bad file at once, each with its reason, as one line.
    for (file, reason) in &cases {
        let line = format!("error: content/images/blog/{file}: {reason}");
        assert!(
            stderr.lines().any(|l| l.starts_with(&line)),
            "{line}\nin:\n{stderr}"
        );
    }
    assert!(!out_file.exists(), "pack wrote {}", out_file.display());
    assert!(!stderr.contains("    at "), "no stack trace: {stderr}");

    // With the images fixed, a post naming one that is not there is refused
    // at its line, as a missing cover is.
    for (file, _) in &cases {
        std::fs::remove_file(tree.join("content/images/blog").join(file)).unwrap();
    }
    let post = tree.join("content/blog/nfc-integration.md");
    let text = std::fs::read_to_string(&post).unwrap();
    std::fs::write(
        &post,
        format!("{text}\n![Stalls](../images/blog/stals.png)\n"),
    )
    .unwrap();
    let line = text.lines().count() + 2;
    let out = pack(&tree, &out_file);
    assert!(!out.status.success(), "{}", said(&out));
    let expected = format!(
        "content/blog/nfc-integration.md:{line}:1: image \"../images/blog/stals.png\": there is no file content/images/blog/stals.png (the path is relative to content/blog/nfc-integration.md, or from the checkout's root when it starts with /); add the image there or fix the path"
    );
    assert!(
        said(&out).contains(&expected),
        "{expected}\nin:\n{}",
        said(&out)
    );
    assert!(!out_file.exists());
}

/// Every URL a page's `<picture>`s and `<img>`s name (src and srcset).
fn image_urls(html: &str) -> Vec<String> {
    let mut urls = Vec::new();
    for attr in [" src=\"", " srcset=\""] {
        for part in html.split(attr).skip(1) {
            let value = part.split('"').next().unwrap();
            for entry in value.split(", ") {
                let url = entry.split(' ').next().unwrap();
                if url.starts_with("/assets/images/") {
                    urls.push(url.to_owned());
                }
            }
        }
    }
    urls.sort();
    urls.dedup();
    urls
}

#[test]
fn odd_names_tall_images_gifs_and_a_shared_cache_are_served_whole() {
    needs("node", "nodejs");
    let dir = Dir::new("photos-odd");
    let tree = checkout_copy(&dir.0);
    // A phone's file name (a space, a letter URLs escape), a long
    // screenshot taller than AVIF and WebP can hold, an animated GIF.
    let odd = tree.join("content/images/odd");
    std::fs::create_dir_all(&odd).unwrap();
    let status = Command::new(node())
        .args(["-e", r##"
            const sharp = require("sharp");
            const dir = process.argv[1];
            const make = (w, h, c) => sharp({ create: { width: w, height: h, channels: 3, background: c } });
            (async () => {
              await make(800, 600, "#3a7").jpeg().toFile(dir + "/IMG 1234 café.jpg");
              await make(200, 20000, "#eee").png().toFile(dir + "/long screenshot.png");
              await make(120, 80, "#f80").gif().toFile(dir + "/wave.gif");
            })();
        "##])
        .arg(&odd)
        .current_dir(ROOT)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(
        tree.join("content/blog/odd.md"),
        "+++\nid = \"odd\"\ntitle = \"Odd\"\ndate = \"2026-11-20\"\nauthor = \"Ana\"\ntype = \"Updates\"\nreadTime = \"1 min read\"\nexcerpt = \"E\"\nimage = \"odd/IMG 1234 café.jpg\"\n+++\n\n![Long](<../images/odd/long screenshot.png>)\n\n![Wave](../images/odd/wave.gif)\n\n![Again](/content/images/odd/IMG%201234%20café.jpg)\n",
    )
    .unwrap();
    // A file in the cache folder that is no entry of it (a Finder's).
    std::fs::create_dir_all(tree.join(".cache/images")).unwrap();
    std::fs::write(tree.join(".cache/images/.DS_Store"), b"x").unwrap();

    // Two packs at once, sharing the cache: both finish.
    let packs: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            Command::new(BIN)
                .arg("pack")
                .arg(dir.0.join(name))
                .current_dir(&tree)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for pack in packs {
        let out = pack.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", said(&out));
    }

    let check = |bin: &Path, data: &str| {
        let server = serve(bin, &dir.0.join(data));
        let (status, _, page) = get(server.port, "/blog/odd", "identity");
        let page = String::from_utf8_lossy(&page).into_owned();
        assert_eq!(status, 200);
        // Each image drawn as a picture: the cover and both in the text.
        assert_eq!(page.matches("<picture>").count(), 4, "{page}");
        let urls = image_urls(&page);
        assert!(urls.iter().any(|u| u.contains("wave-")), "{urls:?}");
        for url in &urls {
            assert!(!url.contains([' ', '%']) && url.is_ascii(), "{url}");
            let (status, headers, body) = get(server.port, url, "identity");
            assert_eq!(status, 200, "{url}");
            let length = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .map(|(_, v)| v.clone());
            assert!(
                !body.is_empty() && length == Some(body.len().to_string()),
                "{url}: {} bytes",
                body.len()
            );
        }
        urls
    };
    let first = check(&dir.0.join("a"), "data-a");
    // The long screenshot is made narrower, not refused.
    assert!(
        first.iter().any(|u| u.contains("/odd/long-screenshot-")),
        "{first:?}"
    );

    // A cache entry cut short (a disk that filled, a copy that failed) is
    // made again, not served.
    let mut cut = 0;
    for entry in std::fs::read_dir(tree.join(".cache/images")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for file in std::fs::read_dir(&path).unwrap() {
                let file = file.unwrap().path();
                if file.extension().is_some_and(|e| e == "avif") {
                    std::fs::write(&file, b"").unwrap();
                    cut += 1;
                }
            }
        }
    }
    assert!(cut > 0);
    let out = pack(&tree, &dir.0.join("c"));
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        processed(&out)
            .iter()
            .any(|l| l.starts_with("processed content/images/odd/IMG 1234 café.jpg")),
        "{}",
        said(&out)
    );
    check(&dir.0.join("c"), "data-c");
}

/// `dev` on `tree`, its standard error kept in `log`.
struct Dev {
    child: std::process::Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dev {
    fn start(tree: &Path, data: &Path) -> Dev {
        std::fs::create_dir_all(data).unwrap();
        let port = free_port();
        let log = data.join("dev.log");
        // Its log (stdout) and the builder's lines (stderr), in one file.
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(BIN)
            .args(["dev", "--root"])
            .arg(tree)
            .env("ADDR", format!("127.0.0.1:{port}"))
            .env(
                "DATABASE_URL",
                format!("sqlite://{}/site.db", data.display()),
            )
            .env("SSR_WORKERS", "1")
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap();
        let dev = Dev { child, port, log };
        assert!(
            wait(120, || get(dev.port, "/readyz", "identity").0 == 200),
            "dev did not get ready: {}",
            dev.said()
        );
        dev
    }

    fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn page(&self, path: &str) -> (u16, String) {
        let (status, _, body) = get(self.port, path, "identity");
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}

#[test]
fn dev_shows_a_bad_image_on_its_pages_and_processes_a_new_photo_once() {
    needs("node", "nodejs");
    let dir = Dir::new("photos-dev");
    let tree = checkout_copy(&dir.0);
    let dev = Dev::start(&tree, &dir.0.join("data"));
    assert_eq!(dev.page("/").0, 200);

    // A misnamed image: every page says which file and why, until it goes.
    let images = tree.join("content/images/blog");
    let svg = std::fs::read(tree.join("content/images/favicon.svg")).unwrap();
    std::fs::write(images.join("wrong.jpg"), &svg).unwrap();
    let (file, reason) = (
        "content/images/blog/wrong.jpg",
        "named .jpg but is an SVG file: rename it to wrong.svg",
    );
    assert!(
        wait(30, || {
            let (status, body) = dev.page("/blog");
            status == 500 && body.contains(file) && body.contains(reason)
        }),
        "{file}: {reason} on the page: {:?}\n{}",
        dev.page("/blog"),
        dev.said()
    );
    std::fs::remove_file(images.join("wrong.jpg")).unwrap();
    assert!(wait(30, || dev.page("/blog").0 == 200), "{}", dev.said());

    // A new photo: processed once, then reused by every rebuild.
    let status = Command::new(node())
        .args(["-e", r#"require("sharp")({ create: { width: 900, height: 600, channels: 3, noise: { type: "gaussian", mean: 128, sigma: 40 } } }).jpeg().toFile(process.argv[1])"#])
        .arg(images.join("new-photo.jpg"))
        .current_dir(ROOT)
        .status()
        .unwrap();
    assert!(status.success());
    let once = "processed content/images/blog/new-photo.jpg (900 x 600): ";
    assert!(wait(60, || dev.said().contains(once)), "{}", dev.said());
    // Two rebuilds of the front end after it, each waited for.
    let home = tree.join("client/features/home/Home.tsx");
    for round in 0..2 {
        let reloads = dev
            .said()
            .matches("dev: reloaded (client/features/home/Home.tsx)")
            .count();
        let text = std::fs::read_to_string(&home).unwrap();
        std::fs::write(&home, format!("{text}\n// edit {round}\n")).unwrap();
        assert!(
            wait(30, || dev
                .said()
                .matches("dev: reloaded (client/features/home/Home.tsx)")
                .count()
                > reloads),
            "{}",
            dev.said()
        );
    }
    assert_eq!(dev.page("/").0, 200, "{}", dev.said());
    assert_eq!(dev.said().matches(once).count(), 1, "{}", dev.said());

    // The cache folder removed under it (a clean-up, another checkout's
    // tool): the next rebuild makes the photo again and serves on.
    std::fs::remove_dir_all(tree.join(".cache")).unwrap();
    let text = std::fs::read_to_string(&home).unwrap();
    std::fs::write(&home, format!("{text}\n// edit after the cache went\n")).unwrap();
    assert!(
        wait(60, || dev.said().matches(once).count() == 2),
        "{}",
        dev.said()
    );
    assert!(
        wait(30, || dev.page("/blog").0 == 200),
        "{:?}\n{}",
        dev.page("/blog"),
        dev.said()
    );
}

//! The guides a newcomer reads (README.md, ARCHITECTURE.md, docs/*.md) hold
//! four promises: every file or folder of the repository they name exists,
//! no sentence runs past 60 words (the house style aims at 40), the
//! operator's command examples run as written (`operate_examples`), and
//! their `cargo run` commands run the site.

mod operate_examples;
mod promised_lines;
use crate::support;

use std::path::{Path, PathBuf};

/// Paths the guides name as examples of files a reader would make: they
/// do not exist, by design.
const EXAMPLES: &[&str] = &[
    // docs/content.md: the page a reader adds, and a post shown in full.
    "client/features/events/Events.tsx",
    "content/blog/city-market-pilot.md",
    // An error message quoted from `serve`, naming a post that is not there.
    "content/blog/x.md",
    // docs/content.md's photo post (tests/support/photos.mjs writes it).
    "content/images/blog/market-day.jpg",
    "../images/blog/stalls.png",
];

const LONGEST_SENTENCE: usize = 60;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, ARCHITECTURE.md and every guide under docs/.
fn guides() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// The repository's top-level folders and files a path may start with (not
/// what a build or an install makes).
fn top_level() -> Vec<String> {
    std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !matches!(n.as_str(), "target" | "node_modules" | ".git" | "data"))
        .collect()
}

/// The repository paths `text` names: words that start with a top-level
/// folder of the repository (`server/http/mod.rs`, `bench/run.mjs`), and
/// relative link targets, resolved from `dir`. A word with a placeholder
/// or a wildcard (`<page>`, `*.md`, `$DIR`) names no one file.
fn named_paths(text: &str, dir: &Path, top: &[String]) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for word in text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '(' | ')' | '[' | ']' | '"' | '\'' | ',' | ';' | '='
            )
    }) {
        let word = word.trim_end_matches(['.', ':', '!', '?']);
        let word = word.split('#').next().unwrap_or("");
        // `content/blog/x.md:4:1`: a file, then a position.
        let word = word.split(':').next().unwrap_or("");
        let Some(first) = word.split('/').next() else {
            continue;
        };
        if !word.contains('/') || !top.iter().any(|t| t == first) {
            continue;
        }
        if word.contains(['<', '>', '*', '{', '}', '$', '|']) || word.contains("...") {
            continue;
        }
        out.push((word.to_owned(), root().join(word)));
    }
    // Markdown links: [text](target), relative to the guide.
    for part in text.split("](").skip(1) {
        let target = part.split(')').next().unwrap_or("");
        let target = target.split('#').next().unwrap_or("");
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        out.push((target.to_owned(), dir.join(target)));
    }
    out
}

#[test]
fn every_path_a_guide_names_exists() {
    let top = top_level();
    let mut missing = Vec::new();
    let mut named = 0;
    for guide in guides() {
        let text = std::fs::read_to_string(&guide).unwrap();
        for (word, path) in named_paths(&text, guide.parent().unwrap(), &top) {
            if EXAMPLES.contains(&word.as_str()) {
                continue;
            }
            named += 1;
            if !path.exists() {
                missing.push(format!(
                    "{}: {word}",
                    guide.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        named > 200,
        "only {named} paths found: is the reader broken?"
    );
    assert!(
        missing.is_empty(),
        "the guides name paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_reader_finds_the_paths_a_guide_names() {
    let top = vec!["server".to_owned(), "docs".to_owned()];
    let text = "See `server/http/mod.rs`, (server/db/sample-team.json), `content/x` \
                and [the guide](deploy.md#steps), not `server/<page>/x` or https://a.example/server/x.";
    let found: Vec<String> = named_paths(text, Path::new("/r/docs"), &top)
        .into_iter()
        .map(|(w, _)| w)
        .collect();
    assert_eq!(
        found,
        [
            "server/http/mod.rs",
            "server/db/sample-team.json",
            "deploy.md"
        ]
    );
}

/// The prose of a guide, as paragraphs: code blocks, tables, headings and
/// HTML comments left out, each list item a paragraph of its own. Each
/// paragraph with the line it starts on.
fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut in_code = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            out.extend(current.take());
            continue;
        }
        let item = trimmed.starts_with("- ")
            || trimmed.starts_with("* ")
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if in_code
            || trimmed.is_empty()
            || trimmed.starts_with('|')
            || trimmed.starts_with('#')
            || trimmed.starts_with("<!--")
            || item
        {
            out.extend(current.take());
            if in_code || !item {
                continue;
            }
        }
        match &mut current {
            Some((_, p)) => {
                p.push(' ');
                p.push_str(trimmed);
            }
            None => current = Some((i + 1, trimmed.to_owned())),
        }
    }
    out.extend(current);
    out
}

/// The sentences of a paragraph: each ends at `.`, `!` or `?` before a
/// space (or the end), a closing bracket or quote allowed between.
fn sentences(paragraph: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = paragraph.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        current.push(c);
        if matches!(c, '.' | '!' | '?') {
            let mut j = i + 1;
            while j < chars.len() && matches!(chars[j], ')' | '"' | '\'' | '*' | '_') {
                j += 1;
            }
            if j >= chars.len() || chars[j].is_whitespace() {
                // "e.g." and "i.e." do not end a sentence.
                let tail: String = current.chars().rev().take(5).collect();
                if !tail.starts_with(".g.e") && !tail.starts_with(".e.i") {
                    out.push(std::mem::take(&mut current));
                }
            }
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

#[test]
fn no_sentence_of_a_guide_runs_past_sixty_words() {
    let mut long = Vec::new();
    let mut counted = 0;
    for guide in guides() {
        let text = std::fs::read_to_string(&guide).unwrap();
        for (line, paragraph) in paragraphs(&text) {
            for sentence in sentences(&paragraph) {
                counted += 1;
                let words = sentence.split_whitespace().count();
                if words > LONGEST_SENTENCE {
                    let start: Vec<&str> = sentence.split_whitespace().take(12).collect();
                    long.push(format!(
                        "{}:{line}: {words} words: {} ...",
                        guide.strip_prefix(root()).unwrap().display(),
                        start.join(" ")
                    ));
                }
            }
        }
    }
    assert!(
        counted > 500,
        "only {counted} sentences: is the reader broken?"
    );
    assert!(
        long.is_empty(),
        "{} sentence(s) over {LONGEST_SENTENCE} words:\n{}",
        long.len(),
        long.join("\n")
    );
}

#[test]
fn the_reader_splits_prose_into_sentences() {
    let text = "# Title\n\nOne two. Three (four) five.\nSix, e.g. seven!\n\n\
                - an item. Another\n  sentence?\n\n```sh\nnot. prose.\n```\n| a. | b. |\n";
    let ps = paragraphs(text);
    assert_eq!(ps.len(), 2, "{ps:?}");
    assert_eq!(ps[0].0, 3);
    assert_eq!(
        sentences(&ps[0].1),
        ["One two.", " Three (four) five.", " Six, e.g. seven!"]
    );
    assert_eq!(sentences(&ps[1].1), ["- an item.", " Another sentence?"]);
}

/// The `cargo run` commands of the guides' code blocks.
fn cargo_runs() -> std::collections::BTreeSet<String> {
    guides()
        .iter()
        .flat_map(|g| {
            std::fs::read_to_string(g)
                .unwrap()
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("cargo run"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Each guide's `cargo run` picks the site's binary. Run with a compiler
/// that refuses (`RUSTC=false`), so nothing is built: cargo picks the
/// binary first, and only then asks the compiler its version, so a command
/// that picks one stops at that question instead (seen: with two binaries
/// in the workspace's default members and no `default-run`, `cargo run
/// --release` stopped at "could not determine which binary to run").
#[test]
fn every_cargo_run_of_the_guides_picks_the_site_binary() {
    let commands = cargo_runs();
    assert!(
        commands.contains("cargo run --release"),
        "the README's command to run the site: {commands:?}"
    );
    for command in commands {
        let out = support::built::cargo()
            .args(command.split_whitespace().skip(1))
            .env("RUSTC", "false")
            .current_dir(root())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("`false -vV`"),
            "`{command}` does not get as far as building the site:\n{said}"
        );
    }
}

//! The site's words belong to its content, which a maintainer edits and
//! publishes with `pack`; the engine's own words (every `--help`, and the
//! server's string literals: its log lines and errors) may name such a
//! text by its key or by what it means, never quote it. A quote goes stale
//! with the first edit: after "Contact us for pricing" became "Ask us for a
//! quote", the log and `--help` still promised the old words (issue 77).
//!
//! The site's words here: every string of `content/site/*.json`, and every
//! quoted string of the pages' texts (`content/site/*.ts`,
//! `client/features/<page>/content.ts`), that is a phrase: 12 characters
//! or more, three words or more, not an address. Compared without regard
//! to case or to how the lines are broken.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{run, site};
use crate::support::Dir;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A text as it is compared: lower case, each run of white space one space.
fn plain(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Whether `text` is one of the site's phrases (see the top of this file).
fn phrase(text: &str) -> bool {
    let text = text.trim();
    text.chars().count() >= 12
        && text.split_whitespace().count() >= 3
        && !text.contains("://")
        && !text.contains("${")
}

fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let path = e.unwrap().path();
        if path.is_dir() {
            files(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

fn json_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| json_strings(v, out)),
        serde_json::Value::Object(o) => o
            .iter()
            .filter(|(k, _)| *k != "$comment")
            .for_each(|(_, v)| json_strings(v, out)),
        _ => {}
    }
}

/// The quoted strings ("...", '...', `...`) of a TypeScript file of data,
/// outside its comments.
fn ts_strings(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            q @ ('"' | '\'' | '`') => {
                let mut s = String::new();
                i += 1;
                while i < c.len() && c[i] != q {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    if let Some(&ch) = c.get(i) {
                        s.push(ch);
                    }
                    i += 1;
                }
                out.push(s);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The site's phrases, each with the file it is in (relative to the root).
fn site_words() -> BTreeMap<String, String> {
    let root = Path::new(ROOT);
    let mut sources = Vec::new();
    files(
        &root.join("content/site"),
        &|p: &Path| p.extension().is_some_and(|e| e == "json" || e == "ts"),
        &mut sources,
    );
    files(
        &root.join("client/features"),
        &|p: &Path| p.file_name().is_some_and(|n| n == "content.ts"),
        &mut sources,
    );
    let mut words = BTreeMap::new();
    sources.sort();
    for file in sources {
        let text = std::fs::read_to_string(&file).unwrap();
        let strings = if file.extension().is_some_and(|e| e == "json") {
            let mut out = Vec::new();
            json_strings(&serde_json::from_str(&text).unwrap(), &mut out);
            out
        } else {
            ts_strings(&text)
        };
        let name = file.strip_prefix(root).unwrap().display().to_string();
        for s in strings.into_iter().filter(|s| phrase(s)) {
            words.entry(plain(&s)).or_insert_with(|| name.clone());
        }
    }
    words
}

/// What of `words` `text` quotes, each as `"the phrase" (its file)`.
fn quoted(text: &str, words: &BTreeMap<String, String>) -> Vec<String> {
    let text = plain(text);
    words
        .iter()
        .filter(|(w, _)| text.contains(w.as_str()))
        .map(|(w, file)| format!("{w:?} ({file})"))
        .collect()
}

/// The string literals of Rust `code` (escapes read), outside comments and
/// outside the items marked `#[cfg(test)]`: a test may pin the words it
/// checks, the engine may not print them.
fn rust_strings(code: &str) -> Vec<String> {
    enum Tok {
        Str(String),
        Word(String),
        Punct(char),
    }
    let c: Vec<char> = code.chars().collect();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut toks = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            // A string, its escapes read.
            let mut s = String::new();
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] != '\\' {
                    s.push(c[i]);
                    i += 1;
                    continue;
                }
                i += 1;
                match c.get(i) {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some('r') => s.push('\r'),
                    Some('0') => s.push('\0'),
                    Some('x') => {
                        let hex: String = c[i + 1..i + 3].iter().collect();
                        s.push(char::from(u8::from_str_radix(&hex, 16).unwrap()));
                        i += 2;
                    }
                    Some('u') => {
                        let end = i + c[i..].iter().position(|&ch| ch == '}').unwrap();
                        let hex: String = c[i + 2..end].iter().collect();
                        s.extend(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()));
                        i = end;
                    }
                    // A line continued: the next line's indent is not text.
                    Some('\n') => {
                        while c.get(i + 1).is_some_and(|ch| ch.is_whitespace()) {
                            i += 1;
                        }
                    }
                    Some(&other) => s.push(other),
                    None => {}
                }
                i += 1;
            }
            toks.push(Tok::Str(s));
            i += 1;
        } else if ch == 'r'
            && (i == 0
                || !ident(c[i - 1])
                || matches!(c[i - 1], 'b' | 'c') && (i == 1 || !ident(c[i - 2])))
            && c[i + 1..]
                .iter()
                .find(|&&ch| ch != '#')
                .is_some_and(|&ch| ch == '"')
        {
            // A raw string: r"...", r#"..."#.
            let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let start = i + 2 + hashes;
            let rest: String = c[start..].iter().collect();
            let len = rest.find(&close).unwrap();
            toks.push(Tok::Str(rest[..len].to_owned()));
            i = start + rest[..len].chars().count() + close.chars().count();
        } else if ch == '\'' {
            // A character ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ident(ch) {
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            toks.push(Tok::Word(c[start..i].iter().collect()));
        } else {
            if !ch.is_whitespace() {
                toks.push(Tok::Punct(ch));
            }
            i += 1;
        }
    }
    // The item after `#[cfg(test)]`: up to its `;`, or its `{ ... }`.
    let is = |t: Option<&Tok>, p: &str| match t {
        Some(Tok::Punct(ch)) => p.len() == 1 && p.starts_with(*ch),
        Some(Tok::Word(w)) => w == p,
        _ => false,
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let test_attr = ["#", "[", "cfg", "(", "test", ")", "]"]
            .iter()
            .enumerate()
            .all(|(n, p)| is(toks.get(k + n), p));
        if test_attr {
            k += 7;
            let mut depth = 0;
            while k < toks.len() {
                match &toks[k] {
                    Tok::Punct('{') => depth += 1,
                    Tok::Punct('}') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Tok::Punct(';') if depth == 0 => break,
                    _ => {}
                }
                k += 1;
            }
        } else if let Tok::Str(s) = &toks[k] {
            out.push(s.clone());
        }
        k += 1;
    }
    out
}

#[test]
fn the_readers_find_the_site_words_and_the_servers_strings() {
    let words = site_words();
    // Quoted from the pricing page, the messages and the form's tags.
    for (w, file) in [
        (
            "contact us for pricing",
            "client/features/pricing/content.ts",
        ),
        (
            "failed to load pricing information",
            "content/site/messages.json",
        ),
        (
            "civic engagement initiative",
            "content/site/intro-tags.json",
        ),
    ] {
        assert_eq!(words.get(w).map(String::as_str), Some(file), "{w}");
    }
    assert!(words.len() > 100, "only {} phrases", words.len());
    assert!(!words.keys().any(|w| w.contains("://")));

    let code = r####"
        // "in a comment"
        /* "in a block /* nested "too" */ comment" */
        fn f<'a>(x: &'a str) -> char {
            let _ = "one \"two\"\n \
                     three";
            let _ = r#"raw "quoted""#;
            let _ = b"bytes";
            let _ = '"';
            let _ = '\'';
            '\u{1F600}'
        }
        #[cfg(test)]
        const HIDDEN: &str = "a test's constant";
        #[cfg(test)]
        mod tests {
            fn g() { let _ = "in a test {"; }
        }
        const AFTER: &str = "after the tests";
    "####;
    assert_eq!(
        rust_strings(code),
        [
            "one \"two\"\n three",
            "raw \"quoted\"",
            "bytes",
            "after the tests"
        ]
    );
}

/// Every command of the binary as its `--help` lists them, the top one
/// first (`[]`, `["pack"]`, `["intro", "list"]`, ...), each with its help.
fn every_help(dir: &Path) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(command) = todo.pop() {
        let (code, help, err) = run(site(dir).args(&command).arg("--help"));
        assert_eq!(code, 0, "{command:?} --help: {err}");
        let listed = help
            .split("\nCommands:\n")
            .nth(1)
            .map(|rest| rest.split("\n\n").next().unwrap_or_default())
            .unwrap_or_default();
        for line in listed.lines() {
            // `  name  what it does`; a wrapped description is indented more.
            let Some(name) = line.strip_prefix("  ") else {
                continue;
            };
            if name.starts_with(' ') {
                continue;
            }
            let name = name.split_whitespace().next().unwrap_or_default();
            if name != "help" {
                let mut sub = command.clone();
                sub.push(name.to_owned());
                todo.push(sub);
            }
        }
        out.push((command, help));
    }
    out
}

#[test]
fn no_help_and_no_server_message_quotes_a_text_the_content_holds() {
    let words = site_words();
    let dir = Dir::new("site-words");
    let mut found = Vec::new();

    let helps = every_help(&dir.0);
    for command in [&["pack"][..], &["intro", "list"], &["dev"], &["serve"]] {
        assert!(
            helps.iter().any(|(c, _)| c == command),
            "{command:?} is not among the commands read: {:?}",
            helps.iter().map(|(c, _)| c).collect::<Vec<_>>()
        );
    }
    for (command, help) in &helps {
        for q in quoted(help, &words) {
            let words: Vec<&str> = std::iter::once("citizen-site")
                .chain(command.iter().map(String::as_str))
                .chain(["--help"])
                .collect();
            found.push(format!("{}: {q}", words.join(" ")));
        }
    }

    let mut sources = Vec::new();
    files(
        &Path::new(ROOT).join("server"),
        &|p: &Path| p.extension().is_some_and(|e| e == "rs"),
        &mut sources,
    );
    sources.sort();
    assert!(sources.len() > 100, "only {} server files", sources.len());
    for file in sources {
        let name = file.strip_prefix(ROOT).unwrap().display().to_string();
        for s in rust_strings(&std::fs::read_to_string(&file).unwrap()) {
            for q in quoted(&s, &words) {
                found.push(format!("{name}: {q}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "texts a maintainer edits in content, quoted by the engine (name them by their key or by what they mean):\n{}",
        found.join("\n")
    );
}

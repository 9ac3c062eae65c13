//! The layout ARCHITECTURE.md draws, checked against the code's imports:
//! every module imports only from its own layer or the layers below, no
//! domain imports another, no two files of the server import each other,
//! directly or round a longer loop, and no shared part names a domain's
//! table. The layers are the same three times: here, in ARCHITECTURE.md's
//! table and in server/lib.rs's groups. And of the tests: a binary a
//! test runs beside this package's own is built by the test, through
//! `tests/support/built.rs`, and listed for `.ci/run`.
//!
//! Imports are read as text: every `crate::` and `super::` path outside a
//! comment and outside the `#[cfg(test)]` module at the end of a file (a
//! test may reach anywhere), each brace group of a `use` opened one level.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

// The list of binaries the tests build, read as the tests read it (only
// `listed` is used here).
#[allow(dead_code)]
use crate::support::built;

/// The layers, top first, each with its top-level modules (ARCHITECTURE.md).
const LAYERS: &[(&str, &[&str])] = &[
    ("assembly", &["app", "cli"]),
    ("http", &["http", "dev"]),
    ("pages", &["pages"]),
    ("serving", &["state", "site", "render", "seo", "contract"]),
    ("domains", &["content", "intake", "payments", "team", "tls"]),
    (
        "shared",
        &[
            "assets",
            "client_ip",
            "config",
            "css",
            "db",
            "edge",
            "html",
            "live",
            "messages",
            "metrics",
            "payload",
            "rate_limit",
            "security",
            "telemetry",
        ],
    ),
];

const DOMAINS: &[&str] = &["content", "intake", "payments", "team", "tls"];

fn server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("server")
}

/// Every Rust file of the library, as its module path (`pages::make`;
/// `content` for content/mod.rs).
fn modules() -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = modules_in(&server());
    // The binary and the crate root are not modules of the library.
    out.remove(&vec!["main".to_owned()]);
    out.remove(&vec!["lib".to_owned()]);
    out
}

/// Every Rust file under `root`, as its module path.
fn modules_in(root: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                let mut p = prefix.to_vec();
                p.push(name);
                walk(&path, &p, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut p = prefix.to_vec();
                if name != "mod" {
                    p.push(name);
                }
                out.insert(p, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, &[], &mut out);
    out
}

/// The code of a file without comments and without its test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text,
    };
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file names (`crate::a::b`, `super::c`, `self::d`), with
/// each item of a brace group as a path of its own.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut rest = code;
        while let Some(at) = rest.find(start) {
            let before = rest[..at].chars().last();
            rest = &rest[at..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches(':').to_owned();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                rest = &rest[end..];
                continue;
            }
            if rest[end..].starts_with('{') {
                let group = &rest[end + 1..];
                let mut depth = 0;
                let mut item = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            out.push(format!("{path}::{}", item.trim()));
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    if depth == 0 && c != '{' {
                        item.push(c);
                    }
                }
                if !item.trim().is_empty() {
                    out.push(format!("{path}::{}", item.trim()));
                }
            }
            out.push(path);
            rest = &rest[end..];
        }
    }
    out
}

/// The file a path names: its longest prefix that is a module.
fn target(
    path: &str,
    from: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
    is_mod_rs: bool,
) -> Option<Vec<String>> {
    let mut segments: Vec<String> = Vec::new();
    let mut parts = path.split("::").map(|s| s.trim().to_owned()).peekable();
    match parts.next()?.as_str() {
        "crate" => {}
        "super" => {
            // `super` of a mod.rs is its parent folder's module's parent.
            let mut base = from.to_vec();
            if !is_mod_rs || !base.is_empty() {
                base.pop();
            }
            while parts.peek().map(String::as_str) == Some("super") {
                parts.next();
                base.pop();
            }
            segments = base;
        }
        // `self` of a file is its own module (a mod.rs's is its folder's).
        "self" => segments = from.to_vec(),
        _ => return None,
    }
    segments.extend(parts.filter(|p| p != "self" && !p.is_empty()));
    while !segments.is_empty() {
        if modules.contains_key(&segments) {
            return Some(segments);
        }
        segments.pop();
    }
    None
}

/// Every file's imports of other files.
fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    graph_of(&modules())
}

fn graph_of(
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph = BTreeMap::new();
    for (module, file) in modules {
        let is_mod_rs = file.file_name().is_some_and(|n| n == "mod.rs");
        let mut deps = BTreeSet::new();
        for path in paths(&code(file)) {
            if let Some(to) = target(&path, module, modules, is_mod_rs) {
                if &to != module {
                    deps.insert(to);
                }
            }
        }
        graph.insert(module.clone(), deps);
    }
    graph
}

fn layer_of(module: &[String]) -> usize {
    let top = module.first().map(String::as_str).unwrap_or("");
    LAYERS
        .iter()
        .position(|(_, mods)| mods.contains(&top))
        .unwrap_or_else(|| panic!("server/{top} is in no layer of ARCHITECTURE.md (and this test)"))
}

#[test]
fn the_reader_sees_real_imports() {
    // The parser itself, on the shapes the code uses.
    let found = paths("use crate::payments::{checkouts, PaymentsError};\nlet x = crate::html::escape(y);\nuse super::super::plan::{self, Plan};");
    assert!(
        found.contains(&"crate::payments::checkouts".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"crate::html::escape".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"super::super::plan::self".to_owned()),
        "{found:?}"
    );
    let g = graph();
    let page_handler = &g[&vec!["http".to_owned(), "page_handler".to_owned()]];
    assert!(
        page_handler.contains(&vec!["pages".to_owned()]),
        "http/page_handler.rs resolves through pages/: {page_handler:?}"
    );
    assert!(g.len() > 50, "every file of server/ is read");
}

#[test]
fn every_module_imports_only_its_own_layer_or_those_below() {
    let mut wrong = Vec::new();
    for (from, deps) in graph() {
        for to in deps {
            if layer_of(&to) < layer_of(&from) {
                wrong.push(format!(
                    "server/{} ({}) imports server/{} ({})",
                    from.join("/"),
                    LAYERS[layer_of(&from)].0,
                    to.join("/"),
                    LAYERS[layer_of(&to)].0
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that run up a layer:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_domain_imports_another_or_the_http_layer() {
    let mut wrong = Vec::new();
    for (from, deps) in graph() {
        let Some(domain) = from.first().filter(|m| DOMAINS.contains(&m.as_str())) else {
            continue;
        };
        for to in deps {
            let top = to[0].as_str();
            if top == "http" || (DOMAINS.contains(&top) && top != domain) {
                wrong.push(format!(
                    "server/{} imports server/{}",
                    from.join("/"),
                    to.join("/")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Whether `module` is a folder's `mod.rs` and `child` a file (or folder)
/// right in that folder.
fn is_own_child(
    module: &[String],
    child: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> bool {
    child.len() == module.len() + 1
        && child.starts_with(module)
        && modules[module].file_name().is_some_and(|n| n == "mod.rs")
}

/// The node a file counts as when loops are looked for across folders: a
/// folder's files are one with its `mod.rs` (`config/testing.rs` is
/// `config`); a file with no `mod.rs` above it is its own.
fn folder_node(module: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Vec<String> {
    let parent = &module[..module.len().saturating_sub(1)];
    if !parent.is_empty()
        && modules
            .get(parent)
            .is_some_and(|f| f.file_name().is_some_and(|n| n == "mod.rs"))
    {
        parent.to_vec()
    } else {
        module.to_vec()
    }
}

/// The first loop of the import graph, read two ways: file by file (a
/// `mod.rs` and its own files may name each other: they are one module),
/// and folder by folder ([`folder_node`]), so a loop that runs through a
/// folder's `mod.rs` and out of one of its files is seen too.
fn import_loop(modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    let files = graph_of(modules);
    let mut by_file = BTreeMap::new();
    let mut by_folder: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (from, deps) in &files {
        let kept: BTreeSet<Vec<String>> = deps
            .iter()
            .filter(|to| !is_own_child(from, to, modules) && !is_own_child(to, from, modules))
            .cloned()
            .collect();
        by_file.insert(from.clone(), kept);
        let node = folder_node(from, modules);
        let entry = by_folder.entry(node.clone()).or_default();
        for to in deps {
            let to = folder_node(to, modules);
            if to != node {
                entry.insert(to);
            }
        }
    }
    for graph in [&by_file, &by_folder] {
        if let Some(found) = first_loop(graph) {
            return Some(
                found
                    .iter()
                    .map(|m| format!("server/{}", m.join("/")))
                    .collect(),
            );
        }
    }
    None
}

/// Depth-first search; a grey node met again closes a loop.
fn first_loop(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<Vec<String>>> {
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|n| n == next).unwrap();
                    return Some(stack[at..].to_vec());
                }
                0 => {
                    if let Some(found) = visit(next, graph, state, stack) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0 {
            if let Some(found) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(found);
            }
        }
    }
    None
}

#[test]
fn no_file_of_the_server_imports_itself_round_a_loop() {
    if let Some(found) = import_loop(&modules()) {
        panic!(
            "an import loop: {} -> back to the first",
            found.join(" -> ")
        );
    }
}

#[test]
fn the_loop_reader_follows_self_paths_and_lets_a_folder_name_its_own_files() {
    // A tree shaped as the loop that once went unseen: config/mod.rs names
    // its file tls.rs by `self::`, tls.rs reaches db, and db imports
    // config's Timeouts back. config and config/testing naming each other
    // is one module, and no loop.
    let dir = std::env::temp_dir().join(format!("citizen-arch-{}", std::process::id()));
    let files = [
        (
            "config/mod.rs",
            "pub use self::testing::Hooks;\nuse self::tls::settings;\n",
        ),
        ("config/testing.rs", "use super::Config;\n"),
        ("config/tls.rs", "use crate::db::now_ms;\n"),
        ("db/mod.rs", "use crate::config::Timeouts;\n"),
    ];
    let write = |files: &[(&str, &str)]| {
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        import_loop(&modules_in(&dir))
    };
    let found = write(&files);
    assert!(
        found.as_ref().is_some_and(
            |l| l.contains(&"server/db".to_owned()) && l.contains(&"server/config".to_owned())
        ),
        "{found:?}"
    );
    // db no longer importing config: no loop, config/testing included.
    let mut cut = files;
    cut[3] = ("db/mod.rs", "pub fn now_ms() {}\n");
    assert_eq!(write(&cut), None);
    // Two files of one folder naming each other are still a loop.
    let mut siblings = cut.to_vec();
    siblings.push(("edge/mod.rs", "pub mod a;\npub mod b;\n"));
    siblings.push(("edge/a.rs", "use super::b::B;\n"));
    siblings.push(("edge/b.rs", "use super::a::A;\n"));
    assert!(write(&siblings).is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The layers as `text` lists them: each line `start` picks out gives a
/// layer's name (the first word after `start`) and its modules (`pub mod
/// x;` lines under it for lib.rs, the backticked names of the row for the
/// table).
fn layers_in(
    text: &str,
    row: impl Fn(&str) -> Option<(String, Vec<String>)>,
) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some((name, modules)) = row(line) {
            out.push((name, modules));
        } else if let (Some(last), Some(module)) = (out.last_mut(), line.strip_prefix("pub mod ")) {
            last.1.push(module.trim_end_matches(';').to_owned());
        }
    }
    for (_, modules) in &mut out {
        modules.sort();
    }
    out
}

fn expected_layers() -> Vec<(String, Vec<String>)> {
    LAYERS
        .iter()
        .map(|(name, mods)| {
            let mut mods: Vec<String> = mods.iter().map(|m| m.to_string()).collect();
            mods.sort();
            (name.to_string(), mods)
        })
        .collect()
}

#[test]
fn lib_rs_and_architecture_md_group_the_modules_as_the_layers_are() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("server/lib.rs")).unwrap();
    let from_lib = layers_in(&lib, |line| {
        let name = line.strip_prefix("// Layer ")?.split(':').next()?;
        Some((name.to_owned(), Vec::new()))
    });
    assert_eq!(
        from_lib,
        expected_layers(),
        "server/lib.rs's `// Layer` groups"
    );

    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let from_map = layers_in(&map, |line| {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells
            .get(1)
            .filter(|n| LAYERS.iter().any(|(l, _)| l == *n))?;
        let modules = cells[2]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|m| !m.ends_with(".rs"))
            .map(|m| m.trim_end_matches('/').to_owned())
            .collect();
        Some((name.to_string(), modules))
    });
    assert_eq!(from_map, expected_layers(), "ARCHITECTURE.md's layer table");
}

/// The tables the migrations make (each owned by a domain).
fn tables() -> Vec<String> {
    let mut out = BTreeSet::new();
    for dir in ["migrations/sqlite", "migrations/postgres"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in std::fs::read_dir(dir).unwrap() {
            let sql = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for part in sql.split("CREATE TABLE IF NOT EXISTS ").skip(1) {
                out.insert(
                    part.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap()
                        .to_owned(),
                );
            }
        }
    }
    out.into_iter().collect()
}

/// Whether `code` names `word` as a whole identifier.
fn names(code: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word).any(|(at, _)| {
        !code[..at].ends_with(is_ident) && !code[at + word.len()..].starts_with(is_ident)
    })
}

#[test]
fn no_shared_part_names_a_domains_table() {
    let tables = tables();
    assert!(
        tables.len() >= 4 && tables.contains(&"intro_requests".to_owned()),
        "{tables:?}"
    );
    assert!(names("FROM intro_requests WHERE", "intro_requests"));
    assert!(!names("intro_requests_pending", "intro_requests"));
    let shared = LAYERS.iter().find(|(name, _)| *name == "shared").unwrap().1;
    let mut wrong = Vec::new();
    for (module, file) in modules() {
        if !shared.contains(&module[0].as_str()) {
            continue;
        }
        let code = code(&file);
        for table in tables.iter().filter(|t| names(&code, t)) {
            wrong.push(format!(
                "server/{} names the table {table}",
                module.join("/")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "a shared part that knows a domain's table:\n{}",
        wrong.join("\n")
    );
}

/// ARCHITECTURE.md's "Where things live".
fn layout_section() -> String {
    let map =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    let start = map
        .find("## Where things live")
        .expect("ARCHITECTURE.md has a section 'Where things live'");
    let end = map[start + 3..]
        .find("\n## ")
        .map_or(map.len(), |e| start + 3 + e);
    map[start..end].to_owned()
}

/// The entries of `entries` the layout does not name: a folder as
/// `` `name/` ``, a file as `` `name` ``. Files whose extension is in
/// `grouped` may be named as a group instead (`` `*.json` ``).
fn unnamed(layout: &str, entries: &[(String, bool)], grouped: &[&str]) -> Vec<String> {
    entries
        .iter()
        .filter(|(name, is_dir)| {
            let named = if *is_dir {
                layout.contains(&format!("`{name}/`"))
            } else {
                layout.contains(&format!("`{name}`"))
                    || grouped.iter().any(|ext| {
                        name.ends_with(&format!(".{ext}")) && layout.contains(&format!("`*.{ext}`"))
                    })
            };
            !named
        })
        .map(|(name, is_dir)| format!("{name}{}", if *is_dir { "/" } else { "" }))
        .collect()
}

/// The folder's entries, each with whether it is a folder.
fn entries(dir: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.path().is_dir(),
                )
            })
            .collect();
    out.sort();
    out
}

#[test]
fn the_map_names_every_module_of_the_server_and_every_script_test_and_unit() {
    let layout = layout_section();
    let mut missing = Vec::new();
    // Every module folder and top-level file of server/ (the files inside a
    // folder may be described by its folder's line).
    for name in unnamed(&layout, &entries("server"), &[]) {
        missing.push(format!("server/{name}"));
    }
    // Every script of bench/; its data files may be named as a group.
    for name in unnamed(&layout, &entries("bench"), &["json", "svg"]) {
        missing.push(format!("bench/{name}"));
    }
    for dir in ["tests", "deploy"] {
        for name in unnamed(&layout, &entries(dir), &[]) {
            missing.push(format!("{dir}/{name}"));
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's 'Where things live' does not name:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_file_added_without_a_line_in_the_map_is_reported() {
    let layout = layout_section();
    let mut server = entries("server");
    server.push(("jobs.rs".to_owned(), false));
    server.push(("queue".to_owned(), true));
    assert_eq!(unnamed(&layout, &server, &[]), ["jobs.rs", "queue/"]);
    let mut bench = entries("bench");
    bench.push(("soak.mjs".to_owned(), false));
    bench.push(("soak-results.json".to_owned(), false));
    assert_eq!(unnamed(&layout, &bench, &["json", "svg"]), ["soak.mjs"]);
}

/// What in a test's code finds a binary in the target directory or builds
/// one: only `tests/support/built.rs` may (`cargo test` builds this
/// package's binary for the tests, and nothing else they run).
fn reaches_into_the_target_dir(code: &str) -> Vec<&'static str> {
    [
        "current_exe(",
        "with_file_name(",
        "CARGO_TARGET_DIR",
        "var(\"CARGO\")",
        "var_os(\"CARGO\")",
        "Command::new(\"cargo\")",
    ]
    .into_iter()
    .filter(|p| code.contains(p))
    .collect()
}

#[test]
fn every_binary_a_test_runs_beside_its_own_is_built_by_the_test_and_listed() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let built = tests.join("support/built.rs");
    // This file names the patterns it looks for.
    let this = tests.join("architecture.rs");
    let mut wrong = Vec::new();
    let mut builds = String::new();
    for path in modules_in(&tests).into_values() {
        if path == built || path == this {
            continue;
        }
        let code = code(&path);
        for found in reaches_into_the_target_dir(&code) {
            wrong.push(format!(
                "{}: {found}: a binary of the target directory that cargo test does not build \
                 for this test is built and found through tests/support/built.rs",
                path.display()
            ));
        }
        if code.contains("built::build(") {
            builds.push_str(&code);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Each listed binary has its build; `.ci/run` deletes exactly these.
    let listed = built::listed();
    assert!(listed.contains(&"h3-load"), "{listed:?}");
    builds.push_str(&code(&built));
    for name in listed {
        assert!(
            builds.contains(&format!("\"{name}\",")),
            "{name} is listed in tests/support/built-by-tests.txt, but no test builds it"
        );
    }
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(
        ci.contains("tests/support/built-by-tests.txt"),
        ".ci/run deletes the listed binaries before `cargo test`"
    );
}

#[test]
fn a_test_that_finds_its_own_binaries_is_reported() {
    assert_eq!(
        reaches_into_the_target_dir(
            "let h3 = Path::new(BIN).with_file_name(\"h3-load\");\nCommand::new(\"cargo\").arg(\"build\");"
        ),
        ["with_file_name(", "Command::new(\"cargo\")"]
    );
    assert!(reaches_into_the_target_dir("std::fs::copy(support::built::h3_load(), to)").is_empty());
}

/// Every Rust file under `server/` (with its files, recursively) and its
/// line count.
fn server_files(dir: &Path, out: &mut Vec<(PathBuf, usize)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            server_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            out.push((path, lines));
        }
    }
}

/// A file that does one job stays short: none under `server/` over 600
/// lines, unit tests included, and none in `server/edge/` or
/// `server/config/` over 500.
#[test]
fn no_server_file_is_over_its_length() {
    let mut files = Vec::new();
    server_files(&server(), &mut files);
    let root = server();
    let over: Vec<String> = files
        .iter()
        .filter_map(|(path, lines)| {
            let relative = path.strip_prefix(&root).unwrap();
            let limit = match relative.components().next().map(|c| c.as_os_str()) {
                Some(top) if top == "edge" || top == "config" => 500,
                _ => 600,
            };
            (*lines > limit).then(|| {
                format!(
                    "server/{} has {lines} lines (at most {limit})",
                    relative.display()
                )
            })
        })
        .collect();
    assert!(
        files.len() > 100,
        "the server's files were read: {}",
        files.len()
    );
    assert!(
        over.is_empty(),
        "files over their length:\n{}",
        over.join("\n")
    );
}

//! The engine's inputs: what the Rust side of the binary is compiled from,
//! which `pack` cannot change. build.rs compiles this file too (`#[path]`)
//! and writes the list, each input with its SHA-256, into the binary
//! (`payload::ENGINE_INPUTS`); `pack` lists the checkout's the same way and
//! refuses when the two differ.
//!
//! The inputs: `build.rs`, `Cargo.toml`, `Cargo.lock`, every file under
//! `server/` (the code, and what the contract is generated from) and
//! `migrations/`, and the pages with data of `content/routes.json` (each
//! with the type of its data: the `DataPage` and `PageData` the server is
//! compiled with). The rest of `routes.json` is content, a page without
//! data included: its name is read at run time.

use std::path::Path;

use sha2::{Digest, Sha256};

// The payload's hex, in the library and in build.rs alike.
use super::format::hex;

/// The pages with data: their line among the inputs.
pub const PAGE_TABLE: &str = "content/routes.json (pages with data, and their types)";

/// Every input of the Rust side of the checkout at `root`, by name, with
/// the SHA-256 of its bytes in hex, sorted by name.
pub fn inputs(root: &Path) -> Result<Vec<(String, String)>, String> {
    let mut files: Vec<String> = ["build.rs", "Cargo.toml", "Cargo.lock"]
        .map(String::from)
        .into();
    for dir in ["server", "migrations"] {
        files.extend(files_under(root, dir)?);
    }
    let mut out = Vec::with_capacity(files.len() + 1);
    for name in files {
        let bytes = std::fs::read(root.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        out.push((name, hex(&Sha256::digest(&bytes))));
    }
    let routes = std::fs::read_to_string(root.join("content/routes.json"))
        .map_err(|e| format!("content/routes.json: {e}"))?;
    // Sorted: the routes' order is content (which path matches first).
    let mut lines: Vec<String> = page_table(&routes)?
        .iter()
        .filter_map(|(page, data)| Some(format!("{page} {}\n", data.as_deref()?)))
        .collect();
    lines.sort();
    let lines = lines.concat();
    out.push((
        PAGE_TABLE.to_owned(),
        hex(&Sha256::digest(lines.as_bytes())),
    ));
    out.sort();
    Ok(out)
}

/// The files under `dir` (a path from `root`, as are the files), at any
/// depth, skipping hidden files and editors' backups (`~`).
pub fn files_under(root: &Path, dir: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    walk(root, dir, &mut out)?;
    Ok(out)
}

fn walk(root: &Path, dir: &str, out: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(root.join(dir)).map_err(|e| format!("{dir}: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{dir}: {e}"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let path = format!("{dir}/{name}");
        if entry
            .file_type()
            .map_err(|e| format!("{path}: {e}"))?
            .is_dir()
        {
            walk(root, &path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The page table of `content/routes.json`: every page it names (and
/// `NotFound`) with the type of its loader's data where it has one, in the
/// table's order.
pub fn page_table(routes_json: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let table: serde_json::Value = serde_json::from_str(routes_json).map_err(|e| {
        format!("content/routes.json: {e} (the server reports the same error with its position)")
    })?;
    let ident = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_uppercase())
            && s.chars().all(|c| c.is_ascii_alphanumeric())
    };
    let mut pages: Vec<(String, Option<String>)> = Vec::new();
    for route in table["routes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let page = route["page"].as_str().ok_or_else(|| {
            format!("content/routes.json: every route needs a \"page\" string: {route}")
        })?;
        if !ident(page) {
            return Err(format!("content/routes.json: page {page:?} must be a name like \"NfcWallet\" (A-Z first, then letters and digits)"));
        }
        // The names the generated PageData takes for itself.
        if ["Plain", "Self"].contains(&page) {
            return Err(format!(
                "content/routes.json: page {page:?}: that name is taken by the server's code; name the page otherwise"
            ));
        }
        let data = match route.get("data") {
            None => None,
            Some(d) => Some(d.as_str().filter(|d| ident(d)).ok_or_else(|| {
                format!("content/routes.json: \"data\" of {page} must name a type of server/contract.rs")
            })?),
        };
        match pages.iter().find(|(p, _)| p == page) {
            Some((_, d)) if d.as_deref() != data => {
                return Err(format!(
                    "content/routes.json: the routes of page {page} name different \"data\" types"
                ))
            }
            Some(_) => {}
            None => pages.push((page.to_owned(), data.map(str::to_owned))),
        }
    }
    if !pages.iter().any(|(p, _)| p == "NotFound") {
        pages.push(("NotFound".to_owned(), None));
    }
    Ok(pages)
}

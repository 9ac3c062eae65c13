//! The site inside the binary: its payload. The binary is an engine (the
//! Rust server and V8) and a payload (the front end's build, its V8
//! snapshot and the content files) in an ELF section of its own ([`elf`]).
//! `cargo build` puts the payload build.rs made there; `citizen-site pack`
//! writes a binary with the same engine and a new payload, without rustc
//! (server/cli/pack/).
//!
//! A server reads its payload once, at start, from its own file
//! (`/proc/self/exe`, which names the running binary even after an upgrade
//! replaced the file at its path), mapped, not copied. It checks the length,
//! the SHA-256 and that the payload was made for this engine: a binary whose
//! payload is missing, cut short or altered refuses to start and says which.

pub mod elf;
pub mod format;

use std::collections::HashMap;
use std::sync::OnceLock;

mod section {
    include!(concat!(env!("OUT_DIR"), "/payload_section.rs"));
}

include!(concat!(env!("OUT_DIR"), "/engine_inputs.rs"));

/// The files of a payload, by name (server/cli/pack/make.rs names them).
pub struct Payload {
    files: HashMap<&'static str, &'static [u8]>,
    /// The SHA-256 of its files, as its header says (and as checked).
    sha256: [u8; 32],
}

impl Payload {
    /// The checked payload `bytes`, if it was made for this engine.
    pub fn read(bytes: &'static [u8]) -> Result<Payload, String> {
        let (head, files) = format::decode(bytes).map_err(|d| d.to_string())?;
        let engine = engine_hash();
        if head.engine != engine {
            return Err(format!(
                "the payload was packed for another engine ({}), not this binary's ({}): pack the site with the binary that is to serve it",
                &format::hex(&head.engine)[..12],
                &format::hex(&engine)[..12]
            ));
        }
        Ok(Payload {
            files: files.into_iter().collect(),
            sha256: head.body_sha256,
        })
    }

    /// Its SHA-256's first 12 hexadecimal digits: which content a binary
    /// serves (the build info on `/metrics`).
    pub fn short_hash(&self) -> String {
        format::hex(&self.sha256[..6])
    }

    /// A file's bytes.
    pub fn bytes(&self, name: &str) -> Option<&'static [u8]> {
        self.files.get(name).copied()
    }

    /// A text file; Err says which file is missing or not UTF-8.
    pub fn text(&self, name: &str) -> Result<&'static str, String> {
        let bytes = self
            .bytes(name)
            .ok_or_else(|| format!("{name} is not in the binary's payload"))?;
        std::str::from_utf8(bytes).map_err(|_| format!("{name} is not UTF-8"))
    }

    /// The names of the files under `dir/` (not below it) ending in `.ext`,
    /// sorted.
    pub fn names_in(&self, dir: &str, ext: &str) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self
            .files
            .keys()
            .copied()
            .filter(|n| {
                n.strip_prefix(dir)
                    .and_then(|rest| rest.strip_prefix('/'))
                    .is_some_and(|rest| !rest.contains('/') && rest.ends_with(&format!(".{ext}")))
            })
            .collect();
        names.sort_unstable();
        names
    }
}

/// The hash of the engine this binary is: of its inputs' hashes.
pub fn engine_hash() -> [u8; 32] {
    format::engine_hash(ENGINE_INPUTS.iter().copied())
}

/// The engine the payload of the binary `file` was made for: None when it
/// is not a binary with a payload (its header alone is read).
pub fn engine_of(file: &std::fs::File) -> Option<[u8; 32]> {
    use elf::ReadAt;
    let place = elf::find(file).ok()?;
    let len = usize::try_from(place.size).ok()?.min(format::HEADER_LEN);
    let head = file.read_at(place.offset, len).ok()??;
    format::header(&head).ok().map(|h| h.engine)
}

/// This binary's payload, read and checked at the first call; Err says
/// what is wrong with it. `serve` and `dev` call it before anything else.
pub fn load() -> Result<&'static Payload, &'static str> {
    static LOADED: OnceLock<Result<Payload, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| read_own().map_err(|e| format!("this binary cannot serve: {e}")))
        .as_ref()
        .map_err(String::as_str)
}

/// This binary's payload: for code that runs after [`load`] succeeded
/// (and tests, whose binaries carry the build's payload too).
pub fn get() -> &'static Payload {
    load().unwrap_or_else(|e| panic!("{e}"))
}

fn read_own() -> Result<Payload, String> {
    extern "C" {
        /// Defined beside the section (build.rs): referring to it links the
        /// section into every binary that reads a payload.
        static citizen_payload_anchor: u8;
    }
    // SAFETY: a byte the assembly defines, read once.
    let _ = unsafe { std::ptr::read_volatile(&raw const citizen_payload_anchor) };
    let exe = "/proc/self/exe";
    let file =
        std::fs::File::open(exe).map_err(|e| format!("cannot read its own file ({exe}): {e}"))?;
    let place = elf::find(&file).map_err(|e| e.to_string())?;
    Payload::read(map(&file, place)?)
}

/// The payload's bytes, mapped from the file for the life of the process.
fn map(file: &std::fs::File, place: elf::Place) -> Result<&'static [u8], String> {
    use std::os::fd::AsRawFd;
    if place.size == 0 {
        return Err(format::Damage::NotAPayload.to_string());
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let start = place.offset / page * page;
    let len = (place.offset - start + place.size) as usize;
    // SAFETY: a read-only private mapping of a file this process keeps
    // running (the kernel refuses writes to a running executable); it is
    // never unmapped, so the slice lives as long as the process.
    unsafe {
        let at = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            file.as_raw_fd(),
            start as libc::off_t,
        );
        if at == libc::MAP_FAILED {
            return Err(format!(
                "cannot map its payload: {}",
                std::io::Error::last_os_error()
            ));
        }
        let first = at.cast::<u8>().add((place.offset - start) as usize);
        Ok(std::slice::from_raw_parts(first, place.size as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_payload_holds_the_front_end_and_the_content() {
        let p = get();
        assert!(p.text("ssr.js").unwrap().contains("__ssr_render"));
        assert!(!p.bytes("ssr.snap").unwrap().is_empty());
        assert!(p
            .text("content/routes.json")
            .unwrap()
            .contains("\"routes\""));
        let posts = p.names_in("content/blog", "md");
        assert!(
            posts.contains(&"content/blog/brussels-pay-launch.md"),
            "{posts:?}"
        );
        assert!(p.names_in("content", "md").is_empty());
    }

    #[test]
    fn a_payload_for_another_engine_is_refused() {
        let other = format::encode(&[0; 32], &[("ssr.js".into(), b"x".to_vec())]);
        let err = Payload::read(Box::leak(other.into_boxed_slice()))
            .err()
            .unwrap();
        assert!(err.contains("another engine"), "{err}");
    }
}

//! The payload's place in the executable: an ELF section of its own,
//! [`SECTION`], that is not loaded into memory (no `SHF_ALLOC`). The linker
//! puts such sections after every loaded segment, before the section table,
//! so `pack` can give it new bytes of any length: what follows it (the
//! section names, the section table) moves by the difference and nothing
//! the loader maps changes.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// The payload's section (server/payload/mod.rs puts it there at build).
pub const SECTION: &str = ".citizen_payload";

const SHF_ALLOC: u64 = 0x2;
const SHT_NOBITS: u32 = 8;
/// The size of an ELF64 program header; a file claiming less is damaged.
const PH_ENTRY: u64 = 56;
/// What a replaced section's growth is a multiple of: every section after it
/// keeps its alignment (none asks more).
const SHIFT_ALIGN: u64 = 16;

/// Where the payload is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub offset: u64,
    pub size: u64,
}

/// Why the file's payload section cannot be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotFound {
    NotElf,
    /// The section table (or the section) lies past the end of the file.
    Truncated(String),
    /// No section of that name.
    Missing,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotFound::NotElf => write!(f, "the binary is not a 64-bit little-endian ELF file"),
            NotFound::Truncated(what) => write!(f, "the binary is truncated: {what}"),
            NotFound::Missing => write!(
                f,
                "the binary carries no site payload (it has no {SECTION} section): build it with `cargo build --release` or write it with `citizen-site pack`"
            ),
        }
    }
}

/// Reads `len` bytes at `offset`; None past the end of the file (checked
/// before anything is allocated, so a length a damaged header claims costs
/// no memory).
pub trait ReadAt {
    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Option<Vec<u8>>>;
}

impl ReadAt for File {
    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Option<Vec<u8>>> {
        let size = self.metadata()?.len();
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return Ok(None);
        }
        let mut buf = vec![0; len];
        match self.read_exact_at(&mut buf, offset) {
            Ok(()) => Ok(Some(buf)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Option<Vec<u8>>> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        Ok(self
            .get(start..start.saturating_add(len))
            .map(<[u8]>::to_vec))
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// One section header, as the file has it.
struct Section {
    name: u32,
    kind: u32,
    flags: u64,
    offset: u64,
    size: u64,
    align: u64,
}

/// The file's ELF header fields this module uses.
struct Layout {
    sh_offset: u64,
    ph_offset: u64,
    ph_size: u64,
    ph_count: u64,
    sections: Vec<Section>,
    /// Index of the section holding the section names.
    names: usize,
}

fn layout(file: &(impl ReadAt + ?Sized)) -> Result<Layout, FindError> {
    let not_elf = || FindError::NotFound(NotFound::NotElf);
    let head = file.read_at(0, 64)?.ok_or_else(not_elf)?;
    if &head[..4] != b"\x7fELF" || head[4] != 2 || head[5] != 1 {
        return Err(not_elf());
    }
    let sh_offset = u64_at(&head, 0x28);
    let (sh_size, sh_count) = (u16_at(&head, 0x3a) as u64, u16_at(&head, 0x3c) as u64);
    if sh_size != 64 {
        return Err(not_elf());
    }
    let table = file
        .read_at(sh_offset, (sh_size * sh_count) as usize)?
        .ok_or_else(|| {
            FindError::NotFound(NotFound::Truncated(format!(
                "its section table ({sh_count} entries at byte {sh_offset}) lies past the end of the file"
            )))
        })?;
    let sections = table
        .chunks(64)
        .map(|s| Section {
            name: u32_at(s, 0),
            kind: u32_at(s, 4),
            flags: u64_at(s, 8),
            offset: u64_at(s, 24),
            size: u64_at(s, 32),
            align: u64_at(s, 48),
        })
        .collect::<Vec<_>>();
    let names = u16_at(&head, 0x3e) as usize;
    if names >= sections.len() {
        return Err(not_elf());
    }
    Ok(Layout {
        sh_offset,
        ph_offset: u64_at(&head, 0x20),
        ph_size: u16_at(&head, 0x36) as u64,
        ph_count: u16_at(&head, 0x38) as u64,
        sections,
        names,
    })
}

/// Where [`SECTION`] is in `file`.
pub fn find(file: &(impl ReadAt + ?Sized)) -> Result<Place, FindError> {
    let layout = layout(file)?;
    let index = payload_index(file, &layout)?;
    let s = &layout.sections[index];
    Ok(Place {
        offset: s.offset,
        size: s.size,
    })
}

/// A failure to find the payload: the file's fault, or reading it failed.
#[derive(Debug)]
pub enum FindError {
    NotFound(NotFound),
    Io(std::io::Error),
}

impl std::fmt::Display for FindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindError::NotFound(n) => n.fmt(f),
            FindError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<std::io::Error> for FindError {
    fn from(e: std::io::Error) -> FindError {
        FindError::Io(e)
    }
}

fn payload_index(file: &(impl ReadAt + ?Sized), layout: &Layout) -> Result<usize, FindError> {
    let names = &layout.sections[layout.names];
    let table = usize::try_from(names.size)
        .ok()
        .map(|len| file.read_at(names.offset, len))
        .transpose()?
        .flatten()
        .ok_or_else(|| {
            FindError::NotFound(NotFound::Truncated(
                "its section names lie past the end of the file".into(),
            ))
        })?;
    let name_of = |s: &Section| {
        let rest = table.get(s.name as usize..).unwrap_or_default();
        let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
        &rest[..end]
    };
    let index = layout
        .sections
        .iter()
        .position(|s| name_of(s) == SECTION.as_bytes())
        .ok_or(FindError::NotFound(NotFound::Missing))?;
    let s = &layout.sections[index];
    let last = s.offset.checked_add(s.size.max(1) - 1);
    if last.is_none() || file.read_at(last.unwrap_or(0), 1)?.is_none() {
        return Err(FindError::NotFound(NotFound::Truncated(format!(
            "its payload ({} bytes at byte {}) runs past the end of the file",
            s.size, s.offset
        ))));
    }
    Ok(index)
}

/// `exe` with `payload` in place of its payload section's bytes (of any
/// length): one payload, never the old one beside the new.
pub fn replace(exe: &[u8], payload: &[u8]) -> Result<Vec<u8>, String> {
    let layout = layout(exe).map_err(|e| e.to_string())?;
    let index = payload_index(exe, &layout).map_err(|e| e.to_string())?;
    let old = &layout.sections[index];
    // payload_index found the whole section inside the file.
    let old_end = old.offset + old.size;
    if old.flags & SHF_ALLOC != 0 {
        return Err(format!(
            "{SECTION} is loaded into memory: it cannot change size"
        ));
    }
    if layout.ph_size < PH_ENTRY {
        return Err(format!(
            "the binary is damaged: its program headers are {} bytes each, an ELF64 one is {PH_ENTRY}",
            layout.ph_size
        ));
    }
    for i in 0..layout.ph_count {
        let segment = layout
            .ph_offset
            .checked_add(i * layout.ph_size)
            .and_then(|at| exe.read_at(at, layout.ph_size as usize).ok().flatten())
            .ok_or_else(|| {
                format!(
                    "the binary is truncated: its program header {i} lies past the end of the file"
                )
            })?;
        let end = u64_at(&segment, 8).checked_add(u64_at(&segment, 32));
        if end.is_none_or(|end| end > old.offset) {
            return Err(format!(
                "a loaded segment reaches past the start of {SECTION}: this binary cannot be repacked"
            ));
        }
    }
    let after = |offset: u64| offset >= old_end;
    for s in layout
        .sections
        .iter()
        .filter(|s| after(s.offset) && s.kind != SHT_NOBITS)
    {
        if s.align > SHIFT_ALIGN {
            return Err(format!(
                "a section after {SECTION} needs {}-byte alignment",
                s.align
            ));
        }
    }
    // The growth (or shrinking) is a multiple of SHIFT_ALIGN: zeros after
    // the new payload make it so.
    let grown = (payload.len() as u64).wrapping_sub(old.size);
    let pad = grown.wrapping_neg() % SHIFT_ALIGN;
    let shift = grown.wrapping_add(pad);
    let mut out = Vec::with_capacity(exe.len() + payload.len());
    out.extend_from_slice(&exe[..old.offset as usize]);
    out.extend_from_slice(payload);
    out.resize(out.len() + pad as usize, 0);
    out.extend_from_slice(&exe[old_end as usize..]);
    let moved = |offset: u64| {
        if after(offset) {
            offset.wrapping_add(shift)
        } else {
            offset
        }
    };
    let table = moved(layout.sh_offset);
    out[0x28..0x30].copy_from_slice(&table.to_le_bytes());
    for (i, s) in layout.sections.iter().enumerate() {
        let at = (table + i as u64 * 64) as usize;
        if s.kind != SHT_NOBITS && after(s.offset) {
            out[at + 24..at + 32].copy_from_slice(&moved(s.offset).to_le_bytes());
        }
        if i == index {
            out[at + 32..at + 40].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The running test binary carries a payload like the server's.
    fn this_exe() -> Vec<u8> {
        std::fs::read("/proc/self/exe").unwrap()
    }

    #[test]
    fn a_replaced_payload_is_found_whole_and_alone() {
        let exe = this_exe();
        let before = find(exe.as_slice()).unwrap();
        for new in [vec![5u8; 1000], vec![6u8; 3], Vec::new()] {
            let out = replace(&exe, &new).unwrap();
            let place = find(out.as_slice()).unwrap();
            assert_eq!(place.offset, before.offset);
            assert_eq!(
                &out[place.offset as usize..(place.offset + place.size) as usize],
                &new[..]
            );
            // Everything before the payload is the engine, unchanged but
            // for the ELF header's section table offset; the file grew by
            // the payload's growth, rounded to 16.
            let engine = 64..before.offset as usize;
            assert!(out[engine.clone()] == exe[engine], "the engine changed");
            assert!(out[..0x28] == exe[..0x28] && out[0x30..64] == exe[0x30..64]);
            let grown = out.len() as i64 - exe.len() as i64;
            let want = new.len() as i64 - before.size as i64;
            assert!((0..16).contains(&(grown - want)), "{grown} vs {want}");
            // And it can be replaced again.
            let again = replace(&out, b"x").unwrap();
            assert_eq!(find(again.as_slice()).unwrap().size, 1);
        }
    }

    #[test]
    fn a_cut_file_or_no_section_is_named() {
        let exe = this_exe();
        let place = find(exe.as_slice()).unwrap();
        let cut = &exe[..(place.offset + place.size / 2) as usize];
        let err = find(cut).unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
        assert!(find(&b"#!/bin/sh\n"[..])
            .unwrap_err()
            .to_string()
            .contains("not a 64-bit"));
    }

    /// `exe` with the 8 bytes at `at` set to `value`.
    fn with_u64(exe: &[u8], at: usize, value: u64) -> Vec<u8> {
        let mut out = exe.to_vec();
        out[at..at + 8].copy_from_slice(&value.to_le_bytes());
        out
    }

    /// Where section `index`'s header is in `exe`.
    fn section_header(exe: &[u8], index: usize) -> usize {
        u64_at(exe, 0x28) as usize + index * 64
    }

    #[test]
    fn damaged_headers_are_named_not_a_panic() {
        let exe = this_exe();
        let layout = layout(exe.as_slice()).unwrap();
        let payload = payload_index(exe.as_slice(), &layout).unwrap();

        // Program headers that claim 8 bytes each: read as 56 they would
        // run off their slice.
        let mut small = exe.clone();
        small[0x36..0x38].copy_from_slice(&8u16.to_le_bytes());
        let err = replace(&small, b"x").unwrap_err();
        assert!(err.contains("program headers are 8 bytes each"), "{err}");

        // Program headers past the end of the file, at an offset whose sum
        // with their size overflows.
        let far = with_u64(&exe, 0x20, u64::MAX - 10);
        let err = replace(&far, b"x").unwrap_err();
        assert!(err.contains("program header 0 lies past the end"), "{err}");

        // A payload section whose offset plus size overflows.
        let at = section_header(&exe, payload);
        let huge = with_u64(&exe, at + 32, u64::MAX - 4);
        let err = find(huge.as_slice()).unwrap_err().to_string();
        assert!(err.contains("runs past the end of the file"), "{err}");
        let err = replace(&huge, b"x").unwrap_err();
        assert!(err.contains("runs past the end of the file"), "{err}");

        // A section-name table claiming a terabyte, read from a file: refused
        // before a byte of it is allocated.
        let at = section_header(&exe, layout.names);
        let claims = with_u64(&exe, at + 32, 1 << 40);
        let path = std::env::temp_dir().join(format!("citizen-elf-{}", uuid::Uuid::new_v4()));
        std::fs::write(&path, &claims).unwrap();
        let err = find(&File::open(&path).unwrap()).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(err.contains("section names lie past the end"), "{err}");
    }
}

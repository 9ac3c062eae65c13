//! The payload's bytes: a header, then the files of the site by name.
//!
//! ```text
//! header  magic (16) | engine hash (32) | body length (u64 LE) | body SHA-256 (32) | 0 (8)
//! body    per file: name length (u64 LE) | data length (u64 LE) | name | data
//! ```
//!
//! The name and the data each start on a 16-byte boundary of the payload
//! (zeros pad them): the section holding it is 16-aligned, so the V8
//! snapshot and every asset are read in place, aligned. build.rs compiles
//! this file too (`#[path]`): the binary `cargo build` makes and the one
//! `pack` writes encode their payload with the same code.

use sha2::{Digest, Sha256};

/// The first bytes of every payload (and the version of this layout).
pub const MAGIC: &[u8; 16] = b"citizen-site\0pl1";
/// Magic, engine hash, body length, body hash, padding to 16.
pub const HEADER_LEN: usize = 16 + 32 + 8 + 32 + 8;
const ALIGN: usize = 16;
const _: () = assert!(HEADER_LEN.is_multiple_of(ALIGN));

/// What the header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The hash of the Rust side the payload was made for.
    pub engine: [u8; 32],
    pub body_len: u64,
    pub body_sha256: [u8; 32],
}

/// Why a payload cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// It does not start with [`MAGIC`].
    NotAPayload,
    /// The body is shorter than the header says.
    Truncated { have: u64, want: u64 },
    /// The body's SHA-256 is not the header's.
    Altered { want: String, got: String },
    /// The body's hash is right but its layout is not this one.
    Malformed(String),
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Damage::NotAPayload => write!(
                f,
                "the payload section does not start with the payload's mark: it was altered, or it is not a citizen-site payload"
            ),
            Damage::Truncated { have, want } => write!(
                f,
                "the payload is truncated: its header says {want} bytes of site, the binary holds {have}"
            ),
            Damage::Altered { want, got } => write!(
                f,
                "the payload was altered: its SHA-256 is {got}, its header says {want}"
            ),
            Damage::Malformed(why) => write!(f, "the payload's files cannot be read: {why}"),
        }
    }
}

fn pad(out: &mut Vec<u8>) {
    out.resize(out.len().next_multiple_of(ALIGN), 0);
}

/// The payload of these files, made for the engine `engine`.
pub fn encode(engine: &[u8; 32], files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut body = Vec::with_capacity(files.iter().map(|(n, d)| n.len() + d.len() + 64).sum());
    for (name, data) in files {
        body.extend_from_slice(&(name.len() as u64).to_le_bytes());
        body.extend_from_slice(&(data.len() as u64).to_le_bytes());
        body.extend_from_slice(name.as_bytes());
        pad(&mut body);
        body.extend_from_slice(data);
        pad(&mut body);
    }
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(engine);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&body));
    out.resize(HEADER_LEN, 0);
    out.extend_from_slice(&body);
    out
}

/// The header of `payload`, if it has one.
pub fn header(payload: &[u8]) -> Result<Header, Damage> {
    if payload.len() < HEADER_LEN || &payload[..16] != MAGIC {
        return Err(Damage::NotAPayload);
    }
    let u64_at = |at: usize| u64::from_le_bytes(payload[at..at + 8].try_into().unwrap());
    Ok(Header {
        engine: payload[16..48].try_into().unwrap(),
        body_len: u64_at(48),
        body_sha256: payload[56..88].try_into().unwrap(),
    })
}

/// A payload's files, by name, borrowed from it.
pub type Files<'a> = Vec<(&'a str, &'a [u8])>;

/// The files of `payload`: after its length and hash are checked, so a
/// payload is read whole or not at all.
pub fn decode(payload: &[u8]) -> Result<(Header, Files<'_>), Damage> {
    let head = header(payload)?;
    let have = (payload.len() - HEADER_LEN) as u64;
    if have < head.body_len {
        return Err(Damage::Truncated {
            have,
            want: head.body_len,
        });
    }
    let body = &payload[HEADER_LEN..HEADER_LEN + head.body_len as usize];
    let got: [u8; 32] = Sha256::digest(body).into();
    if got != head.body_sha256 {
        return Err(Damage::Altered {
            want: hex(&head.body_sha256),
            got: hex(&got),
        });
    }
    let malformed = |why: &str| Damage::Malformed(why.to_owned());
    let mut files = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let field = |at: usize| -> Result<usize, Damage> {
            let bytes = body
                .get(at..at + 8)
                .ok_or_else(|| malformed("a file's lengths are cut off"))?;
            usize::try_from(u64::from_le_bytes(bytes.try_into().unwrap()))
                .map_err(|_| malformed("a length does not fit in memory"))
        };
        let (name_len, data_len) = (field(at)?, field(at + 8)?);
        let name_at = at + 16;
        let past = || malformed("a file runs past the end");
        let name_end = name_at
            .checked_add(name_len)
            .filter(|end| *end <= body.len())
            .ok_or_else(past)?;
        let data_at = name_end.next_multiple_of(ALIGN);
        let end = data_at
            .checked_add(data_len)
            .filter(|end| *end <= body.len())
            .ok_or_else(past)?;
        let name = std::str::from_utf8(&body[name_at..name_end])
            .map_err(|_| malformed("a name is not UTF-8"))?;
        files.push((name, &body[data_at..end]));
        at = end.next_multiple_of(ALIGN);
    }
    Ok((head, files))
}

/// The engine's hash: of its inputs' names and SHA-256s (hex), in order
/// (server/cli/pack/engine.rs lists them).
pub fn engine_hash<'a>(inputs: impl IntoIterator<Item = (&'a str, &'a str)>) -> [u8; 32] {
    let mut h = Sha256::new();
    for (name, sha) in inputs {
        h.update(format!("{name} {sha}\n").as_bytes());
    }
    h.finalize().into()
}

/// Lower-case hex, for hashes in messages.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<(String, Vec<u8>)> {
        vec![
            ("ssr.js".into(), b"globalThis.x = 1;".to_vec()),
            ("empty".into(), Vec::new()),
            ("web/assets/a.css".into(), vec![7; 33]),
        ]
    }

    #[test]
    fn files_come_back_by_name_aligned() {
        let payload = encode(&[9; 32], &files());
        let (head, got) = decode(&payload).unwrap();
        assert_eq!(head.engine, [9; 32]);
        let want = files();
        assert_eq!(got.len(), want.len());
        for ((name, data), (n, d)) in got.iter().zip(&want) {
            assert_eq!((*name, *data), (n.as_str(), d.as_slice()));
            let offset = data.as_ptr() as usize - payload.as_ptr() as usize;
            assert_eq!(offset % ALIGN, 0, "{name} starts unaligned");
        }
    }

    #[test]
    fn a_cut_or_changed_payload_is_refused_by_name() {
        let payload = encode(&[1; 32], &files());
        let cut = &payload[..payload.len() - 5];
        assert!(matches!(decode(cut), Err(Damage::Truncated { .. })));
        let mut changed = payload.clone();
        let last = changed.len() - 20;
        changed[last] ^= 1;
        let err = decode(&changed).unwrap_err();
        assert!(matches!(err, Damage::Altered { .. }), "{err}");
        assert!(err.to_string().contains("altered"));
        let mut unmarked = payload;
        unmarked[0] = b'C';
        assert_eq!(decode(&unmarked).unwrap_err(), Damage::NotAPayload);
        assert_eq!(decode(b"short").unwrap_err(), Damage::NotAPayload);
    }

    /// A payload whose body is `body`, with a header that vouches for it.
    fn vouched(body: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[0; 32]);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(body));
        out.resize(HEADER_LEN, 0);
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn lengths_that_overflow_or_run_past_the_body_are_named_not_a_panic() {
        for (name_len, data_len) in [
            (u64::MAX - 8, 0),
            (u64::MAX, u64::MAX),
            (4, u64::MAX - 15),
            (1000, 0),
        ] {
            let mut body = name_len.to_le_bytes().to_vec();
            body.extend_from_slice(&data_len.to_le_bytes());
            body.extend_from_slice(b"name");
            body.resize(32, 0);
            let err = decode(&vouched(&body)).unwrap_err();
            assert_eq!(
                err,
                Damage::Malformed("a file runs past the end".into()),
                "{name_len} {data_len}"
            );
        }
        let err = decode(&vouched(&[1, 2, 3])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the payload's files cannot be read: a file's lengths are cut off"
        );
    }
}

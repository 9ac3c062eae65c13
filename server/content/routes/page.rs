//! A page of the site by its name ([`PageId`]): the names the table gives,
//! kept once for the life of the process, and the pages with data this
//! build compiles in ([`DataPage`]).

use serde::Deserialize;

/// A page of the site: a name `content/routes.json` gives a route
/// (`NfcWallet`), or `NotFound`. Pages are content, read at run time: a new
/// page without data needs no build. A page with data is compiled in
/// ([`crate::contract::DataPage`]), and the table is held to it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageId(&'static str);

// The pages the server names itself, written as the table writes them.
#[allow(non_upper_case_globals)]
impl PageId {
    pub const Home: PageId = PageId("Home");
    pub const Wallets: PageId = PageId("Wallets");
    pub const About: PageId = PageId("About");
    pub const Blog: PageId = PageId("Blog");
    pub const NfcWallet: PageId = PageId("NfcWallet");
    pub const Pricing: PageId = PageId("Pricing");
    pub const Contact: PageId = PageId("Contact");
    pub const Terms: PageId = PageId("Terms");
    pub const Success: PageId = PageId("Success");
    pub const Cancel: PageId = PageId("Cancel");
    pub const NotFound: PageId = PageId("NotFound");
}

impl PageId {
    /// The name the table, the client and the metrics use.
    pub const fn name(self) -> &'static str {
        self.0
    }

    /// The page called `name`, if it is a page's name: `A-Z` first, then
    /// letters and digits (the client's folder is made from it).
    pub fn from_name(name: &str) -> Option<PageId> {
        if !is_page_name(name) {
            return None;
        }
        // Each name is kept once for the life of the process: the table's
        // pages, and those `dev` reads after an edit (a table's names, so
        // never more than an editor typed).
        let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(kept) = names.iter().find(|n| **n == name) {
            return Some(PageId(kept));
        }
        let kept: &'static str = Box::leak(name.to_owned().into_boxed_str());
        names.push(kept);
        Some(PageId(kept))
    }

    /// The page called `name` if a table read by this process named it,
    /// or `NotFound`; nothing is kept.
    pub fn known(name: &str) -> Option<PageId> {
        if name == PageId::NotFound.0 {
            return Some(PageId::NotFound);
        }
        let names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
        names.iter().find(|n| **n == name).map(|kept| PageId(kept))
    }
}

/// The page names kept (`PageId::from_name`).
static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

// DataPage: build.rs makes it from content/routes.json (each page whose
// routes name a `data` type, with that type).
include!(concat!(env!("OUT_DIR"), "/data_pages.rs"));

impl DataPage {
    pub const fn page(self) -> PageId {
        PageId(self.name())
    }
}

/// `A-Z` first, then letters and digits: as build.rs and client/build.mjs
/// read the table.
fn is_page_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

impl std::fmt::Debug for PageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl serde::Serialize for PageId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

/// Only a page some table named (what a render echoes back): a name read
/// from anywhere else is never kept.
impl<'de> Deserialize<'de> for PageId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PageId, D::Error> {
        let name = String::deserialize(d)?;
        PageId::known(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("{name:?} is no page of the table")))
    }
}

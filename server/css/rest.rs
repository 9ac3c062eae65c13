//! The rest of the stylesheet for a page: the rules its inline CSS left
//! out, each put in its place among the inline CSS's rules. The server
//! writes one file per build ([`json`]): every rule that may be left out,
//! with its place. A page names the rules it kept ([`key`]);
//! client/boot.ts fetches the file once the page has painted and inserts
//! each rule the page did not keep where the stylesheet has it
//! (`insertRule`), so that the page's own stylesheet becomes the whole
//! one, in the whole one's order, and what scripts and client navigation
//! show later has every rule it needs.
//!
//! The whole stylesheet added as a sheet of its own instead restyled every
//! element of the page (on a phone's `/`, 548, 25 to 80 ms on a 2-core
//! host): Chromium restyles an element whenever a sheet added has a rule
//! that could match it, and every element when the sheet registers a
//! property or declares variables for every element. That was the one
//! long task after the first paint, where Lighthouse's Total Blocking Time
//! was lost. A sheet of the rest alone, after the inline one, would change
//! the cascade: where a rule of the rest and one of the page's set one
//! property at one specificity, the rest's would win, even where the
//! stylesheet has the other after it. Inserted in place, each rule keeps
//! its order, and Chromium restyles only the elements an inserted rule
//! can match (none of the page's, whose classes it does not name).
//!
//! A rule's place: the group it belongs to (the sheet, or a `@media`,
//! `@supports`, `@layer`, `@container` or `@starting-style` block: every
//! one of them is in the inline CSS, empty or not), numbered depth first
//! as the boot module walks those rules of the CSSOM; and its index among
//! that group's rules, the whole stylesheet's. The browser may read the
//! inline CSS otherwise (it drops a rule it cannot parse), which would
//! move those places: the file says how many groups there are, and how
//! many rules each group that may be added to holds in the whole
//! stylesheet, and the boot module checks both against the page's first.

use base64::Engine;
use serde::Serialize;

use super::rules::Node;

/// What the boot module reads (client/boot.ts, `Rules`).
#[derive(Serialize)]
struct Rules<'a> {
    /// How many groups the stylesheet has, the sheet itself the first.
    groups: u32,
    /// Per group holding a rule that may be left out: how many rules it
    /// holds in the whole stylesheet.
    lengths: Vec<(u32, u32)>,
    /// Each rule that may be left out, by its number ([`Node::Rule`]'s
    /// `index`, the bit of [`key`]): its group, its index there, its text.
    rules: Vec<(u32, u32, &'a str)>,
}

/// The rules of `nodes` that a page may leave out, with their places, as JSON.
pub(super) fn json(nodes: &[Node]) -> String {
    let mut file = Rules {
        groups: 1,
        lengths: Vec::new(),
        rules: Vec::new(),
    };
    place(nodes, 0, &mut file);
    serde_json::to_string(&file).expect("the rules are JSON")
}

/// Places the rules of group `group` (its children `nodes`) and of the
/// groups inside it, in the order of their numbers.
fn place<'a>(nodes: &'a [Node], group: u32, file: &mut Rules<'a>) {
    let (mut index, mut holds_one) = (0, false);
    for node in nodes {
        match node {
            Node::Always { rule: false, .. } => continue,
            Node::Always { .. } => {}
            Node::Rule { index: n, text, .. } => {
                debug_assert_eq!(*n as usize, file.rules.len(), "numbered in this order");
                file.rules.push((group, index, text));
                holds_one = true;
            }
            Node::Group { children, .. } => {
                // Numbered as the boot module walks them: depth first.
                let inner = file.groups;
                file.groups += 1;
                place(children, inner, file);
            }
        }
        index += 1;
    }
    if holds_one {
        file.lengths.push((group, index));
    }
}

/// Which rules a page kept: a bit per rule (rule `n` is bit `n % 8` of
/// byte `n / 8`), in base64url without padding.
pub(super) fn key(kept: &[bool]) -> String {
    let mut bytes = vec![0u8; kept.len().div_ceil(8)];
    for (i, _) in kept.iter().enumerate().filter(|(_, k)| **k) {
        bytes[i / 8] |= 1 << (i % 8);
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

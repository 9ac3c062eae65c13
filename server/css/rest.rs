//! The rest of the stylesheet for one page: the rules its inline CSS left
//! out, each with its place among the inline CSS's rules. client/boot.ts
//! fetches it once the page has painted and inserts each rule there
//! (`insertRule`), so that the page's own stylesheet becomes the whole one,
//! in the whole one's order, and what scripts and client navigation show
//! later has every rule it needs.
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
//! Where is a rule's place: the group it belongs to (the sheet, or a
//! `@media`, `@supports` or `@layer` block: every one of them is in the
//! inline CSS, empty or not), counted as the browser counts its grouping
//! rules, depth first; and its index among that group's rules once the
//! rules before it are in. The browser may read the inline CSS otherwise
//! (it drops a rule it cannot parse), which would move those places: the
//! rest says how many groups there are, and how many rules each group it
//! adds to holds before, and the boot module checks both first.
//!
//! A page names its rest by which of the stylesheet's rules it kept
//! ([`key`]): any server of the same build makes the same rest from it.

use base64::Engine;
use serde::Serialize;

use super::rules::Node;

/// What the boot module reads (client/boot.ts, `Rest`).
#[derive(Serialize)]
struct Rest<'a> {
    /// How many groups the inline CSS has, the sheet itself the first.
    groups: u32,
    /// Per group a rule is added to: how many rules it holds in the inline CSS.
    lengths: Vec<(u32, u32)>,
    /// Each rule left out, in the stylesheet's order: its group, its index
    /// there once the rules before it are in, its text.
    rules: Vec<(u32, u32, &'a str)>,
}

/// The rest of `nodes` for the rules `kept`, as JSON.
pub(super) fn json(nodes: &[Node], kept: &[bool]) -> String {
    let mut rest = Rest {
        groups: 1,
        lengths: Vec::new(),
        rules: Vec::new(),
    };
    place(nodes, 0, kept, &mut rest);
    serde_json::to_string(&rest).expect("a rest is JSON")
}

/// Places the rules of group `group` (its children `nodes`) and of the
/// groups inside it.
fn place<'a>(nodes: &'a [Node], group: u32, kept: &[bool], rest: &mut Rest<'a>) {
    let (mut index, mut inline, added) = (0, 0, rest.rules.len());
    for node in nodes {
        match node {
            Node::Always { rule: false, .. } => continue,
            Node::Rule { index: i, text, .. } if !kept[*i as usize] => {
                rest.rules.push((group, index, text));
            }
            Node::Always { .. } | Node::Rule { .. } => inline += 1,
            Node::Group { children, .. } => {
                inline += 1;
                // Numbered as the browser walks them: depth first.
                let inner = rest.groups;
                rest.groups += 1;
                place(children, inner, kept, rest);
            }
        }
        index += 1;
    }
    if rest.rules[added..].iter().any(|(g, ..)| *g == group) {
        rest.lengths.push((group, inline));
    }
}

/// The name of the rest for the rules `kept`: a bit per rule, in base64url.
pub(super) fn key(kept: &[bool]) -> String {
    let mut bytes = vec![0u8; kept.len().div_ceil(8)];
    for (i, _) in kept.iter().enumerate().filter(|(_, k)| **k) {
        bytes[i / 8] |= 1 << (i % 8);
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The rules kept that `key` names, when it is one [`key`] makes for a
/// stylesheet of `rules` rules (one name per rest: no other spelling).
pub(super) fn kept_from(key: &str, rules: usize) -> Option<Vec<bool>> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(key)
        .ok()?;
    if bytes.len() != rules.div_ceil(8) {
        return None;
    }
    let kept: Vec<bool> = (0..bytes.len() * 8)
        .map(|i| bytes[i / 8] & (1 << (i % 8)) != 0)
        .collect();
    if kept[rules..].iter().any(|k| *k) {
        return None;
    }
    Some(kept[..rules].to_vec())
}

//! The stylesheet's rules as read ([`Node`]): each with what it needs to be
//! kept on a page and the names it mentions.

/// The names of custom properties and keyframes a piece of CSS mentions,
/// by their index.
pub(crate) type Mentions = Vec<u32>;

#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Kept on every page.
    Always { text: String, mentions: Mentions },
    /// A style rule, kept when all the classes of one of its selectors are
    /// on the page.
    Rule {
        text: String,
        needs: Vec<Vec<String>>,
        mentions: Mentions,
    },
    /// `@property --x` or `@keyframes x`, kept when something kept names it.
    Named {
        name: u32,
        text: String,
        mentions: Mentions,
    },
    /// A rule for every element that declares custom properties alone
    /// (`:root,:host{--color-x:…}`): each declaration kept when something
    /// kept names it.
    Variables {
        selector: String,
        declarations: Vec<Declaration>,
    },
    /// `@media`, `@supports`, `@layer`, `@container` or `@starting-style`
    /// with its rules: written when one of them is kept (a `@layer` always,
    /// since the first mention of a layer sets its order).
    Group {
        prelude: String,
        children: Vec<Node>,
        kept_empty: bool,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Declaration {
    pub(super) name: u32,
    /// `--x:value`, without its `;`.
    pub(super) text: String,
    /// What its value names (a theme variable naming another).
    pub(super) mentions: Mentions,
}

//! The stylesheet's rules as read ([`Node`]): each with what it needs to be
//! kept on a page.

#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Kept on every page: base styles, statements, `@font-face`,
    /// `@keyframes`, every `@property` and every rule without a class
    /// (Tailwind's theme on `:root`, its defaults on `*`). Added later,
    /// from the rest, a registration or a variable for every element
    /// would restyle every element. `rule`: whether the browser reads it
    /// as a rule of its CSSOM (not a comment, not `@charset`).
    Always { text: String, rule: bool },
    /// A style rule, kept when all the classes of one of its selectors are
    /// on the page; the `index`th of the stylesheet's such rules.
    Rule {
        index: u32,
        text: String,
        needs: Vec<Vec<String>>,
    },
    /// `@media`, `@supports`, `@layer`, `@container` or `@starting-style`
    /// with its rules: written on every page, so that the rest of the
    /// stylesheet has each of its rules' places to go (super::rest).
    Group {
        prelude: String,
        children: Vec<Node>,
    },
}

//! citizen-site: the public website of the Citizen Wallet platform, one
//! binary. axum serves React pages rendered inside embedded V8 isolates
//! (deno_core), caches them in moka, and ships the same bundle to the browser
//! for hydration and client-side routing. ARCHITECTURE.md is the map of these
//! modules: their layers, the one way a request takes through them, and the
//! rules the layout keeps (a test checks them, `tests/architecture.rs`).

#[cfg(all(feature = "test-hooks", not(debug_assertions)))]
compile_error!(
    "the `test-hooks` feature lets tests inject faults into renders: it is for `cargo test` only, \
     and a build without debug assertions (the release profile) refuses it"
);

// The layers of ARCHITECTURE.md, top first: a module imports only from its
// own layer or the layers below (tests/architecture.rs checks the imports,
// and that these groups are the table's).

// Layer assembly: configuration -> state -> listeners; the operator's commands.
pub mod app;
pub mod cli;

// Layer http: requests in, responses out; `dev`'s reload routes.
pub mod dev;
pub mod http;

// Layer pages: what a URL shows (resolve, load, make).
pub mod pages;

// Layer serving: what handlers reach, the site being served, rendering.
pub mod contract;
pub mod render;
pub mod seo;
pub mod site;
pub mod state;

// Layer domains: each owns its logic and its SQL.
pub mod content;
pub mod intake;
pub mod payments;
pub mod team;
pub mod tls;

// Layer shared: parts every layer may use, which know nothing above them.
pub mod assets;
pub mod client_ip;
pub mod config;
pub mod css;
pub mod db;
pub mod edge;
pub mod html;
pub mod live;
pub mod messages;
pub mod metrics;
pub mod payload;
pub mod rate_limit;
pub mod security;
pub mod telemetry;

//! Every integration test, in one binary: one module per suite, so that a
//! change to the crate links one test binary, not one per suite. The
//! README's test command (`cargo nextest run`) runs the tests side by side,
//! each in its own process; `.config/nextest.toml` gives the tests that
//! compute or measure a slot of their own and caps the suites that share
//! the machine. Each suite still checks what it needs (PostgreSQL,
//! Chromium, root, pebble) in its own tests.

// The API suite's request builders nest deeply.
#![recursion_limit = "256"]

mod api;
mod architecture;
mod browser;
mod cli;
mod deploy;
mod fleet;
mod guides;
mod http3;
mod https;
mod lighthouse;
mod live_systemd;
mod monitoring;
mod new_page;
mod npm_lock;
mod ops;
mod pack;
mod photos;
mod proven;
mod readme;
mod seo;
mod support;
mod swaps;

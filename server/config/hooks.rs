//! The renderer's fault injection ([`RenderHooks`]), which the
//! configuration carries: compiled with the `test-hooks` feature alone, so
//! the shipped binary holds none of it (server/lib.rs).

/// What the renderer's tests inject into its workers
/// (`tests/api/ssr_faults.rs`): the shipped render path has nothing to
/// check for it.
#[derive(Clone, Default)]
pub struct RenderHooks {
    /// JavaScript evaluated in every isolate on top of the bundle (a fault
    /// wraps `__ssr_render`). The isolates still start from the snapshot:
    /// V8 shares one read-only heap per process, and isolates started from
    /// different snapshots in one process crash V8.
    pub script: Option<std::sync::Arc<str>>,
    /// Called on the worker thread with each URL before it is rendered (a
    /// test makes the worker panic, or holds it).
    pub before_render: Option<BeforeRender>,
}

/// A test's call before each render (see [`RenderHooks::before_render`]).
pub type BeforeRender = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

impl RenderHooks {
    /// Evaluates `script` in every isolate on top of the bundle.
    pub fn inject_script(&mut self, script: &str) {
        self.script = Some(script.into());
    }

    /// Calls `hook` with each URL before it is rendered, on the worker.
    pub fn before_render(&mut self, hook: impl Fn(&str) + Send + Sync + 'static) {
        self.before_render = Some(std::sync::Arc::new(hook));
    }
}

impl std::fmt::Debug for RenderHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderHooks")
            .field("script", &self.script.is_some())
            .field("before_render", &self.before_render.is_some())
            .finish()
    }
}

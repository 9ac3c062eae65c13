import type { PageId, PageModule } from "../lib/types";

/** How the app finds a page's module. The server bundle registers every page
 *  eagerly (renderToString is synchronous); the browser loads each page's
 *  chunk on demand, so no route ships another route's code. */
export interface PageRegistry {
  /** The module if it is already loaded. */
  get(id: PageId): PageModule | undefined;
  /** Loads (once) and returns the module. */
  load(id: PageId): Promise<PageModule>;
}

export function eagerRegistry(modules: Record<PageId, PageModule>): PageRegistry {
  return { get: (id) => modules[id], load: async (id) => modules[id] };
}

export function lazyRegistry(importers: Record<PageId, () => Promise<PageModule>>): PageRegistry {
  const loaded = new Map<PageId, PageModule>();
  const pending = new Map<PageId, Promise<PageModule>>();
  return {
    get: (id) => loaded.get(id),
    load(id) {
      const done = loaded.get(id);
      if (done) return Promise.resolve(done);
      let p = pending.get(id);
      if (!p) {
        p = importers[id]().then((m) => {
          loaded.set(id, m);
          pending.delete(id);
          return m;
        });
        p.catch(() => pending.delete(id));
        pending.set(id, p);
      }
      return p;
    },
  };
}

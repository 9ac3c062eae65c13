import { createElement, type ReactNode } from "react";
import type { LoadState, PageData, PageDataMap, PageId, PageMeta, PageModules } from "../lib/types";

/** How the app finds a page's module. The server bundle registers every page
 *  eagerly (renderToString is synchronous); the browser loads each page's
 *  chunk on demand, so no route ships another route's code. Both registries
 *  are typed by PageModules: the type checker holds each page's component to
 *  the data its Rust loader sends. */
export interface PageRegistry {
  /** Whether the page's module is loaded. */
  has(id: PageId): boolean;
  /** Loads (once) the page's module. */
  load(id: PageId): Promise<void>;
  /** The page with its data, once its module is loaded. */
  render<K extends PageId>(id: K, data: PageDataMap[K] | undefined, state: LoadState): ReactNode;
  /** The page's title and description for its data, once loaded. */
  meta<K extends PageId>(id: K, data: PageDataMap[K] | undefined): PageMeta | undefined;
  /** What a new view of the page shows, if the page says (PageModule.view). */
  view<K extends PageId>(id: K, data: PageDataMap[K] | undefined, search: URLSearchParams): string | undefined;
}

/** The data a route carries (undefined for a page without a loader). */
export function dataOf(route: PageData): PageDataMap[PageId] | undefined {
  return "data" in route ? route.data : undefined;
}

function registryOf(loaded: Partial<PageModules>, load: (id: PageId) => Promise<void>): PageRegistry {
  return {
    has: (id) => loaded[id] !== undefined,
    load,
    render(id, data, state) {
      const mod = loaded[id];
      return mod ? createElement(mod.default, { data, state }) : null;
    },
    meta: (id, data) => loaded[id]?.meta(data),
    view: (id, data, search) => loaded[id]?.view?.(data, search),
  };
}

export function eagerRegistry(modules: PageModules): PageRegistry {
  return registryOf(modules, async () => {});
}

/** What imports each page's module (a dynamic import: its own chunk). */
export type PageImporters = { [K in PageId]: () => Promise<PageModules[K]> };

export function lazyRegistry(importers: PageImporters): PageRegistry {
  const loaded: Partial<PageModules> = {};
  const pending = new Map<PageId, Promise<void>>();
  function load<K extends PageId>(id: K): Promise<void> {
    if (loaded[id]) return Promise.resolve();
    let p = pending.get(id);
    if (!p) {
      p = importers[id]().then((m) => {
        loaded[id] = m;
        pending.delete(id);
      });
      p.catch(() => pending.delete(id));
      pending.set(id, p);
    }
    return p;
  }
  return registryOf(loaded, load);
}

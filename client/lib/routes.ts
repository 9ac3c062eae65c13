import { matchPath } from "react-router";
// A named import: esbuild then ships only `routes`, not the file's comment.
import { routes } from "../../content/routes.json";
import { PAGE_IDS, type PageId } from "./page-ids";

export interface RouteMatch {
  page: PageId;
  params: Record<string, string | undefined>;
}

/** The page a path shows, by the same table the Rust server uses. */
export function matchRoute(pathname: string): RouteMatch {
  for (const route of routes) {
    const m = matchPath({ path: route.path, end: true, caseSensitive: true }, pathname);
    if (!m) continue;
    // The ids are made from the same table, so every name is a page id.
    const page = PAGE_IDS.find((id) => id === route.page);
    if (page) return { page, params: m.params };
  }
  return { page: "NotFound", params: {} };
}

import { useEffect, useEffectEvent, useRef, useState } from "react";
import { useLocation } from "react-router";
import { Footer } from "../components/Footer";
import { Header } from "../components/Header";
import { ErrorBoundary, ErrorScreen } from "../components/ErrorScreen";
import { fetchRouteData } from "../lib/route-data";
import { matchRoute } from "../lib/routes";
import type { Bootstrap, LoadState, PageDataMap, PageId } from "../lib/types";
import { dataOf, type PageRegistry } from "./registry";

/** What is on screen: a page, its loader data and where that data stands. */
interface View {
  url: string;
  page: PageId;
  data: PageDataMap[PageId] | undefined;
  state: LoadState;
}

interface AppProps {
  bootstrap: Bootstrap;
  registry: PageRegistry;
}

/** The whole site: header, the current page, footer. The first view comes from
 *  the server (SSR and hydration see the same bootstrap); later views are
 *  built on client-side navigation from the route-data endpoint. */
export function App({ bootstrap, registry }: AppProps) {
  if (bootstrap.error) {
    return <ErrorScreen status={bootstrap.error.status} message={bootstrap.error.message} />;
  }
  return <Site bootstrap={bootstrap} registry={registry} />;
}

function Site({ bootstrap, registry }: AppProps) {
  const location = useLocation();
  const url = location.pathname + location.search;
  const [view, setView] = useState<View>(() => ({
    url,
    page: bootstrap.page,
    data: dataOf(bootstrap),
    state: "ready",
  }));
  const shownUrl = useRef(url);
  // The hash is read when the new page is shown, but a change of hash alone
  // is no navigation: it is not one of the effect's dependencies (a rerun
  // would abort the load in flight).
  const scrollToTop = useEffectEvent(() => {
    if (!location.hash) window.scrollTo(0, 0);
  });

  useEffect(() => {
    if (url === shownUrl.current) return;
    // The url is the path and the query: the effect reads both from it.
    const path = url.split("?")[0];
    const samePage = matchRoute(shownUrl.current.split("?")[0]).page === matchRoute(path).page;
    shownUrl.current = url;
    const abort = new AbortController();
    const { page } = matchRoute(path);
    const data = fetchRouteData(url, abort.signal);
    // Keep the previous screen until the new page's code is here, then show
    // the page in its loading state until its data arrives (or fails after
    // the retries, which is the page's error state).
    registry
      .load(page)
      .then(() => {
        if (abort.signal.aborted) return;
        // Within one page (a blog filter, another post) the previous data
        // stays on screen while the new data loads.
        // A new page starts at the top; a new view of the same page (a
        // filter, a toggle) keeps its place and its data until the new data.
        if (!samePage) scrollToTop();
        setView((v) => ({ url, page, data: v.page === page ? v.data : undefined, state: "loading" }));
        return data.then((d) => registry.load(d.page).then(() => d));
      })
      .then((d) => {
        if (abort.signal.aborted || !d) return;
        setView({ url, page: d.page, data: dataOf(d), state: "ready" });
        applyMeta(registry, d.page, dataOf(d));
      })
      .catch(() => {
        if (abort.signal.aborted) return;
        // The page's own code could not be fetched: let the server render it.
        if (!registry.has(page)) return window.location.assign(url);
        setView({ url, page, data: undefined, state: "error" });
      });
    return () => abort.abort();
    // The registry is one object for the app's life (pages.lazy / pages.eager).
  }, [url, registry]);

  return (
    <div className="flex min-h-screen flex-col">
      <Header />
      <main id="main" className="flex-1">
        <ErrorBoundary key={view.url}>
          {registry.render(view.page, view.data, view.state)}
        </ErrorBoundary>
      </main>
      <Footer />
    </div>
  );
}

function applyMeta(registry: PageRegistry, page: PageId, data: PageDataMap[PageId] | undefined) {
  const meta = registry.meta(page, data);
  if (meta) document.title = meta.title;
}

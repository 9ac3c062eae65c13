import { useEffect, useEffectEvent, useRef, useState } from "react";
import { useLocation } from "react-router";
import { Footer } from "../components/Footer";
import { Header } from "../components/Header";
import { Announcer, focusArrival, nextMessage } from "./Announcer";
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
  // The view a visitor has been told about (the first one is the server's).
  const arrivedUrl = useRef(url);
  const [announcement, setAnnouncement] = useState("");
  // The hash is read when the new page is shown, but a change of hash alone
  // is no navigation: it is not one of the effect's dependencies (a rerun
  // would abort the load in flight).
  const scrollToTop = useEffectEvent(() => {
    if (!location.hash) window.scrollTo(0, 0);
  });
  const arrive = useEffectEvent((shown: View) => {
    const before = pathOf(arrivedUrl.current);
    arrivedUrl.current = shown.url;
    if (pathOf(shown.url) !== before) {
      // A new page (a post included): its title is read and focus starts
      // on its heading, as if it had loaded, not in the header left behind.
      setAnnouncement((m) => nextMessage(m, document.title));
      focusArrival(location.hash);
    } else {
      // A new view of the same page: what changed is read; focus stays on
      // the filter or toggle that was used.
      const search = new URLSearchParams(shown.url.slice(pathOf(shown.url).length));
      const said = registry.view(shown.page, shown.data, search) ?? document.title;
      setAnnouncement((m) => nextMessage(m, said));
    }
  });

  // Back, Forward and links alike: once a navigation's view is on screen
  // (ready, or the page's error state), the visitor is told.
  useEffect(() => {
    if (view.state !== "loading" && view.url !== arrivedUrl.current) arrive(view);
  }, [view]);

  useEffect(() => {
    if (url === shownUrl.current) return;
    // The url is the path and the query: the effect reads both from it.
    const path = pathOf(url);
    const samePath = pathOf(shownUrl.current) === path;
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
        // A new path (a post included) starts at the top; a new view of the
        // same path (a filter, a toggle) keeps its place. Within one page
        // the previous data stays on screen while the new data loads.
        if (!samePath) scrollToTop();
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
        applyMeta(registry, page, undefined);
      });
    return () => abort.abort();
    // The registry is one object for the app's life (pages.lazy / pages.eager).
  }, [url, registry]);

  return (
    <div className="flex min-h-screen flex-col">
      <Announcer message={announcement} />
      <Header />
      <main id="main" className="flex-1">
        {/* A new path is a new page (its state starts afresh); a new view of
            the same path keeps the page mounted, and focus with it. */}
        <ErrorBoundary key={pathOf(view.url)} view={view.url}>
          {registry.render(view.page, view.data, view.state)}
        </ErrorBoundary>
      </main>
      <Footer />
    </div>
  );
}

/** The path of a url made of a path and a query. */
function pathOf(url: string): string {
  return url.split("?")[0];
}

function applyMeta(registry: PageRegistry, page: PageId, data: PageDataMap[PageId] | undefined) {
  const meta = registry.meta(page, data);
  if (meta) document.title = meta.title;
}

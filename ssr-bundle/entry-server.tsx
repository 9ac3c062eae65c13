// The server bundle: evaluated once per V8 isolate, it defines
// globalThis.__ssr_render(url, bootstrapJson) for the Rust isolate pool (and
// __ssr_error_screen and __ssr_meta for client/build.mjs).
import "./polyfills";
import { renderToString } from "react-dom/server.browser";
import { StaticRouter } from "react-router";
import { App } from "../client/app/App";
import { ErrorScreen, GENERIC_ERROR } from "../client/components/ErrorScreen";
import { PreloadCollector } from "../client/components/Picture";
import { dataOf } from "../client/app/registry";
import type { Bootstrap, ImagePreload, RenderOutput } from "../client/lib/types";
import { errorDescription, errorTitle } from "../content/site/messages.json";
import { registry } from "./pages.eager";

function render(url: string, bootstrapJson: string): RenderOutput {
  const boot = JSON.parse(bootstrapJson) as Bootstrap;
  try {
    // The first priority image drawn is the one the head preloads.
    let preload: ImagePreload | undefined;
    const html = renderToString(
      <PreloadCollector.Provider value={(p) => void (preload ??= p)}>
        <StaticRouter location={url}>
          <App bootstrap={boot} registry={registry} />
        </StaticRouter>
      </PreloadCollector.Provider>,
    );
    const meta = registry.meta(boot.page, dataOf(boot));
    if (!meta) throw new Error(`no page module for ${boot.page}`);
    return { status: boot.status, title: meta.title, description: meta.description, html, page: boot.page, preload };
  } catch (err) {
    const html = renderToString(<ErrorScreen {...GENERIC_ERROR} />);
    return {
      status: 500,
      title: errorTitle,
      description: errorDescription,
      html,
      page: boot.page,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    };
  }
}

/** The error screen with `message` as its whole line: client/build.mjs
 *  renders it once at build time, and the server fills in the status and
 *  reason of the pages it makes without a render (overload, deadline). */
function errorScreen(message: string): string {
  return renderToString(<ErrorScreen message={message} />);
}

/** A page's own title and description, without route data: what
 *  client/build.mjs draws on the page's preview card. */
function pageMeta(page: Bootstrap["page"]): { title: string; description: string } {
  const meta = registry.meta(page, undefined);
  if (!meta) throw new Error(`no page module for ${page}`);
  return meta;
}

Object.assign(globalThis, { __ssr_render: render, __ssr_error_screen: errorScreen, __ssr_meta: pageMeta });

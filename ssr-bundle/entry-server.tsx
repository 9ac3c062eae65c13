// The server bundle: evaluated once per V8 isolate, it defines
// globalThis.__ssr_render(url, bootstrapJson) for the Rust isolate pool.
import "./polyfills";
import { renderToString } from "react-dom/server.browser";
import { StaticRouter } from "react-router";
import { App } from "../client/app/App";
import { ErrorScreen, GENERIC_ERROR } from "../client/components/ErrorScreen";
import type { Bootstrap, RenderResult } from "../client/lib/types";
import { registry } from "./pages.eager";

interface ServerRenderResult extends RenderResult {
  /** The message of a render that threw; the Rust side logs it. */
  error?: string;
  /** Its stack trace (the dev server maps it back to the sources). */
  stack?: string;
}

function render(url: string, bootstrapJson: string): ServerRenderResult {
  const boot = JSON.parse(bootstrapJson) as Bootstrap;
  try {
    const html = renderToString(
      <StaticRouter location={url}>
        <App bootstrap={boot} registry={registry} />
      </StaticRouter>,
    );
    const meta = registry.get(boot.page)?.meta(boot.data);
    if (!meta) throw new Error(`no page module for ${boot.page}`);
    return { status: boot.status, title: meta.title, description: meta.description, html, page: boot.page };
  } catch (err) {
    const html = renderToString(<ErrorScreen {...GENERIC_ERROR} />);
    return {
      status: 500,
      title: "Error — Citizen Wallet",
      description: "Unexpected Application Error!",
      html,
      page: boot.page,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    };
  }
}

(globalThis as unknown as { __ssr_render: typeof render }).__ssr_render = render;

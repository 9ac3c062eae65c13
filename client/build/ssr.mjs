// What the build reads from the server bundle it just made, run in a Node vm.
import vm from "node:vm";

/** A Node vm context in which the server bundle `code` has run: its
 *  globalThis has __ssr_render, __ssr_error_screen and __ssr_meta. */
export function ssrContext(code) {
  const context = vm.createContext({ console });
  vm.runInContext(code, context, { filename: "ssr.js" });
  return context;
}

/** The error screen's markup, made by the server bundle's own component,
 *  with ERROR_SLOT where the server writes the status and reason of an error
 *  page it makes without a render (server/render/document.rs). */
const ERROR_SLOT = "%ERROR%";
export function errorScreenTemplate(ssr) {
  const html = ssr.__ssr_error_screen(ERROR_SLOT);
  if (!html.includes(ERROR_SLOT)) throw new Error("the error screen does not show its message");
  return html;
}

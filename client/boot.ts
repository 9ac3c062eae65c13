// The one module a page's HTML names. The page is server-rendered and works
// before any script runs, so the app's modules are fetched only once the
// document has been parsed (module scripts run then): the first paint does
// not share the network with ~90 KB of JavaScript. The server lists the
// modules the page needs in `data-modules`, the entry first; all of them are
// requested at once (modulepreload), then the entry is imported and hydrates.
const script = document.querySelector<HTMLScriptElement>("script[data-modules]");
const [entry, ...chunks] = (script?.dataset.modules ?? "").split(" ").filter(Boolean);
for (const href of chunks) {
  const link = document.createElement("link");
  link.rel = "modulepreload";
  link.href = href;
  document.head.append(link);
}
if (entry) void import(entry);

export {};

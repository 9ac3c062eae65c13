// The one module a page's HTML names. The page is server-rendered and works
// before any script runs, so the app's modules are fetched only once the
// document has been parsed (module scripts run then): the first paint does
// not share the network with the JavaScript. The server lists the
// modules the page needs in `data-modules`, the entry first; all of them are
// requested at once (modulepreload), then the entry is imported and hydrates.
const [entry, ...chunks] = document.querySelector<HTMLElement>("[data-modules]")!.dataset.modules!.split(" ");
for (const href of chunks) document.head.append(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
import(entry);

export {};

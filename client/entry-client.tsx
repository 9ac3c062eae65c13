import { StrictMode, startTransition } from "react";
import { hydrateRoot } from "react-dom/client";
import { BrowserRouter } from "react-router";
import { App } from "./app/App";
import { registry } from "./app/pages.lazy";
import type { Bootstrap } from "./lib/types";

const boot = JSON.parse(document.getElementById("__SITE_DATA__")!.textContent!) as Bootstrap;
// The boot module preloads this page's chunk; have it in hand before
// hydrating so the first client render matches the server's HTML.
if (!boot.error) await registry.load(boot.page);

// Hydrated as a transition: React then works in slices of a few
// milliseconds and lets the browser answer input in between, instead of one
// long task the size of the page (Lighthouse's Total Blocking Time).
startTransition(() => {
  hydrateRoot(
    document.getElementById("root")!,
    <StrictMode>
      <BrowserRouter>
        <App bootstrap={boot} registry={registry} />
      </BrowserRouter>
    </StrictMode>,
  );
});

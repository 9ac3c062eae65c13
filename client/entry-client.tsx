import { StrictMode } from "react";
import { hydrateRoot } from "react-dom/client";
import { BrowserRouter } from "react-router";
import { App } from "./app/App";
import { registry } from "./app/pages.lazy";
import type { Bootstrap } from "./lib/types";

const boot = JSON.parse(document.getElementById("__SITE_DATA__")!.textContent!) as Bootstrap;
// The server modulepreloads this page's chunk; have it in hand before
// hydrating so the first client render matches the server's HTML.
if (!boot.error) await registry.load(boot.page);

hydrateRoot(
  document.getElementById("root")!,
  <StrictMode>
    <BrowserRouter>
      <App bootstrap={boot} registry={registry} />
    </BrowserRouter>
  </StrictMode>,
);

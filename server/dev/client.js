// citizen-site dev: reloads the page whenever the site is rebuilt. Only
// `citizen-site dev` serves this script and adds it to its pages.
const tag = document.querySelector('script[src="/__dev/client.js"]');
const shown = tag?.dataset.generation;
let problems = 0;

const events = new EventSource("/__dev/events");
events.addEventListener("site", (event) => {
  const site = JSON.parse(event.data);
  problems = site.problems;
  if (site.generation !== shown) return location.reload();
  // For tests and the curious: how many problems the site has now.
  document.documentElement.dataset.devProblems = String(problems);
});

// While some file is broken, a link is followed by a full page load, so the
// server can answer with the problem instead of the client showing the last
// good data.
document.addEventListener(
  "click",
  (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (problems === 0 || !link || link.target || link.origin !== location.origin) return;
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    location.assign(link.href);
  },
  true,
);
window.addEventListener("popstate", () => {
  if (problems > 0) location.reload();
});

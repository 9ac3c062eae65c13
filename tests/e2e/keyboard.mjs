// What a keyboard user does and what a screen reader is given, for the
// browser tests: keys pressed one at a time, the focused element described
// as a person would name it, the route announcer's text, and the
// accessibility tree's view of an element (Chromium's, through the DevTools
// protocol: the name, description and states a screen reader reads).

/** The focused element: its tag, id, accessible-ish name and where it is. */
export function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return { tag: "body", text: "" };
    const text = (el.getAttribute("aria-label") || el.textContent || el.getAttribute("name") || "").trim().replace(/\s+/g, " ");
    return {
      tag: el.tagName.toLowerCase(),
      id: el.id,
      text,
      href: el.getAttribute("href"),
      inMain: el.closest("main") !== null,
      inHeader: el.closest("header") !== null,
      inFooter: el.closest("footer") !== null,
      focusVisible: el.matches(":focus-visible"),
    };
  });
}

/** Waits until the element with id `id` has focus (up to `timeout` ms):
 *  a page's `autofocus` is applied by the browser in a rendering update
 *  after the page has loaded (HTML's "flush autofocus candidates"), not
 *  at load itself. Returns the focused element's id as it was last read. */
export async function focusArrives(page, id, timeout = 5_000) {
  const until = Date.now() + timeout;
  for (;;) {
    const now = await page.evaluate(() => document.activeElement?.id ?? "");
    if (now === id || Date.now() > until) return now;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Presses `key` and says where focus went. */
export async function press(page, key) {
  await page.keyboard.press(key);
  return focused(page);
}

/** Presses `key` (Tab by default) until the focused element matches. */
export async function tabTo(page, match, { key = "Tab", max = 250 } = {}) {
  const seen = [];
  for (let i = 0; i < max; i++) {
    const f = await press(page, key);
    if (match(f)) return f;
    seen.push(f.text.slice(0, 30));
  }
  throw new Error(`no focus stop matched after ${max} presses of ${key}: ${seen.slice(-15).join(" | ")}`);
}

/** The route announcer's current words (a repeat's no-break space dropped). */
export function announced(page) {
  return page.evaluate(() => document.getElementById("route-announcer")?.textContent.replace(/\u00a0/g, "").trim() ?? null);
}

/** Waits until the route announcer says `text`. */
export async function waitAnnounced(page, text) {
  try {
    await page.waitForFunction(
      (t) => document.getElementById("route-announcer")?.textContent.replace(/\u00a0/g, "").trim() === t,
      text,
      { timeout: 10_000 },
    );
  } catch {
    throw new Error(`the announcer says ${JSON.stringify(await announced(page))}, not ${JSON.stringify(text)}`);
  }
}

/** The focused element as the accessibility tree has it: role, name,
 *  description and whether it is marked invalid. */
export async function focusedNode(page) {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { result } = await cdp.send("Runtime.evaluate", { expression: "document.activeElement" });
    const { nodes } = await cdp.send("Accessibility.getPartialAXTree", { objectId: result.objectId, fetchRelatives: false });
    const node = nodes[0];
    const prop = (name) => node.properties?.find((p) => p.name === name)?.value?.value;
    return {
      role: node.role?.value,
      name: node.name?.value ?? "",
      description: node.description?.value ?? "",
      invalid: prop("invalid") ?? "false",
    };
  } finally {
    await cdp.detach();
  }
}

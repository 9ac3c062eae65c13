// The measurements behind tests/e2e/wcag.test.mjs, each a function run in
// the page (page.evaluate): where focus sits against the sticky header,
// which targets are too small and too close, and which text is clipped or
// overlapped.

/** Where the focused element is against the sticky header: null once focus
 *  has left the page (past its last stop). */
export function focusPlace() {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const header = document.querySelector("header");
  const r = el.getBoundingClientRect();
  const headerBottom = header.getBoundingClientRect().bottom;
  const name = `${el.tagName.toLowerCase()} "${(el.getAttribute("aria-label") || el.textContent || el.id).trim().slice(0, 40)}"`;
  return { name, inHeader: header.contains(el), top: r.top, headerBottom };
}

/** WCAG 2.5.8: each target at least 24 by 24 CSS px, or a link inside a
 *  line of text, or spaced so that a 24 px circle on its centre touches no
 *  other target and no other undersized target's circle. */
export function smallTargets() {
  const selector = "a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [tabindex]:not([tabindex='-1'])";
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return r.width > 1 && r.height > 1 && style.visibility !== "hidden" && !el.closest("[aria-hidden=true]");
  };
  // A box inside a label is clicked through its label: the label is the target.
  const targets = [...document.querySelectorAll(selector)]
    .filter((el) => el.tabIndex >= 0 && shown(el))
    .map((el) => {
      const box = (el.type === "checkbox" || el.type === "radio") && el.closest("label") ? el.closest("label") : el;
      return { el, r: box.getBoundingClientRect() };
    });
  const inline = (el) => {
    if (el.tagName !== "A" || getComputedStyle(el).display !== "inline") return false;
    const around = el.parentElement.textContent.replace(el.textContent, "").trim();
    return around.length > 0;
  };
  const small = targets.filter((t) => (t.r.width < 24 || t.r.height < 24) && !inline(t.el));
  const centre = (r) => ({ x: r.left + r.width / 2, y: r.top + r.height / 2 });
  const distanceToBox = (p, r) => Math.hypot(Math.max(r.left - p.x, 0, p.x - r.right), Math.max(r.top - p.y, 0, p.y - r.bottom));
  const bad = [];
  for (const t of small) {
    const c = centre(t.r);
    const crowded = targets.some((o) => {
      if (o === t || o.el.contains(t.el) || t.el.contains(o.el)) return false;
      if (distanceToBox(c, o.r) < 12) return true;
      const oc = centre(o.r);
      return small.includes(o) && Math.hypot(c.x - oc.x, c.y - oc.y) < 24;
    });
    if (crowded) {
      const name = (t.el.getAttribute("aria-label") || t.el.textContent).trim().slice(0, 30);
      bad.push(`${t.el.tagName.toLowerCase()} "${name}" ${Math.round(t.r.width)}x${Math.round(t.r.height)}`);
    }
  }
  return bad;
}

/** Text that the WCAG 1.4.12 spacing makes clipped (cut off by a box that
 *  hides its overflow) or overlapping other text. */
export function spacingProblems() {
  const visible = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === "none" || s.visibility === "hidden" || e.hidden) return false;
      // Text for screen readers only (the sr-only 1 px box).
      if (s.position === "absolute" && e.getBoundingClientRect().width <= 1) return false;
      if (e.getAttribute("aria-hidden") === "true") return false;
    }
    return true;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.textContent.trim() && n.parentElement && visible(n.parentElement) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT),
  });
  const lines = [];
  const problems = [];
  const label = (el) => `${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 40)}"`;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      if (r.width < 1 || r.height < 1) continue;
      lines.push({ r, el: n.parentElement });
      // Clipped: a box that hides overflow cuts this line.
      for (let a = n.parentElement; a && a !== document.body; a = a.parentElement) {
        const s = getComputedStyle(a);
        if (s.overflowX === "visible" && s.overflowY === "visible") continue;
        const b = a.getBoundingClientRect();
        if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
          problems.push(`clipped: ${label(n.parentElement)} by ${label(a).slice(0, 20)}`);
          break;
        }
      }
    }
  }
  // Overlapping: two lines of different elements sharing more than a sliver.
  lines.sort((a, b) => a.r.top - b.r.top);
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + 1; j < lines.length && lines[j].r.top < lines[i].r.bottom; j++) {
      const [a, b] = [lines[i], lines[j]];
      if (a.el === b.el || a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 2 && h > 2) problems.push(`overlap: ${label(a.el)} and ${label(b.el)}`);
    }
  }
  return [...new Set(problems)];
}

/** WCAG 1.4.12's spacing: line height 1.5, paragraph spacing 2 em, letter
 *  spacing 0.12 em, word spacing 0.16 em (of the font size). */
export const TEXT_SPACING = `* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; }
p { margin-bottom: 2em !important; }`;

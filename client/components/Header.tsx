import { Menu, X } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { Link, useLocation } from "react-router";
import { Logo } from "./Logo";

/** Spec section 2: the same entries in the desktop and the mobile menu. */
export const NAV_ITEMS = [
  { label: "Our Wallets", to: "/wallets" },
  { label: "Pricing", to: "/pricing" },
  { label: "About", to: "/about" },
  { label: "Community", to: "/community" },
  { label: "Blog", to: "/blog" },
  { label: "CTZN Token", to: "/ctzn" },
] as const;

export function Header() {
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const { pathname } = useLocation();
  // A followed link (or Back) closes the mobile menu: the menu is reset while
  // rendering the new path, so it never paints open over the new page.
  const [menuPath, setMenuPath] = useState(pathname);
  if (menuPath !== pathname) {
    setMenuPath(pathname);
    setOpen(false);
  }
  // Escape closes the open menu from anywhere in it and puts focus back on
  // its button (where a keyboard user opened it).
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      toggle.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open]);

  return (
    <header
      className="sticky top-0 z-40 border-b border-slate-200 bg-white/95 backdrop-blur"
      // The open menu closes when focus moves on to an element in the page,
      // so it never covers the element that has focus.
      onBlur={(e) => {
        const next = e.relatedTarget;
        if (open && next instanceof Node && !e.currentTarget.contains(next)) setOpen(false);
      }}
    >
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-4 focus:top-4 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2">
        Skip to content
      </a>
      <nav aria-label="Main" className="mx-auto flex h-16 max-w-7xl items-center justify-between px-4 sm:px-6 lg:px-8">
        <Link to="/" className="flex items-center gap-2 font-semibold text-slate-900" aria-label="Citizen Wallet home">
          <Logo className="h-8 w-8" />
          <span className="text-lg">Citizen Wallet</span>
        </Link>
        <ul className="hidden items-center gap-8 md:flex">
          {NAV_ITEMS.map((item) => (
            <li key={item.to}>
              <Link to={item.to} className="text-sm font-medium text-slate-700 hover:text-brand-600">
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
        <div className="hidden md:block">
          <Link to="/pricing" className="rounded-lg bg-brand-600 px-4 py-2 text-sm font-semibold text-white hover:bg-brand-700">
            Get Started
          </Link>
        </div>
        <button
          ref={toggle}
          type="button"
          className="inline-flex items-center justify-center rounded-md p-2 text-slate-700 hover:bg-slate-100 md:hidden"
          aria-controls="mobile-menu"
          aria-expanded={open}
          aria-label={open ? "Close menu" : "Open menu"}
          onClick={() => setOpen((o) => !o)}
        >
          {open ? <X className="h-6 w-6" aria-hidden="true" /> : <Menu className="h-6 w-6" aria-hidden="true" />}
        </button>
      </nav>
      {open && (
        <div id="mobile-menu" className="border-t border-slate-200 bg-white md:hidden">
          <ul className="space-y-1 px-4 py-3">
            {NAV_ITEMS.map((item) => (
              <li key={item.to}>
                <Link to={item.to} className="block rounded-md px-3 py-2 text-base font-medium text-slate-700 hover:bg-slate-50">
                  {item.label}
                </Link>
              </li>
            ))}
            <li className="pt-2">
              <Link to="/pricing" className="block rounded-lg bg-brand-600 px-3 py-2 text-center text-base font-semibold text-white">
                Get Started
              </Link>
            </li>
          </ul>
        </div>
      )}
    </header>
  );
}

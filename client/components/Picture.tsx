import { createContext, useContext } from "react";
import type { ImagePreload, SiteImage } from "../lib/types";
import layouts from "./picture-layouts.json";

/** Where an image is shown (client/components/picture-layouts.json): the
 *  `sizes` the browser picks a width with. */
export type Layout = "article" | "card" | "logo";

/** Hears the preload of the image a page paints first (its LCP: the
 *  head's `<link rel="preload">`, server/render/document.rs) of a page's priority image during a server render
 *  (ssr-bundle/entry-server.tsx provides it; the browser has none). */
export const PreloadCollector = createContext<((preload: ImagePreload) => void) | null>(null);

export interface PictureProps {
  image: SiteImage;
  /** Its text alternative; "" for a decorative image. */
  alt: string;
  layout: Layout;
  /** The page's largest paint: fetched at once, first, and preloaded from
   *  the head. Every other image is lazy and decoded off the main thread. */
  priority?: boolean;
  /** Classes of the `<img>` (its box, the crop: `object-cover`). */
  className?: string;
  title?: string;
}

/** The one way the site shows an image of content/images/: a `<picture>`
 *  with an AVIF and a WebP source and an `<img>` in the image's own
 *  format, each a `srcset` of the widths the build made with the layout's
 *  `sizes`; the `<img>` carries the image's true size (its aspect ratio)
 *  and, for a photo, the class that paints its blurred preview while it
 *  loads. An SVG is the `<img>` alone. The same markup is written into a
 *  post's text (`pictureHtml`), so a photo there is shown as a cover is. */
export function Picture(props: PictureProps) {
  const collect = useContext(PreloadCollector);
  if (props.priority && collect) collect(preloadOf(props.image, props.layout));
  return <picture dangerouslySetInnerHTML={{ __html: pictureInner(props) }} />;
}

/** The `<picture>` element of `props`, as HTML. */
export function pictureHtml(props: PictureProps): string {
  return `<picture>${pictureInner(props)}</picture>`;
}

/** The preload link's attributes for an image: its best format's srcset. */
export function preloadOf(image: SiteImage, layout: Layout): ImagePreload {
  const best = image.sources?.[0];
  if (!best) return { href: image.src };
  return { href: image.src, imagesrcset: forLayout(best.srcset, layout), imagesizes: layouts[layout].sizes, type: best.type };
}

/** The entries of a `srcset` the layout shows: those from its narrowest
 *  width to its widest (the build makes every layout's widths of every
 *  image; a logo has no use for a 1440 px one), or the image's widest when
 *  it is narrower than them all. */
function forLayout(srcset: string, layout: Layout): string {
  const widths: number[] = layouts[layout].widths;
  const entries = srcset.split(", ").map((entry) => ({ entry, width: Number(entry.slice(entry.lastIndexOf(" ") + 1, -1)) }));
  const shown = entries.filter((e) => e.width >= widths[0] && e.width <= widths[widths.length - 1]);
  return (shown.length > 0 ? shown : entries.slice(-1)).map((e) => e.entry).join(", ");
}

function pictureInner({ image, alt, layout, priority, className, title }: PictureProps): string {
  const sources = image.sources ?? [];
  const sizes = layouts[layout].sizes;
  const fallback = sources[sources.length - 1];
  const html = sources
    .slice(0, -1)
    .map((s) => `<source${attributes([["type", s.type], ["srcset", forLayout(s.srcset, layout)], ["sizes", sizes]])}>`);
  const img = attributes([
    ["src", image.src],
    ["srcset", fallback && forLayout(fallback.srcset, layout)],
    ["sizes", fallback ? sizes : undefined],
    ["width", String(image.width)],
    ["height", String(image.height)],
    ["alt", alt],
    ["title", title],
    ["loading", priority ? "eager" : "lazy"],
    ["decoding", priority ? undefined : "async"],
    ["fetchpriority", priority ? "high" : undefined],
    ["class", [className, image.placeholder].filter(Boolean).join(" ") || undefined],
  ]);
  html.push(`<img${img}>`);
  return html.join("");
}

function attributes(list: [string, string | undefined][]): string {
  return list
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` ${name}="${escapeAttribute(value as string)}"`)
    .join("");
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

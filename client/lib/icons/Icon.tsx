// Content names its icons ("Users"); the client draws them. Each page has
// its own set (client/features/<page>/icons.ts), typed by the page's name list
// in content/site/types.ts: tsc fails when content names an icon its page's
// set lacks, or a set holds one its page does not name.
//
// The sets import each icon from its own file (lucide-react/icons/users),
// not from the "lucide-react" index: esbuild counts every icon file the
// index re-exports as used by every chunk that imports the index, so an
// icon named there lands in the chunk every page loads (the header imports
// the index). One set file per page, too: a file shared by pages takes its
// icons into a chunk they share.
import type { LucideIcon, LucideProps } from "lucide-react";

/** `<Icon set={NFC_ICONS} name={step.icon} className="h-6 w-6" />`: the icon
 *  `name` from the page's set. */
export function Icon<N extends string>({ set, name, ...props }: { set: Record<N, LucideIcon>; name: N } & LucideProps) {
  const Drawn: LucideIcon = set[name];
  return <Drawn {...props} />;
}

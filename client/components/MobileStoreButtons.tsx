import { Apple, Play } from "lucide-react";
import { LINKS } from "../../content/site/links";
import { MOBILE_TEXT } from "../../content/site/products";
import { ExternalLink } from "./ExternalLink";

/** The two store download buttons (App Store, Google Play), new tab each. */
export function MobileStoreButtons({ dark = false, className = "" }: { dark?: boolean; className?: string }) {
  const style = dark
    ? "bg-white text-slate-900 hover:bg-slate-100"
    : "bg-slate-900 text-white hover:bg-slate-700";
  const stores = [
    { href: LINKS.appStore, label: MOBILE_TEXT.appStore, Icon: Apple },
    { href: LINKS.googlePlay, label: MOBILE_TEXT.googlePlay, Icon: Play },
  ];
  return (
    <div className={`flex flex-col justify-center gap-3 sm:flex-row ${className}`}>
      {stores.map(({ href, label, Icon }) => (
        <ExternalLink
          key={href}
          href={href}
          className={`inline-flex items-center justify-center gap-2 rounded-xl px-5 py-3 text-sm font-semibold ${style}`}
        >
          <Icon className="h-5 w-5" aria-hidden="true" />
          {label}
        </ExternalLink>
      ))}
    </div>
  );
}

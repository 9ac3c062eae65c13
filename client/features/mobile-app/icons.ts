// The icons content/site/products.ts names for the MobileApp page (MobileIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import Contact from "lucide-react/icons/contact";
import Globe from "lucide-react/icons/globe";
import Layers from "lucide-react/icons/layers";
import QrCode from "lucide-react/icons/qr-code";
import ShieldCheck from "lucide-react/icons/shield-check";
import Ticket from "lucide-react/icons/ticket";
import type { MobileIcon } from "../../../content/site/types";

export const MOBILE_ICONS = { Contact, Globe, Layers, QrCode, ShieldCheck, Ticket } satisfies Record<MobileIcon, LucideIcon>;

// The icons ./content.ts names for the Home page (HomeIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import ArrowLeftRight from "lucide-react/icons/arrow-left-right";
import CalendarDays from "lucide-react/icons/calendar-days";
import Cloud from "lucide-react/icons/cloud";
import Coins from "lucide-react/icons/coins";
import ContactRound from "lucide-react/icons/contact-round";
import Gift from "lucide-react/icons/gift";
import Globe from "lucide-react/icons/globe";
import Handshake from "lucide-react/icons/handshake";
import Link2 from "lucide-react/icons/link-2";
import MapPin from "lucide-react/icons/map-pin";
import Network from "lucide-react/icons/network";
import Nfc from "lucide-react/icons/nfc";
import QrCode from "lucide-react/icons/qr-code";
import Send from "lucide-react/icons/send";
import Store from "lucide-react/icons/store";
import Ticket from "lucide-react/icons/ticket";
import Trophy from "lucide-react/icons/trophy";
import type { HomeIcon } from "../../../content/site/types";

export const HOME_ICONS = {
  ArrowLeftRight,
  CalendarDays,
  Cloud,
  Coins,
  ContactRound,
  Gift,
  Globe,
  Handshake,
  Link2,
  MapPin,
  Network,
  Nfc,
  QrCode,
  Send,
  Store,
  Ticket,
  Trophy,
} satisfies Record<HomeIcon, LucideIcon>;

// The icons content/site/products.ts names for the NfcWallet page (NfcIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import CalendarDays from "lucide-react/icons/calendar-days";
import CreditCard from "lucide-react/icons/credit-card";
import HandCoins from "lucide-react/icons/hand-coins";
import Store from "lucide-react/icons/store";
import Users from "lucide-react/icons/users";
import Zap from "lucide-react/icons/zap";
import type { NfcIcon } from "../../../content/site/types";

export const NFC_ICONS = { CalendarDays, CreditCard, HandCoins, Store, Users, Zap } satisfies Record<NfcIcon, LucideIcon>;

// The icons ./content.ts names for the Wallets page (WalletsIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import Globe from "lucide-react/icons/globe";
import MessageSquare from "lucide-react/icons/message-square";
import Nfc from "lucide-react/icons/nfc";
import Smartphone from "lucide-react/icons/smartphone";
import type { WalletsIcon } from "../../../content/site/types";

export const WALLETS_ICONS = { Globe, MessageSquare, Nfc, Smartphone } satisfies Record<WalletsIcon, LucideIcon>;

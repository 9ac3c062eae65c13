// The icons content/site/products.ts names for the DiscordWallet page (DiscordIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import BadgeCheck from "lucide-react/icons/badge-check";
import Gift from "lucide-react/icons/gift";
import Languages from "lucide-react/icons/languages";
import Lock from "lucide-react/icons/lock";
import PartyPopper from "lucide-react/icons/party-popper";
import Smartphone from "lucide-react/icons/smartphone";
import Trophy from "lucide-react/icons/trophy";
import Vote from "lucide-react/icons/vote";
import Wallet from "lucide-react/icons/wallet";
import Zap from "lucide-react/icons/zap";
import type { DiscordIcon } from "../../../content/site/types";

export const DISCORD_ICONS = {
  BadgeCheck,
  Gift,
  Languages,
  Lock,
  PartyPopper,
  Smartphone,
  Trophy,
  Vote,
  Wallet,
  Zap,
} satisfies Record<DiscordIcon, LucideIcon>;

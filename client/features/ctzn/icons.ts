// The icons ./content.ts names for the Ctzn page (CtznIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import Coins from "lucide-react/icons/coins";
import HandCoins from "lucide-react/icons/hand-coins";
import Sprout from "lucide-react/icons/sprout";
import Users from "lucide-react/icons/users";
import type { CtznIcon } from "../../../content/site/types";

export const CTZN_ICONS = { Coins, HandCoins, Sprout, Users } satisfies Record<CtznIcon, LucideIcon>;

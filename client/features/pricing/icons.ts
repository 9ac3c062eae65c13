// The icons ./content.ts names for the Pricing page (PricingIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import Crown from "lucide-react/icons/crown";
import MessageCircle from "lucide-react/icons/message-circle";
import Server from "lucide-react/icons/server";
import Smartphone from "lucide-react/icons/smartphone";
import type { PricingIcon } from "../../../content/site/types";

export const PRICING_ICONS = { Crown, MessageCircle, Server, Smartphone } satisfies Record<PricingIcon, LucideIcon>;

// The icons ./content.ts names for the About page (AboutIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import Accessibility from "lucide-react/icons/accessibility";
import Eye from "lucide-react/icons/eye";
import Leaf from "lucide-react/icons/leaf";
import Users from "lucide-react/icons/users";
import type { AboutIcon } from "../../../content/site/types";

export const ABOUT_ICONS = { Accessibility, Eye, Leaf, Users } satisfies Record<AboutIcon, LucideIcon>;

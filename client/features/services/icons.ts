// The icons ./content.ts names for the Services page (ServicesIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import Code from "lucide-react/icons/code";
import FileCode2 from "lucide-react/icons/file-code-2";
import Headphones from "lucide-react/icons/headphones";
import ShieldCheck from "lucide-react/icons/shield-check";
import Users from "lucide-react/icons/users";
import Wallet from "lucide-react/icons/wallet";
import type { ServicesIcon } from "../../../content/site/types";

export const SERVICES_ICONS = { Code, FileCode2, Headphones, ShieldCheck, Users, Wallet } satisfies Record<ServicesIcon, LucideIcon>;

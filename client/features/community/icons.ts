// The icons ./content.ts names for the Community page (CommunityIcon); see client/lib/icons/Icon.tsx.
import type { LucideIcon } from "lucide-react";
import AtSign from "lucide-react/icons/at-sign";
import BookOpen from "lucide-react/icons/book-open";
import Code from "lucide-react/icons/code";
import MessageCircle from "lucide-react/icons/message-circle";
import MessagesSquare from "lucide-react/icons/messages-square";
import Presentation from "lucide-react/icons/presentation";
import Video from "lucide-react/icons/video";
import type { CommunityIcon } from "../../../content/site/types";

export const COMMUNITY_ICONS = {
  AtSign,
  BookOpen,
  Code,
  MessageCircle,
  MessagesSquare,
  Presentation,
  Video,
} satisfies Record<CommunityIcon, LucideIcon>;

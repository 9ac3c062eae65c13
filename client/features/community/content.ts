// Community page content (spec sections 2 and 9): channels, resources,
// testimonials.
import { LINKS } from "../../../content/site/links";
import type { Channel, Resource, Testimonial } from "../../../content/site/types";

export const COMMUNITY_INTRO = {
  title: "Join Our Community",
  lead: "Organisers, merchants, developers and everyday users sharing what works for community currencies. Come say hello.",
} as const;

export const CHANNELS_INTRO = {
  title: "Connect With Us",
  lead: "Pick the place that suits you best.",
  buttonText: "Join Now",
} as const;

export const CHANNELS: Channel[] = [
  {
    name: "Discord",
    kind: "Chat community",
    description: "Chat with the team and other organisers, get help with your setup and hear about releases first.",
    members: "2.5K members",
    link: LINKS.discord,
    icon: "MessageCircle",
    gradient: { from: "#4f46e5", to: "#7c3aed" },
  },
  {
    name: "X / Twitter",
    kind: "Social network",
    description: "Follow launches, community stories and product news as they happen.",
    members: "5K followers",
    link: LINKS.twitter,
    icon: "AtSign",
    gradient: { from: "#0f172a", to: "#475569" },
  },
  {
    name: "GitHub",
    kind: "Code hosting",
    description: "Read the code, open issues and contribute to the open-source wallet and its tools.",
    members: "800 contributors",
    link: LINKS.github,
    icon: "Code",
    gradient: { from: "#047857", to: "#0d9488" },
  },
];

export const RESOURCES_INTRO = {
  title: "Community Resources",
  lead: "Guides and sessions to help you launch and grow your currency.",
  buttonText: "Access",
} as const;

export const RESOURCES: Resource[] = [
  {
    title: "Documentation",
    description: "Set up a community, deploy a token and configure the wallet step by step.",
    link: "#",
    type: "Docs",
    icon: "BookOpen",
  },
  {
    title: "Video Tutorials",
    description: "Short videos showing payments, vouchers and NFC cards in action.",
    link: "#",
    type: "Tutorial",
    icon: "Video",
  },
  {
    title: "Community Forum",
    description: "Ask questions and share lessons learned with other organisers.",
    link: "#",
    type: "Forum",
    icon: "MessagesSquare",
  },
  {
    title: "Webinars",
    description: "Live sessions with the team and communities that have already launched.",
    link: "#",
    type: "Event",
    icon: "Presentation",
  },
];

export const TESTIMONIALS_INTRO = {
  title: "What Our Community Says",
} as const;

export const TESTIMONIALS: Testimonial[] = [
  {
    name: "Amélie Laurent",
    role: "Local currency organiser",
    content: "Our members were paying each other within minutes of the launch. Nobody had to learn what a gas fee is, and that made all the difference.",
    rating: 5,
  },
  {
    name: "Jonas Verbeke",
    role: "Market stall owner",
    content: "I take payments with my phone and customers just tap their card. It is quicker than counting change.",
    rating: 5,
  },
  {
    name: "Priya Raman",
    role: "Festival coordinator",
    content: "We ran our whole festival on event tokens. Setup was simple and the support from the team was excellent.",
    rating: 5,
  },
];

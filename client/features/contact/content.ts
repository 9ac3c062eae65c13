import tagOptions from "../../../content/site/intro-tags.json";
import type { ContactField } from "../../../content/site/types";
// Named imports: a page ships only the messages it uses.
import { missingFields, submitFailed, submitNoSuccess } from "../../../content/site/messages.json";
// The intro request form (spec sections 3, 5, 8 and 9): its fields, the tag
// options and every message the form can show.

/** The hidden field bots fill and people never see (the server keeps such
 *  requests aside instead of forwarding them). */
export const HONEYPOT = { name: "fax", label: "Fax number (leave this empty)" } as const;

export const CONTACT_ENDPOINT = "/api/save-to-notion";

/** The seven tag options (spec section 3); the server validates against the
 *  same file. */
export const TAG_OPTIONS: readonly string[] = tagOptions;

/** The form's text fields, labelled. Their names are the server's own
 *  (IntroForm in server/intro/mod.rs): the form does not compile while the
 *  two differ (./ContactForm.tsx). */
export const CONTACT_FIELDS = [
  { name: "name", label: "Community Name", type: "text", required: true, placeholder: "e.g. Brussels Pay", autoComplete: "organization" },
  { name: "contactPerson", label: "Contact Person", type: "text", required: false, placeholder: "Your name", autoComplete: "name" },
  { name: "email", label: "Email", type: "email", required: true, placeholder: "you@example.org", autoComplete: "email" },
  { name: "website", label: "Website", type: "url", required: false, placeholder: "https://", autoComplete: "url" },
  { name: "description", label: "Description", type: "textarea", required: false, placeholder: "Who takes part, what you would like to pay for, and when you hope to start." },
] as const satisfies readonly ContactField[];

/** Milliseconds between a successful submit and the move to the home page. */
export const REDIRECT_AFTER_SUBMIT_MS = 2000;

export const CONTACT_MESSAGES = {
  missingFields,
  successTitle: "Request submitted!",
  successDescription: "Thank you for your submission. We'll get back to you soon!",
  errorTitle: "Error",
  noSuccess: submitNoSuccess,
  fallbackError: submitFailed,
  submit: "Submit Request",
  submitting: "Submitting...",
};

export const CONTACT_TEXT = {
  title: "Request an Intro",
  lead: "Tell us about your community and what you would like your currency to do. We read every request and reply by email.",
  tagsLegend: "What are you interested in?",
  tagsHint: "Pick as many as fit.",
  requiredHint: "Fields marked * are required.",
  asideTitle: "What happens next",
  asideSteps: [
    "We read your request and look at your community's website.",
    "We email you to set up a short introduction call.",
    "Together we pick the wallets and plan that suit your members.",
  ],
  emailPrompt: "Prefer email? Write to us at",
};

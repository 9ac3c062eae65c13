// ESLint for the front end's TypeScript: the app (client/), the server-side
// entry (ssr-bundle/) and the site's content modules (content/). Run with
// `npm run lint`; a gate of .ci/run (no warnings allowed).
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import react from "eslint-plugin-react";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default defineConfig([
  {
    files: ["client/**/*.{ts,tsx}", "ssr-bundle/**/*.{ts,tsx}", "content/**/*.{ts,tsx}"],
    extends: [
      js.configs.recommended,
      tseslint.configs.recommended,
      react.configs.flat.recommended,
      react.configs.flat["jsx-runtime"],
      reactHooks.configs.flat.recommended,
    ],
    settings: { react: { version: "detect" } },
    rules: {
      // A dependency missing from an effect's list is a stale-value bug, not a style point.
      "react-hooks/exhaustive-deps": "error",
      // Pages that ignore their props still take them (`_props: PageProps`): the
      // registry calls every page the same way.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // content/ is data (README, Content), and so is each page's own content
    // (client/features/<page>/content.ts): it imports other content, its own
    // types, JSON and images, and nothing from client code or a package; and
    // it defines no functions (the logic that reads it lives beside it).
    files: ["content/**/*.{ts,tsx}", "client/features/*/content.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^(?!\\.{1,2}/)", message: "content/ imports only other content (relative paths), not packages." }, { group: ["**/client/**"], message: "content holds data only: logic and components live in client/." }] },
      ],
      "no-restricted-syntax": [
        "error",
        { selector: ":function", message: "content/ holds data only: functions go in client/lib/." },
      ],
    },
  },
  {
    // A feature is one page's folder: it uses the shared parts
    // (client/components, client/lib) and never reaches into another page's.
    files: ["client/features/**/*.{ts,tsx}"],
    ignores: ["client/features/*/content.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^\\.\\./(?!\\.\\./)", message: "a feature does not import another feature's files: share it through client/components/ or client/lib/." }] },
      ],
    },
  },
]);

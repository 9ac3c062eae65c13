// Which of the intro form's fields the visitor must fix, and what to tell
// them at each one (spec section 5: name and email required, the browser
// checks the email and URL types). The words are the server's too
// (content/site/messages.json), so the form after a post without JavaScript
// marks the same fields the same way.
import { fieldErrors } from "../../../content/site/messages.json";
import type { FieldError, IntroForm } from "../../lib/types";

/** The form's text inputs: the server's fields but the tag boxes, the
 *  submission id and the honeypot. */
export type TextField = Exclude<keyof IntroForm, "tags" | "submissionId" | "fax">;

/** Each field in error with what to do, in the form's order. */
export type FieldMarks = Partial<Record<TextField, string>>;

/** What is wrong with one field of `form` as it stands, if anything. */
export function checkField(form: HTMLFormElement, name: TextField): string | undefined {
  const input = form.elements.namedItem(name);
  if (!(input instanceof HTMLInputElement || input instanceof HTMLTextAreaElement)) return undefined;
  const empty = input.value.trim() === "";
  if (name === "name" && empty) return fieldErrors.nameMissing;
  if (name === "email" && empty) return fieldErrors.emailMissing;
  // The browser's own check of the input's type (the form is not validated
  // natively once the script runs: these marks replace its bubbles).
  if (!empty && input.validity.typeMismatch) {
    if (name === "email") return fieldErrors.emailInvalid;
    if (name === "website") return fieldErrors.websiteInvalid;
  }
  return undefined;
}

/** Every field of `form` in error, in `order`. */
export function checkForm(form: HTMLFormElement, order: readonly TextField[]): FieldMarks {
  const marks: FieldMarks = {};
  for (const name of order) {
    const problem = checkField(form, name);
    if (problem) marks[name] = problem;
  }
  return marks;
}

/** The server's marks (a refused post) on the form's text fields. */
export function marksOf(fields: readonly FieldError[] | undefined, order: readonly TextField[]): FieldMarks {
  const marks: FieldMarks = {};
  for (const name of order) {
    const mark = fields?.find((f) => f.field === name);
    if (mark) marks[name] = mark.message;
  }
  return marks;
}

/** The first field in error, in `order`. */
export function firstMarked(marks: FieldMarks, order: readonly TextField[]): TextField | undefined {
  return order.find((name) => marks[name] !== undefined);
}

import { LoaderCircle, Send } from "lucide-react";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import {
  CONTACT_ENDPOINT,
  CONTACT_FIELDS,
  CONTACT_MESSAGES,
  CONTACT_TEXT,
  HONEYPOT,
  REDIRECT_AFTER_SUBMIT_MS,
  TAG_OPTIONS,
} from "./content";
import type { ContactField } from "../../../content/site/types";
import type { ApiFailure, Assert, ContactData, IntroForm, IntroStored, Same } from "../../lib/types";
import { Toaster, useToasts } from "./Toast";
import { checkField, checkForm, firstMarked, marksOf, type FieldMarks, type TextField } from "./checks";

const INPUT_CLASS =
  "mt-1 block w-full rounded-lg bg-white px-3 py-2 text-slate-900 shadow-sm placeholder:text-slate-400 focus:border-brand-600 focus:outline-none focus:ring-2 focus:ring-brand-600/30";
/** A field's border: thicker and red in error (its message says why). */
const BORDER_CLASS = { ok: "border border-slate-300", error: "border-2 border-red-700" };

/** The labelled fields of the content are exactly these. */
export type FieldsAreTheServers = Assert<Same<(typeof CONTACT_FIELDS)[number]["name"], TextField>>;
const FIELDS: readonly (ContactField & { name: TextField })[] = CONTACT_FIELDS;
const ORDER: readonly TextField[] = FIELDS.map((f) => f.name);

/** Reads the form as the JSON the save-to-notion function expects. */
function readForm(form: HTMLFormElement): Omit<IntroForm, "submissionId"> {
  const fd = new FormData(form);
  const text = (key: string) => String(fd.get(key) ?? "").trim();
  return {
    name: text("name"),
    contactPerson: text("contactPerson"),
    email: text("email"),
    website: text("website"),
    description: text("description"),
    tags: fd.getAll("tags").map(String),
    fax: text(HONEYPOT.name),
  };
}

/** A random (version 4) UUID; crypto.randomUUID only exists on https pages. */
function newSubmissionId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The intro request form. Without JavaScript it posts as a regular form; with
 * it, the request goes out as JSON and the answer shows as a toast.
 */
export type ContactFormState = Partial<ContactData>;

export function ContactForm({ initial = {} }: { initial?: ContactFormState }) {
  const navigate = useNavigate();
  const { toasts, toast, dismiss } = useToasts();
  const [submitting, setSubmitting] = useState(false);
  const [validation, setValidation] = useState<string | null>(null);
  // The fields to fix: from a refused post without JavaScript (the server's
  // marks, and the first of them has focus as the page loads), then from
  // each submit.
  const [refused] = useState<FieldMarks>(() => marksOf(initial.fields, ORDER));
  const [marks, setMarks] = useState<FieldMarks>(refused);
  const formRef = useRef<HTMLFormElement>(null);
  const focusAfterMarks = useRef<TextField | undefined>(undefined);
  const redirect = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // Kept across retries of one submission, renewed after it succeeds.
  const submissionId = useRef<string | null>(null);

  useEffect(() => () => clearTimeout(redirect.current), []);
  // With the script running, its marks replace the browser's bubbles (the
  // browser still checks the types: ./checks.ts reads its verdict).
  useEffect(() => {
    if (formRef.current) formRef.current.noValidate = true;
  }, []);
  // Focus goes to the first field in error once it carries its mark, so a
  // screen reader reads the field with its message.
  useEffect(() => {
    const name = focusAfterMarks.current;
    focusAfterMarks.current = undefined;
    const input = name && formRef.current?.elements.namedItem(name);
    if (input instanceof HTMLElement) input.focus();
  }, [marks]);

  function showMarks(next: FieldMarks) {
    focusAfterMarks.current = firstMarked(next, ORDER);
    setMarks(next);
  }

  /** A marked field the visitor has put right loses its mark. */
  function onFieldChange(e: FormEvent<HTMLFormElement>) {
    const target = e.target;
    if (!(target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement)) return;
    const name = target.name as TextField;
    if (marks[name] === undefined || checkField(e.currentTarget, name)) return;
    const rest = { ...marks };
    delete rest[name];
    setMarks(rest);
    if (firstMarked(rest, ORDER) === undefined) setValidation(null);
  }

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const request = readForm(form);
    const found = checkForm(form, ORDER);
    if (firstMarked(found, ORDER) !== undefined) {
      const missing = !request.name || !request.email;
      setValidation(missing ? CONTACT_MESSAGES.missingFields : Object.values(found).join(". "));
      showMarks(found);
      return;
    }
    setValidation(null);
    setMarks({});
    setSubmitting(true);
    submissionId.current ??= newSubmissionId();
    try {
      const res = await fetch(CONTACT_ENDPOINT, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ ...request, submissionId: submissionId.current }),
      });
      const body = (await res.json().catch(() => null)) as IntroStored | ApiFailure | null;
      // A refused request carries the server's message (which field, why)
      // and marks the fields to fix.
      if (!res.ok) {
        const failure = body && "error" in body ? body : null;
        if (failure?.fields?.length) showMarks(marksOf(failure.fields, ORDER));
        throw new Error(typeof failure?.error === "string" ? failure.error : CONTACT_MESSAGES.fallbackError);
      }
      if (body?.success !== true) throw new Error(CONTACT_MESSAGES.noSuccess);
      toast({ title: CONTACT_MESSAGES.successTitle, description: CONTACT_MESSAGES.successDescription });
      submissionId.current = null;
      form.reset();
      redirect.current = setTimeout(() => navigate("/"), REDIRECT_AFTER_SUBMIT_MS);
    } catch (err) {
      toast({
        title: CONTACT_MESSAGES.errorTitle,
        description: err instanceof Error && err.message ? err.message : CONTACT_MESSAGES.fallbackError,
        variant: "destructive",
      });
    } finally {
      setSubmitting(false);
    }
  }

  const autoFocused = firstMarked(refused, ORDER);

  return (
    <>
      <form
        ref={formRef}
        method="post"
        action={CONTACT_ENDPOINT}
        noValidate={false}
        onSubmit={onSubmit}
        onChange={onFieldChange}
        aria-describedby="contact-required-hint"
        className="space-y-6"
      >
        <p id="contact-required-hint" className="text-sm text-slate-600">{CONTACT_TEXT.requiredHint}</p>
        {initial.submitted && (
          <div role="status" className="rounded-lg border border-emerald-200 bg-emerald-50 px-4 py-3 text-sm text-emerald-900">
            <p className="font-semibold">{CONTACT_MESSAGES.successTitle}</p>
            <p>{CONTACT_MESSAGES.successDescription}</p>
          </div>
        )}
        {initial.error && (
          <div role="alert" className="rounded-lg border border-red-200 bg-red-50 px-4 py-3 text-sm text-red-800">
            <p className="font-semibold">{CONTACT_MESSAGES.errorTitle}</p>
            <p>{initial.error}</p>
          </div>
        )}
        <div className="grid gap-6 sm:grid-cols-2">
          {FIELDS.map((field) => (
            <Field
              key={field.name}
              field={field}
              value={initial.values?.[field.name]}
              error={marks[field.name]}
              autoFocus={field.name === autoFocused}
            />
          ))}
        </div>

        <fieldset>
          <legend className="text-sm font-medium text-slate-900">{CONTACT_TEXT.tagsLegend}</legend>
          <p className="mt-1 text-sm text-slate-600">{CONTACT_TEXT.tagsHint}</p>
          <div className="mt-3 grid gap-3 sm:grid-cols-2">
            {TAG_OPTIONS.map((tag) => (
              <label
                key={tag}
                className="flex cursor-pointer items-center gap-3 rounded-lg border border-slate-200 px-3 py-2 text-sm text-slate-800 hover:bg-slate-50 has-[:checked]:border-brand-600 has-[:checked]:bg-brand-50"
              >
                <input
                  type="checkbox"
                  name="tags"
                  value={tag}
                  defaultChecked={initial.values?.tags.includes(tag)}
                  className="h-4 w-4 rounded border-slate-300 accent-brand-600" />
                {tag}
              </label>
            ))}
          </div>
        </fieldset>

        <div className="absolute -left-[10000px] top-auto h-px w-px overflow-hidden" aria-hidden="true">
          <label htmlFor="contact-fax">{HONEYPOT.label}</label>
          <input id="contact-fax" name={HONEYPOT.name} type="text" tabIndex={-1} autoComplete="off" defaultValue="" />
        </div>

        {validation && (
          <p role="alert" className="rounded-lg border border-red-200 bg-red-50 px-4 py-3 text-sm font-medium text-red-800">
            {validation}
          </p>
        )}

        <button
          type="submit"
          disabled={submitting}
          className="inline-flex w-full items-center justify-center gap-2 rounded-lg bg-brand-600 px-6 py-3 font-semibold text-white hover:bg-brand-700 disabled:cursor-not-allowed disabled:opacity-70 sm:w-auto"
        >
          {submitting ? (
            <LoaderCircle className="h-4 w-4 animate-spin" aria-hidden="true" />
          ) : (
            <Send className="h-4 w-4" aria-hidden="true" />
          )}
          {submitting ? CONTACT_MESSAGES.submitting : CONTACT_MESSAGES.submit}
        </button>
      </form>
      <Toaster toasts={toasts} onDismiss={dismiss} />
    </>
  );
}

interface FieldProps {
  field: ContactField;
  value?: string;
  /** What to fix, when the field is in error. */
  error?: string;
  autoFocus: boolean;
}

function Field({ field, value, error, autoFocus }: FieldProps) {
  const id = `contact-${field.name}`;
  const errorId = `${id}-error`;
  const wide = field.type === "textarea";
  // Marked invalid and described by its own message (read with the field).
  const marked = {
    "aria-invalid": error ? true : undefined,
    "aria-describedby": error ? errorId : undefined,
    autoFocus: autoFocus || undefined,
  };
  const inputClass = `${INPUT_CLASS} ${error ? BORDER_CLASS.error : BORDER_CLASS.ok}`;
  return (
    <div className={wide ? "sm:col-span-2" : undefined}>
      <label htmlFor={id} className="block text-sm font-medium text-slate-900">
        {field.label}
        {field.required && (
          <span className="text-red-700" aria-hidden="true"> *</span>
        )}
      </label>
      {error && (
        <p id={errorId} className="mt-1 text-sm font-medium text-red-700">
          <span className="sr-only">Error: </span>
          {error}
        </p>
      )}
      {wide ? (
        <textarea id={id} name={field.name} rows={4} defaultValue={value} placeholder={field.placeholder} className={inputClass} {...marked} />
      ) : (
        <input
          id={id}
          name={field.name}
          type={field.type}
          // Not `required`: the browser would block the submit before the
          // spec's own 'Missing required fields' message could show.
          aria-required={field.required || undefined}
          defaultValue={value}
          placeholder={field.placeholder}
          autoComplete={field.autoComplete}
          className={inputClass}
          {...marked}
        />
      )}
    </div>
  );
}

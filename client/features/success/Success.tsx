import { CircleCheck, CircleX, Clock, LoaderCircle } from "lucide-react";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { formatPaidAmount } from "../../lib/money";
import { verifyFailed } from "../../../content/site/messages.json";
import type { PageMeta, PageProps, SuccessData, VerifiedSession } from "../../lib/types";

const TEXT = {
  verifying: "Verifying your payment...",
  failed: "Payment Verification Failed",
  verifyFailed,
  waitSeconds: (s: number) => `Too many checks from your connection: please try again in ${s} seconds.`,
  paid: "Payment Successful!",
  paidLead: "Thank you for subscribing to Citizen Wallet. A receipt is on its way to your inbox, and we will be in touch to set up your community.",
  processing: "Payment Processing",
  processingLead:
    "Thank you for subscribing to Citizen Wallet. Your payment is being confirmed by your bank, which can take a few business days. We will email you as soon as it is confirmed.",
};

/** Spec section 4: verifying, then failed or paid; a complete checkout whose
 *  payment is still on its way (SEPA Direct Debit) is processing. */
type Outcome =
  | { kind: "verifying" }
  | { kind: "failed"; reason: string; retryAfter: number | null }
  | { kind: "paid" | "processing"; session: VerifiedSession };

function outcome(data: SuccessData | undefined, state: PageProps["state"]): Outcome {
  if (state === "loading") return { kind: "verifying" };
  if (state === "error" || !data) return { kind: "failed", reason: TEXT.verifyFailed, retryAfter: null };
  if (data.state !== "failed" && data.session) return { kind: data.state, session: data.session };
  return { kind: "failed", reason: data.error ?? TEXT.verifyFailed, retryAfter: data.retryAfter };
}

export function meta(data: SuccessData | undefined): PageMeta {
  switch (data?.session ? data.state : "failed") {
    case "paid":
      return { title: "Payment Successful — Citizen Wallet", description: "Your Citizen Wallet plan is paid. Thank you for subscribing." };
    case "processing":
      return {
        title: "Payment Processing — Citizen Wallet",
        description: "Your Citizen Wallet checkout is complete and the payment is being confirmed. An email will follow.",
      };
    default:
      return { title: "Payment Verification — Citizen Wallet", description: "Checking the status of your Citizen Wallet checkout session." };
  }
}

export default function Success({ data, state }: PageProps<SuccessData>) {
  const result = outcome(data, state);
  return (
    <section className="flex min-h-[60vh] items-center justify-center bg-slate-50 px-4 py-16">
      <div className="w-full max-w-lg rounded-2xl border border-slate-200 bg-white p-8 text-center shadow-sm">
        {result.kind === "verifying" && (
          <div role="status">
            <LoaderCircle className="mx-auto h-12 w-12 animate-spin text-brand-600" aria-hidden="true" />
            <h1 className="mt-6 text-2xl font-bold text-slate-900">{TEXT.verifying}</h1>
          </div>
        )}

        {result.kind === "failed" && (
          <>
            <CircleX className="mx-auto h-14 w-14 text-red-600" aria-hidden="true" />
            <h1 className="mt-6 text-2xl font-bold text-slate-900">{TEXT.failed}</h1>
            <p className="mt-3 text-slate-600">{result.reason}</p>
            {result.retryAfter !== null && <p className="mt-2 text-sm text-slate-600">{TEXT.waitSeconds(result.retryAfter)}</p>}
            <div className="mt-8 flex flex-col justify-center gap-3 sm:flex-row">
              <ActionLink to="/pricing" primary>Back to Pricing</ActionLink>
              <ActionLink to="/contact">Contact Us</ActionLink>
            </div>
          </>
        )}

        {(result.kind === "paid" || result.kind === "processing") && (
          <>
            {result.kind === "paid" ? (
              <CircleCheck className="mx-auto h-14 w-14 text-emerald-600" aria-hidden="true" />
            ) : (
              <Clock className="mx-auto h-14 w-14 text-amber-600" aria-hidden="true" />
            )}
            <h1 className="mt-6 text-3xl font-bold text-slate-900">{result.kind === "paid" ? TEXT.paid : TEXT.processing}</h1>
            <p className="mt-3 text-slate-600">{result.kind === "paid" ? TEXT.paidLead : TEXT.processingLead}</p>
            <dl className="mt-8 divide-y divide-slate-200 rounded-xl border border-slate-200 text-left text-sm">
              <Row label="Email">{result.session.customer_email ?? "—"}</Row>
              <Row label="Amount">{formatPaidAmount(result.session.amount_total, result.session.currency)}</Row>
              <Row label="Status">
                <span
                  className={`rounded-full px-2.5 py-0.5 font-semibold capitalize ${
                    result.kind === "paid" ? "bg-emerald-100 text-emerald-800" : "bg-amber-100 text-amber-900"
                  }`}
                >
                  {result.kind === "paid" ? result.session.payment_status.replaceAll("_", " ") : "processing"}
                </span>
              </Row>
            </dl>
            <div className="mt-8 flex flex-col justify-center gap-3 sm:flex-row">
              <ActionLink to="/" primary>Return to Home</ActionLink>
              <ActionLink to="/wallets">Explore Our Wallets</ActionLink>
            </div>
          </>
        )}
      </div>
    </section>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex items-center justify-between gap-4 px-4 py-3">
      <dt className="text-slate-600">{label}</dt>
      <dd className="break-all font-medium text-slate-900">{children}</dd>
    </div>
  );
}

function ActionLink({ to, primary, children }: { to: string; primary?: boolean; children: ReactNode }) {
  return (
    <Link
      to={to}
      className={`rounded-lg px-5 py-2.5 text-sm font-semibold ${
        primary ? "bg-brand-600 text-white hover:bg-brand-700" : "border border-slate-300 text-slate-800 hover:bg-slate-50"
      }`}
    >
      {children}
    </Link>
  );
}

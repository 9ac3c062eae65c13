// Money as Stripe states it: an amount in the currency's minor unit and a
// lower-case ISO code. Shown with Intl in that currency, so a USD price
// reads "$49" and never "€49". The formatters are made on first use (an Intl
// object cannot be part of the server's V8 startup snapshot).

// Stripe's zero- and three-decimal currencies ("Supported currencies" page);
// every other currency counts hundredths. server/payments/stripe.rs
// (minor_unit_digits) holds the same lists for the JSON-LD offers.
const ZERO_DECIMAL = new Set(["bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf"]);
const THREE_DECIMAL = new Set(["bhd", "jod", "kwd", "omr", "tnd"]);

export function minorUnitDigits(currency: string): number {
  const c = currency.toLowerCase();
  return ZERO_DECIMAL.has(c) ? 0 : THREE_DECIMAL.has(c) ? 3 : 2;
}

const whole = new Map<string, Intl.NumberFormat>();

/** A price with no decimals (spec section 9): 2900 eur -> "€29",
 *  120000 eur -> "€1,200", 4900 usd -> "$49", 5000 jpy -> "¥5,000". */
export function formatPrice(amount: number, currency: string): string {
  const code = currency.toUpperCase();
  let f = whole.get(code);
  if (!f) {
    f = new Intl.NumberFormat("en-US", { style: "currency", currency: code, minimumFractionDigits: 0, maximumFractionDigits: 0 });
    whole.set(code, f);
  }
  return f.format(amount / 10 ** minorUnitDigits(currency));
}

/** The success page's amount (spec section 9): the currency's decimals and
 *  its code in capitals, 1500 usd -> "15.00 USD". */
export function formatPaidAmount(amount: number, currency: string): string {
  const digits = minorUnitDigits(currency);
  return `${(amount / 10 ** digits).toFixed(digits)} ${currency.toUpperCase()}`;
}

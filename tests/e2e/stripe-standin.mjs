// A local stand-in for the Stripe API, enough for the pricing page and
// checkout: GET /v1/prices, POST /v1/checkout/sessions, GET the session
// (paid, except ids starting cs_test_sepa: complete but unpaid, as a SEPA
// Direct Debit checkout is until the bank confirms it).
// Objects carry every field async-stripe's strict types require.
import http from "node:http";

const product = (id, name, planName) => ({
  id, object: "product", active: true, created: 1700000000, default_price: null, description: null,
  images: [], livemode: false, marketing_features: [], metadata: planName ? { planName } : {}, name,
  package_dimensions: null, shippable: null, statement_descriptor: null, tax_code: null, type: "service",
  unit_label: null, updated: 1700000000, url: null,
});

const price = (id, amount, interval, prod, currency = "eur") => ({
  id, object: "price", active: true, billing_scheme: "per_unit", created: 1700000000, currency,
  custom_unit_amount: null, livemode: false, lookup_key: null, metadata: {}, nickname: null, product: prod,
  recurring: { aggregate_usage: null, interval, interval_count: 1, meter: null, trial_period_days: null, usage_type: "licensed" },
  tax_behavior: "unspecified", tiers_mode: null, transform_quantity: null, type: "recurring",
  unit_amount: amount, unit_amount_decimal: String(amount),
});

const session = (id, base, paymentStatus) => ({
  id, object: "checkout.session", after_expiration: null, allow_promotion_codes: null,
  amount_subtotal: 4900, amount_total: 4900,
  automatic_tax: { enabled: false, liability: null, provider: null, status: null },
  billing_address_collection: null, cancel_url: `${base}/cancel`, client_reference_id: null, consent: null,
  consent_collection: null, created: 1700000000, currency: "eur", custom_fields: [],
  custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
  customer: null, customer_creation: "always",
  customer_details: { address: null, email: "jenny@example.com", name: "Jenny", phone: null, tax_exempt: "none", tax_ids: [] },
  customer_email: null, expires_at: 1700086400, invoice: null, invoice_creation: null, livemode: false, locale: null,
  metadata: {}, mode: "subscription", payment_intent: null, payment_link: null, payment_method_collection: "always",
  payment_method_options: {}, payment_method_types: ["card"], payment_status: paymentStatus,
  phone_number_collection: { enabled: false }, recovered_from: null, setup_intent: null,
  shipping_address_collection: null, shipping_cost: null, shipping_options: [], status: "complete", submit_type: null,
  subscription: null, success_url: `${base}/success?session_id={CHECKOUT_SESSION_ID}`,
  total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 }, ui_mode: "hosted",
  // "Checkout" is this stand-in too: its page sends the visitor back as Stripe would.
  url: `${base}/__checkout/${id}`,
});

/** Starts the stand-in; `siteBase()` tells it where the site under test lives. */
export async function startStripe(siteBase) {
  const created = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://stand-in");
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/v1/prices") {
      return send(200, {
        object: "list", url: "/v1/prices", has_more: false,
        data: [
          price("price_std_m", 4900, "month", product("prod_s", "Community Standard", null)),
          price("price_std_y", 49000, "year", product("prod_s", "Community Standard", null)),
          price("price_pro_m", 9900, "month", product("prod_p", "Community Pro", null), "usd"),
        ],
      });
    }
    if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const id = `cs_test_${created.length + 1}`;
        created.push(Object.fromEntries(new URLSearchParams(body)));
        send(200, session(id, siteBase(), "unpaid"));
      });
      return;
    }
    const m = url.pathname.match(/^\/v1\/checkout\/sessions\/(cs_test_\w+)$/);
    if (req.method === "GET" && m) return send(200, session(m[1], siteBase(), m[1].startsWith("cs_test_sepa") ? "unpaid" : "paid"));
    send(404, { error: { type: "invalid_request_error", message: "No such resource" } });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { base: `http://127.0.0.1:${server.address().port}`, created, stop: () => server.close() };
}

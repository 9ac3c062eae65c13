-- Stripe webhook events already handled (replays are no-ops) and the
-- checkouts they completed.
CREATE TABLE IF NOT EXISTS stripe_events (
    event_id TEXT PRIMARY KEY,
    event_type TEXT NOT NULL,
    received_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS completed_checkouts (
    session_id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL,
    customer_email TEXT,
    amount_total BIGINT,
    currency TEXT,
    payment_status TEXT,
    completed_at BIGINT NOT NULL
);

-- A fleet that outlives its members (server/tls/): the order lease gets a
-- generation (its fencing token: every write an order makes holds only
-- while that generation holds the lease), challenge answers name the
-- generation of the order that stored them, the fleet's back-off after a
-- failure the CA answered is shared, the renewal time is chosen once for
-- the fleet (from the CA's ARI window, or the lifetime rule), an
-- operator's renewal request waits for a member, each member says what it
-- holds, and retired certificates and ticket keys are never written back.
-- Times are Unix milliseconds by the database's clock.
ALTER TABLE tls_leases ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tls_challenges ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS tls_orders (
    directory TEXT NOT NULL,
    names TEXT NOT NULL,
    next_try_at BIGINT NOT NULL,      -- no member orders before this
    retry_ms BIGINT NOT NULL,         -- the last back-off step (doubles, to an hour)
    failed_by TEXT,                   -- the member whose try failed last
    error TEXT,                       -- what the CA said
    renew_serial TEXT,                -- the certificate the renewal time below is for
    renew_at BIGINT,                  -- when the fleet renews it
    renew_source TEXT,                -- ari | lifetime
    window_start BIGINT,              -- the CA's suggested window (ARI)
    window_end BIGINT,
    explanation TEXT,                 -- the CA's explanation URL, if it gave one
    poll_at BIGINT,                   -- when the CA's renewal information is asked next
    requested_at BIGINT,              -- `citizen-site tls renew`: a new certificate now
    requested_serial TEXT,            -- the certificate it retires
    revoke BIGINT NOT NULL DEFAULT 0, -- 1: revoke it with the CA too
    PRIMARY KEY (directory, names)
);
CREATE TABLE IF NOT EXISTS tls_members (
    member TEXT PRIMARY KEY,          -- host:pid:random, one per process
    seen_at BIGINT NOT NULL,          -- its last read of the shared state
    serial TEXT,                      -- the certificate it serves
    not_after BIGINT,
    challenges TEXT NOT NULL,         -- the answers it holds: generation:kind:name, newline-separated
    last_error TEXT,                  -- its own last failure to order, if its last try failed
    failures BIGINT NOT NULL          -- its failed tries in a row
);
CREATE TABLE IF NOT EXISTS tls_retired (
    kind TEXT NOT NULL,               -- certificate | ticket-key
    id TEXT NOT NULL,                 -- its serial, or the first 16 bytes of the key's SHA-256 (hex)
    retired_at BIGINT NOT NULL,
    PRIMARY KEY (kind, id)
);

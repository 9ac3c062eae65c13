-- The HTTPS identity every server of the site shares (server/tls/): the
-- ACME account, the certificates with their keys, the answers to pending
-- ACME challenges, the session-ticket keys, and the lease that lets one
-- process at a time order a certificate. Times are Unix milliseconds.
CREATE TABLE IF NOT EXISTS tls_accounts (
    directory TEXT PRIMARY KEY,       -- the ACME directory URL
    credentials TEXT NOT NULL,        -- instant-acme's JSON, key included
    created_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS tls_certificates (
    directory TEXT NOT NULL,
    names TEXT NOT NULL,              -- the names, lowercase, sorted, comma-separated
    pem TEXT NOT NULL,                -- the private key, then the chain
    serial TEXT NOT NULL,
    not_before BIGINT NOT NULL,
    not_after BIGINT NOT NULL,
    stored_at BIGINT NOT NULL,
    PRIMARY KEY (directory, names)
);
CREATE TABLE IF NOT EXISTS tls_challenges (
    kind TEXT NOT NULL,               -- http-01 | tls-alpn-01
    name TEXT NOT NULL,               -- the token (http-01) or the domain (tls-alpn-01)
    answer TEXT NOT NULL,             -- the key authorization, or its SHA-256 in hex
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (kind, name)
);
CREATE TABLE IF NOT EXISTS tls_ticket_keys (
    period BIGINT PRIMARY KEY,        -- the key seals tickets from period * length
    period_ms BIGINT NOT NULL,        -- the length of a period when it was made
    secret TEXT NOT NULL,             -- 32 random bytes, hex
    created_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS tls_leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

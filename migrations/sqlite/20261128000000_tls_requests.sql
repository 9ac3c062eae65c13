-- An operator's renewal request (`citizen-site tls renew`) is carried out
-- even when the certificate it names was replaced meanwhile (by an order
-- already running, or before its holder died): the request keeps that
-- certificate (PEM, without its key) to revoke it, and what became of the
-- request is kept for the command to report.
ALTER TABLE tls_orders ADD COLUMN requested_cert TEXT;   -- the certificate the request retires (PEM, no key)
ALTER TABLE tls_orders ADD COLUMN outcome_for BIGINT;    -- the requested_at of the last request carried out
ALTER TABLE tls_orders ADD COLUMN outcome TEXT;          -- what became of it (JSON: retired, revoked, said)

-- Every server of the site says what it serves (`citizen-site tls
-- status`), wherever its certificate comes from: a server serving the
-- operator's own files (`TLS_CERT`) keeps its member row too, and each row
-- says the names its certificate covers and where it came from.
ALTER TABLE tls_members ADD COLUMN names TEXT;    -- the names the certificate covers, comma-separated
ALTER TABLE tls_members ADD COLUMN source TEXT;   -- acme | file (NULL: written by an older version, which kept rows under ACME alone)

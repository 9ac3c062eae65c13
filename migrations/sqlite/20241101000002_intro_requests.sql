-- Intro requests from the contact form: stored before the visitor is told
-- it worked, then forwarded to Notion by a background forwarder.
-- Times are Unix milliseconds, so both dialects share the forwarder's SQL.
CREATE TABLE IF NOT EXISTS intro_requests (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    contact_person TEXT NOT NULL,
    email TEXT NOT NULL,
    website TEXT NOT NULL,
    description TEXT NOT NULL,
    tags TEXT NOT NULL,               -- JSON array of tag names
    created_at BIGINT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', -- pending | forwarded
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    claimed_by TEXT,
    claimed_until BIGINT,
    notion_page_id TEXT,
    last_error TEXT,
    forwarded_at BIGINT
);
CREATE INDEX IF NOT EXISTS intro_requests_due ON intro_requests (status, next_attempt_at);

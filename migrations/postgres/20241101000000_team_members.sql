-- The team shown on /about (spec section 3). Optional values may be NULL;
-- the site shows them as empty strings.
CREATE TABLE IF NOT EXISTS team_members (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT,
    bio TEXT,
    linkedin TEXT,
    x_profile TEXT,
    image_url TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

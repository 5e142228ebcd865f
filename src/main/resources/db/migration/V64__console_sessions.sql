-- Sessions of the web console (dev.fulcrum.console). The session cookie is a token signed with the server's JWT key
-- that names one of these rows by a random id; the row is stored under the SHA-256 of that id. Signing out deletes
-- the row, so the cookie is useless from then on, even before it expires. A session acts with the API key that signed
-- in and ends with it: revoking the key (or deleting its user) ends its sessions.
create table console_sessions (
    id_hash    char(64)    primary key,
    api_key_id bigint      not null references api_keys (id) on delete cascade,
    csrf_token varchar(64) not null,
    created_at timestamptz not null default now(),
    expires_at timestamptz not null
);
create index console_sessions_expiry on console_sessions (expires_at);
create index console_sessions_key on console_sessions (api_key_id);

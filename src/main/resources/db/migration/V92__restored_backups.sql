-- The backups restored into this database (fulcrum.restore.from): a start with the same backup configured finds its
-- row and starts normally instead of refusing a database that is not empty.
create table restored_backups (
    id uuid primary key,
    made_at timestamptz not null,
    schema_version text not null,
    restored_at timestamptz not null default now()
);

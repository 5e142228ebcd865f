-- Datasets: rows stored once per row digest, tables as ordered lists of row digests, versions per project.

create table dataset_rows (
    digest  varchar(64) primary key,
    val     text        not null
);

create table dataset_tables (
    digest     char(64)    primary key,
    row_count  integer     not null,
    created_at timestamptz not null default now()
);

create table dataset_table_rows (
    table_digest   char(64)    not null references dataset_tables (digest) on delete cascade,
    original_index integer     not null,
    row_digest     varchar(64) not null references dataset_rows (digest),
    primary key (table_digest, original_index)
);

create table dataset_versions (
    id            bigserial    primary key,
    project_id    bigint       not null references projects (id) on delete cascade,
    object_id     varchar(128) not null,
    digest        varchar(64)  not null,
    version_index integer      not null,
    name          varchar(128) not null,
    description   text,
    table_digest  char(64)     not null references dataset_tables (digest),
    created_by    bigint       references users (id) on delete set null,
    created_at    timestamptz  not null default now(),
    deleted_at    timestamptz,
    unique (project_id, object_id, digest),
    unique (project_id, object_id, version_index)
);
create index dataset_versions_table on dataset_versions (project_id, table_digest);

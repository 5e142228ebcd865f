-- Artifacts: collections of a type in a project, numbered versions of content-addressed files, aliases (one version
-- per alias and collection), tags, and links of versions into registry collections.

create table artifact_collections (
    id          bigserial    primary key,
    project_id  bigint       not null references projects (id) on delete cascade,
    name        varchar(128) not null,
    type        varchar(64)  not null,
    description text,
    created_by  bigint       references users (id) on delete set null,
    created_at  timestamptz  not null default now(),
    unique (project_id, name)
);

create table artifact_versions (
    id            bigserial   primary key,
    collection_id bigint      not null references artifact_collections (id) on delete cascade,
    version_index integer     not null,
    digest        char(64)    not null,
    description   text,
    metadata      jsonb       not null default '{}',
    size          bigint      not null,
    file_count    integer     not null,
    created_by    bigint      references users (id) on delete set null,
    created_at    timestamptz not null default now(),
    unique (collection_id, version_index)
);
create index artifact_versions_digest on artifact_versions (collection_id, digest);

create table artifact_files (
    version_id   bigint        not null references artifact_versions (id) on delete cascade,
    path         varchar(1024) not null,
    digest       char(64)      not null,
    size         bigint        not null,
    content_type varchar(255),
    primary key (version_id, path)
);

create table artifact_aliases (
    collection_id bigint       not null references artifact_collections (id) on delete cascade,
    alias         varchar(128) not null,
    version_id    bigint       not null references artifact_versions (id) on delete cascade,
    created_at    timestamptz  not null default now(),
    primary key (collection_id, alias)
);
create index artifact_aliases_version on artifact_aliases (version_id);

create table artifact_tags (
    version_id bigint       not null references artifact_versions (id) on delete cascade,
    tag        varchar(128) not null,
    created_at timestamptz  not null default now(),
    primary key (version_id, tag)
);

create table registry_links (
    id              bigserial    primary key,
    registry_id     bigint       not null references registries (id) on delete cascade,
    collection_name varchar(128) not null,
    link_index      integer      not null,
    version_id      bigint       not null references artifact_versions (id) on delete cascade,
    created_by      bigint       references users (id) on delete set null,
    created_at      timestamptz  not null default now(),
    unique (registry_id, collection_name, version_id),
    unique (registry_id, collection_name, link_index)
);

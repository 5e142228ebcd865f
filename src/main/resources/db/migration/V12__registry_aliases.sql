-- Aliases and tags of versions linked into registry collections. An alias names at most one link of a registry
-- collection; `latest` is not stored (it is the newest link).

create table registry_link_aliases (
    registry_id     bigint       not null references registries (id) on delete cascade,
    collection_name varchar(128) not null,
    alias           varchar(128) not null,
    link_id         bigint       not null references registry_links (id) on delete cascade,
    created_at      timestamptz  not null default now(),
    primary key (registry_id, collection_name, alias)
);
create index registry_link_aliases_link on registry_link_aliases (link_id);

create table registry_link_tags (
    link_id    bigint       not null references registry_links (id) on delete cascade,
    tag        varchar(128) not null,
    created_at timestamptz  not null default now(),
    primary key (link_id, tag)
);

-- Users, entities (personal and team), memberships, projects, registries and API keys.

create table entities (
    id          bigserial primary key,
    name        varchar(64) not null unique,
    kind        varchar(8)  not null check (kind in ('USER', 'TEAM')),
    created_at  timestamptz not null default now()
);

create table users (
    id          bigserial primary key,
    username    varchar(64) not null unique,
    email       varchar(320),
    admin       boolean     not null default false,
    entity_id   bigint      not null unique references entities (id),
    created_at  timestamptz not null default now()
);

create table entity_members (
    entity_id   bigint      not null references entities (id) on delete cascade,
    user_id     bigint      not null references users (id) on delete cascade,
    role        varchar(8)  not null check (role in ('ADMIN', 'MEMBER', 'VIEWER')),
    created_at  timestamptz not null default now(),
    primary key (entity_id, user_id)
);
create index entity_members_user on entity_members (user_id);

create table projects (
    id          bigserial primary key,
    entity_id   bigint       not null references entities (id) on delete cascade,
    name        varchar(128) not null,
    description text,
    created_by  bigint       references users (id) on delete set null,
    created_at  timestamptz  not null default now(),
    unique (entity_id, name)
);

create table registries (
    id          bigserial primary key,
    name        varchar(64) not null unique,
    description text,
    created_by  bigint      references users (id) on delete set null,
    created_at  timestamptz not null default now()
);

create table registry_members (
    registry_id bigint      not null references registries (id) on delete cascade,
    user_id     bigint      not null references users (id) on delete cascade,
    role        varchar(8)  not null check (role in ('ADMIN', 'MEMBER', 'VIEWER')),
    created_at  timestamptz not null default now(),
    primary key (registry_id, user_id)
);
create index registry_members_user on registry_members (user_id);

create table api_keys (
    id           bigserial primary key,
    user_id      bigint       not null references users (id) on delete cascade,
    name         varchar(128) not null,
    key_hash     char(64)     not null unique,
    prefix       varchar(16)  not null,
    created_at   timestamptz  not null default now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
create index api_keys_user on api_keys (user_id);

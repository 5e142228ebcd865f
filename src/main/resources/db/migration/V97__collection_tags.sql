-- Tags of artifact collections (the W&B SDK's collection.tags): of a project's collection, and of a registry's
-- collection, which exists by its links (its tags are kept by name and go with its last link). Adding and removing
-- them write ADD_COLLECTION_TAG and REMOVE_COLLECTION_TAG.

create table artifact_collection_tags (
    collection_id bigint       not null references artifact_collections (id) on delete cascade,
    tag           varchar(128) not null,
    created_at    timestamptz  not null default now(),
    primary key (collection_id, tag)
);

create table registry_collection_tags (
    registry_id     bigint       not null references registries (id) on delete cascade,
    collection_name varchar(128) not null,
    tag             varchar(128) not null,
    created_at      timestamptz  not null default now(),
    primary key (registry_id, collection_name, tag)
);

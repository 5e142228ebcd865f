-- Several replicas behave as one (see docs/inference.md, "Several replicas").

-- A revoked or deleted API key moves the access epoch on, so that every replica's inference key cache (and the dataset
-- read cache) stops trusting what it checked before. last_used_at, written on every use, does not move it.
create constraint trigger access_epoch_api_keys after update of revoked_at, key_hash, user_id or delete on api_keys
    deferrable initially deferred for each row execute function bump_access_epoch();

-- The tokens of each team's month counted against its quota, cluster-wide: replicas take shares of the quota from
-- here (used grows by the share), spend them in memory as completions end, add what a completion used beyond their
-- share and give back what they did not use. Started from inference_usage the first time a month is touched.
create table inference_token_use (
    entity varchar(64) not null,
    month  date        not null,
    used   bigint      not null,
    primary key (entity, month)
);

-- Slots of the per-project concurrency limit held by each replica (a random id per process). A replica renews its
-- rows while it runs; rows of a replica that died count until they expire. The sum of unexpired held slots of a
-- project never exceeds the limit: replicas change their row under a transaction-scoped advisory lock per project.
create table inference_slot_leases (
    entity     varchar(64)  not null,
    project    varchar(128) not null,
    replica    varchar(64)  not null,
    held       integer      not null check (held >= 0),
    expires_at timestamptz  not null,
    primary key (entity, project, replica)
);
create index inference_slot_leases_replica on inference_slot_leases (replica);

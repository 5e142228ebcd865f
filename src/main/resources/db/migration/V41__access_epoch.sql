-- A counter that every commit changing who may read what, or which dataset version a name resolves to, moves on.
-- Replicas keep answers of the dataset read together with the counter value they were read at and reuse one only
-- while the counter, read in the same statement as the API key check, has not moved (see DatasetReadCache).
-- The triggers are deferred to the commit, so the row is locked only for the last moment of a transaction.
create table access_epoch (
    id    smallint primary key check (id = 1),
    value bigint   not null
);
insert into access_epoch (id, value) values (1, 0);

create function bump_access_epoch() returns trigger language plpgsql as $$
begin
    update access_epoch set value = value + 1 where id = 1;
    return null;
end;
$$;

create constraint trigger access_epoch_users after update of username, admin or delete on users
    deferrable initially deferred for each row execute function bump_access_epoch();
create constraint trigger access_epoch_entities after update or delete on entities
    deferrable initially deferred for each row execute function bump_access_epoch();
create constraint trigger access_epoch_entity_members after insert or update or delete on entity_members
    deferrable initially deferred for each row execute function bump_access_epoch();
create constraint trigger access_epoch_projects after insert or update or delete on projects
    deferrable initially deferred for each row execute function bump_access_epoch();
create constraint trigger access_epoch_dataset_versions after insert or update or delete on dataset_versions
    deferrable initially deferred for each row execute function bump_access_epoch();

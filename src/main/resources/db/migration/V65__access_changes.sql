-- Revocation pushed instead of polled. Every commit that changes who may do what (or which dataset version a name
-- resolves to) notifies channel access_changed; every replica listens on it (accounts/AccessChanges) and drops the
-- decisions and answers it keeps in memory. PostgreSQL delivers a notification only when its transaction commits, and
-- once per transaction however many rows changed, so the triggers run per statement and need not be deferred.
-- This replaces the access_epoch counter (V41, V62), which every request had to read.
drop trigger access_epoch_users on users;
drop trigger access_epoch_entities on entities;
drop trigger access_epoch_entity_members on entity_members;
drop trigger access_epoch_projects on projects;
drop trigger access_epoch_dataset_versions on dataset_versions;
drop trigger access_epoch_api_keys on api_keys;
drop function bump_access_epoch();
drop table access_epoch;

create function notify_access_changed() returns trigger language plpgsql as $$
begin
    perform pg_notify('access_changed', tg_table_name);
    return null;
end;
$$;

create trigger access_changed_users after update of username, admin or delete on users
    for each statement execute function notify_access_changed();
create trigger access_changed_api_keys after update of revoked_at, key_hash, user_id or delete on api_keys
    for each statement execute function notify_access_changed();
create trigger access_changed_entities after update or delete on entities
    for each statement execute function notify_access_changed();
create trigger access_changed_entity_members after insert or update or delete on entity_members
    for each statement execute function notify_access_changed();
create trigger access_changed_projects after insert or update or delete on projects
    for each statement execute function notify_access_changed();
create trigger access_changed_dataset_versions after insert or update or delete on dataset_versions
    for each statement execute function notify_access_changed();

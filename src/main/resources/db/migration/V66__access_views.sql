-- What other features' statements may read of accounts: they join these views instead of naming users, api_keys,
-- entities or entity_members, so that each rule of who is who and who may do what is written once, here
-- (AccessOwnershipTest fails when a statement outside accounts names those tables).

-- A user's name, whether they administer the server, and their personal entity.
create view account_names as
    select u.id as user_id, u.username, u.admin, u.entity_id from users u;

-- An entity (a user's personal entity or a team) by id and name.
create view entity_names as
    select e.id as entity_id, e.name, e.kind from entities e;

-- The roles stored for members of an entity (a team's members; a personal entity's owner).
create view memberships as
    select m.entity_id, m.user_id, m.role from entity_members m;

-- The role a user acts with on an entity: a server administrator is an admin everywhere, anyone else has the role
-- stored for them. One row per user and entity where there is a role; filter by both to read one.
create view effective_roles as
    select u.id as user_id, e.id as entity_id, case when u.admin then 'ADMIN' else m.role end as role
    from users u cross join entities e
    left join entity_members m on m.entity_id = e.id and m.user_id = u.id
    where u.admin or m.role is not null;

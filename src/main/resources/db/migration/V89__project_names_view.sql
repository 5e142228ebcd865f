-- What other features' statements may read of the projects accounts owns (a project's id, its entity and its name),
-- as they read entities through entity_names: a statement outside accounts joins this view, never the table
-- (TableOwnershipTest fails when one names another package's table).
create view project_names as
    select p.id as project_id, p.entity_id, p.name from projects p;

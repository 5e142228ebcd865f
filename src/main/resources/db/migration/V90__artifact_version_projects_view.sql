-- What other features' statements may read of the versions artifacts owns: which project a version is in, so that a
-- feature keeping version ids beside its own rows (the W&B door's lineage) filters them by the caller's readable
-- projects in the same statement, joining project_names and effective_roles (TableOwnershipTest fails when a statement
-- names another package's table).
create view artifact_version_projects as
    select v.id as version_id, c.project_id from artifact_versions v
    join artifact_collections c on c.id = v.collection_id;

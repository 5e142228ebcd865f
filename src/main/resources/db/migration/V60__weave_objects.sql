-- Weave's object and table API (/obj/*, /objs/query, /table/create) over the dataset store: one store, two doors.
-- Every published object is a row of dataset_versions; a Dataset (val._type "Dataset" naming a table of its project)
-- is the same record the v2 datasets API reads, other kinds (prompts, models, scorers...) share the object ids and
-- version indexes of their project but are not datasets.
alter table dataset_versions
    add column dataset           boolean      not null default true,
    add column kind              varchar(16)  not null default 'object',
    add column base_object_class varchar(128),
    -- the object as published through /obj/create; null for versions created through v2, whose object is
    -- {_type, _class_name, _bases, name, description, rows}
    add column val               text,
    alter column table_digest drop not null,
    add constraint dataset_versions_dataset_table check (not dataset or table_digest is not null);
update dataset_versions set base_object_class = 'Dataset';

-- Tables published with /table/create before any object names them, so the project may read them.
create table project_tables (
    project_id   bigint      not null references projects (id) on delete cascade,
    table_digest char(64)    not null references dataset_tables (digest),
    created_at   timestamptz not null default now(),
    primary key (project_id, table_digest)
);

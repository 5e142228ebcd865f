-- A model served by several replicas of its server, how a request chooses one, and the models that answer instead.
-- base_url keeps the first replica's URL, so that a replica of the previous release still reads a working model during
-- a rolling upgrade; base_urls is the whole list (null in rows that release wrote: their one base_url).
alter table inference_models add column base_urls text[];
alter table inference_models add column routing varchar(32) not null default 'least-outstanding'
    check (routing in ('least-outstanding', 'prefix-affinity'));
alter table inference_models add column fallbacks text[] not null default '{}';

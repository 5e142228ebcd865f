-- A worker holds several Tinker models: each claim counts the ones it holds (and the sweep reads the held ones' leases)
create index tinker_models_held on tinker_models (worker_id) where state = 'held';

-- A history row's values that are not numbers (the W&B SDK's media: images, tables, histograms, HTML, audio, as the
-- objects it writes, {"_type": "image-file", "path": "media/images/...", ...}), kept beside its numbers; null when the
-- row has none. The numbers stay in val, so metric reads, summaries and RUN_METRIC events are unchanged.
alter table run_history add column media jsonb;
-- the media rows of a run, read without scanning its numeric rows
create index run_history_media on run_history (run_id, seq) where media is not null;

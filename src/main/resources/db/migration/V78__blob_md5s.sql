-- The MD5 (base64, as the W&B SDK's manifests give it) of each stored blob. Blobs are named by their SHA-256; the SDK
-- checks every file it downloads against an MD5, so versions it did not log (REST uploads, training checkpoints) need
-- one too. Kept at every blob upload; a blob stored before this table has its MD5 computed on first need and kept.
create table blob_md5s (
    digest char(64) primary key,
    md5    text     not null
);

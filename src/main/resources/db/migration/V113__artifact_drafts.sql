-- Drafts (an artifact version being assembled before its commit) and multipart uploads of their files belong to the
-- artifacts store (issue 60 §2: dev.fulcrum.artifacts.ArtifactDrafts and MultipartUploads own them); the W&B door only
-- translates its protocol into calls of those services. The tables of V69, V85 and V87 are renamed, with their
-- sequences and indexes; rows, keys and cascades stay as they are. Lineage (wandb_artifact_lineage) stays the W&B
-- door's, and so does its name.
alter table wandb_artifact_drafts rename to artifact_drafts;
alter sequence wandb_artifact_drafts_id_seq rename to artifact_drafts_id_seq;
alter index wandb_artifact_drafts_version rename to artifact_drafts_version;
alter index wandb_artifact_drafts_manifest rename to artifact_drafts_manifest;

alter table wandb_artifact_draft_files rename to artifact_draft_files;
alter index wandb_artifact_draft_files_blob rename to artifact_draft_files_blob;

alter table wandb_artifact_uploads rename to artifact_multipart_uploads;
alter sequence wandb_artifact_uploads_id_seq rename to artifact_multipart_uploads_id_seq;
alter index wandb_artifact_uploads_draft rename to artifact_multipart_uploads_draft;
alter index wandb_artifact_uploads_created rename to artifact_multipart_uploads_created;

alter table wandb_artifact_upload_parts rename to artifact_multipart_parts;

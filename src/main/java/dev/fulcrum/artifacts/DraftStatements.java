package dev.fulcrum.artifacts;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.artifacts.ArtifactDrafts.Draft;
import dev.fulcrum.artifacts.ArtifactDrafts.DraftFile;
import dev.fulcrum.artifacts.MultipartUploads.Upload;
import dev.fulcrum.platform.database.NativeSql;

/**
 * The SQL of drafts and their multipart uploads (tables {@code artifact_drafts}, {@code artifact_draft_files},
 * {@code artifact_multipart_uploads}, {@code artifact_multipart_parts}); {@link ArtifactDrafts},
 * {@link MultipartUploads} and {@link ArtifactDraftSweeper} call it, in their transactions.
 */
@ApplicationScoped
class DraftStatements {

    /** Rows per transaction of a sweep, so a large backlog never holds locks long. */
    static final int BATCH = 500;

    @Inject
    EntityManager em;

    @Inject
    ObjectMapper json;

    // drafts -------------------------------------------------------------------------------------------------------

    long insertDraft(long projectId, String collection, String type, String description, String metadata,
            List<String> aliases, List<String> tags, Long createdBy, String runName) {
        return NativeSql.first(em, """
                insert into artifact_drafts
                    (project_id, collection, type, description, metadata, aliases, tags, created_by, run_name)
                values (?1, ?2, ?3, ?4, cast(?5 as jsonb), cast(?6 as text[]), cast(?7 as text[]), ?8, ?9)
                returning id""", row -> row.longValue(0), projectId, collection, type,
                NativeSql.typed(description, String.class), metadata, NativeSql.textArray(aliases),
                NativeSql.textArray(tags), NativeSql.typed(createdBy, Long.class),
                NativeSql.typed(runName, String.class)).orElseThrow();
    }

    Optional<Draft> draft(long id) {
        return NativeSql.first(em, """
                select d.id, d.project_id, e.name, p.name, d.collection, d.type, d.description, d.metadata::text,
                       array_to_json(d.aliases)::text, array_to_json(d.tags)::text, d.manifest_digest, d.version_id,
                       d.created_at, d.run_name
                from artifact_drafts d join project_names p on p.project_id = d.project_id
                join entity_names e on e.entity_id = p.entity_id
                where d.id = ?1""",
                row -> new Draft(row.longValue(0), row.longValue(1), row.string(2), row.string(3), row.string(4),
                        row.string(5), row.string(6), row.string(7), strings(row.string(8)), strings(row.string(9)),
                        row.string(10), row.longValue(11), row.time(12), row.string(13)),
                id);
    }

    /** The newest draft committed to the version with a manifest. */
    Optional<Long> manifestDraftOf(long versionId) {
        return NativeSql.first(em, """
                select id from artifact_drafts where version_id = ?1 and manifest_digest is not null
                order by id desc limit 1""", row -> row.longValue(0), versionId);
    }

    void setManifest(long draftId, String digest) {
        NativeSql.update(em, "update artifact_drafts set manifest_digest = ?1 where id = ?2", digest, draftId);
    }

    void setVersion(long draftId, long versionId) {
        NativeSql.update(em, "update artifact_drafts set version_id = ?1 where id = ?2", versionId, draftId);
    }

    /** Deletes a batch of the drafts not committed created before {@code before}; answers how many. */
    int deleteStaleDrafts(OffsetDateTime before) {
        return NativeSql.update(em, """
                delete from artifact_drafts where id in (
                    select id from artifact_drafts where version_id is null and created_at < ?1
                    order by id limit ?2 for update skip locked)""", before, BATCH);
    }

    // files of drafts ----------------------------------------------------------------------------------------------

    void announce(long draftId, String name, String md5) {
        NativeSql.update(em, """
                insert into artifact_draft_files (draft_id, name, md5) values (?1, ?2, ?3)
                on conflict (draft_id, name) do update set md5 = excluded.md5, blob = null, size = null""", draftId,
                name, md5);
    }

    Optional<DraftFile> file(long draftId, String name) {
        return NativeSql.first(em,
                "select name, md5, blob, size from artifact_draft_files where draft_id = ?1 and name = ?2",
                DraftStatements::file, draftId, name);
    }

    List<DraftFile> files(long draftId) {
        return NativeSql.list(em, "select name, md5, blob, size from artifact_draft_files where draft_id = ?1",
                DraftStatements::file, draftId);
    }

    void setFileBlob(long draftId, String name, String digest, long size) {
        NativeSql.update(em, "update artifact_draft_files set blob = ?1, size = ?2 where draft_id = ?3 and name = ?4",
                digest, size, draftId, name);
    }

    private static DraftFile file(NativeSql.Row row) {
        return new DraftFile(row.string(0), row.string(1), row.string(2), row.longValue(3));
    }

    // multipart uploads --------------------------------------------------------------------------------------------

    long insertUpload(long draftId, String name, String storeId, int parts) {
        return NativeSql.first(em, """
                insert into artifact_multipart_uploads (draft_id, name, store_id, parts) values (?1, ?2, ?3, ?4)
                returning id""", row -> row.longValue(0), draftId, name, storeId, parts).orElseThrow();
    }

    List<Upload> uploadsOf(long draftId, String name) {
        return NativeSql.list(em, """
                select id, draft_id, name, store_id, parts from artifact_multipart_uploads
                where draft_id = ?1 and name = ?2""", DraftStatements::upload, draftId, name);
    }

    Optional<Upload> upload(long id) {
        return NativeSql.first(em,
                "select id, draft_id, name, store_id, parts from artifact_multipart_uploads where id = ?1",
                DraftStatements::upload, id);
    }

    /** Takes the upload's row away; false when another completion or sweep took it first. */
    boolean deleteUpload(long id) {
        return NativeSql.update(em, "delete from artifact_multipart_uploads where id = ?1", id) == 1;
    }

    void deletePart(long uploadId, int part) {
        NativeSql.update(em, "delete from artifact_multipart_parts where upload_id = ?1 and part_number = ?2", uploadId,
                part);
    }

    void putPart(long uploadId, int part, String md5) {
        NativeSql.update(em, """
                insert into artifact_multipart_parts (upload_id, part_number, md5) values (?1, ?2, ?3)
                on conflict (upload_id, part_number) do update set md5 = excluded.md5""", uploadId, part, md5);
    }

    /** The MD5s (hex) of the upload's parts stored, by part number. */
    Map<Integer, String> parts(long uploadId) {
        Map<Integer, String> stored = new HashMap<>();
        NativeSql.list(em, "select part_number, md5 from artifact_multipart_parts where upload_id = ?1",
                row -> stored.put(row.intValue(0), row.string(1)), uploadId);
        return stored;
    }

    /**
     * Takes (deletes and answers) a batch of the uploads started before {@code before} or of drafts not committed
     * created before it; rows other sweeps hold are skipped.
     */
    List<Upload> takeStaleUploads(OffsetDateTime before) {
        List<Upload> found = NativeSql.list(em, """
                select u.id, u.draft_id, u.name, u.store_id, u.parts from artifact_multipart_uploads u
                join artifact_drafts d on d.id = u.draft_id
                where u.created_at < ?1 or (d.version_id is null and d.created_at < ?1)
                order by u.id limit ?2 for update of u skip locked""", DraftStatements::upload, before, BATCH);
        if (!found.isEmpty()) {
            NativeSql.update(em, "delete from artifact_multipart_uploads where id = any(cast(?1 as bigint[]))",
                    "{" + String.join(",", found.stream().map(u -> Long.toString(u.id())).toList()) + "}");
        }
        return found;
    }

    private static Upload upload(NativeSql.Row row) {
        return new Upload(row.longValue(0), row.longValue(1), row.string(2), row.string(3), row.intValue(4));
    }

    private List<String> strings(String jsonArray) {
        List<String> values = new ArrayList<>();
        if (jsonArray != null) {
            try {
                for (JsonNode value : json.readTree(jsonArray)) {
                    values.add(value.asText());
                }
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("Stored JSON is not readable", e);
            }
        }
        return values;
    }
}

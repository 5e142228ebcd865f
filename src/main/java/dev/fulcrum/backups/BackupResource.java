package dev.fulcrum.backups;

import java.time.format.DateTimeFormatter;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.api.AdministrationApi;

/** {@code GET /api/v1/admin/backup}: the archive {@link Backups} makes, streamed, for a server administrator. */
public class BackupResource implements AdministrationApi {

    private static final DateTimeFormatter FILE_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");

    @Inject
    Access access;

    @Inject
    Backups backups;

    @Override
    public Response downloadBackup() {
        access.serverAdmin();
        Backups.Prepared prepared = backups.prepare();
        StreamingOutput archive = prepared::write;
        String file = "fulcrum-backup-" + FILE_TIME.format(prepared.manifest().madeAt()) + ".tar";
        return Response.ok(archive, "application/x-tar")
                .header(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"" + file + "\"").build();
    }
}

package dev.fulcrum.platform.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import jakarta.persistence.PersistenceException;
import jakarta.ws.rs.core.Response;

import org.hibernate.exception.GenericJDBCException;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.StorageFull;

/**
 * Which failures are a full storage, and the 507 each interface answers for one: the file system's ENOSPC and EDQUOT
 * however deep they are wrapped, PostgreSQL's disk_full (53100) and insufficient_resources (53000) as the JDBC driver,
 * Hibernate and JTA wrap them; nothing else.
 */
class StorageFullTest {

    /** PostgreSQL's answer when it cannot extend a table's file, as the driver reports it. */
    static PSQLException databaseFull(String state) {
        return new PSQLException(new ServerErrorMessage(
                "SERROR\0C" + state + "\0Mcould not extend file \"base/16384/16397\": No space left on device\0"
                        + "HCheck free disk space.\0"));
    }

    @Test
    void theFileSystemsNoSpaceIsAFullStorageHoweverWrapped() {
        IOException enospc = new IOException("No space left on device");
        assertTrue(StorageFull.noSpace(enospc));
        assertTrue(StorageFull.noSpace(new UncheckedIOException(new IOException("write failed", enospc))));
        assertTrue(StorageFull.noSpace(new FileSystemException("/data/blobs/tmp/x", null, "No space left on device")));
        assertTrue(StorageFull.noSpace(new IOException("Disk quota exceeded")));
        assertTrue(StorageFull.noSpace(
                new RuntimeException("commit failed", suppressing(new IllegalStateException("rollback"), enospc))));
        assertTrue(!StorageFull.noSpace(new IOException("Connection reset by peer")));
        assertTrue(!StorageFull.noSpace(new FileSystemException("/x", null, "Permission denied")));
        assertTrue(!StorageFull.noSpace(new RuntimeException("No space left on device"))); // not an I/O error
    }

    @Test
    void aFullStorageNamedByItsStoreSaysWhereToFreeSpace() {
        IOException enospc = new IOException("No space left on device");
        IOException named = StorageFull.named(Path.of("/data/blobs"), "fulcrum.artifacts.blob-dir", enospc);
        StorageFull.NoSpace noSpace = (StorageFull.NoSpace) named;
        assertEquals("/data/blobs", noSpace.where());
        assertEquals("fulcrum.artifacts.blob-dir", noSpace.setting());
        assertSame(enospc, noSpace.getCause());
        assertSame(noSpace, StorageFull.named(Path.of("/other"), "other", noSpace), "named once, where it happened");
        IOException other = new IOException("Connection reset by peer");
        assertSame(other, StorageFull.named(Path.of("/data/blobs"), "fulcrum.artifacts.blob-dir", other));
        assertEquals(ApiException.Kind.STORAGE_FULL,
                StorageFull.refusal(new UncheckedIOException(noSpace), "PUT /x").kind());
    }

    @Test
    void theDatabasesDiskFullIsAFullStorageAsHibernateAndJtaWrapIt() {
        for (String state : List.of("53100", "53000")) {
            PSQLException full = databaseFull(state);
            assertEquals(state, full.getSQLState());
            assertTrue(StorageFull.databaseFull(full));
            Exception wrapped = new PersistenceException("could not execute statement",
                    new GenericJDBCException("could not execute statement", full));
            assertTrue(StorageFull.databaseFull(wrapped));
            ApiException refusal = StorageFull.refusal(wrapped, "POST /table/create");
            assertNotNull(refusal);
            assertEquals(ApiException.Kind.STORAGE_FULL, refusal.kind());
            assertEquals(StorageFull.MESSAGE, refusal.getMessage());
        }
        // a batch's failure carries the server's error as its next exception
        BatchUpdateException batch = new BatchUpdateException("Batch entry 0 failed", "53100", new int[0]);
        assertTrue(StorageFull.databaseFull(batch));
        BatchUpdateException chained = new BatchUpdateException("Batch entry 0 failed", null, new int[0]);
        chained.setNextException(databaseFull("53100"));
        assertTrue(StorageFull.databaseFull(chained));
        // other resource shortages and other failures are not a full disk
        assertNull(StorageFull.refusal(new SQLException("too many connections", "53300"), "POST /x"));
        assertNull(StorageFull.refusal(new SQLException("out of memory", "53200"), "POST /x"));
        assertNull(StorageFull.refusal(new SQLException("duplicate key", "23505"), "POST /x"));
        assertNull(StorageFull.refusal(new IllegalStateException("bug"), "POST /x"));
    }

    @Test
    void aFullStorageIsA507InTheShapeOfEachInterface() {
        assertEquals(507, ErrorResponses.status(ApiException.Kind.STORAGE_FULL));
        ErrorResponses.Reply reply = ErrorResponses.Reply.of(StorageFull.refusal(databaseFull("53100"), "POST /x"));
        assertEquals(507, reply.status());

        Response problem = render("/api/v1/teams", reply);
        assertEquals("application/problem+json", problem.getMediaType().toString());
        Map<?, ?> body = (Map<?, ?>) problem.getEntity();
        assertEquals(507, body.get("status"));
        assertEquals("Insufficient Storage", body.get("title"));
        assertEquals(StorageFull.MESSAGE, body.get("detail"));

        Map<?, ?> detail = (Map<?, ?>) render("/table/create", reply).getEntity();
        assertEquals(Map.of("detail", StorageFull.MESSAGE), detail);

        Map<?, ?> openAi = (Map<?, ?>) ((Map<?, ?>) render("/v1/chat/completions", reply).getEntity()).get("error");
        assertEquals(StorageFull.MESSAGE, openAi.get("message"));
        assertEquals("server_error", openAi.get("type"));
        assertEquals("insufficient_storage", openAi.get("code"));

        Map<?, ?> graphql = (Map<?, ?>) render("/graphql", reply).getEntity();
        assertEquals(List.of(Map.of("message", StorageFull.MESSAGE)), graphql.get("errors"));
    }

    private static Response render(String path, ErrorResponses.Reply reply) {
        Response response = ErrorResponses.render(ErrorShapes.at(path), path, reply);
        assertEquals(507, response.getStatus(), path);
        return response;
    }

    private static Throwable suppressing(Throwable e, Throwable suppressed) {
        e.addSuppressed(suppressed);
        return e;
    }
}

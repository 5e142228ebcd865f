package dev.fulcrum.wandb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The W&B door translates (issue 60 §2), as Apicurio's {@code ccompat} layer does: its classes turn GraphQL and signed
 * URLs into calls of the {@code artifacts}, {@code runs} and {@code accounts} services, and so none of them writes a
 * blob (the artifacts' blob store and its checksums are the artifacts services' own), imports another package's
 * {@code *Statements} class, or writes another package's entities. SQL is only in the door's own statements class
 * ({@code WandbLineageStatements}, lineage: the one table it owns; {@code TableOwnershipTest} checks the tables it
 * names), never through {@code NativeSql}, an {@code EntityManager} or JDBC anywhere else in the package.
 */
class WandbTranslatesTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");

    /** The artifacts package's classes that write blobs (or hold them): only its services use them. */
    private static final Pattern BLOB_WRITES = Pattern
            .compile("\\b(BlobStore|BlobStores|FileSystemBlobStore|S3BlobStore|BlobChecksums|BlobCollector)\\b");

    /** SQL reaching the database: NativeSql, the ORM's entity manager and native queries, JDBC. */
    private static final Pattern SQL = Pattern
            .compile("\\b(NativeSql|EntityManager|createNativeQuery|JdbcTransactions)\\b|\\bjava\\.sql\\.");

    /** Another package's statements class, imported or named in full. */
    private static final Pattern OTHERS_STATEMENTS = Pattern
            .compile("\\bdev\\.fulcrum\\.(?!wandb\\.)(?:\\w+\\.)*\\w*Statements\\b");

    /** Panache's writes on any entity ({@code Entity.delete(...)} and {@code Entity.update(...)}: see violations). */
    private static final Pattern ENTITY_WRITES = Pattern
            .compile("\\.(persist|persistAndFlush|deleteById|deleteAll)\\s*\\(");

    private static final Pattern COMMENTS = Pattern.compile("/\\*.*?\\*/|(?m)^\\s*//.*$", Pattern.DOTALL);

    @Test
    void theDoorTranslatesOnly() throws IOException {
        Set<String> entities = entities();
        List<String> found = new ArrayList<>();
        List<Path> sources;
        try (Stream<Path> files = Files.walk(SOURCES.resolve("wandb"))) {
            sources = files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
        for (Path source : sources) {
            found.addAll(violations(source.getFileName().toString(), Files.readString(source), entities));
        }
        assertTrue(sources.size() > 20, "the door's sources are read: " + sources.size());
        assertTrue(entities.size() > 20, "the entities are found: " + entities);
        assertEquals(List.of(), found,
                "call a service of artifacts or runs (ArtifactDrafts, MultipartUploads, RunStreams, ...) instead");
    }

    @Test
    void theRuleFindsWhatTheDoorUsedToDo() {
        // what WandbUploads and WandbRunStreams did before issue 60 §2
        String before = """
                package dev.fulcrum.wandb;
                import dev.fulcrum.artifacts.BlobStore;
                import dev.fulcrum.platform.database.NativeSql;
                import dev.fulcrum.runs.RunStatements.Tails;
                /** Uses {@link BlobStore} in a comment only: not a finding. */
                class WandbUploads {
                    @jakarta.inject.Inject jakarta.persistence.EntityManager em;
                    void put() { NativeSql.update(em, "delete from wandb_artifact_uploads where id = ?1", 1); }
                    void entity() { dev.fulcrum.runs.Run.deleteById(1L); new dev.fulcrum.runs.Run().persist(); }
                    void bulk() { Run.update("state = 'failed'"); }
                }
                """;
        List<String> found = violations("WandbUploads.java", before, Set.of("Run"));
        assertEquals(8, found.size(), found.toString());
        assertTrue(found.stream().anyMatch(v -> v.contains("writes blobs: BlobStore")), found.toString());
        assertTrue(found.stream().anyMatch(v -> v.contains("runs SQL: NativeSql")), found.toString());
        assertTrue(found.stream().anyMatch(v -> v.contains("runs SQL: EntityManager")), found.toString());
        assertTrue(found.stream().anyMatch(v -> v.contains("dev.fulcrum.runs.RunStatements")), found.toString());
        assertTrue(found.stream().anyMatch(v -> v.contains("writes an entity: .deleteById(")), found.toString());
        assertTrue(found.stream().anyMatch(v -> v.contains("writes an entity: Run.update(")), found.toString());
        // the door's own statements class may run SQL (on its own tables), never another's statements or blobs
        assertEquals(List.of(), violations("WandbLineageStatements.java",
                "class WandbLineageStatements { jakarta.persistence.EntityManager em; void k() { NativeSql.update(em,"
                        + " \"insert into wandb_artifact_lineage\"); } }",
                Set.of()));
        assertEquals(1,
                violations("WandbLineageStatements.java", "import dev.fulcrum.runs.RunStatements;", Set.of()).size());
    }

    static List<String> violations(String file, String source, Set<String> entities) {
        String code = COMMENTS.matcher(source).replaceAll("");
        List<String> found = new ArrayList<>();
        Matcher blobs = BLOB_WRITES.matcher(code);
        while (blobs.find()) {
            found.add(file + " writes blobs: " + blobs.group());
        }
        if (!file.endsWith("Statements.java")) {
            Matcher sql = SQL.matcher(code);
            while (sql.find()) {
                found.add(file + " runs SQL: " + sql.group());
            }
        }
        Matcher statements = OTHERS_STATEMENTS.matcher(code);
        while (statements.find()) {
            found.add(file + " uses another package's statements: " + statements.group());
        }
        Matcher writes = ENTITY_WRITES.matcher(code);
        while (writes.find()) {
            found.add(file + " writes an entity: " + writes.group());
        }
        if (!entities.isEmpty()) {
            Matcher statics = Pattern.compile("\\b(?:" + String.join("|", entities) + ")\\.(?:delete|update)\\s*\\(")
                    .matcher(code);
            while (statics.find()) {
                found.add(file + " writes an entity: " + statics.group());
            }
        }
        return found;
    }

    /** The simple names of the Panache entities of every package. */
    private static Set<String> entities() throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                if (Files.readString(file).contains("extends PanacheEntity")) {
                    names.add(file.getFileName().toString().replace(".java", ""));
                }
            }
        }
        return names;
    }
}

package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Each feature package keeps its SQL in its storage classes, and the others call its services. The rule:
 * <ol>
 * <li>A class that sends SQL through {@link dev.fulcrum.platform.database.NativeSql} (its {@code update},
 * {@code batch}, {@code list}, {@code first}, {@code read}, {@code copyIn}, {@code copyOut}) or composes SQL with its
 * {@code param} is a storage class, and a storage class is named {@code *Statements}. Opening a connection
 * ({@code pooled}, {@code session}), typing a parameter ({@code typed}, {@code textArray}) and reading a row
 * ({@code Row}, {@code Cursor}, {@code time}) are not SQL: services do them, and hand the connection or entity manager
 * to the statements, so a transaction stays the service's.</li>
 * <li>A package's {@code *Statements} classes are named only in that package (the top package under
 * {@code dev.fulcrum}: {@code inference/gateway} is {@code inference}'s); another package calls its services.</li>
 * <li>Which tables a storage class names is {@link TableOwnershipTest}'s: only the owning package's.</li>
 * </ol>
 * JPQL/HQL on a package's own entities (Panache {@code find}/{@code list}/{@code update}, {@code em.createQuery}) is
 * not SQL text in this sense and stays in the services: it names entity classes the compiler checks, and only their
 * package uses them. The exemptions below are temporary and named: each must still be needed
 * ({@link #everyExemptionIsStillNeeded}).
 */
class StorageClassesTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");

    /** A call of NativeSql that sends or composes SQL (also through a static import). */
    static final Pattern SQL_CALL = Pattern
            .compile("\\bNativeSql\\s*\\.\\s*(?:update|batch|list|first|read|copyIn|copyOut|param)\\s*\\("
                    + "|import\\s+static\\s+dev\\.fulcrum\\.platform\\.database\\.NativeSql\\.");

    /** A storage class's name. */
    static final Pattern STORAGE = Pattern.compile("\\w+Statements");

    /** The database infrastructure: NativeSql itself ({@link SqlOwnershipTest} names the rest). */
    private static final String INFRASTRUCTURE = "platform/database/";

    private record Source(String name, String pkg, String className, String text) {
    }

    private static List<Source> sources() throws IOException {
        List<Source> sources = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Path relative = SOURCES.relativize(file);
                String fileName = relative.getFileName().toString();
                sources.add(new Source(relative.toString().replace('\\', '/'), relative.getName(0).toString(),
                        fileName.substring(0, fileName.length() - ".java".length()), Files.readString(file)));
            }
        }
        assertTrue(sources.size() > 200, "the sources are read: " + sources.size());
        return sources;
    }

    /** The SQL calls of a class that is not a storage class (none for a storage class). */
    static List<String> sqlOutsideStorage(String className, String text) {
        if (STORAGE.matcher(className).matches()) {
            return List.of();
        }
        List<String> found = new ArrayList<>();
        Matcher call = SQL_CALL.matcher(text);
        while (call.find()) {
            found.add(call.group().replaceAll("\\s+", ""));
        }
        return found;
    }

    /** The storage classes of other packages a source names ({@code storage}: class name to its package). */
    static List<String> othersStorage(String pkg, String text, Map<String, String> storage) {
        List<String> found = new ArrayList<>();
        for (Map.Entry<String, String> owned : storage.entrySet()) {
            if (!owned.getValue().equals(pkg) && Pattern.compile("\\b" + owned.getKey() + "\\b").matcher(text).find()) {
                found.add(owned.getKey());
            }
        }
        return found;
    }

    @Test
    void onlyStorageClassesSendSql() throws IOException {
        List<String> found = new ArrayList<>();
        for (Source source : sources()) {
            if (source.name().startsWith(INFRASTRUCTURE)) {
                continue;
            }
            for (String call : sqlOutsideStorage(source.className(), source.text())) {
                found.add(source.name() + ": " + call);
            }
        }
        assertEquals(List.of(), found, "move the SQL into the package's *Statements class; the service calls it");
    }

    @Test
    void noPackageCallsAnothersStatements() throws IOException {
        List<Source> sources = sources();
        Map<String, String> storage = new TreeMap<>();
        for (Source source : sources) {
            if (STORAGE.matcher(source.className()).matches()) {
                storage.put(source.className(), source.pkg());
            }
        }
        assertTrue(storage.containsKey("RunStatements") && storage.containsKey("AccessStatements"),
                "the storage classes are found: " + storage);
        List<String> found = new ArrayList<>();
        for (Source source : sources) {
            for (String other : othersStorage(source.pkg(), source.text(), storage)) {
                found.add(source.name() + ": " + other + " (of " + storage.get(other) + ")");
            }
        }
        assertEquals(List.of(), found, "call the owning package's service, not its statements");
    }

    @Test
    void theRuleFindsSqlOutsideStorageAndCrossings() {
        assertEquals(List.of("NativeSql.update("),
                sqlOutsideStorage("RunStops", "NativeSql.update(em, \"update runs set x = 1 where id = ?1\", id);"));
        assertEquals(List.of("NativeSql.first("),
                sqlOutsideStorage("RunFiles", "return NativeSql\n        .first(em, \"select 1\", row -> row);"));
        assertEquals(List.of("NativeSql.param("), sqlOutsideStorage("CallQueries", "NativeSql.param(params, v)"));
        assertEquals(1,
                sqlOutsideStorage("Calls", "import static dev.fulcrum.platform.database.NativeSql.update;").size());
        assertEquals(List.of(), sqlOutsideStorage("RunStatements", "NativeSql.update(em, \"update runs set x = 1\");"));
        assertEquals(List.of(), sqlOutsideStorage("ApiKeys",
                "NativeSql.pooled(dataSource, c -> KeyStatements.caller(c, hash)); NativeSql.typed(d, String.class)"));
        Map<String, String> storage = Map.of("RunStatements", "runs", "AccessStatements", "accounts");
        assertEquals(List.of("RunStatements"), othersStorage("wandb", "@Inject RunStatements statements;", storage));
        assertEquals(List.of(), othersStorage("runs", "@Inject RunStatements statements;", storage));
        assertFalse(othersStorage("wandb", "RunStatementsX y;", storage).contains("RunStatements"));
    }
}

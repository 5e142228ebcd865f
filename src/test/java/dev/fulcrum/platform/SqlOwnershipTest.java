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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * SQL reaches the database through one helper, {@link dev.fulcrum.platform.database.NativeSql}: no other class prepares
 * a statement, takes a connection from the pool, unwraps the ORM's session or the driver's connection, or sends a
 * Hibernate native query. The few others are the platform's own database infrastructure, each named here with why.
 */
class SqlOwnershipTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");

    /** Raw JDBC and the ORM's ways around it. */
    static final Pattern RAW_JDBC = Pattern.compile("\\b(?:createNativeQuery|prepareStatement|prepareCall"
            + "|createStatement|getConnection|doReturningWork|doWork|getCopyAPI)\\s*\\("
            + "|\\b(?:PreparedStatement|CallableStatement|DriverManager)\\b"
            + "|\\bunwrap\\(\\s*(?:Session|SessionImplementor|Connection|PGConnection)\\.class");

    /** The classes that may, and why. */
    private static final Map<String, String> INFRASTRUCTURE = Map.of( //
            "platform/database/NativeSql.java", "the one helper", //
            "platform/database/JdbcTransactions.java",
            "a transaction on a pooled connection, for worker threads; its"
                    + " statements go through NativeSql's connection forms",
            "platform/database/DatabaseHealth.java",
            "the readiness probe: a validation query on a connection of its own",
            "platform/database/DatabaseGauge.java", "gauges of metrics: one counting query on a connection of its own",
            "platform/database/AdvisoryLocks.java", "pg_advisory_xact_lock in the caller's transaction",
            "accounts/AccessChanges.java",
            "LISTEN on a dedicated connection and the driver's notification API:" + " no statement on a table");

    @Test
    void rawJdbcLivesOnlyInNativeSqlAndTheDatabaseInfrastructure() throws IOException {
        List<String> found = new ArrayList<>();
        int read = 0;
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path source : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                String name = SOURCES.relativize(source).toString();
                read++;
                if (INFRASTRUCTURE.containsKey(name)) {
                    continue;
                }
                Matcher raw = RAW_JDBC.matcher(Files.readString(source));
                while (raw.find()) {
                    found.add(name + ": " + raw.group());
                }
            }
        }
        assertTrue(read > 200, "the sources are read: " + read);
        assertEquals(List.of(), found, "go through platform/database/NativeSql (extend it where it lacks something)");
    }

    @Test
    void theInfrastructureStillNeedsItsExemption() throws IOException {
        for (String name : INFRASTRUCTURE.keySet()) {
            assertTrue(RAW_JDBC.matcher(Files.readString(SOURCES.resolve(name))).find(),
                    name + " no longer uses raw JDBC: take it off the list");
        }
    }

    @Test
    void theRuleFindsRawJdbc() {
        assertTrue(RAW_JDBC.matcher("try (Connection c = dataSource.getConnection()) {").find());
        assertTrue(RAW_JDBC.matcher("try (PreparedStatement s = c.prepareStatement(sql)) {").find());
        assertTrue(RAW_JDBC.matcher("em.unwrap(Session.class).doReturningWork(c -> 1)").find());
        assertTrue(RAW_JDBC.matcher("c.unwrap(PGConnection.class).getCopyAPI()").find());
        assertTrue(RAW_JDBC.matcher("em.createNativeQuery(\"select 1\")").find());
        assertFalse(RAW_JDBC.matcher("NativeSql.pooled(dataSource, connection -> NativeSql.first(connection, sql))")
                .find());
        assertFalse(RAW_JDBC.matcher("NativeSql.list(em, \"select id from t where n = ?1\", row -> row, n)").find());
    }
}

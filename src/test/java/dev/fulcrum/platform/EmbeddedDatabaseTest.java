package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.fulcrum.platform.database.EmbeddedDatabase;

/**
 * The embedded PostgreSQL keeps its data across stops and starts, survives a stale pid file, and a restart begun early
 * is the one the application gets (or is stopped when it is not used); a directory another Fulcrum holds is refused.
 */
class EmbeddedDatabaseTest {

    private Path directory;
    private EmbeddedDatabase database;

    @BeforeEach
    void createDirectory() throws IOException {
        // a name no other process's command line contains, so that only our postmaster matches it
        directory = Files.createTempDirectory("fulcrum-edb").resolve("pgdata-" + System.nanoTime());
    }

    @AfterEach
    void stopAndDelete() throws IOException {
        if (database != null) {
            database.stop();
        }
        try (Stream<Path> paths = Files.walk(directory.getParent())) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Test
    void aRowWrittenBeforeAStopIsThereAfterTheNextStart() throws SQLException {
        database = EmbeddedDatabase.start(directory, 0, true);
        try (Connection connection = connect(database);
                Statement statement = connection.createStatement()) {
            statement.execute("create table notes (id int primary key, body text not null)");
            statement.execute("insert into notes values (1, 'kept')");
        }
        database.stop();
        assertFalse(Files.exists(directory.resolve("postmaster.pid")), "a stopped server leaves no pid file");

        database = EmbeddedDatabase.start(directory, 0, true);
        assertEquals("kept", firstNote(database));
    }

    @Test
    void aPidFileNamingALiveProcessThatIsNotItsPostmasterIsRemoved() throws IOException, SQLException {
        database = EmbeddedDatabase.start(directory, 0, true);
        try (Connection connection = connect(database);
                Statement statement = connection.createStatement()) {
            statement.execute("create table notes (id int primary key, body text not null)");
            statement.execute("insert into notes values (1, 'kept')");
        }
        database.stop();
        database = null;

        long self = ProcessHandle.current().pid();
        assumeFalse(commandLine(self).contains(directory.getFileName().toString()),
                "this JVM's command line must not name the data directory");
        // what a crashed server leaves behind once its pid has been reused, here by this very JVM
        Path pidFile = directory.resolve("postmaster.pid");
        Files.writeString(pidFile, self + "\n" + directory.toAbsolutePath() + "\n", StandardCharsets.UTF_8);

        database = EmbeddedDatabase.start(directory, 0, true);
        assertTrue(ProcessHandle.current().isAlive());
        assertEquals("kept", firstNote(database));
        long postmaster = Long.parseLong(Files.readAllLines(pidFile, StandardCharsets.UTF_8).get(0).trim());
        assertTrue(postmaster != self, "the pid file now names the new postmaster");
        assertTrue(ProcessHandle.of(postmaster).map(ProcessHandle::isAlive).orElse(false));
    }

    @Test
    void aDirectoryInUseIsRefusedWithOneLineNamingItsHolder() throws SQLException {
        createWithANote();
        database = EmbeddedDatabase.start(directory, 0, true);

        EmbeddedDatabase.StartFailure refused = assertThrows(EmbeddedDatabase.StartFailure.class,
                () -> EmbeddedDatabase.start(directory, 0, true));
        assertTrue(refused.getMessage().contains("in use by another Fulcrum (process " + ProcessHandle.current().pid()),
                refused.getMessage());
        assertTrue(refused.getMessage().contains("What to do:"), refused.getMessage());
        assertFalse(refused.getMessage().contains("\n"), "one line");
        assertEquals("kept", firstNote(database), "the running database was left alone");

        database.stop();
        database = EmbeddedDatabase.start(directory, 0, true);
        assertEquals("kept", firstNote(database), "the directory is free again once its holder stopped");
    }

    @Test
    void aRestartBegunEarlyIsTheDatabaseThatTheFirstReadOfTheUrlGets() throws SQLException {
        createWithANote();

        EmbeddedDatabase.startEarly(directory, 0);
        database = EmbeddedDatabase.startOnce(directory, 0);

        assertEquals("kept", firstNote(database));
        assertEquals(database, EmbeddedDatabase.current().orElseThrow(), "the one this JVM stops at shutdown");
        assertEquals(database, EmbeddedDatabase.startOnce(directory, 0), "started once");
    }

    @Test
    void aRestartBegunEarlyThatTheConfigurationDoesNotUseIsStoppedAgain() throws SQLException {
        createWithANote();

        EmbeddedDatabase.startEarly(directory, 0);
        EmbeddedDatabase.abandonEarlyStart();

        assertFalse(Files.exists(directory.resolve("postmaster.pid")), "no PostgreSQL is left running");
        assertTrue(EmbeddedDatabase.current().isEmpty());
    }

    @Test
    void aFirstStartIsNotBegunEarly() {
        EmbeddedDatabase.startEarly(directory, 0);

        assertFalse(Files.exists(directory), "nothing is created before the configuration is read");
        EmbeddedDatabase.abandonEarlyStart();
    }

    private void createWithANote() throws SQLException {
        EmbeddedDatabase first = EmbeddedDatabase.start(directory, 0, true);
        try (Connection connection = connect(first);
                Statement statement = connection.createStatement()) {
            statement.execute("create table notes (id int primary key, body text not null)");
            statement.execute("insert into notes values (1, 'kept')");
        }
        first.stop();
    }

    private static Connection connect(EmbeddedDatabase database) throws SQLException {
        return DriverManager.getConnection(database.jdbcUrl());
    }

    private static String firstNote(EmbeddedDatabase database) throws SQLException {
        try (Connection connection = connect(database);
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("select body from notes where id = 1")) {
            assertTrue(rs.next(), "the row is still there");
            return rs.getString(1);
        }
    }

    private static String commandLine(long pid) throws IOException {
        Path cmdline = Path.of("/proc", Long.toString(pid), "cmdline");
        return Files.isReadable(cmdline) ? Files.readString(cmdline, StandardCharsets.UTF_8) : "";
    }
}

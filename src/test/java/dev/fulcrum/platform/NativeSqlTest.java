package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import io.quarkus.test.TestTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.User;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.database.NativeSql.Row;

/** Native SQL against the real PostgreSQL: typed nulls, text arrays, rows by column, timestamps in UTC. */
@QuarkusTest
class NativeSqlTest {

    @Inject
    EntityManager em;

    record Item(String name, Long size, OffsetDateTime at) {
    }

    @Test
    @TestTransaction
    void rowsAreReadByColumnWithTypes() {
        List<Item> items = NativeSql.list(em, """
                select name, size, at from (values ('a', 1::bigint, timestamptz '2026-01-02 03:04:05+02'),
                ('b', null, null)) as t (name, size, at) where name >= ?1 order by name""",
                row -> new Item(row.string(0), row.longValue(1), row.time(2)), "a");
        assertEquals(
                List.of(new Item("a", 1L, OffsetDateTime.parse("2026-01-02T01:04:05Z")), new Item("b", null, null)),
                items);
    }

    @Test
    @TestTransaction
    void nullsAreBoundWithTheirType() {
        String sql = "select cast(?1 as integer) is null, coalesce(cast(?1 as integer), -1)";
        Row none = NativeSql.first(em, sql, row -> row, NativeSql.typed(null, Integer.class)).orElseThrow();
        assertEquals(true, none.bool(0));
        assertEquals(-1, none.intValue(1));
        Row seven = NativeSql.first(em, sql, row -> row, NativeSql.typed(7, Integer.class)).orElseThrow();
        assertEquals(false, seven.bool(0));
        assertEquals(7, seven.intValue(1));
        assertThrows(IllegalArgumentException.class, () -> NativeSql.list(em, sql, row -> row, (Object) null));
    }

    @Test
    @TestTransaction
    void textArraysKeepQuotesAndBackslashes() {
        List<String> values = List.of("plain", "with \"quotes\"", "back\\slash", "comma,and space", "");
        List<String> back = NativeSql.list(em, "select unnest(cast(?1 as text[]))", row -> row.string(0),
                NativeSql.textArray(values));
        assertEquals(values, back);
        assertEquals(Optional.of(true), NativeSql.first(em, "select ?2 = any(cast(?1 as text[]))", row -> row.bool(0),
                NativeSql.textArray(values), "back\\slash"));
        assertEquals(0, NativeSql
                .list(em, "select unnest(cast(?1 as text[]))", row -> row, NativeSql.textArray(List.of())).size());
    }

    @Test
    @TestTransaction
    void updatesAnswerTheRowsTheyChanged() {
        NativeSql.update(em, "create temporary table native_sql_test (id text primary key, n integer) on commit drop");
        assertEquals(1, NativeSql.update(em, "insert into native_sql_test values (?1, ?2)", "x", 1));
        assertEquals(0, NativeSql.update(em, "insert into native_sql_test values (?1, ?2) on conflict (id) do nothing",
                "x", 2));
        assertEquals(Optional.of(1),
                NativeSql.first(em, "select n from native_sql_test where id = ?1", row -> row.intValue(0), "x"));
        assertEquals(Optional.empty(),
                NativeSql.first(em, "select n from native_sql_test where id = ?1", row -> row.intValue(0), "y"));
    }

    @Test
    void timestampsBecomeUtc() {
        OffsetDateTime utc = OffsetDateTime.parse("2026-11-23T10:00:00Z");
        assertEquals(utc, NativeSql.time(Instant.parse("2026-11-23T10:00:00Z")));
        assertEquals(utc, NativeSql.time(OffsetDateTime.parse("2026-11-23T12:00:00+02:00")));
        assertEquals(utc, NativeSql.time(Timestamp.from(utc.toInstant())));
        assertEquals(ZoneOffset.UTC, NativeSql.time(utc.atZoneSameInstant(ZoneOffset.ofHours(-5))).getOffset());
        assertNull(NativeSql.time(null));
        assertThrows(IllegalArgumentException.class, () -> NativeSql.time("2026-11-23"));
    }

    @Test
    void arrayLiteralsAreQuoted() {
        assertEquals("{}", NativeSql.textArray(List.of()).literal());
        assertEquals("{\"a\",\"b \\\"c\\\"\",\"d\\\\e\"}",
                NativeSql.textArray(List.of("a", "b \"c\"", "d\\e")).literal());
    }

    @Test
    @TestTransaction
    void numberedParametersMayRepeatAndComeInAnyOrder() {
        assertEquals(Optional.of("b-a-b"),
                NativeSql.first(em, "select ?2 || '-' || ?1 || '-' || ?2", row -> row.string(0), "a", "b"));
        assertEquals(Optional.of("?1 stays"), NativeSql.first(em, "select '?1 stays'", row -> row.string(0)));
        assertThrows(IllegalArgumentException.class, () -> NativeSql.list(em, "select ?", row -> row));
        assertThrows(IllegalArgumentException.class, () -> NativeSql.list(em, "select ?2", row -> row, "only one"));
    }

    @Test
    @TestTransaction
    void jsonIsReadAsTextAndArraysAsJavaArrays() {
        Row row = NativeSql.first(em, "select cast('{\"a\": 1}' as jsonb), cast(?1 as bigint[]), cast(?2 as text[])",
                r -> r, new Long[] { 1L, null, 3L }, new String[] { "x", null }).orElseThrow();
        assertEquals("{\"a\": 1}", row.string(0));
        assertArrayEquals(new Long[] { 1L, null, 3L }, (Long[]) row.value(1));
        assertArrayEquals(new String[] { "x", null }, (String[]) row.value(2));
    }

    @Test
    @TestTransaction
    void entityChangesAreWrittenBeforeTheStatementRuns() {
        User user = User.find("username", "admin").firstResult();
        String before = user.email;
        user.email = "changed-before-native-sql@example.com";
        assertEquals(Optional.of(user.email),
                NativeSql.first(em, "select email from users where id = ?1", r -> r.string(0), user.id));
        user.email = before;
    }
}

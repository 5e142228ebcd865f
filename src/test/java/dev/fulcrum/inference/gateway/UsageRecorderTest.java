package dev.fulcrum.inference.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.inference.api.model.InferenceUsageRow;
import dev.fulcrum.inference.gateway.UsageRecorder.Usage;
import dev.fulcrum.support.Fixtures;

/**
 * Usage records reach their table through the binary COPY unchanged: every column, text beyond ASCII, microseconds; a
 * report summarises the times they took.
 */
@QuarkusTest
class UsageRecorderTest {

    @Inject
    UsageRecorder recorder;

    @Inject
    EntityManager em;

    @Inject
    UsageReports reports;

    @Test
    void aRecordIsStoredAsGiven() {
        String entity = Fixtures.unique("usage");
        OffsetDateTime before2000 = OffsetDateTime.of(1999, 12, 31, 23, 59, 59, 123_456_000, ZoneOffset.UTC);
        OffsetDateTime at = OffsetDateTime.of(2026, 11, 21, 22, 30, 1, 654_321_000, ZoneOffset.ofHours(2));
        recorder.record(
                new Usage(at, entity, "prøject", 42L, "modèle/ü-7B", 11, 22, 33, 200, UsageMeter.TINKER_SAMPLE));
        recorder.record(new Usage(before2000, entity, "p", Long.MAX_VALUE, "m", 0, Integer.MAX_VALUE, 0, 499,
                UsageMeter.COMPLETION));
        recorder.flush();

        List<?> rows = QuarkusTransaction.requiringNew().call(() -> em.createNativeQuery("""
                select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), project, user_id, model,
                       prompt_tokens, completion_tokens, latency_ms, status, kind
                from inference_usage where entity = ?1 order by created_at desc""").setParameter(1, entity)
                .getResultList());
        assertEquals(2, rows.size());
        Object[] first = (Object[]) rows.get(0);
        assertEquals("2026-11-21 20:30:01.654321", first[0]);
        assertEquals("prøject", first[1]);
        assertEquals(42L, ((Number) first[2]).longValue());
        assertEquals("modèle/ü-7B", first[3]);
        assertEquals(List.of(11, 22, 33, 200), List.of(((Number) first[4]).intValue(), ((Number) first[5]).intValue(),
                ((Number) first[6]).intValue(), ((Number) first[7]).intValue()));
        assertEquals("tinker_sample", first[8]);
        Object[] second = (Object[]) rows.get(1);
        assertEquals("1999-12-31 23:59:59.123456", second[0]);
        assertEquals(Long.MAX_VALUE, ((Number) second[2]).longValue());
        assertEquals(Integer.MAX_VALUE, ((Number) second[5]).intValue());
        assertEquals(499, ((Number) second[7]).intValue());
        assertEquals("completion", second[8]);
    }

    @Test
    void aReportGivesTheTimesRequestsTookInsideFulcrum() {
        String entity = Fixtures.unique("latency");
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC).minusMinutes(1);
        for (int ms = 100; ms >= 1; ms--) { // 1 to 100 ms, one of them a failure
            recorder.record(new Usage(now, entity, "p", 1L, "m", 1, 2, ms, ms == 7 ? 502 : 200, UsageMeter.COMPLETION));
        }
        // Tinker training tokens of the same model are a row of their own
        recorder.record(new Usage(now, entity, "p", 1L, "m", 300, 0, 5000, 200, UsageMeter.TINKER_TRAIN));
        recorder.flush();

        List<InferenceUsageRow> rows = reports.report(UsageReports.Query.of(entity, null, null, null, "model"))
                .getData();
        assertEquals(List.of("m", "m tinker_train"), rows.stream().map(InferenceUsageRow::getKey).toList());
        InferenceUsageRow row = rows.get(0);
        assertEquals("completion", row.getKind().toString());
        assertEquals(100L, row.getRequests());
        assertEquals(1L, row.getFailedRequests());
        assertEquals(List.of(50, 99, 100),
                List.of(row.getLatencyMsP50(), row.getLatencyMsP99(), row.getLatencyMsMax()));
        assertEquals(List.of("tinker_train", 300L, 0L, 5000), List.of(rows.get(1).getKind().toString(),
                rows.get(1).getPromptTokens(), rows.get(1).getCompletionTokens(), rows.get(1).getLatencyMsMax()));
    }
}

package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * A webhook lease must outlast an attempt and the writing of its outcome: otherwise a slow attempt could be sent twice,
 * and no delivery could be sent straight after its commit (each would wait for its lease to end, 15 s in a benchmark
 * that set the lease equal to the request timeout). Such a setting stops the replica at startup, naming both settings.
 */
class DeliveryLeaseTest {

    @Test
    void aLeaseNoLongerThanAnAttemptAndItsOutcomeIsRefused() {
        for (Duration lease : new Duration[] { Duration.ofSeconds(15), Duration.ofSeconds(16),
                Duration.ofSeconds(5) }) {
            String refused = DeliveryDispatcher.leaseRefusal(lease, Duration.ofSeconds(15));
            assertTrue(refused != null && refused.contains("fulcrum.webhooks.lease (" + lease + ")")
                    && refused.contains("fulcrum.webhooks.request-timeout (PT15S)"), String.valueOf(refused));
        }
    }

    @Test
    void aLongerLeaseIsTaken() {
        assertNull(DeliveryDispatcher.leaseRefusal(Duration.ofMillis(16_001), Duration.ofSeconds(15)));
        assertNull(DeliveryDispatcher.leaseRefusal(Duration.ofSeconds(60), Duration.ofSeconds(15)), "the defaults");
        assertNull(DeliveryDispatcher.leaseRefusal(Duration.ofSeconds(7), Duration.ofMillis(1500)), "the tests'");
    }
}

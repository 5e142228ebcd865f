package dev.fulcrum.inference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Work done in turns on a {@link FairExecutor}: between its turns a task waits in its key's queue behind the other
 * keys' tasks already waiting, so another key waits for one turn of a long task, not for the whole of it. The order of
 * the turns is observed, no time is measured.
 */
class FairExecutorTest {

    private final List<String> events = Collections.synchronizedList(new ArrayList<>());
    private final List<FairExecutor> executors = new ArrayList<>();

    @AfterEach
    void stop() {
        executors.forEach(FairExecutor::shutdownNow);
    }

    private FairExecutor executor(int threads, int maxQueuedPerKey) {
        FairExecutor executor = new FairExecutor("test", threads, maxQueuedPerKey, 100);
        executors.add(executor);
        return executor;
    }

    /**
     * A task of {@code turns} turns named {@code name}: each turn is recorded, then waits for a permit of {@code gate}
     * (null: does not wait); {@code done} is counted down after the last.
     */
    private FairExecutor.Turns turns(String name, int turns, Semaphore started, Semaphore gate, CountDownLatch done) {
        int[] turn = { 0 };
        return () -> {
            events.add(name + "-" + turn[0]);
            if (started != null) {
                started.release();
            }
            if (gate != null) {
                try {
                    assertTrue(gate.tryAcquire(30, TimeUnit.SECONDS), "released");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            boolean more = ++turn[0] < turns;
            if (!more && done != null) {
                done.countDown();
            }
            return more;
        };
    }

    @Test
    void anotherKeyWaitsForOneTurnOfAFlood() throws Exception {
        FairExecutor executor = executor(1, 16);
        Semaphore started = new Semaphore(0);
        Semaphore gate = new Semaphore(0);
        CountDownLatch done = new CountDownLatch(2);
        executor.executeInTurns("flood", turns("flood", 8, started, gate, done));
        assertTrue(started.tryAcquire(10, TimeUnit.SECONDS), "the flood's first turn runs");
        // the victim comes while the flood's first turn holds the only thread
        executor.executeInTurns("victim", turns("victim", 1, null, null, done));
        assertEquals(1, executor.waiting("victim"));
        gate.release(8);
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(List.of("flood-0", "victim-0", "flood-1", "flood-2", "flood-3", "flood-4", "flood-5", "flood-6",
                "flood-7"), events);
    }

    @Test
    void twoLongTasksOfTwoKeysTakeTurns() throws Exception {
        FairExecutor executor = executor(1, 16);
        Semaphore started = new Semaphore(0);
        Semaphore gate = new Semaphore(0);
        CountDownLatch done = new CountDownLatch(2);
        executor.executeInTurns("a", turns("a", 3, started, gate, done));
        assertTrue(started.tryAcquire(10, TimeUnit.SECONDS));
        executor.executeInTurns("b", turns("b", 3, null, gate, done));
        gate.release(6);
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(List.of("a-0", "b-0", "a-1", "b-1", "a-2", "b-2"), events);
    }

    @Test
    void aKeysOwnTasksStillStartInTheOrderTheyCame() throws Exception {
        FairExecutor executor = executor(1, 16);
        Semaphore started = new Semaphore(0);
        Semaphore gate = new Semaphore(0);
        CountDownLatch done = new CountDownLatch(2);
        executor.executeInTurns("a", turns("first", 3, started, gate, done));
        assertTrue(started.tryAcquire(10, TimeUnit.SECONDS));
        executor.executeInTurns("a", turns("second", 2, null, gate, done));
        gate.release(5);
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(List.of("first-0", "first-1", "first-2", "second-0", "second-1"), events);
    }

    @Test
    void aTaskBetweenTurnsIsRunningAndNotCountedInTheQueue() throws Exception {
        FairExecutor executor = executor(1, 1);
        Semaphore started = new Semaphore(0);
        Semaphore gate = new Semaphore(0);
        CountDownLatch done = new CountDownLatch(3);
        executor.executeInTurns("a", turns("long", 3, started, gate, done));
        assertTrue(started.tryAcquire(10, TimeUnit.SECONDS));
        executor.executeInTurns("b", turns("other", 1, started, gate, done));
        gate.release(); // the long task's first turn ends; the other key's task takes the thread
        assertTrue(started.tryAcquire(10, TimeUnit.SECONDS));
        assertEquals("other-0", events.get(events.size() - 1));
        // the long task waits for its next turn: running, not waiting, so its key may still queue one task
        assertEquals(1, executor.running("a"));
        assertEquals(0, executor.waiting("a"));
        executor.executeInTurns("a", turns("queued", 1, null, gate, done));
        assertThrows(RejectedExecutionException.class, () -> executor.execute("a", () -> {
        }));
        gate.release(10);
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(List.of("long-0", "other-0", "long-1", "long-2", "queued-0"), events);
        await("the key is forgotten").atMost(Duration.ofSeconds(5))
                .until(() -> executor.running("a") == 0 && executor.waiting("a") == 0);
    }

    @Test
    void aFailingTurnEndsItsTaskOnly() throws Exception {
        FairExecutor executor = executor(1, 16);
        CountDownLatch done = new CountDownLatch(1);
        executor.executeInTurns("a", () -> {
            events.add("failing");
            throw new IllegalStateException("expected by the test");
        });
        executor.executeInTurns("a", turns("next", 2, null, null, done));
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(List.of("failing", "next-0", "next-1"), events);
    }

    @Test
    void tasksStoppedBeforeTheirTurnAreToldSoAndTheRunningOneIsNot() throws Exception {
        FairExecutor executor = executor(1, 16);
        Semaphore started = new Semaphore(0);
        Semaphore gate = new Semaphore(0);
        List<String> dropped = Collections.synchronizedList(new ArrayList<>());
        FairExecutor.Turns flood = turns("flood", 3, started, gate, null);
        executor.executeInTurns("flood", told("flood", flood, dropped));
        assertTrue(started.tryAcquire(10, TimeUnit.SECONDS), "the flood's first turn runs");
        // a holds the only thread once the flood's first turn ends; b waits, and so does the flood's next turn
        executor.executeInTurns("a", told("a", turns("a", 1, started, gate, null), dropped));
        executor.executeInTurns("b", told("b", turns("b", 1, null, null, null), dropped));
        gate.release();
        assertTrue(started.tryAcquire(10, TimeUnit.SECONDS), "a's turn runs");
        executor.shutdownNow();
        gate.release(3);
        assertEquals(List.of("flood-0", "a-0"), events, "what ran");
        assertEquals(Set.of("flood", "b"), Set.copyOf(dropped), "the flood's next turn and b were told, a was not");
        assertEquals(2, dropped.size(), "each once");
        assertThrows(RejectedExecutionException.class, () -> executor.execute("c", () -> {
        }));
    }

    /** {@code work}, which adds {@code name} to {@code dropped} when the executor stops before its next turn. */
    private static FairExecutor.Turns told(String name, FairExecutor.Turns work, List<String> dropped) {
        return new FairExecutor.Turns() {
            @Override
            public boolean next() {
                return work.next();
            }

            @Override
            public void dropped() {
                dropped.add(name);
            }
        };
    }
}

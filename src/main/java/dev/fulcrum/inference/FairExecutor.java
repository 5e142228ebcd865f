package dev.fulcrum.inference;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jboss.logging.Logger;

/**
 * A fixed set of threads shared fairly between keys (projects). Each key has its own queue of at most
 * {@code maxQueuedPerKey} waiting tasks; a free thread takes the next task of the key that has the fewest tasks
 * running, and among those the key whose next task has waited longest. So a key that floods the threads gets them only
 * while nobody else waits: another key's task waits at most until one thread becomes free, however long the flood's
 * queue. The threads are used by whoever has work (a key alone may use them all).
 * <p>
 * A long task can be cut into turns ({@link #executeInTurns}): after each turn it goes back to its key's queue, ahead
 * of that key's tasks that have not started (a key's tasks still start in the order they came) but behind every other
 * key's task that was already waiting, and it counts as running while it waits for its next turn. So another key's task
 * waits for at most one turn of a flood, not for the whole of its longest task. A task's turns run one after the other,
 * never two at once.
 */
public final class FairExecutor {

    private static final Logger LOG = Logger.getLogger(FairExecutor.class);

    /** Work done in turns on the executor's threads. */
    @FunctionalInterface
    public interface Turns {

        /** Does the next turn of the work; true when there is more to do (the work then waits for another turn). */
        boolean next();

        /**
         * Called instead of the next turn when the executor stops before it ({@link #shutdownNow}): whoever waits for
         * the work is told it will not be done. Nothing by default.
         */
        default void dropped() {
        }
    }

    private record Task(Turns work, long sequence) {
    }

    private static final class Key {
        /** Tasks that have not started. */
        final ArrayDeque<Task> waiting = new ArrayDeque<>();
        /** Started tasks waiting for their next turn. */
        final ArrayDeque<Task> continuing = new ArrayDeque<>();
        /** Started tasks not ended: on a thread, or waiting for their next turn. */
        int running;

        Task peek() {
            return continuing.isEmpty() ? waiting.peek() : continuing.peek();
        }
    }

    private final int maxQueuedPerKey;
    private final int maxQueued;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    /** Keys with waiting or running tasks, in the order they first had one. */
    private final Map<String, Key> keys = new LinkedHashMap<>();
    private final List<Thread> threads = new ArrayList<>();
    /** Tasks of all keys that have not started. */
    private int queued;
    /** Started tasks of all keys waiting for their next turn. */
    private int continuing;
    /** Threads doing a turn now. */
    private int busy;
    private long sequence;
    private boolean stopped;

    /** The queue key of a project: requests are shared fairly between projects. */
    public static String projectKey(String entity, String project) {
        return entity + "/" + project;
    }

    public FairExecutor(String name, int threads, int maxQueuedPerKey, int maxQueued) {
        if (threads < 1 || maxQueuedPerKey < 0 || maxQueued < 0) {
            throw new IllegalArgumentException("threads must be at least 1 and queues at least 0");
        }
        this.maxQueuedPerKey = maxQueuedPerKey;
        this.maxQueued = maxQueued;
        for (int i = 1; i <= threads; i++) {
            Thread thread = new Thread(this::loop, name + "-" + i);
            thread.setDaemon(true);
            this.threads.add(thread);
            thread.start();
        }
    }

    /**
     * Runs the task on one of the threads when its turn comes.
     *
     * @throws RejectedExecutionException
     *             when the key already has {@code maxQueuedPerKey} tasks waiting (and no thread is free), when all keys
     *             together have {@code maxQueued} waiting, or after {@link #shutdownNow()}
     */
    public void execute(String key, Runnable task) {
        executeInTurns(key, () -> {
            task.run();
            return false;
        });
    }

    /**
     * Runs the work turn by turn until a turn says it is done; between turns it waits in its key's queue as described
     * above (only its first turn counts against the queues' limits).
     *
     * @throws RejectedExecutionException
     *             as {@link #execute}
     */
    public void executeInTurns(String key, Turns task) {
        lock.lock();
        try {
            if (stopped) {
                throw new RejectedExecutionException("stopped");
            }
            Key state = keys.get(key);
            int waiting = state == null ? 0 : state.waiting.size();
            // a free thread takes the task at once: only tasks that would wait count against the queues
            boolean free = busy + queued + continuing < threads.size();
            if (!free && (waiting >= maxQueuedPerKey || queued >= maxQueued)) {
                throw new RejectedExecutionException("queue of " + key + " full");
            }
            keys.computeIfAbsent(key, k -> new Key()).waiting.add(new Task(task, sequence++));
            queued++;
            work.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Tasks of the key that have not started. */
    public int waiting(String key) {
        lock.lock();
        try {
            Key state = keys.get(key);
            return state == null ? 0 : state.waiting.size();
        } finally {
            lock.unlock();
        }
    }

    /** Tasks of the key started and not ended (doing a turn, or waiting for their next). */
    public int running(String key) {
        lock.lock();
        try {
            Key state = keys.get(key);
            return state == null ? 0 : state.running;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops the threads; waiting tasks (and tasks waiting for their next turn) are dropped, each told so through
     * {@link Turns#dropped}, and running ones interrupted.
     */
    public void shutdownNow() {
        List<Task> dropped = new ArrayList<>();
        lock.lock();
        try {
            stopped = true;
            for (Key state : keys.values()) {
                dropped.addAll(state.continuing);
                dropped.addAll(state.waiting);
            }
            keys.clear();
            queued = 0;
            continuing = 0;
            work.signalAll();
        } finally {
            lock.unlock();
        }
        threads.forEach(Thread::interrupt);
        for (Task task : dropped) {
            try {
                task.work().dropped();
            } catch (RuntimeException e) {
                LOG.error("A dropped task failed to say so", e);
            }
        }
    }

    private void loop() {
        while (true) {
            String key;
            Task task;
            lock.lock();
            try {
                while (!stopped && queued + continuing == 0) {
                    work.awaitUninterruptibly();
                }
                if (stopped) {
                    return;
                }
                key = next();
                Key state = keys.get(key);
                task = state.continuing.poll();
                if (task != null) {
                    continuing--;
                } else {
                    task = state.waiting.poll();
                    queued--;
                    state.running++;
                }
                busy++;
            } finally {
                lock.unlock();
            }
            boolean more = false;
            try {
                more = task.work().next();
            } catch (RuntimeException | Error e) {
                LOG.error("A task of " + key + " failed", e);
            } finally {
                lock.lock();
                try {
                    busy--;
                    Key state = keys.get(key);
                    if (state != null && more && !stopped) {
                        // behind every task already waiting, whatever its key: the sequence of now
                        state.continuing.add(new Task(task.work(), sequence++));
                        continuing++;
                    } else if (state != null && --state.running == 0 && state.waiting.isEmpty()) {
                        keys.remove(key);
                    }
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /**
     * The key whose next task runs now: fewest running, then the next task that has waited longest. Called holding the
     * lock.
     */
    private String next() {
        String best = null;
        Key bestState = null;
        for (Map.Entry<String, Key> entry : keys.entrySet()) {
            Key state = entry.getValue();
            Task candidate = state.peek();
            if (candidate == null) {
                continue;
            }
            if (bestState == null || state.running < bestState.running
                    || state.running == bestState.running && candidate.sequence() < bestState.peek().sequence()) {
                best = entry.getKey();
                bestState = state;
            }
        }
        return best;
    }
}

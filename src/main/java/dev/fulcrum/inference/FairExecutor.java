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
 * running, and among those the key whose waiting task is oldest. So a key that floods the threads gets them only while
 * nobody else waits: another key's task waits at most until one thread becomes free, however long the flood's queue.
 * The threads are used by whoever has work (a key alone may use them all).
 */
public final class FairExecutor {

    private static final Logger LOG = Logger.getLogger(FairExecutor.class);

    private record Task(Runnable work, long sequence) {
    }

    private static final class Key {
        final ArrayDeque<Task> waiting = new ArrayDeque<>();
        int running;
    }

    private final int maxQueuedPerKey;
    private final int maxQueued;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    /** Keys with waiting or running tasks, in the order they first had one. */
    private final Map<String, Key> keys = new LinkedHashMap<>();
    private final List<Thread> threads = new ArrayList<>();
    private int queued;
    private long sequence;
    private boolean stopped;

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
        lock.lock();
        try {
            if (stopped) {
                throw new RejectedExecutionException("stopped");
            }
            Key state = keys.get(key);
            int waiting = state == null ? 0 : state.waiting.size();
            // a free thread takes the task at once: only tasks that would wait count against the queues
            boolean free = runningTotal() + queued < threads.size();
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

    /** Tasks of the key waiting for a thread (not those running). */
    public int waiting(String key) {
        lock.lock();
        try {
            Key state = keys.get(key);
            return state == null ? 0 : state.waiting.size();
        } finally {
            lock.unlock();
        }
    }

    /** Tasks of the key running now. */
    public int running(String key) {
        lock.lock();
        try {
            Key state = keys.get(key);
            return state == null ? 0 : state.running;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the threads; waiting tasks are dropped, running ones interrupted. */
    public void shutdownNow() {
        lock.lock();
        try {
            stopped = true;
            keys.clear();
            queued = 0;
            work.signalAll();
        } finally {
            lock.unlock();
        }
        threads.forEach(Thread::interrupt);
    }

    private int runningTotal() {
        int running = 0;
        for (Key state : keys.values()) {
            running += state.running;
        }
        return running;
    }

    private void loop() {
        while (true) {
            String key;
            Task task;
            lock.lock();
            try {
                while (!stopped && queued == 0) {
                    work.awaitUninterruptibly();
                }
                if (stopped) {
                    return;
                }
                key = next();
                Key state = keys.get(key);
                task = state.waiting.poll();
                queued--;
                state.running++;
            } finally {
                lock.unlock();
            }
            try {
                task.work().run();
            } catch (RuntimeException | Error e) {
                LOG.error("A task of " + key + " failed", e);
            } finally {
                lock.lock();
                try {
                    Key state = keys.get(key);
                    if (state != null && --state.running == 0 && state.waiting.isEmpty()) {
                        keys.remove(key);
                    }
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /** The key whose waiting task runs next: fewest running, then oldest waiting task. Called holding the lock. */
    private String next() {
        String best = null;
        Key bestState = null;
        for (Map.Entry<String, Key> entry : keys.entrySet()) {
            Key state = entry.getValue();
            if (state.waiting.isEmpty()) {
                continue;
            }
            if (bestState == null || state.running < bestState.running || state.running == bestState.running
                    && state.waiting.peek().sequence() < bestState.waiting.peek().sequence()) {
                best = entry.getKey();
                bestState = state;
            }
        }
        return best;
    }
}

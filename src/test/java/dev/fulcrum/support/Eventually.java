package dev.fulcrum.support;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Waits for a condition that background work makes true, checking it often, failing after a bound. */
public final class Eventually {

    private Eventually() {
    }

    /** The first value that is {@code done}, read every 20 ms; fails after {@code within}, naming the last value. */
    public static <T> T value(Supplier<T> value, Predicate<T> done, Duration within, String what) {
        long deadline = System.nanoTime() + within.toNanos();
        T last = value.get();
        while (!done.test(last)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Not within " + within + ": " + what + " (last seen: " + last + ")");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            last = value.get();
        }
        return last;
    }

    public static void until(Supplier<Boolean> condition, Duration within, String what) {
        value(condition, Boolean::booleanValue, within, what);
    }
}

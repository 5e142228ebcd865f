package dev.fulcrum.platform.json;

import com.github.benmanes.caffeine.cache.Cache;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

import io.micrometer.core.instrument.Metrics;

import dev.fulcrum.platform.Caches;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The one rule for every regular expression a user sends (an automation's alias or run-name regex, the runs list's name
 * filter): RE2 (RE2/J: linear-time matching), at most {@value #MAX_LENGTH} characters, compiling to at most
 * {@value #MAX_PROGRAM_SIZE} instructions. Nested counted repetitions are estimated before compiling
 * ({@link RegexSize}), because RE2 would spend gigabytes compiling {@code ((a{1000}){1000}){1000}} before it could say
 * the program is too large. Compiled patterns are kept (up to {@value #CACHED_PATTERNS}, the least likely to be used
 * again dropped first: {@link Caches}), so a filter or an event does not compile the same regex again.
 */
public final class RegularExpressions {

    /** The longest regex, in characters. */
    public static final int MAX_LENGTH = 1024;

    /** The largest compiled regex, in RE2 program instructions (matching time grows with it). */
    public static final int MAX_PROGRAM_SIZE = 5000;

    static final int CACHED_PATTERNS = 512;

    private static final Cache<String, Pattern> PATTERNS = Caches.bounded(Metrics.globalRegistry, "regular_expressions",
            CACHED_PATTERNS);

    private RegularExpressions() {
    }

    /**
     * Why the regex cannot be used, or null when it can: longer than {@value #MAX_LENGTH} characters, estimated or
     * compiled larger than {@value #MAX_PROGRAM_SIZE} instructions, or not RE2.
     */
    public static String problem(String regex) {
        if (regex.length() > MAX_LENGTH) {
            return "Must be at most " + MAX_LENGTH + " characters";
        }
        String tooLarge = "The regular expression is too large: it may compile to at most " + MAX_PROGRAM_SIZE
                + " RE2 instructions (counted repetitions such as {n} multiply the size of what they repeat)";
        // the estimate over-counts a little (it cannot see what RE2 simplifies), hence the margin
        if (RegexSize.estimate(regex) > 4L * MAX_PROGRAM_SIZE) {
            return tooLarge;
        }
        try {
            Pattern compiled = pattern(regex);
            if (compiled.programSize() > MAX_PROGRAM_SIZE) {
                forget(regex);
                return tooLarge;
            }
            return null;
        } catch (PatternSyntaxException e) {
            return "Not a valid RE2 regular expression: " + e.getDescription();
        }
    }

    /**
     * The compiled regex of a request, or a 422 (type {@code regex}) at {@code loc} saying why it cannot be used; the
     * same refusal wherever a user's regex arrives.
     */
    public static Pattern compile(String regex, Object... loc) {
        String problem = problem(regex);
        if (problem != null) {
            throw ApiException.invalid(Violation.of(problem, "regex", loc));
        }
        return pattern(regex);
    }

    /** The compiled regex, from the cache when it was compiled before; call {@link #problem} first. */
    public static Pattern pattern(String regex) {
        return PATTERNS.get(regex, Pattern::compile);
    }

    private static void forget(String regex) {
        PATTERNS.invalidate(regex);
    }

    /** For tests: whether the regex is compiled and kept. */
    public static boolean cached(String regex) {
        return PATTERNS.getIfPresent(regex) != null;
    }
}

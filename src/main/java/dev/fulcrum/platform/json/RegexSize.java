package dev.fulcrum.platform.json;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.regex.Matcher;

/**
 * An estimate of the size a regular expression compiles to, read from its text without compiling it: every literal,
 * class or escape counts one, a group the sum of what it holds, and a counted repetition {@code {n}}, {@code {n,}} or
 * {@code {n,m}} multiplies what it repeats by its larger bound (nested ones multiply each other). RE2 compiles
 * {@code ((a{1000}){1000}){1000}} to a billion instructions; this says so in microseconds, so the compile is never
 * tried. Saturates at {@link Long#MAX_VALUE}.
 */
final class RegexSize {

    private static final java.util.regex.Pattern COUNT = java.util.regex.Pattern.compile("\\{(\\d+)(,(\\d*))?}");

    private RegexSize() {
    }

    static long estimate(String regex) {
        Deque<long[]> groups = new ArrayDeque<>(); // the size so far of each open group
        groups.push(new long[] { 0 });
        long last = 0; // the size of the last atom or group, what a repetition repeats
        int i = 0;
        int length = regex.length();
        while (i < length) {
            char c = regex.charAt(i);
            switch (c) {
                case '\\' -> {
                    i = escapeEnd(regex, i);
                    last = 1;
                    add(groups, last);
                    continue;
                }
                case '[' -> {
                    i = classEnd(regex, i);
                    last = 1;
                    add(groups, last);
                    continue;
                }
                case '(' -> {
                    groups.push(new long[] { 0 });
                    last = 0;
                }
                case ')' -> {
                    if (groups.size() > 1) {
                        last = saturated(groups.pop()[0], 1);
                        add(groups, last);
                    }
                }
                case '{' -> {
                    Matcher count = COUNT.matcher(regex).region(i, length);
                    if (count.lookingAt()) {
                        long times = Math.max(number(count.group(1)),
                                count.group(3) == null || count.group(3).isEmpty() ? 0 : number(count.group(3)));
                        // the atom counted once already; it now counts `times` times
                        long more = multiply(last, Math.max(times, 1) - 1);
                        add(groups, more);
                        last = saturated(last, more);
                        i = count.end();
                        continue;
                    }
                    last = 1;
                    add(groups, last);
                }
                case '*', '+', '?', '|', '^', '$' -> {
                    // linear: a repetition without count adds a few instructions, not copies
                }
                default -> {
                    last = 1;
                    add(groups, last);
                }
            }
            i++;
        }
        long total = 0;
        for (long[] group : groups) {
            total = saturated(total, group[0]);
        }
        return total;
    }

    private static void add(Deque<long[]> groups, long size) {
        long[] top = groups.peek();
        top[0] = saturated(top[0], size);
    }

    /** The index after an escape: {@code \x}, {@code \p{Name}}, {@code \x{10FFFF}}, {@code \Q...\E}. */
    private static int escapeEnd(String regex, int at) {
        int next = at + 1;
        if (next >= regex.length()) {
            return next;
        }
        char kind = regex.charAt(next);
        if (kind == 'Q') {
            int end = regex.indexOf("\\E", next);
            return end < 0 ? regex.length() : end + 2;
        }
        if ((kind == 'p' || kind == 'P' || kind == 'x') && next + 1 < regex.length() && regex.charAt(next + 1) == '{') {
            int end = regex.indexOf('}', next);
            return end < 0 ? regex.length() : end + 1;
        }
        return next + 1;
    }

    /** The index after a character class, {@code ]} right after {@code [} or {@code [^} being a member. */
    private static int classEnd(String regex, int at) {
        int i = at + 1;
        if (i < regex.length() && regex.charAt(i) == '^') {
            i++;
        }
        if (i < regex.length() && regex.charAt(i) == ']') {
            i++;
        }
        while (i < regex.length()) {
            char c = regex.charAt(i);
            if (c == '\\') {
                i = escapeEnd(regex, i);
                continue;
            }
            if (c == '[' && regex.startsWith("[:", i)) {
                int end = regex.indexOf(":]", i + 2);
                i = end < 0 ? i + 1 : end + 2;
                continue;
            }
            if (c == ']') {
                return i + 1;
            }
            i++;
        }
        return i;
    }

    private static long number(String digits) {
        return digits.length() > 12 ? Long.MAX_VALUE / 4 : Long.parseLong(digits);
    }

    private static long saturated(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    private static long multiply(long a, long b) {
        if (a == 0 || b == 0) {
            return 0;
        }
        return a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
    }
}

package dev.fulcrum.artifacts;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.fulcrum.accounts.Names;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** The character sets of collection, type, alias and tag names, file paths, version selectors and references. */
final class ArtifactNames {

    static final Pattern VERSION = Pattern.compile("v(0|[1-9][0-9]{0,8})");
    private static final Pattern REFERENCE = Pattern
            .compile("wandb-artifact:///([^/]+)/([^/]+)/([^/:]+)(?::([^/:]+))?");
    static final String NAME_RULE = Names.rule(Names.NAME_MAX);
    private static final int TYPE_MAX = 64;
    static final int MAX_PATH = 1024;
    static final int MAX_DESCRIPTION = 4096;

    private ArtifactNames() {
    }

    static String name(String value, Object... loc) {
        if (!Names.isName(value, Names.NAME_MAX)) {
            throw ApiException.invalid(Violation.of(NAME_RULE, "string_pattern_mismatch", loc));
        }
        return value;
    }

    static String type(String value, Object... loc) {
        if (!Names.isName(value, TYPE_MAX)) {
            throw ApiException.invalid(Violation.of(Names.rule(TYPE_MAX), "string_pattern_mismatch", loc));
        }
        return value;
    }

    /** An alias a client may set: a name that is neither a version ({@code v3}) nor the managed {@code latest}. */
    static String alias(String value, Object... loc) {
        name(value, loc);
        if (VERSION.matcher(value).matches()) {
            throw ApiException
                    .invalid(Violation.of("An alias may not have the form v<N>", "string_pattern_mismatch", loc));
        }
        if (ArtifactViews.LATEST.equals(value)) {
            throw ApiException.invalid(Violation
                    .of("The alias latest is managed by the server: it names the newest version", "value_error", loc));
        }
        return value;
    }

    static String description(String value, Object... loc) {
        if (value != null && value.length() > MAX_DESCRIPTION) {
            throw ApiException
                    .invalid(Violation.of("At most " + MAX_DESCRIPTION + " characters", "string_too_long", loc));
        }
        return value;
    }

    /** A relative, normalized, '/'-separated path. */
    static String path(String value, Object... loc) {
        String problem = null;
        if (value == null || value.isEmpty() || value.length() > MAX_PATH) {
            problem = "A file path must be 1 to " + MAX_PATH + " characters";
        } else if (value.startsWith("/") || value.indexOf('\\') >= 0) {
            problem = "A file path must be relative and use '/' as separator";
        } else if (value.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            problem = "A file path may not hold control characters";
        } else {
            for (String segment : value.split("/", -1)) {
                if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                    problem = "A file path may not have empty, '.' or '..' segments";
                    break;
                }
            }
        }
        if (problem != null) {
            throw ApiException.invalid(Violation.of(problem + ": " + value, "value_error", loc));
        }
        return value;
    }

    /** A version selector: {@code v<N>} or an alias (incl. {@code latest}). */
    record Selector(Integer index, String alias) {
        static Selector parse(String value, Object... loc) {
            if (value != null && VERSION.matcher(value).matches()) {
                return new Selector(Integer.valueOf(value.substring(1)), null);
            }
            if (!Names.isName(value, Names.NAME_MAX)) {
                throw ApiException.invalid(Violation.of("Must be v<N> or an alias", "string_pattern_mismatch", loc));
            }
            return new Selector(null, value);
        }

        @Override
        public String toString() {
            return index != null ? "v" + index : alias;
        }
    }

    /** A parsed {@code wandb-artifact:///entity/project/collection:selector}. */
    record Reference(String entity, String project, String collection, Selector selector) {
        static Reference parse(String value, Object... loc) {
            Matcher m = value == null ? null : REFERENCE.matcher(value);
            if (m == null || !m.matches()) {
                throw ApiException.invalid(
                        Violation.of("Must be wandb-artifact:///{entity}/{project}/{collection}[:{alias|v<N>}]",
                                "value_error", loc));
            }
            Selector selector = Selector.parse(m.group(4) == null ? ArtifactViews.LATEST : m.group(4), loc);
            return new Reference(m.group(1), m.group(2), name(m.group(3), loc), selector);
        }

        static String of(String entity, String project, String collection, int index) {
            return "wandb-artifact:///" + entity + "/" + project + "/" + collection + ":v" + index;
        }
    }
}

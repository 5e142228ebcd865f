package dev.fulcrum.accounts;

import java.util.regex.Pattern;

import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;

/** The character sets of names: letters, digits, {@code _ . -}, starting with a letter or digit. */
public final class Names {

    private static final Pattern ENTITY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    private static final Pattern PROJECT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

    private Names() {
    }

    public static boolean isEntity(String name) {
        return name != null && ENTITY.matcher(name).matches();
    }

    public static boolean isProject(String name) {
        return name != null && PROJECT.matcher(name).matches();
    }

    /** Checks a user, team or registry name given at {@code loc}. */
    public static String requireEntity(String name, Object... loc) {
        if (!isEntity(name)) {
            throw ApiException.invalid(
                    Violation.of("Must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit",
                            "string_pattern_mismatch", loc));
        }
        return name;
    }

    public static String requireProject(String name, Object... loc) {
        if (!isProject(name)) {
            throw ApiException.invalid(
                    Violation.of("Must be 1 to 128 letters, digits, '_', '.' or '-', starting with a letter or digit",
                            "string_pattern_mismatch", loc));
        }
        return name;
    }
}

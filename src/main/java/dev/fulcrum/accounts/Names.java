package dev.fulcrum.accounts;

import java.util.regex.Pattern;

/**
 * The character sets of names: letters, digits, {@code _ . -}, starting with a letter or digit. The contract checks
 * every name a request gives as a path parameter or property; this is for names inside a composite value the contract
 * cannot split (an {@code entity/project} pair, an artifact reference, a key's project).
 */
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
}

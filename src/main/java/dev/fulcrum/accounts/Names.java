package dev.fulcrum.accounts;

import java.util.regex.Pattern;

/**
 * The one rule of Fulcrum's names (entities, projects, runs, artifact collections and types, aliases, tags, splits):
 * letters, digits, {@code _ . -}, starting with a letter or digit, up to a length each kind states. The contract checks
 * every name a request gives as a path parameter or property; this is for names inside a composite value the contract
 * cannot split (an {@code entity/project} pair, an artifact reference, a key's project) and for the services' own
 * checks. (A Hugging Face repository's name follows the Hub's rule: {@code inference.hub.HubName}.)
 */
public final class Names {

    /** The longest entity (user or team) name. */
    public static final int ENTITY_MAX = 64;
    /** The longest project, run or artifact collection name. */
    public static final int NAME_MAX = 128;

    private static final String FIRST = "[A-Za-z0-9]";
    private static final String REST = "[A-Za-z0-9_.-]";
    private static final Pattern NAME = Pattern.compile(FIRST + REST + "*");

    private Names() {
    }

    public static boolean isEntity(String name) {
        return isName(name, ENTITY_MAX);
    }

    public static boolean isProject(String name) {
        return isName(name, NAME_MAX);
    }

    /** Whether {@code name} is a name of at most {@code max} characters. */
    public static boolean isName(String name, int max) {
        return name != null && !name.isEmpty() && name.length() <= max && NAME.matcher(name).matches();
    }

    /** The rule as a regular expression for names of at most {@code max} characters, to embed in a larger one. */
    public static String regex(int max) {
        return FIRST + REST + "{0," + (max - 1) + "}";
    }

    /** The rule in words, for errors: "Must be 1 to {max} letters, digits, ...". */
    public static String rule(int max) {
        return "Must be 1 to " + max + " letters, digits, '_', '.' or '-', starting with a letter or digit";
    }
}

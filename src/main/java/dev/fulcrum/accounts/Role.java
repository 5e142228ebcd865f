package dev.fulcrum.accounts;

import java.util.Arrays;
import java.util.stream.Collectors;

/** A role on a team, project or registry. Each role includes the rights of the roles below it. */
public enum Role {
    VIEWER, MEMBER, ADMIN;

    public boolean atLeast(Role required) {
        return compareTo(required) >= 0;
    }

    /**
     * The same rule in SQL, for a statement that decides per row over a stored role ({@code column}, a role's name or
     * null): true when it reaches {@code required}, false or null otherwise.
     */
    public static String atLeastInSql(String column, Role required) {
        return column + " in (" + Arrays.stream(values()).filter(r -> r.atLeast(required))
                .map(r -> "'" + r.name() + "'").collect(Collectors.joining(", ")) + ")";
    }
}

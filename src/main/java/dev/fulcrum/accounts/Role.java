package dev.fulcrum.accounts;

/** A role on a team, project or registry. Each role includes the rights of the roles below it. */
public enum Role {
    VIEWER, MEMBER, ADMIN;

    public boolean atLeast(Role required) {
        return compareTo(required) >= 0;
    }
}

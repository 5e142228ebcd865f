package dev.fulcrum.datasets;

import dev.fulcrum.accounts.Names;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;

/** Checks of the entity and project that every datasets path starts with. */
final class PathParams {

    private PathParams() {
    }

    static void require(String entity, String project) {
        Names.requireEntity(entity, "path", "entity");
        Names.requireProject(project, "path", "project");
    }

    static ApiException missing(Object... loc) {
        return ApiException.invalid(Violation.of("Field required", "missing", loc));
    }

    static ApiException missingBody() {
        return ApiException.invalid(Violation.of("Field required", "missing", "body"));
    }
}

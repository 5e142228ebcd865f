package dev.fulcrum.datasets;

import static dev.fulcrum.datasets.DatasetsClient.as;
import static dev.fulcrum.datasets.DatasetsClient.create;
import static dev.fulcrum.datasets.DatasetsClient.rows;
import static org.hamcrest.Matchers.containsString;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

import dev.fulcrum.support.EmbeddedPostgresResource;

@QuarkusTest
@QuarkusTestResource(EmbeddedPostgresResource.class)
@TestProfile(DatasetSizeLimitTest.SmallLimit.class)
class DatasetSizeLimitTest {

    public static class SmallLimit implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("fulcrum.datasets.max-request-bytes", "4096");
        }
    }

    @Test
    void aBodyOverTheLimitIs413AndStoresNothing() {
        create(EmbeddedPostgresResource.ADMIN_KEY, "admin/limits", "huge", rows(500, "too big")).then().statusCode(413)
                .body("detail", containsString("4096"));
        create(EmbeddedPostgresResource.ADMIN_KEY, "admin/limits", "small", rows(2, "fits")).then().statusCode(200);
        as(EmbeddedPostgresResource.ADMIN_KEY).get("/v2/admin/limits/datasets/huge/versions/latest").then()
                .statusCode(404);
    }
}

package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.notNullValue;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;

@QuarkusTest
class HealthTest {

    @Test
    void healthNeedsAnApiKeyLikeTheRestOfTheTrainingApi() {
        given().filter(Contract.TRAINING).get("/v1/health").then().statusCode(401)
                .header("WWW-Authenticate", containsString("Bearer")).body("detail", notNullValue());
        given().filter(Contract.TRAINING).auth().oauth2("fk_wrong").get("/v1/health").then().statusCode(401);
        given().filter(Contract.TRAINING).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).get("/v1/health").then()
                .statusCode(200).body("status", equalTo("ok"));
    }

    @Test
    void systemCheckReportsTheDatabaseAndFailsHonestlyWithoutTrainingExecutors() {
        given().filter(Contract.TRAINING).auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).get("/v1/system-check")
                .then().body("api.success", equalTo(true)).body("database.success", equalTo(true))
                .body("database", hasKey("duration_ms")).body("cpu_queue", hasKey("queue_depth"));
        given().filter(Contract.TRAINING).get("/v1/system-check").then().statusCode(401);
    }

    @Test
    void kubernetesProbesNeedNoCredentials() {
        given().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP")).body("checks.name",
                hasItem(containsString("Database")));
        given().get("/q/health/ready").then().body("checks.find { it.name == 'Draining' }.status", equalTo("UP"));
        // the startup probe: the database answers and every migration is applied
        given().get("/q/health/started").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks.find { it.name == 'Database migrated' }.status", equalTo("UP"))
                .body("checks.find { it.name == 'Database migrated' }.data.schema_version", notNullValue());
    }

    @Test
    void unknownPathsAnswerInTheInterfacesShape() {
        given().auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).get("/v2/a/b/nothing").then().statusCode(404)
                .body("detail", equalTo("Not Found"));
        given().auth().oauth2(EmbeddedPostgresResource.ADMIN_KEY).get("/api/v1/nothing").then().statusCode(404)
                .contentType("application/problem+json").body("status", equalTo(404));
    }
}

package dev.fulcrum.inference;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.hamcrest.Matchers.nullValue;

import java.time.Duration;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/** The usage report of an entity: by model, by day, and by day and model (what the console's usage chart draws). */
@QuarkusTest
class UsageReportTest {

    private static final String MODEL = "fulcrum-tiny";

    @Inject
    Fixtures fixtures;

    @Inject
    EntityManager em;

    private static RequestSpecification given(Account account) {
        return io.restassured.RestAssured.given().filter(Contract.INFERENCE).auth().oauth2(account.key());
    }

    /** A completion counted earlier (the recorder writes what the completions of the moment count). */
    private void usedEarlier(String entity, String project, String model, OffsetDateTime at, int prompt, int completion,
            int latency) {
        QuarkusTransaction.requiringNew()
                .run(() -> em.createNativeQuery("""
                        insert into inference_usage (created_at, entity, project, user_id, model, prompt_tokens,
                            completion_tokens, latency_ms, status)
                        values (?1, ?2, ?3, (select min(id) from users), ?4, ?5, ?6, ?7, 200)""").setParameter(1, at)
                        .setParameter(2, entity).setParameter(3, project).setParameter(4, model).setParameter(5, prompt)
                        .setParameter(6, completion).setParameter(7, latency).executeUpdate());
    }

    @Test
    void usageByDayAndModelHasOneRowPerDayAndModelWithTheLatencies() {
        Account owner = fixtures.user("owner");
        Account viewer = fixtures.user("viewer");
        Account outsider = fixtures.user("outsider");
        PlatformEntity team = fixtures.team("usage", owner);
        fixtures.member(team, viewer, Role.VIEWER);
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        LocalDate yesterday = today.minusDays(1);
        OffsetDateTime noonYesterday = yesterday.atTime(12, 0).atOffset(ZoneOffset.UTC);
        usedEarlier(team.name, "chatbot", "b-model", noonYesterday, 10, 5, 40);
        usedEarlier(team.name, "chatbot", "a-model", noonYesterday, 7, 3, 20);
        usedEarlier(team.name, "chatbot", "a-model", noonYesterday.plusHours(1), 1, 1, 60);

        Inference.as(owner.key()).header("Compat-Project", team.name + "/chatbot")
                .body(Inference.chat(MODEL, "Tell me about the sea.")).post("/v1/chat/completions").then()
                .statusCode(200);
        await("today's completion in the usage").atMost(Duration.ofSeconds(10))
                .until(() -> given(viewer).queryParam("entity", team.name).queryParam("group_by", "day_model")
                        .get("/api/v1/usage").then().statusCode(200).extract().jsonPath().getList("data").size() == 3);

        given(viewer).queryParam("entity", team.name).queryParam("group_by", "day_model").get("/api/v1/usage").then()
                .statusCode(200).body("group_by", equalTo("day_model"))
                .body("data.key", contains(yesterday + " a-model", yesterday + " b-model", today + " " + MODEL))
                .body("data.day", contains(yesterday.toString(), yesterday.toString(), today.toString()))
                .body("data.model", contains("a-model", "b-model", MODEL)).body("data[0].requests", equalTo(2))
                .body("data[0].prompt_tokens", equalTo(8)).body("data[0].completion_tokens", equalTo(4))
                .body("data[0].total_tokens", equalTo(12)).body("data[0].latency_ms_max", equalTo(60))
                .body("data[0].latency_ms_p50", equalTo(20)).body("data[1].requests", equalTo(1))
                .body("data[1].latency_ms_p99", equalTo(40)).body("data[2].requests", equalTo(1))
                .body("data[2].failed_requests", equalTo(0)).body("data[2].latency_ms_p50",
                        lessThanOrEqualTo(
                                given(viewer).queryParam("entity", team.name).queryParam("group_by", "day_model")
                                        .get("/api/v1/usage").then().extract().path("data[2].latency_ms_max")));

        // the groupings of before keep their keys, and say what they group by
        given(viewer).queryParam("entity", team.name).get("/api/v1/usage").then().statusCode(200)
                .body("group_by", equalTo("model")).body("data.key", contains("a-model", "b-model", MODEL))
                .body("data.model", contains("a-model", "b-model", MODEL)).body("data[0].day", nullValue())
                .body("data[0].requests", equalTo(2));
        given(viewer).queryParam("entity", team.name).queryParam("group_by", "day").get("/api/v1/usage").then()
                .statusCode(200).body("data.key", contains(yesterday.toString(), today.toString()))
                .body("data.day", contains(yesterday.toString(), today.toString())).body("data[0].model", nullValue())
                .body("data[0].requests", equalTo(3));

        // a period is [from, to): today alone, and a project of the entity alone
        given(viewer).queryParam("entity", team.name).queryParam("group_by", "day_model")
                .queryParam("from", today.toString()).queryParam("to", today.plusDays(1).toString())
                .get("/api/v1/usage").then().statusCode(200).body("data.key", contains(today + " " + MODEL));
        given(viewer).queryParam("entity", team.name).queryParam("project", "elsewhere")
                .queryParam("group_by", "day_model").get("/api/v1/usage").then().statusCode(200).body("data", empty());

        given(viewer).queryParam("entity", team.name).queryParam("group_by", "week").get("/api/v1/usage").then()
                .statusCode(422).body("errors[0].field", equalTo("group_by"));
        given(outsider).queryParam("entity", team.name).queryParam("group_by", "day_model").get("/api/v1/usage").then()
                .statusCode(403);
    }
}

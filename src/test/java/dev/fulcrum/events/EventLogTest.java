package dev.fulcrum.events;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.TransactionalException;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LabTest;

@QuarkusTest
class EventLogTest extends LabTest {

    @Inject
    PlatformEvents events;

    @Inject
    EntityManager em;

    private String project;
    private String eventsPath;

    static RequestSpecification as(Account account) {
        RequestSpecification spec = given().contentType(ContentType.JSON);
        return account == null ? spec : spec.auth().oauth2(account.key());
    }

    @BeforeEach
    void projectWithARun() {
        project = "/api/v1/entities/" + team.name + "/projects/vision";
        eventsPath = project + "/events";
        as(member).body(Map.of("name", "r")).post(project + "/runs").then().statusCode(201);
    }

    private long projectId() {
        String[] parts = project.split("/");
        return QuarkusTransaction.requiringNew().call(() -> ((Number) em.createNativeQuery(
                "select p.id from projects p join entities e on e.id = p.entity_id where e.name = ?1 and p.name = ?2")
                .setParameter(1, parts[4]).setParameter(2, parts[6]).getSingleResult()).longValue());
    }

    private long count(String marker) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em
                        .createNativeQuery("select count(*) from platform_events where payload ->> 'marker' = ?1")
                        .setParameter(1, marker).getSingleResult()).longValue());
    }

    private ObjectNode marked(String marker) {
        return JsonNodeFactory.instance.objectNode().put("marker", marker);
    }

    @Test
    void anEventNeedsTheTransactionOfItsChange() {
        long projectId = projectId();
        assertThrows(TransactionalException.class, () -> events.record(EventType.RUN_STATE, Scope.project(projectId),
                admin.user().id, admin.name(), marked("outside")));
        assertEquals(0, count("outside"));
    }

    @Test
    void aRolledBackChangeLeavesNoEventAndACommittedOneLeavesIt() {
        long projectId = projectId();
        assertThrows(IllegalStateException.class, () -> QuarkusTransaction.requiringNew().run(() -> {
            events.record(EventType.RUN_STATE, Scope.project(projectId), admin.user().id, admin.name(),
                    marked("rolled-back"));
            em.createNativeQuery("update runs set state = 'killed' where project_id = ?1").setParameter(1, projectId)
                    .executeUpdate();
            throw new IllegalStateException("the change fails after the event was written");
        }));
        assertEquals(0, count("rolled-back"));
        as(viewer).get(project + "/runs/r").then().body("state", equalTo("running"));

        QuarkusTransaction.requiringNew().run(() -> events.record(EventType.RUN_STATE, Scope.project(projectId),
                admin.user().id, admin.name(), marked("committed")));
        assertEquals(1, count("committed"));
    }

    @Test
    void runChangesWriteEventsAndRefusedChangesDoNot() {
        as(member).body(List.of(Map.of("loss", 0.5, "_step", 3), Map.of("loss", 0.25)))
                .post(project + "/runs/r/history").then().statusCode(200);
        as(member).body(List.of(Map.of("loss", "bad"))).post(project + "/runs/r/history").then().statusCode(422);
        as(member).body(Map.of("state", "nonsense")).patch(project + "/runs/r").then().statusCode(422);
        as(member).body(Map.of("state", "finished")).patch(project + "/runs/r").then().statusCode(200);
        as(member).body(Map.of("state", "finished")).patch(project + "/runs/r").then().statusCode(200);

        as(admin).filter(Contract.EVENTS).get(eventsPath).then().statusCode(200)
                .body("events.type", contains("RUN_STATE", "RUN_METRIC")).body("next_before", nullValue())
                .body("events[0].author", equalTo(member.name())).body("events[0].project", equalTo("vision"))
                .body("events[0].payload.state", equalTo("finished"))
                .body("events[0].payload.previous_state", equalTo("running"))
                .body("events[0].payload.run_name", equalTo("r"))
                .body("events[0].payload.event_type", equalTo("RUN_STATE"))
                .body("events[0].payload.event_author", equalTo(member.name()))
                .body("events[0].payload.project_name", equalTo("vision"))
                .body("events[1].payload.metrics._step", contains(3, 4))
                .body("events[1].payload.metrics.loss", contains(0.5f, 0.25f))
                .body("events[1].occurred_at", notNullValue());
    }

    @Test
    void pagesAreNewestFirst() {
        for (String state : List.of("finished", "failed", "crashed", "killed", "running")) {
            as(member).body(Map.of("state", state)).patch(project + "/runs/r").then().statusCode(200);
        }
        Long before = as(admin).filter(Contract.EVENTS).queryParam("limit", 2).get(eventsPath).then().statusCode(200)
                .body("events.payload.state", contains("running", "killed")).body("next_before", notNullValue())
                .extract().jsonPath().getLong("next_before");
        before = as(admin).filter(Contract.EVENTS).queryParam("limit", 2).queryParam("before", before).get(eventsPath)
                .then().body("events.payload.state", contains("crashed", "failed")).extract().jsonPath()
                .getLong("next_before");
        as(admin).filter(Contract.EVENTS).queryParam("limit", 2).queryParam("before", before).get(eventsPath).then()
                .body("events.payload.state", contains("finished")).body("next_before", nullValue());
        as(admin).filter(Contract.EVENTS).queryParam("limit", 0).get(eventsPath).then().statusCode(422);
        as(admin).filter(Contract.EVENTS).queryParam("limit", 1001).get(eventsPath).then().statusCode(422);
        as(admin).filter(Contract.EVENTS).queryParam("before", "x").get(eventsPath).then().statusCode(422);
    }

    @Test
    void onlyAdminsReadTheLog() {
        as(null).filter(Contract.EVENTS).get(eventsPath).then().statusCode(401);
        as(outsider).filter(Contract.EVENTS).get(eventsPath).then().statusCode(403);
        as(viewer).filter(Contract.EVENTS).get(eventsPath).then().statusCode(403);
        as(member).filter(Contract.EVENTS).get(eventsPath).then().statusCode(403);
        as(admin).filter(Contract.EVENTS).get(eventsPath).then().statusCode(200);
        as(admin).filter(Contract.EVENTS).get(project.replace("/vision", "/unknown") + "/events").then()
                .statusCode(404);
    }

    @Test
    void registryLogsHoldTheEventsScopedToTheRegistry() {
        Registry registry = fixtures.registry("models", admin);
        fixtures.registryMember(registry, member, Role.MEMBER);
        long projectId = projectId();
        QuarkusTransaction.requiringNew().run(() -> events.record(EventType.LINK_ARTIFACT,
                new Scope(projectId, registry.id), member.user().id, member.name(), marked("linked")));
        String path = "/api/v1/registries/" + registry.name + "/events";
        as(admin).filter(Contract.EVENTS).get(path).then().statusCode(200).body("events", hasSize(1))
                .body("events[0].type", equalTo("LINK_ARTIFACT")).body("events[0].registry", equalTo(registry.name))
                .body("events[0].payload.marker", equalTo("linked"));
        as(member).filter(Contract.EVENTS).get(path).then().statusCode(403);
        as(outsider).filter(Contract.EVENTS).get(path).then().statusCode(403);
        as(null).filter(Contract.EVENTS).get(path).then().statusCode(401);
        as(admin).filter(Contract.EVENTS).get("/api/v1/registries/no-such-registry/events").then().statusCode(404);
        as(admin).filter(Contract.EVENTS).get(eventsPath).then().body("events.type", contains("LINK_ARTIFACT"));
    }
}

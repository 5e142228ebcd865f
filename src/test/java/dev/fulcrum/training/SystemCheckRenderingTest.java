package dev.fulcrum.training;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.util.List;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.ws.rs.core.Response;

import org.junit.jupiter.api.Test;

import io.smallrye.health.SmallRyeHealth;
import io.smallrye.health.SmallRyeHealthReporter;

import dev.fulcrum.training.api.model.SystemCheckRes;

/** How {@code /v1/system-check} renders the SmallRye Health group, up and down (plain JUnit, no database). */
class SystemCheckRenderingTest {

    @Test
    void aGroupThatIsUpIsA200WithEveryCheck() {
        Response response = render(group("UP", check("api", "UP", null), check("Database", "UP", null),
                check("cpu_queue", "UP", null), check("gpu_queue", "UP", null)));
        SystemCheckRes body = (SystemCheckRes) response.getEntity();
        assertEquals(200, response.getStatus());
        assertEquals(true, body.getDatabase().getSuccess());
        assertEquals(new BigDecimal(3), body.getDatabase().getDurationMs());
        assertEquals(7, body.getCpuQueue().getQueueDepth());
        assertEquals(List.of(), body.getGpuQueue().getErrors());
    }

    @Test
    void aDatabaseThatDoesNotAnswerIsA503NamingWhy() {
        Response response = render(group("DOWN", check("api", "UP", null),
                check("Database", "DOWN", "database unreachable: no answer within 1000 ms"),
                check("cpu_queue", "DOWN", "queue unreadable: database unreachable"),
                check("gpu_queue", "DOWN", "queue unreadable: database unreachable")));
        SystemCheckRes body = (SystemCheckRes) response.getEntity();
        assertEquals(503, response.getStatus());
        assertEquals(true, body.getApi().getSuccess());
        assertEquals(false, body.getDatabase().getSuccess());
        assertEquals(List.of("database unreachable: no answer within 1000 ms"), body.getDatabase().getErrors());
        assertEquals(false, body.getCpuQueue().getSuccess());
    }

    private static Response render(SmallRyeHealth group) {
        HealthResource resource = new HealthResource();
        resource.reporter = new SmallRyeHealthReporter() {
            @Override
            public SmallRyeHealth getHealthGroup(String name) {
                assertEquals("system-check", name);
                return group;
            }
        };
        return resource.systemCheck();
    }

    private static SmallRyeHealth group(String status, JsonObject... checks) {
        var array = Json.createArrayBuilder();
        for (JsonObject check : checks) {
            array.add(check);
        }
        return new SmallRyeHealth(Json.createObjectBuilder().add("status", status).add("checks", array).build());
    }

    private static JsonObject check(String name, String status, String error) {
        var data = Json.createObjectBuilder().add("duration_ms", 3);
        if (name.endsWith("_queue")) {
            data.add("queue_depth", 7);
        }
        if (error != null) {
            data.add("error", error);
        }
        return Json.createObjectBuilder().add("name", name).add("status", status).add("data", data).build();
    }
}

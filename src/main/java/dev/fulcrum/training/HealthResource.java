package dev.fulcrum.training;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import jakarta.ws.rs.core.Response;

import io.smallrye.health.SmallRyeHealth;
import io.smallrye.health.SmallRyeHealthReporter;

import dev.fulcrum.platform.database.DatabaseHealth;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.training.api.HealthApi;
import dev.fulcrum.training.api.model.Check;
import dev.fulcrum.training.api.model.HealthRes;
import dev.fulcrum.training.api.model.SystemCheckRes;

/**
 * {@code /v1/health} and {@code /v1/system-check} as SmallRye Health reports them, so that they and the probes under
 * {@code /q/health} never disagree: health is the liveness checks, system-check renders the
 * {@value TrainingQueues#GROUP} group ({@code api}, the database, {@code cpu_queue}, {@code gpu_queue}).
 */
public class HealthResource implements HealthApi {

    @Inject
    SmallRyeHealthReporter reporter;

    @Override
    public Response health() {
        if (reporter.getLiveness().isDown()) {
            throw ApiException.unavailable("Not live: see /q/health/live");
        }
        return Response.ok(new HealthRes().status(HealthRes.StatusEnum.OK)).build();
    }

    @Override
    public Response systemCheck() {
        SmallRyeHealth group = reporter.getHealthGroup(TrainingQueues.GROUP);
        SystemCheckRes result = new SystemCheckRes();
        for (JsonValue value : group.getPayload().getJsonArray("checks")) {
            JsonObject check = value.asJsonObject();
            Check rendered = render(check);
            switch (check.getString("name")) {
                case "api" -> result.api(rendered);
                case DatabaseHealth.NAME -> result.database(rendered);
                case "cpu_queue" -> result.cpuQueue(rendered);
                case "gpu_queue" -> result.gpuQueue(rendered);
                default -> {
                    // another check of the group: it decides the status, the documented shape has no field for it
                }
            }
        }
        return Response.status(group.isDown() ? 503 : 200).entity(result).build();
    }

    private static Check render(JsonObject check) {
        JsonObject data = check.getJsonObject("data");
        String error = data == null ? null : data.getString("error", null);
        Check rendered = new Check().success("UP".equals(check.getString("status")))
                .errors(error == null ? List.of() : List.of(error));
        if (data != null && data.get("duration_ms") instanceof JsonNumber took) {
            rendered.durationMs(took.bigDecimalValue());
        }
        if (data != null && data.get("queue_depth") instanceof JsonNumber depth) {
            rendered.queueDepth(depth.intValue());
        }
        return rendered;
    }
}

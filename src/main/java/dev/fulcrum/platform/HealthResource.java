package dev.fulcrum.platform;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.training.TrainingQueues;
import dev.fulcrum.training.api.HealthApi;
import dev.fulcrum.training.api.model.Check;
import dev.fulcrum.training.api.model.HealthRes;
import dev.fulcrum.training.api.model.SystemCheckRes;

public class HealthResource implements HealthApi {

    @Inject
    DatabaseHealth databaseHealth;

    @Inject
    TrainingQueues trainingQueues;

    @Override
    public Response health() {
        return Response.ok(new HealthRes().status(HealthRes.StatusEnum.OK)).build();
    }

    @Override
    public Response systemCheck() {
        Check database = database();
        // the queues are read from the database: not tried (and not waited for) when it does not answer
        SystemCheckRes result = new SystemCheckRes().api(new Check().success(true).errors(List.of())).database(database)
                .cpuQueue(database.getSuccess() ? queue(trainingQueues::cpu) : unreadable(database))
                .gpuQueue(database.getSuccess() ? queue(trainingQueues::gpu) : unreadable(database));
        boolean ok = result.getApi().getSuccess() && result.getDatabase().getSuccess()
                && result.getCpuQueue().getSuccess() && result.getGpuQueue().getSuccess();
        return Response.status(ok ? 200 : 503).entity(result).build();
    }

    private static Check unreadable(Check database) {
        return new Check().success(false).errors(List.of("queue unreadable: " + database.getErrors().get(0)));
    }

    /** A queue check; failed (not thrown) when the database cannot answer it. */
    private static Check queue(java.util.function.Supplier<Check> check) {
        try {
            return check.get();
        } catch (RuntimeException e) {
            return new Check().success(false).errors(List.of("queue unreadable: " + e.getMessage()));
        }
    }

    /** The readiness probe's database check, so that both say the same. */
    private Check database() {
        DatabaseHealth.Result result = databaseHealth.check();
        return new Check().success(result.up()).errors(result.up() ? List.of() : List.of(result.error()))
                .durationMs(BigDecimal.valueOf(result.took().toNanos() / 1e6).setScale(3, RoundingMode.HALF_UP));
    }
}

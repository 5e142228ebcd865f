package dev.fulcrum.platform;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import io.agroal.api.AgroalDataSource;

import dev.fulcrum.training.TrainingQueues;
import dev.fulcrum.training.api.HealthApi;
import dev.fulcrum.training.api.model.Check;
import dev.fulcrum.training.api.model.HealthRes;
import dev.fulcrum.training.api.model.SystemCheckRes;

public class HealthResource implements HealthApi {

    @Inject
    AgroalDataSource dataSource;

    @Inject
    TrainingQueues trainingQueues;

    @Override
    public Response health() {
        return Response.ok(new HealthRes().status(HealthRes.StatusEnum.OK)).build();
    }

    @Override
    public Response systemCheck() {
        SystemCheckRes result = new SystemCheckRes().api(new Check().success(true).errors(List.of()))
                .database(database()).cpuQueue(queue(trainingQueues::cpu)).gpuQueue(queue(trainingQueues::gpu));
        boolean ok = result.getApi().getSuccess() && result.getDatabase().getSuccess()
                && result.getCpuQueue().getSuccess() && result.getGpuQueue().getSuccess();
        return Response.status(ok ? 200 : 503).entity(result).build();
    }

    /** A queue check; failed (not thrown) when the database cannot answer it. */
    private static Check queue(java.util.function.Supplier<Check> check) {
        try {
            return check.get();
        } catch (RuntimeException e) {
            return new Check().success(false).errors(List.of("queue unreadable: " + e.getMessage()));
        }
    }

    private Check database() {
        long start = System.nanoTime();
        Check check = new Check();
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement()) {
            statement.setQueryTimeout(5);
            statement.execute("select 1");
            check.success(true).errors(List.of());
        } catch (Exception e) {
            check.success(false).errors(List.of("database unreachable: " + e.getMessage()));
        }
        return check
                .durationMs(BigDecimal.valueOf((System.nanoTime() - start) / 1e6).setScale(3, RoundingMode.HALF_UP));
    }
}

package dev.fulcrum.wandb;

import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.runs.RunStops;
import dev.fulcrum.wandb.WandbNodes.RunNode;

import graphql.schema.idl.RuntimeWiring;

/**
 * Stopping a run through the W&B door: the SDK's {@code run.stop()} ({@code mutation StopRun}) asks the runs store's
 * {@link RunStops}, and {@code Run.stopped} answers the poll of SDKs that ask it by GraphQL ({@code RunStoppedStatus});
 * wandb 0.31.0 learns it from its file stream's answers ({@link FileStreamResource}).
 */
@ApplicationScoped
class WandbRunStops {

    @Inject
    RunStops stops;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Mutation", type -> type.dataFetcher("stopRun", env -> {
            Map<String, Object> input = env.getArgument("input");
            String id = (String) input.get("id");
            String[] path = id == null ? null : WandbNodes.parseRunId(id);
            if (path == null) {
                throw ApiException.invalid(Violation.of("Not a run's id: " + id, "value_error", "body", "input", "id"));
            }
            stops.request(path[2], path[1], path[0]);
            return Map.of("success", true);
        })).type("Run", type -> type.dataFetcher("stopped", env -> {
            RunNode node = env.getSource();
            return stops.requested(node.run.entity(), node.run.project(), node.run.name()) != null;
        }));
    }
}

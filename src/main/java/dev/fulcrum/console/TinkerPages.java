package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.tinker.api.TinkerApi;

/**
 * The caller's Tinker sessions (docs/tinker.md), newest first: each with its project, its training clients (their base
 * model, rank, state and latest saved weights, linked to the Fulcrum training model whose checkpoints hold them) and
 * its sampling clients, read from the Tinker REST listings the SDK's {@code RestClient} reads.
 */
@Path("/console/tinker")
@AuthenticatesWithSession
@Blocking
public class TinkerPages {

    /** Sessions on one page. */
    static final int PAGE = 20;

    @Inject
    TinkerApi tinker;

    @GET
    public Response sessions(@RestQuery Integer offset) {
        return Pages.page(() -> {
            int from = offset == null || offset < 0 ? 0 : offset;
            ObjectNode page = Pages.body(tinker.tinkerListSessions(PAGE + 1, from, null));
            List<String> ids = new ArrayList<>();
            page.path("sessions").forEach(id -> ids.add(id.asText()));
            List<TrainingTemplates.TinkerSessionRow> sessions = new ArrayList<>();
            for (String id : ids.subList(0, Math.min(PAGE, ids.size()))) {
                sessions.add(session(id));
            }
            return TrainingTemplates.tinkerSessions(sessions, from > 0 ? Math.max(0, from - PAGE) : null,
                    ids.size() > PAGE ? from + PAGE : null);
        });
    }

    private TrainingTemplates.TinkerSessionRow session(String id) {
        ObjectNode session = Pages.body(tinker.tinkerGetSession(id, null));
        List<TrainingTemplates.TinkerRunRow> runs = new ArrayList<>();
        for (JsonNode runId : session.path("training_run_ids")) {
            ObjectNode run = Pages.body(tinker.tinkerGetTrainingRun(runId.asText(), null));
            String[] project = run.path("project").asText().split("/", 2);
            runs.add(new TrainingTemplates.TinkerRunRow(run.path("training_run_id").asText(),
                    run.path("base_model").asText(), run.path("lora_rank").asInt(), run.path("state").asText(),
                    run.path("last_request_time").asText(), checkpoint(run.path("last_checkpoint")),
                    checkpoint(run.path("last_sampler_checkpoint")), TrainingPages.base(project[0], project[1])
                            + "/models/" + Pages.path(run.path("fulcrum_model_id").asText())));
        }
        List<TrainingTemplates.TinkerSamplerRow> samplers = new ArrayList<>();
        for (JsonNode samplerId : session.path("sampler_ids")) {
            ObjectNode sampler = Pages.body(tinker.tinkerGetSampler(samplerId.asText()));
            samplers.add(new TrainingTemplates.TinkerSamplerRow(sampler.path("sampler_id").asText(),
                    sampler.path("base_model").asText(),
                    sampler.hasNonNull("model_path") ? sampler.get("model_path").asText() : null));
        }
        String project = session.path("project").asText();
        return new TrainingTemplates.TinkerSessionRow(id, project,
                "/console/projects/" + Pages.path(project.split("/", 2)[0]) + "/"
                        + Pages.path(project.split("/", 2)[1]),
                session.path("created_at").asText(),
                session.hasNonNull("ended_at") ? session.get("ended_at").asText() : null, runs, samplers);
    }

    /** The {@code checkpoint_id} of saved weights, or null. */
    private static String checkpoint(JsonNode checkpoint) {
        return checkpoint.hasNonNull("checkpoint_id") ? checkpoint.get("checkpoint_id").asText() : null;
    }
}

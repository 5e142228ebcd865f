package dev.fulcrum.training;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.control.ActivateRequestContext;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.Drain;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.StorageFull;
import dev.fulcrum.tiny.BuiltinModel;
import dev.fulcrum.tiny.BuiltinTrainer;
import dev.fulcrum.tiny.TrainerConfig;
import dev.fulcrum.tiny.TrainingTurn;
import dev.fulcrum.tiny.Trajectory;
import dev.fulcrum.tiny.TrajectoryGroup;
import dev.fulcrum.training.JobQueue.Claimed;
import dev.fulcrum.training.JobQueue.LeaseLost;

/**
 * Runs one job of a built-in model: loads the weights of the checkpoint it starts from, trains them with the built-in
 * trainer (SFT: cross-entropy on the assistant turns; RL: group-relative policy gradient on the trainable Choices),
 * reporting each gradient step as an event, and stores the result as the next checkpoint. When the replica drains
 * ({@link Drain}) the training stops before its next step and the job is given back, queued again for any executor.
 */
@ApplicationScoped
public class JobRunner {

    private static final Logger LOG = Logger.getLogger(JobRunner.class);

    @Inject
    JobQueue queue;

    @Inject
    CheckpointFiles checkpointFiles;

    @Inject
    Checkpoints checkpoints;

    @Inject
    Trajectories trajectories;

    @Inject
    Drain drain;

    /** Claims and runs the next CPU job, in a request context of its own; false when there was none. */
    @ActivateRequestContext
    public boolean runNext(String owner) {
        Claimed job = queue.claim("cpu", owner, null);
        if (job == null) {
            return false;
        }
        try {
            run(job);
        } catch (LeaseLost e) {
            LOG.warnf("Training job %s: %s", job.id(), e.getMessage());
        } catch (RuntimeException e) {
            // a full disk fails the job without a half-made checkpoint; the log line says what to free
            ApiException full = StorageFull.refusal(e, "the checkpoint of training job " + job.id());
            String message = full != null ? "Training failed: " + full.getMessage()
                    : e instanceof ApiException || e instanceof IllegalArgumentException ? e.getMessage()
                            : "Training failed: " + e;
            if (full == null) {
                LOG.warnf(e, "Training job %s failed", job.id());
            }
            try {
                queue.fail(job.id(), job.attempt(), message);
            } catch (LeaseLost lost) {
                LOG.warnf("Training job %s: %s", job.id(), lost.getMessage());
            }
        }
        return true;
    }

    private void run(Claimed job) {
        TrainerConfig config = TrainerConfig.of(job.config());
        BuiltinModel model = checkpointFiles.builtin(job.model(), job.baseStep());
        AtomicBoolean cancelled = new AtomicBoolean();
        AtomicBoolean interrupted = new AtomicBoolean(); // by the drain, before a step
        BooleanSupplier stop = () -> {
            if (cancelled.get()) {
                return true;
            }
            if (drain.draining()) {
                interrupted.set(true);
                return true;
            }
            return false;
        };
        Map<String, Double> last = new LinkedHashMap<>();
        var listener = (dev.fulcrum.tiny.StepListener) (step, total, metrics) -> {
            ObjectNode data = JsonNodeFactory.instance.objectNode();
            metrics.forEach((name, value) -> {
                if (Double.isFinite(value)) {
                    data.put(name, value);
                }
            });
            last.clear();
            last.putAll(metrics);
            if (queue.event(job.id(), job.attempt(), "gradient_step", data)) {
                cancelled.set(true);
            }
        };
        if (job.kind().equals("sft")) {
            List<List<TrainingTurn>> examples = examples(job.input(),
                    job.config().path("assistant_turns").asText("all"));
            started(job, BuiltinTrainer.sftSteps(examples, config), cancelled);
            BuiltinTrainer.sft(model, examples, config, listener, stop);
        } else {
            List<TrajectoryGroup> groups = groups(job.input());
            started(job, BuiltinTrainer.rlSteps(groups, config), cancelled);
            BuiltinTrainer.rl(model, groups, config, listener, stop);
        }
        if (cancelled.get()) {
            queue.fail(job.id(), job.attempt(), "Cancelled");
            return;
        }
        if (interrupted.get()) {
            queue.release(job.id(), job.attempt());
            LOG.infof("Draining: training job %s stopped before its next step and was queued again", job.id());
            return;
        }
        queue.succeed(job, List.of(checkpoints.store(BuiltinModel.FILE, CheckpointFiles.serialize(model))), last);
    }

    private void started(Claimed job, int steps, AtomicBoolean cancelled) {
        if (queue.event(job.id(), job.attempt(), "training_started",
                JsonNodeFactory.instance.objectNode().put("num_sequences", steps))) {
            cancelled.set(true);
        }
    }

    /** SFT examples; the assistant turns are trainable ({@code last}: only the last one). */
    static List<List<TrainingTurn>> examples(ObjectNode input, String assistantTurns) {
        List<List<TrainingTurn>> examples = new ArrayList<>();
        for (JsonNode example : input.path("examples")) {
            JsonNode messages = example.path("messages");
            int lastAssistant = -1;
            for (int i = 0; i < messages.size(); i++) {
                if (messages.get(i).path("role").asText().equals("assistant")) {
                    lastAssistant = i;
                }
            }
            List<TrainingTurn> turns = new ArrayList<>();
            for (int i = 0; i < messages.size(); i++) {
                String role = messages.get(i).path("role").asText();
                boolean trainable = role.equals("assistant") && (!assistantTurns.equals("last") || i == lastAssistant);
                turns.add(new TrainingTurn(role, messages.get(i).path("content").asText(), trainable));
            }
            examples.add(turns);
        }
        return examples;
    }

    List<TrajectoryGroup> groups(ObjectNode input) {
        List<ObjectNode> raw = new ArrayList<>();
        input.path("trajectory_groups").forEach(g -> raw.add((ObjectNode) g));
        List<TrajectoryGroup> groups = new ArrayList<>();
        for (Trajectories.Group group : trajectories.parse(raw, true)) {
            List<Trajectory> members = new ArrayList<>();
            for (Trajectories.Trajectory trajectory : group.trajectories()) {
                members.add(
                        new Trajectory(
                                trajectory.turns().stream()
                                        .map(t -> new TrainingTurn(t.role(), t.content(), t.trainable())).toList(),
                                trajectory.reward()));
            }
            groups.add(new TrajectoryGroup(members));
        }
        return groups;
    }
}

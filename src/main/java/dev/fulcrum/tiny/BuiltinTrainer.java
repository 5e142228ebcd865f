package dev.fulcrum.tiny;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;

/**
 * Trains a {@link BuiltinModel} in place with real backpropagation and Adam (global gradient norm clipped to 1).
 * <ul>
 * <li>SFT: mean next-token cross-entropy over the trainable turns' tokens (their end-of-turn token included).</li>
 * <li>RL: GRPO-style. Each trajectory's advantage is (reward - group mean) / (group standard deviation + 1e-4); groups
 * of one or without variance give no gradient. The loss is the PPO clipped-ratio objective (epsilon 0.2) averaged over
 * the trainable tokens of a batch, with the old log-probabilities taken from the model before the call.</li>
 * </ul>
 * Batches are split over up to two threads. Training is deterministic for the same model, data and configuration.
 */
public final class BuiltinTrainer {

    static final double MAX_GRAD_NORM = 1.0;
    static final double CLIP_EPSILON = 0.2;
    static final double ADVANTAGE_EPSILON = 1e-4;
    private static final long SHUFFLE_SEED = 0x5eed;
    private static final int WORKERS = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
    private static final ForkJoinPool POOL = new ForkJoinPool(WORKERS);

    private BuiltinTrainer() {
    }

    /** A conversation as training tokens: position t predicts tokens[t + 1]; trainable positions get the loss. */
    record Sequence(int[] tokens, int[] targets, int[] trainable) {

        int length() {
            return trainable.length == 0 ? 0 : trainable[trainable.length - 1] + 1;
        }
    }

    static boolean hasTrainableTurn(List<TrainingTurn> turns) {
        for (TrainingTurn turn : turns) {
            if (turn.trainable()) {
                return true;
            }
        }
        return false;
    }

    static Sequence sequence(List<TrainingTurn> turns, int context) {
        int total = 0;
        byte[][] contents = new byte[turns.size()][];
        for (int i = 0; i < contents.length; i++) {
            contents[i] = ChatTemplate.bytes(turns.get(i).content());
            total += contents[i].length + 2;
        }
        int[] tokens = new int[total];
        boolean[] mark = new boolean[total];
        int at = 0;
        for (int i = 0; i < contents.length; i++) {
            TrainingTurn turn = turns.get(i);
            tokens[at++] = ChatTemplate.header(turn.role());
            for (byte b : contents[i]) {
                mark[at] = turn.trainable();
                tokens[at++] = b & 0xFF;
            }
            mark[at] = turn.trainable();
            tokens[at++] = ChatTemplate.END;
        }
        int from = Math.max(0, total - (context + 1));
        int n = total - from;
        int[] kept = Arrays.copyOfRange(tokens, from, total);
        int[] targets = new int[Math.max(0, n - 1)];
        int count = 0;
        for (int t = 0; t + 1 < n; t++) {
            targets[t] = kept[t + 1];
            if (mark[from + t + 1]) {
                count++;
            }
        }
        int[] trainable = new int[count];
        count = 0;
        for (int t = 0; t + 1 < n; t++) {
            if (mark[from + t + 1]) {
                trainable[count++] = t;
            }
        }
        return new Sequence(kept, targets, trainable);
    }

    /** Gradient steps {@link #sft} takes: epochs times the batches of the examples that have a trainable turn. */
    public static int sftSteps(List<List<TrainingTurn>> examples, TrainerConfig config) {
        int usable = 0;
        for (List<TrainingTurn> example : examples) {
            if (hasTrainableTurn(example)) {
                usable++;
            }
        }
        return config.epochs() * ceilDiv(usable, config.batchSize());
    }

    /**
     * Gradient steps {@link #rl} takes: epochs times the batches of the trajectories that get a gradient (those with a
     * trainable turn and a non-zero advantage, so from groups of at least two whose rewards differ).
     */
    public static int rlSteps(List<TrajectoryGroup> groups, TrainerConfig config) {
        return config.epochs() * ceilDiv(scored(groups).size(), config.batchSize());
    }

    /** A trajectory that gets a gradient, with its group-relative advantage. */
    record Scored(Trajectory trajectory, double advantage) {
    }

    static List<Scored> scored(List<TrajectoryGroup> groups) {
        List<Scored> result = new ArrayList<>();
        for (TrajectoryGroup group : groups) {
            List<Trajectory> members = group.trajectories();
            if (members.size() < 2) {
                continue;
            }
            double mean = 0;
            for (Trajectory trajectory : members) {
                mean += trajectory.reward();
            }
            mean /= members.size();
            double var = 0;
            for (Trajectory trajectory : members) {
                var += (trajectory.reward() - mean) * (trajectory.reward() - mean);
            }
            double std = Math.sqrt(var / members.size());
            if (!(std > 1e-9)) {
                continue;
            }
            for (Trajectory trajectory : members) {
                double advantage = (trajectory.reward() - mean) / (std + ADVANTAGE_EPSILON);
                if (advantage != 0 && hasTrainableTurn(trajectory.turns())) {
                    result.add(new Scored(trajectory, advantage));
                }
            }
        }
        return result;
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    public static void sft(BuiltinModel model, List<List<TrainingTurn>> examples, TrainerConfig config,
            StepListener listener, BooleanSupplier cancelled) {
        List<Sequence> data = new ArrayList<>();
        for (List<TrainingTurn> example : examples) {
            if (hasTrainableTurn(example)) {
                data.add(sequence(example, model.contextLength()));
            }
        }
        int perEpoch = ceilDiv(data.size(), config.batchSize());
        int total = config.epochs() * perEpoch;
        Workspace work = new Workspace(model);
        Adam adam = new Adam(model.params.length);
        Random shuffle = new Random(SHUFFLE_SEED);
        int[] order = new int[data.size()];
        int step = 0;
        for (int epoch = 0; epoch < config.epochs(); epoch++) {
            shuffle(order, shuffle);
            for (int b = 0; b < perEpoch; b++) {
                if (cancelled.getAsBoolean()) {
                    return;
                }
                List<Sequence> batch = new ArrayList<>();
                int tokens = 0;
                for (int i = b * config.batchSize(); i < Math.min(order.length, (b + 1) * config.batchSize()); i++) {
                    Sequence sequence = data.get(order[i]);
                    batch.add(sequence);
                    tokens += sequence.trainable().length;
                }
                float weight = tokens == 0 ? 0f : 1f / tokens;
                double[] loss = work.run(batch, (pass, sequence, index, coefficient) -> {
                    double sum = 0;
                    for (int t : sequence.trainable()) {
                        sum -= pass.logProb(t, sequence.targets()[t]);
                        coefficient[t] = -weight;
                    }
                    return new double[] { sum };
                });
                if (cancelled.getAsBoolean()) {
                    return;
                }
                double norm = Adam.clip(work.grads(), MAX_GRAD_NORM);
                double rate = config.learningRate(step);
                if (tokens > 0) {
                    adam.step(model.params, work.grads(), rate);
                }
                step++;
                Map<String, Double> metrics = new LinkedHashMap<>();
                metrics.put("loss", tokens == 0 ? 0.0 : loss[0] / tokens);
                metrics.put("learning_rate", rate);
                metrics.put("grad_norm", norm);
                metrics.put("num_trainable_tokens", (double) tokens);
                metrics.put("epoch", (double) epoch);
                listener.onStep(step, total, metrics);
            }
        }
    }

    public static void rl(BuiltinModel model, List<TrajectoryGroup> groups, TrainerConfig config, StepListener listener,
            BooleanSupplier cancelled) {
        double rewardSum = 0;
        double stdSum = 0;
        int trajectories = 0;
        int varied = 0;
        for (TrajectoryGroup group : groups) {
            List<Trajectory> members = group.trajectories();
            double sum = 0;
            for (Trajectory trajectory : members) {
                sum += trajectory.reward();
            }
            rewardSum += sum;
            double mean = sum / Math.max(1, members.size());
            double var = 0;
            for (Trajectory trajectory : members) {
                var += (trajectory.reward() - mean) * (trajectory.reward() - mean);
            }
            double std = Math.sqrt(var / Math.max(1, members.size()));
            stdSum += std;
            trajectories += members.size();
            if (members.size() >= 2 && std > 1e-9) {
                varied++;
            }
        }
        double reward = trajectories == 0 ? 0 : rewardSum / trajectories;
        double rewardStd = groups.isEmpty() ? 0 : stdSum / groups.size();
        List<Scored> scored = scored(groups);
        List<Sequence> data = new ArrayList<>();
        for (Scored item : scored) {
            data.add(sequence(item.trajectory().turns(), model.contextLength()));
        }
        int perEpoch = ceilDiv(data.size(), config.batchSize());
        int total = config.epochs() * perEpoch;
        if (total == 0 || cancelled.getAsBoolean()) {
            return;
        }
        Workspace work = new Workspace(model);
        float[][] old = new float[data.size()][];
        work.score(data, (index, values) -> old[index] = values);
        Adam adam = new Adam(model.params.length);
        Random shuffle = new Random(SHUFFLE_SEED);
        int[] order = new int[data.size()];
        int step = 0;
        float clip = (float) CLIP_EPSILON;
        for (int epoch = 0; epoch < config.epochs(); epoch++) {
            shuffle(order, shuffle);
            for (int b = 0; b < perEpoch; b++) {
                if (cancelled.getAsBoolean()) {
                    return;
                }
                List<Sequence> batch = new ArrayList<>();
                List<Integer> batchIndex = new ArrayList<>();
                int tokens = 0;
                for (int i = b * config.batchSize(); i < Math.min(order.length, (b + 1) * config.batchSize()); i++) {
                    tokens += data.get(order[i]).trainable().length;
                    batch.add(data.get(order[i]));
                    batchIndex.add(order[i]);
                }
                float weight = tokens == 0 ? 0f : 1f / tokens;
                double[] sums = work.run(batch, (pass, sequence, index, coefficient) -> {
                    int item = batchIndex.get(index);
                    float advantage = (float) scored.get(item).advantage();
                    float[] before = old[item];
                    int[] trainable = sequence.trainable();
                    double loss = 0;
                    double clipped = 0;
                    double kl = 0;
                    for (int n = 0; n < trainable.length; n++) {
                        int t = trainable[n];
                        double logProb = pass.logProb(t, sequence.targets()[t]);
                        double ratio = Math.exp(logProb - before[n]);
                        double bounded = Math.max(1 - clip, Math.min(1 + clip, ratio));
                        double plain = ratio * advantage;
                        double cut = bounded * advantage;
                        if (plain <= cut) {
                            loss -= plain;
                            coefficient[t] = (float) (-plain * weight);
                        } else {
                            loss -= cut;
                            clipped++;
                        }
                        kl += before[n] - logProb;
                    }
                    return new double[] { loss, clipped, kl };
                });
                if (cancelled.getAsBoolean()) {
                    return;
                }
                double norm = Adam.clip(work.grads(), MAX_GRAD_NORM);
                double rate = config.learningRate(step);
                adam.step(model.params, work.grads(), rate);
                step++;
                Map<String, Double> metrics = new LinkedHashMap<>();
                metrics.put("loss", tokens == 0 ? 0.0 : sums[0] / tokens);
                metrics.put("learning_rate", rate);
                metrics.put("grad_norm", norm);
                metrics.put("reward", reward);
                metrics.put("reward_std_dev", rewardStd);
                metrics.put("num_trajectories", (double) trajectories);
                metrics.put("num_trainable_tokens", (double) tokens);
                metrics.put("num_groups", (double) groups.size());
                metrics.put("num_groups_trainable", (double) varied);
                metrics.put("clip_fraction", tokens == 0 ? 0.0 : sums[1] / tokens);
                metrics.put("approx_kl", tokens == 0 ? 0.0 : sums[2] / tokens);
                listener.onStep(step, total, metrics);
            }
        }
    }

    private static void shuffle(int[] order, Random random) {
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        for (int i = order.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int swap = order[i];
            order[i] = order[j];
            order[j] = swap;
        }
    }

    /** The per-example part of a loss: scores the positions and sets their loss coefficients; returns its sums. */
    @FunctionalInterface
    interface ExampleLoss {
        double[] apply(SequencePass pass, Sequence sequence, int index, float[] coefficient);
    }

    @FunctionalInterface
    interface ScoreSink {
        void accept(int index, float[] logProbs);
    }

    /** One sequence pass, gradient buffer and coefficient buffer per thread. */
    static final class Workspace {

        private final BuiltinModel model;
        private final SequencePass[] passes;
        private final float[][] grads;
        private final float[][] coefficients;

        Workspace(BuiltinModel model) {
            this.model = model;
            int workers = WORKERS;
            passes = new SequencePass[workers];
            grads = new float[workers][];
            coefficients = new float[workers][];
            for (int w = 0; w < workers; w++) {
                passes[w] = new SequencePass(model.shape, model.params);
                grads[w] = new float[model.params.length];
                coefficients[w] = new float[model.shape.context];
            }
        }

        float[] grads() {
            return grads[0];
        }

        /** Forward and backward over the batch; the summed gradient ends up in grads(); returns the summed results. */
        double[] run(List<Sequence> batch, ExampleLoss loss) {
            int workers = Math.min(passes.length, Math.max(1, batch.size()));
            double[][] results = new double[workers][];
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 1; w < workers; w++) {
                int worker = w;
                futures.add(POOL.submit(() -> {
                    results[worker] = chunk(worker, workers, batch, loss);
                }));
            }
            results[0] = chunk(0, workers, batch, loss);
            for (Future<?> future : futures) {
                join(future);
            }
            for (int w = 1; w < passes.length; w++) {
                if (w < workers) {
                    float[] g0 = grads[0];
                    float[] gw = grads[w];
                    for (int i = 0; i < g0.length; i++) {
                        g0[i] += gw[i];
                    }
                }
            }
            double[] sum = null;
            for (double[] r : results) {
                if (r == null) {
                    continue;
                }
                if (sum == null) {
                    sum = r.clone();
                } else {
                    for (int i = 0; i < sum.length; i++) {
                        sum[i] += r[i];
                    }
                }
            }
            return sum == null ? new double[] { 0, 0, 0 } : sum;
        }

        private double[] chunk(int worker, int workers, List<Sequence> batch, ExampleLoss loss) {
            float[] g = grads[worker];
            Arrays.fill(g, 0f);
            float[] coefficient = coefficients[worker];
            SequencePass pass = passes[worker];
            double[] sum = null;
            for (int i = worker; i < batch.size(); i += workers) {
                Sequence sequence = batch.get(i);
                if (sequence.trainable().length == 0) {
                    continue;
                }
                pass.forward(sequence.tokens(), 0, sequence.length());
                Arrays.fill(coefficient, 0f);
                double[] r = loss.apply(pass, sequence, i, coefficient);
                pass.backward(sequence.targets(), coefficient, g);
                if (sum == null) {
                    sum = r.clone();
                } else {
                    for (int k = 0; k < sum.length; k++) {
                        sum[k] += r[k];
                    }
                }
            }
            return sum;
        }

        /** Log-probabilities of every trainable token of each sequence under the current weights. */
        void score(List<Sequence> sequences, ScoreSink sink) {
            int workers = Math.min(passes.length, Math.max(1, sequences.size()));
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 1; w < workers; w++) {
                int worker = w;
                futures.add(POOL.submit(() -> scoreChunk(worker, workers, sequences, sink)));
            }
            scoreChunk(0, workers, sequences, sink);
            for (Future<?> future : futures) {
                join(future);
            }
        }

        private void scoreChunk(int worker, int workers, List<Sequence> sequences, ScoreSink sink) {
            SequencePass pass = passes[worker];
            for (int i = worker; i < sequences.size(); i += workers) {
                Sequence sequence = sequences.get(i);
                pass.forward(sequence.tokens(), 0, sequence.length());
                int[] trainable = sequence.trainable();
                float[] values = new float[trainable.length];
                for (int n = 0; n < trainable.length; n++) {
                    values[n] = (float) pass.logProb(trainable[n], sequence.targets()[trainable[n]]);
                }
                synchronized (sink) {
                    sink.accept(i, values);
                }
            }
        }

        private static void join(Future<?> future) {
            try {
                future.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("training interrupted", e);
            } catch (java.util.concurrent.ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException runtime) {
                    throw runtime;
                }
                if (cause instanceof Error error) {
                    throw error;
                }
                throw new IllegalStateException(cause);
            }
        }
    }
}

package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Reinforcement learning really changes behaviour: over ten jobs, each sampling 4 groups of completions from the
 * current model and rewarding those that contain the letter 'z', the mean reward rises.
 */
class BuiltinRlLearningTest {

    static final String[] PROMPTS = { "Say something.", "Write a word.", "Name an animal.", "Tell me a secret." };
    static long seedBase = 0;
    static final int JOBS = 10;
    static final int GROUP_SIZE = 8;
    static final int MAX_TOKENS = 16;
    static final TrainerConfig CONFIG = new TrainerConfig(3e-3, 4, 1);

    static double reward(String completion) {
        return completion.indexOf('z') >= 0 ? 1.0 : 0.0;
    }

    @Test
    void rewardRisesOverTenJobs() {
        BuiltinModel model = BuiltinModel.initial();
        double[] meanReward = new double[JOBS];
        List<String> steps = new ArrayList<>();
        long start = System.nanoTime();
        for (int job = 0; job < JOBS; job++) {
            List<TrajectoryGroup> groups = new ArrayList<>();
            double sum = 0;
            for (int p = 0; p < PROMPTS.length; p++) {
                List<Trajectory> trajectories = new ArrayList<>();
                for (int i = 0; i < GROUP_SIZE; i++) {
                    long seed = seedBase + job * 1000L + p * 100L + i;
                    Generation completion = model.generate(List.of(new ChatTurn("user", PROMPTS[p])),
                            new Sampling(1.0, 1.0, MAX_TOKENS, List.of(), seed), null);
                    double reward = reward(completion.text());
                    sum += reward;
                    trajectories.add(new Trajectory(List.of(new TrainingTurn("user", PROMPTS[p], false),
                            new TrainingTurn("assistant", completion.text(), true)), reward));
                }
                groups.add(new TrajectoryGroup(trajectories));
            }
            meanReward[job] = sum / (PROMPTS.length * GROUP_SIZE);
            int expected = BuiltinTrainer.rlSteps(groups, CONFIG);
            int varied = 0;
            for (TrajectoryGroup group : groups) {
                if (group.trajectories().stream().mapToDouble(Trajectory::reward).distinct().count() > 1) {
                    varied += group.trajectories().size();
                }
            }
            assertEquals((varied + CONFIG.batchSize() - 1) / CONFIG.batchSize(), expected);
            int[] seen = new int[1];
            int currentJob = job;
            BuiltinTrainer.rl(model, groups, CONFIG, (step, total, metrics) -> {
                seen[0]++;
                assertEquals(expected, total);
                for (String name : List.of("loss", "learning_rate", "grad_norm", "reward", "reward_std_dev",
                        "num_trajectories", "num_trainable_tokens")) {
                    assertTrue(metrics.containsKey(name), name);
                }
                steps.add(format(currentJob + 1, step, metrics));
            }, () -> false);
            assertEquals(expected, seen[0]);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        double first = (meanReward[0] + meanReward[1]) / 2;
        double last = (meanReward[JOBS - 2] + meanReward[JOBS - 1]) / 2;
        StringBuilder curve = new StringBuilder();
        for (int job = 0; job < JOBS; job++) {
            curve.append(String.format("%s%d:%.3f", job == 0 ? "" : " ", job + 1, meanReward[job]));
        }
        System.out.printf("RL learning: %d jobs in %.1f s; mean reward per job (sampled before its update): %s%n", JOBS,
                seconds, curve);
        System.out.printf("RL first two jobs %.3f, last two jobs %.3f, rise %.3f%n", first, last, last - first);
        steps.forEach(System.out::println);
        assertTrue(last - first >= 0.3, "reward rose only by " + (last - first));
    }

    private static String format(int job, int step, Map<String, Double> metrics) {
        return String.format("  job %d step %d: loss %.4f grad_norm %.3f reward %.3f reward_std_dev %.3f tokens %.0f",
                job, step, metrics.get("loss"), metrics.get("grad_norm"), metrics.get("reward"),
                metrics.get("reward_std_dev"), metrics.get("num_trainable_tokens"));
    }
}

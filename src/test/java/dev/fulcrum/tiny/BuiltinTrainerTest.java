package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** What the trainer optimises, how many steps it takes, and that it stops cleanly. */
class BuiltinTrainerTest {

    private static final BuiltinModel INITIAL = BuiltinModel.initial();
    private static final StepListener IGNORE = (step, total, metrics) -> {
    };

    private static List<TrainingTurn> pair(String question, String answer) {
        return List.of(new TrainingTurn("user", question, false), new TrainingTurn("assistant", answer, true));
    }

    /** {@code n} conversations "question i" / "answer i". */
    private static List<List<TrainingTurn>> questions(int n) {
        List<List<TrainingTurn>> examples = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            examples.add(pair("question " + i, "answer " + i));
        }
        return examples;
    }

    /** One group of three answers to "Pick": zebra rewarded 1, horse and cow 0. */
    private static TrajectoryGroup pick() {
        return new TrajectoryGroup(
                List.of(trajectory("Pick", "zebra", 1), trajectory("Pick", "horse", 0), trajectory("Pick", "cow", 0)));
    }

    private static Trajectory trajectory(String prompt, String answer, double reward) {
        return new Trajectory(pair(prompt, answer), reward);
    }

    /** Log-probability of the assistant's answer and end-of-turn token, computed with the incremental decoder. */
    private static double answerLogProb(BuiltinModel model, String question, String answer) {
        Decoder decoder = new Decoder(model.shape, model.params);
        int[] prompt = model.encodePrompt(List.of(new ChatTurn("user", question)));
        float[] logits = null;
        for (int token : prompt) {
            logits = decoder.step(token, true);
        }
        List<Integer> answerTokens = new ArrayList<>();
        for (byte b : answer.getBytes(StandardCharsets.UTF_8)) {
            answerTokens.add(b & 0xFF);
        }
        answerTokens.add(ChatTemplate.END);
        double sum = 0;
        for (int token : answerTokens) {
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < logits.length; j++) {
                max = Math.max(max, logits[j]);
            }
            double z = 0;
            for (int j = 0; j < logits.length; j++) {
                z += Math.exp(logits[j] - max);
            }
            sum += logits[token] - max - Math.log(z);
            if (token != ChatTemplate.END) {
                logits = decoder.step(token, true);
            }
        }
        return sum;
    }

    @Test
    void sftLossIsTheMeanCrossEntropyOfTheAssistantTokens() {
        BuiltinModel model = INITIAL.copy();
        double expected = -answerLogProb(model, "Who?", "Me!") / 4;
        List<Map<String, Double>> seen = new ArrayList<>();
        BuiltinTrainer.sft(model, List.of(pair("Who?", "Me!")), new TrainerConfig(1e-3, 1, 1),
                (step, total, metrics) -> seen.add(metrics), () -> false);
        assertEquals(1, seen.size());
        assertEquals(expected, seen.get(0).get("loss"), 1e-4);
        assertEquals(4.0, seen.get(0).get("num_trainable_tokens"));
        assertEquals(1e-3, seen.get(0).get("learning_rate"));
        assertTrue(seen.get(0).get("grad_norm") > 0);
        assertTrue(answerLogProb(model, "Who?", "Me!") > -expected * 4,
                "one step did not raise the answer's likelihood");
    }

    @Test
    void stepCountsFollowBatchesAndEpochs() {
        List<List<TrainingTurn>> examples = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            examples.add(pair("q" + i, "a" + i));
        }
        examples.add(List.of(new TrainingTurn("user", "nothing to learn", false)));
        assertEquals(6, BuiltinTrainer.sftSteps(examples, new TrainerConfig(1e-3, 2, 2)));
        assertEquals(3, BuiltinTrainer.sftSteps(examples, new TrainerConfig(1e-3, 5, 3)));
        int[] steps = new int[1];
        BuiltinTrainer.sft(INITIAL.copy(), examples, new TrainerConfig(1e-3, 2, 2), (step, total, metrics) -> {
            assertEquals(++steps[0], step);
            assertEquals(6, total);
        }, () -> false);
        assertEquals(6, steps[0]);
    }

    @Test
    void aScheduleGivesEachStepItsOwnRateAndTheLastHoldsAfterIt() {
        List<List<TrainingTurn>> examples = questions(4);
        BuiltinModel model = INITIAL.copy();
        List<Double> rates = new ArrayList<>();
        List<float[]> weights = new ArrayList<>();
        // ART's decaying schedules end at 0: steps 2 to 4 (of 4) take the last rate, and leave the weights as they are
        BuiltinTrainer.sft(model, examples, new TrainerConfig(List.of(1e-2, 0.0), 1, 1), (step, total, metrics) -> {
            rates.add(metrics.get("learning_rate"));
            weights.add(model.params.clone());
        }, () -> false);
        assertEquals(List.of(1e-2, 0.0, 0.0, 0.0), rates);
        assertFalse(Arrays.equals(INITIAL.params, weights.get(0)), "the first step moved the weights");
        for (int step = 1; step < 4; step++) {
            assertArrayEquals(weights.get(0), weights.get(step), "step " + (step + 1) + " at rate 0");
        }

        // RL too: a schedule of three rates over three steps (three trajectories with an advantage, one a step)
        List<TrajectoryGroup> groups = List.of(pick());
        List<Double> rlRates = new ArrayList<>();
        BuiltinTrainer.rl(INITIAL.copy(), groups, new TrainerConfig(List.of(3e-3, 2e-3, 1e-3), 1, 1),
                (step, total, metrics) -> rlRates.add(metrics.get("learning_rate")), () -> false);
        assertEquals(List.of(3e-3, 2e-3, 1e-3), rlRates);
    }

    @Test
    void aScheduleMustMoveTheWeights() {
        assertThrows(IllegalArgumentException.class, () -> new TrainerConfig(List.of(0.0, 0.0), 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new TrainerConfig(List.of(), 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new TrainerConfig(List.of(1e-3, -1e-3), 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new TrainerConfig(Double.NaN, 1, 1));
    }

    @Test
    void conversationsWithoutTrainableTurnsChangeNothing() {
        BuiltinModel model = INITIAL.copy();
        List<List<TrainingTurn>> examples = List
                .of(List.of(new TrainingTurn("user", "u", false), new TrainingTurn("assistant", "a", false)));
        assertEquals(0, BuiltinTrainer.sftSteps(examples, TrainerConfig.defaults()));
        BuiltinTrainer.sft(model, examples, TrainerConfig.defaults(), (step, total, metrics) -> {
            throw new AssertionError("no step expected");
        }, () -> false);
        assertArrayEquals(INITIAL.params, model.params);
    }

    @Test
    void cancellationStopsBetweenWholeSteps() {
        List<List<TrainingTurn>> examples = questions(8);
        BuiltinModel model = INITIAL.copy();
        float[][] afterTwo = new float[1][];
        int[] steps = new int[1];
        BuiltinTrainer.sft(model, examples, new TrainerConfig(1e-2, 2, 1), (step, total, metrics) -> {
            steps[0] = step;
            if (step == 2) {
                afterTwo[0] = model.params.clone();
            }
        }, () -> steps[0] >= 2);
        assertEquals(2, steps[0]);
        assertArrayEquals(afterTwo[0], model.params);

        BuiltinModel untouched = INITIAL.copy();
        BuiltinTrainer.sft(untouched, examples, TrainerConfig.defaults(), IGNORE, () -> true);
        assertArrayEquals(INITIAL.params, untouched.params);
    }

    @Test
    void trainingIsDeterministic() {
        List<List<TrainingTurn>> examples = List.of(pair("a", "b"), pair("c", "d"), pair("e", "f"));
        BuiltinModel first = INITIAL.copy();
        BuiltinModel second = INITIAL.copy();
        BuiltinTrainer.sft(first, examples, new TrainerConfig(1e-2, 2, 2), IGNORE, () -> false);
        BuiltinTrainer.sft(second, examples, new TrainerConfig(1e-2, 2, 2), IGNORE, () -> false);
        assertArrayEquals(first.params, second.params);
        assertFalse(java.util.Arrays.equals(INITIAL.params, first.params));
    }

    @Test
    void rlRaisesTheBetterAnswerAndLowersTheWorse() {
        BuiltinModel model = INITIAL.copy();
        List<TrajectoryGroup> groups = List.of(pick());
        double good = answerLogProb(model, "Pick", "zebra");
        double bad = answerLogProb(model, "Pick", "horse");
        List<Map<String, Double>> seen = new ArrayList<>();
        BuiltinTrainer.rl(model, groups, new TrainerConfig(3e-3, 3, 1), (step, total, metrics) -> seen.add(metrics),
                () -> false);
        assertEquals(1, seen.size());
        Map<String, Double> metrics = seen.get(0);
        assertEquals(1.0 / 3, metrics.get("reward"), 1e-9);
        assertEquals(Math.sqrt(2.0 / 9), metrics.get("reward_std_dev"), 1e-9);
        assertEquals(3.0, metrics.get("num_trajectories"));
        assertEquals(6.0 + 6 + 4, metrics.get("num_trainable_tokens"));
        assertEquals(3e-3, metrics.get("learning_rate"));
        assertTrue(metrics.get("grad_norm") > 0);
        assertTrue(answerLogProb(model, "Pick", "zebra") > good);
        assertTrue(answerLogProb(model, "Pick", "horse") < bad);
    }

    @Test
    void groupsWithoutRewardVarianceOrOfOneGiveNoGradient() {
        BuiltinModel model = INITIAL.copy();
        List<TrajectoryGroup> groups = List.of(
                new TrajectoryGroup(List.of(trajectory("a", "x", 1), trajectory("a", "y", 1))),
                new TrajectoryGroup(List.of(trajectory("b", "x", 0.5))));
        assertEquals(0, BuiltinTrainer.rlSteps(groups, TrainerConfig.defaults()));
        BuiltinTrainer.rl(model, groups, TrainerConfig.defaults(), (step, total, metrics) -> {
            throw new AssertionError("no step expected");
        }, () -> false);
        assertArrayEquals(INITIAL.params, model.params);
    }

    @Test
    void rlStepsCountOnlyTrajectoriesWithAnAdvantage() {
        List<TrajectoryGroup> groups = List.of(
                new TrajectoryGroup(List.of(trajectory("a", "x", 1), trajectory("a", "y", 0), trajectory("a", "z", 0))),
                new TrajectoryGroup(List.of(trajectory("b", "x", 1), trajectory("b", "y", 1))),
                new TrajectoryGroup(List.of(trajectory("c", "x", 2), trajectory("c", "y", 0))));
        assertEquals(3, BuiltinTrainer.rlSteps(groups, new TrainerConfig(1e-3, 2, 1)));
        assertEquals(6, BuiltinTrainer.rlSteps(groups, new TrainerConfig(1e-3, 2, 2)));
        int[] steps = new int[1];
        BuiltinModel model = INITIAL.copy();
        BuiltinTrainer.rl(model, groups, new TrainerConfig(1e-3, 2, 2), (step, total, metrics) -> {
            assertEquals(++steps[0], step);
            assertEquals(6, total);
            assertEquals(7.0, metrics.get("num_trajectories"));
        }, () -> steps[0] >= 4);
        assertEquals(4, steps[0]);
    }
}

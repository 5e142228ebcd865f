package dev.fulcrum.tiny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Supervised fine-tuning really teaches the model: 20 question/answer pairs are learned for greedy decoding. */
class BuiltinSftLearningTest {

    static final String[][] CAPITALS = { { "France", "Paris" }, { "Japan", "Tokyo" }, { "Italy", "Rome" },
            { "Spain", "Madrid" }, { "Germany", "Berlin" }, { "Egypt", "Cairo" }, { "Peru", "Lima" },
            { "Kenya", "Nairobi" }, { "Canada", "Ottawa" }, { "Norway", "Oslo" }, { "Chile", "Santiago" },
            { "Cuba", "Havana" }, { "Greece", "Athens" }, { "Poland", "Warsaw" }, { "Russia", "Moscow" },
            { "China", "Beijing" }, { "India", "New Delhi" }, { "Iran", "Tehran" }, { "Mali", "Bamako" },
            { "Nepal", "Kathmandu" } };

    static final int EPOCHS = 40;
    static final TrainerConfig CONFIG = new TrainerConfig(3e-3, 4, EPOCHS);

    static List<ChatTurn> question(String country) {
        return List.of(new ChatTurn("user", "What is the capital of " + country + "?"));
    }

    static List<List<TrainingTurn>> examples() {
        List<List<TrainingTurn>> examples = new ArrayList<>();
        for (String[] pair : CAPITALS) {
            examples.add(List.of(new TrainingTurn("user", "What is the capital of " + pair[0] + "?", false),
                    new TrainingTurn("assistant", pair[1], true)));
        }
        return examples;
    }

    static int exactMatches(BuiltinModel model) {
        int correct = 0;
        for (String[] pair : CAPITALS) {
            Generation answer = model.generate(question(pair[0]), Sampling.greedy(32), null);
            if (answer.text().equals(pair[1]) && answer.finishReason() == FinishReason.STOP) {
                correct++;
            }
        }
        return correct;
    }

    @Test
    void twentyPairsAreLearnedToNinetyPercentExactMatch() {
        BuiltinModel model = BuiltinModel.initial();
        assertEquals(0, exactMatches(model), "the untrained model already knows the answers");
        List<List<TrainingTurn>> examples = examples();
        int steps = BuiltinTrainer.sftSteps(examples, CONFIG);
        assertEquals(EPOCHS * 5, steps);
        List<Double> epochLoss = new ArrayList<>();
        double[] running = new double[2];
        int[] seen = new int[1];
        long start = System.nanoTime();
        BuiltinTrainer.sft(model, examples, CONFIG, (step, total, metrics) -> {
            assertEquals(steps, total);
            assertEquals(++seen[0], step);
            running[0] += metrics.get("loss");
            running[1]++;
            if (step % (steps / EPOCHS) == 0) {
                epochLoss.add(running[0] / running[1]);
                running[0] = 0;
                running[1] = 0;
            }
        }, () -> false);
        double seconds = (System.nanoTime() - start) / 1e9;
        assertEquals(steps, seen[0]);
        int correct = exactMatches(model);
        StringBuilder curve = new StringBuilder();
        for (int e = 0; e < epochLoss.size(); e++) {
            curve.append(String.format("%s%d:%.3f", e == 0 ? "" : " ", e + 1, epochLoss.get(e)));
        }
        System.out.printf("SFT learning: %d steps in %.1f s, exact match %d/%d%nSFT loss per epoch: %s%n", steps,
                seconds, correct, CAPITALS.length, curve);
        for (String[] pair : CAPITALS) {
            System.out.printf("  %s -> %s%n", pair[0],
                    model.generate(question(pair[0]), Sampling.greedy(32), null).text());
        }
        assertTrue(epochLoss.get(epochLoss.size() - 1) < epochLoss.get(0) / 4, "loss did not fall");
        assertTrue(correct >= 18, "only " + correct + " of 20 answers exactly right");
    }
}

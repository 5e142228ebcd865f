package dev.fulcrum.console;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

import jakarta.ws.rs.core.StreamingOutput;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.runs.api.model.HistoryPage;

/**
 * A run's history as the chart draws it: one array of steps ({@code _step}, ascending) and one array of values per
 * metric that some row holds, {@code null} where a row has no value of it (an asked metric no row holds has no series).
 * Read from the API's history pages (the rows come reduced to {@code _step} and the asked keys), kept in primitive
 * arrays (100,000 rows of two metrics are 2.4 MB) and written as compact JSON straight to the response. Values are
 * written with a float's precision (7 significant digits), which is more than a chart's pixels can show and halves the
 * bytes.
 */
final class HistoryColumns {

    /** Rows per API call: the API's largest page. */
    static final int PAGE = 10_000;

    /** The most metrics one chart request draws (more lines than a chart can tell apart). */
    static final int MAX_KEYS = 100;

    private final List<String> metrics;
    private long[] steps = new long[1024];
    private double[][] values;
    private int rows;

    private HistoryColumns(List<String> metrics) {
        this.metrics = metrics;
        // a column is made when its metric's first value arrives: a key no row holds costs nothing
        values = new double[metrics.size()][];
    }

    /** Reads every page ({@code page} answers the page at an offset) into columns. */
    static HistoryColumns read(List<String> metrics, IntFunction<HistoryPage> page) {
        HistoryColumns columns = new HistoryColumns(metrics);
        Integer offset = 0;
        while (offset != null) {
            HistoryPage next = page.apply(offset);
            for (ObjectNode row : next.getRows()) {
                columns.add(row);
            }
            offset = next.getNextOffset();
        }
        columns.sortBySteps();
        return columns;
    }

    int rows() {
        return rows;
    }

    private void add(ObjectNode row) {
        if (rows == steps.length) {
            steps = Arrays.copyOf(steps, rows * 2);
            for (int m = 0; m < values.length; m++) {
                if (values[m] != null) {
                    values[m] = Arrays.copyOf(values[m], rows * 2);
                }
            }
        }
        JsonNode step = row.get("_step");
        steps[rows] = step == null ? rows : step.longValue();
        for (int m = 0; m < values.length; m++) {
            JsonNode value = row.get(metrics.get(m));
            if (values[m] == null) {
                if (value == null) {
                    continue;
                }
                values[m] = new double[steps.length];
                Arrays.fill(values[m], 0, rows, Double.NaN);
            }
            values[m][rows] = value == null || !value.isNumber() ? Double.NaN : value.doubleValue();
        }
        rows++;
    }

    /** Rows are in logged order; a chart's x must ascend, so rows logged with an earlier step move (stable). */
    private void sortBySteps() {
        boolean ascending = true;
        for (int i = 1; i < rows && ascending; i++) {
            ascending = steps[i - 1] <= steps[i];
        }
        if (ascending) {
            return;
        }
        Integer[] order = new Integer[rows];
        for (int i = 0; i < rows; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Long.compare(steps[a], steps[b]));
        long[] sortedSteps = new long[rows];
        double[][] sortedValues = new double[values.length][];
        for (int m = 0; m < values.length; m++) {
            sortedValues[m] = values[m] == null ? null : new double[rows];
        }
        for (int i = 0; i < rows; i++) {
            sortedSteps[i] = steps[order[i]];
            for (int m = 0; m < values.length; m++) {
                if (values[m] != null) {
                    sortedValues[m][i] = values[m][order[i]];
                }
            }
        }
        steps = sortedSteps;
        values = sortedValues;
    }

    /** The columns as {@code {"rows":n,"x":[..],"series":[{"name":"..","values":[..]}]}}. */
    StreamingOutput json() {
        return output -> {
            Writer out = new BufferedWriter(new OutputStreamWriter(output, StandardCharsets.UTF_8), 1 << 16);
            out.write("{\"rows\":");
            out.write(Integer.toString(rows));
            out.write(",\"x\":[");
            for (int i = 0; i < rows; i++) {
                if (i > 0) {
                    out.write(',');
                }
                out.write(Long.toString(steps[i]));
            }
            out.write("],\"series\":[");
            boolean first = true;
            for (int m = 0; m < values.length; m++) {
                if (values[m] == null) {
                    continue; // no row holds it
                }
                if (!first) {
                    out.write(',');
                }
                first = false;
                out.write("{\"name\":\"");
                out.write(JsonStringEncoder.getInstance().quoteAsString(metrics.get(m)));
                out.write("\",\"values\":[");
                double[] column = values[m];
                for (int i = 0; i < rows; i++) {
                    if (i > 0) {
                        out.write(',');
                    }
                    number(out, column[i]);
                }
                out.write("]}");
            }
            out.write("]}");
            out.flush();
        };
    }

    private static void number(Writer out, double value) throws IOException {
        if (Double.isNaN(value)) {
            out.write("null");
        } else if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            out.write(Long.toString((long) value));
        } else {
            float single = (float) value;
            out.write(Float.isFinite(single) ? Float.toString(single) : Double.toString(value));
        }
    }
}
